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
}
