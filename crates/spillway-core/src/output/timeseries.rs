//! The network's state over time (timeseries.parquet, `run.timeseries_interval`): one row
//! per sample.

use super::records;

records! {
    /// Samples, in time order.
    pub struct TimeseriesRecords {
        /// When the sample was taken.
        time_ps: u64;
        /// Flows started and not yet finished (their last byte not acknowledged).
        active_flows: u64;
        /// Turbo §3's outstanding bytes: over the active flows, the bytes not yet
        /// cumulatively acknowledged (sent or not).
        outstanding_bytes: u64;
        /// Flows started so far.
        flows_started: u64;
        /// Packets dropped anywhere so far (`drops` in summary.json).
        drops: u64;
    }
}
