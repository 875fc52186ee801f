//! Every scenario key, its type, default and meaning, defined once in [`KEYS`].

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
    IntOrAuto,
    Bool,
    Text,
    HostList,
    Flows,
    Routes,
    Links,
    FloatOrOff,
    SizeOrOff,
    SizeList,
    IntList,
    RateSizes,
}

impl Ty {
    pub(super) fn describe(&self) -> String {
        match self {
            Ty::Choice(c) => c.join(" \\| "),
            Ty::Int => "integer".into(),
            Ty::Float => "number".into(),
            Ty::Size => "size (`1460`, `128KB`)".into(),
            Ty::Rate => "rate (`10Gbps`)".into(),
            Ty::Time => "time (`1us`, `10ms`)".into(),
            Ty::TimeOrOff => "time or `off`".into(),
            Ty::IntOrOff => "integer or `off`".into(),
            Ty::IntOrAuto => "integer or `auto`".into(),
            Ty::Bool => "boolean".into(),
            Ty::Text => "string".into(),
            Ty::HostList => "list of host indices".into(),
            Ty::Flows => "array of tables `{src, dst, size, start}`".into(),
            Ty::Routes => "array of tables `{at, to, via, weights}`".into(),
            Ty::Links => "array of tables `{a, b, rate, delay}`".into(),
            Ty::FloatOrOff => "number or `off`".into(),
            Ty::SizeOrOff => "size or `off`".into(),
            Ty::SizeList => "list of sizes (`[\"16KB\", \"64KB\"]`)".into(),
            Ty::RateSizes => "table of rate = size (`{ \"40Gbps\" = \"120KB\" }`)".into(),
            Ty::IntList => "list of integers".into(),
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

pub(super) const LEAF_SPINE_KINDS: &[&str] = &["leaf_spine", "pfabric144", "detail96"];

/// The shapes built from a few numbers (not a graph given link by link).
pub(super) const SHAPED_KINDS: &[&str] = &[
    "star",
    "dumbbell",
    "leaf_spine",
    "fat_tree",
    "clos",
    "pfabric144",
    "detail96",
];

/// The shapes with racks of hosts under a leaf (rack switch).
pub(super) const RACK_KINDS: &[&str] = &["leaf_spine", "clos", "pfabric144", "detail96"];

pub(super) const QUERY_KINDS: &[&str] = &["request_response", "partition_aggregate"];

/// The query workloads with per-query draws and rates (DeTail §8.1).
pub(super) const RATE_KINDS: &[&str] = &["request_response", "partition_aggregate", "sequential"];

pub(super) const REQUEST_KINDS: &[&str] = &[
    "request_response",
    "partition_aggregate",
    "short_long",
    "sequential",
];

pub(super) const LOAD_KINDS: &[&str] = &[
    "poisson",
    "request_response",
    "partition_aggregate",
    "short_long",
    "sequential",
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
    key!("topology.kind", Ty::Choice(&["star", "dumbbell", "leaf_spine", "fat_tree", "clos", "graph", "pfabric144", "detail96"]), "star", &[],
        "Topology shape. `pfabric144` and `detail96` are `leaf_spine` with the papers' parameters as defaults; `clos` is a folded Clos of pods and planes (Meta's data center fabric); `graph` is any fabric given link by link (`file`, or `links` and `switches`)."),
    key!("topology.file", Ty::Text, "", &["graph"],
        "The HPCC simulator's topology.txt (relative to the scenario): `nodes switches links`, the switch ids, then `a b rate delay error_rate` a line (`0 4 10000000000bps 1000ns 0`). Hosts are numbered 0.. in id order, switches after; routes are shortest paths, ECMP over every equal one. Not beside `links`."),
    key!("topology.switches", Ty::IntList, "", &["graph"],
        "With `links`: the ids that are switches; every other id is a host with exactly one link."),
    key!("topology.links", Ty::Links, "", &["graph"],
        "`[[topology.links]]` with `a`, `b` (node ids), `rate` and `delay`: the graph given in the scenario, as `file` gives it; ids run 0 to the largest named."),
    key!("topology.hosts", Ty::Int, "16", &["star", "dumbbell"],
        "Number of hosts. `dumbbell`: half on each side (must be even). At most 65,536 (`star`) or 131,070 (`dumbbell`): a port index is 16 bits."),
    key!("topology.k", Ty::Int, "8", &["fat_tree"],
        "Fat-tree arity (even, 2 to 64): k pods, k³/4 hosts, k²/4 core switches. k=8 is FastLane's 128-server fat-tree."),
    key!("topology.racks", Ty::Int, "4", LEAF_SPINE_KINDS, "Racks (leaf switches). Hosts × switches is at most 2³⁰ (4 GiB of routing tables)."),
    key!("topology.hosts_per_rack", Ty::Int, "8", RACK_KINDS, "Hosts under each leaf (rack switch); with `spines` (`planes`), at most 65,536 ports a leaf."),
    key!("topology.spines", Ty::Int, "2", LEAF_SPINE_KINDS, "Spine switches; every leaf has one link to every spine."),
    key!("topology.pods", Ty::Int, "2", &["clos"], "Pods: racks and their fabric switches (Meta's fabric: 8 in Parsimon's `cluster_b`)."),
    key!("topology.racks_per_pod", Ty::Int, "4", &["clos"], "Racks (rack switches) in each pod (`cluster_b`: 48)."),
    key!("topology.planes", Ty::Int, "2", &["clos"],
        "Spine planes: each pod has one fabric switch per plane, and every rack switch links to each of its pod's (`cluster_b`: 4)."),
    key!("topology.spines_per_plane", Ty::Int, "2", &["clos"],
        "Spine switches in each plane; every fabric switch of plane p links to each spine of plane p. Fewer spines oversubscribe the fabric: with 40 Gbit/s fabric links and 16 hosts of 10 Gbit/s a rack, `cluster_b` has 48 (1:1) or 24 (2:1)."),
    key!("topology.link_rate", Ty::Rate, "10Gbps", SHAPED_KINDS, "Rate of host links (host to first switch)."),
    key!("topology.link_delay", Ty::Time, "1us", SHAPED_KINDS, "Propagation delay of host links."),
    key!("topology.fabric_rate", Ty::Rate, "", &["dumbbell", "leaf_spine", "fat_tree", "clos", "pfabric144", "detail96"],
        "Rate of switch-to-switch links; defaults to `link_rate`. Lower it to oversubscribe."),
    key!("topology.fabric_delay", Ty::Time, "", &["dumbbell", "leaf_spine", "fat_tree", "clos", "pfabric144", "detail96"],
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
    key!("switch.buffer_sharing", Ty::Choice(&["static", "dynamic"]), "static", &[],
        "`static`: every egress port has its own buffer (`buffer`, `edge_buffer`, `spine_buffer`). `dynamic`: each switch has one pool of `shared_buffer` bytes its egress ports share, a port admitting a packet while its queue stays within `dt_alpha` times the pool's free bytes (Choudhury-Hahne dynamic thresholds, as merchant-silicon switches and the HPCC simulator's MMU do): N saturated ports settle at alpha B / (1 + N alpha) each. Output-queued switches only; not beside FastLane (its notifications and drops are per port)."),
    key!("switch.shared_buffer", Ty::Size, "4MB", &[],
        "With `buffer_sharing = \"dynamic\"`: each switch's pool (the HPCC simulator's BUFFER_SIZE; Parsimon's benchmark: 3 MiB)."),
    key!("switch.dt_alpha", Ty::Float, "1", &[],
        "With `buffer_sharing = \"dynamic\"`: the dynamic threshold's alpha, a port's share of the free pool (0 to 64; 1 is a common default, 1/8 the HPCC simulator's PFC thresholds')."),
    key!("switch.edge_buffer", Ty::Size, "", &[],
        "Buffer of switch ports that face hosts (the last hop); defaults to `buffer`."),
    key!("switch.spine_buffer", Ty::Size, "", &[],
        "Buffer of the top tier's ports (leaf_spine spines, fat_tree cores), all facing down; defaults to `buffer`. \
         The CP testbed has 128 KB at its aggregation switch, the incast bottleneck, and 512 KB elsewhere (CP §6.1)."),
    key!("switch.queue", Ty::Choice(&["droptail", "pfabric"]), "droptail", &[],
        "Queue discipline: `droptail` = 8 strict-priority classes (0 highest) sharing the port buffer, tail drop; \
         `pfabric` = serve the earliest packet (or, by `serve_order`, the lowest sequence number) of the flow \
         owning the most urgent packet, and on overflow drop the least urgent packet (pFabric §4.2), by \
         (class, transport priority)."),
    key!("switch.serve_order", Ty::Choice(&["arrival", "sequence"]), "", &[],
        "pFabric queue only (`queue = \"pfabric\"`, at switch ports and the hosts' NICs): which packet of the flow \
         owning the most urgent packet goes. `arrival` = the flow's earliest-arrived packet (pFabric §4.2); \
         `sequence` = the flow's lowest sequence number, ties by arrival (Turbo §4(3): a retransmission queued \
         behind the flow's later segments goes first). Default: `sequence` with `transport.kind = \"turbo\"`, \
         else `arrival`."),
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
    key!("switch.ecn", Ty::Choice(&["off", "codel", "threshold", "red"]), "off", &[],
        "ECN marking at every switch port: `codel` marks by CoDel's sojourn-time law (RFC 8289) instead of dropping; \
         `threshold` marks an arriving data packet when the port already holds more than `ecn_threshold` (DCTCP's K); \
         `red` marks a departing data packet by the bytes it leaves behind, RED-style between `ecn_kmin` and `ecn_kmax` \
         (DCQCN's marking, as the HPCC simulator runs it)."),
    key!("switch.ecn_threshold", Ty::Size, "32KB", &[],
        "DCTCP marking threshold K, in bytes of the port's queue (CP §6: 32 KB at 1 Gbps)."),
    key!("switch.ecn_threshold_by_rate", Ty::RateSizes, "", &[],
        "K by the port's rate, as the HPCC simulator's `KMAX_MAP` gives it: `{ \"10Gbps\" = \"30KB\", \"40Gbps\" = \"120KB\" }`. \
         A port whose rate is not listed marks at `ecn_threshold`."),
    key!("switch.ecn_kmin", Ty::Size, "", &[],
        "RED marking: no mark while the queue a departure leaves holds at most this. \
         Unset (with `ecn_kmax`): 100 KB per 25 Gbit/s of the port's rate, as the HPCC simulator's DCQCN runs (KB = 1000 B)."),
    key!("switch.ecn_kmax", Ty::Size, "", &[],
        "RED marking: always mark above this; between `ecn_kmin` and here with a probability rising linearly to `ecn_pmax`. \
         Unset (with `ecn_kmin`): 400 KB per 25 Gbit/s of the port's rate."),
    key!("switch.ecn_pmax", Ty::Float, "0.2", &[],
        "RED marking: the probability at `ecn_kmax` (the HPCC simulator's PMAX_MAP for DCQCN; the DCQCN paper's 1% is 0.01)."),
    key!("switch.codel_target", Ty::Time, "10us", &[],
        "CoDel target sojourn time (datacenter scale: ~one BDP of queue at 10 Gbps)."),
    key!("switch.codel_interval", Ty::Time, "100us", &[],
        "CoDel interval (datacenter scale: spans the RTT of a full 128 KB port at 10 Gbps)."),
    key!("switch.forwarding", Ty::Choice(&["ecmp", "spray", "alb"]), "ecmp", &[],
        "`ecmp`: hash of the flow's 5-tuple picks one of the equal-cost next hops (a flow keeps its path); \
         `spray`: a random equal-cost next hop per packet; `alb`: DeTail's adaptive load balancing (§5.3, §6.2): \
         per packet, the next hops whose egress queue holds fewer drain bytes for the packet's class (bytes of \
         its class and higher) than the first of `alb_thresholds`, else than the next, else all; one of them at \
         random. `transport.dupack_threshold` then defaults to `off` (DeTail's hosts tolerate reordering)."),
    key!("switch.alb_thresholds", Ty::SizeList, "[\"16KB\", \"64KB\"]", &[],
        "`alb`: the drain-byte tiers, ascending, one to four (DeTail §6.2: 16 KB and 64 KB)."),
    key!("switch.routes", Ty::Routes, "", &[],
         "Routes that replace shortest-path forwarding at one switch: `[[switch.routes]]` with `at` (a switch: `leaf1`, `spine0`, `edge0.1`, `agg0.0`, `core3`, `switch`, `left`, `right`), `to` (destination hosts; default all), `via` (neighbours to forward to: nodes linked to `at`; a host only for its own packets) and optional `weights` (one per `via`: each packet picks a neighbour at random by weight, as CP §6.3's random-forwarding ToR does; without weights `switch.forwarding` chooses). Later entries win; a route that loops is refused."),
    key!("switch.forwarding_delay", Ty::Time, "0us", &[],
        "The forwarding engine's delay at every switch, between a packet's arrival and its forwarding decision \
         (DeTail §7.1: 3.1 us of a 25 us switch budget). Control frames (pauses) skip it. The ideal FCT counts it."),
    key!("switch.cut_through", Ty::Bool, "false", &[],
        "Cut-through forwarding at output-queued switches: a packet starts leaving once its header has arrived \
         (the Ethernet bytes ahead of the IP packet, `topology.framing_bytes` less the 16 B of FCS and gap that \
         follow it, plus `transport.header_bytes`: 62 B with Ethernet framing, 40 B without), if its egress is \
         idle then (nothing queued, link free, no class paused) and would not finish before the packet's last \
         byte arrives (its serialization there at least the ingress's less the header's: an egress no faster \
         than the ingress; a slow ingress into a faster egress stores and forwards). It then leaves \
         serialization - header time earlier than store-and-forward; any other packet is stored and forwarded \
         (decided when its last byte is in). The ideal FCT follows the same rule. Refused with `kind = \"cioq\"` \
         and with `speedup` (their crossbars are store-and-forward stages). `false`: store-and-forward \
         everywhere."),
    key!("switch.speedup", Ty::IntOrOff, "off", &[],
        "Crossbar speedup: a packet crosses a switch's crossbar in its serialization time at this many times its \
         input link's rate (DeTail §7.1: 4, 3.06 us for a 1530 B frame at 1 Gbps). At an output-queued switch it \
         is a fixed delay per packet; at `kind = \"cioq\"` inputs and outputs are busy for it and contend. \
         `off`: packets cross instantly. The ideal FCT counts it."),
    key!("switch.kind", Ty::Choice(&["oq", "cioq"]), "oq", &[],
        "`oq`: output-queued, a packet waits only at its egress port. `cioq`: combined input/output-queued \
         (DeTail §5.1, Fig. 1): a packet waits in its input's ingress queue until the crossbar, scheduled by \
         iSLIP with strict priority classes, moves it to its egress queue; needed for `flow_control`. At most \
         64 ports per switch; the droptail queue only (no pFabric, FastLane, Source Quench, cut payload or CoDel)."),
    key!("switch.ingress", Ty::Choice(&["voq", "fifo"]), "voq", &["cioq"],
        "Ingress queues: `voq`, a virtual output queue per output and class at each input (a blocked output \
         stalls no other); `fifo`, one FIFO per class at each input (its head blocks what is behind it)."),
    key!("switch.ingress_buffer", Ty::Size, "", &["cioq"],
        "Bytes each input's ingress queues hold together (DeTail §7.1: 128 KB); default: the buffer of the \
         egress port on the same link. Lossy (`flow_control = \"none\"`) packets that find it full are dropped \
         (ports.parquet `dropped_ingress`); with flow control that happens only if the thresholds leave too \
         little headroom, and it is counted the same way, never silently."),
    key!("switch.priorities", Ty::Bool, "true", &[],
        "Whether the network serves flows' own priority classes (`workload.priorities`, \
         `workload.classes_by_size`, `workload.background_class`) in its strict-priority queues. `false`: every flow's packets go \
         in `transport.data_class` and `transport.ack_class`, while flows.parquet still records each \
         flow's class (DeTail §8.1's Baseline and FC environments, beside Priority, Priority+PFC and DeTail)."),
    key!("switch.flow_control", Ty::Choice(&["none", "pause", "pfc"]), "none", &[],
        "Link-layer flow control (DeTail §4.1, §5.2, §6.1), at `kind = \"cioq\"` switches and the hosts' NICs: \
         `pfc`, 802.1Qbb per class: an ingress queue whose drain bytes for a class (bytes of it and higher \
         classes) reach `pfc_xoff` sends a 64 B pause frame for that class out of its arrival port, and a \
         resume below `pfc_xon`; `pause`, 802.3x, one pause for all traffic. A pause frame goes ahead of \
         queued data (after the frame on the wire) and takes effect a response time (two 512-bit times) after \
         it arrives; the paused port finishes its frame and starts no new one of a paused class. The egress \
         queues then never drop: the crossbar moves a packet only when its egress has room. `none`: lossy."),
    key!("switch.pfc_xoff", Ty::Size, "", &["cioq"],
        "Drain bytes at which an input pauses a class upstream; default per link from DeTail §6.1: \
         (ingress buffer - N·H) / N, N = 8 classes with `pfc` (1 with `pause`), H the headroom: the bytes \
         the link carries in 2 frame times + 2 propagation delays + the response time (§6.1's T), plus one \
         full frame (the one that crosses XOFF), the 84 B pause frame and the forwarding delay's bytes. \
         DeTail's network (1 GbE, 6.6 us, 1538 B frames on the wire, 3.1 us forwarding, 128 KB): H = 6,864 B, \
         XOFF = 9,520 B (§6.1's own arithmetic, without the additions and with 1530 B frames: 4,838 and 11,546)."),
    key!("switch.pfc_xon", Ty::Size, "", &["cioq"],
        "Drain bytes below which an input resumes a class it paused; default H (see `pfc_xoff`)."),
    key!("switch.deadlock_after", Ty::Time, "5ms", &["cioq"],
        "With flow control: a cycle of egress ports, each paused by the next one's switch and holding packets \
         for it, that has lasted this long is a deadlock (a cyclic buffer dependency, e.g. from \
         `switch.routes`): the run stops with `stop_reason = \"deadlock\"` and the cycle named. Checked every \
         `deadlock_after`, so a deadlock is reported within twice this."),
    key!("host.qdisc", Ty::Choice(&["fifo", "fastpass"]), "fifo", &[],
        "The host's queue discipline between its transports and its NIC. `fifo`: packets go straight to the \
         NIC. `fastpass`: Fastpass endpoint queues (Fastpass §6.1): one FIFO per destination, demand reported \
         to the arbiter (`[fastpass]`) in MTU timeslots, and in each timeslot the arbiter grants, the packets \
         for its destination that fit in one timeslot leave, pinned to the path the arbiter chose."),
    key!("host.nic_buffer", Ty::Size, "", &[],
        "Host NIC egress buffer; unbounded when absent (the transport's window bounds it)."),
    key!("host.nic_flow_limit", Ty::IntOrOff, "2", &[],
        "Most data segments one flow may have waiting in its host's NIC queue (TCP Small Queues): the rest of \
         the window waits in the socket until the NIC takes one, so flows from one host interleave and a long \
         flow's window does not sit in the NIC ahead of everyone else. `off`: the whole window goes to the NIC. \
         With `host.qdisc = \"fastpass\"` the queue discipline's packets count too (as Linux's TSQ counts bytes \
         in the qdisc), and the default is 87: the Fastpass kernel's tcp_limit_output_bytes of 128 KB in \
         full-size segments (two would let a flow have two packets waiting for their timeslots, one arbiter \
         round trip each)."),
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
    key!("transport.kind", Ty::Choice(&["tcp", "cubic", "dctcp", "pfabric", "turbo", "roce"]), "tcp", &[],
        "Transport: `tcp` = NewReno with SACK (RFC 6582, 2018, 6675); `cubic` = the same TCP with CUBIC's \
         window (RFC 8312 with Linux 2.6.38's constants: cut to 0.7, C = 0.4, fast convergence, TCP \
         friendliness; no HyStart), Linux's default congestion control and the CP testbed's; `dctcp` = TCP whose window follows the \
         fraction of ECN-marked bytes (RFC 8257; needs `switch.ecn`); `pfabric` = pFabric's minimal rate control \
         (initial window one BDP, fixed small timeout, no fast retransmit, slow start after a timeout, probe mode); \
         `turbo` = Turbo (Turbo §4): no rate control, every flow sends whenever its NIC takes a packet, priority = \
         bytes neither acknowledged nor SACKed, loss found by timeouts alone (`rto_min`, fixed), ACKs of 40 B at the \
         top priority; needs `switch.queue = \"pfabric\"`. A host's NIC holds one packet per flow and serves the \
         best (the paper lets each flow send at line rate on its own). \
         `roce` = RoCE hosts (RDMA over Converged Ethernet, as the HPCC simulator models them): each flow starts \
         at line rate, the NIC's rate limiter spaces its packets at the rate `transport.cc` sets, an ACK per \
         packet, a NIC-level NACK on a gap and go-back-N from it (or after `rto_min` with nothing acknowledged); \
         run it on the lossless fabric (`switch.kind = \"cioq\"`, `switch.flow_control = \"pfc\"`)."),
    key!("transport.cc", Ty::Choice(&["none", "dcqcn", "hpcc", "dctcp"]), "dcqcn", &["roce"],
        "RoCE's congestion control: `none` = line rate, PFC alone holds the fabric (DCQCN §2's baseline); \
         `dcqcn` = DCQCN (SIGCOMM'15) as the HPCC simulator's CC_MODE 1 runs it, reacting to CNPs the receiver \
         flags for ECN-marked packets (needs `switch.ecn`, e.g. `red`); `hpcc` = HPCC (SIGCOMM'19, CC_MODE 3): \
         every switch port stamps telemetry (42 B more on each data packet and ACK) and the sender's rate and \
         window follow the most utilized hop, toward `hpcc_eta`; `dctcp` = DCTCP's reaction as a rate and \
         window (CC_MODE 8; needs `switch.ecn`)."),
    key!("transport.dcqcn_g", Ty::Float, "0.00390625", &["roce"],
        "DCQCN's gain g in α ← (1 − g)·α + g (DCQCN §3.2 and the HPCC simulator: 1/256)."),
    key!("transport.dcqcn_alpha_interval", Ty::Time, "1us", &["roce"],
        "DCQCN: α's update period (the HPCC simulator's ALPHA_RESUME_INTERVAL, run.py: 1 us; the paper's K = 55 us)."),
    key!("transport.dcqcn_decrease_interval", Ty::Time, "4us", &["roce"],
        "DCQCN: a pending CNP cuts the rate at most once per this (RATE_DECREASE_INTERVAL, run.py: 4 us)."),
    key!("transport.dcqcn_increase_interval", Ty::Time, "300us", &["roce"],
        "DCQCN: the rate-increase timer (RP_TIMER, run.py: 300 us; the paper's 55 us)."),
    key!("transport.dcqcn_fast_recovery", Ty::Int, "1", &["roce"],
        "DCQCN: increase events of fast recovery before additive increase (FAST_RECOVERY_TIMES, run.py: 1; the paper's F = 5)."),
    key!("transport.dcqcn_rate_ai", Ty::Rate, "", &["roce"],
        "DCQCN's additive step of the target rate. Default: 5 Mbit/s per 25 Gbit/s of the hosts' rate \
         (run.py: 20 Mbit/s at 100 Gbit/s)."),
    key!("transport.dcqcn_rate_hai", Ty::Rate, "", &["roce"],
        "DCQCN's hyper-increase step. Default: 50 Mbit/s per 25 Gbit/s of the hosts' rate (run.py: 200 Mbit/s at 100 Gbit/s)."),
    key!("transport.dcqcn_clamp_target", Ty::Bool, "false", &["roce"],
        "DCQCN: a cut sets the target rate to the current rate even right after another cut (CLAMP_TARGET_RATE, run.py: 0)."),
    key!("transport.dcqcn_cnp_interval", Ty::Time, "50us", &["roce"],
        "DCQCN's notification point: the receiver flags at most one CNP per flow per this, if a packet since the \
         last was marked (DCQCN §3.1: N = 50 us); `0`: every ACK of a marked packet carries one, as the HPCC simulator does."),
    key!("transport.hpcc_eta", Ty::Float, "0.95", &["roce"], "HPCC's target utilization η (HPCC §3.3: 95%)."),
    key!("transport.hpcc_max_stage", Ty::Int, "5", &["roce"],
        "HPCC's maxStage: additive-increase rounds while the utilization stays below η before a multiplicative \
         step (HPCC §3.3: 5; the HPCC simulator's runs use MI_THRESH = 0)."),
    key!("transport.hpcc_rate_ai", Ty::Rate, "50Mbps", &["roce"],
        "HPCC's additive step W_AI, as a rate (W_AI / T; the HPCC simulator's README and results: 50 Mbit/s)."),
    key!("transport.hpcc_fast_react", Ty::Bool, "true", &["roce"],
        "HPCC reacts to every ACK from the rate committed once per round trip (the simulator's FAST_REACT); \
         `false`: only once per round trip."),
    key!("transport.dctcp_rate_ai", Ty::Rate, "615Mbps", &["roce"],
        "RoCE DCTCP's additive step per round trip without a cut (the HPCC simulator's DCTCP_RATE_AI: 1 KB per 13 us)."),
    key!("transport.roce_min_rate", Ty::Rate, "100Mbps", &["roce"],
        "No RoCE congestion control cuts a flow below this (the HPCC simulator's MIN_RATE, config.txt: 100 Mbit/s)."),
    key!("transport.roce_window", Ty::Bool, "", &["roce"],
        "Bound the bytes in flight by W = R·T besides the rate (the HPCC simulator's HAS_WIN with VAR_WIN). \
         Default: `true` with `hpcc` and `dctcp`, `false` with `dcqcn` and `none`."),
    key!("transport.base_rtt", Ty::Time, "", &["roce"],
        "T: the base round trip HPCC averages over and W = R·T is computed from. Default: the fabric's longest \
         host-to-host round trip, a full data packet out and an ACK back (the simulator's GLOBAL_T)."),
    key!("transport.nack_interval", Ty::Time, "500us", &["roce"],
        "A RoCE receiver NACKs the same missing byte again only after this long (the HPCC simulator's 500 us)."),
    key!("transport.dctcp_g", Ty::Float, "0.0625", &["dctcp", "roce"],
        "DCTCP's gain g for the marked-fraction estimate α ← (1 − g)·α + g·F (DCTCP, CP §6: 1/16)."),
    key!("transport.cp", Ty::Bool, "true", &["tcp", "cubic", "dctcp", "pfabric"],
        "CP-capable (CP §4.1): data is sent CP-enabled, so a `cut_payload` switch cuts it instead of dropping it, \
         and the receiver answers a payload-cut packet at once with a PACK naming the lost bytes. `false`: normal \
         packets, dropped as on a plain switch."),
    key!("transport.mss", Ty::Int, "1460", &[], "Payload bytes per full segment (at most 9000: jumbo frames)."),
    key!("transport.header_bytes", Ty::Int, "40", &[], "TCP/IP header bytes per packet (20 IP + 20 TCP)."),
    key!("transport.init_cwnd", Ty::Int, "10", &["tcp", "cubic", "dctcp", "pfabric"],
        "Initial congestion window, in segments. `pfabric` defaults to one BDP of the longest path (base RTT x host link rate, \
         in full-size packets on the wire, rounded up)."),
    key!("transport.max_cwnd", Ty::IntOrOff, "off", &["pfabric"],
        "Largest congestion window, in segments. `pfabric` defaults to twice `init_cwnd` (2 x BDP, Turbo §5)."),
    key!("transport.rwnd", Ty::Size, "1MB", &["tcp", "cubic", "dctcp", "pfabric"], "Receive window: the most unacknowledged bytes a sender may have out."),
    key!("transport.cwnd_increase", Ty::Choice(&["bytes", "acks"]), "bytes", &["tcp", "cubic", "dctcp", "pfabric"],
        "What the window grows by outside recovery. `bytes`: by the bytes each ACK newly acknowledges, \
         one MSS per window's worth in congestion avoidance (RFC 5681 byte counting, RFC 3465 with L = 1). \
         `acks`: by one MSS's worth per ACK that advances the cumulative ACK, however much it acknowledges \
         (Linux 2.6's per-ACK counting, the CP testbed's kernel): a cumulative jump over data that arrived \
         out of order counts once."),
    key!("transport.cwnd_limited", Ty::Bool, "false", &["tcp", "cubic", "dctcp", "pfabric"],
        "Grow the window only while it limits the sender, as Linux does (tcp_is_cwnd_limited, 2.6.38): when the data \
         in flight before an ACK left at most 3 segments of the window unused (or, with `tso_defer`, less than a third \
         of it and under 64 KB). `false`: every ACK outside recovery grows it (RFC 5681), so a sender held back by \
         `rwnd` or its NIC keeps growing a window it does not use."),
    key!("transport.ssthresh_from", Ty::Choice(&["flight", "cwnd"]), "flight", &["tcp", "cubic", "dctcp", "pfabric"],
        "What a loss, a timeout or an ECN echo halves to set ssthresh (`cubic` keeps 0.7 of it). \
         `flight`: the data outstanding, snd.nxt - snd.una (RFC 5681's FlightSize, RFC 6675), but never \
         more than cwnd (RFC 5681 §3.2 leaves out data sent beyond the window on duplicate ACKs, and \
         SACKed data could otherwise make a cut raise the window). `cwnd`: the congestion window (Linux's \
         tcp_reno_ssthresh). They differ when the sender is not window-limited (held back by the receive \
         window or the application)."),
    key!("transport.rto_min", Ty::Time, "1ms", &[], "Lower bound of the retransmission timeout (RFC 6298); pFabric's and Turbo's fixed timeout; RoCE's go-back-N timeout (doubling while nothing is acknowledged; above the fabric's base round trip). \
         With `host.qdisc = \"fastpass\"` (tcp, cubic, dctcp), 200ms: Linux's, which Fastpass runs unmodified (§6.1); packets wait for \
         their timeslots in the endpoint queues, and a 1 ms minimum would resend them as lost."),
    key!("transport.rto_init", Ty::Time, "", &["tcp", "cubic", "dctcp", "pfabric"], "Timeout before the first RTT sample; defaults to `rto_min`."),
    key!("transport.rto_max", Ty::Time, "60s", &["tcp", "cubic", "dctcp", "pfabric"], "Upper bound of the backed-off timeout."),
    key!("transport.dupack_threshold", Ty::IntOrOff, "3", &["tcp", "cubic", "dctcp", "pfabric"],
        "Duplicate ACKs (or SACKed segments above a hole) that trigger fast retransmit; `off` leaves loss to the timeout (multipath). With `switch.forwarding = \"alb\"` the default is `off` (DeTail §4.2), and so with `host.qdisc = \"fastpass\"` on a leaf-spine or fat tree: the arbiter gives each timeslot its own path (Fastpass §4), so a flow's packets can arrive out of order (FCP messages share the switches' queues), while nothing is dropped."),
    key!("transport.delayed_ack", Ty::TimeOrOff, "off", &["tcp", "cubic", "dctcp", "pfabric"],
        "Delayed ACK: acknowledge every second full segment or after this time; `off` acknowledges every segment."),
    key!("transport.max_reordering", Ty::IntOrOff, "off", &["tcp", "cubic", "dctcp", "pfabric"],
         "Linux's reordering adaptation (tcp_update_reordering): when a segment never retransmitted is acknowledged or SACKed below the highest SACKed one, the duplicate-ACK threshold rises to that distance in segments, up to this bound (Linux 2.6.38, the CP testbed's kernel: 127). `off`: the threshold stays `dupack_threshold`."),
    key!("transport.tso_defer", Ty::TimeOrOff, "off", &["tcp", "cubic", "dctcp", "pfabric"],
         "Linux's TSO deferral (tcp_tso_should_defer, Linux 2.6.38 with a segmentation-offloading NIC): while nothing is SACKed, lost or being retransmitted, new data waits until a third of min(cwnd, rwnd), or 64 KB, or all that is left can go at once, so it leaves in bursts; a deferral ends early when the previous one is this long ago (Linux: two jiffies, 1-2 ms at HZ = 1000; this value exactly). A burst decided on goes whole even when the host's NIC budget splits it over several sends; also no deferral while a window reduction for ECN or a local NIC drop is in progress (Linux's CWR state). `off`: a segment goes whenever the window opens."),
    key!("transport.undo", Ty::Bool, "false", &["tcp", "cubic", "dctcp", "pfabric"],
         "Linux's undo of a spurious fast retransmit (2.6.38: tcp_try_undo_partial, tcp_try_undo_recovery; TCP timestamps and D-SACK on, as on the CP testbed): when new data is acknowledged by an ACK whose echoed send time is older than the recovery's first retransmission, the original arrived late, so the window goes back to what it was before the cut (Linux: twice the halved ssthresh), and the reordering this shows counts toward `max_reordering`; when the recovery ends with every retransmission reported duplicate (D-SACK) or so shown, ssthresh goes back to its value before (at least 3/4 of the window then) and the window to at most that. `false`: a reduction stands."),
    key!("transport.lost_retransmit", Ty::Bool, "true", &["tcp", "cubic", "dctcp", "pfabric"],
        "Resend a retransmission as soon as data sent after it is SACKed (`dupack_threshold` \
         transmissions later), as Linux does (tcp_mark_lost_retrans, RACK); `false`: RFC 6675 alone, \
         where a lost retransmission waits for the timeout."),
    key!("transport.ecn", Ty::Bool, "true", &["tcp", "cubic", "dctcp", "pfabric"],
        "ECN-capable: data is sent ECT and the window halves at most once per window on an ECN echo or a Source \
         Quench (RFC 3168), never retransmitting for it."),
    key!("transport.ooo_option", Ty::Bool, "false", &["tcp", "cubic", "dctcp", "pfabric"],
        "FastLane multipath option (§3.4.1): ACKs carry the out-of-order bytes above the cumulative ACK and the \
         sender inflates its window by them (new ACK: the value; duplicate: the max of it and the current inflation)."),
    key!("transport.priority", Ty::Choice(&["remaining", "flow_size"]), "remaining", &["pfabric"],
        "pFabric packet priority: `remaining` = unacknowledged bytes of the flow; `flow_size` = the flow's total size \
         (FastLane §4.2.2, for request/response)."),
    key!("transport.probe_after", Ty::IntOrOff, "5", &["pfabric"],
        "pFabric probe mode: after this many consecutive timeouts, send a header-only probe and resend only once it \
         is answered."),
    key!("transport.rearm_rto", Ty::Bool, "false", &["tcp", "cubic", "dctcp", "pfabric"],
        "Restart the retransmission timer whenever the first unacknowledged segment is retransmitted, as Linux does \
         (tcp_xmit_retransmit_queue), so a head resent again and again in recovery is not also timed out; `false`: \
         RFC 6298 alone, the timer restarts only when new data is acknowledged. The CP testbed (Linux) runs `true`."),
    key!("transport.turbo_variant", Ty::Choice(&["t1", "t2", "t3", "t4"]), "t1", &["turbo"],
        "Turbo's design option (Turbo §4.2), a preset of the three keys below: `t1` = simple timeouts (one timer \
         per flow) with cliff inflation; `t2` = simple timeouts, stop on a timeout; `t3` = per-packet timeouts with \
         cliff inflation, a probe at every expiry; `t4` = `t3` with probes at least one timeout apart."),
    key!("transport.turbo_timeouts", Ty::Choice(&["flow", "packet"]), "", &["turbo"],
        "`flow` (T1, T2): one timer per flow, restarted by each new cumulative ACK; when it fires, everything not \
         SACKed from the first hole goes again. `packet` (T3, T4): a deadline per packet sent; only the packets \
         whose deadline passes go again (before new data). Default: from `turbo_variant`."),
    key!("transport.turbo_on_timeout", Ty::Choice(&["inflate", "stop"]), "", &["turbo"],
        "`inflate` (T1, T3, T4): cliff inflation, the flow's later packets carry 2^62 + its remaining size, below \
         every uninflated packet, and a probe goes at its true priority. `stop` (T2): no data until a probe (one \
         every timeout) is echoed or an ACK brings news, then everything not SACKed from the first hole goes again \
         at the true priority. Default: from `turbo_variant`."),
    key!("transport.turbo_probe_spacing", Ty::Choice(&["none", "rto"]), "", &["turbo"],
        "`rto` (T4): a timeout sends a probe only if the last went at least one timeout ago; `none`: every \
         timeout that inflates sends one. Default: from `turbo_variant`."),
    key!("transport.turbo_ack_deflates", Ty::Bool, "true", &["turbo"],
        "A new cumulative ACK ends the inflation, as a probe's echo does (the path delivers the flow's data); \
         `false`: only a probe's echo ends it."),
    key!("transport.data_class", Ty::Int, "0", &[], "Priority class (0 highest .. 7) of data packets."),
    key!("transport.ack_class", Ty::Int, "0", &[], "Priority class (0 highest .. 7) of ACKs."),
    key!("workload.kind", Ty::Choice(&["incast", "poisson", "request_response", "partition_aggregate", "short_long", "sequential", "trace"]), "incast", &[],
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
    key!("workload.arrivals", Ty::Choice(&["poisson", "lognormal"]), "poisson", &["poisson"],
        "The gaps between flow arrivals, of the mean `load` sets: `poisson` (exponential), or `lognormal` with shape `sigma` (ln gap ~ N(ln mean − sigma²/2, sigma²), as Parsimon's generator draws them: sigma 2 is far burstier than Poisson)."),
    key!("workload.matrix", Ty::Text, "", &["poisson"],
        "A rack-to-rack traffic matrix (a file, relative to the scenario): a row of weights a line for each source rack, a weight a destination rack, racks numbered as the hosts' switches by their first host. Each flow picks a pair of racks by weight and a host uniformly in each (parsimon-eval's spatial workloads). Not beside `sources`/`destinations`."),
    key!("workload.max_link_load", Ty::FloatOrOff, "off", &["poisson"],
        "With `matrix`: set the arrival rate so that the busiest link carries this fraction of its rate (flows split evenly over equal-cost paths, sizes counted as `load_on` says), worked out from the matrix and the routes before the run (Parsimon's `max_load`); `load` is then not used. `off`: `load` sets the rate."),
    key!("workload.sigma", Ty::Float, "2", &["poisson"],
        "With `arrivals = \"lognormal\"`: the shape, the standard deviation of the gaps' logarithm (Parsimon's benchmark: 2)."),
    key!("workload.load", Ty::Float, "0.5", LOAD_KINDS,
        "Offered load in (0, 1]: the fraction of the sending hosts' summed link capacity that the flows' payload bytes \
         (with `load_on = \"wire\"`: their bytes on the wire) would use: poisson λ = load · |`sources`| · link_rate / (8 · mean size) flows/s; queries λ = load · |`clients`| · \
         link_rate / (8 · fanout · mean response size) queries/s (sequential: web requests/s, with `sequence` × the mean response size; all hosts when not listed; docs/workloads.md). Refused beside `rate` or `burst_period`, which give the rate instead."),
    key!("workload.load_on", Ty::Choice(&["payload", "wire"]), "payload", &[],
         "What `load` and `background_load` count. `payload`: the flows' payload bytes (the application's), as the DCTCP and CP papers count load. `wire`: the bytes their data packets take on the wire, as the pFabric group's simulator counts it: each segment's payload plus `transport.header_bytes` plus `topology.framing_bytes`, short frames padded to Ethernet's 64 B minimum (ACKs and retransmissions not counted), so the same load offers fewer flows (with 1460 B segments in 1500 B frames, `framing_bytes = 0`: 1460/1500 as many). For a CDF, the mean on the wire is taken over the same piecewise-linear distribution as the payload mean. `wire` is refused where neither load sets a rate (docs/workloads.md)."),
    key!("workload.rate", Ty::FloatOrOff, "off", RATE_KINDS,
         "Queries (sequential: web requests) per second per client, arriving as a Poisson process (DeTail §8.1: 500 to 2500). `off`: the rate `load` gives. With `burst_period`: the rate between bursts, `off` or `0` for none (bursty) or positive (mixed). At most 1e9, at least 0.001."),
    key!("workload.burst_period", Ty::TimeOrOff, "off", RATE_KINDS,
         "On/off modulation (DeTail §8.1's bursty and mixed workloads: 50ms): from the start of every period (the first at time 0, every client at once), queries arrive at `burst_rate` for `burst_length`, then at `rate` for the rest of the period, each phase a Poisson process. `off`: a steady rate."),
    key!("workload.burst_length", Ty::Time, "", RATE_KINDS,
         "With `burst_period`: the burst at the start of every period (DeTail §8.1: 2.5ms to 12.5ms); positive, at most `burst_period`."),
    key!("workload.burst_rate", Ty::Float, "", RATE_KINDS,
         "With `burst_period`: queries (sequential: web requests) per second per client during a burst (DeTail §8.1: 10000)."),
    key!("workload.cdf", Ty::Text, "", &["poisson", "request_response", "partition_aggregate"],
        "Flow (poisson; default `websearch`) or response (queries; default: fixed `response_size`) size distribution: \
         `websearch`, `datamining`, `aditya`, Meta's `webserver`, `cachefollower`, `hadoop` (SIGCOMM'15, as Parsimon ships them), or a CDF file path (formats in docs/workloads.md)."),
    key!("workload.sources", Ty::HostList, "", &["poisson", "incast"],
        "Hosts that send; default all (incast: all but the receiver; `many_to_one` only)."),
    key!("workload.destinations", Ty::HostList, "", &["poisson"], "Hosts that receive; default all (never the source itself)."),
    key!("workload.max_flows", Ty::IntOrOff, "off", &["poisson"], "Stop generating after this many flows; `off` = until `run.duration`."),
    key!("workload.queries", Ty::IntOrOff, "off", REQUEST_KINDS, "Stop generating after this many queries (sequential: web requests); `off` = until `run.duration`."),
    key!("workload.short_fraction", Ty::Float, "0.1", &["short_long"],
        "short_long (FastLane §5): share of the load from short queries. A short query picks a response size from \
         {2, 4, 8, 16, 32} KB and a total from {32, 64, 96, 128, 160} KB (each uniform) and asks total/size distinct \
         workers in parallel; a long request asks one random worker for `long_size` (all-to-all)."),
    key!("workload.long_size", Ty::Size, "1MB", &["short_long"], "short_long: response size of a long request."),
    key!("workload.fanout", Ty::Int, "8", &["partition_aggregate"], "Workers asked per query (distinct, never the requester)."),
    key!("workload.fanouts", Ty::IntList, "", &["partition_aggregate"],
         "Fan-outs, one drawn uniformly per query (DeTail §8.1.2: [10, 20, 40]); refused beside an explicit `fanout`. Every client needs the largest's workers other than itself."),
    key!("workload.sequence", Ty::Int, "10", &["sequential"],
         "Queries per web request, one after the other (DeTail §8.1.2: 10): each asks one random worker, and the next starts when its response has fully arrived. Each query and each web request has a query row; a query's `parent` is its web request."),
    key!("workload.priorities", Ty::Int, "1", RATE_KINDS,
         "Priority classes (1 to 8): each query (sequential: each web request) draws one uniformly from 0..priorities (0 highest) for the data and ACKs of all its flows (DeTail §8.1, Fig. 10: 2). `1`: flows take `transport.data_class` and `transport.ack_class`."),
    key!("workload.classes_by_size", Ty::SizeList, "[]", &[],
         "Priority classes by flow size, as an application that knows the size of what it sends would mark it: up to 7 strictly ascending sizes t0 < t1 < ...; a flow of size <= t0 gets class 0 (the highest), <= t1 class 1, ..., a flow larger than all of them class len (e.g. [\"100KB\"]: two classes). Every flow of the workload is marked by its own size, its data and its ACKs, whatever the kind (incast, poisson, trace, short_long, a query's requests and responses alike); background flows keep theirs (`background_load`: the transport's; `background_flows`: `background_class`). Refused beside `priorities` > 1. `switch.priorities = false` keeps the classes in flows.parquet but sends every packet in the transport's classes. `[]`: off, flows take `transport.data_class` and `transport.ack_class`."),
    key!("workload.request_size", Ty::Size, "10B", REQUEST_KINDS, "Request flow size."),
    key!("workload.response_size", Ty::Size, "16KB", QUERY_KINDS, "Response flow size per worker (when no `cdf`)."),
    key!("workload.response_sizes", Ty::SizeList, "", RATE_KINDS,
         "Response sizes, one drawn uniformly per query, the same for all its responses (DeTail §8.1: [\"2KB\", \"8KB\", \"32KB\"]); refused beside `cdf` or an explicit `response_size`."),
    key!("workload.clients", Ty::HostList, "", REQUEST_KINDS, "Hosts that issue queries; default all."),
    key!("workload.workers", Ty::HostList, "", REQUEST_KINDS, "Hosts that answer; default all."),
    key!("workload.flows", Ty::Flows, "", &["trace"], "Inline flows: `[[workload.flows]]` with `src`, `dst`, `size`, `start` (time)."),
    key!("workload.file", Ty::Text, "", &["trace"], "A file of flows (relative to the scenario), in `format`."),
    key!("workload.format", Ty::Choice(&["csv", "hpcc"]), "csv", &["trace"],
        "`file`'s format. `csv`: header `src,dst,size_bytes,start_us`, a flow a line. `hpcc`: the HPCC simulator's flow.txt, a count line then `src dst pg dport size start_s` a line (or with a flow id first, as Parsimon's and m3's), ids as the topology's (`topology.file`'s on a graph); `pg` (0-7) is the flow's priority class."),
    key!("workload.background_load", Ty::FloatOrOff, "off", &[],
         "Background traffic beside the workload (CP §6.4, DCTCP §4.3): Poisson flows between random distinct hosts with sizes from `background_cdf`, at this load (as `workload.load`, computed on unscaled sizes). It stops when the workload stops generating. `off`: none."),
    key!("workload.background_cdf", Ty::Text, "websearch", &[],
         "Background flow size distribution (names as `workload.cdf`); the default is the DCTCP paper's web-search background traffic."),
    key!("workload.background_scale", Ty::Float, "1", &[],
         "Multiplies background flows larger than `background_scale_above` (DCTCP §4.3 and CP §6.4's 10x traffic: 10). Arrival rates stay as `background_load` sets them."),
    key!("workload.background_scale_above", Ty::Size, "1MB", &[],
         "Background flows larger than this are scaled by `background_scale`."),
    key!("workload.background_flows", Ty::SizeOrOff, "off", &[],
         "Closed-loop background (DeTail §8.1.2: 1MB): every host keeps one flow of this size to a random other host running, the next starting as the last one's receiver gets its last byte, from time 0 until the workload stops generating (class `background` in flows.parquet). Beside `background_load` or alone. `off`: none."),
    key!("workload.background_sources", Ty::HostList, "", &[],
         "`background_flows`: the hosts that keep a flow running; default all (DeTail §8.2: the front ends)."),
    key!("workload.background_destinations", Ty::HostList, "", &[],
         "`background_flows`: the hosts each flow goes to, one drawn uniformly per flow, never its source; default all (DeTail §8.2: the back ends)."),
    key!("workload.background_class", Ty::Int, "7", &[],
         "Priority class (0 highest .. 7) of the data and ACKs of `background_flows`' flows (DeTail §8.1.2: low priority)."),
    key!("fastpass.arbiter", Ty::IntOrOff, "off", &[],
        "With `host.qdisc = \"fastpass\"` (required then): the host that runs the primary arbiter (Fastpass \
         §2). It takes no part in the workload: default host lists leave it out, and a list that names it is \
         refused."),
    key!("fastpass.secondary", Ty::IntOrOff, "off", &[],
        "A host running a secondary arbiter (§5.1): it hears every endpoint's reports and the primary's \
         watchdogs, and takes over after `takeover` of silence, with a new epoch and fresh nonces, resetting \
         every endpoint. Kept out of the workload as the primary is. `off`: no secondary."),
    key!("fastpass.fail_at", Ty::TimeOrOff, "off", &[],
        "The primary arbiter stops at this time (it neither sends nor answers anything after it). `off`: never."),
    key!("fastpass.arbiter_link_rate", Ty::Rate, "", &[],
        "The arbiters' host links (§2: an arbiter for a large cluster needs high-speed ports; §8.1). \
         Default: `topology.fabric_rate` (a star's: `topology.link_rate`). Every endpoint's reports and every \
         allocation cross it: on pfabric144 at load 0.6, allocations alone need ~9 Gb/s, and a 10 Gb/s arbiter \
         link delays them past their timeslots, which are then requested again, for good."),
    key!("fastpass.arbiter_uplink_rate", Ty::Rate, "", &[],
        "The least rate of the links from the arbiters' switches to the switches above them (a leaf's to \
         the spines, a fat-tree edge switch's to its aggregation switches; a star and a dumbbell have none). \
         Default: `fastpass.arbiter_link_rate`: §2's high-speed ports must reach past the arbiter's rack \
         (§8.1), as every report and allocation of another rack crosses these links, beside the data the \
         arbiter schedules there for its rack's other hosts. At the fabric's 10 Gb/s, on the 1024-host fat \
         tree with a 100 Gb/s arbiter link, partition/aggregate's allocations (38 Gb/s on average out of the \
         arbiter) and the data queued behind them were dropped there (62,711 drops, 16% of the timeslots \
         re-requested); at 100 Gb/s, none. A rate below the fabric's leaves the links as they are."),
    key!("fastpass.lead", Ty::Time, "65us", &[],
        "How far ahead of a timeslot's start the arbiter allocates it (§5.1: 65 us, far below the 1 ms \
         takeover, so a failed arbiter's allocations have expired before its successor's begin)."),
    key!("fastpass.batch", Ty::Int, "16", &[],
        "Timeslots allocated together (1..64): the arbiter allocates a batch when its first timeslot is \
         `lead` away, colors each timeslot's matching into paths (§4), and sends each endpoint its grants \
         in one message."),
    key!("fastpass.processing", Ty::Time, "1us", &[],
        "The arbiter's latency: each FCP message it receives is handled this long after it arrives (the \
         comm-core's polling and hand-off to allocation, §6.2, §7.3)."),
    key!("fastpass.policy", Ty::Choice(&["max_min", "min_fct"]), "max_min", &[],
        "Timeslot allocation order (§3.1): `max_min`, least recently allocated pair first (max-min fair); \
         `min_fct`, fewest requested timeslots left first."),
    key!("fastpass.control", Ty::Choice(&["network", "ideal"]), "network", &[],
        "How FCP messages travel. `network`: as packets of class 0 through the fabric (IP header + the FCP \
         message, docs/arbiter.md § FCP), queued and dropped like any other. `ideal`: off the network, each \
         message arriving `control_delay` after it is sent."),
    key!("fastpass.control_delay", Ty::Time, "5us", &[],
        "With `control = \"ideal\"`: the one-way delay of every FCP message."),
    key!("fastpass.control_loss", Ty::Float, "0", &[],
        "Probability that an FCP message (report, allocation, reset, watchdog) is lost as it is sent, drawn \
         from the control channel's own random stream: FCP must deliver all demand anyway (§5.3)."),
    key!("fastpass.control_reserve", Ty::Float, "0.01", &[],
        "Share of every link's time left to unscheduled traffic (FCP messages): a timeslot lasts a \
         full-size frame's time times 1 + this. Without it, FCP messages to a host whose link the arbiter \
         keeps full would queue its data for good (§7.1: Fastpass reserves about 1% of throughput for FCP)."),
    key!("fastpass.jitter", Ty::Time, "0us", &[],
        "Clock error of an endpoint's transmissions: each granted timeslot is used a uniform random time in \
         [0, jitter] after its start, drawn from the host's own stream (§6.3: queues then grow by about one \
         packet per timeslot of error)."),
    key!("fastpass.report_interval", Ty::Time, "10us", &[],
        "Endpoints batch new demand for this long before reporting it (§2: aggregated over a few \
         microseconds). Each report is one FCP packet to every arbiter: at 2 us, a host sending at 10 \
         Gb/s would spend ~4% of its link on reports and 143 such hosts would need 55 Gb/s into the arbiter."),
    key!("fastpass.retransmit", Ty::Time, "200us", &[],
        "An endpoint sends its current totals again, as a query answered with the arbiter's counts, when a \
         destination's last report has gone unacknowledged this long, or when demand waits for allocations \
         and nothing has come from the arbiter for this long (§5.3; old packets are never resent; a gap in \
         the arbiter's sequence numbers sends them at once). While allocations keep coming, nothing is resent."),
    key!("fastpass.late_threshold", Ty::Time, "10us", &[],
        "An allocation arriving more than this after its timeslot began is not used but requested again \
         (§6.3)."),
    key!("fastpass.watchdog", Ty::Time, "100us", &[],
        "T_w: the primary arbiter's watchdog interval (§5.1)."),
    key!("fastpass.takeover", Ty::Time, "1ms", &[],
        "T_d: silence from the primary after which the secondary takes over (§5.1)."),
    key!("run.seed", Ty::Int, "1", &[], "Run seed; each component draws from its own stream derived from (seed, component)."),
    key!("run.duration", Ty::TimeOrOff, "off", &[], "Simulated time limit; `off` runs until every flow has finished."),
    key!("run.max_events", Ty::IntOrOff, "off", &[], "Event limit, a safety net for runaway scenarios."),
    key!("run.partitions", Ty::IntOrAuto, "1", &[],
         "Logical processes a run is cut into (docs/architecture.md § Parallel runs): a fat tree's pods or a leaf-spine's racks, grouped into this many, the top tier split by egress port (each port the process's of the unit below it) where its switches allow (output-queued, overflow drop or cut_payload), else dealt among them; `auto`: at least 4 and one per 256 hosts, at most one per pod or rack (4 at 128-1,024 hosts, 32 at 8,192: larger processes cross fewer cuts); 1: the whole fabric in one. The result depends on this (equal-time events in different processes are ordered by the cut) and never on `run.threads`. Star and dumbbell fabrics have one. A workload hears of a completion one lookahead (the cut links' least delay) after it, in every process. Not beside Fastpass (refused)."),
    key!("run.threads", Ty::IntOrAuto, "auto", &[],
         "Threads that run the logical processes (`run.partitions`) at once; outputs are byte-identical for every value. `auto`: one per core, at most one per process, and 1 where the fabric is too small for threads to pay (docs/performance.md § Parallel runs)."),
    key!("run.fct_txt", Ty::Choice(&["off", "hpcc", "hpcc9"]), "off", &[],
        "Also write fct.txt, the HPCC simulator's flow-completion file, beside flows.parquet: `hpcc`, its 8 columns (`sip dip sport dport size start_ns fct_ns standalone_fct_ns`, IPs in its hex encoding of node ids, the FCT until the sender has the last ACK); `hpcc9`, the 9 of the fork Parsimon and m3 read (the flow id first, the FCT until the receiver has the last byte). Standalone FCTs by each one's formula with this run's packet and header sizes (docs/mechanisms.md § HPCC formats)."),
    key!("run.progress_limit", Ty::TimeOrOff, "off", &[],
         "Stop the run (stop reason `no_progress`) when flows are active but not one byte of theirs has been acknowledged, cumulatively or by SACK, for this long: a livelock, packets moving and nothing new reaching a receiver. Checked every this long, so the run stops between one and two limits after the last progress. `off`: never."),
    key!("run.timeseries_interval", Ty::TimeOrOff, "off", &[],
        "Sample the network's state every interval into timeseries.parquet: active flows and their outstanding bytes \
         (Turbo §3's starvation figures). `off`: no timeseries."),
    key!("run.queue_sample_interval", Ty::TimeOrOff, "off", &[],
        "Sample every port's queued bytes (switch ports and hosts' NICs) every interval, from the first interval \
         on, into ports.parquet's `queue_samples` and `queue_p50_bytes` .. `queue_p999_bytes` (Fastpass §7.1, \
         Experiment A: the queue's median and tail). Sampling reads the queues only: every other result is the \
         same. `off`: those columns are null."),
    key!("run.flow_throughput_interval", Ty::TimeOrOff, "off", &[],
        "Write every active flow's goodput (payload bytes newly acknowledged) every interval, and a last row as it \
         ends, into flow_throughput.parquet (Fastpass §7.2, Experiment C: per-connection throughput). `off`: no \
         such file."),
    key!("ping.interval", Ty::TimeOrOff, "off", &[],
        "A periodic ping (Fastpass §7.1, Experiment B: RTT under load): `ping.src` sends a request of `ping.bytes` \
         to `ping.dst` every interval from `ping.start`, and `ping.dst`'s NIC answers each at once with a reply of \
         the same size. \
         Requests and replies are ordinary packets of the transport's data class: they leave through the host's \
         queue discipline and NIC and wait behind data in FIFO queues (pFabric's queues rank them as one-packet flows). \
         They never count as flows and never keep the run going. RTTs go to pings.parquet. `off`: no pings."),
    key!("ping.src", Ty::Int, "", &[], "The host that sends the pings (required with `ping.interval`)."),
    key!("ping.dst", Ty::Int, "", &[], "The host that answers them (required with `ping.interval`; not `ping.src`)."),
    key!("ping.start", Ty::Time, "0us", &[], "When the first request is sent."),
    key!("ping.bytes", Ty::Size, "64B", &[],
        "IP size of each request and of each reply: at least 28 B (IP and ICMP headers), at most a full data \
         packet's (`transport.mss` + `transport.header_bytes`). Linux's ping sends 84 B (56 B of data)."),
];

/// Defaults that depend on a section's kind (presets).
pub(super) const KIND_DEFAULTS: &[(&str, &str, &str)] = &[
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
    // DeTail §7.1: 6.6 us per link, the transceivers' delay folded in.
    ("detail96", "topology.link_delay", "6600ns"),
    ("poisson", "workload.cdf", "websearch"),
    // DeTail §8.1.2's sequential workload: 1460 B requests, responses of 4 to 12 KB.
    ("sequential", "workload.request_size", "1460B"),
    (
        "sequential",
        "workload.response_sizes",
        "[\"4KB\", \"6KB\", \"8KB\", \"10KB\", \"12KB\"]",
    ),
    // pFabric (FastLane §5: 250 us timeouts; pFabric §4.3: no fast retransmit).
    ("pfabric", "transport.rto_min", "250us"),
    ("pfabric", "transport.dupack_threshold", "off"),
    // Turbo §5.2: a 9.5 us timeout on pFabric's topology.
    ("turbo", "transport.rto_min", "9500ns"),
    // RoCE: the HPCC simulator's 1000 B payloads; IP 20 + UDP 8 + BTH 12 + ICRC 4.
    ("roce", "transport.mss", "1000"),
    ("roce", "transport.header_bytes", "44"),
];

pub(super) fn keydef(path: &str) -> &'static KeyDef {
    KEYS.iter()
        .find(|k| k.path == path)
        .unwrap_or_else(|| panic!("scenario key {path} is not in KEYS"))
}

pub(super) fn unknown_key_message(path: &str) -> String {
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

pub(super) fn edit_distance(a: &str, b: &str) -> usize {
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
