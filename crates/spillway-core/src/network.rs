//! Packets, ports and routes: the data the event loop moves.
//!
//! Packets live in an arena and are referred to by index; a port owns a byte-bounded
//! buffer shared by 8 strict-priority classes (class 0 highest) with tail drop; routes
//! hold, per switch and destination host, the set of equal-cost egress ports.

use crate::discipline::pfabric::{Entry, PFabricQueue};
use crate::marking::codel::Codel;
use crate::overflow::fastlane::NotifQueue;
use crate::routes::{Adjacency, RouteTable};
use crate::scenario::RouteSpec;
use crate::topology::Topology;
use crate::units::Ps;

pub const CLASSES: usize = 8;
pub const MAX_SACK: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum PktKind {
    Data,
    Ack,
    /// Header-only probe (pFabric §4.3 probe mode, FastLane §3.4.2), echoed by the
    /// destination's NIC as a `ProbeAck`.
    Probe,
    ProbeAck,
    /// FastLane drop notification (FastLane §3.2), addressed to the dropped packet's source.
    Notify,
    /// ICMP Source Quench (FastLane §2.2.1).
    Quench,
}

#[derive(Debug, Clone)]
pub struct Packet {
    pub flow_slot: u32,
    pub flow_id: u64,
    pub src: u32,
    pub dst: u32,
    pub kind: PktKind,
    pub class: u8,
    /// Data: this packet is a retransmission. Ack: it echoes one (Karn's rule).
    pub retx: bool,
    pub nsack: u8,
    /// Bytes on the wire: IP packet + framing.
    pub wire: u32,
    /// Payload bytes (data).
    pub len: u32,
    /// Data: first byte. Ack: cumulative ACK (next byte expected).
    pub seq: u64,
    /// Data: when it was sent. Ack: the echoed send time of the data it acknowledges.
    pub ts: Ps,
    pub sack: [(u64, u64); MAX_SACK],
    /// Fixed per flow: the 5-tuple hash ECMP uses.
    pub hash: u64,
    /// pFabric priority: lower is more urgent (remaining bytes); 0 for ACKs.
    pub prio: u64,
    /// FastLane timeout-epoch option (§3.4.1): the sender's timeouts so far.
    pub epoch: u16,
    /// ECN: ECN-capable transport; congestion experienced; (ACK) echo of CE.
    pub ect: bool,
    pub ce: bool,
    pub ece: bool,
    /// Notify / Quench: the kind of the packet it reports.
    pub orig: PktKind,
    /// ACK: FastLane's multipath option, out-of-order bytes held above `seq` (§3.4.1).
    /// (32 bits: a window's worth; keeps the packet at 152 bytes.)
    pub ooo: u32,
    /// When it joined its current queue (CoDel's sojourn time).
    pub enq: Ps,
    /// CP bits (CP §5.1): CP-available and precise-packet-loss. Data (1, 0) is
    /// CP-enabled, (1, 1) payload-cut; an ACK with `ppl` is a PACK.
    pub cpa: bool,
    pub ppl: bool,
    /// ACK: D-SACK flag (`AckInfo::dsack`).
    pub dsack: bool,
    /// PACK option (CP §4.3): the lost block with its edges swapped, (right, left).
    pub pack: (u64, u64),
}

impl Packet {
    /// A packet of `kind` with every option field at its neutral value.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        kind: PktKind,
        flow_slot: u32,
        flow_id: u64,
        src: u32,
        dst: u32,
        class: u8,
        wire: u32,
        hash: u64,
    ) -> Packet {
        Packet {
            flow_slot,
            flow_id,
            src,
            dst,
            kind,
            class,
            retx: false,
            nsack: 0,
            wire,
            len: 0,
            seq: 0,
            ts: 0,
            sack: [(0, 0); MAX_SACK],
            hash,
            prio: 0,
            epoch: 0,
            ect: false,
            ce: false,
            ece: false,
            orig: kind,
            ooo: 0,
            enq: 0,
            cpa: false,
            ppl: false,
            dsack: false,
            pack: (0, 0),
        }
    }
}

/// What forwarding and queueing read at every hop, kept apart from the rest of the
/// packet so that the hot path touches 16 bytes per packet, not a whole packet: four to
/// a cache line and none across two (the flow slot, read as a packet leaves its
/// source, is in the cold part, beside the flow id read with it).
#[derive(Debug, Clone, Copy)]
#[repr(align(16))]
pub struct Hot {
    pub dst: u32,
    /// ECMP hash of the flow's 5-tuple.
    pub hash: u32,
    /// Next packet in the same port queue (intrusive list), or NIL.
    next: u32,
    pub wire: u16,
    pub class: u8,
    pub kind: PktKind,
}

const NIL: u32 = u32::MAX;

/// A hint to start loading the cache line at `p` (nothing on other targets).
#[inline(always)]
pub fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

const _: () = assert!(std::mem::size_of::<Hot>() == 16);
// The cold part's size sets the arena's footprint (docs/performance.md): a field added
// here should not grow it.
const _: () = assert!(std::mem::size_of::<Packet>() == 152);

/// Why a network could not be built, and the scenario key responsible: `topology`
/// for its shape, `switch.routes[...]` for route overrides that fail only together.
#[derive(Debug)]
pub struct NetworkError {
    pub key: String,
    pub message: String,
}

impl NetworkError {
    fn topology(message: String) -> Self {
        NetworkError {
            key: "topology".into(),
            message,
        }
    }
}

/// Packet arena with a free list: no per-packet heap allocation in steady state.
/// `hot[i]` holds the per-hop fields of packet i, `cold[i]` the whole packet.
#[derive(Default)]
pub struct Arena {
    pub hot: Vec<Hot>,
    cold: Vec<Packet>,
    free: Vec<u32>,
}

impl Arena {
    #[inline(always)]
    pub fn alloc(&mut self, p: Packet) -> u32 {
        let h = Hot {
            dst: p.dst,
            hash: p.hash as u32,
            next: NIL,
            wire: p.wire as u16,
            class: p.class,
            kind: p.kind,
        };
        if let Some(i) = self.free.pop() {
            self.hot[i as usize] = h;
            self.cold[i as usize] = p;
            i
        } else {
            self.hot.push(h);
            self.cold.push(p);
            (self.cold.len() - 1) as u32
        }
    }
    #[inline]
    pub fn free(&mut self, i: u32) {
        self.free.push(i);
    }
    #[inline]
    pub fn hot(&self, i: u32) -> &Hot {
        &self.hot[i as usize]
    }
    #[inline]
    pub fn get(&self, i: u32) -> &Packet {
        &self.cold[i as usize]
    }
    /// Start loading packet i's lines (hot part, and the whole packet if `cold`).
    #[inline(always)]
    pub fn prefetch(&self, i: u32, cold: bool) {
        if let Some(h) = self.hot.get(i as usize) {
            prefetch(h as *const Hot as *const u8);
        }
        if cold {
            if let Some(p) = self.cold.get(i as usize) {
                let b = p as *const Packet as *const u8;
                let mut off = 0;
                while off < std::mem::size_of::<Packet>() {
                    prefetch(b.wrapping_add(off));
                    off += 64;
                }
            }
        }
    }
    #[inline]
    pub fn get_mut(&mut self, i: u32) -> &mut Packet {
        &mut self.cold[i as usize]
    }
    /// Rewrites packet i as `p` (FastLane turns a victim into a notification in place).
    pub fn replace(&mut self, i: u32, p: Packet) {
        let next = self.hot[i as usize].next;
        self.hot[i as usize] = Hot {
            dst: p.dst,
            hash: p.hash as u32,
            next,
            wire: p.wire as u16,
            class: p.class,
            kind: p.kind,
        };
        self.cold[i as usize] = p;
    }
    pub fn live(&self) -> usize {
        self.cold.len() - self.free.len()
    }
    pub fn capacity(&self) -> usize {
        self.cold.len()
    }
}

/// Per-port drop and mark counters, exported in summary.json (the others are kept in
/// `Port`, in the cache line their updates touch anyway).
#[derive(Debug, Clone, Default)]
pub struct PortStats {
    pub dropped: u64,
    /// Packets CE-marked (or quenched) by the port's marker.
    pub marked: u64,
}

/// `Port::wake_at` when no wake-up is pending.
pub const NO_WAKE: Ps = Ps::MAX;

/// `Port::extras` bits: which optional mechanisms the port has.
const HAS_PFABRIC: u8 = 1;
const HAS_NOTIF: u8 = 2;
const HAS_CODEL: u8 = 4;

/// An egress port: 8 strict-priority FIFOs sharing `capacity` bytes, tail drop.
/// The FIFOs are intrusive lists through the packets' hot headers.
///
/// Laid out by cache line (64 B): the first holds all that a packet passing through an
/// idle port reads and writes (most hops touch no other line of the port), then the
/// occupancy integral and, for classes 0-3, FIFO heads and tails that a queued packet
/// needs, then the optional mechanisms and the rest.
#[repr(C, align(64))]
pub struct Port {
    pub busy_until: Ps,
    /// When the pending wake-up is due (an earlier, superseded one is ignored), or
    /// [`NO_WAKE`].
    pub wake_at: Ps,
    pub bytes: u64,
    pub capacity: u64,
    /// Packets admitted, and the most bytes ever queued (counted as if a packet that
    /// passes straight through had queued).
    pub enqueued: u64,
    pub max_bytes: u64,
    /// Exact picoseconds per byte at this rate, or 0 when not a whole number or too big
    /// for 32 bits (then `serialization` computes from `rate`).
    ps_per_byte: u32,
    /// `delay` when it fits in 32 bits (4.29 ms), else u32::MAX: see [`Port::hop_delay`].
    delay32: u32,
    pub peer: u32,
    /// This link's port index at the peer (where a packet sent here arrives).
    pub peer_port: u16,
    nonempty: u8,
    /// HAS_* bits, so that the common path need not look at the boxes below.
    extras: u8,
    /// ∫ occupancy dt, in byte·ps, for the time average, up to `last_change`.
    area: u128,
    last_change: Ps,
    /// Threshold marking (`switch.ecn = "threshold"`): mark arrivals beyond K bytes.
    pub mark_above: u64,
    /// Per class, (head, tail) of its FIFO: side by side, so that an enqueue and a
    /// dequeue touch one line.
    fifo: [(u32, u32); CLASSES],
    pub stats: PortStats,
    /// `switch.queue = "pfabric"`: replaces the 8 FIFOs.
    pub pfabric: Option<Box<PFabricQueue>>,
    /// FastLane's notification queue (`switch.overflow = "fastlane"`).
    pub notif: Option<Box<NotifQueue>>,
    /// CoDel marking (`switch.ecn = "codel"`).
    pub codel: Option<Box<Codel>>,
    pub rate: u64,
    pub delay: Ps,
    /// CP: payload-cut packets created here and those refused by the extra allowance.
    pub cut: u64,
    pub cut_dropped: u64,
}

// The first cache line must hold the pass-through fields, the second the queueing ones
// of classes 0-3 (see above).
const _: () = assert!(std::mem::offset_of!(Port, extras) < 64);
const _: () = assert!(std::mem::offset_of!(Port, fifo) + 4 * 8 == 128);

/// Exact picoseconds per byte at `rate`, or 0 when not a whole number or too big.
fn ps_per_byte(rate: u64) -> u32 {
    if (8 * crate::units::PS_PER_S).is_multiple_of(rate) {
        u32::try_from(8 * crate::units::PS_PER_S / rate).unwrap_or(0)
    } else {
        0
    }
}

impl Port {
    fn new(peer: u32, peer_port: u16, rate: u64, delay: Ps, capacity: u64) -> Port {
        let ps_per_byte = ps_per_byte(rate);
        Port {
            busy_until: 0,
            wake_at: NO_WAKE,
            bytes: 0,
            capacity,
            enqueued: 0,
            max_bytes: 0,
            ps_per_byte,
            delay32: u32::try_from(delay).unwrap_or(u32::MAX),
            peer,
            peer_port,
            nonempty: 0,
            extras: 0,
            area: 0,
            last_change: 0,
            mark_above: u64::MAX,
            fifo: [(NIL, NIL); CLASSES],
            stats: PortStats::default(),
            pfabric: None,
            notif: None,
            codel: None,
            rate,
            delay,
            cut: 0,
            cut_dropped: 0,
        }
    }

    /// The link's propagation delay, from the first cache line when it fits.
    #[inline(always)]
    pub fn hop_delay(&self) -> Ps {
        if self.delay32 != u32::MAX {
            self.delay32 as Ps
        } else {
            self.delay
        }
    }

    /// Installs the optional mechanisms (at construction).
    pub fn set_extras(
        &mut self,
        pfabric: Option<Box<PFabricQueue>>,
        notif: Option<Box<NotifQueue>>,
        codel: Option<Box<Codel>>,
    ) {
        self.extras = (pfabric.is_some() as u8 * HAS_PFABRIC)
            | (notif.is_some() as u8 * HAS_NOTIF)
            | (codel.is_some() as u8 * HAS_CODEL);
        self.pfabric = pfabric;
        self.notif = notif;
        self.codel = codel;
    }

    /// A plain FIFO port: no pFabric queue, notification queue or CoDel.
    #[inline]
    pub fn is_plain(&self) -> bool {
        debug_assert_eq!(
            self.extras == 0,
            self.pfabric.is_none() && self.notif.is_none() && self.codel.is_none()
        );
        self.extras == 0
    }

    // The optional mechanisms, from the flags in the port's first cache line: asking
    // the boxes themselves would load the port's last line for every packet.
    #[inline(always)]
    pub fn has_pfabric(&self) -> bool {
        self.extras & HAS_PFABRIC != 0
    }
    #[inline(always)]
    pub fn has_notif(&self) -> bool {
        self.extras & HAS_NOTIF != 0
    }
    #[inline(always)]
    pub fn has_codel(&self) -> bool {
        self.extras & HAS_CODEL != 0
    }

    /// Nothing queued and the link free at `now`: a packet can start at once.
    #[inline]
    pub fn idle_at(&self, now: Ps) -> bool {
        self.nonempty == 0 && self.busy_until <= now && self.wake_at == NO_WAKE
    }

    /// [`Port::enqueue`] immediately followed by [`Port::dequeue`] on an idle plain port:
    /// the same counters, without the FIFO round trip. False when the packet does not fit.
    #[inline]
    pub fn pass_through(&mut self, wire: u64) -> bool {
        // A plain port with no packet queued has no byte queued.
        debug_assert!(self.is_plain() && self.nonempty == 0 && self.bytes == 0);
        if wire > self.capacity {
            return false;
        }
        // No account(now): with nothing queued it adds nothing to the area, and
        // `last_change` matters only once bytes queue, which enqueue accounts first.
        self.max_bytes = self.max_bytes.max(wire);
        self.enqueued += 1;
        true
    }

    #[inline]
    fn account(&mut self, now: Ps) {
        let dt = now - self.last_change;
        self.area += self.bytes as u128 * dt as u128;
        self.last_change = now;
    }

    /// Transmit at `rate` bit/s instead (`topology.clock_ppm`: this port's clock).
    pub fn set_rate(&mut self, rate: u64) {
        self.rate = rate;
        self.ps_per_byte = ps_per_byte(rate);
    }

    /// Time to serialize `bytes` on this port's link.
    #[inline]
    pub fn serialization(&self, bytes: u64) -> Ps {
        if self.ps_per_byte != 0 {
            bytes * self.ps_per_byte as u64
        } else {
            crate::units::serialization_ps(bytes, self.rate)
        }
    }

    /// Tail-drop admission; returns false when the packet does not fit in the buffer
    /// plus `extra` bytes (CP's allowance; 0 otherwise). The caller counts the drop.
    #[inline]
    pub fn enqueue(&mut self, now: Ps, pkt: u32, hot: &mut [Hot], extra: u64) -> bool {
        let (wire, class) = {
            let h = &hot[pkt as usize];
            (h.wire as u64, h.class as usize)
        };
        if self.bytes + wire > self.capacity + extra {
            return false;
        }
        self.account(now);
        self.bytes += wire;
        self.max_bytes = self.max_bytes.max(self.bytes);
        self.enqueued += 1;
        hot[pkt as usize].next = NIL;
        let f = &mut self.fifo[class];
        if f.0 == NIL {
            f.0 = pkt;
        } else {
            hot[f.1 as usize].next = pkt;
        }
        f.1 = pkt;
        self.nonempty |= 1 << class;
        true
    }

    /// pFabric admission: evicts lower-priority packets into `evicted` as needed;
    /// false (and a counted drop) when the arriving packet is itself the victim.
    pub fn enqueue_pfabric(&mut self, now: Ps, e: Entry, evicted: &mut Vec<Entry>) -> bool {
        self.account(now);
        let q = self.pfabric.as_mut().expect("a pFabric port");
        let n = evicted.len();
        if !q.enqueue(e, &mut self.bytes, self.capacity, evicted) {
            self.stats.dropped += 1;
            return false;
        }
        self.stats.dropped += (evicted.len() - n) as u64;
        self.enqueued += 1;
        self.max_bytes = self.max_bytes.max(self.bytes);
        true
    }

    /// The head of the highest-priority non-empty class (pFabric: its own choice).
    #[inline]
    pub fn dequeue(&mut self, now: Ps, hot: &[Hot]) -> Option<u32> {
        if self.extras & HAS_PFABRIC != 0 {
            self.account(now);
            let q = self.pfabric.as_mut().unwrap();
            return q.dequeue(&mut self.bytes).map(|e| e.pkt);
        }
        self.dequeue_fifo(now, hot).map(|(pkt, _)| pkt)
    }

    /// [`Port::dequeue`] for a port known to have no pFabric queue, with the packet's
    /// hot part (read here anyway, for its sender); always inlined, as the one per
    /// packet that waited.
    #[inline(always)]
    pub fn dequeue_fifo(&mut self, now: Ps, hot: &[Hot]) -> Option<(u32, Hot)> {
        if self.nonempty == 0 {
            return None;
        }
        let c = self.nonempty.trailing_zeros() as usize;
        let pkt = self.fifo[c].0;
        let h = &hot[pkt as usize];
        self.fifo[c].0 = h.next;
        if h.next == NIL {
            self.nonempty &= !(1 << c);
        }
        self.account(now);
        self.bytes -= h.wire as u64;
        Some((pkt, *h))
    }

    /// No data waiting (notifications aside).
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.nonempty == 0
            && (self.extras & HAS_PFABRIC == 0
                || self.pfabric.as_ref().is_none_or(|q| q.is_empty()))
    }

    /// Nothing at all to send: no data and no notification.
    #[inline(always)]
    pub fn is_idle(&self) -> bool {
        self.is_empty()
            && (self.extras & HAS_NOTIF == 0 || self.notif.as_ref().is_none_or(|n| n.is_empty()))
    }

    pub fn mean_bytes(&self, now: Ps) -> f64 {
        if now == 0 {
            return 0.0;
        }
        let area = self.area + self.bytes as u128 * (now - self.last_change) as u128;
        area as f64 / now as f64
    }
}

struct Node {
    ports: Vec<Port>,
}

/// The wired network: nodes with ports, and routes.
pub struct Network {
    pub hosts: u32,
    /// Every node's ports, node by node: node n's are `ports[first_port[n]..first_port[n + 1]]`
    /// (one array, so that reaching a port is one load, not two).
    ports: Vec<Port>,
    first_port: Vec<u32>,
    routes: RouteTable,
    /// Whether any route is weighted (`switch.routes` with `weights`): the hot path
    /// looks up weights only then.
    pub weighted: bool,
}

impl Network {
    /// Builds ports from the topology and routes by shortest paths (all equal-cost next
    /// hops kept). Errors when some host cannot reach another.
    pub fn new(
        topo: &Topology,
        switch_buffer: u64,
        edge_buffer: u64,
        spine_buffer: u64,
        nic_buffer: Option<u64>,
        routes: &[RouteSpec],
        name: &dyn Fn(u32) -> String,
    ) -> Result<Network, NetworkError> {
        let n = topo.nodes() as usize;
        let mut nodes: Vec<Node> = (0..n).map(|_| Node { ports: Vec::new() }).collect();
        // Buffer of `node`'s port toward `peer`.
        let cap = |node: u32, peer: u32| {
            if node < topo.hosts {
                nic_buffer.unwrap_or(u64::MAX)
            } else if peer < topo.hosts {
                edge_buffer
            } else if topo.top_tier.is_some_and(|t| node >= t) {
                spine_buffer
            } else {
                switch_buffer
            }
        };
        for l in &topo.links {
            let ia = nodes[l.a as usize].ports.len() as u16;
            let ib = nodes[l.b as usize].ports.len() as u16;
            nodes[l.a as usize]
                .ports
                .push(Port::new(l.b, ib, l.rate, l.delay, cap(l.a, l.b)));
            nodes[l.b as usize]
                .ports
                .push(Port::new(l.a, ia, l.rate, l.delay, cap(l.b, l.a)));
        }
        for (h, node) in nodes.iter().enumerate().take(topo.hosts as usize) {
            if node.ports.len() != 1 {
                return Err(NetworkError::topology(format!(
                    "host {h} has {} links; hosts have exactly one NIC",
                    node.ports.len()
                )));
            }
        }
        let peers: Vec<Vec<u32>> = nodes
            .iter()
            .map(|n| n.ports.iter().map(|p| p.peer).collect())
            .collect();
        let adj = Adjacency {
            peers: &peers,
            hosts: topo.hosts,
        };
        let routes = RouteTable::build(&adj, routes, name).map_err(|e| NetworkError {
            key: e.key,
            message: e.message,
        })?;
        let mut first_port = Vec::with_capacity(n + 1);
        let mut ports = Vec::new();
        for node in nodes {
            first_port.push(ports.len() as u32);
            ports.extend(node.ports);
        }
        first_port.push(ports.len() as u32);
        Ok(Network {
            hosts: topo.hosts,
            ports,
            first_port,
            weighted: routes.weighted,
            routes,
        })
    }

    /// Cumulative weights of the port set at `switch` toward `dst`, when that choice is
    /// weighted; look only when [`Network::weighted`].
    pub fn hop_weights(&self, switch: u32, dst: u32) -> Option<&[f64]> {
        self.routes.hop_weights(switch, dst)
    }

    /// Equal-cost egress ports at `switch` toward host `dst`.
    #[inline(always)]
    pub fn next_hops(&self, switch: u32, dst: u32) -> &[u16] {
        self.routes.next_hops(switch, dst)
    }

    /// (rate, delay) of each hop on one shortest path from `src` to `dst`
    /// (the first equal-cost choice at each switch; all are alike in our topologies).
    pub fn path(&self, src: u32, dst: u32) -> Vec<(u64, Ps)> {
        let mut hops = Vec::with_capacity(8);
        let p = self.port(src, 0);
        hops.push((p.rate, p.delay));
        let mut at = p.peer;
        while at != dst {
            let port = self.next_hops(at, dst)[0];
            let p = self.port(at, port as u32);
            hops.push((p.rate, p.delay));
            at = p.peer;
        }
        hops
    }

    pub fn switch_ports(&self) -> impl Iterator<Item = &Port> {
        self.ports[self.first_port[self.hosts as usize] as usize..].iter()
    }

    pub fn node_count(&self) -> usize {
        self.first_port.len() - 1
    }

    /// Where port `port` of `node` is in the flat array of ports, for
    /// [`Network::port_at_mut`]: a caller that reaches the same port twice looks it up once.
    #[inline(always)]
    pub fn port_index(&self, node: u32, port: u32) -> usize {
        (self.first_port[node as usize] + port) as usize
    }

    /// The port at [`Network::port_index`] `i`.
    #[inline(always)]
    pub fn port_at_mut(&mut self, i: usize) -> &mut Port {
        &mut self.ports[i]
    }

    /// Start loading the first line of the port at [`Network::port_index`] `i`.
    #[inline(always)]
    pub fn prefetch_port(&self, i: usize) {
        if let Some(p) = self.ports.get(i) {
            prefetch(p as *const Port as *const u8);
        }
    }

    /// Port `port` of `node`.
    #[inline(always)]
    pub fn port(&self, node: u32, port: u32) -> &Port {
        &self.ports[(self.first_port[node as usize] + port) as usize]
    }

    // Always inlined: with only `#[inline]`, `Sim::send` called it (and `Port::is_idle`)
    // out of line once per packet hop, ~14 instructions a hop with the call.
    #[inline(always)]
    pub fn port_mut(&mut self, node: u32, port: u32) -> &mut Port {
        &mut self.ports[(self.first_port[node as usize] + port) as usize]
    }

    /// The ports of `node`, by index.
    pub fn node_ports(&self, node: u32) -> &[Port] {
        let n = node as usize;
        &self.ports[self.first_port[n] as usize..self.first_port[n + 1] as usize]
    }

    pub fn node_ports_mut(&mut self, node: u32) -> &mut [Port] {
        let n = node as usize;
        &mut self.ports[self.first_port[n] as usize..self.first_port[n + 1] as usize]
    }

    /// Every port, node by node.
    pub fn all_ports(&self) -> &[Port] {
        &self.ports
    }
}
