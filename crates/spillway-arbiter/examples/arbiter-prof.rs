//! Fixed-work runs for profiling under callgrind/cachegrind (deterministic instruction
//! and simulated cache-miss counts): `arbiter-prof alloc LOAD BATCHES` or
//! `arbiter-prof perm SAMPLES`.

use spillway_arbiter::bench;
use spillway_arbiter::Mode;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let what = args.first().map(String::as_str).unwrap_or("alloc");
    let num = |i: usize, d: f64| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    match what {
        "alloc" => {
            let (load, batches) = (num(1, 0.3), num(2, 200.0) as u64);
            let r = bench::alloc_1core_once(256, load, Mode::Greedy, 64, 50, batches, 1);
            println!("{r:?}");
        }
        "perm" => {
            let (m, p) = bench::pathsel_permutations(num(1, 2000.0) as usize, 3);
            println!("median {m:.3} us, p99 {p:.3} us");
        }
        _ => eprintln!("usage: arbiter-prof alloc LOAD BATCHES | perm SAMPLES"),
    }
}
