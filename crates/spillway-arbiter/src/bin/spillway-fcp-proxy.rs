//! `spillway-fcp-proxy`: a fault-injecting proxy for FCP between endpoints and arbiters
//! (issue 29). See `--help` and docs/arbiter.md § "Faults".

use spillway_arbiter::service::args::{self, usage, Outcome, EXIT_FAILURE, EXIT_OK, EXIT_USAGE};
use spillway_arbiter::service::clock;
use spillway_arbiter::service::faults::{self, Faults, ProxyStats, Wiring};
use spillway_arbiter::service::log;
use std::time::Instant;

const HELP: &str = "\
spillway-fcp-proxy: passes FCP between endpoints and arbiters, dropping, duplicating and
corrupting datagrams at the given rates; optionally floods the arbiters from an
unregistered source

usage:
  spillway-fcp-proxy --arbiter-config A.toml --endpoint-config E.toml [--drop P] [--dup P]
                     [--corrupt P] [--flood N] [--seed S] [--duration T]

options:
  --arbiter-config FILE   the arbiters' fabric file: its endpoints.addrs are the proxy's
                          sockets standing for each endpoint; its arbiter.addrs the arbiters
  --endpoint-config FILE  the endpoints' fabric file: its arbiter.addrs are the proxy's
                          sockets standing for each arbiter; its endpoints.addrs the endpoints
  --drop P                drop each FCP datagram with probability P (both ways; default 0)
  --dup P                 send each forwarded datagram twice with probability P (default 0)
  --corrupt P             corrupt each with probability P: a flipped bit, cut or lengthened,
                          random bytes, or a wrong nonce (default 0)
  --flood N               also send N datagrams/s of junk (random bytes, well-formed FCP with
                          random nonces, status queries) to the arbiters from an unregistered
                          address (default 0)
  --seed S                the faults' seed (default 1)
  --duration T            exit after T (default: until SIGTERM/SIGINT)
  -h, --help              this text

At exit, counters per direction (received, forwarded, dropped, duplicated, corrupted) are
printed as JSON on stdout.
Exit codes: 0 clean exit, 1 runtime failure (e.g. address in use), 2 usage or config error.
";

fn main() {
    args::exit("spillway-fcp-proxy", real_main())
}

fn real_main() -> Outcome {
    let a = args::from_env(
        &[
            "arbiter-config",
            "endpoint-config",
            "drop",
            "dup",
            "corrupt",
            "flood",
            "seed",
            "duration",
        ],
        &[],
    )?;
    if a.help {
        print!("{HELP}");
        return Ok(EXIT_OK);
    }
    let wiring = Wiring::new(&a.config("arbiter-config")?, &a.config("endpoint-config")?)
        .map_err(|e| (EXIT_USAGE, e))?;
    let p = |k: &str| a.num::<f64>(k, 0.0, 1.0).map(|v| v.unwrap_or(0.0));
    let f = Faults {
        drop: p("drop").map_err(usage)?,
        dup: p("dup").map_err(usage)?,
        corrupt: p("corrupt").map_err(usage)?,
    };
    let flood = a
        .num::<u64>("flood", 0, 10_000_000)
        .map_err(usage)?
        .unwrap_or(0);
    let seed = a
        .num::<u64>("seed", 0, u64::MAX)
        .map_err(usage)?
        .unwrap_or(1);
    let duration = a.duration("duration").map_err(usage)?;
    clock::on_sigterm();
    let start = Instant::now();
    let stop = move || {
        clock::stop_requested()
            || duration.is_some_and(|d| start.elapsed().as_nanos() as u64 * 1000 >= d)
    };
    log::event(
        "fcp-proxy",
        "start",
        &format!(
            "\"drop\": {}, \"dup\": {}, \"corrupt\": {}, \"flood_per_s\": {flood}",
            f.drop, f.dup, f.corrupt
        ),
    );
    let stats = ProxyStats::default();
    faults::run(&wiring, f, seed, flood, &stats, &stop)
        .map_err(|e| (EXIT_FAILURE, e.to_string()))?;
    println!("{}", stats.json());
    Ok(EXIT_OK)
}
