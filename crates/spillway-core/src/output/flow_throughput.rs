//! Per-flow goodput over time (flow_throughput.parquet, `run.flow_throughput_interval`):
//! at every interval's end a row per active flow, and a last row when the flow's record is
//! written, so a flow's rows sum to the bytes it had acknowledged by then.

use super::records;

records! {
    /// Rows in time order.
    pub struct FlowThroughputRecords {
        /// The end of the interval the row covers: a sample time, or for a flow's last
        /// row the moment its record was written (its last byte acknowledged, or the
        /// run's end).
        time_ps: u64;
        /// The flow (flows.parquet's `flow_id`).
        flow_id: u64;
        /// Payload bytes newly acknowledged cumulatively to the sender in the interval
        /// (goodput; 0 for a flow that made no progress). A flow's first interval begins
        /// when it starts.
        bytes: u64;
    }
}
