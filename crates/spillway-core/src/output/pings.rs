//! Round-trip times of the ping workload (pings.parquet, `[ping]`): one row per request.

use super::records;

records! {
    /// One row per request, in the order they were sent.
    pub struct PingRecords {
        /// The host that sent the request (`ping.src`).
        src: u32;
        /// The host that answered (`ping.dst`).
        dst: u32;
        /// When the request was handed to the source's send path (its queue discipline
        /// and NIC, behind whatever they hold).
        sent_ps: u64;
        /// From `sent_ps` until the reply had fully arrived at the source's NIC (neither
        /// host's receive path, server or interrupt delay is in it: the destination's
        /// NIC answers at once); null if no reply had arrived when the run stopped.
        rtt_ps: u64, null = Max;
    }
}
