//! `spillway-fcp-load`: N FCP endpoints in one process, loading an arbiter (issue 29).
//! See `--help` and docs/arbiter.md § "Load".

use spillway_arbiter::service::args::{self, usage, Outcome, UsageError, EXIT_FAILURE, EXIT_OK};
use spillway_arbiter::service::clock::{self, Clock};
use spillway_arbiter::service::load;

const HELP: &str = "\
spillway-fcp-load: endpoints of a fabric file, all in this process (one thread, one socket
each), asking an arbiter for timeslots with Poisson demand; grants are counted and checked
(no sender or receiver twice in a timeslot), no data is sent

usage:
  spillway-fcp-load --config FABRIC.toml [--first E] [--count N] [--load L] [--seed S]
                    --duration T [--demand-for T]

options:
  --config FILE     the fabric file (as the arbiters')
  --first E         the first endpoint id to run (default 0)
  --count N         how many endpoints, from --first (default: all the rest)
  --load L          Poisson demand per endpoint, a share of its link (0..=1; default 0.5)
  --seed S          the demand's seed (default 1)
  --duration T      run this long (e.g. 5s)
  --demand-for T    create demand only during the first T (default: all of --duration)
  -h, --help        this text

At exit, a JSON summary on stdout: demand and granted timeslots, grants per second,
conflicts, FCP datagrams each way.
Exit codes: 0 clean exit, 1 runtime failure (e.g. address in use), 2 usage or config error.
";

fn main() {
    args::exit("spillway-fcp-load", real_main())
}

fn real_main() -> Outcome {
    let a = args::from_env(
        &[
            "config",
            "first",
            "count",
            "load",
            "seed",
            "duration",
            "demand-for",
        ],
        &[],
    )?;
    if a.help {
        print!("{HELP}");
        return Ok(EXIT_OK);
    }
    let cfg = a.config("config")?;
    let n = cfg.endpoints.len() as u32;
    let first = a.num::<u32>("first", 0, n - 1).map_err(usage)?.unwrap_or(0);
    let count = a
        .num::<u32>("count", 1, n - first)
        .map_err(usage)?
        .unwrap_or(n - first);
    let load = a
        .num::<f64>("load", 0.0, 1.0)
        .map_err(usage)?
        .unwrap_or(0.5);
    let seed = a
        .num::<u64>("seed", 0, u64::MAX)
        .map_err(usage)?
        .unwrap_or(1);
    let duration = a
        .duration("duration")
        .map_err(usage)?
        .ok_or_else(|| usage(UsageError("--duration is required".into())))?;
    let demand_for = a.duration("demand-for").map_err(usage)?.unwrap_or(duration);
    let clock = Clock {
        origin_unix_ns: cfg.origin_unix_ns.unwrap_or_else(clock::default_origin),
    };
    clock::on_sigterm();
    clock::lower_timer_slack();
    let st = load::run(
        &cfg,
        clock,
        first..first + count,
        load,
        seed,
        duration,
        demand_for,
    )
    .map_err(|e| (EXIT_FAILURE, e.to_string()))?;
    println!("{}", st.json(count as usize, duration as f64 / 1e12));
    Ok(EXIT_OK)
}
