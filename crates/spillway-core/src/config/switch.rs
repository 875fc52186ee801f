//! `[switch]`: buffers, queue discipline, ECN marking, overflow action, forwarding.

use super::error::ScenarioError;
use super::reader::{nonneg, Reader};
use crate::fabric::routes::RouteSpec;
use crate::fabric::topology::Shape;
use crate::fabric::SwitchTiming;
use crate::switch::config::{RedSpec, SharedBuffer};
use crate::switch::discipline::pfabric::ServeOrder;
use crate::switch::flow_control::FlowControl;
use crate::switch::forwarding::alb::{Tiers, MAX_THRESHOLDS};
use crate::switch::forwarding::Forwarding;
use crate::switch::marking::codel::CodelConfig;
use crate::switch::overflow::fastlane::FastLaneConfig;
use crate::switch::overflow::Overflow;
use crate::switch::{CioqConfig, Ingress, QueueKind, SwitchConfig, SwitchKind};
use crate::units;
use toml::Value;

pub(super) fn read_switch(r: &mut Reader) -> Result<SwitchConfig, ScenarioError> {
    let buffer = r.size("switch.buffer")?;
    let forwarding = match r.choice("switch.forwarding")? {
        "spray" => Forwarding::Spray,
        "alb" => Forwarding::Alb(r.alb_tiers()?),
        _ => Forwarding::Ecmp,
    };
    let queue = match r.choice("switch.queue")? {
        "pfabric" => QueueKind::PFabric,
        _ => QueueKind::DropTail,
    };
    // Read only for the queue it orders (so only then in the resolved scenario).
    let serve_order = if queue == QueueKind::PFabric {
        // Turbo §4(3): Turbo's queues serve the best flow's lowest sequence number.
        let turbo = r
            .raw("transport.kind")
            .is_some_and(|v| v.as_str() == Some("turbo"));
        let derived = if turbo { "sequence" } else { "arrival" };
        match r.choice_or("switch.serve_order", derived)? {
            "sequence" => ServeOrder::Sequence,
            _ => ServeOrder::Arrival,
        }
    } else {
        if r.raw("switch.serve_order").is_some() {
            return Err(r.err(
                "switch.serve_order",
                "orders the packets of pFabric's queue, and switch.queue is droptail (FIFO): \
                 set switch.queue = \"pfabric\"",
            ));
        }
        ServeOrder::Arrival
    };
    let overflow = match r.choice("switch.overflow")? {
        "fastlane" => Overflow::FastLane,
        "source_quench" => Overflow::SourceQuench,
        "cut_payload" => Overflow::CutPayload,
        _ => Overflow::Drop,
    };
    let edge_buffer = r.opt_size("switch.edge_buffer")?.unwrap_or(buffer);
    r.record(
        "switch.edge_buffer",
        Value::String(units::format_size(edge_buffer)),
    );
    let spine_buffer = r.opt_size("switch.spine_buffer")?.unwrap_or(buffer);
    r.record(
        "switch.spine_buffer",
        Value::String(units::format_size(spine_buffer)),
    );
    let cut_extra = r.size("switch.cut_payload_extra")?;
    if queue == QueueKind::PFabric && matches!(forwarding, Forwarding::Alb(_)) {
        return Err(r.err(
            "switch.forwarding",
            "alb balances by the droptail queue's drain bytes per class (DeTail §5.4); pFabric's queue has none",
        ));
    }
    if queue == QueueKind::PFabric && overflow == Overflow::CutPayload {
        return Err(r.err(
            "switch.overflow",
            "cut_payload is defined for the droptail queue (CP §4.2); pFabric evicts by priority instead",
        ));
    }
    let ecn_kind = r.choice("switch.ecn")?;
    let ecn_threshold = if ecn_kind == "threshold" {
        Some(r.size("switch.ecn_threshold")?)
    } else {
        None
    };
    let ecn_by_rate = read_ecn_by_rate(r, ecn_kind == "threshold")?;
    let codel = match ecn_kind {
        "codel" => {
            let target = r.time("switch.codel_target")?;
            let interval = r.time("switch.codel_interval")?;
            for (key, t) in [
                ("switch.codel_target", target),
                ("switch.codel_interval", interval),
            ] {
                if t == 0 {
                    return Err(r.err(key, "CoDel's target and interval must be positive"));
                }
            }
            Some(CodelConfig {
                target,
                interval,
                mtu_bytes: 1538,
            })
        }
        _ => None,
    };
    let red = read_red(r, ecn_kind == "red")?;
    if overflow == Overflow::SourceQuench
        && codel.is_none()
        && ecn_threshold.is_none()
        && red.is_none()
    {
        return Err(r.err(
            "switch.overflow",
            "source_quench sends quenches when the ECN marker marks: set switch.ecn = \"codel\"",
        ));
    }
    let bandwidth = r.float_in("switch.fastlane_bandwidth", 0.0, 1.0)?;
    // §3.3.2: 2.5% of the port buffer (3.2 KB of 128 KB).
    let fl_buffer = r
        .opt_size("switch.fastlane_buffer")?
        .unwrap_or(buffer * 25 / 1000);
    r.record(
        "switch.fastlane_buffer",
        Value::String(units::format_size(fl_buffer)),
    );
    let strict = r.bool("switch.fastlane_strict")?;
    let speedup = r.opt_uint("switch.speedup", 1)?;
    if let Some(s) = speedup.filter(|&s| s > 64) {
        return Err(r.err_value(
            "switch.speedup",
            s,
            "at most 64 (crossbars run at a few times the line rate)",
        ));
    }
    let kind = read_kind(r, queue, overflow, codel.is_some())?;
    let timing = SwitchTiming {
        forwarding_delay: r.time("switch.forwarding_delay")?,
        speedup: speedup.map(|s| s as u32),
        scheduled_crossbar: matches!(kind, SwitchKind::Cioq(_)),
        // `read_cut_through`, once the header's size is known.
        cut_through: None,
    };
    if overflow == Overflow::FastLane && fl_buffer < 64 {
        return Err(r.err(
            "switch.fastlane_buffer",
            "must hold at least one 64 B notification",
        ));
    }
    let shared = match r.choice("switch.buffer_sharing")? {
        "dynamic" => {
            if matches!(kind, SwitchKind::Cioq(_)) {
                return Err(r.err(
                    "switch.buffer_sharing",
                    "the combined input/output-queued switch buffers per input and output \
                     (its pause thresholds count per ingress): output-queued switches only",
                ));
            }
            if overflow == Overflow::FastLane {
                return Err(r.err(
                    "switch.buffer_sharing",
                    "FastLane's notification buffer and its drop rule are per port (§3.3.2): \
                     not beside a shared buffer",
                ));
            }
            Some(SharedBuffer {
                pool: r.positive_size("switch.shared_buffer")?,
                alpha: r.float_in("switch.dt_alpha", 0.0, 64.0)?,
            })
        }
        _ => {
            for key in ["switch.shared_buffer", "switch.dt_alpha"] {
                if r.raw(key).is_some() {
                    return Err(r.err(key, "applies with switch.buffer_sharing = \"dynamic\""));
                }
            }
            None
        }
    };
    Ok(SwitchConfig {
        shared,
        buffer,
        edge_buffer,
        spine_buffer,
        ecn_threshold,
        ecn_by_rate,
        cut_extra,
        forwarding,
        queue,
        serve_order,
        overflow,
        fastlane: FastLaneConfig {
            bandwidth_ppm: (bandwidth * 1e6).round() as u64,
            buffer: fl_buffer,
            strict,
        },
        codel,
        red,
        timing,
        kind,
        telemetry: false,
    })
}

/// `switch.ecn_threshold_by_rate`: K per port rate, as the HPCC simulator's KMAX_MAP
/// gives it (30 KB at 10 Gbit/s, 120 KB at 40: K grows with the rate's BDP). Sorted by
/// rate; a port whose rate is not listed marks at `switch.ecn_threshold`.
fn read_ecn_by_rate(r: &mut Reader, marking: bool) -> Result<Vec<(u64, u64)>, ScenarioError> {
    const KEY: &str = "switch.ecn_threshold_by_rate";
    let Some(v) = r.raw(KEY).cloned() else {
        return Ok(Vec::new());
    };
    if !marking {
        return Err(r.err(KEY, "applies with switch.ecn = \"threshold\""));
    }
    let Value::Table(t) = &v else {
        return Err(r.err(
            KEY,
            "expected a table of rate = size ({ \"40Gbps\" = \"120KB\" })",
        ));
    };
    let mut out = Vec::with_capacity(t.len());
    for (rate, k) in t {
        let key = format!("{KEY}.{rate}");
        let bps = units::parse_rate(rate).map_err(|m| ScenarioError::new(&key, rate, m))?;
        let bytes = match k {
            Value::String(s) => units::parse_size(s),
            Value::Integer(i) => nonneg(*i),
            _ => Err("expected a size (\"120KB\")".into()),
        }
        .map_err(|m| ScenarioError::new(&key, k, m))?;
        if out.iter().any(|&(b, _)| b == bps) {
            return Err(ScenarioError::new(&key, rate, "this rate is listed twice"));
        }
        out.push((bps, bytes));
    }
    out.sort_unstable();
    r.record(KEY, v);
    Ok(out)
}

/// `switch.ecn = "red"`: `ecn_kmin` and `ecn_kmax` together or neither (then by each
/// port's rate, as the HPCC simulator's maps), `ecn_pmax`.
fn read_red(r: &mut Reader, on: bool) -> Result<Option<RedSpec>, ScenarioError> {
    const KEYS: [&str; 3] = ["switch.ecn_kmin", "switch.ecn_kmax", "switch.ecn_pmax"];
    if !on {
        if let Some(k) = KEYS.into_iter().find(|k| r.raw(k).is_some()) {
            return Err(r.err(k, "applies with switch.ecn = \"red\""));
        }
        return Ok(None);
    }
    let kmin = r.opt_size("switch.ecn_kmin")?;
    let kmax = r.opt_size("switch.ecn_kmax")?;
    let pmax = r.float_in("switch.ecn_pmax", 0.0, 1.0)?;
    match (kmin, kmax) {
        (Some(lo), Some(hi)) if lo >= hi => {
            return Err(r.err_value(
                "switch.ecn_kmax",
                units::format_size(hi),
                format!("must be above switch.ecn_kmin ({})", units::format_size(lo)),
            ))
        }
        (Some(_), None) | (None, Some(_)) => {
            let (given, missing) = if kmin.is_some() {
                (KEYS[0], KEYS[1])
            } else {
                (KEYS[1], KEYS[0])
            };
            return Err(r.err(
                given,
                format!("set {missing} too (neither: both by the port's rate)"),
            ));
        }
        _ => {}
    }
    Ok(Some(RedSpec { kmin, kmax, pmax }))
}

/// The bytes of a packet a cut-through switch must have before it forwards: what
/// forwarding reads, its Ethernet header (with the preamble ahead of it) and the TCP/IP
/// headers behind it (the 5-tuple ECMP hashes): `framing` less the 16 B of FCS and
/// inter-frame gap that follow the packet (22 B with Ethernet's 38), plus `header`
/// bytes of TCP/IP (40): 62 B. Without framing (pFabric's 1500 B packets), the 40 B of
/// TCP/IP alone, the header size the pFabric group's simulator cuts through at.
pub fn cut_through_header(header: u32, framing: u32) -> u32 {
    (header + framing.saturating_sub(16)).max(1)
}

/// `switch.cut_through`, once the transport's header size is known.
pub(super) fn read_cut_through(
    r: &mut Reader,
    sw: &mut SwitchConfig,
    header: u32,
    framing: u32,
) -> Result<(), ScenarioError> {
    if !r.bool("switch.cut_through")? {
        return Ok(());
    }
    if matches!(sw.kind, SwitchKind::Cioq(_)) {
        return Err(r.err(
            "switch.cut_through",
            "is for output-queued switches: a CIOQ switch (switch.kind = \"cioq\") moves a \
             packet through its scheduled crossbar only once it holds all of it",
        ));
    }
    if sw.timing.speedup.is_some() {
        return Err(r.err(
            "switch.cut_through",
            "the crossbar of switch.speedup is a store-and-forward stage of its own: set \
             switch.speedup = \"off\" with cut-through",
        ));
    }
    sw.timing.cut_through = Some(cut_through_header(header, framing));
    Ok(())
}

/// `switch.kind` and, for `cioq`, its ingress queues and flow control.
fn read_kind(
    r: &mut Reader,
    queue: QueueKind,
    overflow: Overflow,
    codel: bool,
) -> Result<SwitchKind, ScenarioError> {
    let flow_control = match r.choice("switch.flow_control")? {
        "pause" => FlowControl::Pause,
        "pfc" => FlowControl::Pfc,
        _ => FlowControl::None,
    };
    if r.choice("switch.kind")? == "oq" {
        if flow_control != FlowControl::None {
            return Err(r.err(
                "switch.flow_control",
                "pauses are sent by ingress queues (DeTail §5.2): set switch.kind = \"cioq\"",
            ));
        }
        return Ok(SwitchKind::Oq);
    }
    // The combined input/output-queued switch runs the droptail pipeline (with
    // threshold marking) at its egress ports; the other mechanisms are the OQ switch's.
    let unsupported = if queue == QueueKind::PFabric {
        Some(("switch.queue", "pfabric"))
    } else if overflow != Overflow::Drop {
        Some(("switch.overflow", "anything but drop"))
    } else if codel {
        Some(("switch.ecn", "codel"))
    } else {
        None
    };
    if let Some((key, what)) = unsupported {
        return Err(r.err(
            key,
            format!("{what} is not supported at switch.kind = \"cioq\" (use \"oq\")"),
        ));
    }
    let ingress = match r.choice("switch.ingress")? {
        "fifo" => Ingress::Fifo,
        _ => Ingress::Voq,
    };
    let ingress_buffer = r.opt_size("switch.ingress_buffer")?;
    if let Some(b) = ingress_buffer.filter(|&b| b < 1600) {
        return Err(r.err_value(
            "switch.ingress_buffer",
            units::format_size(b),
            "must hold at least one full-size packet (1600 B)",
        ));
    }
    let xoff = r.opt_size("switch.pfc_xoff")?;
    let xon = r.opt_size("switch.pfc_xon")?;
    if flow_control == FlowControl::None {
        for (k, v) in [("switch.pfc_xoff", xoff), ("switch.pfc_xon", xon)] {
            if v.is_some() {
                return Err(r.err(
                    k,
                    "is a flow-control threshold, and switch.flow_control is none",
                ));
            }
        }
    }
    if let (Some(off), Some(on)) = (xoff, xon) {
        if on >= off {
            return Err(r.err_value(
                "switch.pfc_xon",
                units::format_size(on),
                format!(
                    "must be below switch.pfc_xoff ({})",
                    units::format_size(off)
                ),
            ));
        }
    }
    if xoff == Some(0) {
        return Err(r.err("switch.pfc_xoff", "must be positive"));
    }
    let deadlock_after = r.time("switch.deadlock_after")?;
    if deadlock_after == 0 {
        return Err(r.err("switch.deadlock_after", "must be positive"));
    }
    Ok(SwitchKind::Cioq(CioqConfig {
        ingress,
        ingress_buffer,
        flow_control,
        xoff,
        xon,
        max_frame: 0,
        deadlock_after,
    }))
}

pub(super) fn route_from_value(
    v: &Value,
    i: usize,
    shape: &Shape,
    linked: &std::collections::HashSet<(u32, u32)>,
) -> Result<RouteSpec, ScenarioError> {
    let key = format!("switch.routes[{i}]");
    let Value::Table(t) = v else {
        return Err(ScenarioError::new(
            &key,
            v,
            "expected a table {at, to, via, weights}",
        ));
    };
    let field = |k: &str| (format!("{key}.{k}"), t.get(k));
    for k in t.keys() {
        if !["at", "to", "via", "weights"].contains(&k.as_str()) {
            return Err(ScenarioError::new(
                &format!("{key}.{k}"),
                &t[k],
                "unknown field (expected at, to, via, weights)",
            ));
        }
    }
    let hosts = shape.host_count();
    let node = |k: &str, x: &Value| -> Result<u32, ScenarioError> {
        let found = match x {
            Value::String(name) => shape.node_named(name),
            Value::Integer(n) if *n >= 0 && (*n as u64) < shape.node_count() as u64 => {
                Some(*n as u32)
            }
            _ => None,
        };
        found.ok_or_else(|| {
            ScenarioError::new(
                k,
                x,
                format!(
                    "not a node of this topology (names like {} and {})",
                    shape.node_name(0),
                    shape.node_name(hosts)
                ),
            )
        })
    };
    let (k, at) = field("at");
    let at = node(&k, at.ok_or_else(|| ScenarioError::new(&k, "", "missing"))?)?;
    if at < hosts {
        return Err(ScenarioError::new(
            &k,
            &t["at"],
            "must be a switch; hosts do not forward",
        ));
    }
    let list = |k: &str, x: Option<&Value>| -> Result<Vec<Value>, ScenarioError> {
        match x {
            None => Ok(Vec::new()),
            Some(Value::Array(a)) if !a.is_empty() => Ok(a.clone()),
            Some(x) => Err(ScenarioError::new(k, x, "expected a non-empty list")),
        }
    };
    let (k, to) = field("to");
    let mut dsts = Vec::new();
    for x in list(&k, to)? {
        match x {
            Value::Integer(h) if h >= 0 && (h as u64) < hosts as u64 => dsts.push(h as u32),
            _ => {
                return Err(ScenarioError::new(
                    &k,
                    &x,
                    format!("not a host index (the topology has hosts 0..{})", hosts - 1),
                ))
            }
        }
    }
    let (k, via) = field("via");
    if via.is_none() {
        return Err(ScenarioError::new(
            &k,
            "",
            "missing: the neighbours to forward to",
        ));
    }
    let via_values = list(&k, via)?;
    let via = via_values
        .iter()
        .map(|x| node(&k, x))
        .collect::<Result<Vec<_>, _>>()?;
    for (x, &v) in via_values.iter().zip(&via) {
        if !linked.contains(&(at, v)) {
            return Err(ScenarioError::new(
                &k,
                x,
                format!(
                    "{} is not linked to {}",
                    shape.node_name(v),
                    shape.node_name(at)
                ),
            ));
        }
        // A host only receives: forwarding to one is right only for its own packets.
        if v < hosts && (dsts.is_empty() || dsts.iter().any(|&d| d != v)) {
            return Err(ScenarioError::new(
                &k,
                x,
                format!(
                    "{} is a host, and hosts do not forward: `to` may name only it",
                    shape.node_name(v)
                ),
            ));
        }
    }
    let (k, w) = field("weights");
    let weights = match w {
        None => None,
        Some(x) => {
            let ws = list(&k, Some(x))?
                .iter()
                .map(|w| match w {
                    Value::Float(f) if *f >= 0.0 && f.is_finite() => Ok(*f),
                    Value::Integer(n) if *n >= 0 => Ok(*n as f64),
                    _ => Err(ScenarioError::new(
                        &k,
                        w,
                        "weights are non-negative numbers",
                    )),
                })
                .collect::<Result<Vec<_>, _>>()?;
            if ws.len() != via.len() {
                return Err(ScenarioError::new(
                    &k,
                    x,
                    format!("needs one weight per `via` entry ({})", via.len()),
                ));
            }
            let sum: f64 = ws.iter().sum();
            if sum <= 0.0 || !sum.is_finite() {
                return Err(ScenarioError::new(
                    &k,
                    x,
                    "at least one weight must be positive, and their sum finite",
                ));
            }
            Some(ws)
        }
    };
    Ok(RouteSpec {
        at,
        to: dsts,
        via,
        weights,
    })
}

impl Reader<'_> {
    /// `switch.alb_thresholds`: one to four sizes, strictly ascending.
    fn alb_tiers(&mut self) -> Result<Tiers, ScenarioError> {
        const KEY: &str = "switch.alb_thresholds";
        let Some(v) = self.raw(KEY) else {
            let t = Tiers::DETAIL;
            self.record(
                KEY,
                Value::Array(vec![
                    Value::String(units::format_size(16 << 10)),
                    Value::String(units::format_size(64 << 10)),
                ]),
            );
            return Ok(t);
        };
        let bad = |why: &str| ScenarioError::new(KEY, v, why);
        let Value::Array(a) = v else {
            return Err(bad("expected a list of sizes, like [\"16KB\", \"64KB\"]"));
        };
        if a.is_empty() || a.len() > MAX_THRESHOLDS {
            return Err(bad("one to four thresholds"));
        }
        let mut sizes = Vec::with_capacity(a.len());
        for x in a {
            let s = match x {
                Value::String(s) => units::parse_size(s).ok(),
                Value::Integer(n) if *n >= 0 => Some(*n as u64),
                _ => None,
            };
            match s {
                Some(s) if s > 0 && s <= units::MAX_SIZE => sizes.push(s),
                _ => return Err(ScenarioError::new(KEY, x, "not a positive size")),
            }
        }
        if !sizes.windows(2).all(|w| w[0] < w[1]) {
            return Err(bad("thresholds must ascend"));
        }
        self.record(
            KEY,
            Value::Array(
                sizes
                    .iter()
                    .map(|&s| Value::String(units::format_size(s)))
                    .collect(),
            ),
        );
        Ok(Tiers::new(&sizes))
    }

    pub(super) fn routes(&mut self, shape: &Shape) -> Result<Vec<RouteSpec>, ScenarioError> {
        const KEY: &str = "switch.routes";
        let Some(v) = self.raw(KEY) else {
            return Ok(Vec::new());
        };
        let Value::Array(a) = v else {
            return Err(ScenarioError::new(
                KEY,
                v,
                "expected [[switch.routes]] tables",
            ));
        };
        let linked = shape.neighbours();
        let routes = a
            .iter()
            .enumerate()
            .map(|(i, t)| route_from_value(t, i, shape, &linked))
            .collect::<Result<Vec<_>, _>>()?;
        self.record(KEY, v.clone());
        Ok(routes)
    }
}
