//! The flow records: one row per flow (flows.parquet). Flows are written as they finish,
//! so the order is finishing order; flows still active when the run stops come last.

use super::records;
use crate::workload::CLASS_LABELS;

records! {
    /// Finished (or, at the end, unfinished) flows as columns.
    pub struct FlowRecords {
        /// Order in which flows started (0, 1, ...).
        flow_id: u64;
        /// Source host.
        src: u32;
        /// Destination host.
        dst: u32;
        /// Payload bytes the application handed to the transport.
        size_bytes: u64;
        /// When the application handed the flow to the transport.
        start_ps: u64;
        /// When the receiver held the last byte; null if it never did.
        finish_ps: u64, null = Max;
        /// Flow completion time: `finish_ps - start_ps`.
        fct_ps: u64, null = Max;
        /// When the sender held an acknowledgement of every byte, its end of the flow
        /// (what the HPCC simulator's 8-column fct.txt times); null if it never did.
        acked_ps: u64, null = Max;
        /// The flow alone on its path, sent at line rate from `start_ps`, store-and-forward
        /// at every hop: serialization of each packet at every hop plus propagation, in
        /// closed form (packets pipeline behind the slowest hop). With
        /// `switch.cut_through`, a switch forwards each packet as the switches do for a
        /// flow alone (once its header is in, if the egress is free then and no faster
        /// than the ingress; else stored), computed packet by packet until the pattern
        /// repeats. Server processing delay is not included.
        ideal_fct_ps: u64;
        /// `fct_ps / ideal_fct_ps`: at least 1, except where paths differ: the ideal
        /// follows the first equal-cost choice at each switch, so with
        /// `topology.clock_ppm` a flow hashed onto faster clocks can come in below 1 by a
        /// few parts per million, and with weighted `switch.routes` over paths of
        /// different lengths, by more. With `switch.cut_through`, later can be sooner: a
        /// packet that reaches a busy egress is stored whole, so a flow whose last, short
        /// packet leaves its host later than line rate can find idle and cut through an
        /// egress where the ideal's, catching up with the one before, is stored; then it
        /// comes in below 1 by up to that hop's serialization less its header time (on
        /// pfabric144: 2 flows in 20,000, by up to 1.1%).
        slowdown: f64, null = Nan;
        /// The flow's priority class (0 highest): the one the workload gave it
        /// (`workload.priorities`, `workload.classes_by_size`, `workload.background_class`),
        /// else the transport's data class. Its data and ACKs carry it at every queue,
        /// unless `switch.priorities = false` (then they go in the transport's classes).
        priority: u8;
        /// What made the flow: `incast`, `flow` (Poisson), `request`, `response`,
        /// `trace`, `short` or `long` (responses of `short_long`), `background`.
        class: u8, labels = CLASS_LABELS;
        /// The query (incast round, request/response) the flow belongs to.
        query_id: u64, null = Max;
        /// Segments the sender sent more than once.
        retransmits: u32;
        /// Retransmission timer expiries.
        timeouts: u32;
        /// This flow's data packets (and probes) dropped in the network.
        drops: u32;
        /// FastLane drop notifications received by either end of the flow (for its data,
        /// probes or ACKs).
        notifications: u32;
        /// Probes the sender sent (pFabric's probe mode, FastLane's, Turbo's).
        probes: u32;
        /// Turbo: times the flow's priority was inflated after a timeout (Turbo §4.1).
        inflations: u32;
        /// Payload bytes of this flow that reached its receiver more than once.
        duplicate_bytes: u64;
        /// Bytes the receiver holds in order (the size, when finished).
        delivered_bytes: u64;
    }
}
