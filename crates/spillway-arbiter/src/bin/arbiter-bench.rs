//! `arbiter-bench [--json] [--quick] [--widths]`: the benchmarks of issue 6, behind
//! `spillway bench arbiter`. See `spillway_arbiter::bench` for what is measured and how.
//! An unknown argument is refused with one line on stderr and exit code 2.

use spillway_arbiter::bench::{self, AllocResult, AllocWorkload};
use spillway_arbiter::{cli, Mode};

/// The benchmark's workloads are constants, all valid: an error here is a bug.
const VALID: &str = "the benchmark's own workloads are valid";

const N: u32 = 256;
const WIDTH: u32 = 64;

/// The benchmark's allocation workloads: [`N`] endpoints, seed 1.
fn workload(load: f64, width: u32, warm: u64, batches: u64) -> AllocWorkload {
    AllocWorkload {
        n: N,
        load,
        width,
        warm,
        batches,
        seed: 1,
    }
}

fn row(r: &AllocResult) -> String {
    format!(
        "{{\"load\": {}, \"mode\": \"{}\", \"us_per_timeslot\": {:.4}, \"utilization\": {:.4}, \"gbps_per_core\": {:.1}, \"report_us_per_timeslot\": {:.4}, \"gbps_per_core_with_reports\": {:.1}, \"serial_us_per_timeslot\": {:.4}}}",
        r.load,
        mode_name(r.mode),
        r.us_per_timeslot,
        r.utilization,
        r.gbps_per_core,
        r.report_us_per_timeslot,
        r.gbps_per_core_with_reports,
        r.serial_us_per_timeslot
    )
}

fn mode_name(m: Mode) -> &'static str {
    match m {
        Mode::Greedy => "greedy",
        Mode::Iterative => "iterative",
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opts = cli::parse_bench(&args).unwrap_or_else(|e| cli::refuse("arbiter-bench", &e));
    if opts.help {
        println!("usage: {}", cli::BENCH_USAGE);
        return;
    }
    let (json, quick) = (opts.json, opts.quick);
    let (warm, batches) = if quick { (50, 300) } else { (300, 2000) };
    if opts.widths {
        for w in [8u32, 16, 32, 64] {
            for load in [0.3, 0.9] {
                let s = 64 / w as u64;
                let r = bench::alloc_1core(&workload(load, w, warm * s, batches * s), Mode::Greedy)
                    .expect(VALID);
                eprintln!(
                    "width {w:2} load {load}: {:.4} us/timeslot, {:.0} Gbit/s per core",
                    r.us_per_timeslot, r.gbps_per_core
                );
            }
        }
        for w in [16u32, 32, 64] {
            for load in [0.3, 0.9] {
                let s = 64 / w as u64;
                let r = bench::alloc_pipeline(&workload(load, w, warm * s, batches * s), 2)
                    .expect(VALID);
                eprintln!(
                    "pipeline, 2 stages, width {w:2} load {load}: {:.4} us/timeslot (wall), serial part {:.4} us/timeslot",
                    r.us_per_timeslot, r.serial_us_per_timeslot
                );
            }
        }
    }
    let loads = [0.3, 0.6, 0.9];
    let mut alloc = Vec::new();
    for mode in [Mode::Greedy, Mode::Iterative] {
        for &load in &loads {
            alloc.push(
                bench::alloc_1core(&workload(load, WIDTH, warm, batches), mode).expect(VALID),
            );
        }
    }
    // Saturation: offered load 1.0, where the backlog grows and only the matching's
    // quality limits what is carried (greedy vs iterative).
    let sat: Vec<AllocResult> = [Mode::Greedy, Mode::Iterative]
        .map(|m| bench::alloc_1core(&workload(1.0, WIDTH, warm, batches / 2), m).expect(VALID))
        .to_vec();
    let rt = [Mode::Greedy, Mode::Iterative].map(|m| {
        (
            bench::realtime_capacity(N, m, WIDTH, batches / 2).expect(VALID),
            m,
        )
    });
    let (rt_best, rt_mode) = if rt[1].0[0].1 > rt[0].0[0].1 {
        rt[1]
    } else {
        rt[0]
    };
    let [(rt_load, rt_tbps), (rt_load_wr, rt_tbps_wr)] = rt_best;
    let two: Vec<AllocResult> = loads
        .iter()
        .map(|&l| bench::alloc_pipeline(&workload(l, WIDTH, warm, batches), 2).expect(VALID))
        .collect();
    let samples = if quick { 2000 } else { 20000 };
    let (pm, pp) = bench::pathsel_permutations(samples, 3).expect(VALID);
    let slots = if quick { 3200 } else { 12800 };
    let by_load: Vec<(f64, f64, f64)> = (1..=9)
        .map(|i| {
            let load = i as f64 / 10.0;
            let (m, p) = bench::pathsel_allocator(load, slots, 5).expect(VALID);
            (load, m, p)
        })
        .collect();

    if json {
        let by = by_load
            .iter()
            .map(|(l, m, p)| {
                format!("{{\"load\": {l}, \"median_us\": {m:.3}, \"p99_us\": {p:.3}}}")
            })
            .collect::<Vec<_>>()
            .join(", ");
        println!(
            "{{\"alloc\": [{}], \"alloc_realtime_tbps_1core\": {:.3}, \"alloc_realtime_load_1core\": {:.3}, \"alloc_realtime_tbps_1core_with_reports\": {:.3}, \"alloc_realtime_load_1core_with_reports\": {:.3}, \"alloc_realtime_mode\": \"{}\", \"alloc_2threads\": [{}], \"alloc_saturation\": [{}], \"pathsel\": {{\"perm512_median_us\": {:.3}, \"perm512_p99_us\": {:.3}, \"by_load\": [{}]}}}}",
            alloc.iter().map(row).collect::<Vec<_>>().join(", "),
            rt_tbps,
            rt_load,
            rt_tbps_wr,
            rt_load_wr,
            mode_name(rt_mode),
            two.iter().map(row).collect::<Vec<_>>().join(", "),
            sat.iter().map(row).collect::<Vec<_>>().join(", "),
            pm,
            pp,
            by
        );
        return;
    }
    println!("allocation, {N} endpoints, batches of {WIDTH}, one core (thread CPU time):");
    println!("  allocation core only, as Experiment F; reports (comm-core work) timed apart");
    println!("  mode       load  us/timeslot  utilization  Gbit/s per core  reports us/ts  Gbit/s with reports");
    for r in &alloc {
        println!(
            "  {:9}  {:.1}   {:10.4}  {:11.3}  {:15.0}  {:13.4}  {:19.0}",
            mode_name(r.mode),
            r.load,
            r.us_per_timeslot,
            r.utilization,
            r.gbps_per_core,
            r.report_us_per_timeslot,
            r.gbps_per_core_with_reports
        );
    }
    for r in &sat {
        println!(
            "  saturation (offered 1.0), {}: utilization {:.3}, {:.4} us/timeslot",
            mode_name(r.mode),
            r.utilization,
            r.us_per_timeslot
        );
    }
    for ([(l, t), (lr, tr)], m) in rt {
        println!(
            "  real time (<= 1.2 us/timeslot), {}: load {l:.3}, {t:.3} Tbit/s; with reports on the same core: load {lr:.3}, {tr:.3} Tbit/s",
            mode_name(m)
        );
    }
    println!(
        "pipeline, 2 allocator threads (us/timeslot = wall clock; Gbit/s per core over the allocator threads' CPU):"
    );
    for r in &two {
        println!(
            "  load {:.1}: {:.4} us/timeslot, utilization {:.3}, {:.0} Gbit/s per core, {:.0} with the feeder's reports; serial part {:.4} us/timeslot",
            r.load, r.us_per_timeslot, r.utilization, r.gbps_per_core, r.gbps_per_core_with_reports, r.serial_us_per_timeslot
        );
    }
    println!("path selection, 16 racks x 32 endpoints, 4 cores at 8x (per timeslot):");
    println!("  full 512-endpoint permutations: median {pm:.3} us, p99 {pp:.3} us");
    for (l, m, p) in by_load {
        println!("  allocator output at load {l:.1}: median {m:.3} us, p99 {p:.3} us");
    }
}
