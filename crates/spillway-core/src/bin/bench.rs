//! `spillway-bench [NAME...] [--set KEY=VALUE...]`: the standard benchmarks without
//! Python, for profiling (`valgrind --tool=cachegrind target/release/spillway-bench
//! fattree16_websearch --set run.duration=8ms`; `--set` applies to every NAME). `pfabric_queue` is
//! the pFabric queue's micro-benchmark: ns per op against the queue's length.

fn main() {
    let mut names: Vec<String> = Vec::new();
    let mut set: Vec<String> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--set" {
            match args.next() {
                Some(kv) => set.push(kv),
                None => {
                    eprintln!("--set needs KEY=VALUE");
                    std::process::exit(2);
                }
            }
        } else {
            names.push(a);
        }
    }
    if names.iter().any(|n| n == "-h" || n == "--help") {
        println!("usage: spillway-bench [NAME...] [--set KEY=VALUE...]   (default: every scenario benchmark)");
        for b in spillway_core::bench::BENCHMARKS {
            println!("  {:<22} {}", b.0, b.1);
        }
        println!(
            "  {:<22} the pFabric queue alone: ns per op (an evicting arrival, a dequeue, an arrival) at 8-4096 packets",
            "pfabric_queue"
        );
        return;
    }
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
        if n == "pfabric_queue" {
            println!(
                "{:<8} {:<8} {:>8} {:>10} {:>10} {:>9}",
                "form", "order", "packets", "ops", "evictions", "ns/op"
            );
            for r in
                spillway_core::bench::pfabric_queue_bench(spillway_core::bench::QUEUE_BENCH_OPS)
            {
                println!(
                    "{:<8} {:<8} {:>8} {:>10} {:>10} {:>9.1}",
                    r.form, r.order, r.packets, r.ops, r.evictions, r.ns_per_op
                );
            }
            continue;
        }
        match spillway_core::bench::run_benchmark_with(n, &set) {
            Some(Err(e)) => {
                eprintln!("{n}: {e}");
                std::process::exit(2);
            }
            Some(Ok(r)) => {
                println!(
                    "{:<22} {:>12} events {:>12} hops {:>8.3} s ({:.3} s cpu, {} partitions, {} threads)  {:>6.2} M events/s  {:>6.2} M hops/s",
                    r.name,
                    r.events,
                    r.packet_hops,
                    r.wall_s,
                    r.cpu_s,
                    r.partitions,
                    r.threads,
                    r.events_per_s / 1e6,
                    r.packet_hops_per_s / 1e6
                );
                if r.partitions > 1 {
                    println!(
                        "{:<22} {} windows, {} packets across cuts ({:.1}% of hops), {:.3} s waited at barriers (all threads)",
                        "",
                        r.windows,
                        r.parcels,
                        100.0 * r.parcels as f64 / r.packet_hops.max(1) as f64,
                        r.barrier_wait_s
                    );
                }
            }
            None => {
                eprintln!("unknown benchmark {n}");
                std::process::exit(2);
            }
        }
    }
}
