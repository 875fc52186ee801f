//! `spillway-arbiterd`: the Fastpass arbiter over UDP (issue 29). See `--help` and
//! docs/arbiter.md § "The arbiter service".

use spillway_arbiter::service::arbiter::ArbiterService;
use spillway_arbiter::service::args::{self, UsageError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE};
use spillway_arbiter::service::clock::{self, Clock};
use spillway_arbiter::service::config::ServiceConfig;
use spillway_arbiter::service::data::{STATUS_QUERY, STOP_QUERY};
use spillway_arbiter::service::log::{self, EventLog};
use spillway_arbiter::service::runtime::{self, RunOpts};
use std::net::UdpSocket;
use std::time::Duration;

const HELP: &str = "\
spillway-arbiterd: the Fastpass arbiter as a UDP service (FCP, §5.3; failover, §5.1)

usage:
  spillway-arbiterd --config FABRIC.toml --rank R [--duration T] [--grant-log FILE] [--busy-poll]
  spillway-arbiterd --status HOST:PORT     print a running arbiter's (or endpoint's) status JSON
  spillway-arbiterd --stop HOST:PORT       ask a running arbiter or endpoint to exit cleanly

options:
  --config FILE     the fabric file: topology, arbiter and endpoint addresses, timing
  --rank R          this arbiter's rank: it listens on arbiter.addrs[R]; rank 0 starts primary
  --duration T      exit after T (e.g. 10s, 500ms); default: until SIGTERM/SIGINT or --stop
  --grant-log FILE  every batch's grants as JSON lines (flushed per batch)
  --busy-poll       spin between timers instead of sleeping (the paper's arbiter polls; only
                    with a core to spare)
  -h, --help        this text

Logs are JSON lines on stderr; at exit the status JSON is printed on stdout.
Exit codes: 0 clean exit, 1 runtime failure (e.g. address in use), 2 usage or config error.
";

fn query(addr: &str, msg: &[u8], wait: bool) -> Result<i32, String> {
    let s = UdpSocket::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    s.send_to(msg, addr).map_err(|e| format!("{addr}: {e}"))?;
    if !wait {
        return Ok(EXIT_OK);
    }
    s.set_read_timeout(Some(Duration::from_secs(1)))
        .map_err(|e| e.to_string())?;
    let mut buf = vec![0u8; 65536];
    let (n, _) = s
        .recv_from(&mut buf)
        .map_err(|e| format!("{addr}: no answer ({e})"))?;
    println!("{}", String::from_utf8_lossy(&buf[..n]));
    Ok(EXIT_OK)
}

fn main() {
    std::process::exit(match real_main() {
        Ok(code) => code,
        Err(Failure::Usage(e)) => {
            eprintln!("spillway-arbiterd: {e}");
            EXIT_USAGE
        }
        Err(Failure::Runtime(e)) => {
            eprintln!("spillway-arbiterd: {e}");
            EXIT_FAILURE
        }
    })
}

enum Failure {
    Usage(String),
    Runtime(String),
}

impl From<UsageError> for Failure {
    fn from(e: UsageError) -> Self {
        Failure::Usage(e.0)
    }
}

fn real_main() -> Result<i32, Failure> {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let a = args::parse(
        &argv,
        &["config", "rank", "duration", "grant-log", "status", "stop"],
        &["busy-poll"],
    )?;
    if a.help {
        print!("{HELP}");
        return Ok(EXIT_OK);
    }
    if let Some(addr) = a.str("status") {
        return query(addr, STATUS_QUERY, true).map_err(Failure::Runtime);
    }
    if let Some(addr) = a.str("stop") {
        return query(addr, STOP_QUERY, false).map_err(Failure::Runtime);
    }
    let path = a.required("config")?;
    let cfg = ServiceConfig::load(path).map_err(|e| Failure::Usage(format!("{path}: {e}")))?;
    let rank = a
        .num::<u32>("rank", 0, cfg.arbiters.len() as u32 - 1)?
        .ok_or_else(|| UsageError("--rank is required".into()))?;
    let duration = a.duration("duration")?;
    let grant_log = EventLog::open(a.str("grant-log"))
        .map_err(|e| Failure::Runtime(format!("--grant-log: {e}")))?;
    let clock = Clock {
        origin_unix_ns: cfg.origin_unix_ns.unwrap_or_else(clock::default_origin),
    };
    let addr = cfg.arbiters[rank as usize];
    let sock = UdpSocket::bind(addr).map_err(|e| Failure::Runtime(format!("bind {addr}: {e}")))?;
    clock::on_sigterm();
    let now = clock.now();
    // Nonces must be unpredictable to others (§5.3): seeded from time, pid and rank.
    let nonce_seed = clock::unix_ns() ^ ((std::process::id() as u64) << 32) ^ rank as u64;
    let svc = ArbiterService::new(cfg, rank, clock, now, nonce_seed, grant_log);
    let opts = RunOpts {
        busy_poll: a.flag("busy-poll"),
        until: duration.map(|d| now + d),
    };
    let mut svc =
        runtime::run(svc, &sock, clock, opts).map_err(|e| Failure::Runtime(e.to_string()))?;
    svc.grant_log_flush();
    let status = svc.status_json(clock.now());
    log::event(&format!("arbiter{rank}"), "stop", "");
    println!("{status}");
    Ok(EXIT_OK)
}
