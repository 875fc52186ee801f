//! Per-port statistics (ports.parquet).

/// Per-port statistics, one row per egress port.
#[derive(Debug, Clone, Default)]
pub struct PortRecords {
    pub node: Vec<u32>,
    pub port: Vec<u32>,
    pub peer: Vec<u32>,
    pub is_switch: Vec<bool>,
    pub capacity: Vec<u64>,
    pub enqueued: Vec<u64>,
    pub dropped: Vec<u64>,
    pub max_bytes: Vec<u64>,
    pub mean_bytes: Vec<f64>,
    pub rate_bps: Vec<u64>,
    pub marked: Vec<u64>,
    pub notif_generated: Vec<u64>,
    pub notif_dropped: Vec<u64>,
    pub notif_sent: Vec<u64>,
    pub notif_sent_bytes: Vec<u64>,
    pub notif_sent_idle: Vec<u64>,
    pub notif_max_bytes: Vec<u64>,
    pub notif_capacity: Vec<u64>,
    pub cut: Vec<u64>,
    pub cut_dropped: Vec<u64>,
}
