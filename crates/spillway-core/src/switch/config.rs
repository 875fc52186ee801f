//! `[switch]`, as the switches take it (read once by config/switch.rs).

use super::forwarding::Forwarding;
use super::marking::codel::CodelConfig;
use super::overflow::fastlane::FastLaneConfig;
use super::overflow::Overflow;
use crate::fabric::SwitchTiming;

/// `switch.queue`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueKind {
    DropTail,
    PFabric,
}

/// `[switch]`, read once (config/switch.rs).
#[derive(Debug, Clone)]
pub struct SwitchConfig {
    pub buffer: u64,
    /// Buffer of host-facing switch ports.
    pub edge_buffer: u64,
    /// Buffer of the top tier's ports.
    pub spine_buffer: u64,
    /// DCTCP-style marking threshold K, when `switch.ecn = "threshold"`.
    pub ecn_threshold: Option<u64>,
    /// CP's extra allowance for payload-cut packets and PACKs.
    pub cut_extra: u64,
    pub forwarding: Forwarding,
    pub queue: QueueKind,
    pub overflow: Overflow,
    pub fastlane: FastLaneConfig,
    /// CoDel marking, when `switch.ecn = "codel"`.
    pub codel: Option<CodelConfig>,
    /// Forwarding delay and crossbar speedup (the fabric's timing).
    pub timing: SwitchTiming,
}
