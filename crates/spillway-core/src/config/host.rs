//! `[host]`: the NIC and the receive path.

use super::error::ScenarioError;
use super::reader::Reader;
use super::switch::{QueueKind, SwitchSpec};
use crate::units::Ps;

#[derive(Debug, Clone)]
pub struct HostSpec {
    pub nic_buffer: Option<u64>,
    pub nic_flow_limit: Option<u64>,
    /// `host.nic_drop = "local"`: the host's own NIC refusing a segment tells its sender.
    pub nic_drop_local: bool,
    pub proc_parallel: u32,
    pub proc_time: Ps,
    pub rx_jitter: Ps,
    pub rx_coalesce: Ps,
    pub gro: bool,
}

pub(super) fn read_host(r: &mut Reader, switch: &SwitchSpec) -> Result<HostSpec, ScenarioError> {
    let host = HostSpec {
        nic_buffer: r.opt_size("host.nic_buffer")?,
        nic_flow_limit: r.opt_uint("host.nic_flow_limit", 1)?,
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
        proc_parallel: r.uint("host.proc_parallel", 1, 1 << 20)? as u32,
        proc_time: r.time("host.proc_time")?,
        rx_jitter: r.time("host.rx_jitter")?,
        rx_coalesce: r.time("host.rx_coalesce")?,
        gro: r.bool("host.gro")?,
    };
    if host.gro && host.rx_coalesce == 0 {
        return Err(r.err(
            "host.gro",
            "merges the segments of one interrupt's batch: set host.rx_coalesce too",
        ));
    }
    Ok(host)
}
