//! `spillway-bench [NAME...]`: the standard benchmarks without Python, for profiling
//! (`perf record target/release/spillway-bench fattree_websearch`).

fn main() {
    let names: Vec<String> = std::env::args().skip(1).collect();
    let all: Vec<&str> = spillway_core::bench::BENCHMARKS
        .iter()
        .map(|b| b.0)
        .collect();
    let run: Vec<&str> = if names.is_empty() {
        all
    } else {
        names.iter().map(String::as_str).collect()
    };
    for n in run {
        match spillway_core::bench::run_benchmark(n) {
            Some(r) => println!(
                "{:<22} {:>12} events {:>12} hops {:>8.3} s  {:>6.2} M events/s  {:>6.2} M hops/s",
                r.name,
                r.events,
                r.packet_hops,
                r.wall_s,
                r.events_per_s / 1e6,
                r.packet_hops_per_s / 1e6
            ),
            None => {
                eprintln!("unknown benchmark {n}");
                std::process::exit(2);
            }
        }
    }
}
