//! The tools refuse bad arguments with one line and exit code 2, before any work:
//! `arbiter-prof` took width 0 or 65 and `perm 0` to a panic, load `nan` or `-1` to
//! gigabytes of requests (the generator's clock never passed its horizon), and unparsable
//! numbers, unknown variants and commands silently to defaults. Parsing is a library
//! function (`cli::parse_prof`), tested here; `arbiter-bench` is run end to end.

use spillway_arbiter::bench::{self, AllocWorkload, Sizes, WorkloadError, MAX_REQUESTS};
use spillway_arbiter::cli::{parse_bench, parse_prof, AllocArgs, Bench, HashVariant, Prof};
use spillway_arbiter::{ConfigError, Mode};
use std::process::Command;

fn prof(args: &str) -> Result<Prof, String> {
    let v: Vec<String> = args.split_whitespace().map(String::from).collect();
    parse_prof(&v)
}

/// Refused, with a one-line message that names `what`.
fn refused(args: &str, what: &str) {
    match prof(args) {
        Ok(p) => panic!("{args:?} accepted as {p:?}"),
        Err(e) => {
            assert!(e.contains(what), "{args:?}: {e:?} does not name {what:?}");
            assert!(!e.contains('\n'), "{args:?}: more than one line: {e:?}");
        }
    }
}

#[test]
fn prof_refuses_bad_arguments() {
    for w in ["0", "65", "-1", "8.5", "x"] {
        for cmd in ["alloc", "pipe", "sat", "drain"] {
            refused(&format!("{cmd} 0.3 10 {w}"), "WIDTH");
        }
    }
    for l in ["nan", "NaN", "-1", "0", "inf", "-inf", "abc", "1e999"] {
        for cmd in ["alloc", "pipe", "sat", "drain", "hash"] {
            refused(&format!("{cmd} {l}"), "LOAD");
        }
    }
    for b in ["0", "-3", "2.5", "many", "18446744073709551616", "10000001"] {
        refused(&format!("alloc 0.3 {b}"), "BATCHES");
    }
    for s in ["0", "-1", "x", "16777217"] {
        refused(&format!("perm {s}"), "SAMPLES");
        refused(&format!("permhash {s}"), "SAMPLES");
    }
    refused("hash 0.3 10 bogus", "variant");
    refused("alloc 0.3 10 64 extra", "unexpected argument");
    refused("perm 10 20", "unexpected argument");
    refused("frobnicate", "unknown command");
    // Numbers that parse but would generate more requests than a workload may hold.
    refused("alloc 1e6 1", "requests");
    refused("pipe 3 10000000 64", "requests");
}

#[test]
fn prof_accepts_good_arguments_and_defaults() {
    let args = |load, batches, width| AllocArgs {
        load,
        batches,
        width,
    };
    let alloc = |load, batches, width| Prof::Alloc(args(load, batches, width));
    assert_eq!(prof(""), Ok(alloc(0.3, 200, 64)));
    assert_eq!(prof("alloc"), Ok(alloc(0.3, 200, 64)));
    assert_eq!(prof("alloc 0.9 400 8"), Ok(alloc(0.9, 400, 8)));
    assert_eq!(prof("alloc 1e-3 1 1"), Ok(alloc(0.001, 1, 1)));
    assert_eq!(prof("perm"), Ok(Prof::Perm { samples: 2000 }));
    assert_eq!(prof("permhash 1"), Ok(Prof::PermHash { samples: 1 }));
    assert_eq!(
        prof("hash 0.9 100 racks"),
        Ok(Prof::Hash {
            load: 0.9,
            batches: 100,
            variant: HashVariant::Racks
        })
    );
    assert_eq!(prof("pipe"), Ok(Prof::Pipe(args(0.9, 2000, 8))));
    assert_eq!(prof("sat 1.5 200 64"), Ok(Prof::Sat(args(1.5, 200, 64))));
    assert_eq!(prof("drain"), Ok(Prof::Drain(args(0.3, 400, 64))));
    assert_eq!(prof("--help"), Ok(Prof::Help));
}

#[test]
fn bench_parses_its_flags() {
    let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(parse_bench(&v(&[])), Ok(Bench::default()));
    let b = parse_bench(&v(&["--quick", "--json", "--widths"])).unwrap();
    assert!(b.quick && b.json && b.widths && !b.help);
    for bad in ["--fast", "quick", "-q", ""] {
        let e = parse_bench(&v(&["--json", bad])).unwrap_err();
        assert!(e.contains("unknown argument") && !e.contains('\n'), "{e}");
    }
}

/// The library refuses the same workloads before generating anything (the example's
/// checks are these; the benchmark's own workloads pass them).
#[test]
fn bench_functions_refuse_bad_workloads() {
    let gen = |n, load, sizes, width, batches| {
        bench::poisson_requests(n, load, sizes, width, batches, 1).map(|v| v.len())
    };
    let f10 = Sizes::Fixed(10);
    for load in [f64::NAN, -1.0, 0.0, f64::INFINITY] {
        assert!(matches!(
            gen(256, load, f10, 64, 10),
            Err(WorkloadError::Load(_))
        ));
    }
    assert_eq!(gen(1, 0.3, f10, 64, 10), Err(WorkloadError::Endpoints(1)));
    assert_eq!(gen(0, 0.3, f10, 64, 10), Err(WorkloadError::Endpoints(0)));
    assert_eq!(
        gen(256, 0.3, Sizes::Fixed(0), 64, 10),
        Err(WorkloadError::Size)
    );
    for m in [0.0, 0.5, f64::NAN, f64::INFINITY] {
        assert_eq!(
            gen(256, 0.3, Sizes::Exponential(m), 64, 10),
            Err(WorkloadError::Size)
        );
    }
    for w in [0, 65] {
        assert_eq!(
            gen(256, 0.3, f10, w, 10),
            Err(WorkloadError::Config(ConfigError::Width(w)))
        );
    }
    assert_eq!(gen(256, 0.3, f10, 64, 0), Err(WorkloadError::Batches(0)));
    assert!(matches!(
        gen(256, 1e9, f10, 64, 1),
        Err(WorkloadError::TooLarge { requests }) if requests > MAX_REQUESTS
    ));
    assert!(gen(256, 0.3, f10, 64, 2).is_ok_and(|n| n > 0));
    let workload = |warm, batches| AllocWorkload {
        n: 256,
        load: 0.3,
        width: 64,
        warm,
        batches,
        seed: 1,
    };
    assert_eq!(
        bench::alloc_1core_once(&workload(5, 0), Mode::Greedy).err(),
        Some(WorkloadError::Batches(0))
    );
    assert_eq!(
        bench::alloc_pipeline(&workload(5, 5), 1).err(),
        Some(WorkloadError::Config(ConfigError::Stages(1)))
    );
    assert_eq!(
        bench::pathsel_permutations(0, 3),
        Err(WorkloadError::Samples(0))
    );
    assert_eq!(
        bench::pathsel_allocator(0.3, 63, 5),
        Err(WorkloadError::Samples(63))
    );
}

/// End to end: the built binary refuses an unknown argument with one line on stderr and
/// exit code 2, before running any benchmark.
#[test]
fn arbiter_bench_refuses_an_unknown_argument() {
    let out = Command::new(env!("CARGO_BIN_EXE_arbiter-bench"))
        .args(["--quick", "--bogus"])
        .output()
        .expect("run arbiter-bench");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err:?}");
    assert!(
        err.starts_with("arbiter-bench: unknown argument \"--bogus\""),
        "{err:?}"
    );
    assert!(out.stdout.is_empty());
    let help = Command::new(env!("CARGO_BIN_EXE_arbiter-bench"))
        .arg("--help")
        .output()
        .expect("run arbiter-bench");
    assert_eq!(help.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&help.stdout).starts_with("usage: arbiter-bench"));
}
