//! The event queue: a calendar queue ordered by (time, insertion sequence).
//!
//! Most events land within a few microseconds of now (a packet reaching the next node, a
//! port finishing a packet), while timers wait milliseconds. So near events go into a
//! ring of narrow slots (about one event each when the network is busy) in O(1), with a
//! bitmap of occupied slots to find the next one; events beyond the window wait in an
//! overflow heap and move into the ring as the window reaches them.
//!
//! A slot is a singly linked list through a pool of nodes, so the ring itself is 4 bytes
//! a slot and stays in cache, and a freed node is reused by the next push while still
//! hot. When the cursor reaches a slot, its list (newest first) is copied into `cur`,
//! which is kept latest first and popped from the back; with narrow slots the list is
//! short, so each event is insertion-sorted into place (stably, by time) as it is copied.
//!
//! Ties break by insertion sequence, so the order is total and every run is identical.
//! Only the overflow heap stores that sequence; the ring keeps it as list order, so a
//! node is only time, event and link: 32 bytes for the simulator's 16-byte events (an
//! `Arrive` carries node, packet, ingress and egress port), and more of the pending
//! events stay in cache.

use crate::units::Ps;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Default geometry: 4096 slots of 2 ns (an 8.4 µs window).
const DEFAULT_SHIFT: u32 = 11;
const DEFAULT_SLOTS_LOG2: u32 = 12;

const NIL: u32 = u32::MAX;

/// An overflow event. Only the heap needs the sequence number: everywhere else the
/// order of insertion is kept by position.
struct Far<T> {
    time: Ps,
    seq: u64,
    item: T,
}

impl<T> Far<T> {
    #[inline]
    fn key(&self) -> (Ps, u64) {
        (self.time, self.seq)
    }
}

impl<T> PartialEq for Far<T> {
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key()
    }
}
impl<T> Eq for Far<T> {}
impl<T> PartialOrd for Far<T> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<T> Ord for Far<T> {
    // Reversed, so that BinaryHeap (a max-heap) yields the earliest (time, seq).
    fn cmp(&self, o: &Self) -> Ordering {
        o.key().cmp(&self.key())
    }
}

/// A pooled list node: an event and the next (older-pushed) node of its slot.
///
/// Aligned to its 32 bytes so that no node straddles two cache lines wherever the
/// allocator puts the pool: a pop loads one line, not sometimes two. (A pool 16 bytes
/// off a line boundary, as some builds' heap layouts gave, split half its nodes.)
#[derive(Clone, Copy)]
#[repr(align(32))]
struct Node<T> {
    time: Ps,
    item: T,
    next: u32,
}

pub struct EventQueue<T: Copy> {
    /// Slot width is 2^shift ps; the ring has `slots` (a power of two) slots.
    shift: u32,
    slots: u64,
    mask: u64,
    words: usize,
    seq: u64,
    len: usize,
    /// The slot being drained: every event of an earlier slot has been popped.
    cursor: u64,
    /// Events of the cursor's slot, latest first and among equal times last pushed
    /// first (pop from the back).
    cur: Vec<(Ps, T)>,
    /// Slot s, for cursor < s < cursor + slots, is the list starting at
    /// pool[head[s & mask]] (NIL when empty), last pushed first.
    head: Vec<u32>,
    occupied: Vec<u64>,
    pool: Vec<Node<T>>,
    /// Free pool nodes, linked through `next`.
    ///
    /// Invariant (what the unchecked accesses below rely on): every node index held in
    /// `head`, `free` or a node's `next`, other than NIL, is below `pool.len()` (indices
    /// are only ever made as `pool.len() - 1` after a push, and the pool never shrinks);
    /// `head.len()` is `slots` and `occupied.len()` is `slots / 64`, so a ring index
    /// `s & mask` is in bounds for `head` and its word `/ 64` for `occupied`.
    free: u32,
    far: BinaryHeap<Far<T>>,
    /// Slot of the earliest overflow event (u64::MAX when none), to skip peeking.
    far_slot: u64,
    /// Prefetch the next slot's list ahead of the cursor, one node per pop
    /// ([`Self::set_prefetch`]).
    walk: bool,
    /// The node of the next slot's list whose line was last requested (NIL: none).
    /// Only a hint: if the node has been reused since, the walk prefetches lines
    /// nobody needs, and the next cursor move restarts it.
    walk_at: u32,
    /// (debug builds) The last popped event's time, and the one before it (`unpop`
    /// returns to it): no push may be earlier. Not the cursor's slot: `unpop` and
    /// `peek_time` leave the cursor at an event beyond, and a parallel run's post then
    /// brings events between (they join `cur`, in order).
    #[cfg(debug_assertions)]
    floor: (Ps, Ps),
}

impl<T: Copy> Default for EventQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy> EventQueue<T> {
    pub fn new() -> Self {
        Self::with_geometry(DEFAULT_SHIFT, DEFAULT_SLOTS_LOG2)
    }

    /// Slots of 2^`shift` ps, 2^`slots_log2` of them (at least 64).
    pub fn with_geometry(shift: u32, slots_log2: u32) -> Self {
        let slots = 1u64 << slots_log2.max(6);
        EventQueue {
            shift,
            slots,
            mask: slots - 1,
            words: (slots / 64) as usize,
            seq: 0,
            len: 0,
            cursor: 0,
            cur: Vec::new(),
            head: vec![NIL; slots as usize],
            occupied: vec![0; (slots / 64) as usize],
            pool: Vec::new(),
            free: NIL,
            far: BinaryHeap::new(),
            far_slot: u64::MAX,
            walk: false,
            walk_at: NIL,
            #[cfg(debug_assertions)]
            floor: (0, 0),
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Pushes an event; `time` must not be earlier than the last popped event's.
    ///
    /// Equal times pop in push order without a sequence number in the ring: a slot's
    /// list is in push order, `cur` keeps it, and overflow events (the only ones pushed
    /// out of order) join the ring before any later push can reach their slot.
    #[inline(always)]
    pub fn push(&mut self, time: Ps, item: T) {
        self.len += 1;
        let slot = time >> self.shift;
        #[cfg(debug_assertions)]
        debug_assert!(time >= self.floor.0, "event in the past");
        // Nearly every event lands in the ring ahead of the cursor: that path is inlined
        // at every call site, the rest is not.
        // cursor < slot < cursor + slots, in one compare.
        if slot.wrapping_sub(self.cursor + 1) < self.slots - 1 {
            self.link(slot, time, item);
        } else {
            self.push_slow(slot, time, item);
        }
    }

    /// [`Self::push`] into the slot being drained or beyond the ring.
    #[cold]
    #[inline(never)]
    fn push_slow(&mut self, slot: u64, time: Ps, item: T) {
        if slot <= self.cursor {
            // The cursor's slot, or an earlier one left empty behind it (a parallel
            // run's post after `unpop`): into `cur`, after every queued event of the
            // same time or earlier.
            let at = self.cur.partition_point(|x| x.0 > time);
            self.cur.insert(at, (time, item));
        } else {
            self.seq += 1;
            self.far_slot = self.far_slot.min(slot);
            self.far.push(Far {
                time,
                seq: self.seq,
                item,
            });
        }
    }

    /// Puts an event at the front of ring slot `slot`'s list.
    ///
    /// Inlined at every push: without bounds checks (see `free` for why they hold) it
    /// is about ten instructions shorter.
    #[inline(always)]
    fn link(&mut self, slot: u64, time: Ps, item: T) {
        let i = (slot & self.mask) as usize;
        debug_assert!(i < self.head.len() && i / 64 < self.occupied.len());
        // SAFETY: i = slot & mask < slots = head.len() (invariant at `free`).
        let head = unsafe { self.head.get_unchecked_mut(i) };
        let n = Node {
            time,
            item,
            next: *head,
        };
        let at = if self.free != NIL {
            let at = self.free;
            debug_assert!((at as usize) < self.pool.len());
            // SAFETY: `free` is NIL or a pool index (invariant at `free`).
            let node = unsafe { self.pool.get_unchecked_mut(at as usize) };
            self.free = node.next;
            *node = n;
            at
        } else {
            self.pool.push(n);
            (self.pool.len() - 1) as u32
        };
        *head = at;
        // SAFETY: i / 64 < slots / 64 = occupied.len() (invariant at `free`).
        unsafe { *self.occupied.get_unchecked_mut(i / 64) |= 1 << (i % 64) };
    }

    /// The event [`Self::pop`] returns next, if it is in the slot being drained (no
    /// search): for prefetching what it will touch.
    #[inline(always)]
    pub fn peek_near(&self) -> Option<&T> {
        self.cur.last().map(|x| &x.1)
    }

    /// Prefetch ahead of the cursor: when it moves, the next occupied slot's first node,
    /// then one more node of that slot's list at every pop. A slot's list is a chain of
    /// nodes pushed microseconds apart, each found only through the one before it: on
    /// large networks, where they have left the caches, walking it stalls once per node.
    pub fn set_prefetch(&mut self, on: bool) {
        self.walk = on;
    }

    /// Whether [`Self::set_prefetch`] turned prefetching on.
    #[inline(always)]
    pub fn prefetching(&self) -> bool {
        self.walk
    }

    #[inline(always)]
    fn walk_step(&mut self) {
        if let Some(n) = self.pool.get(self.walk_at as usize) {
            self.walk_at = n.next;
            self.prefetch_node(self.walk_at);
        }
    }

    /// Start loading pool node `at` (nothing for NIL).
    #[inline(always)]
    fn prefetch_node(&self, at: u32) {
        if let Some(m) = self.pool.get(at as usize) {
            crate::packet::prefetch(m as *const Node<T> as *const u8);
        }
    }

    /// Pops the earliest event (the first pushed among equal times). Always inlined:
    /// with a parallel run's callers beside the loop's, the compiler made it a call
    /// (~9 instructions more an event in every run).
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(Ps, T)> {
        if self.walk {
            self.walk_step();
        }
        let it = if let Some(it) = self.cur.pop() {
            it
        } else {
            if self.len == 0 {
                return None;
            }
            self.advance()
        };
        self.len -= 1;
        #[cfg(debug_assertions)]
        {
            self.floor = (it.0, self.floor.0);
        }
        Some(it)
    }

    /// Puts back the event [`Self::pop`] just returned, so that it pops next again (a
    /// parallel run's window stops at the first event past its end).
    pub fn unpop(&mut self, time: Ps, item: T) {
        self.len += 1;
        self.cur.push((time, item));
        #[cfg(debug_assertions)]
        {
            self.floor.0 = self.floor.1;
        }
    }

    /// The earliest event's time, if any.
    pub fn peek_time(&mut self) -> Option<Ps> {
        if let Some(&(t, _)) = self.cur.last() {
            return Some(t);
        }
        let (t, item) = self.pop()?;
        self.unpop(t, item);
        Some(t)
    }

    /// Moves the cursor to the next slot holding events, and returns its earliest
    /// event; the others wait in `cur`. Inlined into the loop, as before the engine's
    /// dispatch grew (as a call, ~9 instructions more an event).
    #[inline(always)]
    fn advance(&mut self) -> (Ps, T) {
        let next_ring = self.next_occupied();
        self.cursor = next_ring.min(self.far_slot);
        debug_assert!(self.cursor != u64::MAX, "len > 0 but no events");
        // The window moved: overflow events now inside it join the ring first, in
        // (time, seq) order, so that in every slot they sit behind (pop before) the
        // later pushes, as their sequence numbers say.
        if self.far_slot < self.cursor + self.slots {
            while let Some(it) = self.far.peek() {
                let slot = it.time >> self.shift;
                if slot >= self.cursor + self.slots {
                    break;
                }
                let (time, item) = (it.time, it.item);
                self.far.pop();
                self.link(slot, time, item);
            }
            self.far_slot = self.far.peek().map_or(u64::MAX, |it| it.time >> self.shift);
        }
        let i = (self.cursor & self.mask) as usize;
        debug_assert!(self.occupied[i / 64] & (1 << (i % 64)) != 0);
        // SAFETY: i = cursor & mask < slots: in bounds (invariant at `free`).
        unsafe {
            *self.occupied.get_unchecked_mut(i / 64) &= !(1 << (i % 64));
        }
        let at = std::mem::replace(unsafe { self.head.get_unchecked_mut(i) }, NIL);
        if self.walk {
            let next = self.next_occupied();
            self.walk_at = if next == u64::MAX {
                NIL
            } else {
                self.head[(next & self.mask) as usize]
            };
            self.prefetch_node(self.walk_at);
        }
        let n = self.take_node(at);
        if n.next == NIL {
            // A slot of one event (the common case): no trip through `cur`.
            return (n.time, n.item);
        }
        // cur is empty here. The list runs last pushed first, which is latest first
        // whenever its times never decrease in push order.
        self.cur.push((n.time, n.item));
        let mut at = n.next;
        while at != NIL {
            let n = self.take_node(at);
            // Insertion sort as the list is copied (a slot holds a few events): an
            // event goes behind every one of the same time or later, which keeps equal
            // times last pushed first, as a stable sort by time would. Cheaper than
            // `sort_by_key` on the short, usually ordered lists.
            let last = self.cur.len();
            self.cur.push((n.time, n.item));
            let c = self.cur.as_mut_slice();
            let mut j = last;
            while j > 0 && c[j - 1].0 < n.time {
                c[j] = c[j - 1];
                j -= 1;
            }
            if j != last {
                c[j] = (n.time, n.item);
            }
            at = n.next;
        }
        self.cur.pop().expect("the slot had two events or more")
    }

    /// Returns pool node `at` (not NIL), and puts it on the free list.
    #[inline(always)]
    fn take_node(&mut self, at: u32) -> Node<T> {
        debug_assert!(at != NIL && (at as usize) < self.pool.len());
        // SAFETY: a list's node index is a pool index (invariant at `free`).
        let node = unsafe { self.pool.get_unchecked_mut(at as usize) };
        let n = *node;
        node.next = self.free;
        self.free = at;
        n
    }

    /// The first occupied ring slot after the cursor, as an absolute slot number, or
    /// u64::MAX when the ring is empty.
    #[inline]
    fn next_occupied(&self) -> u64 {
        let p = (self.cursor & self.mask) as usize;
        let base = self.cursor - p as u64;
        let start = p + 1;
        let wmask = self.words - 1;
        // Most often the next event is in the same word, just after the cursor.
        let w0 = (start / 64) & wmask;
        let bits = self.occupied[w0] & u64::MAX.checked_shl((start % 64) as u32).unwrap_or(0);
        if bits != 0 {
            let i = w0 * 64 + bits.trailing_zeros() as usize;
            return if i > p {
                base + i as u64
            } else {
                base + self.slots + i as u64
            };
        }
        // Scan the other words circularly, then the start word's bits before `start`.
        for k in 1..=self.words {
            let w = (start / 64 + k) & wmask;
            let bits = self.occupied[w];
            if bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                if k == self.words && i >= start {
                    return u64::MAX; // wrapped all the way around
                }
                return if i > p {
                    base + i as u64
                } else {
                    base + self.slots + i as u64
                };
            }
        }
        u64::MAX
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use std::cmp::Reverse;

    /// Against a binary heap on (time, sequence): same order, ties by insertion.
    #[test]
    fn matches_a_binary_heap_with_sequence_numbers() {
        for seed in 0..20 {
            let mut rng = Rng::new(seed, 99);
            // A small ring too, so that wrap-around and the overflow heap get exercised.
            let mut q = if seed % 2 == 0 {
                EventQueue::new()
            } else {
                EventQueue::with_geometry(10, 6)
            };
            // The prefetching walk only reads: the order must not change.
            q.set_prefetch(seed % 4 < 2);
            let mut h = BinaryHeap::new();
            let mut seq = 0u64;
            let mut now = 0;
            // What `peek_near` promised after the last operation, if it was a pop.
            let mut promised = None;
            for _ in 0..30_000 {
                if rng.below(3) > 0 || h.is_empty() {
                    promised = None;
                    // Ties, same slot, near ring, wrap-around and far overflow.
                    let dt = match rng.below(6) {
                        0 => 0,
                        1 => rng.below(1 << DEFAULT_SHIFT),
                        2 => rng.below(1 << 20),
                        3 => rng.below(1 << (DEFAULT_SHIFT + DEFAULT_SLOTS_LOG2)),
                        4 => (1 << (DEFAULT_SHIFT + DEFAULT_SLOTS_LOG2)) - 1 + rng.below(4),
                        _ => rng.below(1 << 40),
                    };
                    seq += 1;
                    q.push(now + dt, seq);
                    h.push(Reverse((now + dt, seq)));
                } else {
                    let Reverse((t, s)) = h.pop().unwrap();
                    assert_eq!(q.pop(), Some((t, s)));
                    if let Some(p) = promised {
                        assert_eq!(p, s, "peek_near named another event");
                    }
                    promised = q.peek_near().copied();
                    now = t;
                }
                assert_eq!(q.len(), h.len());
            }
            while let Some(Reverse((t, s))) = h.pop() {
                assert_eq!(q.pop(), Some((t, s)));
            }
            assert!(q.pop().is_none());
        }
    }
}
