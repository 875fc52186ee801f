//! Fixed-work runs for profiling under callgrind/cachegrind (deterministic instruction
//! and simulated cache-miss counts): `arbiter-prof alloc LOAD BATCHES` or
//! `arbiter-prof perm SAMPLES`. `arbiter-prof hash LOAD BATCHES` prints hashes of every
//! grant of a greedy max-min run (slot by slot in grant order, and per batch sorted): two builds
//! allocate identically if they print the same. `arbiter-prof drain LOAD BATCHES WIDTH`
//! prints the share of a batch's grants made in the drain (the pipeline's serial part);
//! `arbiter-prof pipe LOAD BATCHES WIDTH` times the 2-stage pipeline as the benchmark does;
//! `arbiter-prof permhash SAMPLES` hashes the paths chosen for `perm`'s permutations.
//! Arguments are checked before any work (`spillway_arbiter::cli::parse_prof`): a bad
//! one is refused with one line on stderr and exit code 2.

use spillway_arbiter::bench::{self, Sizes, WorkloadError};
use spillway_arbiter::cli::{self, AllocArgs, HashVariant, Prof};
use spillway_arbiter::{Arbiter, Batch, Fabric, Mode, Pipeline, Policy};

/// FNV-1a over words.
fn fnv(h: &mut u64, x: u64) {
    *h = (*h ^ x).wrapping_mul(0x100_0000_01b3);
}

/// `variant`: greedy on one switch, iterative, racks (8 racks of 32, 24 uplinks: the
/// rack-limited path), or the 2-stage pipeline.
fn hash(load: f64, batches: u64, variant: HashVariant) -> Result<(), WorkloadError> {
    let (n, width) = (cli::PROF_ENDPOINTS, 64u32);
    let fabric = if variant == HashVariant::Racks {
        Fabric::racks(8, 32, 24, 24)
    } else {
        Fabric::full_bisection(n as usize)
    };
    let mode = if variant == HashVariant::Iter {
        Mode::Iterative
    } else {
        Mode::Greedy
    };
    let reqs = bench::poisson_requests(n, load, Sizes::Fixed(10), width, batches, 1)?;
    let mut arb = Arbiter::new(&fabric, Policy::MaxMin, mode, width)?;
    let mut pipe = match variant {
        HashVariant::Pipe => Some(Pipeline::new(&fabric, 2, width)?),
        _ => None,
    };
    let mut out = Batch::new();
    let (mut ordered, mut sorted) = (0xcbf2_9ce4_8422_2325u64, 0xcbf2_9ce4_8422_2325u64);
    let (mut granted, mut r) = (0u64, 0usize);
    let mut v = Vec::new();
    for b in 0..batches {
        for &(_, s, d, total) in bench::due(&reqs, &mut r, b) {
            match &mut pipe {
                Some(p) => p.request(s, d, total)?,
                None => arb.request(s, d, total)?,
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
    println!(
        "{} load {load} batches {batches} granted {granted} ordered {ordered:016x} sorted {sorted:016x}",
        variant.name()
    );
    Ok(())
}

/// How much of a batch's work is the drain (pairs re-offered after their first grant in
/// the batch), which pipeline stages cannot overlap (docs/arbiter.md): a pair's first
/// grant in a batch is its round-1 offer, every further grant a drain re-offer.
fn drain_share(args: AllocArgs) -> Result<(), WorkloadError> {
    let AllocArgs {
        load,
        batches,
        width,
    } = args;
    let (fabric, reqs) = args.workload(0).generate()?;
    let mut arb = Arbiter::new(&fabric, Policy::MaxMin, Mode::Greedy, width)?;
    let mut out = Batch::new();
    let (mut grants, mut pairs, mut r) = (0u64, 0u64, 0usize);
    let mut seen = std::collections::HashSet::new();
    for b in 0..batches {
        for &(_, s, d, total) in bench::due(&reqs, &mut r, b) {
            arb.request(s, d, total)?;
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
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cmd = cli::parse_prof(&args).unwrap_or_else(|e| cli::refuse("arbiter-prof", &e));
    if let Err(e) = run(cmd) {
        // Not reached with arguments parse_prof accepted; said, not panicked, if it is.
        eprintln!("arbiter-prof: {e}");
        std::process::exit(1);
    }
}

fn run(cmd: Prof) -> Result<(), WorkloadError> {
    match cmd {
        Prof::Help => println!("usage: {}", cli::PROF_USAGE.join(" | ")),
        Prof::Alloc(args) => {
            let r = bench::alloc_1core_once(&args.workload(cli::PROF_WARM), Mode::Greedy)?;
            println!("{r:?}");
        }
        Prof::Perm { samples } => {
            let (m, p) = bench::pathsel_permutations(samples, 3)?;
            println!("median {m:.3} us, p99 {p:.3} us");
        }
        Prof::Hash {
            load,
            batches,
            variant,
        } => hash(load, batches, variant)?,
        Prof::PermHash { samples } => {
            // Every path chosen for SAMPLES random permutations (as `perm` draws them),
            // hashed: two builds choose identically if they print the same.
            let mut sel = bench::pathsel_512();
            let mut perms = bench::Permutations::new(3);
            let (mut flows, mut out) = (Vec::new(), Vec::new());
            let mut h = 0xcbf2_9ce4_8422_2325u64;
            for _ in 0..samples {
                perms.next(&mut flows);
                sel.select(&flows, &mut out).expect("non-blocking");
                for o in &out {
                    fnv(&mut h, o.map_or(u64::MAX, u64::from));
                }
            }
            println!("paths {h:016x}");
        }
        Prof::Pipe(args) => {
            let r = bench::alloc_pipeline(&args.workload(cli::PROF_PIPE_WARM), 2)?;
            println!(
                "{:.3} us/ts wall, serial {:.3}, {:.0} Gbit/s per core",
                r.us_per_timeslot, r.serial_us_per_timeslot, r.gbps_per_core
            );
        }
        Prof::Sat(args) => {
            // Utilization each matching carries with more offered than the fabric can
            // take (the backlog grows): greedy against iterative.
            for mode in [Mode::Greedy, Mode::Iterative] {
                let r = bench::alloc_1core_once(&args.workload(cli::PROF_WARM), mode)?;
                println!("{mode:?}: utilization {:.4}", r.utilization);
            }
        }
        Prof::Drain(args) => drain_share(args)?,
    }
    Ok(())
}
