//! `spillway-endpoint`: a Fastpass endpoint over UDP (issue 29). See `--help` and
//! docs/arbiter.md § "The arbiter service".

use spillway_arbiter::service::args::{
    self, usage, Outcome, UsageError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE,
};
use spillway_arbiter::service::clock::{self, Clock};
use spillway_arbiter::service::demand::{Demand, Poisson, Trace};
use spillway_arbiter::service::endpoint::EndpointService;
use spillway_arbiter::service::log::{self, EventLog};
use spillway_arbiter::service::runtime::{self, RunOpts};
use std::net::UdpSocket;

const HELP: &str = "\
spillway-endpoint: a Fastpass endpoint over UDP: asks the arbiter for timeslots (FCP, §5.3)
and sends one data datagram to its peer in each granted timeslot

usage:
  spillway-endpoint --config FABRIC.toml --id E [--load L] [--seed S] [--duration T]
                    [--demand-for T] [--trace FILE] [--events FILE]

options:
  --config FILE     the fabric file (as the arbiters'); this endpoint listens on endpoints.addrs[E]
  --id E            this endpoint's id
  --load L          Poisson demand: one-timeslot packets at L x the link (0..=1; default 0.3),
                    to destinations drawn uniformly among the other endpoints
  --seed S          the demand's seed (default 1; each endpoint draws its own stream)
  --duration T      exit after T (default: until SIGTERM/SIGINT or a stop query)
  --demand-for T    create demand only during the first T (default: all of --duration)
  --trace FILE      demand from a trace instead of Poisson: lines `TIME DST [PACKETS]`, TIME
                    after this endpoint starts (e.g. 250us), PACKETS one-timeslot packets
                    (default 1) to endpoint DST; `#` comments; times must not decrease
  --events FILE     JSON lines: every demand, send and receive with its timeslot and peer
  -h, --help        this text

Logs are JSON lines on stderr; at exit a summary JSON (demand, sent, received, missed,
FCP counters, timer lateness) is printed on stdout.
Exit codes: 0 clean exit, 1 runtime failure (e.g. address in use), 2 usage or config error.
";

fn main() {
    args::exit("spillway-endpoint", real_main())
}

fn real_main() -> Outcome {
    let a = args::from_env(
        &[
            "config",
            "id",
            "load",
            "seed",
            "duration",
            "demand-for",
            "events",
            "trace",
        ],
        &[],
    )?;
    if a.help {
        print!("{HELP}");
        return Ok(EXIT_OK);
    }
    let cfg = a.config("config")?;
    let n = cfg.endpoints.len() as u32;
    let id = a
        .num::<u32>("id", 0, n - 1)
        .map_err(usage)?
        .ok_or_else(|| usage(UsageError("--id is required".into())))?;
    let load = a
        .num::<f64>("load", 0.0, 1.0)
        .map_err(usage)?
        .unwrap_or(0.3);
    let seed = a
        .num::<u64>("seed", 0, u64::MAX)
        .map_err(usage)?
        .unwrap_or(1);
    let duration = a.duration("duration").map_err(usage)?;
    let demand_for = a.duration("demand-for").map_err(usage)?;
    let trace = match a.str("trace") {
        None => None,
        Some(p) => Some(
            std::fs::read_to_string(p).map_err(|e| (EXIT_USAGE, format!("--trace {p}: {e}")))?,
        ),
    };
    let events =
        EventLog::open(a.str("events")).map_err(|e| (EXIT_FAILURE, format!("--events: {e}")))?;
    let clock = Clock {
        origin_unix_ns: cfg.origin_unix_ns.unwrap_or_else(clock::default_origin),
    };
    let addr = cfg.endpoints[id as usize];
    let sock = UdpSocket::bind(addr).map_err(|e| (EXIT_FAILURE, format!("bind {addr}: {e}")))?;
    clock::on_sigterm();
    let now = clock.now();
    let until = duration.map(|d| now + d);
    let demand_until = match (demand_for, until) {
        (Some(d), _) => now + d,
        (None, Some(u)) => u,
        (None, None) => u64::MAX,
    };
    let gen = match &trace {
        None => Demand::Poisson(Poisson::new(
            seed,
            id,
            n,
            load,
            cfg.timeslot,
            now,
            demand_until,
        )),
        Some(text) => Demand::Trace(
            Trace::parse(text, id, n, now).map_err(|e| (EXIT_USAGE, format!("--trace: {e}")))?,
        ),
    };
    log::event(
        &format!("endpoint{id}"),
        "start",
        &format!(
            "\"addr\": \"{addr}\", \"load\": {load}, \"origin_unix_ns\": {}",
            clock.origin_unix_ns
        ),
    );
    let svc = EndpointService::new(cfg, id, gen, events);
    let opts = RunOpts {
        busy_poll: false,
        until,
    };
    let mut svc =
        runtime::run(svc, &sock, clock, opts).map_err(|e| (EXIT_FAILURE, e.to_string()))?;
    svc.finish();
    println!("{}", svc.summary_json());
    Ok(EXIT_OK)
}
