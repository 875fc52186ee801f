//! The run's counters (summary.json).

/// Counters for summary.json.
#[derive(Debug, Clone, Default)]
pub struct Counters {
    pub events: u64,
    pub packet_hops: u64,
    pub drops: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub flows_started: u64,
    pub flows_finished: u64,
    pub flows_unfinished: u64,
    /// Queries begun and not complete when the run stopped.
    pub queries_unfinished: u64,
    pub bytes_offered: u64,
    pub bytes_delivered: u64,
    pub dup_bytes: u64,
    pub stale_packets: u64,
    pub peak_active_flows: u64,
    pub peak_packets: u64,
    /// FastLane notifications created from drops, refused by a full notification
    /// buffer (anywhere on their way), and delivered to a host.
    pub notifications_generated: u64,
    pub notifications_dropped: u64,
    pub notifications_delivered: u64,
    /// ... of which the source ignored as older than its last timeout.
    pub notifications_stale: u64,
    pub quenches_sent: u64,
    pub quenches_delivered: u64,
    pub ecn_marks: u64,
    pub ecn_reductions: u64,
    pub probes: u64,
    /// CP: payload-cut packets made, their wire bytes, those refused by the extra
    /// allowance; PACKs the senders received.
    pub cut_packets: u64,
    pub cut_bytes: u64,
    pub cut_dropped: u64,
    pub packs: u64,
    /// Fast recoveries undone as spurious (`transport.undo`).
    pub undos: u64,
}
