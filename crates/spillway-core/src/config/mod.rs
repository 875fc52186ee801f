//! The scenario: every key, its type, default and meaning, defined once in
//! [`keys::KEYS`], read section by section (one module each) into the typed scenario.
//!
//! Parsing walks that table, so an unknown key, a key that does not apply to the chosen
//! kind, or a bad unit is refused with the key and the value named; the resolved scenario
//! (every applicable key with its effective value) and the reference page
//! (`docs/reference.md`) are both generated from the same table.

pub mod error;
pub mod fastpass;
pub mod host;
pub mod keys;
pub mod ping;
pub mod reader;
pub mod reference;
pub mod run;
pub mod switch;
pub mod topology;
pub mod trace;
pub mod transport;
pub mod workload;

pub use error::ScenarioError;
pub use reference::reference_markdown;
pub use run::RunSpec;
pub use workload::parse_trace_csv;

use crate::fabric::routes::RouteSpec;
use crate::fabric::topology::{Shape, TopologySpec};
use crate::host::ping::PingConfig;
use crate::host::HostConfig;
use crate::switch::config::QueueKind;
use crate::switch::forwarding::Forwarding;
use crate::switch::overflow::Overflow;
use crate::switch::{SwitchConfig, SwitchKind};
use crate::workload::size_classes::SizeClasses;
use crate::workload::spec::{BackgroundSpec, WorkloadSpec};

use crate::packet::int::MAX_HOPS;
use crate::packet::wire::wire_bytes;
use crate::transport::cc::kinds::CcKind;
use crate::transport::roce::{RoceCc, RoceConfig};
use crate::transport::TransportConfig;
use crate::units;
use host::read_host;
use keys::{unknown_key_message, KEYS};
use ping::read_ping;
use reader::Reader;
use run::read_run;
use std::path::Path;
use switch::{read_cut_through, read_switch};
use toml::{Table, Value};
use topology::read_topology;
use transport::read_transport;
use workload::{check_load_on, read_background, read_load_on, read_size_classes, read_workload};

#[derive(Debug, Clone)]
pub struct Scenario {
    pub topology: TopologySpec,
    pub switch: SwitchConfig,
    /// `switch.routes`: forwarding overrides, for the fabric's routing tables.
    pub routes: Vec<RouteSpec>,
    pub host: HostConfig,
    pub transport: TransportConfig,
    pub workload: WorkloadSpec,
    /// `workload.classes_by_size`: the workload's flows' classes by size (empty: off).
    pub classes: SizeClasses,
    pub background: Option<BackgroundSpec>,
    pub run: RunSpec,
    /// `[ping]`, when `ping.interval` is set.
    pub ping: Option<PingConfig>,
    /// Every applicable key with its effective value, as TOML.
    pub resolved: String,
}

impl Scenario {
    /// Parses scenario text, applies `--set key=value` overrides, resolves defaults and validates.
    /// `base_dir` resolves relative file paths (CDFs, traces).
    pub fn parse(
        text: &str,
        overrides: &[String],
        base_dir: Option<&Path>,
    ) -> Result<Scenario, ScenarioError> {
        let mut table: Table = text.parse().map_err(|e: toml::de::Error| {
            ScenarioError::new("(file)", "", format!("not valid TOML: {}", e.message()))
        })?;
        for o in overrides {
            apply_override(&mut table, o)?;
        }
        Self::from_table(&table, base_dir)
    }

    pub fn from_table(table: &Table, base_dir: Option<&Path>) -> Result<Scenario, ScenarioError> {
        let mut r = Reader::new(table, base_dir)?;
        let mut topology = read_topology(&mut r)?;
        let hosts = topology.shape.host_count();
        let mut switch = read_switch(&mut r)?;
        let routes = r.routes(&topology.shape)?;
        if switch.buffer < 1600 {
            return Err(r.err(
                "switch.buffer",
                "must hold at least one full-size packet (1600 B)",
            ));
        }
        let mut host = read_host(&mut r, &switch)?;
        let alb = matches!(switch.forwarding, Forwarding::Alb(_));
        // Fastpass's arbiter gives each timeslot of a flow its own path (§4): multipath,
        // as ALB's spraying is, where the fabric has more than one path.
        let fastpass_multipath = host::wants_fastpass(&r)
            && matches!(
                topology.shape,
                Shape::LeafSpine { .. } | Shape::FatTree { .. }
            );
        let transport = read_transport(&mut r, &topology, alb || fastpass_multipath)?;
        if let SwitchKind::Cioq(c) = &mut switch.kind {
            // §6.1's T_frame: the largest frame a port sends.
            c.max_frame = wire_bytes(
                transport.mss() + transport.header_bytes(),
                topology.framing_bytes,
            ) as u64;
        }
        if let TransportConfig::Turbo(_) = &transport {
            check_turbo(&r, &switch)?;
        }
        if let TransportConfig::Roce(c) = &transport {
            check_roce(&r, &topology, &switch, &host, c)?;
            switch.telemetry = matches!(c.cc, RoceCc::Hpcc(_));
        }
        read_cut_through(
            &mut r,
            &mut switch,
            transport.header_bytes(),
            topology.framing_bytes,
        )?;
        let ecn_capable = transport.tcp().is_some_and(|t| t.ecn)
            || transport.roce().is_some_and(|c| c.ecn_capable());
        if let Some(tcp) = transport
            .tcp()
            .filter(|t| matches!(t.cc, CcKind::Dctcp { .. }))
        {
            if !switch.marks_ecn() {
                return Err(r.err(
                    "transport.kind",
                    "dctcp follows ECN marks: set switch.ecn = \"threshold\" (DCTCP's K), \"red\" or \"codel\"",
                ));
            }
            if !tcp.ecn {
                return Err(r.err("transport.ecn", "dctcp is ECN-capable by definition"));
            }
        }
        if !ecn_capable && switch.marks_ecn() {
            // Non-ECT packets are never marked, and a quench is answered like an echo.
            return Err(r.err(
                "transport.ecn",
                "with switch.ecn marking, senders that are not ECN-capable would see nothing of it \
                 (marks go only to ECN-capable packets; Source Quench is answered like an ECN echo): \
                 set switch.ecn = \"off\" for a network that signals by loss alone",
            ));
        }
        let wants_fastpass = host::wants_fastpass(&r);
        host.fastpass = fastpass::read_fastpass(
            &mut r,
            wants_fastpass,
            host.nic_drop_local,
            &topology,
            &switch,
            &routes,
        )?;
        if let Some(fp) = &host.fastpass {
            r.reserved = fp.arbiter_hosts();
            topology.host_link_rates = r
                .reserved
                .iter()
                .map(|&h| (h, fp.arbiter_link_rate))
                .collect();
            topology.uplink_rates = r
                .reserved
                .iter()
                .map(|&h| (h, fp.arbiter_uplink_rate))
                .collect();
        }
        let load_on = read_load_on(
            &mut r,
            transport.mss(),
            transport.header_bytes(),
            topology.framing_bytes,
        )?;
        let workload = read_workload(&mut r, hosts, &topology, load_on)?;
        let classes = read_size_classes(&mut r, &workload)?;
        let background = read_background(&mut r, hosts, load_on)?;
        check_load_on(&r, load_on, &workload, background.as_ref())?;
        let run = read_run(&mut r)?;
        if let Some(fp) = &host.fastpass {
            if fp.fail_at.is_some() && fp.secondary.is_none() && run.duration.is_none() {
                // Nothing would allocate after it: the run would wait for flows that
                // cannot finish until the clock's horizon.
                return Err(r.err(
                    "fastpass.fail_at",
                    "stops the only arbiter: set fastpass.secondary to take over, or run.duration \
                     to watch the network without one",
                ));
            }
        }
        if run.duration.is_none() {
            // Open-loop arrivals with no end would run (and grow) forever.
            let endless = match &workload {
                WorkloadSpec::Poisson(s) => s.max_flows.is_none().then_some("max_flows"),
                WorkloadSpec::Query(s) => s.queries.is_none().then_some("queries"),
                WorkloadSpec::ShortLong(s) => s.queries.is_none().then_some("queries"),
                _ => None,
            };
            if let Some(limit) = endless {
                return Err(r.err(
                    "run.duration",
                    format!(
                        "this workload generates arrivals until run.duration or workload.{limit} \
                         stops it: set one of them"
                    ),
                ));
            }
        }
        check_buffers(&r, &topology, &switch, &host, &transport)?;
        let max_ip = transport.mss() + transport.header_bytes();
        let ping = read_ping(&mut r, hosts, max_ip, run.duration)?;
        let resolved = r.render();
        Ok(Scenario {
            topology,
            switch,
            routes,
            host,
            transport,
            workload,
            classes,
            background,
            run,
            ping,
            resolved,
        })
    }

    pub fn host_count(&self) -> u32 {
        self.topology.shape.host_count()
    }
}

/// Every buffer must hold one full-size frame, or the packets that need it could never
/// leave (a NIC that cannot hold one resends it forever).
/// Turbo needs priority queues and does nothing with marks, notifications, quenches or
/// cut payloads.
fn check_turbo(r: &Reader, switch: &SwitchConfig) -> Result<(), ScenarioError> {
    if switch.queue != QueueKind::PFabric {
        return Err(r.err(
            "switch.queue",
            "Turbo needs priority queues (Turbo §4: FIFO queues are unusable for it): set switch.queue = \"pfabric\"",
        ));
    }
    if switch.overflow != Overflow::Drop {
        return Err(r.err(
            "switch.overflow",
            "Turbo learns of loss by timeouts alone (Turbo §4(2)): set switch.overflow = \"drop\"",
        ));
    }
    Ok(())
}

/// RoCE runs over FIFO queues that drop or pause; its congestion controls need what they
/// react to, and nothing the switches signal otherwise reaches a RoCE sender.
fn check_roce(
    r: &Reader,
    topology: &TopologySpec,
    switch: &SwitchConfig,
    host: &HostConfig,
    c: &RoceConfig,
) -> Result<(), ScenarioError> {
    let switches = transport::fabric_hops(topology) + 1;
    if matches!(c.cc, RoceCc::Hpcc(_)) && switches > MAX_HOPS as u64 {
        return Err(r.err(
            "transport.cc",
            format!(
                "HPCC's telemetry header holds {MAX_HOPS} hops, and the longest path here crosses \
                 {switches} switches (the simulator ignores such ACKs: the flow would run \
                 uncontrolled)"
            ),
        ));
    }
    if switch.queue != QueueKind::DropTail {
        return Err(r.err(
            "switch.queue",
            "RoCE packets carry no priority for a pFabric queue: set switch.queue = \"droptail\"",
        ));
    }
    if switch.overflow != Overflow::Drop {
        return Err(r.err(
            "switch.overflow",
            "a RoCE sender hears of loss by NACKs and timeouts alone: set switch.overflow = \"drop\"",
        ));
    }
    if host.gro {
        return Err(r.err(
            "host.gro",
            "a RoCE NIC acknowledges every packet itself: set host.gro = false",
        ));
    }
    if host.nic_drop_local {
        return Err(r.err(
            "host.nic_drop",
            "a RoCE NIC holds each queue pair's packet until it sends it: set host.nic_drop = \"loss\"",
        ));
    }
    if !matches!(switch.forwarding, Forwarding::Ecmp) {
        // A RoCE receiver drops what arrives out of order; HPCC's records would come
        // from other ports each ACK.
        return Err(r.err(
            "switch.forwarding",
            "RoCE needs each flow on one path (its receiver NACKs any reordering): set switch.forwarding = \"ecmp\"",
        ));
    }
    if host::wants_fastpass(r) {
        return Err(r.err("transport.kind", "Fastpass's endpoints run TCP, not RoCE"));
    }
    match c.cc {
        RoceCc::Dcqcn(_) | RoceCc::Dctcp(_) if !switch.marks_ecn() => Err(r.err(
            "transport.cc",
            "dcqcn and dctcp react to ECN marks: set switch.ecn = \"red\" (DCQCN's marking) or \"threshold\"",
        )),
        RoceCc::Hpcc(_) if switch.marks_ecn() => Err(r.err(
            "switch.ecn",
            "hpcc reads the switches' telemetry, not ECN marks: set switch.ecn = \"off\"",
        )),
        _ => Ok(()),
    }
}

fn check_buffers(
    r: &Reader,
    t: &TopologySpec,
    sw: &SwitchConfig,
    host: &HostConfig,
    tr: &TransportConfig,
) -> Result<(), ScenarioError> {
    let frame = wire_bytes(tr.mss() + tr.header_bytes(), t.framing_bytes) as u64;
    let tiered = t.shape.tiered();
    let buffers = [
        ("switch.buffer", Some(sw.buffer)),
        ("switch.edge_buffer", Some(sw.edge_buffer)),
        ("switch.spine_buffer", tiered.then_some(sw.spine_buffer)),
        ("host.nic_buffer", host.nic_buffer),
    ];
    for (key, b) in buffers {
        if let Some(b) = b.filter(|&b| b < frame) {
            return Err(r.err_value(
                key,
                units::format_size(b),
                format!(
                    "smaller than one full-size frame on the wire ({frame} B: transport.mss + \
                     transport.header_bytes + Ethernet framing)"
                ),
            ));
        }
    }
    Ok(())
}

/// Applies one `--set section.key=value` override. The value is read as TOML when it
/// parses (numbers, booleans, quoted strings, arrays), otherwise as a bare string
/// (`10Gbps`, `off`).
pub fn apply_override(table: &mut Table, assignment: &str) -> Result<(), ScenarioError> {
    let (path, raw) = assignment
        .split_once('=')
        .ok_or_else(|| ScenarioError::new("--set", assignment, "expected key.path=value"))?;
    let path = path.trim();
    let raw = raw.trim();
    let (section, key) = path
        .split_once('.')
        .ok_or_else(|| ScenarioError::new(path, raw, "expected section.key (e.g. topology.k)"))?;
    if !KEYS.iter().any(|k| k.path == path) {
        return Err(ScenarioError::new(path, raw, unknown_key_message(path)));
    }
    let value = raw
        .parse::<Value>()
        .unwrap_or_else(|_| Value::String(raw.to_string()));
    let sect = table
        .entry(section.to_string())
        .or_insert_with(|| Value::Table(Table::new()));
    match sect {
        Value::Table(t) => {
            t.insert(key.to_string(), value);
            Ok(())
        }
        _ => Err(ScenarioError::new(section, "", "must be a table")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::spec::IncastSpec;

    fn parse(text: &str) -> Result<Scenario, ScenarioError> {
        Scenario::parse(text, &[], None)
    }

    #[test]
    fn defaults_resolve() {
        let s = parse("").unwrap();
        assert_eq!(s.topology.link_rate, 10_000_000_000);
        assert_eq!(s.switch.buffer, 131_072);
        assert_eq!(
            s.transport.tcp().unwrap().rto_init,
            s.transport.tcp().unwrap().rto_min
        );
        assert!(s.resolved.contains("[topology]"));
        // The resolved text parses back to the same scenario.
        let again = parse(&s.resolved).unwrap();
        assert_eq!(again.resolved, s.resolved);
    }

    #[test]
    fn presets_fill_in_paper_parameters() {
        let s = parse("[topology]\nkind = \"pfabric144\"").unwrap();
        assert_eq!(s.host_count(), 144);
        assert_eq!(s.topology.fabric_rate, 40_000_000_000);
        assert_eq!(s.topology.link_delay, 200_000);
        let d = parse("[topology]\nkind = \"detail96\"").unwrap();
        assert_eq!(d.host_count(), 96);
        assert_eq!(d.topology.link_rate, 1_000_000_000);
    }

    #[test]
    fn unknown_and_misplaced_keys_are_named() {
        let e = parse("[switch]\nbufer = \"1KB\"").unwrap_err();
        assert_eq!(e.key, "switch.bufer");
        assert!(e.message.contains("switch.buffer"), "{e}");
        let e = parse("[topology]\nkind = \"star\"\nk = 8").unwrap_err();
        assert_eq!(e.key, "topology.k");
        assert!(e.message.contains("does not apply"));
        let e = parse("[topology]\nlink_rate = \"10GB\"").unwrap_err();
        assert_eq!(e.key, "topology.link_rate");
        assert_eq!(e.value, "\"10GB\"");
        let e = parse("[topology]\nkind = \"fat_tree\"\nk = 7").unwrap_err();
        assert_eq!(e.key, "topology.k");
    }

    #[test]
    fn overrides_apply_and_validate() {
        let s = Scenario::parse(
            "",
            &[
                "workload.senders=64".into(),
                "topology.link_rate=1Gbps".into(),
            ],
            None,
        )
        .unwrap();
        assert!(matches!(
            s.workload,
            WorkloadSpec::Incast(IncastSpec { senders: 64, .. })
        ));
        assert_eq!(s.topology.link_rate, 1_000_000_000);
        let e = Scenario::parse("", &["transport.dupack_threshold=-1".into()], None).unwrap_err();
        assert_eq!(e.key, "transport.dupack_threshold");
        let e = Scenario::parse("", &["nonsense".into()], None).unwrap_err();
        assert_eq!(e.key, "--set");
    }

    #[test]
    fn reference_lists_every_key() {
        let r = reference_markdown();
        for k in KEYS {
            assert!(r.contains(&format!("`{}`", k.path)));
        }
    }

    /// Turbo §5: pFabric's "initial CWND of one BDP number of packets, or 4" on this
    /// topology: the BDP (10 Gbps x a full packet's and an ACK's RTT) is 6040 B, 3.93
    /// packets of 1538 B on the wire (it was divided by the 1460 B payload: 5).
    #[test]
    fn pfabric_bdp_is_counted_in_packets_on_the_wire() {
        let s =
            parse("[topology]\nkind = \"pfabric144\"\n[transport]\nkind = \"pfabric\"").unwrap();
        assert_eq!(s.transport.tcp().unwrap().init_cwnd, 4);
        assert_eq!(
            s.transport.tcp().unwrap().cc,
            CcKind::PFabric { max_cwnd: 8 * 1460 }
        );
    }

    /// `switch.serve_order` orders pFabric's queue, at the switches and the NICs; with
    /// the droptail queue it would do nothing, so it is refused there.
    #[test]
    fn serve_order_is_for_the_pfabric_queue() {
        use crate::switch::discipline::pfabric::ServeOrder;
        let e = parse("[switch]\nserve_order = \"sequence\"").unwrap_err();
        assert_eq!(e.key, "switch.serve_order");
        assert!(e.message.contains("queue = \"pfabric\""), "{}", e.message);
        let s = parse("[switch]\nqueue = \"pfabric\"\nserve_order = \"sequence\"").unwrap();
        assert_eq!(s.switch.serve_order, ServeOrder::Sequence);
        assert_eq!(s.host.nic_pfabric, Some(ServeOrder::Sequence));
        let s = parse("[switch]\nqueue = \"pfabric\"").unwrap();
        assert_eq!(s.switch.serve_order, ServeOrder::Arrival);
        assert!(s.resolved.contains("serve_order = \"arrival\""));
        let s = parse("").unwrap();
        assert_eq!(s.host.nic_pfabric, None);
        assert!(!s.resolved.contains("serve_order"));
        let e = parse("[switch]\nqueue = \"pfabric\"\nserve_order = \"seq\"").unwrap_err();
        assert_eq!(e.key, "switch.serve_order");
    }

    /// Only pFabric's window is capped: elsewhere the key did nothing, silently.
    #[test]
    fn max_cwnd_is_refused_where_it_does_nothing() {
        for kind in ["tcp", "cubic", "dctcp"] {
            let e = parse(&format!("[transport]\nkind = \"{kind}\"\nmax_cwnd = 20")).unwrap_err();
            assert_eq!(e.key, "transport.max_cwnd", "{kind}");
        }
        assert!(parse("[transport]\nkind = \"pfabric\"\nmax_cwnd = 20").is_ok());
    }
}
