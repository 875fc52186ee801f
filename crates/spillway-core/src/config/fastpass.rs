//! `[fastpass]`: the arbiters and the endpoints' protocol timing (with `host.qdisc =
//! "fastpass"`). What Fastpass needs of the rest of the scenario is checked here too: a
//! topology the arbiter can model (§3: each tier abstracted as one switch), fixed paths
//! it can pin (ECMP, no route overrides).

use super::error::ScenarioError;
use super::reader::Reader;
use crate::fabric::routes::RouteSpec;
use crate::fabric::topology::{Shape, TopologySpec};
use crate::host::fastpass::config::{Control, FastpassConfig, Policy};
use crate::host::fastpass::paths;
use crate::switch::forwarding::Forwarding;
use crate::switch::SwitchConfig;

/// Every `[fastpass]` key but `arbiter`, for the refusal of a section that does nothing.
const KEYS: &[&str] = &[
    "fastpass.arbiter",
    "fastpass.secondary",
    "fastpass.arbiter_link_rate",
    "fastpass.arbiter_uplink_rate",
    "fastpass.fail_at",
    "fastpass.lead",
    "fastpass.batch",
    "fastpass.processing",
    "fastpass.policy",
    "fastpass.control",
    "fastpass.control_delay",
    "fastpass.control_loss",
    "fastpass.control_reserve",
    "fastpass.jitter",
    "fastpass.report_interval",
    "fastpass.retransmit",
    "fastpass.late_threshold",
    "fastpass.watchdog",
    "fastpass.takeover",
];

/// `[fastpass]` when `host.qdisc = "fastpass"` (`on`); a key given without it is refused.
pub(super) fn read_fastpass(
    r: &mut Reader,
    on: bool,
    nic_drop_local: bool,
    topology: &TopologySpec,
    switch: &SwitchConfig,
    routes: &[RouteSpec],
) -> Result<Option<FastpassConfig>, ScenarioError> {
    if !on {
        if let Some(k) = KEYS.iter().find(|k| r.raw(k).is_some()) {
            return Err(r.err(k, "applies only with host.qdisc = \"fastpass\""));
        }
        return Ok(None);
    }
    let hosts = topology.shape.host_count();
    let host = |r: &mut Reader, key: &'static str| -> Result<Option<u32>, ScenarioError> {
        match r.opt_uint(key, 0)? {
            Some(h) if h >= hosts as u64 => Err(r.err_value(
                key,
                h,
                format!("no such host: the topology has hosts 0..{}", hosts - 1),
            )),
            h => Ok(h.map(|h| h as u32)),
        }
    };
    let Some(arbiter) = host(r, "fastpass.arbiter")? else {
        return Err(r.err(
            "fastpass.arbiter",
            "host.qdisc = \"fastpass\" needs an arbiter: set fastpass.arbiter to the host that runs it",
        ));
    };
    let secondary = host(r, "fastpass.secondary")?;
    if secondary == Some(arbiter) {
        return Err(r.err(
            "fastpass.secondary",
            "is the primary's host: a secondary runs on another host",
        ));
    }
    let reserved = 1 + secondary.is_some() as u32;
    if hosts < reserved + 2 {
        return Err(r.err_value(
            "fastpass.arbiter",
            arbiter,
            format!("leaves fewer than two hosts for the workload ({hosts} hosts in all)"),
        ));
    }
    if topology.fabric_rate < topology.link_rate && !matches!(topology.shape, Shape::Star { .. }) {
        return Err(ScenarioError::new(
            "topology.fabric_rate",
            crate::units::format_rate(topology.fabric_rate),
            "Fastpass allocates in host-link timeslots: switch-to-switch links must be at least \
             as fast as host links",
        ));
    }
    if switch.forwarding != Forwarding::Ecmp {
        return Err(r.err(
            "switch.forwarding",
            "Fastpass pins each packet to the path its arbiter chose (§4), which needs fixed \
             per-packet paths: set switch.forwarding = \"ecmp\"",
        ));
    }
    if !routes.is_empty() {
        return Err(r.err(
            "switch.routes",
            "Fastpass's arbiter chooses every packet's path from the topology (§4): route \
             overrides would take packets off them",
        ));
    }
    if nic_drop_local {
        return Err(r.err(
            "host.nic_drop",
            "\"local\" hands a refused segment back to its sender as it is sent; under Fastpass \
             packets reach the NIC later, in their timeslots: use \"loss\"",
        ));
    }
    // The arbiter's model of this topology (§3, §4): refused here, not mid-run.
    paths::build(&topology.shape, topology.link_rate, topology.fabric_rate)
        .map_err(|m| ScenarioError::new("topology.kind", &topology.kind, m))?;
    let batch = r.uint("fastpass.batch", 1, spillway_arbiter::MAX_WIDTH as u64)? as u32;
    let control = match r.choice("fastpass.control")? {
        "ideal" => Control::Ideal(r.time("fastpass.control_delay")?),
        _ => {
            if r.raw("fastpass.control_delay").is_some() {
                return Err(r.err(
                    "fastpass.control_delay",
                    "applies only with fastpass.control = \"ideal\"",
                ));
            }
            Control::Network
        }
    };
    let policy = match r.choice("fastpass.policy")? {
        "min_fct" => Policy::MinFct,
        _ => Policy::MaxMin,
    };
    let arbiter_link_rate = match r.opt_rate("fastpass.arbiter_link_rate")? {
        Some(rate) => rate,
        None => {
            let rate = match topology.shape {
                Shape::Star { .. } => topology.link_rate,
                _ => topology.fabric_rate,
            };
            r.record(
                "fastpass.arbiter_link_rate",
                toml::Value::String(crate::units::format_rate(rate)),
            );
            rate
        }
    };
    // §2: a large cluster's arbiter has high-speed ports into the network, not into its
    // rack alone: every message between it and another rack crosses its switch's links
    // up, beside the data it schedules there for its rack's other hosts. By default they
    // are as fast as its own link.
    let arbiter_uplink_rate = match r.opt_rate("fastpass.arbiter_uplink_rate")? {
        Some(rate) => rate,
        None => {
            r.record(
                "fastpass.arbiter_uplink_rate",
                toml::Value::String(crate::units::format_rate(arbiter_link_rate)),
            );
            arbiter_link_rate
        }
    };
    let cfg = FastpassConfig {
        arbiter,
        arbiter_link_rate,
        arbiter_uplink_rate,
        secondary,
        fail_at: r.opt_time("fastpass.fail_at")?,
        lead: r.time("fastpass.lead")?,
        batch,
        processing: r.time("fastpass.processing")?,
        policy,
        control,
        control_loss: r.float_in("fastpass.control_loss", -1.0, 1.0)?,
        control_reserve: r.float_in("fastpass.control_reserve", -1.0, 1.0)?,
        jitter: r.time("fastpass.jitter")?,
        report_interval: r.time("fastpass.report_interval")?,
        retransmit: r.time("fastpass.retransmit")?,
        late_threshold: r.time("fastpass.late_threshold")?,
        watchdog: r.time("fastpass.watchdog")?,
        takeover: r.time("fastpass.takeover")?,
    };
    if cfg.control_loss >= 1.0 {
        return Err(r.err(
            "fastpass.control_loss",
            "must be below 1: nothing would ever get through",
        ));
    }
    for (key, t) in [
        ("fastpass.watchdog", cfg.watchdog),
        ("fastpass.retransmit", cfg.retransmit),
    ] {
        if t == 0 {
            return Err(r.err(key, "must be positive"));
        }
    }
    if cfg.takeover <= cfg.watchdog {
        return Err(r.err(
            "fastpass.takeover",
            "must exceed fastpass.watchdog, or a secondary would take over from a live primary",
        ));
    }
    Ok(Some(cfg))
}
