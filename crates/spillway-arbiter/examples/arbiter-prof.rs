//! Fixed-work runs for profiling under callgrind/cachegrind (deterministic instruction
//! and simulated cache-miss counts): `arbiter-prof alloc LOAD BATCHES` or
//! `arbiter-prof perm SAMPLES`. `arbiter-prof hash LOAD BATCHES` prints hashes of every
//! grant of a greedy max-min run (slot by slot in grant order, and per batch sorted): two builds
//! allocate identically if they print the same. `arbiter-prof drain LOAD BATCHES WIDTH`
//! prints the share of a batch's grants made in the drain (the pipeline's serial part);
//! `arbiter-prof pipe LOAD BATCHES WIDTH` times the 2-stage pipeline as the benchmark does;
//! `arbiter-prof permhash SAMPLES` hashes the paths chosen for `perm`'s permutations.

use spillway_arbiter::bench::{self, Sizes};
use spillway_arbiter::{Arbiter, Batch, Fabric, Mode, Pipeline, Policy};

/// FNV-1a over words.
fn fnv(h: &mut u64, x: u64) {
    *h = (*h ^ x).wrapping_mul(0x100_0000_01b3);
}

/// `variant`: "" (greedy, one switch), "iter" (iterative), "racks" (8 racks of 32, 24
/// uplinks: the rack-limited path), "pipe" (2-stage pipeline).
fn hash(load: f64, batches: u64, variant: &str) {
    let (n, width) = (256u32, 64u32);
    let fabric = if variant == "racks" {
        Fabric::racks(8, 32, 24, 24)
    } else {
        Fabric::full_bisection(n as usize)
    };
    let mode = if variant == "iter" {
        Mode::Iterative
    } else {
        Mode::Greedy
    };
    let reqs = bench::poisson_requests(n, load, Sizes::Fixed(10), width, batches, 1);
    let mut arb = Arbiter::new(&fabric, Policy::MaxMin, mode, width).expect("a valid batch width");
    let mut pipe =
        (variant == "pipe").then(|| Pipeline::new(&fabric, 2, width).expect("a valid batch width"));
    let mut out = Batch::new();
    let (mut ordered, mut sorted) = (0xcbf2_9ce4_8422_2325u64, 0xcbf2_9ce4_8422_2325u64);
    let (mut granted, mut r) = (0u64, 0usize);
    let mut v = Vec::new();
    for b in 0..batches {
        for &(_, s, d, total) in bench::due(&reqs, &mut r, b) {
            match &mut pipe {
                Some(p) => p.request(s, d, total).expect("valid endpoints"),
                None => arb.request(s, d, total).expect("valid endpoints"),
            }
        }
        match &mut pipe {
            Some(p) => {
                p.allocate(b * width as u64);
                let done = p.recv();
                p.recycle(std::mem::replace(&mut out, done));
            }
            None => arb.allocate(b * width as u64, &mut out),
        }
        v.clear();
        // Slot by slot, each slot's grants in the order the allocator made them.
        for k in 0..out.width() {
            for f in out.timeslot(k) {
                let w = (k as u64) << 40 | (f.src as u64) << 20 | f.dst as u64;
                fnv(&mut ordered, w);
                v.push(w);
            }
        }
        v.sort_unstable();
        for &w in &v {
            fnv(&mut sorted, w);
        }
        granted += v.len() as u64;
    }
    println!("{variant} load {load} batches {batches} granted {granted} ordered {ordered:016x} sorted {sorted:016x}");
}

/// How much of a batch's work is the drain (pairs re-offered after their first grant in
/// the batch), which pipeline stages cannot overlap (docs/arbiter.md): a pair's first
/// grant in a batch is its round-1 offer, every further grant a drain re-offer.
fn drain_share(load: f64, batches: u64, width: u32) {
    let n = 256u32;
    let reqs = bench::poisson_requests(n, load, Sizes::Fixed(10), width, batches, 1);
    let mut arb = Arbiter::new(
        &Fabric::full_bisection(n as usize),
        Policy::MaxMin,
        Mode::Greedy,
        width,
    )
    .expect("a valid batch width");
    let mut out = Batch::new();
    let (mut grants, mut pairs, mut r) = (0u64, 0u64, 0usize);
    let mut seen = std::collections::HashSet::new();
    for b in 0..batches {
        for &(_, s, d, total) in bench::due(&reqs, &mut r, b) {
            arb.request(s, d, total).expect("valid endpoints");
        }
        arb.allocate(b * width as u64, &mut out);
        seen.clear();
        for g in out.grants() {
            grants += 1;
            pairs += seen.insert((g.src, g.dst)) as u64;
        }
    }
    println!(
        "load {load} width {width}: {:.0} grants per batch, {:.0} first grants, drain {:.0}%",
        grants as f64 / batches as f64,
        pairs as f64 / batches as f64,
        100.0 * (grants - pairs) as f64 / grants as f64
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let what = args.first().map(String::as_str).unwrap_or("alloc");
    let num = |i: usize, d: f64| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    match what {
        "alloc" => {
            let (load, batches, width) = (num(1, 0.3), num(2, 200.0) as u64, num(3, 64.0) as u32);
            let r = bench::alloc_1core_once(256, load, Mode::Greedy, width, 50, batches, 1);
            println!("{r:?}");
        }
        "perm" => {
            let (m, p) = bench::pathsel_permutations(num(1, 2000.0) as usize, 3);
            println!("median {m:.3} us, p99 {p:.3} us");
        }
        "hash" => hash(
            num(1, 0.3),
            num(2, 200.0) as u64,
            args.get(3).map(String::as_str).unwrap_or(""),
        ),
        "permhash" => {
            // Every path chosen for SAMPLES random permutations (as `perm` draws them),
            // hashed: two builds choose identically if they print the same.
            let mut sel = bench::pathsel_512();
            let mut perms = bench::Permutations::new(3);
            let (mut flows, mut out) = (Vec::new(), Vec::new());
            let mut h = 0xcbf2_9ce4_8422_2325u64;
            for _ in 0..num(1, 2000.0) as usize {
                perms.next(&mut flows);
                sel.select(&flows, &mut out).expect("non-blocking");
                for o in &out {
                    fnv(&mut h, o.map_or(u64::MAX, u64::from));
                }
            }
            println!("paths {h:016x}");
        }
        "pipe" => {
            let (load, batches, width) = (num(1, 0.9), num(2, 2000.0) as u64, num(3, 8.0) as u32);
            let r = bench::alloc_pipeline(256, load, 2, width, 100, batches, 1);
            println!(
                "{:.3} us/ts wall, serial {:.3}, {:.0} Gbit/s per core",
                r.us_per_timeslot, r.serial_us_per_timeslot, r.gbps_per_core
            );
        }
        "sat" => {
            // Utilization each matching carries with more offered than the fabric can
            // take (the backlog grows): greedy against iterative.
            let (load, batches, width) = (num(1, 1.2), num(2, 200.0) as u64, num(3, 64.0) as u32);
            for mode in [Mode::Greedy, Mode::Iterative] {
                let r = bench::alloc_1core_once(256, load, mode, width, 50, batches, 1);
                println!("{mode:?}: utilization {:.4}", r.utilization);
            }
        }
        "drain" => drain_share(num(1, 0.3), num(2, 400.0) as u64, num(3, 64.0) as u32),
        _ => eprintln!("usage: arbiter-prof alloc LOAD BATCHES [WIDTH] | perm SAMPLES | hash LOAD BATCHES [iter|racks|pipe] | drain LOAD BATCHES WIDTH | pipe LOAD BATCHES WIDTH | permhash SAMPLES | sat LOAD BATCHES WIDTH"),
    }
}
