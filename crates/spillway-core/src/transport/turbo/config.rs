//! Turbo's settings: one struct, read once from `[transport]` (config/transport.rs) and
//! handed to each connection.

use crate::units::Ps;

/// What a flow does when a timeout says its packets are being dropped (Turbo §4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnTimeout {
    /// Cliff inflation: the flow's later packets rank below every uninflated packet
    /// until a probe (or, with `ack_deflates`, a new cumulative ACK) shows the path is
    /// clear.
    Inflate,
    /// Stop-on-timeout: no data until a probe echo or a new ACK; then resume from the
    /// first hole at the true priority.
    Stop,
}

/// Turbo's settings (`[transport]` with `kind = "turbo"`), read once.
#[derive(Debug, Clone)]
pub struct TurboConfig {
    pub mss: u32,
    /// IP + TCP header bytes: a probe's and an ACK's whole size (Turbo §4(4): 40 B).
    pub header_bytes: u32,
    /// The fixed timeout (Turbo §5.2: 9.5 us on pFabric's topology).
    pub rto: Ps,
    /// A deadline per packet (T3, T4) instead of one per flow (T1, T2).
    pub per_packet: bool,
    pub on_timeout: OnTimeout,
    /// Probes at least one RTO apart (T4's guard).
    pub probe_spacing: bool,
    /// A new cumulative ACK ends the inflation too, not only a probe's echo.
    pub ack_deflates: bool,
    pub data_class: u8,
    pub ack_class: u8,
}

/// The inflated priority's base (§4.2 uses INT_MAX/2): above any remaining size a flow
/// can have (sizes are below 2^62 bytes), so every inflated packet ranks below every
/// uninflated one, and inflated flows still rank among themselves by remaining size.
pub const CLIFF: u64 = 1 << 62;
