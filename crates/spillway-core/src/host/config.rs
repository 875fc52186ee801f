//! `[host]`, as the hosts take it (read once by config/host.rs).

use super::fastpass::config::FastpassConfig;
use crate::switch::discipline::pfabric::ServeOrder;
use crate::units::Ps;

/// `[host]`, read once (config/host.rs).
#[derive(Debug, Clone)]
pub struct HostConfig {
    pub nic_buffer: Option<u64>,
    pub nic_flow_limit: Option<u64>,
    /// `host.nic_drop = "local"`: the host's own NIC refusing a segment tells its sender.
    pub nic_drop_local: bool,
    /// The NIC queues by pFabric's priority, as the switches do (`switch.queue =
    /// "pfabric"`: pFabric §4.1 puts the same queue at the host), in the switches'
    /// serve order (`switch.serve_order`).
    pub nic_pfabric: Option<ServeOrder>,
    /// Flows' own priority classes go on their packets (`switch.priorities`); else every
    /// flow's packets take the transport's classes.
    pub priorities: bool,
    pub proc_parallel: u32,
    pub proc_time: Ps,
    pub rx_jitter: Ps,
    pub rx_coalesce: Ps,
    pub gro: bool,
    /// `host.qdisc = "fastpass"`: the endpoints' queues and the arbiters (`[fastpass]`).
    pub fastpass: Option<FastpassConfig>,
}
