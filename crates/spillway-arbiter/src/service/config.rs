//! The service's fabric file: who the arbiters and endpoints are (their UDP addresses:
//! rank and endpoint id are positions in the lists), the topology in the scenarios'
//! vocabulary (`star`, `leaf_spine`), and the timing. Parsed by [`super::toml`] (std
//! only, see there why). Every key is checked: unknown keys, wrong types and impossible
//! values are refused naming the key.
//!
//! ```toml
//! [topology]
//! kind = "leaf_spine"      # or "star" (hosts = N)
//! racks = 2
//! hosts_per_rack = 4
//! spines = 2
//!
//! [arbiter]
//! addrs = ["127.0.0.1:7000", "127.0.0.1:7001"]   # rank 0 (primary), rank 1, ...
//! timeslot = "100us"
//! lead = "3ms"
//! batch = 8
//! watchdog = "2ms"
//! takeover = "20ms"
//!
//! [endpoints]
//! addrs = ["127.0.0.1:7100", ...]                 # endpoint (host) 0, 1, ...
//! ```

use super::toml::{self, Document, TomlError, Value};
use crate::fcp::{CommConfig, EndpointConfig, FailoverConfig};
use crate::pathsel::{PathError, TwoTier, VirtualCores};
use crate::{ConfigError as FabricError, Fabric};
use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;

/// What is wrong with a fabric file.
#[derive(Debug)]
pub enum ConfigError {
    Io(String, std::io::Error),
    Toml(TomlError),
    /// `key` (as `table.key`): what is wrong with it.
    Key(String, String),
    Fabric(FabricError),
    Path(PathError),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Io(p, e) => write!(f, "{p}: {e}"),
            ConfigError::Toml(e) => write!(f, "{e}"),
            ConfigError::Key(k, m) => write!(f, "{k}: {m}"),
            ConfigError::Fabric(e) => write!(f, "fabric: {e}"),
            ConfigError::Path(e) => write!(f, "path selection: {e}"),
        }
    }
}

impl std::error::Error for ConfigError {}

fn key_err(key: &str, m: impl Into<String>) -> ConfigError {
    ConfigError::Key(key.to_string(), m.into())
}

/// The topology, in the scenarios' vocabulary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Topology {
    /// One switch: full bisection, one path.
    Star { hosts: u32 },
    /// Racks under spines: rack uplinks limit allocation, path selection picks a spine.
    LeafSpine {
        racks: u32,
        hosts_per_rack: u32,
        spines: u32,
    },
}

impl Topology {
    pub fn hosts(&self) -> u32 {
        match *self {
            Topology::Star { hosts } => hosts,
            Topology::LeafSpine {
                racks,
                hosts_per_rack,
                ..
            } => racks * hosts_per_rack,
        }
    }

    /// The allocator's fabric (§3 fn. 2: rack uplink capacities in host links).
    pub fn fabric(&self) -> Fabric {
        match *self {
            Topology::Star { hosts } => Fabric::full_bisection(hosts as usize),
            Topology::LeafSpine {
                racks,
                hosts_per_rack,
                spines,
            } => Fabric::racks(racks as usize, hosts_per_rack as usize, spines, spines),
        }
    }

    /// Path selection (§4): a spine per inter-rack packet; none for a star.
    pub fn paths(&self) -> Result<Option<TwoTier>, PathError> {
        match *self {
            Topology::Star { .. } => Ok(None),
            Topology::LeafSpine {
                hosts_per_rack,
                spines,
                ..
            } => {
                let rack_of = (0..self.hosts()).map(|h| h / hosts_per_rack).collect();
                TwoTier::new(rack_of, VirtualCores::uniform(spines)).map(Some)
            }
        }
    }
}

/// Everything the arbiters and endpoints share; times in picoseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct ServiceConfig {
    pub topology: Topology,
    /// Arbiter of rank r listens on `arbiters[r]`.
    pub arbiters: Vec<SocketAddr>,
    /// Endpoint e listens on `endpoints[e]` (FCP and data on one socket).
    pub endpoints: Vec<SocketAddr>,
    pub timeslot: u64,
    /// A batch is allocated when its first timeslot is `lead` away (§5.1: 65 us there).
    pub lead: u64,
    /// Timeslots per batch (1..=64).
    pub batch: u32,
    /// §5.1's T_w and T_d.
    pub watchdog: u64,
    pub takeover: u64,
    pub reset_retry: u64,
    pub report_interval: u64,
    pub retransmit: u64,
    /// A grant arriving this long after its timeslot began is late (re-requested).
    pub late_threshold: u64,
    /// Data datagram size in bytes (header included).
    pub payload: usize,
    /// Timeslot 0 starts at this wall-clock time (Unix ns); `None`: see
    /// [`super::clock::default_origin`]. Arbiters and endpoints must agree on it.
    pub origin_unix_ns: Option<u64>,
    pub seed: u64,
}

/// Smallest and largest data datagrams: the header, and what loopback carries unfragmented.
pub const MIN_PAYLOAD: usize = super::data::DATA_LEN;
pub const MAX_PAYLOAD: usize = 1472;

/// A duration such as `"100us"`, `"1.5ms"`, `"2s"` in picoseconds, exactly (no floats).
pub fn parse_duration(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| format!("{s:?} has no unit (ps, ns, us, ms, s)"))?;
    let (num, unit) = s.split_at(split);
    let scale: u64 = match unit {
        "ps" => 1,
        "ns" => 1_000,
        "us" => 1_000_000,
        "ms" => 1_000_000_000,
        "s" => 1_000_000_000_000,
        _ => return Err(format!("{s:?}: unknown unit {unit:?} (ps, ns, us, ms, s)")),
    };
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if int.is_empty() || frac.contains('.') {
        return Err(format!("{s:?} is not a number with a unit"));
    }
    let bad = || format!("{s:?} is too large or too precise");
    let mut v = int
        .parse::<u64>()
        .map_err(|_| bad())?
        .checked_mul(scale)
        .ok_or_else(bad)?;
    let mut place = scale;
    for d in frac.bytes() {
        place /= 10;
        if place == 0 && d != b'0' {
            return Err(bad());
        }
        v = v.checked_add((d - b'0') as u64 * place).ok_or_else(bad)?;
    }
    Ok(v)
}

struct Table<'a> {
    name: &'static str,
    t: BTreeMap<String, Value>,
    _doc: std::marker::PhantomData<&'a ()>,
}

impl Table<'_> {
    fn take(doc: &mut Document, name: &'static str) -> Self {
        Table {
            name,
            t: doc.remove(name).unwrap_or_default(),
            _doc: std::marker::PhantomData,
        }
    }
    fn full(&self, k: &str) -> String {
        format!("{}.{}", self.name, k)
    }
    fn int(&mut self, k: &str, min: i64, max: i64) -> Result<Option<i64>, ConfigError> {
        match self.t.remove(k) {
            None => Ok(None),
            Some(Value::Int(n)) if (min..=max).contains(&n) => Ok(Some(n)),
            Some(Value::Int(n)) => Err(key_err(
                &self.full(k),
                format!("{n} is outside {min}..={max}"),
            )),
            Some(v) => Err(key_err(
                &self.full(k),
                format!("expected an integer, not a {}", v.type_name()),
            )),
        }
    }
    fn req_int(&mut self, k: &str, min: i64, max: i64) -> Result<i64, ConfigError> {
        self.int(k, min, max)?
            .ok_or_else(|| key_err(&self.full(k), "required"))
    }
    fn str(&mut self, k: &str) -> Result<Option<String>, ConfigError> {
        match self.t.remove(k) {
            None => Ok(None),
            Some(Value::Str(s)) => Ok(Some(s)),
            Some(v) => Err(key_err(
                &self.full(k),
                format!("expected a string, not a {}", v.type_name()),
            )),
        }
    }
    fn duration(&mut self, k: &str, default: u64) -> Result<u64, ConfigError> {
        match self.str(k)? {
            None => Ok(default),
            Some(s) => {
                let v = parse_duration(&s).map_err(|m| key_err(&self.full(k), m))?;
                if v == 0 {
                    return Err(key_err(&self.full(k), "must be positive"));
                }
                Ok(v)
            }
        }
    }
    fn addrs(&mut self, k: &str) -> Result<Vec<SocketAddr>, ConfigError> {
        let full = self.full(k);
        match self.t.remove(k) {
            None => Err(key_err(&full, "required (a list of \"ip:port\")")),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| match v {
                    Value::Str(s) => s
                        .parse::<SocketAddr>()
                        .map_err(|_| key_err(&full, format!("{s:?} is not ip:port"))),
                    v => Err(key_err(
                        &full,
                        format!("expected strings, not a {}", v.type_name()),
                    )),
                })
                .collect(),
            Some(v) => Err(key_err(
                &full,
                format!("expected an array, not a {}", v.type_name()),
            )),
        }
    }
    fn done(self) -> Result<(), ConfigError> {
        match self.t.keys().next() {
            None => Ok(()),
            Some(k) => Err(key_err(&self.full(k), "unknown key")),
        }
    }
}

impl ServiceConfig {
    pub fn load(path: &str) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Io(path.into(), e))?;
        Self::parse(&text)
    }

    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let mut doc = toml::parse(text).map_err(ConfigError::Toml)?;
        let mut topo = Table::take(&mut doc, "topology");
        let kind = topo
            .str("kind")?
            .ok_or_else(|| key_err("topology.kind", "required (\"star\" or \"leaf_spine\")"))?;
        let max = u16::MAX as i64;
        let topology = match kind.as_str() {
            "star" => Topology::Star {
                hosts: topo.req_int("hosts", 2, max)? as u32,
            },
            "leaf_spine" => Topology::LeafSpine {
                racks: topo.req_int("racks", 1, 4096)? as u32,
                hosts_per_rack: topo.req_int("hosts_per_rack", 1, max)? as u32,
                spines: topo.req_int("spines", 1, 64)? as u32,
            },
            k => {
                return Err(key_err(
                    "topology.kind",
                    format!("{k:?}: the service knows \"star\" and \"leaf_spine\""),
                ))
            }
        };
        topo.done()?;

        let mut a = Table::take(&mut doc, "arbiter");
        let arbiters = a.addrs("addrs")?;
        if arbiters.is_empty() {
            return Err(key_err("arbiter.addrs", "at least one arbiter"));
        }
        let timeslot = a.duration("timeslot", 100_000_000)?;
        let lead = a.duration("lead", 3_000_000_000)?;
        let batch = a.int("batch", 1, crate::MAX_WIDTH as i64)?.unwrap_or(8) as u32;
        let watchdog = a.duration("watchdog", 2_000_000_000)?;
        let takeover = a.duration("takeover", 20_000_000_000)?;
        let reset_retry = a.duration("reset_retry", 2_000_000_000)?;
        let seed = a.int("seed", 0, i64::MAX)?.unwrap_or(1) as u64;
        let origin_unix_ns = a.int("origin_unix_ns", 1, i64::MAX)?.map(|n| n as u64);
        a.done()?;
        // §5.1: the takeover must wait out the old primary's allocations, which reach
        // `lead` (plus one batch) ahead; else the two could grant the same timeslot.
        let reach = lead + batch as u64 * timeslot;
        if takeover <= reach {
            return Err(key_err(
                "arbiter.takeover",
                format!("must exceed lead + batch x timeslot ({} us), so that a dead primary's grants have passed (§5.1)", reach / 1_000_000),
            ));
        }
        if watchdog >= takeover {
            return Err(key_err(
                "arbiter.watchdog",
                "must be shorter than arbiter.takeover",
            ));
        }

        let mut e = Table::take(&mut doc, "endpoints");
        let endpoints = e.addrs("addrs")?;
        let report_interval = e.duration("report_interval", timeslot)?;
        let retransmit = e.duration("retransmit", 2 * lead)?;
        let late_threshold = e.duration("late_threshold", timeslot / 2)?;
        let payload = e
            .int("payload", MIN_PAYLOAD as i64, MAX_PAYLOAD as i64)?
            .unwrap_or(64) as usize;
        e.done()?;
        if endpoints.len() != topology.hosts() as usize {
            return Err(key_err(
                "endpoints.addrs",
                format!(
                    "{} addresses for a topology of {} hosts",
                    endpoints.len(),
                    topology.hosts()
                ),
            ));
        }
        let mut all: Vec<_> = arbiters.iter().chain(&endpoints).collect();
        all.sort();
        if let Some(w) = all.windows(2).find(|w| w[0] == w[1]) {
            return Err(key_err(
                "endpoints.addrs",
                format!("{} is used twice", w[0]),
            ));
        }
        if let Some(k) = doc.keys().find(|k| !k.is_empty()) {
            return Err(key_err(k, "unknown table"));
        }
        if let Some(k) = doc.get("").and_then(|t| t.keys().next()) {
            return Err(key_err(
                k,
                "unknown key (keys belong in [topology], [arbiter], [endpoints])",
            ));
        }
        let cfg = ServiceConfig {
            topology,
            arbiters,
            endpoints,
            timeslot,
            lead,
            batch,
            watchdog,
            takeover,
            reset_retry,
            report_interval,
            retransmit,
            late_threshold,
            payload,
            origin_unix_ns,
            seed,
        };
        cfg.topology.paths().map_err(ConfigError::Path)?;
        Ok(cfg)
    }

    /// Arbiter `rank`'s FCP parameters.
    pub fn comm(&self, rank: u32, nonce_seed: u64) -> CommConfig {
        let failover = FailoverConfig {
            rank,
            arbiters: self.arbiters.len() as u32,
            watchdog: self.watchdog,
            takeover: self.takeover,
        };
        let mut c = CommConfig::new(failover, nonce_seed);
        c.reset_retry = self.reset_retry;
        // One message per endpoint per batch, answers to reports included (as in the
        // simulator): fewer datagrams, fewer wake-ups on a shared machine.
        c.defer_acks = true;
        c
    }

    /// Endpoint `id`'s FCP parameters.
    pub fn endpoint(&self, id: u32) -> EndpointConfig {
        let mut c = EndpointConfig::new(id);
        c.timeslot = self.timeslot;
        c.report_interval = self.report_interval;
        c.retransmit = self.retransmit;
        c.late_threshold = self.late_threshold;
        c.reset_retry = self.reset_retry;
        c
    }

    /// A fabric file for `endpoints` hosts in a star, on the given addresses (the demo's).
    pub fn render_star(arbiters: &[SocketAddr], endpoints: &[SocketAddr]) -> String {
        let list = |a: &[SocketAddr]| {
            a.iter()
                .map(|x| format!("\"{x}\""))
                .collect::<Vec<_>>()
                .join(", ")
        };
        format!(
            "[topology]\nkind = \"star\"\nhosts = {}\n\n[arbiter]\naddrs = [{}]\n\n[endpoints]\naddrs = [{}]\n",
            endpoints.len(),
            list(arbiters),
            list(endpoints)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[topology]
kind = "leaf_spine"
racks = 2
hosts_per_rack = 2
spines = 2

[arbiter]
addrs = ["127.0.0.1:7000", "127.0.0.1:7001"]
timeslot = "50us"
lead = "2ms"
batch = 4
watchdog = "1ms"
takeover = "10ms"

[endpoints]
addrs = [
  "127.0.0.1:7100", "127.0.0.1:7101",
  "127.0.0.1:7102", "127.0.0.1:7103",
]
"#;

    #[test]
    fn a_leaf_spine_file() {
        let c = ServiceConfig::parse(GOOD).unwrap();
        assert_eq!(c.topology.hosts(), 4);
        assert_eq!(c.timeslot, 50_000_000);
        assert_eq!(c.lead, 2_000_000_000);
        assert_eq!(c.batch, 4);
        assert_eq!(c.arbiters.len(), 2);
        assert_eq!(c.endpoints[3], "127.0.0.1:7103".parse().unwrap());
        assert_eq!(c.report_interval, c.timeslot);
        assert_eq!(c.late_threshold, 25_000_000);
        assert_eq!(c.topology.fabric().racks_len(), 2);
        assert!(c.topology.paths().unwrap().is_some());
    }

    #[test]
    fn durations_are_exact() {
        assert_eq!(parse_duration("1.5ms"), Ok(1_500_000_000));
        assert_eq!(parse_duration("100us"), Ok(100_000_000));
        assert_eq!(parse_duration("2s"), Ok(2_000_000_000_000));
        assert_eq!(parse_duration("7ps"), Ok(7));
        assert!(parse_duration("0.5ps").is_err());
        assert!(parse_duration("10").is_err());
        assert!(parse_duration("10 parsecs").is_err());
        assert!(parse_duration("1.2.3us").is_err());
        assert!(parse_duration("99999999999s").is_err());
    }

    #[test]
    fn refusals_name_the_key() {
        for (from, to, key) in [
            ("spines = 2", "spines = 2\nfoo = 1", "topology.foo"),
            ("kind = \"leaf_spine\"", "kind = \"ring\"", "topology.kind"),
            ("batch = 4", "batch = 65", "arbiter.batch"),
            ("batch = 4", "batch = \"4\"", "arbiter.batch"),
            (
                "timeslot = \"50us\"",
                "timeslot = \"50\"",
                "arbiter.timeslot",
            ),
            (
                "timeslot = \"50us\"",
                "timeslot = \"0us\"",
                "arbiter.timeslot",
            ),
            (
                "takeover = \"10ms\"",
                "takeover = \"2ms\"",
                "arbiter.takeover",
            ),
            (
                "watchdog = \"1ms\"",
                "watchdog = \"11ms\"",
                "arbiter.watchdog",
            ),
            ("\"127.0.0.1:7103\",", "", "endpoints.addrs"),
            (
                "\"127.0.0.1:7103\",",
                "\"127.0.0.1:7000\",",
                "endpoints.addrs",
            ),
            ("\"127.0.0.1:7103\",", "\"localhost\",", "endpoints.addrs"),
            ("[endpoints]", "[extra]\nx = 1\n[endpoints]", "extra"),
        ] {
            let text = GOOD.replace(from, to);
            assert_ne!(text, GOOD, "{from}");
            match ServiceConfig::parse(&text) {
                Err(ConfigError::Key(k, m)) => assert_eq!(k, key, "{to}: {m}"),
                other => panic!("{to}: {other:?}"),
            }
        }
        assert!(matches!(
            ServiceConfig::parse("a = [1"),
            Err(ConfigError::Toml(_))
        ));
    }

    #[test]
    fn the_demo_file_parses() {
        let a: Vec<SocketAddr> = vec![
            "127.0.0.1:1".parse().unwrap(),
            "127.0.0.1:2".parse().unwrap(),
        ];
        let e: Vec<SocketAddr> = (3..6)
            .map(|p| format!("127.0.0.1:{p}").parse().unwrap())
            .collect();
        let c = ServiceConfig::parse(&ServiceConfig::render_star(&a, &e)).unwrap();
        assert_eq!(c.topology, Topology::Star { hosts: 3 });
        assert_eq!(c.arbiters, a);
        assert_eq!(c.endpoints, e);
    }
}
