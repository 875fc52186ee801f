//! The run's counters (summary.json), each defined once with its meaning.

/// Defines the counters struct (every field a `u64`) with each counter's meaning.
macro_rules! counters {
    ($(#[doc = $doc:literal] $(#[doc = $more:literal])* $field:ident;)*) => {
        /// Counters for summary.json.
        #[derive(Debug, Clone, Default)]
        pub struct Counters {
            $(#[doc = $doc] $(#[doc = $more])* pub $field: u64,)*
        }

        impl Counters {
            /// Every counter: (name, meaning).
            pub const SCHEMA: &'static [(&'static str, &'static str)] =
                &[$((stringify!($field), concat!($doc $(, " ", $more)*)),)*];

            /// Every counter's value, in schema order.
            pub fn values(&self) -> Vec<(&'static str, u64)> {
                vec![$((stringify!($field), self.$field),)*]
            }

            /// Adds every count of `o` (a parallel run's processes' counters are
            /// summed; what is not a sum is settled after: engine/parallel.rs).
            pub fn add(&mut self, o: &Counters) {
                $(self.$field += o.$field;)*
            }
        }
    };
}

counters! {
    /// Events processed.
    events;
    /// Packets put on a link (hosts' NICs included).
    packet_hops;
    /// Packets dropped anywhere, notifications aside (ports.parquet has them by reason).
    drops;
    /// Segments sent again (counted as they leave their NIC).
    retransmits;
    /// Retransmission timer expiries.
    timeouts;
    /// Flows the applications started.
    flows_started;
    /// Flows whose last byte arrived.
    flows_finished;
    /// Flows that had not when the run stopped.
    flows_unfinished;
    /// Queries begun and not complete when the run stopped (`qct_ps` covers finished
    /// queries only, so a run cut short by `run.duration` reads it with these).
    queries_unfinished;
    /// Payload bytes the applications handed to their transports.
    bytes_offered;
    /// Payload bytes receivers hold in order.
    bytes_delivered;
    /// Payload bytes that arrived more than once (data of flows already finished
    /// included: flows.parquet's `duplicate_bytes` counts those that came while the flow
    /// was active).
    duplicate_bytes;
    /// Payload bytes of the data packets hosts started on their links (to their switch).
    host_sent_data_bytes;
    /// Payload bytes of the data packets hosts received from their links.
    host_received_data_bytes;
    /// Wire bytes of the data packets hosts started on their links.
    host_sent_data_wire_bytes;
    /// Wire bytes of the data packets hosts received.
    host_received_data_wire_bytes;
    /// Payload bytes of data sent by hosts and still in the network when the run
    /// stopped (duplicates of finished flows, or a run cut short).
    in_flight_data_bytes;
    /// Dead packets (Turbo §4.1, §5.2): `host_sent_data_bytes -
    /// host_received_data_bytes - in_flight_data_bytes`, payload that used links and was
    /// dropped in the network. Turbo's dead % is this over `bytes_offered`.
    dead_bytes;
    /// The same in wire bytes.
    dead_wire_bytes;
    /// Payload bytes of data packets dropped at switches, counted as they are dropped:
    /// equal to `dead_bytes` when nothing is in flight at the end.
    dropped_data_bytes;
    /// Their wire bytes.
    dropped_data_wire_bytes;
    /// Zombie packets (Turbo §4.1): data packets dropped at a switch that had earlier
    /// been served ahead of another flow's packet, or taken its place, at a pFabric
    /// queue.
    zombie_packets;
    /// Packets of flows already finished.
    stale_packets;
    /// The most flows active at once.
    peak_active_flows;
    /// The packet arena's high-water mark.
    peak_packets;
    /// FastLane: notifications created from drops.
    notifications_generated;
    /// FastLane: notifications refused by a full notification buffer, anywhere on their
    /// way.
    notifications_dropped;
    /// FastLane: notifications that reached a host.
    notifications_delivered;
    /// FastLane: of those, ignored by the source as sent before its last timeout.
    notifications_stale;
    /// Source Quench: quenches sent.
    quenches_sent;
    /// Source Quench: quenches that reached their source.
    quenches_delivered;
    /// Packets ECN-marked (or quenched) by switch ports.
    ecn_marks;
    /// Window cuts for ECN echoes or quenches.
    ecn_reductions;
    /// pFabric probes sent.
    probes;
    /// CP: payload-cut packets made.
    cut_packets;
    /// CP: their wire bytes.
    cut_bytes;
    /// CP: of those, refused by a full extra allowance.
    cut_dropped;
    /// CP: PACKs the senders received.
    packs;
    /// Fast recoveries undone as spurious (`transport.undo`).
    undos;
    /// Flow control: pause and resume frames sent by switch inputs.
    pause_frames;
    /// Combined input/output-queued switches: packets an ingress queue had no room for
    /// (counted in `drops` too; with flow control, thresholds that leave too little
    /// headroom).
    ingress_drops;
    /// Fastpass: FCP messages endpoints sent to arbiters (a copy to each arbiter counts
    /// once per copy).
    fastpass_fcp_to_arbiter;
    /// Fastpass: their wire bytes (IP header + FCP message + framing).
    fastpass_fcp_to_arbiter_bytes;
    /// Fastpass: of those, arrived at their arbiter's host.
    fastpass_fcp_to_arbiter_arrived;
    /// Fastpass: FCP messages arbiters sent to endpoints (allocations, acks, resets).
    fastpass_fcp_to_endpoint;
    /// Fastpass: their wire bytes.
    fastpass_fcp_to_endpoint_bytes;
    /// Fastpass: of those, arrived at their endpoint.
    fastpass_fcp_to_endpoint_arrived;
    /// Fastpass: wire bytes of watchdogs between arbiters.
    fastpass_watchdog_bytes;
    /// Fastpass: FCP messages lost as they were sent (`fastpass.control_loss`).
    fastpass_fcp_lost;
    /// Fastpass: FCP messages sent that never arrived and were forgotten (dropped in the
    /// network).
    fastpass_fcp_expired;
    /// Fastpass: timeslots the arbiters granted.
    fastpass_slots_granted;
    /// Fastpass: granted timeslots that reached their endpoint in time to be used.
    fastpass_slots_received;
    /// Fastpass: of those, timeslots in which the endpoint sent.
    fastpass_slots_used;
    /// Fastpass: timeslots with nothing queued for their destination.
    fastpass_slots_wasted;
    /// Fastpass: timeslots requested again: allocations lost on the way or arriving
    /// later than `fastpass.late_threshold` (§5.3, §6.3).
    fastpass_slots_rerequested;
    /// Fastpass: of those, the late ones.
    fastpass_slots_late;
    /// Fastpass: reports endpoints sent again because an answer was overdue (a report
    /// unanswered, or demand waiting and the arbiter silent for `fastpass.retransmit`).
    fastpass_report_retransmits;
    /// Fastpass: allocation messages endpoints found missing by the gaps in their
    /// arbiter's sequence numbers (each gap sends the current totals at once).
    fastpass_alloc_gaps;
    /// Fastpass: timeslots in which a host was granted twice as sender, or twice as
    /// receiver (two arbiters' allocations overlapping): zero when the arbiters never
    /// overlap.
    fastpass_slot_conflicts;
    /// Fastpass: endpoint resets the arbiters began (at start, on takeover, on a burst of
    /// bad checksums, §5.3).
    fastpass_arbiter_resets;
    /// Fastpass: resets the endpoints adopted.
    fastpass_endpoint_resets;
    /// Fastpass: secondaries that took over (§5.1).
    fastpass_takeovers;
    /// Fastpass: from the start of the last timeslot the failed primary granted to the
    /// start of the first its successor granted; 0 without a takeover.
    fastpass_failover_gap_ps;
    /// Fastpass: packets sent without their arbiter's path (no hash selects it: 0 in the
    /// topologies here).
    fastpass_unpinned_packets;
    /// Fastpass: timeslots whose matching path selection could not color (0 unless the
    /// allocator broke a rack limit).
    fastpass_path_errors;
    /// Fastpass: median time from a packet joining its endpoint queue to its timeslot
    /// (within 1/128).
    fastpass_queue_delay_p50_ps;
    /// Fastpass: its 99th percentile.
    fastpass_queue_delay_p99_ps;
    /// Fastpass: its maximum.
    fastpass_queue_delay_max_ps;
    /// Fastpass: packets still in endpoint queues when the run stopped.
    fastpass_queued_packets;
    /// Fastpass: median time an allocation message took from its arbiter to its endpoint
    /// (the arbiter's own link and the network; within 1/128).
    fastpass_alloc_delay_p50_ps;
    /// Fastpass: its 99th percentile.
    fastpass_alloc_delay_p99_ps;
    /// Fastpass: its maximum.
    fastpass_alloc_delay_max_ps;
    /// Fastpass: the longest an arbiter's own link held the FCP messages it had sent
    /// (its transmit queue, as the arbiter counts it).
    fastpass_arbiter_backlog_max_ps;
    /// Fastpass: timeslots an arbiter left unallocated because its link was too far
    /// behind for their allocations to arrive in time (half the lead, §5.1).
    fastpass_slots_skipped;
}
