//! `[transport]`: the transport and its TCP settings.

use super::error::ScenarioError;
use super::reader::Reader;
use crate::fabric::topology::{Shape, TopologySpec};
use crate::packet::wire::wire_bytes;
use crate::transport::cc::kinds::CcKind;
use crate::transport::roce::{DcqcnConfig, HpccConfig, RoceCc, RoceConfig, RoceDctcpConfig};
use crate::transport::tcp::config::{PriorityMode, TcpConfig};
use crate::transport::tcp::fastlane::NotifyMode;
use crate::transport::turbo::{OnTimeout, TurboConfig};
use crate::transport::TransportConfig;
use crate::units::{self, Ps};
use toml::Value;

/// One BDP of the longest host-to-host path, in segments: the base RTT (a full data
/// packet out and an ACK back, store-and-forward, no queueing) times the host link rate.
pub(super) fn bdp_segments(t: &TopologySpec, mss: u32, header: u32) -> u32 {
    let data = wire_bytes(mss + header, t.framing_bytes) as u64;
    let ack = wire_bytes(header, t.framing_bytes) as u64;
    let rtt = base_rtt(t, data, ack);
    let bdp_bytes = (t.link_rate as u128 * rtt as u128 / (8 * units::PS_PER_S as u128)) as u64;
    // In full-size packets as they are on the wire (Turbo §5: "one BDP number of
    // packets, or 4" on this topology), not in payload bytes per MSS.
    bdp_bytes.div_ceil(data).max(1) as u32
}

/// The longest host-to-host base round trip: a `data`-byte frame out and an `ack`-byte
/// frame back, store-and-forward, no queueing.
pub(super) fn base_rtt(t: &TopologySpec, data: u64, ack: u64) -> Ps {
    let (lr, ld, fr, fd) = (t.link_rate, t.link_delay, t.fabric_rate, t.fabric_delay);
    let fabric_hops = fabric_hops(t);
    let one_way = |bytes: u64| {
        2 * (units::serialization_ps(bytes, lr) + ld)
            + fabric_hops * (units::serialization_ps(bytes, fr) + fd)
    };
    one_way(data) + one_way(ack)
}

/// Switch-to-switch links on the longest host-to-host path.
pub(super) fn fabric_hops(t: &TopologySpec) -> u64 {
    match t.shape {
        Shape::Star { .. } => 0,
        Shape::Dumbbell { .. } => 1,
        Shape::LeafSpine { racks, .. } => {
            if racks > 1 {
                2
            } else {
                0
            }
        }
        Shape::FatTree { .. } => 4,
        Shape::Graph(ref g) => g.fabric_hops() as u64,
        // Rack, fabric switch, spine, fabric switch, rack between pods.
        Shape::Clos {
            pods,
            racks_per_pod,
            ..
        } => {
            if pods > 1 {
                4
            } else if racks_per_pod > 1 {
                2
            } else {
                0
            }
        }
    }
}

/// `[transport]` into the transport's own settings.
/// `reorder_tolerant`: the switches spread a flow's packets adaptively (DeTail's ALB), so
/// the duplicate-ACK threshold defaults to `off`.
/// `transport.rto_min` under Fastpass: Linux's.
const FASTPASS_RTO_MIN: crate::units::Ps = 200_000_000_000;

pub(super) fn read_transport(
    r: &mut Reader,
    topo: &TopologySpec,
    reorder_tolerant: bool,
) -> Result<TransportConfig, ScenarioError> {
    let kind = r.choice("transport.kind")?;
    let pfabric = kind == "pfabric";
    let mss = r.uint("transport.mss", 64, 9_000)? as u32;
    let rto_min = if super::host::wants_fastpass(r)
        && r.raw("transport.rto_min").is_none()
        && matches!(kind, "tcp" | "cubic" | "dctcp")
    {
        // Fastpass §6.1 runs Linux's TCP unmodified: its 200 ms minimum timeout. Data
        // waits in the endpoint queues for the arbiter (a round trip plus the 65 us
        // lead, and a fair share of a busy destination), which a 1 ms minimum would
        // take for loss and send again.
        r.record("transport.rto_min", toml::Value::String("200ms".into()));
        FASTPASS_RTO_MIN
    } else {
        r.time("transport.rto_min")?
    };
    if rto_min == 0 {
        return Err(r.err("transport.rto_min", "must be positive"));
    }
    if kind == "turbo" {
        return read_turbo(r, mss, rto_min);
    }
    if kind == "roce" {
        return read_roce(r, topo, mss, rto_min);
    }
    let rto_init = r.opt_time_derived("transport.rto_init")?.unwrap_or(rto_min);
    r.record(
        "transport.rto_init",
        Value::String(units::format_time(rto_init)),
    );
    let rto_max = r.time("transport.rto_max")?;
    if rto_max < rto_min {
        return Err(r.err("transport.rto_max", "must not be below transport.rto_min"));
    }
    let rwnd = r.size("transport.rwnd")?;
    if rwnd < mss as u64 {
        return Err(r.err(
            "transport.rwnd",
            "must hold at least one segment (transport.mss)",
        ));
    }
    let header_bytes = r.uint("transport.header_bytes", 0, 1000)? as u32;
    let init_cwnd = if pfabric && r.raw("transport.init_cwnd").is_none() {
        // pFabric §4.3: start at line rate.
        let w = bdp_segments(topo, mss, header_bytes);
        r.record("transport.init_cwnd", Value::Integer(w as i64));
        w
    } else {
        r.uint("transport.init_cwnd", 1, 1 << 20)? as u32
    };
    let max_cwnd = match (pfabric)
        .then(|| r.opt_uint("transport.max_cwnd", 1))
        .transpose()?
        .flatten()
    {
        Some(m) => {
            if m < init_cwnd as u64 {
                return Err(r.err(
                    "transport.max_cwnd",
                    "must not be below transport.init_cwnd",
                ));
            }
            Some(m.min(u32::MAX as u64) as u32)
        }
        None if pfabric && r.raw("transport.max_cwnd").is_none() => {
            let m = 2 * init_cwnd;
            r.record("transport.max_cwnd", Value::Integer(m as i64));
            Some(m)
        }
        None => None,
    };
    let (priority, probe_after) = if pfabric {
        let p = match r.choice("transport.priority")? {
            "flow_size" => PriorityMode::FlowSize,
            _ => PriorityMode::Remaining,
        };
        (p, r.opt_uint("transport.probe_after", 1)?.map(|v| v as u32))
    } else {
        (PriorityMode::Remaining, None)
    };
    Ok(TransportConfig::Tcp(TcpConfig {
        mss,
        init_cwnd,
        rwnd,
        per_ack_increase: r.choice("transport.cwnd_increase")? == "acks",
        cwnd_limited: r.bool("transport.cwnd_limited")?,
        ssthresh_from_cwnd: r.choice("transport.ssthresh_from")? == "cwnd",
        rto_min,
        rto_init,
        rto_max,
        dupthresh: if reorder_tolerant && r.raw("transport.dupack_threshold").is_none() {
            // DeTail §4.2: with packets spread adaptively, reordering is normal and no
            // sign of loss (the network does not drop): no fast retransmit.
            r.record("transport.dupack_threshold", Value::String("off".into()));
            None
        } else {
            r.opt_uint("transport.dupack_threshold", 1)?
                .map(|v| v as u32)
        },
        max_reordering: r
            .opt_uint("transport.max_reordering", 1)?
            .map(|v| v.min(u32::MAX as u64) as u32),
        tso_defer: r.opt_time("transport.tso_defer")?,
        undo: r.bool("transport.undo")?,
        delayed_ack: r.opt_time("transport.delayed_ack")?,
        lost_retransmit: r.bool("transport.lost_retransmit")?,
        data_class: r.uint("transport.data_class", 0, 7)? as u8,
        ack_class: r.uint("transport.ack_class", 0, 7)? as u8,
        ecn: r.bool("transport.ecn")?,
        ooo_option: r.bool("transport.ooo_option")?,
        priority,
        probe_after,
        rearm_rto: r.bool("transport.rearm_rto")?,
        cc: match kind {
            "pfabric" => CcKind::PFabric {
                max_cwnd: max_cwnd.map_or(u64::MAX, |m| m as u64 * mss as u64),
            },
            "dctcp" => CcKind::Dctcp {
                g: r.float_in("transport.dctcp_g", 0.0, 1.0)?,
            },
            "cubic" => CcKind::Cubic,
            _ => CcKind::NewReno,
        },
        cp: r.bool("transport.cp")?,
        header_bytes,
        // pFabric: a small fixed timeout (pFabric §4.3); its notifications ask for a
        // probe first (FastLane §3.4.2).
        fixed_rto: pfabric,
        notify: if pfabric {
            NotifyMode::Probe
        } else {
            NotifyMode::Tcp
        },
    }))
}

/// `[transport]` with `kind = "turbo"`: the variant's preset, then the keys that override
/// it.
fn read_turbo(r: &mut Reader, mss: u32, rto: u64) -> Result<TransportConfig, ScenarioError> {
    // (timeouts, on_timeout, probe_spacing) of T1..T4 (Turbo §4.2).
    let preset = match r.choice("transport.turbo_variant")? {
        "t1" => ("flow", "inflate", "none"),
        "t2" => ("flow", "stop", "none"),
        "t3" => ("packet", "inflate", "none"),
        _ => ("packet", "inflate", "rto"),
    };
    let per_packet = r.choice_or("transport.turbo_timeouts", preset.0)? == "packet";
    let on_timeout = match r.choice_or("transport.turbo_on_timeout", preset.1)? {
        "stop" => OnTimeout::Stop,
        _ => OnTimeout::Inflate,
    };
    let probe_spacing = r.choice_or("transport.turbo_probe_spacing", preset.2)? == "rto";
    Ok(TransportConfig::Turbo(TurboConfig {
        mss,
        header_bytes: r.uint("transport.header_bytes", 0, 1000)? as u32,
        rto,
        per_packet,
        on_timeout,
        probe_spacing,
        ack_deflates: r.bool("transport.turbo_ack_deflates")?,
        data_class: r.uint("transport.data_class", 0, 7)? as u8,
        ack_class: r.uint("transport.ack_class", 0, 7)? as u8,
    }))
}

/// RoCE (`transport.kind = "roce"`) and its congestion control (`transport.cc`).
fn read_roce(
    r: &mut Reader,
    topo: &TopologySpec,
    mss: u32,
    timeout: Ps,
) -> Result<TransportConfig, ScenarioError> {
    let header_bytes = r.uint("transport.header_bytes", 0, 1000)? as u32;
    let line = topo.link_rate;
    // Per 25 Gbit/s of the hosts' rate, as the HPCC simulator's run.py scales them.
    let per_25g = |r: &mut Reader, key: &'static str, mbps: u64| -> Result<f64, ScenarioError> {
        Ok(match r.opt_rate(key)? {
            Some(v) => v as f64,
            None => {
                let v = (line as u128 * mbps as u128 / 25_000) as u64;
                r.record(key, Value::String(units::format_rate(v.max(1))));
                v.max(1) as f64
            }
        })
    };
    let cc_name = r.choice("transport.cc")?;
    let cc = match cc_name {
        "none" => RoceCc::None,
        "dcqcn" => {
            let positive = |r: &mut Reader, key: &'static str| -> Result<Ps, ScenarioError> {
                let t = r.time(key)?;
                if t == 0 {
                    return Err(r.err(key, "must be positive"));
                }
                Ok(t)
            };
            RoceCc::Dcqcn(DcqcnConfig {
                g: r.float_in("transport.dcqcn_g", 0.0, 1.0)?,
                alpha_interval: positive(r, "transport.dcqcn_alpha_interval")?,
                decrease_interval: positive(r, "transport.dcqcn_decrease_interval")?,
                increase_interval: positive(r, "transport.dcqcn_increase_interval")?,
                fast_recovery: r.uint("transport.dcqcn_fast_recovery", 0, 1000)? as u32,
                rate_ai: per_25g(r, "transport.dcqcn_rate_ai", 5)?,
                rate_hai: per_25g(r, "transport.dcqcn_rate_hai", 50)?,
                clamp_target: r.bool("transport.dcqcn_clamp_target")?,
                cnp_interval: r.time("transport.dcqcn_cnp_interval")?,
            })
        }
        "hpcc" => {
            let eta = r.float_in("transport.hpcc_eta", 0.0, 1.0)?;
            if eta <= 0.0 {
                return Err(r.err("transport.hpcc_eta", "must be above 0"));
            }
            RoceCc::Hpcc(HpccConfig {
                eta,
                max_stage: r.uint("transport.hpcc_max_stage", 0, 1 << 20)? as u32,
                rate_ai: r.rate("transport.hpcc_rate_ai")? as f64,
                fast_react: r.bool("transport.hpcc_fast_react")?,
            })
        }
        _ => RoceCc::Dctcp(RoceDctcpConfig {
            g: r.float_in("transport.dctcp_g", 0.0, 1.0)?,
            rate_ai: r.rate("transport.dctcp_rate_ai")? as f64,
        }),
    };
    let window = match r.raw("transport.roce_window") {
        Some(_) => r.bool("transport.roce_window")?,
        None => {
            let w = matches!(cc, RoceCc::Hpcc(_) | RoceCc::Dctcp(_));
            r.record("transport.roce_window", Value::Boolean(w));
            w
        }
    };
    let int = if matches!(cc, RoceCc::Hpcc(_)) {
        crate::packet::int::INT_HEADER_BYTES
    } else {
        0
    };
    let base_rtt = match r.opt_time_derived("transport.base_rtt")? {
        Some(0) => return Err(r.err("transport.base_rtt", "must be positive")),
        Some(t) => t,
        None => {
            let data = wire_bytes(mss + header_bytes + int, topo.framing_bytes) as u64;
            let ack = wire_bytes(header_bytes + int, topo.framing_bytes) as u64;
            let t = base_rtt(topo, data, ack);
            r.record("transport.base_rtt", Value::String(units::format_time(t)));
            t
        }
    };
    if timeout <= base_rtt {
        // Every packet would time out before its ACK could return: go-back-N would resend
        // the pipe each timeout, for ever.
        return Err(r.err(
            "transport.rto_min",
            format!(
                "RoCE's fixed timeout must exceed the fabric's base round trip ({}, \
                 transport.base_rtt)",
                units::format_time(base_rtt)
            ),
        ));
    }
    let min_rate = r.rate("transport.roce_min_rate")?;
    if min_rate > line {
        return Err(r.err(
            "transport.roce_min_rate",
            format!(
                "is above the hosts' rate (topology.link_rate = {})",
                units::format_rate(line)
            ),
        ));
    }
    Ok(TransportConfig::Roce(RoceConfig {
        mss,
        header_bytes,
        framing: topo.framing_bytes,
        line_rate: line,
        base_rtt,
        window,
        min_rate: min_rate as f64,
        timeout,
        nack_interval: r.time("transport.nack_interval")?,
        cc,
        data_class: r.uint("transport.data_class", 0, 7)? as u8,
        ack_class: r.uint("transport.ack_class", 0, 7)? as u8,
    }))
}
