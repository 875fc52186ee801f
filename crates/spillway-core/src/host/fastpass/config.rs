//! `[fastpass]`, as the Fastpass endpoints and arbiters take it (read once by
//! config/fastpass.rs).

use crate::units::Ps;
pub use spillway_arbiter::Policy;

/// How FCP messages travel (`fastpass.control`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// As class-0 packets through the fabric.
    Network,
    /// Off the network, each after this one-way delay.
    Ideal(Ps),
}

/// `[fastpass]`, read once.
#[derive(Debug, Clone)]
pub struct FastpassConfig {
    /// The primary arbiter's host.
    pub arbiter: u32,
    /// The arbiters' host link rate.
    pub arbiter_link_rate: u64,
    /// The least rate of the links from the arbiters' switches to other switches.
    pub arbiter_uplink_rate: u64,
    /// A secondary arbiter's host.
    pub secondary: Option<u32>,
    /// The primary stops at this time.
    pub fail_at: Option<Ps>,
    pub lead: Ps,
    /// Timeslots per allocation batch (1..=64).
    pub batch: u32,
    pub processing: Ps,
    pub policy: Policy,
    pub control: Control,
    /// Probability that an FCP message is lost as it is sent.
    pub control_loss: f64,
    /// Share of each timeslot left idle for unscheduled traffic.
    pub control_reserve: f64,
    pub jitter: Ps,
    pub report_interval: Ps,
    pub retransmit: Ps,
    pub late_threshold: Ps,
    pub watchdog: Ps,
    pub takeover: Ps,
}

impl FastpassConfig {
    /// The hosts that run arbiters, primary first: they take no part in the workload.
    pub fn arbiter_hosts(&self) -> Vec<u32> {
        std::iter::once(self.arbiter)
            .chain(self.secondary)
            .collect()
    }
}
