//! The pFabric queue (pFabric §4.2, as FastLane §3.4.2 and Turbo §3 describe it):
//! dequeue a packet of the flow that owns the highest-priority packet in the port; when
//! the buffer is full, drop the lowest-priority packet, the arriving one if it is the
//! lowest.
//!
//! A priority is (class, prio): the port's strict class first (0 highest), then the
//! transport's number (lower is more urgent: remaining bytes). Ties go by arrival:
//! among equals the earliest is served first and the latest is the victim. Which of the
//! owning flow's packets goes is the [`ServeOrder`]: its earliest arrival (pFabric), or
//! its lowest sequence number (Turbo §4(3)), among the classes not paused.
//!
//! No operation scans the queue (issue 27: a host's NIC holds hundreds of packets, and
//! a scan per eviction made a packet's cost grow with its queue). The packets live in a
//! slab of nodes (a free list, no allocation once the slab has grown to the largest
//! queue); they are indexed three ways, each node knowing its place in each:
//!
//! - a max-heap over (class, prio, arrival): the next victim, O(log n) to take;
//! - a min-heap per class over the same key: the best packet of the classes not paused
//!   is the top of the lowest open class's heap;
//! - per flow and class, a doubly linked list in serve order: in arrival order, or by
//!   (sequence, arrival) (an arrival is placed by walking from the tail: O(1) for
//!   packets that arrive in order). A flow's record (found by a map from the flow id,
//!   which keeps its capacity) holds the lists' heads, tails and counts.
//!
//! Enqueue, dequeue and each eviction are O(log n) (a sequence-ordered insert that is
//! neither the flow's highest nor its lowest sequence number in its class also walks
//! back past the flow's packets of higher sequence there).
//!
//! Up to [`SMALL`] packets the queue is instead a vector in arrival order, scanned:
//! pFabric's buffers hold a few packets (2 x BDP), where one or two cache lines scanned
//! cost less than the dozen the indexed structure touches.

use crate::packet::Arena;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// `switch.serve_order`: which packet of the flow that owns the most urgent packet goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ServeOrder {
    /// The flow's earliest arrival (pFabric §4.2).
    #[default]
    Arrival,
    /// The flow's lowest sequence number, ties by arrival (Turbo §4(3)).
    Sequence,
}

/// One queued packet, with what the discipline needs so it never reads the packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub pkt: u32,
    pub class: u8,
    pub prio: u64,
    pub flow: u64,
    /// The packet's `seq` (data: its first byte; [`ServeOrder::Sequence`] serves by it).
    pub seq: u64,
    pub wire: u32,
    /// Port the packet arrived on (FastLane sends a victim's notification back there).
    pub in_port: u16,
}

impl Entry {
    /// Packet `pkt` of the arena, arrived on `in_port` (`u16::MAX`: from the host).
    #[inline]
    pub fn of(pkts: &Arena, pkt: u32, in_port: u16) -> Entry {
        let (hot, cold) = (pkts.hot(pkt), pkts.get(pkt));
        Entry {
            pkt,
            class: hot.class,
            prio: cold.prio,
            flow: cold.flow_id,
            seq: cold.seq,
            wire: hot.wire as u32,
            in_port,
        }
    }
}

const NIL: u32 = u32::MAX;
const CLASSES: usize = 8;

/// Arrival numbers take the low 56 bits of a heap key.
const ARRIVAL_BITS: u32 = 56;
const LAST_ARRIVAL: u64 = (1 << ARRIVAL_BITS) - 1;

/// A heap key: (class, prio, arrival) in one integer, compared in one instruction pair.
#[inline(always)]
fn key(class: u8, prio: u64, arrival: u64) -> u128 {
    debug_assert!(arrival <= LAST_ARRIVAL);
    (class as u128) << 120 | (prio as u128) << ARRIVAL_BITS | arrival as u128
}

/// A queued packet and its places in the heaps and its flow's list.
#[derive(Debug, Clone, Copy)]
struct Node {
    e: Entry,
    arrival: u64,
    /// Index in the victims' max-heap and in its class's min-heap.
    max_pos: u32,
    min_pos: u32,
    /// Its flow's list in this class (serve order); `next` links the free list too.
    prev: u32,
    next: u32,
    /// Its flow's record.
    rec: u32,
}

/// A flow's packets here, per class: its list's ends and length.
#[derive(Debug, Clone, Copy)]
struct FlowRec {
    flow: u64,
    head: [u32; CLASSES],
    tail: [u32; CLASSES],
    count: [u32; CLASSES],
    total: u32,
    /// Classes in which it has packets.
    mask: u8,
}

/// The flow-id map's hash: flow ids are distinct integers, a multiply spreads them.
#[derive(Default)]
struct FlowHasher(u64);

impl Hasher for FlowHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    #[inline]
    fn write_u64(&mut self, x: u64) {
        let h = (self.0 ^ x).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 32);
    }
}

type FlowMap = HashMap<u64, u32, BuildHasherDefault<FlowHasher>>;

/// An indexed binary heap of (key, node): `MAX` picks the largest key first; each node
/// keeps its index (`max_pos` in the max-heap, `min_pos` in a min-heap), so a node
/// anywhere in it is removed in O(log n).
#[derive(Debug, Default)]
struct Heap<const MAX: bool> {
    v: Vec<(u128, u32)>,
}

impl<const MAX: bool> Heap<MAX> {
    #[inline(always)]
    fn before(a: u128, b: u128) -> bool {
        if MAX {
            a > b
        } else {
            a < b
        }
    }

    #[inline(always)]
    fn place(&mut self, nodes: &mut [Node], i: usize, x: (u128, u32)) {
        self.v[i] = x;
        let n = &mut nodes[x.1 as usize];
        if MAX {
            n.max_pos = i as u32;
        } else {
            n.min_pos = i as u32;
        }
    }

    #[inline]
    fn top(&self) -> Option<(u128, u32)> {
        self.v.first().copied()
    }

    fn is_empty(&self) -> bool {
        self.v.is_empty()
    }

    fn sift_up(&mut self, nodes: &mut [Node], mut i: usize, x: (u128, u32)) {
        while i > 0 {
            let p = (i - 1) / 2;
            let y = self.v[p];
            if !Self::before(x.0, y.0) {
                break;
            }
            self.place(nodes, i, y);
            i = p;
        }
        self.place(nodes, i, x);
    }

    fn sift_down(&mut self, nodes: &mut [Node], mut i: usize, x: (u128, u32)) {
        let n = self.v.len();
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && Self::before(self.v[r].0, self.v[l].0) {
                r
            } else {
                l
            };
            let y = self.v[c];
            if !Self::before(y.0, x.0) {
                break;
            }
            self.place(nodes, i, y);
            i = c;
        }
        self.place(nodes, i, x);
    }

    fn push(&mut self, nodes: &mut [Node], k: u128, node: u32) {
        self.v.push((k, node));
        let i = self.v.len() - 1;
        self.sift_up(nodes, i, (k, node));
    }

    /// Removes the entry at index `i`.
    fn remove(&mut self, nodes: &mut [Node], i: usize) {
        let last = self.v.pop().expect("a heap entry to remove");
        if i == self.v.len() {
            return;
        }
        if i > 0 && Self::before(last.0, self.v[(i - 1) / 2].0) {
            self.sift_up(nodes, i, last);
        } else {
            self.sift_down(nodes, i, last);
        }
    }
}

/// The queue once it holds more than [`SMALL`] packets: the slab, heaps and lists.
#[derive(Debug)]
struct Indexed {
    order: ServeOrder,
    nodes: Vec<Node>,
    /// Head of the free nodes' list (linked by `next`).
    free: u32,
    len: u32,
    /// Arrivals so far: the next arrival's number.
    arrivals: u64,
    /// Every packet: the next victim on top.
    victims: Heap<true>,
    /// Per class: its best packet on top.
    best: [Heap<false>; CLASSES],
    /// Classes with packets.
    nonempty: u8,
    recs: Vec<FlowRec>,
    free_recs: Vec<u32>,
    flows: FlowMap,
    /// Eviction's candidates, taken off the victims' heap until enough room is found.
    taken: Vec<(u128, u32)>,
}

impl Indexed {
    fn new(order: ServeOrder) -> Indexed {
        Indexed {
            order,
            nodes: Vec::new(),
            free: NIL,
            len: 0,
            arrivals: 0,
            victims: Heap::default(),
            best: Default::default(),
            nonempty: 0,
            recs: Vec::new(),
            free_recs: Vec::new(),
            flows: FlowMap::default(),
            taken: Vec::new(),
        }
    }

    #[inline]
    fn len(&self) -> usize {
        self.len as usize
    }

    /// Some packet of another (flow, class) than (`flow`, `class`) is queued here.
    #[inline]
    fn others_queued(&self, flow: u64, class: u8) -> bool {
        let mine = self
            .flows
            .get(&flow)
            .map_or(0, |&r| self.recs[r as usize].count[class as usize]);
        self.len > mine
    }

    /// Admits `e` into a buffer holding `bytes` of `capacity`, evicting lower-priority
    /// packets into `evicted` as needed. Returns false (and evicts nothing) when `e`
    /// itself is the victim. `bytes` is updated for admissions and evictions.
    fn enqueue(
        &mut self,
        e: Entry,
        bytes: &mut u64,
        capacity: u64,
        evicted: &mut Vec<Entry>,
    ) -> bool {
        let wire = e.wire as u64;
        if *bytes + wire > capacity {
            // Room made only from packets of strictly lower priority than `e`, the
            // lowest first (the latest among equals): taken off the victims' heap until
            // enough is freed, and put back if there is not enough.
            let need = *bytes + wire - capacity;
            let bar = key(e.class, e.prio, LAST_ARRIVAL);
            let mut freed = 0u64;
            let mut taken = std::mem::take(&mut self.taken);
            taken.clear();
            while freed < need {
                match self.victims.top() {
                    Some((k, n)) if k > bar => {
                        self.victims.remove(&mut self.nodes, 0);
                        taken.push((k, n));
                        freed += self.nodes[n as usize].e.wire as u64;
                    }
                    _ => {
                        for &(k, n) in &taken {
                            self.victims.push(&mut self.nodes, k, n);
                        }
                        self.taken = taken;
                        return false;
                    }
                }
            }
            for &(_, n) in &taken {
                let x = self.detach(n);
                *bytes -= x.wire as u64;
                evicted.push(x);
            }
            self.taken = taken;
        }
        *bytes += wire;
        self.insert(e);
        true
    }

    /// Removes and returns a packet of the flow owning the highest-priority packet
    /// among the classes not `paused` (a bit per class): its earliest arrival, or its
    /// lowest sequence number (ties by arrival), among its packets in those classes.
    fn dequeue(&mut self, bytes: &mut u64, paused: u8) -> Option<Entry> {
        let open = self.nonempty & !paused;
        if open == 0 {
            return None;
        }
        let c = open.trailing_zeros() as usize;
        let (_, b) = self.best[c].top().expect("a non-empty class");
        let rec = &self.recs[self.nodes[b as usize].rec as usize];
        let mut classes = rec.mask & !paused;
        let mut pick = rec.head[c];
        classes &= !(1 << c);
        if classes != 0 {
            // The flow has packets in other open classes: its first in serve order.
            let rank = |n: u32| {
                let x = &self.nodes[n as usize];
                match self.order {
                    ServeOrder::Arrival => (0, x.arrival),
                    ServeOrder::Sequence => (x.e.seq, x.arrival),
                }
            };
            let mut best = rank(pick);
            while classes != 0 {
                let k = classes.trailing_zeros() as usize;
                classes &= classes - 1;
                let h = rec.head[k];
                let r = rank(h);
                if r < best {
                    best = r;
                    pick = h;
                }
            }
        }
        let pos = self.nodes[pick as usize].max_pos as usize;
        self.victims.remove(&mut self.nodes, pos);
        let x = self.detach(pick);
        *bytes -= x.wire as u64;
        Some(x)
    }

    /// Queues `e`: a node, its heaps' entries, its place in its flow's list.
    fn insert(&mut self, e: Entry) {
        let arrival = self.arrivals;
        self.arrivals += 1;
        let c = e.class as usize;
        let rec = match self.flows.get(&e.flow) {
            Some(&r) => r,
            None => {
                let fresh = FlowRec {
                    flow: e.flow,
                    head: [NIL; CLASSES],
                    tail: [NIL; CLASSES],
                    count: [0; CLASSES],
                    total: 0,
                    mask: 0,
                };
                let r = match self.free_recs.pop() {
                    Some(r) => {
                        self.recs[r as usize] = fresh;
                        r
                    }
                    None => {
                        self.recs.push(fresh);
                        (self.recs.len() - 1) as u32
                    }
                };
                self.flows.insert(e.flow, r);
                r
            }
        };
        let node = Node {
            e,
            arrival,
            max_pos: 0,
            min_pos: 0,
            prev: NIL,
            next: NIL,
            rec,
        };
        let n = if self.free != NIL {
            let n = self.free;
            self.free = self.nodes[n as usize].next;
            self.nodes[n as usize] = node;
            n
        } else {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        };
        let k = key(e.class, e.prio, arrival);
        self.victims.push(&mut self.nodes, k, n);
        self.best[c].push(&mut self.nodes, k, n);
        self.nonempty |= 1 << c;
        self.len += 1;
        // Its place in the flow's list: after the last packet that goes before it.
        let r = &mut self.recs[rec as usize];
        let mut after = r.tail[c];
        if self.order == ServeOrder::Sequence
            && after != NIL
            && self.nodes[after as usize].e.seq > e.seq
        {
            if self.nodes[r.head[c] as usize].e.seq > e.seq {
                // Below all of them (a retransmission of the oldest): first.
                after = NIL;
            } else {
                while self.nodes[after as usize].e.seq > e.seq {
                    after = self.nodes[after as usize].prev;
                }
            }
        }
        let before = if after == NIL {
            std::mem::replace(&mut r.head[c], n)
        } else {
            std::mem::replace(&mut self.nodes[after as usize].next, n)
        };
        if before == NIL {
            r.tail[c] = n;
        } else {
            self.nodes[before as usize].prev = n;
        }
        let x = &mut self.nodes[n as usize];
        x.prev = after;
        x.next = before;
        r.count[c] += 1;
        r.total += 1;
        r.mask |= 1 << c;
    }

    /// Takes node `n` (already off the victims' heap) out of its class's heap and its
    /// flow's list, and frees it (and its flow's record if it was the flow's last).
    fn detach(&mut self, n: u32) -> Entry {
        let x = self.nodes[n as usize];
        let c = x.e.class as usize;
        self.best[c].remove(&mut self.nodes, x.min_pos as usize);
        if self.best[c].is_empty() {
            self.nonempty &= !(1 << c);
        }
        let r = &mut self.recs[x.rec as usize];
        if x.prev == NIL {
            r.head[c] = x.next;
        } else {
            self.nodes[x.prev as usize].next = x.next;
        }
        if x.next == NIL {
            r.tail[c] = x.prev;
        } else {
            self.nodes[x.next as usize].prev = x.prev;
        }
        r.count[c] -= 1;
        if r.count[c] == 0 {
            r.mask &= !(1 << c);
        }
        r.total -= 1;
        if r.total == 0 {
            let flow = r.flow;
            self.flows.remove(&flow);
            self.free_recs.push(x.rec);
        }
        self.nodes[n as usize].next = self.free;
        self.free = n;
        self.len -= 1;
        x.e
    }

    /// Moves every packet into `small`, in arrival order (it must have room), and
    /// empties the structure, keeping its capacity.
    fn drain_into(&mut self, small: &mut Vec<Entry>) {
        let mut all = std::mem::take(&mut self.taken);
        all.clear();
        all.extend_from_slice(&self.victims.v);
        all.sort_unstable_by_key(|&(k, _)| k as u64 & LAST_ARRIVAL);
        small.extend(all.iter().map(|&(_, n)| self.nodes[n as usize].e));
        self.taken = all;
        self.nodes.clear();
        self.free = NIL;
        self.len = 0;
        self.victims.v.clear();
        for h in &mut self.best {
            h.v.clear();
        }
        self.nonempty = 0;
        self.recs.clear();
        self.free_recs.clear();
        self.flows.clear();
    }

    /// The packets queued, in arrival order (tests).
    #[cfg(test)]
    fn entries(&self) -> Vec<Entry> {
        let mut v: Vec<(u64, Entry)> = self
            .victims
            .v
            .iter()
            .map(|&(_, n)| {
                let x = &self.nodes[n as usize];
                (x.arrival, x.e)
            })
            .collect();
        v.sort_by_key(|&(a, _)| a);
        v.into_iter().map(|(_, e)| e).collect()
    }
}

/// Up to this many packets the queue is a vector in arrival order, each operation a
/// scan of it; an arrival beyond it moves the packets into the indexed structure, which
/// they leave once the queue is down to a quarter of it (so a move costs O(n log n)
/// once per n/4 operations at least). Both give the same answers (the property test
/// runs each alone and both together).
const SMALL: usize = 32;

#[derive(Debug)]
pub struct PFabricQueue {
    order: ServeOrder,
    /// Packets at or below this count are kept in `small` ([`SMALL`]; tests vary it).
    small_max: usize,
    /// While `big` is off: the packets, in arrival order.
    small: Vec<Entry>,
    big: bool,
    /// Made the first time the queue outgrows `small`, then kept.
    indexed: Option<Box<Indexed>>,
}

impl Default for PFabricQueue {
    fn default() -> Self {
        PFabricQueue::new(ServeOrder::Arrival)
    }
}

impl PFabricQueue {
    pub fn new(order: ServeOrder) -> PFabricQueue {
        PFabricQueue::with_small(order, SMALL)
    }

    /// A queue that is the vector up to `small_max` packets (the benchmark's and the
    /// tests' knob: 0 = the indexed structure alone, `usize::MAX` = the vector alone,
    /// which is the linear queue this one replaced).
    #[doc(hidden)]
    pub fn with_small(order: ServeOrder, small_max: usize) -> PFabricQueue {
        PFabricQueue {
            order,
            small_max,
            small: Vec::new(),
            big: false,
            indexed: None,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        match &self.indexed {
            Some(x) if self.big => x.len(),
            _ => self.small.len(),
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Some packet of another (flow, class) than (`flow`, `class`) is queued here: for
    /// a later zombie-packet metric. O(1) in the indexed structure (all packets against
    /// the flow's count in the class); a scan of at most [`SMALL`] packets below it.
    pub fn others_queued(&self, flow: u64, class: u8) -> bool {
        match &self.indexed {
            Some(x) if self.big => x.others_queued(flow, class),
            _ => self
                .small
                .iter()
                .any(|x| x.flow != flow || x.class != class),
        }
    }

    /// Admits `e` into a buffer holding `bytes` of `capacity`, evicting lower-priority
    /// packets into `evicted` as needed. Returns false (and evicts nothing) when `e`
    /// itself is the victim. `bytes` is updated for admissions and evictions.
    pub fn enqueue(
        &mut self,
        e: Entry,
        bytes: &mut u64,
        capacity: u64,
        evicted: &mut Vec<Entry>,
    ) -> bool {
        if !self.big {
            if self.small.len() < self.small_max {
                return self.enqueue_small(e, bytes, capacity, evicted);
            }
            // Outgrown: the packets move to the indexed structure, in arrival order.
            let order = self.order;
            let x = self
                .indexed
                .get_or_insert_with(|| Box::new(Indexed::new(order)));
            for q in self.small.drain(..) {
                x.insert(q);
            }
            self.big = true;
        }
        let x = self.indexed.as_mut().expect("the indexed structure");
        x.enqueue(e, bytes, capacity, evicted)
    }

    /// Removes and returns a packet of the flow owning the highest-priority packet
    /// among the classes not `paused` (a bit per class): its earliest arrival, or its
    /// lowest sequence number (ties by arrival), among its packets in those classes.
    pub fn dequeue(&mut self, bytes: &mut u64, paused: u8) -> Option<Entry> {
        if !self.big {
            return self.dequeue_small(bytes, paused);
        }
        let x = self.indexed.as_mut().expect("the indexed structure");
        let got = x.dequeue(bytes, paused);
        if x.len() <= self.small_max / 4 {
            if self.small.capacity() < self.small_max.min(SMALL) {
                self.small.reserve_exact(self.small_max.min(SMALL));
            }
            x.drain_into(&mut self.small);
            self.big = false;
        }
        got
    }

    /// [`Self::enqueue`] on the vector: a scan for the bytes that may go, then one for
    /// each victim.
    fn enqueue_small(
        &mut self,
        e: Entry,
        bytes: &mut u64,
        capacity: u64,
        evicted: &mut Vec<Entry>,
    ) -> bool {
        let wire = e.wire as u64;
        if *bytes + wire > capacity {
            // Room made only from packets of strictly lower priority than `e`.
            let need = *bytes + wire - capacity;
            let k = (e.class, e.prio);
            let freeable: u64 = self
                .small
                .iter()
                .filter(|x| (x.class, x.prio) > k)
                .map(|x| x.wire as u64)
                .sum();
            if freeable < need {
                return false;
            }
            let mut freed = 0u64;
            while freed < need {
                // The lowest priority; the latest arrival among equals.
                let mut v = 0;
                for (i, x) in self.small.iter().enumerate() {
                    if (x.class, x.prio) >= (self.small[v].class, self.small[v].prio) {
                        v = i;
                    }
                }
                let x = self.small.remove(v);
                freed += x.wire as u64;
                *bytes -= x.wire as u64;
                evicted.push(x);
            }
        }
        if self.small.capacity() == 0 {
            self.small.reserve_exact(self.small_max.min(SMALL));
        }
        *bytes += wire;
        self.small.push(e);
        true
    }

    /// [`Self::dequeue`] on the vector: a scan for the best open packet, then for its
    /// flow's first open packet in serve order.
    fn dequeue_small(&mut self, bytes: &mut u64, paused: u8) -> Option<Entry> {
        let open = |x: &Entry| paused & (1 << x.class) == 0;
        let mut best: Option<(usize, (u8, u64))> = None;
        for (i, x) in self.small.iter().enumerate() {
            if open(x) && best.is_none_or(|(_, k)| (x.class, x.prio) < k) {
                best = Some((i, (x.class, x.prio)));
            }
        }
        let (best, _) = best?;
        let flow = self.small[best].flow;
        let at = match self.order {
            // The flow's earliest open packet is at or before `best`.
            ServeOrder::Arrival => self.small[..=best]
                .iter()
                .position(|x| x.flow == flow && open(x))
                .expect("the best packet's flow is queued"),
            // Its lowest sequence number may have arrived later: the first of the least.
            ServeOrder::Sequence => {
                let mut at = best;
                for (i, x) in self.small.iter().enumerate() {
                    if x.flow == flow && open(x) && (x.seq, i) < (self.small[at].seq, at) {
                        at = i;
                    }
                }
                at
            }
        };
        let x = self.small.remove(at);
        *bytes -= x.wire as u64;
        Some(x)
    }

    /// The packets queued, in arrival order (tests).
    #[cfg(test)]
    fn entries(&self) -> Vec<Entry> {
        match &self.indexed {
            Some(x) if self.big => x.entries(),
            _ => self.small.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// A slow reference written from the definition: sort by priority to find the victim
    /// or the owner of the best open packet, then take that flow's first open packet in
    /// serve order.
    struct Reference {
        q: Vec<(u64, Entry)>, // (arrival number, entry)
        n: u64,
        bytes: u64,
        order: ServeOrder,
    }

    impl Reference {
        fn new(order: ServeOrder) -> Reference {
            Reference {
                q: Vec::new(),
                n: 0,
                bytes: 0,
                order,
            }
        }

        fn enqueue(&mut self, e: Entry, cap: u64) -> (bool, Vec<Entry>) {
            self.n += 1;
            let mut all: Vec<(u64, Entry)> = self.q.clone();
            all.push((self.n, e));
            let mut out = Vec::new();
            let mut bytes = self.bytes + e.wire as u64;
            // Evict, lowest priority (latest among equals) first, until it fits.
            while bytes > cap {
                all.sort_by_key(|(n, x)| (x.class, x.prio, *n));
                let (n, v) = all.pop().unwrap();
                if n == self.n {
                    // The arriving packet is the victim: nothing changes.
                    return (false, Vec::new());
                }
                bytes -= v.wire as u64;
                out.push(v);
            }
            self.q = all;
            self.q.sort_by_key(|(n, _)| *n);
            self.bytes = bytes;
            (true, out)
        }

        fn dequeue(&mut self, paused: u8) -> Option<Entry> {
            let open = |x: &Entry| paused & (1 << x.class) == 0;
            let (_, best) = *self
                .q
                .iter()
                .filter(|(_, x)| open(x))
                .min_by_key(|(n, x)| (x.class, x.prio, *n))?;
            let mine = self
                .q
                .iter()
                .enumerate()
                .filter(|(_, (_, x))| x.flow == best.flow && open(x));
            let (i, _) = match self.order {
                ServeOrder::Arrival => mine.min_by_key(|(_, (n, _))| *n),
                ServeOrder::Sequence => mine.min_by_key(|(_, (n, x))| (x.seq, *n)),
            }
            .unwrap();
            let (_, x) = self.q.remove(i);
            self.bytes -= x.wire as u64;
            Some(x)
        }
    }

    /// Random operations against the reference, in both serve orders, with classes
    /// paused at random; sequence numbers mostly ascend per flow, with some lower ones
    /// (retransmissions). The queue runs as the indexed structure alone (`small_max`
    /// 0), as the vector up to its usual size and the structure beyond (moving
    /// between them as the queue grows and drains), and with a tiny vector.
    #[test]
    fn matches_the_reference_and_never_serves_a_lower_priority_flow() {
        let mut moves = 0;
        for (order, small_max) in [
            (ServeOrder::Arrival, 0),
            (ServeOrder::Sequence, 0),
            (ServeOrder::Arrival, SMALL),
            (ServeOrder::Sequence, SMALL),
            (ServeOrder::Arrival, 4),
            (ServeOrder::Sequence, 4),
        ] {
            for seed in 0..40 {
                let mut rng = Rng::new(seed, 7);
                let cap = 4_000 + rng.below(20_000);
                let classes = 1 + rng.below(3);
                let mut q = PFabricQueue::with_small(order, small_max);
                let mut r = Reference::new(order);
                let mut was_big = false;
                let mut bytes = 0u64;
                let mut evicted = Vec::new();
                let mut next_seq = [0u64; 12];
                let mut paused = 0u8;
                for i in 0..3_000u32 {
                    if rng.below(50) == 0 {
                        paused = if rng.below(2) == 0 {
                            0
                        } else {
                            rng.below(1 << classes) as u8
                        };
                    }
                    if rng.below(5) < 3 {
                        let flow = rng.below(12);
                        let s = &mut next_seq[flow as usize];
                        let seq = if *s > 0 && rng.below(6) == 0 {
                            // A retransmission: a sequence number already sent.
                            rng.below(*s / 1460 + 1) * 1460
                        } else {
                            *s += 1460;
                            *s - 1460
                        };
                        let e = Entry {
                            pkt: i,
                            class: rng.below(classes) as u8,
                            // Flows mostly keep their priority, as remaining size does.
                            prio: flow * 1_000 + rng.below(3),
                            flow,
                            seq,
                            wire: [64, 600, 1538][rng.below(3) as usize],
                            in_port: 0,
                        };
                        evicted.clear();
                        let ok = q.enqueue(e, &mut bytes, cap, &mut evicted);
                        let (ok_ref, ev_ref) = r.enqueue(e, cap);
                        let at = format!("{order:?} {small_max} seed {seed} op {i}");
                        assert_eq!((ok, &evicted), (ok_ref, &ev_ref), "{at}");
                        assert!(bytes <= cap);
                    } else {
                        let open = |x: &Entry| paused & (1 << x.class) == 0;
                        let queued = q.entries();
                        let best = queued
                            .iter()
                            .filter(|x| open(x))
                            .map(|x| (x.class, x.prio))
                            .min();
                        let got = q.dequeue(&mut bytes, paused);
                        let at = format!("{order:?} {small_max} seed {seed} op {i}");
                        assert_eq!(got, r.dequeue(paused), "{at}");
                        if let Some(x) = got {
                            assert!(open(&x));
                            // The served packet's flow owns an open packet of the best
                            // priority.
                            let owner_best = queued
                                .iter()
                                .filter(|y| y.flow == x.flow && open(y))
                                .map(|y| (y.class, y.prio))
                                .min();
                            assert_eq!(owner_best, best, "{at}");
                        } else {
                            assert!(best.is_none());
                        }
                    }
                    assert_eq!(bytes, r.bytes);
                    let queued = q.entries();
                    assert_eq!(queued, r.q.iter().map(|(_, x)| *x).collect::<Vec<_>>());
                    assert_eq!(bytes, queued.iter().map(|x| x.wire as u64).sum::<u64>());
                    assert_eq!(q.len(), queued.len());
                    moves += (q.big != was_big) as u32;
                    was_big = q.big;
                    for x in &queued {
                        let others = queued
                            .iter()
                            .any(|y| (y.flow, y.class) != (x.flow, x.class));
                        assert_eq!(q.others_queued(x.flow, x.class), others);
                    }
                }
            }
        }
        // The queue moved between its forms many times.
        assert!(moves > 1_000, "{moves}");
    }

    /// The queue in both forms: the indexed structure alone, and as it runs.
    fn both(order: ServeOrder) -> [PFabricQueue; 2] {
        [PFabricQueue::with_small(order, 0), PFabricQueue::new(order)]
    }

    fn entry(pkt: u32, class: u8, prio: u64, flow: u64, seq: u64, wire: u32) -> Entry {
        Entry {
            pkt,
            class,
            prio,
            flow,
            seq,
            wire,
            in_port: 0,
        }
    }

    #[test]
    fn overflow_drops_the_lowest_priority_and_arrivals_that_are_lowest() {
        for mut q in both(ServeOrder::Arrival) {
            let mut bytes = 0;
            let mut ev = Vec::new();
            let e = |pkt, prio| entry(pkt, 0, prio, prio, 0, 1000);
            assert!(q.enqueue(e(1, 50), &mut bytes, 2000, &mut ev));
            assert!(q.enqueue(e(2, 10), &mut bytes, 2000, &mut ev));
            // Full: a more urgent arrival evicts the least urgent packet...
            assert!(q.enqueue(e(3, 5), &mut bytes, 2000, &mut ev));
            assert_eq!(ev, vec![e(1, 50)]);
            // ...and a less urgent arrival is itself dropped.
            ev.clear();
            assert!(!q.enqueue(e(4, 99), &mut bytes, 2000, &mut ev));
            assert!(ev.is_empty());
            assert_eq!(q.dequeue(&mut bytes, 0).unwrap().pkt, 3);
            assert_eq!(q.dequeue(&mut bytes, 0).unwrap().pkt, 2);
            assert_eq!(bytes, 0);
        }
    }

    /// Lower-priority packets that cannot free enough room together stay: the arrival
    /// is the victim, and the queue is as it was (the candidates taken off the victims'
    /// heap go back).
    #[test]
    fn an_arrival_that_lower_packets_cannot_make_room_for_evicts_nothing() {
        for mut q in both(ServeOrder::Arrival) {
            let mut bytes = 0;
            let mut ev = Vec::new();
            for (pkt, prio, wire) in [(1, 1, 1000), (2, 90, 300), (3, 80, 300)] {
                assert!(q.enqueue(
                    entry(pkt, 0, prio, prio, 0, wire),
                    &mut bytes,
                    2000,
                    &mut ev
                ));
            }
            // 1000 B more needs 600 B freed; only 600 B are of lower priority than 50...
            assert!(q.enqueue(entry(4, 0, 50, 50, 0, 1000), &mut bytes, 2000, &mut ev));
            assert_eq!(ev.iter().map(|x| x.pkt).collect::<Vec<_>>(), [2, 3]);
            // ...but not 1200 B: nothing moves, and the order of service is unchanged.
            ev.clear();
            assert!(!q.enqueue(entry(5, 0, 60, 60, 0, 1200), &mut bytes, 2000, &mut ev));
            assert!(ev.is_empty());
            let order: Vec<u32> =
                std::iter::from_fn(|| q.dequeue(&mut bytes, 0).map(|x| x.pkt)).collect();
            assert_eq!(order, [1, 4]);
        }
    }

    /// A paused class is passed over: the best packet of the open classes goes, and a
    /// flow's packets in a paused class wait.
    #[test]
    fn paused_classes_are_passed_over() {
        for mut q in both(ServeOrder::Arrival) {
            let mut bytes = 0;
            let mut ev = Vec::new();
            let e = |pkt, class, prio, flow| entry(pkt, class, prio, flow, 0, 100);
            for x in [e(1, 0, 5, 7), e(2, 1, 1, 8), e(3, 1, 9, 7)] {
                assert!(q.enqueue(x, &mut bytes, 10_000, &mut ev));
            }
            // Class 0 paused: flow 8's packet (prio 1, class 1) goes, not flow 7's class-0 one.
            assert_eq!(q.dequeue(&mut bytes, 0b01).unwrap().pkt, 2);
            // Flow 7's earliest open packet is in class 1.
            assert_eq!(q.dequeue(&mut bytes, 0b01).unwrap().pkt, 3);
            assert!(q.dequeue(&mut bytes, 0b01).is_none());
            assert_eq!(q.dequeue(&mut bytes, 0).unwrap().pkt, 1);
        }
    }

    /// Turbo §4(3): the owning flow's lowest sequence number goes first (a
    /// retransmission queued behind later segments goes ahead of them); pFabric's order
    /// takes its earliest arrival. Equal sequence numbers go by arrival.
    #[test]
    fn sequence_order_serves_the_flows_lowest_sequence_number() {
        let seqs = [2920, 4380, 1460, 5840, 1460];
        for (order, want) in [
            (ServeOrder::Arrival, [1, 2, 3, 4, 5]),
            (ServeOrder::Sequence, [3, 5, 1, 2, 4]),
        ] {
            for mut q in both(order) {
                let mut bytes = 0;
                let mut ev = Vec::new();
                for (i, &s) in seqs.iter().enumerate() {
                    let x = entry(i as u32 + 1, 0, 100 - i as u64, 7, s, 1538);
                    assert!(q.enqueue(x, &mut bytes, 100_000, &mut ev));
                }
                let got: Vec<u32> =
                    std::iter::from_fn(|| q.dequeue(&mut bytes, 0).map(|x| x.pkt)).collect();
                assert_eq!(got, want, "{order:?}");
            }
        }
    }

    #[test]
    fn others_queued_counts_other_flows_and_classes() {
        for mut q in both(ServeOrder::Arrival) {
            let mut bytes = 0;
            let mut ev = Vec::new();
            assert!(!q.others_queued(1, 0));
            assert!(q.enqueue(entry(1, 0, 5, 1, 0, 100), &mut bytes, 10_000, &mut ev));
            assert!(q.enqueue(entry(2, 0, 5, 1, 1460, 100), &mut bytes, 10_000, &mut ev));
            assert!(!q.others_queued(1, 0));
            assert!(q.others_queued(1, 1));
            assert!(q.others_queued(2, 0));
            assert!(q.enqueue(entry(3, 1, 5, 1, 0, 100), &mut bytes, 10_000, &mut ev));
            assert!(q.others_queued(1, 0));
            q.dequeue(&mut bytes, 0);
            q.dequeue(&mut bytes, 0);
            assert!(!q.others_queued(1, 1));
        }
    }

    /// Once the queue has held its largest backlog, enqueues, evictions and dequeues
    /// allocate nothing: the slab, the heaps and the flow map keep their capacity.
    #[test]
    fn steady_state_allocates_nothing() {
        let mut q = PFabricQueue::with_small(ServeOrder::Sequence, 0);
        let mut rng = Rng::new(1, 2);
        let mut bytes = 0;
        let mut ev = Vec::with_capacity(64);
        let mut run = |q: &mut PFabricQueue, ops: u32, flow0: u64| {
            for i in 0..ops {
                if rng.below(3) < 2 {
                    let flow = flow0 + rng.below(40);
                    let x = entry(i, rng.below(2) as u8, rng.below(1000), flow, i as u64, 1538);
                    ev.clear();
                    q.enqueue(x, &mut bytes, 200 * 1538, &mut ev);
                } else {
                    q.dequeue(&mut bytes, 0);
                }
            }
            while q.dequeue(&mut bytes, 0).is_some() {}
        };
        run(&mut q, 20_000, 0);
        let caps = |q: &PFabricQueue| {
            let q = q.indexed.as_ref().unwrap();
            (
                q.nodes.capacity(),
                q.victims.v.capacity(),
                q.best.iter().map(|h| h.v.capacity()).collect::<Vec<_>>(),
                q.recs.capacity(),
                q.flows.capacity(),
                q.taken.capacity(),
            )
        };
        let before = caps(&q);
        // Other flow ids (the map's entries come and go), the same backlog.
        run(&mut q, 20_000, 1_000);
        assert_eq!(caps(&q), before);
    }
}
