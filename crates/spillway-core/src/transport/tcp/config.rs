//! TCP's settings: one struct, read once from `[transport]` (config/transport.rs) and
//! handed to each connection.

use super::fastlane::NotifyMode;
use crate::transport::cc::kinds::CcKind;
use crate::units::Ps;

/// What a pFabric packet's priority is (lower = more urgent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PriorityMode {
    /// Bytes of the flow not yet acknowledged (pFabric's SRPT approximation).
    Remaining,
    /// The flow's total size, fixed (FastLane §4.2.2: avoids priority inversion among
    /// the responses of one request).
    FlowSize,
}

#[derive(Debug, Clone)]
pub struct TcpConfig {
    pub mss: u32,
    pub init_cwnd: u32,
    pub rwnd: u64,
    /// The window grows per ACK that advances `una` (Linux 2.6), not per byte it
    /// acknowledges (RFC 5681 byte counting).
    pub per_ack_increase: bool,
    /// Grow the window only while it limits the sender (Linux's tcp_is_cwnd_limited).
    pub cwnd_limited: bool,
    /// Reductions halve the congestion window (Linux), not the flight size (RFC 5681).
    pub ssthresh_from_cwnd: bool,
    pub rto_min: Ps,
    pub rto_init: Ps,
    pub rto_max: Ps,
    /// `None`: no fast retransmit; loss is left to the timeout (multipath).
    pub dupthresh: Option<u32>,
    pub delayed_ack: Option<Ps>,
    /// Detect a lost retransmission when data sent after it is SACKed (Linux
    /// `tcp_mark_lost_retrans`, RACK today) instead of waiting for the RTO (RFC 6675).
    pub lost_retransmit: bool,
    /// pFabric: the timeout is `rto_min`, fixed: no RTT estimate, no backoff.
    pub fixed_rto: bool,
    /// pFabric probe mode: after this many consecutive timeouts, probe before resending.
    pub probe_after: Option<u32>,
    /// React to ECN echoes and Source Quench (RFC 3168: halve once per window).
    pub ecn: bool,
    /// FastLane's multipath option (§3.4.1): the window is inflated by the receiver's
    /// out-of-order bytes instead of being freed by SACKed ones.
    pub ooo_option: bool,
    /// How notifications are used (FastLane §3.4.1 TCP, §3.4.2 pFabric).
    pub notify: NotifyMode,
    /// Restart the timer when the first unacknowledged segment is retransmitted (Linux).
    pub rearm_rto: bool,
    /// Linux's reordering adaptation (`tcp_update_reordering`): raise `dupthresh` to the
    /// reordering seen, up to this many segments. `None`: the threshold stays fixed.
    pub max_reordering: Option<u32>,
    /// Linux's TSO deferral (`tcp_tso_should_defer`): in the Open state, new data waits
    /// until a third of the window (or 64 KB) can go at once, unless the last deferral
    /// is this long ago (two jiffies). `None`: segments go as the window opens.
    pub tso_defer: Option<Ps>,
    /// Linux's undo of a spurious fast retransmit (`tcp_try_undo_partial`,
    /// `tcp_try_undo_recovery`): an ACK whose echoed timestamp is older than the
    /// recovery's first retransmission shows the original arrived.
    pub undo: bool,
    /// The window's congestion control.
    pub cc: CcKind,
    /// What a packet's transport priority is.
    pub priority: PriorityMode,
    /// IP + TCP header bytes of every packet (options come on top).
    pub header_bytes: u32,
    /// Priority classes (0 highest) of data (and probes) and of ACKs.
    pub data_class: u8,
    pub ack_class: u8,
    /// CP-capable (CP §4.1): data is sent CP-enabled.
    pub cp: bool,
}
