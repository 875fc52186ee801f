//! The scenario: every key, its type, default and meaning, defined once in [`KEYS`].
//!
//! Parsing walks that table, so an unknown key, a key that does not apply to the chosen
//! kind, or a bad unit is refused with the key and the value named; the resolved scenario
//! (every applicable key with its effective value) and the reference page
//! (`docs/reference.md`) are both generated from the same table.

use crate::marking::codel::CodelConfig;
use crate::metrics::wire_bytes;
use crate::overflow::fastlane::FastLaneConfig;
use crate::overflow::Overflow;
use crate::transport::pfabric::PriorityMode;
use crate::units::{self, Ps};
use crate::workload::cdf::Cdf;
use std::fmt;
use std::path::{Path, PathBuf};
use toml::{Table, Value};

/// A scenario that cannot be accepted: which key, what value, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    pub key: String,
    pub value: String,
    pub message: String,
}

impl ScenarioError {
    pub fn new(key: &str, value: impl fmt::Display, message: impl Into<String>) -> Self {
        ScenarioError {
            key: key.to_string(),
            value: value.to_string(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.value.is_empty() {
            write!(f, "{}: {}", self.key, self.message)
        } else {
            write!(f, "{} = {}: {}", self.key, self.value, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

/// The type of a key, for parsing and for the reference page.
#[derive(Debug, Clone, Copy)]
pub enum Ty {
    Choice(&'static [&'static str]),
    Int,
    Float,
    Size,
    Rate,
    Time,
    TimeOrOff,
    IntOrOff,
    Bool,
    Text,
    HostList,
    Flows,
    Routes,
    FloatOrOff,
}

impl Ty {
    fn describe(&self) -> String {
        match self {
            Ty::Choice(c) => c.join(" \\| "),
            Ty::Int => "integer".into(),
            Ty::Float => "number".into(),
            Ty::Size => "size (`1460`, `128KB`)".into(),
            Ty::Rate => "rate (`10Gbps`)".into(),
            Ty::Time => "time (`1us`, `10ms`)".into(),
            Ty::TimeOrOff => "time or `off`".into(),
            Ty::IntOrOff => "integer or `off`".into(),
            Ty::Bool => "boolean".into(),
            Ty::Text => "string".into(),
            Ty::HostList => "list of host indices".into(),
            Ty::Flows => "array of tables `{src, dst, size, start}`".into(),
            Ty::Routes => "array of tables `{at, to, via, weights}`".into(),
            Ty::FloatOrOff => "number or `off`".into(),
        }
    }
}

pub struct KeyDef {
    pub path: &'static str,
    pub ty: Ty,
    /// Default as text; "" means none (optional) or derived (the doc says from what).
    pub default: &'static str,
    /// The section kinds this key applies to; empty = all.
    pub kinds: &'static [&'static str],
    pub doc: &'static str,
}

const LEAF_SPINE_KINDS: &[&str] = &["leaf_spine", "pfabric144", "detail96"];
const QUERY_KINDS: &[&str] = &["request_response", "partition_aggregate"];
const REQUEST_KINDS: &[&str] = &["request_response", "partition_aggregate", "short_long"];
const LOAD_KINDS: &[&str] = &[
    "poisson",
    "request_response",
    "partition_aggregate",
    "short_long",
];

macro_rules! key {
    ($path:expr, $ty:expr, $default:expr, $kinds:expr, $doc:expr) => {
        KeyDef {
            path: $path,
            ty: $ty,
            default: $default,
            kinds: $kinds,
            doc: $doc,
        }
    };
}

/// Every scenario key. Order here is the order of the resolved file and the reference.
pub const KEYS: &[KeyDef] = &[
    key!("topology.kind", Ty::Choice(&["star", "dumbbell", "leaf_spine", "fat_tree", "pfabric144", "detail96"]), "star", &[],
        "Topology shape. `pfabric144` and `detail96` are `leaf_spine` with the papers' parameters as defaults."),
    key!("topology.hosts", Ty::Int, "16", &["star", "dumbbell"],
        "Number of hosts. `dumbbell`: half on each side (must be even). At most 65,536 (`star`) or 131,070 (`dumbbell`): a port index is 16 bits."),
    key!("topology.k", Ty::Int, "8", &["fat_tree"],
        "Fat-tree arity (even, 2 to 64): k pods, k³/4 hosts, k²/4 core switches. k=8 is FastLane's 128-server fat-tree."),
    key!("topology.racks", Ty::Int, "4", LEAF_SPINE_KINDS, "Racks (leaf switches). Hosts × switches is at most 2³⁰ (4 GiB of routing tables)."),
    key!("topology.hosts_per_rack", Ty::Int, "8", LEAF_SPINE_KINDS, "Hosts under each leaf; with `spines`, at most 65,536 ports a leaf."),
    key!("topology.spines", Ty::Int, "2", LEAF_SPINE_KINDS, "Spine switches; every leaf has one link to every spine."),
    key!("topology.link_rate", Ty::Rate, "10Gbps", &[], "Rate of host links (host to first switch)."),
    key!("topology.link_delay", Ty::Time, "1us", &[], "Propagation delay of host links."),
    key!("topology.fabric_rate", Ty::Rate, "", &["dumbbell", "leaf_spine", "fat_tree", "pfabric144", "detail96"],
        "Rate of switch-to-switch links; defaults to `link_rate`. Lower it to oversubscribe."),
    key!("topology.fabric_delay", Ty::Time, "", &["dumbbell", "leaf_spine", "fat_tree", "pfabric144", "detail96"],
        "Propagation delay of switch-to-switch links; defaults to `link_delay`."),
    key!("topology.clock_ppm", Ty::Float, "0", &[],
        "Clock tolerance: every port of a node (a host's NIC, a switch's ports, which share one oscillator) \
         transmits at its nominal rate times 1 + x, x drawn per node, uniform in ±clock_ppm parts per million, \
         from the run's seed (IEEE 802.3 allows ±100 ppm). Links of one nominal rate \
         then drift in phase against each other, as real ones do. With exactly equal rates, a full port whose \
         departures are paced by one busy input hands the room each departure frees to that input's packet, \
         which arrives at the same picosecond, every time: the other inputs are locked out. `0`: exact rates."),
    key!("topology.framing_bytes", Ty::Int, "38", &[],
        "Ethernet bytes per frame beyond the IP packet: 14 header + 4 FCS + 8 preamble/SFD + 12 inter-frame gap. \
         Frames are padded to the 64 B Ethernet minimum before the preamble and gap are added."),
    key!("switch.buffer", Ty::Size, "128KB", &[], "Buffer per egress port, shared by its 8 priority classes."),
    key!("switch.edge_buffer", Ty::Size, "", &[],
        "Buffer of switch ports that face hosts (the last hop); defaults to `buffer`."),
    key!("switch.spine_buffer", Ty::Size, "", &[],
        "Buffer of the top tier's ports (leaf_spine spines, fat_tree cores), all facing down; defaults to `buffer`. \
         The CP testbed has 128 KB at its aggregation switch, the incast bottleneck, and 512 KB elsewhere (CP §6.1)."),
    key!("switch.queue", Ty::Choice(&["droptail", "pfabric"]), "droptail", &[],
        "Queue discipline: `droptail` = 8 strict-priority classes (0 highest) sharing the port buffer, tail drop; \
         `pfabric` = serve the earliest packet of the flow owning the most urgent packet, and on overflow drop \
         the least urgent packet (pFabric §4.2), by (class, transport priority)."),
    key!("switch.overflow", Ty::Choice(&["drop", "fastlane", "source_quench", "cut_payload"]), "drop", &[],
        "What a port does with a packet it cannot keep: `drop`; `fastlane` = turn it into a 64 B drop notification \
         sent back to its source at top priority within the `fastlane_*` caps (FastLane §3); `source_quench` = drop, \
         and quench the source whenever the ECN marker marks (needs `ecn`; FastLane §2.2.1); `cut_payload` = cut a \
         CP-enabled data packet to its headers and queue it in a small extra allowance (CP §4.2, §5.2)."),
    key!("switch.cut_payload_extra", Ty::Size, "4KB", &[],
        "CP: extra buffer per port, beyond `buffer`, for payload-cut packets and PACKs (CP §5.2: 4 KB)."),
    key!("switch.fastlane_bandwidth", Ty::Float, "0.01", &[],
        "FastLane: the largest fraction of a link's rate its notifications may take (FastLane §3.3.1: 1%)."),
    key!("switch.fastlane_buffer", Ty::Size, "", &[],
        "FastLane: notification buffer per port; defaults to 2.5% of `switch.buffer` (FastLane §3.3.2: 3.2 KB of 128 KB)."),
    key!("switch.fastlane_strict", Ty::Bool, "false", &[],
        "FastLane: forbid notifications from exceeding the bandwidth cap even on an idle link (§5.1.3). \
         `false`: work conserving, notifications and data use each other's idle capacity."),
    key!("switch.ecn", Ty::Choice(&["off", "codel", "threshold"]), "off", &[],
        "ECN marking at every switch port: `codel` marks by CoDel's sojourn-time law (RFC 8289) instead of dropping; \
         `threshold` marks an arriving data packet when the port already holds more than `ecn_threshold` (DCTCP's K)."),
    key!("switch.ecn_threshold", Ty::Size, "32KB", &[],
        "DCTCP marking threshold K, in bytes of the port's queue (CP §6: 32 KB at 1 Gbps)."),
    key!("switch.codel_target", Ty::Time, "10us", &[],
        "CoDel target sojourn time (datacenter scale: ~one BDP of queue at 10 Gbps)."),
    key!("switch.codel_interval", Ty::Time, "100us", &[],
        "CoDel interval (datacenter scale: spans the RTT of a full 128 KB port at 10 Gbps)."),
    key!("switch.forwarding", Ty::Choice(&["ecmp", "spray"]), "ecmp", &[],
        "`ecmp`: hash of the flow's 5-tuple picks one of the equal-cost next hops (a flow keeps its path); \
         `spray`: a random equal-cost next hop per packet."),
    key!("switch.routes", Ty::Routes, "", &[],
         "Routes that replace shortest-path forwarding at one switch: `[[switch.routes]]` with `at` (a switch: `leaf1`, `spine0`, `edge0.1`, `agg0.0`, `core3`, `switch`, `left`, `right`), `to` (destination hosts; default all), `via` (neighbours to forward to: nodes linked to `at`; a host only for its own packets) and optional `weights` (one per `via`: each packet picks a neighbour at random by weight, as CP §6.3's random-forwarding ToR does; without weights `switch.forwarding` chooses). Later entries win; a route that loops is refused."),
    key!("host.nic_buffer", Ty::Size, "", &[],
        "Host NIC egress buffer; unbounded when absent (the transport's window bounds it)."),
    key!("host.nic_flow_limit", Ty::IntOrOff, "2", &[],
        "Most data segments one flow may have waiting in its host's NIC queue (TCP Small Queues): the rest of \
         the window waits in the socket until the NIC takes one, so flows from one host interleave and a long \
         flow's window does not sit in the NIC ahead of everyone else. `off`: the whole window goes to the NIC."),
    key!("host.nic_drop", Ty::Choice(&["loss", "local"]), "loss", &[],
        "What a full host NIC queue does to a data segment of its own host. `loss`: it is dropped like any \
         packet and the sender finds out as from any loss. `local`: as in Linux (dev_queue_xmit returns \
         NET_XMIT_DROP to TCP, tcp_enter_cwr), the segment never left the host, so it is not a loss: the \
         sender knows at once, sends it again when its window allows, and halves its window at most once per \
         window, as for an ECN echo."),
    key!("host.proc_parallel", Ty::Int, "16", &[],
        "Server processing model (FastLane §4.2.1): packets processed at once by a receiving host."),
    key!("host.rx_jitter", Ty::Time, "0us", &[],
         "Each packet a host receives waits an extra uniform random time in [0, jitter) before its transport sees it, never overtaking an earlier packet (interrupt and stack latency), drawn from the host's own random stream. Without it, ACK-clocked senders meeting at one tail-drop queue can lock in phase so that one of them loses every overflow (Floyd and Jacobson's phase effect), which real hosts' timing noise prevents. `0us`: none."),
    key!("host.rx_coalesce", Ty::Time, "0us", &[],
         "Receive interrupt moderation: a host's NIC interrupts at most once per this interval, and the packets that arrived since are handed to the transport together at the interrupt (the first packet after a quiet interval at once), so their ACKs leave back to back (e1000's default moderation allows up to 8000 interrupts/s: 125us). With `rx_jitter`, the jitter is drawn once per interrupt: a batch goes up together. `0us`: every packet at once."),
    key!("host.gro", Ty::Bool, "false", &[],
         "Generic receive offload (Linux's default since 2.6.29), with `rx_coalesce`: within one interrupt's batch, a data segment that continues the previous one of its flow in sequence joins it (up to 64 KB), and the transport acknowledges the merged segment once, so an in-order stream gets one ACK per batch and an out-of-order one about one per contiguous run. Segments marked CE, retransmissions, duplicates and payload-cut segments are never merged. `false`: one ACK per segment."),
    key!("host.proc_time", Ty::Time, "0us", &[],
        "Processing time per received packet; `0us` turns the server model off. FastLane uses 5us with 16 in parallel."),
    key!("transport.kind", Ty::Choice(&["tcp", "cubic", "dctcp", "pfabric"]), "tcp", &[],
        "Transport: `tcp` = NewReno with SACK (RFC 6582, 2018, 6675); `cubic` = the same TCP with CUBIC's \
         window (RFC 8312 with Linux 2.6.38's constants: cut to 0.7, C = 0.4, fast convergence, TCP \
         friendliness; no HyStart), Linux's default congestion control and the CP testbed's; `dctcp` = TCP whose window follows the \
         fraction of ECN-marked bytes (RFC 8257; needs `switch.ecn`); `pfabric` = pFabric's minimal rate control \
         (initial window one BDP, fixed small timeout, no fast retransmit, slow start after a timeout, probe mode)."),
    key!("transport.dctcp_g", Ty::Float, "0.0625", &["dctcp"],
        "DCTCP's gain g for the marked-fraction estimate α ← (1 − g)·α + g·F (DCTCP, CP §6: 1/16)."),
    key!("transport.cp", Ty::Bool, "true", &[],
        "CP-capable (CP §4.1): data is sent CP-enabled, so a `cut_payload` switch cuts it instead of dropping it, \
         and the receiver answers a payload-cut packet at once with a PACK naming the lost bytes. `false`: normal \
         packets, dropped as on a plain switch."),
    key!("transport.mss", Ty::Int, "1460", &[], "Payload bytes per full segment (at most 9000: jumbo frames)."),
    key!("transport.header_bytes", Ty::Int, "40", &[], "TCP/IP header bytes per packet (20 IP + 20 TCP)."),
    key!("transport.init_cwnd", Ty::Int, "10", &[],
        "Initial congestion window, in segments. `pfabric` defaults to one BDP of the longest path (base RTT x host link rate, \
         in full-size packets on the wire, rounded up)."),
    key!("transport.max_cwnd", Ty::IntOrOff, "off", &["pfabric"],
        "Largest congestion window, in segments. `pfabric` defaults to twice `init_cwnd` (2 x BDP, Turbo §5)."),
    key!("transport.rwnd", Ty::Size, "1MB", &[], "Receive window: the most unacknowledged bytes a sender may have out."),
    key!("transport.cwnd_increase", Ty::Choice(&["bytes", "acks"]), "bytes", &[],
        "What the window grows by outside recovery. `bytes`: by the bytes each ACK newly acknowledges, \
         one MSS per window's worth in congestion avoidance (RFC 5681 byte counting, RFC 3465 with L = 1). \
         `acks`: by one MSS's worth per ACK that advances the cumulative ACK, however much it acknowledges \
         (Linux 2.6's per-ACK counting, the CP testbed's kernel): a cumulative jump over data that arrived \
         out of order counts once."),
    key!("transport.cwnd_limited", Ty::Bool, "false", &[],
        "Grow the window only while it limits the sender, as Linux does (tcp_is_cwnd_limited, 2.6.38): when the data \
         in flight before an ACK left at most 3 segments of the window unused (or, with `tso_defer`, less than a third \
         of it and under 64 KB). `false`: every ACK outside recovery grows it (RFC 5681), so a sender held back by \
         `rwnd` or its NIC keeps growing a window it does not use."),
    key!("transport.ssthresh_from", Ty::Choice(&["flight", "cwnd"]), "flight", &[],
        "What a loss, a timeout or an ECN echo halves to set ssthresh (`cubic` keeps 0.7 of it). \
         `flight`: the data outstanding, snd.nxt - snd.una (RFC 5681's FlightSize, RFC 6675), but never \
         more than cwnd (RFC 5681 §3.2 leaves out data sent beyond the window on duplicate ACKs, and \
         SACKed data could otherwise make a cut raise the window). `cwnd`: the congestion window (Linux's \
         tcp_reno_ssthresh). They differ when the sender is not window-limited (held back by the receive \
         window or the application)."),
    key!("transport.rto_min", Ty::Time, "1ms", &[], "Lower bound of the retransmission timeout (RFC 6298)."),
    key!("transport.rto_init", Ty::Time, "", &[], "Timeout before the first RTT sample; defaults to `rto_min`."),
    key!("transport.rto_max", Ty::Time, "60s", &[], "Upper bound of the backed-off timeout."),
    key!("transport.dupack_threshold", Ty::IntOrOff, "3", &[],
        "Duplicate ACKs (or SACKed segments above a hole) that trigger fast retransmit; `off` leaves loss to the timeout (multipath)."),
    key!("transport.delayed_ack", Ty::TimeOrOff, "off", &[],
        "Delayed ACK: acknowledge every second full segment or after this time; `off` acknowledges every segment."),
    key!("transport.max_reordering", Ty::IntOrOff, "off", &[],
         "Linux's reordering adaptation (tcp_update_reordering): when a segment never retransmitted is acknowledged or SACKed below the highest SACKed one, the duplicate-ACK threshold rises to that distance in segments, up to this bound (Linux 2.6.38, the CP testbed's kernel: 127). `off`: the threshold stays `dupack_threshold`."),
    key!("transport.tso_defer", Ty::TimeOrOff, "off", &[],
         "Linux's TSO deferral (tcp_tso_should_defer, Linux 2.6.38 with a segmentation-offloading NIC): while nothing is SACKed, lost or being retransmitted, new data waits until a third of min(cwnd, rwnd), or 64 KB, or all that is left can go at once, so it leaves in bursts; a deferral ends early when the previous one is this long ago (Linux: two jiffies, 1-2 ms at HZ = 1000; this value exactly). A burst decided on goes whole even when the host's NIC budget splits it over several sends; also no deferral while a window reduction for ECN or a local NIC drop is in progress (Linux's CWR state). `off`: a segment goes whenever the window opens."),
    key!("transport.undo", Ty::Bool, "false", &[],
         "Linux's undo of a spurious fast retransmit (2.6.38: tcp_try_undo_partial, tcp_try_undo_recovery; TCP timestamps and D-SACK on, as on the CP testbed): when new data is acknowledged by an ACK whose echoed send time is older than the recovery's first retransmission, the original arrived late, so the window goes back to what it was before the cut (Linux: twice the halved ssthresh), and the reordering this shows counts toward `max_reordering`; when the recovery ends with every retransmission reported duplicate (D-SACK) or so shown, ssthresh goes back to its value before (at least 3/4 of the window then) and the window to at most that. `false`: a reduction stands."),
    key!("transport.lost_retransmit", Ty::Bool, "true", &[],
        "Resend a retransmission as soon as data sent after it is SACKed (`dupack_threshold` \
         transmissions later), as Linux does (tcp_mark_lost_retrans, RACK); `false`: RFC 6675 alone, \
         where a lost retransmission waits for the timeout."),
    key!("transport.ecn", Ty::Bool, "true", &[],
        "ECN-capable: data is sent ECT and the window halves at most once per window on an ECN echo or a Source \
         Quench (RFC 3168), never retransmitting for it."),
    key!("transport.ooo_option", Ty::Bool, "false", &[],
        "FastLane multipath option (§3.4.1): ACKs carry the out-of-order bytes above the cumulative ACK and the \
         sender inflates its window by them (new ACK: the value; duplicate: the max of it and the current inflation)."),
    key!("transport.priority", Ty::Choice(&["remaining", "flow_size"]), "remaining", &["pfabric"],
        "pFabric packet priority: `remaining` = unacknowledged bytes of the flow; `flow_size` = the flow's total size \
         (FastLane §4.2.2, for request/response)."),
    key!("transport.probe_after", Ty::IntOrOff, "5", &["pfabric"],
        "pFabric probe mode: after this many consecutive timeouts, send a header-only probe and resend only once it \
         is answered."),
    key!("transport.rearm_rto", Ty::Bool, "false", &[],
        "Restart the retransmission timer whenever the first unacknowledged segment is retransmitted, as Linux does \
         (tcp_xmit_retransmit_queue), so a head resent again and again in recovery is not also timed out; `false`: \
         RFC 6298 alone, the timer restarts only when new data is acknowledged. The CP testbed (Linux) runs `true`."),
    key!("transport.data_class", Ty::Int, "0", &[], "Priority class (0 highest .. 7) of data packets."),
    key!("transport.ack_class", Ty::Int, "0", &[], "Priority class (0 highest .. 7) of ACKs."),
    key!("workload.kind", Ty::Choice(&["incast", "poisson", "request_response", "partition_aggregate", "short_long", "trace"]), "incast", &[],
        "Traffic pattern; see the per-kind keys below."),
    key!("workload.pattern", Ty::Choice(&["many_to_one", "all_to_all"]), "many_to_one", &["incast"],
        "`many_to_one`: `senders` flows of `size` to `receiver`. `all_to_all` (DeTail §6.3): in every round each \
         host receives `size` in total, split evenly over all other hosts (each part rounded down to whole bytes, at least 1 B), \
         at the same time; one query row per receiver."),
    key!("workload.receiver", Ty::Int, "0", &["incast"], "The host every incast sender sends to."),
    key!("workload.senders", Ty::Int, "8", &["incast"],
        "Incast senders. They are spread round-robin over the hosts other than the receiver, \
         so more senders than hosts puts several on one host (CP §6.1)."),
    key!("workload.size", Ty::Size, "64KB", &["incast"], "Bytes each incast sender sends per round."),
    key!("workload.rounds", Ty::Int, "1", &["incast"], "Incast rounds; one query row per round."),
    key!("workload.period", Ty::TimeOrOff, "off", &["incast"],
        "`off`: a round starts when the previous one has fully arrived; a time: rounds start at this fixed period."),
    key!("workload.jitter", Ty::Time, "0us", &["incast"],
        "Each sender starts at the round's start plus a uniform random delay in [0, jitter); \
         `0us` starts all senders at the same instant."),
    key!("workload.load", Ty::Float, "0.5", LOAD_KINDS,
        "Offered load in (0, 1]: the fraction of the sending hosts' summed link capacity that the flows' payload bytes \
         would use: poisson λ = load · |`sources`| · link_rate / (8 · mean size) flows/s; queries λ = load · |`clients`| · \
         link_rate / (8 · fanout · mean response size) queries/s (all hosts when not listed; docs/workloads.md)."),
    key!("workload.cdf", Ty::Text, "", &["poisson", "request_response", "partition_aggregate"],
        "Flow (poisson; default `websearch`) or response (queries; default: fixed `response_size`) size distribution: \
         `websearch`, `datamining`, `aditya`, or a CDF file path (formats in docs/workloads.md)."),
    key!("workload.sources", Ty::HostList, "", &["poisson", "incast"],
        "Hosts that send; default all (incast: all but the receiver; `many_to_one` only)."),
    key!("workload.destinations", Ty::HostList, "", &["poisson"], "Hosts that receive; default all (never the source itself)."),
    key!("workload.max_flows", Ty::IntOrOff, "off", &["poisson"], "Stop generating after this many flows; `off` = until `run.duration`."),
    key!("workload.queries", Ty::IntOrOff, "off", REQUEST_KINDS, "Stop generating after this many queries; `off` = until `run.duration`."),
    key!("workload.short_fraction", Ty::Float, "0.1", &["short_long"],
        "short_long (FastLane §5): share of the load from short queries. A short query picks a response size from \
         {2, 4, 8, 16, 32} KB and a total from {32, 64, 96, 128, 160} KB (each uniform) and asks total/size distinct \
         workers in parallel; a long request asks one random worker for `long_size` (all-to-all)."),
    key!("workload.long_size", Ty::Size, "1MB", &["short_long"], "short_long: response size of a long request."),
    key!("workload.fanout", Ty::Int, "8", &["partition_aggregate"], "Workers asked per query (distinct, never the requester)."),
    key!("workload.request_size", Ty::Size, "10B", REQUEST_KINDS, "Request flow size."),
    key!("workload.response_size", Ty::Size, "16KB", QUERY_KINDS, "Response flow size per worker (when no `cdf`)."),
    key!("workload.clients", Ty::HostList, "", REQUEST_KINDS, "Hosts that issue queries; default all."),
    key!("workload.workers", Ty::HostList, "", REQUEST_KINDS, "Hosts that answer; default all."),
    key!("workload.flows", Ty::Flows, "", &["trace"], "Inline flows: `[[workload.flows]]` with `src`, `dst`, `size`, `start` (time)."),
    key!("workload.file", Ty::Text, "", &["trace"], "CSV of flows with header `src,dst,size_bytes,start_us`."),
    key!("workload.background_load", Ty::FloatOrOff, "off", &[],
         "Background traffic beside the workload (CP §6.4, DCTCP §4.3): Poisson flows between random distinct hosts with sizes from `background_cdf`, at this load (as `workload.load`, computed on unscaled sizes). It stops when the workload stops generating. `off`: none."),
    key!("workload.background_cdf", Ty::Text, "websearch", &[],
         "Background flow size distribution (names as `workload.cdf`); the default is the DCTCP paper's web-search background traffic."),
    key!("workload.background_scale", Ty::Float, "1", &[],
         "Multiplies background flows larger than `background_scale_above` (DCTCP §4.3 and CP §6.4's 10x traffic: 10). Arrival rates stay as `background_load` sets them."),
    key!("workload.background_scale_above", Ty::Size, "1MB", &[],
         "Background flows larger than this are scaled by `background_scale`."),
    key!("run.seed", Ty::Int, "1", &[], "Run seed; each component draws from its own stream derived from (seed, component)."),
    key!("run.duration", Ty::TimeOrOff, "off", &[], "Simulated time limit; `off` runs until every flow has finished."),
    key!("run.max_events", Ty::IntOrOff, "off", &[], "Event limit, a safety net for runaway scenarios."),
];

/// Defaults that depend on a section's kind (presets).
const KIND_DEFAULTS: &[(&str, &str, &str)] = &[
    // pFabric/Turbo topology (Turbo §5, pFabric §5.1): 9 racks x 16 hosts, 4 spines, 10G edge, 40G core, 0.2us links.
    ("pfabric144", "topology.racks", "9"),
    ("pfabric144", "topology.hosts_per_rack", "16"),
    ("pfabric144", "topology.spines", "4"),
    ("pfabric144", "topology.link_rate", "10Gbps"),
    ("pfabric144", "topology.fabric_rate", "40Gbps"),
    ("pfabric144", "topology.link_delay", "200ns"),
    // DeTail §8.1: 8 racks x 12 servers, multi-rooted tree oversubscribed 3:1, 1 GbE (§6, footnote 2).
    ("detail96", "topology.racks", "8"),
    ("detail96", "topology.hosts_per_rack", "12"),
    ("detail96", "topology.spines", "4"),
    ("detail96", "topology.link_rate", "1Gbps"),
    ("detail96", "topology.fabric_rate", "1Gbps"),
    ("poisson", "workload.cdf", "websearch"),
    // pFabric (FastLane §5: 250 us timeouts; pFabric §4.3: no fast retransmit).
    ("pfabric", "transport.rto_min", "250us"),
    ("pfabric", "transport.dupack_threshold", "off"),
];

fn keydef(path: &str) -> &'static KeyDef {
    KEYS.iter()
        .find(|k| k.path == path)
        .unwrap_or_else(|| panic!("scenario key {path} is not in KEYS"))
}

// ---------------------------------------------------------------------------------------
// The typed scenario.

#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    Star {
        hosts: u32,
    },
    Dumbbell {
        hosts: u32,
    },
    LeafSpine {
        racks: u32,
        hosts_per_rack: u32,
        spines: u32,
    },
    FatTree {
        k: u32,
    },
}

impl Shape {
    pub fn host_count(&self) -> u32 {
        match *self {
            Shape::Star { hosts } | Shape::Dumbbell { hosts } => hosts,
            Shape::LeafSpine {
                racks,
                hosts_per_rack,
                ..
            } => racks * hosts_per_rack,
            Shape::FatTree { k } => k * k * k / 4,
        }
    }
}

#[derive(Debug, Clone)]
pub struct TopologySpec {
    pub kind: String,
    pub shape: Shape,
    pub link_rate: u64,
    pub link_delay: Ps,
    pub fabric_rate: u64,
    pub fabric_delay: Ps,
    pub framing_bytes: u32,
    pub clock_ppm: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forwarding {
    Ecmp,
    Spray,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueKind {
    DropTail,
    PFabric,
}

/// A forwarding override: at switch `at`, packets for `to` leave toward `via`.
#[derive(Debug, Clone, PartialEq)]
pub struct RouteSpec {
    pub at: u32,
    /// Destination hosts; empty means all.
    pub to: Vec<u32>,
    /// Neighbouring nodes to forward to.
    pub via: Vec<u32>,
    /// One positive weight per `via`, when the choice is weighted per packet.
    pub weights: Option<Vec<f64>>,
}

#[derive(Debug, Clone)]
pub struct SwitchSpec {
    pub buffer: u64,
    /// Buffer of host-facing switch ports.
    pub edge_buffer: u64,
    /// Buffer of the top tier's ports.
    pub spine_buffer: u64,
    /// DCTCP-style marking threshold K, when `switch.ecn = "threshold"`.
    pub ecn_threshold: Option<u64>,
    /// CP's extra allowance for payload-cut packets and PACKs.
    pub cut_extra: u64,
    pub forwarding: Forwarding,
    pub queue: QueueKind,
    pub overflow: Overflow,
    pub fastlane: FastLaneConfig,
    /// CoDel marking, when `switch.ecn = "codel"`.
    pub codel: Option<CodelConfig>,
    pub routes: Vec<RouteSpec>,
}

#[derive(Debug, Clone)]
pub struct HostSpec {
    pub nic_buffer: Option<u64>,
    pub nic_flow_limit: Option<u64>,
    /// `host.nic_drop = "local"`: the host's own NIC refusing a segment tells its sender.
    pub nic_drop_local: bool,
    pub proc_parallel: u32,
    pub proc_time: Ps,
    pub rx_jitter: Ps,
    pub rx_coalesce: Ps,
    pub gro: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportKind {
    Tcp,
    /// TCP with CUBIC's window (RFC 8312, Linux 2.6.38).
    Cubic,
    Dctcp,
    PFabric,
}

#[derive(Debug, Clone)]
pub struct TransportSpec {
    pub kind: TransportKind,
    pub mss: u32,
    pub header_bytes: u32,
    pub init_cwnd: u32,
    pub rwnd: u64,
    pub per_ack_increase: bool,
    pub cwnd_limited: bool,
    pub ssthresh_from_cwnd: bool,
    pub rto_min: Ps,
    pub rto_init: Ps,
    pub rto_max: Ps,
    pub dupack_threshold: Option<u32>,
    pub max_reordering: Option<u32>,
    pub tso_defer: Option<Ps>,
    pub undo: bool,
    pub delayed_ack: Option<Ps>,
    pub lost_retransmit: bool,
    pub data_class: u8,
    pub ack_class: u8,
    pub max_cwnd: Option<u32>,
    pub ecn: bool,
    pub ooo_option: bool,
    pub priority: PriorityMode,
    pub probe_after: Option<u32>,
    pub dctcp_g: f64,
    pub cp: bool,
    pub rearm_rto: bool,
}

/// Poisson background flows beside the workload (`workload.background_*`).
#[derive(Debug, Clone)]
pub struct BackgroundSpec {
    pub load: f64,
    pub cdf: Cdf,
    pub scale: f64,
    pub scale_above: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FlowSpec {
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub start: Ps,
}

#[derive(Debug, Clone)]
pub enum WorkloadSpec {
    Incast {
        all_to_all: bool,
        /// Hosts the senders are spread over (many_to_one).
        sources: Vec<u32>,
        receiver: u32,
        senders: u32,
        size: u64,
        rounds: u32,
        period: Option<Ps>,
        jitter: Ps,
    },
    Poisson {
        load: f64,
        cdf: Cdf,
        sources: Vec<u32>,
        destinations: Vec<u32>,
        max_flows: Option<u64>,
    },
    Query {
        load: f64,
        queries: Option<u64>,
        fanout: u32,
        request_size: u64,
        response: ResponseSize,
        clients: Vec<u32>,
        workers: Vec<u32>,
    },
    ShortLong {
        load: f64,
        short_fraction: f64,
        long_size: u64,
        request_size: u64,
        queries: Option<u64>,
        clients: Vec<u32>,
        workers: Vec<u32>,
    },
    Trace {
        flows: Vec<FlowSpec>,
    },
}

#[derive(Debug, Clone)]
pub enum ResponseSize {
    Fixed(u64),
    Cdf(Cdf),
}

impl ResponseSize {
    pub fn mean(&self) -> f64 {
        match self {
            ResponseSize::Fixed(s) => *s as f64,
            ResponseSize::Cdf(c) => c.mean(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct RunSpec {
    pub seed: u64,
    pub duration: Option<Ps>,
    pub max_events: Option<u64>,
}

#[derive(Debug, Clone)]
pub struct Scenario {
    pub topology: TopologySpec,
    pub switch: SwitchSpec,
    pub host: HostSpec,
    pub transport: TransportSpec,
    pub workload: WorkloadSpec,
    pub background: Option<BackgroundSpec>,
    pub run: RunSpec,
    /// Every applicable key with its effective value, as TOML.
    pub resolved: String,
}

impl Scenario {
    /// Parses scenario text, applies `--set key=value` overrides, resolves defaults and validates.
    /// `base_dir` resolves relative file paths (CDFs, traces).
    pub fn parse(
        text: &str,
        overrides: &[String],
        base_dir: Option<&Path>,
    ) -> Result<Scenario, ScenarioError> {
        let mut table: Table = text.parse().map_err(|e: toml::de::Error| {
            ScenarioError::new("(file)", "", format!("not valid TOML: {}", e.message()))
        })?;
        for o in overrides {
            apply_override(&mut table, o)?;
        }
        Self::from_table(&table, base_dir)
    }

    pub fn from_table(table: &Table, base_dir: Option<&Path>) -> Result<Scenario, ScenarioError> {
        let mut r = Reader::new(table, base_dir)?;
        let topology = read_topology(&mut r)?;
        let hosts = topology.shape.host_count();
        let switch = read_switch(&mut r, &topology.shape)?;
        if switch.buffer < 1600 {
            return Err(r.err(
                "switch.buffer",
                "must hold at least one full-size packet (1600 B)",
            ));
        }
        let host = HostSpec {
            nic_buffer: r.opt_size("host.nic_buffer")?,
            nic_flow_limit: r.opt_uint("host.nic_flow_limit", 1)?,
            nic_drop_local: {
                let local = r.choice("host.nic_drop")? == "local";
                if local && switch.queue == QueueKind::PFabric {
                    // pFabric's NIC evicts queued packets of other flows, which the
                    // refusal protocol (a flow takes back what its NIC refused) cannot say.
                    return Err(r.err(
                        "host.nic_drop",
                        "\"local\" is for drop-tail NICs; with switch.queue = \"pfabric\" the NIC \
                         evicts by priority, and an evicted packet is a loss",
                    ));
                }
                local
            },
            proc_parallel: r.uint("host.proc_parallel", 1, 1 << 20)? as u32,
            proc_time: r.time("host.proc_time")?,
            rx_jitter: r.time("host.rx_jitter")?,
            rx_coalesce: r.time("host.rx_coalesce")?,
            gro: r.bool("host.gro")?,
        };
        if host.gro && host.rx_coalesce == 0 {
            return Err(r.err(
                "host.gro",
                "merges the segments of one interrupt's batch: set host.rx_coalesce too",
            ));
        }
        let transport = read_transport(&mut r, &topology)?;
        if transport.kind == TransportKind::Dctcp {
            if switch.codel.is_none() && switch.ecn_threshold.is_none() {
                return Err(r.err(
                    "transport.kind",
                    "dctcp follows ECN marks: set switch.ecn = \"threshold\" (DCTCP's K) or \"codel\"",
                ));
            }
            if !transport.ecn {
                return Err(r.err("transport.ecn", "dctcp is ECN-capable by definition"));
            }
        }
        if !transport.ecn && (switch.codel.is_some() || switch.ecn_threshold.is_some()) {
            // Non-ECT packets are never marked, and a quench is answered like an echo.
            return Err(r.err(
                "transport.ecn",
                "with switch.ecn marking, senders that are not ECN-capable would see nothing of it \
                 (marks go only to ECN-capable packets; Source Quench is answered like an ECN echo): \
                 set switch.ecn = \"off\" for a network that signals by loss alone",
            ));
        }
        let workload = read_workload(&mut r, hosts)?;
        let background = read_background(&mut r, hosts)?;
        let run = RunSpec {
            seed: r.uint("run.seed", 0, u64::MAX)?,
            duration: r.opt_time("run.duration")?,
            max_events: r.opt_uint("run.max_events", 1)?,
        };
        if run.duration == Some(0) {
            return Err(r.err("run.duration", "must be positive"));
        }
        if run.duration.is_none() {
            // Open-loop arrivals with no end would run (and grow) forever.
            let endless = match &workload {
                WorkloadSpec::Poisson { max_flows, .. } => {
                    max_flows.is_none().then_some("max_flows")
                }
                WorkloadSpec::Query { queries, .. } | WorkloadSpec::ShortLong { queries, .. } => {
                    queries.is_none().then_some("queries")
                }
                _ => None,
            };
            if let Some(limit) = endless {
                return Err(r.err(
                    "run.duration",
                    format!(
                        "this workload generates arrivals until run.duration or workload.{limit} \
                         stops it: set one of them"
                    ),
                ));
            }
        }
        check_buffers(&r, &topology, &switch, &host, &transport)?;
        let resolved = r.render();
        Ok(Scenario {
            topology,
            switch,
            host,
            transport,
            workload,
            background,
            run,
            resolved,
        })
    }

    pub fn host_count(&self) -> u32 {
        self.topology.shape.host_count()
    }
}

/// Every buffer must hold one full-size frame, or the packets that need it could never
/// leave (a NIC that cannot hold one resends it forever).
fn check_buffers(
    r: &Reader,
    t: &TopologySpec,
    sw: &SwitchSpec,
    host: &HostSpec,
    tr: &TransportSpec,
) -> Result<(), ScenarioError> {
    let frame = wire_bytes(tr.mss + tr.header_bytes, t.framing_bytes) as u64;
    let tiered = matches!(t.shape, Shape::LeafSpine { .. } | Shape::FatTree { .. });
    let buffers = [
        ("switch.buffer", Some(sw.buffer)),
        ("switch.edge_buffer", Some(sw.edge_buffer)),
        ("switch.spine_buffer", tiered.then_some(sw.spine_buffer)),
        ("host.nic_buffer", host.nic_buffer),
    ];
    for (key, b) in buffers {
        if let Some(b) = b.filter(|&b| b < frame) {
            return Err(r.err_value(
                key,
                units::format_size(b),
                format!(
                    "smaller than one full-size frame on the wire ({frame} B: transport.mss + \
                     transport.header_bytes + Ethernet framing)"
                ),
            ));
        }
    }
    Ok(())
}

/// Most ports one node may have: a port index is 16 bits.
const MAX_PORTS: u64 = 1 << 16;
/// Most routing-table entries (one per switch and destination host, 4 bytes each): 4 GiB.
const MAX_ROUTE_ENTRIES: u64 = 1 << 30;

fn route_table_message(hosts: u64, switches: u64) -> String {
    format!(
        "{hosts} hosts and {switches} switches need {:.1} GiB of routing tables \
         (4 bytes per switch and destination); at most {} GiB",
        (hosts * switches * 4) as f64 / (1u64 << 30) as f64,
        (MAX_ROUTE_ENTRIES * 4) >> 30
    )
}

fn read_topology(r: &mut Reader) -> Result<TopologySpec, ScenarioError> {
    let kind = r.choice("topology.kind")?.to_string();
    let shape = match kind.as_str() {
        // One switch port per host: port indices are 16 bits.
        "star" => Shape::Star {
            hosts: r.uint("topology.hosts", 2, MAX_PORTS)? as u32,
        },
        "dumbbell" => {
            let hosts = r.uint("topology.hosts", 2, 2 * (MAX_PORTS - 1))? as u32;
            if !hosts.is_multiple_of(2) {
                return Err(r.err("topology.hosts", "a dumbbell needs an even number of hosts"));
            }
            Shape::Dumbbell { hosts }
        }
        "fat_tree" => {
            let k = r.uint("topology.k", 2, 64)? as u32;
            if !k.is_multiple_of(2) {
                return Err(r.err("topology.k", "fat-tree arity must be even"));
            }
            Shape::FatTree { k }
        }
        _ => {
            let racks = r.uint("topology.racks", 1, 1 << 16)? as u32;
            let hosts_per_rack = r.uint("topology.hosts_per_rack", 1, 1 << 16)? as u32;
            let spines = r.uint("topology.spines", 1, 1 << 12)? as u32;
            if u64::from(hosts_per_rack) + u64::from(spines) > MAX_PORTS {
                return Err(r.err(
                    "topology.hosts_per_rack",
                    format!(
                        "a leaf would have {} ports (hosts_per_rack + spines); at most {MAX_PORTS}",
                        u64::from(hosts_per_rack) + u64::from(spines)
                    ),
                ));
            }
            let (hosts, switches) = (
                u64::from(racks) * u64::from(hosts_per_rack),
                u64::from(racks) + u64::from(spines),
            );
            if hosts * switches > MAX_ROUTE_ENTRIES {
                return Err(r.err("topology.racks", route_table_message(hosts, switches)));
            }
            if racks * hosts_per_rack < 2 {
                return Err(r.err(
                    "topology.hosts_per_rack",
                    "the topology needs at least 2 hosts",
                ));
            }
            Shape::LeafSpine {
                racks,
                hosts_per_rack,
                spines,
            }
        }
    };
    let link_rate = r.rate("topology.link_rate")?;
    let link_delay = r.time("topology.link_delay")?;
    let has_fabric = !matches!(shape, Shape::Star { .. });
    let (fabric_rate, fabric_delay) = if has_fabric {
        (
            r.opt_rate("topology.fabric_rate")?.unwrap_or(link_rate),
            r.opt_time_derived("topology.fabric_delay")?
                .unwrap_or(link_delay),
        )
    } else {
        (link_rate, link_delay)
    };
    if has_fabric {
        r.record(
            "topology.fabric_rate",
            Value::String(units::format_rate(fabric_rate)),
        );
        r.record(
            "topology.fabric_delay",
            Value::String(units::format_time(fabric_delay)),
        );
    }
    let framing_bytes = r.uint("topology.framing_bytes", 0, 1000)? as u32;
    let clock_ppm = r.float_in("topology.clock_ppm", -1.0, 1000.0)?;
    Ok(TopologySpec {
        kind,
        shape,
        link_rate,
        link_delay,
        fabric_rate,
        fabric_delay,
        framing_bytes,
        clock_ppm,
    })
}

fn read_switch(r: &mut Reader, shape: &Shape) -> Result<SwitchSpec, ScenarioError> {
    let buffer = r.size("switch.buffer")?;
    let forwarding = match r.choice("switch.forwarding")? {
        "spray" => Forwarding::Spray,
        _ => Forwarding::Ecmp,
    };
    let queue = match r.choice("switch.queue")? {
        "pfabric" => QueueKind::PFabric,
        _ => QueueKind::DropTail,
    };
    let overflow = match r.choice("switch.overflow")? {
        "fastlane" => Overflow::FastLane,
        "source_quench" => Overflow::SourceQuench,
        "cut_payload" => Overflow::CutPayload,
        _ => Overflow::Drop,
    };
    let edge_buffer = r.opt_size("switch.edge_buffer")?.unwrap_or(buffer);
    r.record(
        "switch.edge_buffer",
        Value::String(units::format_size(edge_buffer)),
    );
    let spine_buffer = r.opt_size("switch.spine_buffer")?.unwrap_or(buffer);
    r.record(
        "switch.spine_buffer",
        Value::String(units::format_size(spine_buffer)),
    );
    let cut_extra = r.size("switch.cut_payload_extra")?;
    if queue == QueueKind::PFabric && overflow == Overflow::CutPayload {
        return Err(r.err(
            "switch.overflow",
            "cut_payload is defined for the droptail queue (CP §4.2); pFabric evicts by priority instead",
        ));
    }
    let ecn_kind = r.choice("switch.ecn")?;
    let ecn_threshold = if ecn_kind == "threshold" {
        Some(r.size("switch.ecn_threshold")?)
    } else {
        None
    };
    let codel = match ecn_kind {
        "codel" => {
            let target = r.time("switch.codel_target")?;
            let interval = r.time("switch.codel_interval")?;
            for (key, t) in [
                ("switch.codel_target", target),
                ("switch.codel_interval", interval),
            ] {
                if t == 0 {
                    return Err(r.err(key, "CoDel's target and interval must be positive"));
                }
            }
            Some(CodelConfig {
                target,
                interval,
                mtu_bytes: 1538,
            })
        }
        _ => None,
    };
    if overflow == Overflow::SourceQuench && codel.is_none() && ecn_threshold.is_none() {
        return Err(r.err(
            "switch.overflow",
            "source_quench sends quenches when the ECN marker marks: set switch.ecn = \"codel\"",
        ));
    }
    let bandwidth = r.float_in("switch.fastlane_bandwidth", 0.0, 1.0)?;
    // §3.3.2: 2.5% of the port buffer (3.2 KB of 128 KB).
    let fl_buffer = r
        .opt_size("switch.fastlane_buffer")?
        .unwrap_or(buffer * 25 / 1000);
    r.record(
        "switch.fastlane_buffer",
        Value::String(units::format_size(fl_buffer)),
    );
    let strict = r.bool("switch.fastlane_strict")?;
    if overflow == Overflow::FastLane && fl_buffer < 64 {
        return Err(r.err(
            "switch.fastlane_buffer",
            "must hold at least one 64 B notification",
        ));
    }
    Ok(SwitchSpec {
        buffer,
        edge_buffer,
        spine_buffer,
        ecn_threshold,
        cut_extra,
        forwarding,
        queue,
        overflow,
        fastlane: FastLaneConfig {
            bandwidth_ppm: (bandwidth * 1e6).round() as u64,
            buffer: fl_buffer,
            strict,
        },
        codel,
        routes: r.routes(shape)?,
    })
}

/// One BDP of the longest host-to-host path, in segments: the base RTT (a full data
/// packet out and an ACK back, store-and-forward, no queueing) times the host link rate.
fn bdp_segments(t: &TopologySpec, mss: u32, header: u32) -> u32 {
    let (lr, ld, fr, fd) = (t.link_rate, t.link_delay, t.fabric_rate, t.fabric_delay);
    let fabric_hops = match t.shape {
        Shape::Star { .. } => 0,
        Shape::Dumbbell { .. } => 1,
        Shape::LeafSpine { racks, .. } => {
            if racks > 1 {
                2
            } else {
                0
            }
        }
        Shape::FatTree { .. } => 4,
    };
    let data = wire_bytes(mss + header, t.framing_bytes) as u64;
    let ack = wire_bytes(header, t.framing_bytes) as u64;
    let one_way = |bytes: u64| {
        2 * (units::serialization_ps(bytes, lr) + ld)
            + fabric_hops * (units::serialization_ps(bytes, fr) + fd)
    };
    let rtt = one_way(data) + one_way(ack);
    let bdp_bytes = (lr as u128 * rtt as u128 / (8 * units::PS_PER_S as u128)) as u64;
    // In full-size packets as they are on the wire (Turbo §5: "one BDP number of
    // packets, or 4" on this topology), not in payload bytes per MSS.
    bdp_bytes.div_ceil(data).max(1) as u32
}

fn read_transport(r: &mut Reader, topo: &TopologySpec) -> Result<TransportSpec, ScenarioError> {
    let kind = match r.choice("transport.kind")? {
        "pfabric" => TransportKind::PFabric,
        "dctcp" => TransportKind::Dctcp,
        "cubic" => TransportKind::Cubic,
        _ => TransportKind::Tcp,
    };
    let mss = r.uint("transport.mss", 64, 9_000)? as u32;
    let rto_min = r.time("transport.rto_min")?;
    if rto_min == 0 {
        return Err(r.err("transport.rto_min", "must be positive"));
    }
    let rto_init = r.opt_time_derived("transport.rto_init")?.unwrap_or(rto_min);
    r.record(
        "transport.rto_init",
        Value::String(units::format_time(rto_init)),
    );
    let rto_max = r.time("transport.rto_max")?;
    if rto_max < rto_min {
        return Err(r.err("transport.rto_max", "must not be below transport.rto_min"));
    }
    let rwnd = r.size("transport.rwnd")?;
    if rwnd < mss as u64 {
        return Err(r.err(
            "transport.rwnd",
            "must hold at least one segment (transport.mss)",
        ));
    }
    let header_bytes = r.uint("transport.header_bytes", 0, 1000)? as u32;
    let init_cwnd = if kind == TransportKind::PFabric && r.raw("transport.init_cwnd").is_none() {
        // pFabric §4.3: start at line rate.
        let w = bdp_segments(topo, mss, header_bytes);
        r.record("transport.init_cwnd", Value::Integer(w as i64));
        w
    } else {
        r.uint("transport.init_cwnd", 1, 1 << 20)? as u32
    };
    let max_cwnd = match (kind == TransportKind::PFabric)
        .then(|| r.opt_uint("transport.max_cwnd", 1))
        .transpose()?
        .flatten()
    {
        Some(m) => {
            if m < init_cwnd as u64 {
                return Err(r.err(
                    "transport.max_cwnd",
                    "must not be below transport.init_cwnd",
                ));
            }
            Some(m.min(u32::MAX as u64) as u32)
        }
        None if kind == TransportKind::PFabric && r.raw("transport.max_cwnd").is_none() => {
            let m = 2 * init_cwnd;
            r.record("transport.max_cwnd", Value::Integer(m as i64));
            Some(m)
        }
        None => None,
    };
    let (priority, probe_after) = if kind == TransportKind::PFabric {
        let p = match r.choice("transport.priority")? {
            "flow_size" => PriorityMode::FlowSize,
            _ => PriorityMode::Remaining,
        };
        (p, r.opt_uint("transport.probe_after", 1)?.map(|v| v as u32))
    } else {
        (PriorityMode::Remaining, None)
    };
    Ok(TransportSpec {
        kind,
        mss,
        header_bytes,
        init_cwnd,
        rwnd,
        per_ack_increase: r.choice("transport.cwnd_increase")? == "acks",
        cwnd_limited: r.bool("transport.cwnd_limited")?,
        ssthresh_from_cwnd: r.choice("transport.ssthresh_from")? == "cwnd",
        rto_min,
        rto_init,
        rto_max,
        dupack_threshold: r
            .opt_uint("transport.dupack_threshold", 1)?
            .map(|v| v as u32),
        max_reordering: r
            .opt_uint("transport.max_reordering", 1)?
            .map(|v| v.min(u32::MAX as u64) as u32),
        tso_defer: r.opt_time("transport.tso_defer")?,
        undo: r.bool("transport.undo")?,
        delayed_ack: r.opt_time("transport.delayed_ack")?,
        lost_retransmit: r.bool("transport.lost_retransmit")?,
        data_class: r.uint("transport.data_class", 0, 7)? as u8,
        ack_class: r.uint("transport.ack_class", 0, 7)? as u8,
        max_cwnd,
        ecn: r.bool("transport.ecn")?,
        ooo_option: r.bool("transport.ooo_option")?,
        priority,
        probe_after,
        rearm_rto: r.bool("transport.rearm_rto")?,
        dctcp_g: if kind == TransportKind::Dctcp {
            r.float_in("transport.dctcp_g", 0.0, 1.0)?
        } else {
            0.0
        },
        cp: r.bool("transport.cp")?,
    })
}

fn read_workload(r: &mut Reader, hosts: u32) -> Result<WorkloadSpec, ScenarioError> {
    let kind = r.choice("workload.kind")?;
    let host_in_range = |r: &Reader, key: &str, h: u64| -> Result<u32, ScenarioError> {
        if h >= hosts as u64 {
            Err(r.err_value(
                key,
                h,
                format!("no such host: the topology has hosts 0..{}", hosts - 1),
            ))
        } else {
            Ok(h as u32)
        }
    };
    Ok(match kind {
        "incast" => {
            let receiver = r.uint("workload.receiver", 0, u32::MAX as u64)?;
            let receiver = host_in_range(r, "workload.receiver", receiver)?;
            let all_to_all = r.choice("workload.pattern")? == "all_to_all";
            if all_to_all {
                for k in ["workload.receiver", "workload.senders"] {
                    if r.raw(k).is_some() {
                        return Err(r.err(k, "does not apply to workload.pattern = \"all_to_all\" (every host receives from all others)"));
                    }
                }
            }
            let sources = if all_to_all {
                if r.raw("workload.sources").is_some() {
                    return Err(r.err(
                        "workload.sources",
                        "does not apply to workload.pattern = \"all_to_all\"",
                    ));
                }
                Vec::new()
            } else {
                let s: Vec<u32> = r
                    .hosts("workload.sources", hosts)?
                    .into_iter()
                    .filter(|&h| h != receiver)
                    .collect();
                if s.is_empty() {
                    return Err(r.err("workload.sources", "no sender host other than the receiver"));
                }
                s
            };
            let senders = r.uint("workload.senders", 1, 1 << 20)? as u32;
            let size = r.positive_size("workload.size")?;
            let rounds = r.uint("workload.rounds", 1, 1 << 30)? as u32;
            let period = r.opt_time("workload.period")?;
            if period == Some(0) && rounds > 1 {
                // Every round would start at the same instant, all flows at once.
                return Err(r.err(
                    "workload.period",
                    "starts every round at the same instant: give a positive period, or `off` \
                     to start each round when the previous one has arrived",
                ));
            }
            WorkloadSpec::Incast {
                all_to_all,
                sources,
                receiver,
                senders,
                size,
                rounds,
                period,
                jitter: r.time("workload.jitter")?,
            }
        }
        "poisson" => {
            let load = r.load()?;
            let cdf = r.cdf("workload.cdf")?.expect("poisson has a default cdf");
            let sources = r.hosts("workload.sources", hosts)?;
            let destinations = r.hosts("workload.destinations", hosts)?;
            // Each source draws destinations until one is not itself.
            if let Some(&s) = sources
                .iter()
                .find(|&&s| destinations.iter().all(|&d| d == s))
            {
                return Err(r.err(
                    "workload.destinations",
                    format!("source {s} has no destination other than itself"),
                ));
            }
            WorkloadSpec::Poisson {
                load,
                cdf,
                sources,
                destinations,
                max_flows: r.opt_uint("workload.max_flows", 1)?,
            }
        }
        "request_response" | "partition_aggregate" => {
            let load = r.load()?;
            let queries = r.opt_uint("workload.queries", 1)?;
            let fanout = if kind == "partition_aggregate" {
                r.uint("workload.fanout", 1, 1 << 16)? as u32
            } else {
                1
            };
            let request_size = r.positive_size("workload.request_size")?;
            let response = match r.cdf("workload.cdf")? {
                Some(c) => ResponseSize::Cdf(c),
                None => ResponseSize::Fixed(r.positive_size("workload.response_size")?),
            };
            let clients = r.hosts("workload.clients", hosts)?;
            let workers = r.hosts("workload.workers", hosts)?;
            // Every client needs `fanout` workers other than itself.
            for &c in &clients {
                let avail = workers.iter().filter(|&&w| w != c).count();
                if avail < fanout as usize {
                    return Err(r.err_value(
                        "workload.fanout",
                        fanout,
                        format!("client {c} has only {avail} workers other than itself"),
                    ));
                }
            }
            WorkloadSpec::Query {
                load,
                queries,
                fanout,
                request_size,
                response,
                clients,
                workers,
            }
        }
        "short_long" => {
            let load = r.load()?;
            let short_fraction = r.float_in("workload.short_fraction", -1.0, 1.0)?;
            let clients = r.hosts("workload.clients", hosts)?;
            let workers = r.hosts("workload.workers", hosts)?;
            // The widest short query asks 160 KB / 2 KB = 80 distinct workers.
            let widest = crate::workload::short_long::MAX_FANOUT;
            if short_fraction > 0.0 {
                for &c in &clients {
                    let avail = workers.iter().filter(|&&w| w != c).count();
                    if avail < widest as usize {
                        return Err(r.err_value(
                            "workload.workers",
                            avail,
                            format!("client {c} has {avail} workers other than itself; short queries need up to {widest}"),
                        ));
                    }
                }
            } else if let Some(&c) = clients.iter().find(|&&c| workers.iter().all(|&w| w == c)) {
                // A query from it would have no flow and never complete.
                return Err(r.err(
                    "workload.workers",
                    format!("client {c} has no worker other than itself"),
                ));
            }
            WorkloadSpec::ShortLong {
                load,
                short_fraction,
                long_size: r.positive_size("workload.long_size")?,
                request_size: r.positive_size("workload.request_size")?,
                queries: r.opt_uint("workload.queries", 1)?,
                clients,
                workers,
            }
        }
        _ => {
            let flows = r.flows(hosts)?;
            if flows.is_empty() {
                return Err(r.err(
                    "workload.flows",
                    "a trace workload needs `flows` or `file` with at least one flow",
                ));
            }
            WorkloadSpec::Trace { flows }
        }
    })
}

fn read_background(r: &mut Reader, hosts: u32) -> Result<Option<BackgroundSpec>, ScenarioError> {
    let load = r
        .typed(
            "workload.background_load",
            |v| {
                if is_off(v) {
                    return Ok(None);
                }
                load_fraction(v)
                    .map(Some)
                    .map_err(|e| format!("{e} or `off`"))
            },
            |o| match o {
                Some(x) => Value::Float(*x),
                None => Value::String("off".into()),
            },
        )?
        .flatten();
    let Some(load) = load else {
        return Ok(None);
    };
    if hosts < 2 {
        return Err(r.err("workload.background_load", "needs at least two hosts"));
    }
    let cdf = r.cdf("workload.background_cdf")?.expect("has a default");
    let scale = r.float_in("workload.background_scale", 0.0, 1e6)?;
    let scale_above = r.size("workload.background_scale_above")?;
    Ok(Some(BackgroundSpec {
        load,
        cdf,
        scale,
        scale_above,
    }))
}

/// Applies one `--set section.key=value` override. The value is read as TOML when it
/// parses (numbers, booleans, quoted strings, arrays), otherwise as a bare string
/// (`10Gbps`, `off`).
pub fn apply_override(table: &mut Table, assignment: &str) -> Result<(), ScenarioError> {
    let (path, raw) = assignment
        .split_once('=')
        .ok_or_else(|| ScenarioError::new("--set", assignment, "expected key.path=value"))?;
    let path = path.trim();
    let raw = raw.trim();
    let (section, key) = path
        .split_once('.')
        .ok_or_else(|| ScenarioError::new(path, raw, "expected section.key (e.g. topology.k)"))?;
    if !KEYS.iter().any(|k| k.path == path) {
        return Err(ScenarioError::new(path, raw, unknown_key_message(path)));
    }
    let value = raw
        .parse::<Value>()
        .unwrap_or_else(|_| Value::String(raw.to_string()));
    let sect = table
        .entry(section.to_string())
        .or_insert_with(|| Value::Table(Table::new()));
    match sect {
        Value::Table(t) => {
            t.insert(key.to_string(), value);
            Ok(())
        }
        _ => Err(ScenarioError::new(section, "", "must be a table")),
    }
}

fn unknown_key_message(path: &str) -> String {
    // Suggest the closest known key: same leaf name in another section, or same section.
    let leaf = path.rsplit('.').next().unwrap_or(path);
    let near: Vec<&str> = KEYS
        .iter()
        .filter(|k| k.path.ends_with(&format!(".{leaf}")) || edit_distance(k.path, path) <= 2)
        .map(|k| k.path)
        .collect();
    if near.is_empty() {
        "unknown key (see docs/reference.md)".to_string()
    } else {
        format!("unknown key; did you mean {}?", near.join(" or "))
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

// ---------------------------------------------------------------------------------------
// The reader: typed access with defaults, recording the resolved value of every key.

struct Reader<'a> {
    table: &'a Table,
    base_dir: Option<PathBuf>,
    resolved: Vec<(&'static str, Value)>,
}

impl<'a> Reader<'a> {
    fn new(table: &'a Table, base_dir: Option<&Path>) -> Result<Self, ScenarioError> {
        let r = Reader {
            table,
            base_dir: base_dir.map(Path::to_path_buf),
            resolved: Vec::new(),
        };
        r.check_known_keys()?;
        Ok(r)
    }

    /// Every key present must be known and must apply to its section's kind.
    fn check_known_keys(&self) -> Result<(), ScenarioError> {
        for (section, v) in self.table {
            let t = match v {
                Value::Table(t) => t,
                _ => {
                    return Err(ScenarioError::new(section, v, "expected a [section] table"));
                }
            };
            if !KEYS
                .iter()
                .any(|k| k.path.starts_with(&format!("{section}.")))
            {
                return Err(ScenarioError::new(
                    section,
                    "",
                    "unknown section (known: topology, switch, host, transport, workload, run)",
                ));
            }
            let kind = self.kind_of(section);
            for (key, value) in t {
                let path = format!("{section}.{key}");
                let def = KEYS
                    .iter()
                    .find(|k| k.path == path)
                    .ok_or_else(|| ScenarioError::new(&path, value, unknown_key_message(&path)))?;
                if let Some(kind) = &kind {
                    if !def.kinds.is_empty() && !def.kinds.contains(&kind.as_str()) {
                        return Err(ScenarioError::new(
                            &path,
                            value,
                            format!(
                                "does not apply to {section}.kind = \"{kind}\" (applies to: {})",
                                def.kinds.join(", ")
                            ),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    fn kind_of(&self, section: &str) -> Option<String> {
        let path = format!("{section}.kind");
        let def = KEYS.iter().find(|k| k.path == path)?;
        match self.raw(&path) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => None, // reported when the kind itself is read
            None => Some(def.default.to_string()),
        }
    }

    fn raw(&self, path: &str) -> Option<&'a Value> {
        let (section, key) = path.split_once('.')?;
        self.table.get(section)?.as_table()?.get(key)
    }

    /// The default text for `path`, taking kind-specific presets into account.
    fn default_text(&self, path: &str) -> &'static str {
        let section = path.split('.').next().unwrap_or("");
        if let Some(kind) = self.kind_of(section) {
            // Presets are keyed by the topology or workload kind.
            for &(k, p, v) in KIND_DEFAULTS {
                if k == kind && p == path {
                    return v;
                }
            }
        }
        keydef(path).default
    }

    fn err(&self, path: &str, message: impl Into<String>) -> ScenarioError {
        let value = match self.raw(path) {
            Some(v) => v.to_string(),
            None => self.default_text(path).to_string(),
        };
        ScenarioError::new(path, value, message)
    }

    fn err_value(
        &self,
        path: &str,
        value: impl fmt::Display,
        message: impl Into<String>,
    ) -> ScenarioError {
        ScenarioError::new(path, value, message)
    }

    fn record(&mut self, path: &'static str, v: Value) {
        let path = keydef(path).path;
        self.resolved.retain(|(p, _)| *p != path);
        self.resolved.push((path, v));
    }

    /// The value as given, or the default parsed as a bare string; None when neither.
    fn value(&self, path: &str) -> Option<Value> {
        if let Some(v) = self.raw(path) {
            return Some(v.clone());
        }
        let d = self.default_text(path);
        if d.is_empty() {
            None
        } else {
            Some(
                d.parse::<Value>()
                    .unwrap_or_else(|_| Value::String(d.to_string())),
            )
        }
    }

    fn typed<T>(
        &mut self,
        path: &'static str,
        parse: impl Fn(&Value) -> Result<T, String>,
        canon: impl Fn(&T) -> Value,
    ) -> Result<Option<T>, ScenarioError> {
        let Some(v) = self.value(path) else {
            return Ok(None);
        };
        let t = parse(&v).map_err(|m| ScenarioError::new(path, &v, m))?;
        self.record(path, canon(&t));
        Ok(Some(t))
    }

    fn choice(&mut self, path: &'static str) -> Result<&'static str, ScenarioError> {
        let Ty::Choice(options) = keydef(path).ty else {
            unreachable!("{path} is not a choice")
        };
        let v = self
            .typed(
                path,
                |v| match v {
                    Value::String(s) => options
                        .iter()
                        .find(|o| *o == s)
                        .copied()
                        .ok_or_else(|| format!("must be one of: {}", options.join(", "))),
                    _ => Err(format!("must be a string, one of: {}", options.join(", "))),
                },
                |s| Value::String(s.to_string()),
            )?
            .expect("choices have defaults");
        Ok(v)
    }

    fn uint(&mut self, path: &'static str, min: u64, max: u64) -> Result<u64, ScenarioError> {
        Ok(self
            .typed(path, |v| int_in(v, min, max), |&i| Value::Integer(i as i64))?
            .expect("integers have defaults"))
    }

    fn opt_uint(&mut self, path: &'static str, min: u64) -> Result<Option<u64>, ScenarioError> {
        let v = self.typed(
            path,
            |v| {
                if is_off(v) {
                    Ok(None)
                } else {
                    int_in(v, min, i64::MAX as u64).map(Some)
                }
            },
            |o| o.map_or(Value::String("off".into()), |i| Value::Integer(i as i64)),
        )?;
        Ok(v.flatten())
    }

    fn bool(&mut self, path: &'static str) -> Result<bool, ScenarioError> {
        Ok(self
            .typed(
                path,
                |v| match v {
                    Value::Boolean(b) => Ok(*b),
                    _ => Err("must be true or false".into()),
                },
                |&b| Value::Boolean(b),
            )?
            .expect("booleans have defaults"))
    }

    fn load(&mut self) -> Result<f64, ScenarioError> {
        let v = self
            .typed("workload.load", load_fraction, |&x| Value::Float(x))?
            .expect("load has a default");
        Ok(v)
    }

    /// A number in (lo, hi]; lo < 0 means [0, hi].
    fn float_in(&mut self, path: &'static str, lo: f64, hi: f64) -> Result<f64, ScenarioError> {
        let v = self
            .typed(
                path,
                |v| {
                    let x = match v {
                        Value::Float(f) => *f,
                        Value::Integer(i) => *i as f64,
                        _ => return Err("must be a number".into()),
                    };
                    let ok = if lo < 0.0 { x >= 0.0 } else { x > lo };
                    if ok && x <= hi {
                        Ok(x)
                    } else if lo < 0.0 {
                        Err(format!("must be in [0, {hi}]"))
                    } else {
                        Err(format!("must be in ({lo}, {hi}]"))
                    }
                },
                |&x| Value::Float(x),
            )?
            .expect("numbers have defaults");
        Ok(v)
    }

    fn unit<T: Copy>(
        &mut self,
        path: &'static str,
        parse: fn(&str) -> Result<T, String>,
        from_int: fn(i64) -> Result<T, String>,
        fmt: fn(T) -> String,
    ) -> Result<Option<T>, ScenarioError> {
        self.typed(
            path,
            |v| match v {
                Value::String(s) => parse(s),
                Value::Integer(i) => from_int(*i),
                _ => Err("expected a string with a unit".into()),
            },
            |&t| Value::String(fmt(t)),
        )
    }

    fn opt_size(&mut self, path: &'static str) -> Result<Option<u64>, ScenarioError> {
        self.unit(path, units::parse_size, nonneg, units::format_size)
    }

    fn size(&mut self, path: &'static str) -> Result<u64, ScenarioError> {
        Ok(self.opt_size(path)?.expect("sizes have defaults"))
    }

    fn positive_size(&mut self, path: &'static str) -> Result<u64, ScenarioError> {
        let s = self.size(path)?;
        if s == 0 {
            return Err(self.err(path, "must be positive"));
        }
        Ok(s)
    }

    fn opt_rate(&mut self, path: &'static str) -> Result<Option<u64>, ScenarioError> {
        self.unit(
            path,
            units::parse_rate,
            |i| {
                if i > 0 {
                    units::check_rate(i as u64)
                } else {
                    Err("a rate must be positive".into())
                }
            },
            units::format_rate,
        )
    }

    fn rate(&mut self, path: &'static str) -> Result<u64, ScenarioError> {
        Ok(self.opt_rate(path)?.expect("rates have defaults"))
    }

    /// A time with no "off": absent means "derive it".
    fn opt_time_derived(&mut self, path: &'static str) -> Result<Option<Ps>, ScenarioError> {
        self.unit(path, units::parse_time, zero_only, units::format_time)
    }

    fn time(&mut self, path: &'static str) -> Result<Ps, ScenarioError> {
        Ok(self.opt_time_derived(path)?.expect("times have defaults"))
    }

    fn opt_time(&mut self, path: &'static str) -> Result<Option<Ps>, ScenarioError> {
        let v = self.typed(
            path,
            |v| {
                if is_off(v) {
                    return Ok(None);
                }
                match v {
                    Value::String(s) => units::parse_time(s).map(Some),
                    Value::Integer(i) => zero_only(*i).map(Some),
                    _ => Err("expected a time (`10us`) or `off`".into()),
                }
            },
            |o| Value::String(o.map_or("off".to_string(), units::format_time)),
        )?;
        Ok(v.flatten())
    }

    fn resolve_path(&self, p: &str) -> PathBuf {
        let pb = PathBuf::from(p);
        match &self.base_dir {
            Some(b) if pb.is_relative() => b.join(pb),
            _ => pb,
        }
    }

    fn cdf(&mut self, path: &'static str) -> Result<Option<Cdf>, ScenarioError> {
        let Some(v) = self.value(path) else {
            return Ok(None);
        };
        let Value::String(name) = &v else {
            return Err(ScenarioError::new(
                path,
                &v,
                "expected a CDF name or file path",
            ));
        };
        let cdf = match Cdf::builtin(name) {
            Some(c) => c,
            None => {
                let p = self.resolve_path(name);
                let text = std::fs::read_to_string(&p).map_err(|e| {
                    ScenarioError::new(
                        path,
                        &v,
                        format!(
                            "not a built-in CDF ({}) and cannot read {}: {e}",
                            Cdf::BUILTINS.join(", "),
                            p.display()
                        ),
                    )
                })?;
                Cdf::parse(&text).map_err(|m| ScenarioError::new(path, &v, m))?
            }
        };
        self.record(path, v.clone());
        Ok(Some(cdf))
    }

    fn hosts(&mut self, path: &'static str, hosts: u32) -> Result<Vec<u32>, ScenarioError> {
        let Some(v) = self.raw(path) else {
            return Ok((0..hosts).collect());
        };
        let Value::Array(a) = v else {
            return Err(ScenarioError::new(
                path,
                v,
                "expected a list of host indices",
            ));
        };
        let mut out = Vec::with_capacity(a.len());
        for x in a {
            match x {
                Value::Integer(i) if *i >= 0 && (*i as u64) < hosts as u64 => out.push(*i as u32),
                _ => {
                    return Err(ScenarioError::new(
                        path,
                        x,
                        format!("not a host index (the topology has hosts 0..{})", hosts - 1),
                    ))
                }
            }
        }
        if out.is_empty() {
            return Err(ScenarioError::new(path, v, "must name at least one host"));
        }
        // Rates are per listed host and workers are drawn as distinct: a repeat would
        // silently double a host's load.
        let mut seen = std::collections::BTreeSet::new();
        if let Some(&d) = out.iter().find(|&&h| !seen.insert(h)) {
            return Err(ScenarioError::new(
                path,
                v,
                format!("host {d} is listed twice"),
            ));
        }
        self.record(path, v.clone());
        Ok(out)
    }

    fn flows(&mut self, hosts: u32) -> Result<Vec<FlowSpec>, ScenarioError> {
        let mut flows = Vec::new();
        if let Some(v) = self.raw("workload.flows") {
            let Value::Array(a) = v else {
                return Err(ScenarioError::new(
                    "workload.flows",
                    v,
                    "expected [[workload.flows]] tables",
                ));
            };
            for (i, f) in a.iter().enumerate() {
                flows.push(flow_from_value(f, i, hosts)?);
            }
            self.record("workload.flows", v.clone());
        }
        if let Some(v) = self.raw("workload.file") {
            let Value::String(name) = v else {
                return Err(ScenarioError::new(
                    "workload.file",
                    v,
                    "expected a file path",
                ));
            };
            let p = self.resolve_path(name);
            let text = std::fs::read_to_string(&p).map_err(|e| {
                ScenarioError::new(
                    "workload.file",
                    v,
                    format!("cannot read {}: {e}", p.display()),
                )
            })?;
            flows.extend(
                parse_trace_csv(&text, hosts)
                    .map_err(|m| ScenarioError::new("workload.file", v, m))?,
            );
            self.record("workload.file", v.clone());
        }
        Ok(flows)
    }

    fn routes(&mut self, shape: &Shape) -> Result<Vec<RouteSpec>, ScenarioError> {
        const KEY: &str = "switch.routes";
        let Some(v) = self.raw(KEY) else {
            return Ok(Vec::new());
        };
        let Value::Array(a) = v else {
            return Err(ScenarioError::new(
                KEY,
                v,
                "expected [[switch.routes]] tables",
            ));
        };
        let linked = shape.neighbours();
        let routes = a
            .iter()
            .enumerate()
            .map(|(i, t)| route_from_value(t, i, shape, &linked))
            .collect::<Result<Vec<_>, _>>()?;
        self.record(KEY, v.clone());
        Ok(routes)
    }

    /// The resolved scenario as TOML, in [`KEYS`] order.
    fn render(&self) -> String {
        let mut out = String::from(
            "# Resolved by spillway: every key that applies, with its effective value.\n",
        );
        let mut section = "";
        for def in KEYS {
            let Some((_, v)) = self.resolved.iter().find(|(p, _)| *p == def.path) else {
                continue;
            };
            let (s, key) = def.path.split_once('.').unwrap();
            if s != section {
                out.push_str(&format!("\n[{s}]\n"));
                section = s;
            }
            if let (Ty::Flows | Ty::Routes, Value::Array(a)) = (def.ty, v) {
                // Inline tables keep the resolved file in one section.
                out.push_str(&format!("{key} = [\n"));
                for f in a {
                    out.push_str(&format!("  {},\n", inline_table(f)));
                }
                out.push_str("]\n");
            } else {
                out.push_str(&format!("{key} = {v}\n"));
            }
        }
        out
    }
}

fn inline_table(v: &Value) -> String {
    match v {
        Value::Table(t) => {
            let parts: Vec<String> = t.iter().map(|(k, v)| format!("{k} = {v}")).collect();
            format!("{{ {} }}", parts.join(", "))
        }
        other => other.to_string(),
    }
}

/// A load: a fraction of link capacity in (0, 1].
fn load_fraction(v: &Value) -> Result<f64, String> {
    let x = match v {
        Value::Float(f) => *f,
        Value::Integer(i) => *i as f64,
        _ => return Err("must be a number in (0, 1]".into()),
    };
    if x > 0.0 && x <= 1.0 {
        Ok(x)
    } else {
        Err("must be in (0, 1]".into())
    }
}

fn is_off(v: &Value) -> bool {
    matches!(v, Value::String(s) if s == "off") || matches!(v, Value::Boolean(false))
}

fn int_in(v: &Value, min: u64, max: u64) -> Result<u64, String> {
    match v {
        Value::Integer(i) if *i >= 0 && (*i as u64) >= min && (*i as u64) <= max => Ok(*i as u64),
        Value::Integer(_) => Err(format!("must be an integer in {min}..={max}")),
        _ => Err("must be an integer".into()),
    }
}

fn nonneg(i: i64) -> Result<u64, String> {
    if i >= 0 {
        units::check_size(i as u64)
    } else {
        Err("must not be negative".into())
    }
}

fn zero_only(i: i64) -> Result<Ps, String> {
    if i == 0 {
        Ok(0)
    } else {
        Err("a time needs a unit (ps, ns, us, ms, s)".into())
    }
}

fn route_from_value(
    v: &Value,
    i: usize,
    shape: &Shape,
    linked: &std::collections::HashSet<(u32, u32)>,
) -> Result<RouteSpec, ScenarioError> {
    let key = format!("switch.routes[{i}]");
    let Value::Table(t) = v else {
        return Err(ScenarioError::new(
            &key,
            v,
            "expected a table {at, to, via, weights}",
        ));
    };
    let field = |k: &str| (format!("{key}.{k}"), t.get(k));
    for k in t.keys() {
        if !["at", "to", "via", "weights"].contains(&k.as_str()) {
            return Err(ScenarioError::new(
                &format!("{key}.{k}"),
                &t[k],
                "unknown field (expected at, to, via, weights)",
            ));
        }
    }
    let hosts = shape.host_count();
    let node = |k: &str, x: &Value| -> Result<u32, ScenarioError> {
        let found = match x {
            Value::String(name) => shape.node_named(name),
            Value::Integer(n) if *n >= 0 && (*n as u64) < shape.node_count() as u64 => {
                Some(*n as u32)
            }
            _ => None,
        };
        found.ok_or_else(|| {
            ScenarioError::new(
                k,
                x,
                format!(
                    "not a node of this topology (names like {} and {})",
                    shape.node_name(0),
                    shape.node_name(hosts)
                ),
            )
        })
    };
    let (k, at) = field("at");
    let at = node(&k, at.ok_or_else(|| ScenarioError::new(&k, "", "missing"))?)?;
    if at < hosts {
        return Err(ScenarioError::new(
            &k,
            &t["at"],
            "must be a switch; hosts do not forward",
        ));
    }
    let list = |k: &str, x: Option<&Value>| -> Result<Vec<Value>, ScenarioError> {
        match x {
            None => Ok(Vec::new()),
            Some(Value::Array(a)) if !a.is_empty() => Ok(a.clone()),
            Some(x) => Err(ScenarioError::new(k, x, "expected a non-empty list")),
        }
    };
    let (k, to) = field("to");
    let mut dsts = Vec::new();
    for x in list(&k, to)? {
        match x {
            Value::Integer(h) if h >= 0 && (h as u64) < hosts as u64 => dsts.push(h as u32),
            _ => {
                return Err(ScenarioError::new(
                    &k,
                    &x,
                    format!("not a host index (the topology has hosts 0..{})", hosts - 1),
                ))
            }
        }
    }
    let (k, via) = field("via");
    if via.is_none() {
        return Err(ScenarioError::new(
            &k,
            "",
            "missing: the neighbours to forward to",
        ));
    }
    let via_values = list(&k, via)?;
    let via = via_values
        .iter()
        .map(|x| node(&k, x))
        .collect::<Result<Vec<_>, _>>()?;
    for (x, &v) in via_values.iter().zip(&via) {
        if !linked.contains(&(at, v)) {
            return Err(ScenarioError::new(
                &k,
                x,
                format!(
                    "{} is not linked to {}",
                    shape.node_name(v),
                    shape.node_name(at)
                ),
            ));
        }
        // A host only receives: forwarding to one is right only for its own packets.
        if v < hosts && (dsts.is_empty() || dsts.iter().any(|&d| d != v)) {
            return Err(ScenarioError::new(
                &k,
                x,
                format!(
                    "{} is a host, and hosts do not forward: `to` may name only it",
                    shape.node_name(v)
                ),
            ));
        }
    }
    let (k, w) = field("weights");
    let weights = match w {
        None => None,
        Some(x) => {
            let ws = list(&k, Some(x))?
                .iter()
                .map(|w| match w {
                    Value::Float(f) if *f >= 0.0 && f.is_finite() => Ok(*f),
                    Value::Integer(n) if *n >= 0 => Ok(*n as f64),
                    _ => Err(ScenarioError::new(
                        &k,
                        w,
                        "weights are non-negative numbers",
                    )),
                })
                .collect::<Result<Vec<_>, _>>()?;
            if ws.len() != via.len() {
                return Err(ScenarioError::new(
                    &k,
                    x,
                    format!("needs one weight per `via` entry ({})", via.len()),
                ));
            }
            let sum: f64 = ws.iter().sum();
            if sum <= 0.0 || !sum.is_finite() {
                return Err(ScenarioError::new(
                    &k,
                    x,
                    "at least one weight must be positive, and their sum finite",
                ));
            }
            Some(ws)
        }
    };
    Ok(RouteSpec {
        at,
        to: dsts,
        via,
        weights,
    })
}

fn flow_from_value(f: &Value, i: usize, hosts: u32) -> Result<FlowSpec, ScenarioError> {
    let key = format!("workload.flows[{i}]");
    let Value::Table(t) = f else {
        return Err(ScenarioError::new(
            &key,
            f,
            "expected a table {src, dst, size, start}",
        ));
    };
    for k in t.keys() {
        if !["src", "dst", "size", "start"].contains(&k.as_str()) {
            return Err(ScenarioError::new(
                &format!("{key}.{k}"),
                &t[k],
                "unknown key (src, dst, size, start)",
            ));
        }
    }
    let host = |name: &str| -> Result<u32, ScenarioError> {
        match t.get(name) {
            Some(Value::Integer(h)) if *h >= 0 && (*h as u64) < hosts as u64 => Ok(*h as u32),
            Some(v) => Err(ScenarioError::new(
                &format!("{key}.{name}"),
                v,
                format!("not a host index (the topology has hosts 0..{})", hosts - 1),
            )),
            None => Err(ScenarioError::new(&format!("{key}.{name}"), "", "missing")),
        }
    };
    let src = host("src")?;
    let dst = host("dst")?;
    if src == dst {
        return Err(ScenarioError::new(
            &format!("{key}.dst"),
            dst,
            "a flow needs two different hosts",
        ));
    }
    let size = match t.get("size") {
        Some(Value::Integer(s)) if *s > 0 => units::check_size(*s as u64)
            .map_err(|m| ScenarioError::new(&format!("{key}.size"), s, m))?,
        Some(Value::String(s)) => units::parse_size(s)
            .and_then(|v| {
                if v > 0 {
                    Ok(v)
                } else {
                    Err("must be positive".into())
                }
            })
            .map_err(|m| ScenarioError::new(&format!("{key}.size"), s, m))?,
        Some(v) => {
            return Err(ScenarioError::new(
                &format!("{key}.size"),
                v,
                "must be a positive size",
            ))
        }
        None => return Err(ScenarioError::new(&format!("{key}.size"), "", "missing")),
    };
    let start = match t.get("start") {
        None => 0,
        Some(Value::Integer(0)) => 0,
        Some(Value::String(s)) => {
            units::parse_time(s).map_err(|m| ScenarioError::new(&format!("{key}.start"), s, m))?
        }
        Some(v) => {
            return Err(ScenarioError::new(
                &format!("{key}.start"),
                v,
                "must be a time (`10us`)",
            ))
        }
    };
    Ok(FlowSpec {
        src,
        dst,
        size,
        start,
    })
}

/// Trace CSV: header `src,dst,size_bytes,start_us`, one flow per line.
pub fn parse_trace_csv(text: &str, hosts: u32) -> Result<Vec<FlowSpec>, String> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (_, header) = lines.next().ok_or("empty trace file")?;
    let cols: Vec<&str> = header.split(',').map(str::trim).collect();
    if cols != ["src", "dst", "size_bytes", "start_us"] {
        return Err(format!(
            "header must be src,dst,size_bytes,start_us, found {header}"
        ));
    }
    let mut flows = Vec::new();
    for (n, line) in lines {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let bad = |what: &str| format!("line {}: {what}: {line}", n + 1);
        if f.len() != 4 {
            return Err(bad("expected 4 fields"));
        }
        let src: u32 = f[0].parse().map_err(|_| bad("src is not a host index"))?;
        let dst: u32 = f[1].parse().map_err(|_| bad("dst is not a host index"))?;
        if src >= hosts || dst >= hosts {
            return Err(bad(&format!("no such host (hosts 0..{})", hosts - 1)));
        }
        if src == dst {
            return Err(bad("src equals dst"));
        }
        let size: u64 = f[2]
            .parse()
            .map_err(|_| bad("size_bytes is not a positive integer"))?;
        if size == 0 {
            return Err(bad("size_bytes must be positive"));
        }
        units::check_size(size).map_err(|m| bad(&format!("size_bytes: {m}")))?;
        let start_us: f64 = f[3].parse().map_err(|_| bad("start_us is not a number"))?;
        if !(start_us >= 0.0 && start_us.is_finite()) {
            return Err(bad("start_us must be a non-negative number"));
        }
        if start_us * units::PS_PER_US as f64 > units::MAX_TIME as f64 {
            return Err(bad(
                "start_us is later than 1 day, the longest time a scenario may give",
            ));
        }
        let start = (start_us * units::PS_PER_US as f64).round() as Ps;
        flows.push(FlowSpec {
            src,
            dst,
            size,
            start,
        });
    }
    Ok(flows)
}

/// The reference page for every key, generated from [`KEYS`] (docs/reference.md).
pub fn reference_markdown() -> String {
    let mut out = String::from(
        "# Scenario reference\n\n\
         Generated from `crates/spillway-core/src/scenario.rs` by `spillway reference`; do not edit by hand.\n\n\
         Sizes: `B`, `KB` = 1024 B (`KiB` too), `MB`, `GB`. Rates are decimal: `10Gbps` = 1e10 bit/s. \
         Times: `ps`, `ns`, `us`, `ms`, `s`. A key that does not apply to the chosen kind is refused.\n\n\
         ## Limits\n\n\
         Simulated time is an integer number of picoseconds in 64 bits (about 213 days), and every \
         run's arithmetic stays inside it: any time a scenario gives (every time key, a trace flow's \
         start) is at most 1 day (`86400s`); rates are 1 Kbps to 100 Tbps; sizes (buffers, flows, \
         CDF points) at most 1024GB (2^40 B). The clock's horizon is 2^62 ps (about 53 days): a run with no \
         `run.duration` that gets there stops with `stop_reason = \"horizon\"`. Every buffer (switch \
         ports, host NICs) must hold one full-size frame. Open-loop workloads (`poisson`, \
         `request_response`, `partition_aggregate`, `short_long`) need `run.duration` or their \
         count limit (`max_flows`, `queries`).\n",
    );
    let mut section = "";
    for k in KEYS {
        let s = k.path.split('.').next().unwrap();
        if s != section {
            out.push_str(&format!(
                "\n## [{s}]\n\n| key | type | default | applies to | meaning |\n|---|---|---|---|---|\n"
            ));
            section = s;
        }
        let mut default = if k.default.is_empty() {
            "—".to_string()
        } else {
            format!("`{}`", k.default)
        };
        for &(kind, p, v) in KIND_DEFAULTS {
            if p == k.path {
                default.push_str(&format!("; {kind}: `{v}`"));
            }
        }
        let applies = if k.kinds.is_empty() {
            "all".to_string()
        } else {
            k.kinds.join(", ")
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            k.path,
            k.ty.describe(),
            default,
            applies,
            k.doc
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Scenario, ScenarioError> {
        Scenario::parse(text, &[], None)
    }

    #[test]
    fn defaults_resolve() {
        let s = parse("").unwrap();
        assert_eq!(s.topology.link_rate, 10_000_000_000);
        assert_eq!(s.switch.buffer, 131_072);
        assert_eq!(s.transport.rto_init, s.transport.rto_min);
        assert!(s.resolved.contains("[topology]"));
        // The resolved text parses back to the same scenario.
        let again = parse(&s.resolved).unwrap();
        assert_eq!(again.resolved, s.resolved);
    }

    #[test]
    fn presets_fill_in_paper_parameters() {
        let s = parse("[topology]\nkind = \"pfabric144\"").unwrap();
        assert_eq!(s.host_count(), 144);
        assert_eq!(s.topology.fabric_rate, 40_000_000_000);
        assert_eq!(s.topology.link_delay, 200_000);
        let d = parse("[topology]\nkind = \"detail96\"").unwrap();
        assert_eq!(d.host_count(), 96);
        assert_eq!(d.topology.link_rate, 1_000_000_000);
    }

    #[test]
    fn unknown_and_misplaced_keys_are_named() {
        let e = parse("[switch]\nbufer = \"1KB\"").unwrap_err();
        assert_eq!(e.key, "switch.bufer");
        assert!(e.message.contains("switch.buffer"), "{e}");
        let e = parse("[topology]\nkind = \"star\"\nk = 8").unwrap_err();
        assert_eq!(e.key, "topology.k");
        assert!(e.message.contains("does not apply"));
        let e = parse("[topology]\nlink_rate = \"10GB\"").unwrap_err();
        assert_eq!(e.key, "topology.link_rate");
        assert_eq!(e.value, "\"10GB\"");
        let e = parse("[topology]\nkind = \"fat_tree\"\nk = 7").unwrap_err();
        assert_eq!(e.key, "topology.k");
    }

    #[test]
    fn overrides_apply_and_validate() {
        let s = Scenario::parse(
            "",
            &[
                "workload.senders=64".into(),
                "topology.link_rate=1Gbps".into(),
            ],
            None,
        )
        .unwrap();
        assert!(matches!(
            s.workload,
            WorkloadSpec::Incast { senders: 64, .. }
        ));
        assert_eq!(s.topology.link_rate, 1_000_000_000);
        let e = Scenario::parse("", &["transport.dupack_threshold=-1".into()], None).unwrap_err();
        assert_eq!(e.key, "transport.dupack_threshold");
        let e = Scenario::parse("", &["nonsense".into()], None).unwrap_err();
        assert_eq!(e.key, "--set");
    }

    #[test]
    fn reference_lists_every_key() {
        let r = reference_markdown();
        for k in KEYS {
            assert!(r.contains(&format!("`{}`", k.path)));
        }
    }

    /// Turbo §5: pFabric's "initial CWND of one BDP number of packets, or 4" on this
    /// topology: the BDP (10 Gbps x a full packet's and an ACK's RTT) is 6040 B, 3.93
    /// packets of 1538 B on the wire (it was divided by the 1460 B payload: 5).
    #[test]
    fn pfabric_bdp_is_counted_in_packets_on_the_wire() {
        let s =
            parse("[topology]\nkind = \"pfabric144\"\n[transport]\nkind = \"pfabric\"").unwrap();
        assert_eq!(s.transport.init_cwnd, 4);
        assert_eq!(s.transport.max_cwnd, Some(8));
    }

    /// Only pFabric's window is capped: elsewhere the key did nothing, silently.
    #[test]
    fn max_cwnd_is_refused_where_it_does_nothing() {
        for kind in ["tcp", "cubic", "dctcp"] {
            let e = parse(&format!("[transport]\nkind = \"{kind}\"\nmax_cwnd = 20")).unwrap_err();
            assert_eq!(e.key, "transport.max_cwnd", "{kind}");
        }
        assert!(parse("[transport]\nkind = \"pfabric\"\nmax_cwnd = 20").is_ok());
    }
}
