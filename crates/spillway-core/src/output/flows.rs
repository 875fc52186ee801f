//! The flow records: one row per flow (flows.parquet).

/// Finished (or, at the end, unfinished) flows as columns. `u64::MAX` = none.
#[derive(Default, Debug, Clone)]
pub struct FlowRecords {
    pub flow_id: Vec<u64>,
    pub src: Vec<u32>,
    pub dst: Vec<u32>,
    pub size_bytes: Vec<u64>,
    pub start_ps: Vec<u64>,
    pub finish_ps: Vec<u64>,
    pub fct_ps: Vec<u64>,
    pub ideal_fct_ps: Vec<u64>,
    pub slowdown: Vec<f64>,
    pub priority: Vec<u8>,
    pub class: Vec<u8>,
    pub query_id: Vec<u64>,
    pub retransmits: Vec<u32>,
    pub timeouts: Vec<u32>,
    pub drops: Vec<u32>,
    pub notifications: Vec<u32>,
    /// Bytes the receiver holds in order (all of them for a finished flow).
    pub delivered_bytes: Vec<u64>,
}

impl FlowRecords {
    pub fn len(&self) -> usize {
        self.flow_id.len()
    }
    pub fn is_empty(&self) -> bool {
        self.flow_id.is_empty()
    }
}
