//! `[host]`: the NIC and the receive path.

use super::error::ScenarioError;
use super::reader::Reader;
use crate::host::HostConfig;
use crate::switch::{QueueKind, SwitchConfig};

/// `host.nic_flow_limit`'s default under Fastpass: 128 KB of 1500-byte segments.
const FASTPASS_TSQ_SEGMENTS: u64 = 87;

/// Whether `host.qdisc = "fastpass"` (its section is read later, by config/fastpass.rs).
pub(super) fn wants_fastpass(r: &Reader) -> bool {
    r.raw("host.qdisc").and_then(|v| v.as_str()) == Some("fastpass")
}

pub(super) fn read_host(
    r: &mut Reader,
    switch: &SwitchConfig,
) -> Result<HostConfig, ScenarioError> {
    let fastpass = r.choice("host.qdisc")? == "fastpass";
    let nic_flow_limit = if fastpass && r.raw("host.nic_flow_limit").is_none() {
        // The Fastpass kernel's TSQ limit, 128 KB, in full-size segments (keys.rs).
        r.record(
            "host.nic_flow_limit",
            toml::Value::Integer(FASTPASS_TSQ_SEGMENTS as i64),
        );
        Some(FASTPASS_TSQ_SEGMENTS)
    } else {
        r.opt_uint("host.nic_flow_limit", 1)?
    };
    let host = HostConfig {
        nic_buffer: r.opt_size("host.nic_buffer")?,
        nic_flow_limit,
        nic_drop_local: {
            let local = r.choice("host.nic_drop")? == "local";
            if local && switch.queue == QueueKind::PFabric {
                // pFabric's NIC evicts queued packets of other flows, which the
                // refusal protocol (a flow takes back what its NIC refused) cannot say.
                return Err(r.err(
                    "host.nic_drop",
                    "\"local\" is for drop-tail NICs; with switch.queue = \"pfabric\" the NIC \
                     evicts by priority, and an evicted packet is a loss",
                ));
            }
            local
        },
        nic_pfabric: (switch.queue == QueueKind::PFabric).then_some(switch.serve_order),
        priorities: r.bool("switch.priorities")?,
        proc_parallel: r.uint("host.proc_parallel", 1, 1 << 20)? as u32,
        proc_time: r.time("host.proc_time")?,
        rx_jitter: r.time("host.rx_jitter")?,
        rx_coalesce: r.time("host.rx_coalesce")?,
        gro: r.bool("host.gro")?,
        // Read with the transport known (config/fastpass.rs); this marks it wanted.
        fastpass: None,
    };
    if host.gro && host.rx_coalesce == 0 {
        return Err(r.err(
            "host.gro",
            "merges the segments of one interrupt's batch: set host.rx_coalesce too",
        ));
    }
    Ok(host)
}
