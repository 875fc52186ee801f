//! The event queue: a calendar queue ordered by (time, insertion sequence).
//!
//! Most events land within a few microseconds of now (a packet reaching the next node, a
//! port finishing a packet), while timers wait milliseconds. So near events go into a
//! ring of slots (by default 4096 of 16.4 ns: a 67 µs window) in O(1), with a bitmap of
//! occupied slots to find the next one; the slot being drained is sorted once, latest
//! first, and popped from the back; events beyond the window wait in an overflow heap
//! and move into the ring as the window reaches them.
//!
//! Ties break by insertion sequence, so the order is total and every run is identical.

use crate::units::Ps;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Default geometry: 4096 slots of 16.4 ns (a 67 µs window).
const DEFAULT_SHIFT: u32 = 14;
const DEFAULT_SLOTS_LOG2: u32 = 12;

struct Item<T> {
    time: Ps,
    seq: u64,
    item: T,
}

impl<T> PartialEq for Item<T> {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl<T> Eq for Item<T> {}
impl<T> PartialOrd for Item<T> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<T> Ord for Item<T> {
    // Reversed, so that BinaryHeap (a max-heap) yields the earliest (time, seq).
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

pub struct EventQueue<T> {
    /// Slot width is 2^shift ps; the ring has `slots` (a power of two) slots.
    shift: u32,
    slots: u64,
    mask: u64,
    words: usize,
    seq: u64,
    len: usize,
    /// The slot being drained: every event of an earlier slot has been popped.
    cursor: u64,
    /// Events of the cursor's slot, sorted latest first (pop from the back).
    cur: Vec<Item<T>>,
    /// Slot s, for cursor < s < cursor + slots, lives at ring[s & mask].
    ring: Vec<Vec<Item<T>>>,
    occupied: Vec<u64>,
    far: BinaryHeap<Item<T>>,
}

impl<T> Default for EventQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> EventQueue<T> {
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
            ring: (0..slots).map(|_| Vec::new()).collect(),
            occupied: vec![0; (slots / 64) as usize],
            far: BinaryHeap::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Pushes an event; `time` must not be earlier than the last popped event's.
    #[inline]
    pub fn push(&mut self, time: Ps, item: T) {
        self.seq += 1;
        self.len += 1;
        self.place(Item {
            time,
            seq: self.seq,
            item,
        });
    }

    #[inline]
    fn place(&mut self, it: Item<T>) {
        let slot = it.time >> self.shift;
        debug_assert!(slot >= self.cursor, "event in the past");
        if slot <= self.cursor {
            // Item's order is reversed, so ascending Ord = latest first.
            let at = self.cur.partition_point(|x| *x < it);
            self.cur.insert(at, it);
        } else if slot < self.cursor + self.slots {
            let i = (slot & self.mask) as usize;
            self.ring[i].push(it);
            self.occupied[i / 64] |= 1 << (i % 64);
        } else {
            self.far.push(it);
        }
    }

    /// Pops the earliest event (the first pushed among equal times).
    #[inline]
    pub fn pop(&mut self) -> Option<(Ps, T)> {
        loop {
            if let Some(it) = self.cur.pop() {
                self.len -= 1;
                return Some((it.time, it.item));
            }
            if self.len == 0 {
                return None;
            }
            self.advance();
        }
    }

    /// Moves the cursor to the next slot holding events and loads it.
    fn advance(&mut self) {
        let next_ring = self.next_occupied();
        let next_far = self.far.peek().map(|it| it.time >> self.shift);
        self.cursor = match (next_ring, next_far) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (None, None) => unreachable!("len > 0 but no events"),
        };
        let i = (self.cursor & self.mask) as usize;
        if self.occupied[i / 64] & (1 << (i % 64)) != 0 {
            self.occupied[i / 64] &= !(1 << (i % 64));
            // cur is empty here: swap the slot's buffer in and sort it once.
            std::mem::swap(&mut self.cur, &mut self.ring[i]);
            self.cur.sort_unstable();
        }
        // The window moved: overflow events now inside it join the ring.
        while self
            .far
            .peek()
            .is_some_and(|it| (it.time >> self.shift) < self.cursor + self.slots)
        {
            let it = self.far.pop().unwrap();
            self.place(it);
        }
    }

    /// The first occupied ring slot after the cursor, as an absolute slot number.
    fn next_occupied(&self) -> Option<u64> {
        let p = (self.cursor & self.mask) as usize;
        let base = self.cursor - p as u64;
        let start = p + 1;
        // Scan words circularly starting at the word holding `start`.
        let words = self.words;
        for k in 0..=words {
            let w = (start / 64 + k) % words;
            let mut bits = self.occupied[w];
            if k == 0 {
                bits &= u64::MAX.checked_shl((start % 64) as u32).unwrap_or(0);
            }
            if bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                if k == words && i >= start {
                    return None; // wrapped all the way around
                }
                let abs = if i > p {
                    base + i as u64
                } else {
                    base + self.slots + i as u64
                };
                return Some(abs);
            }
        }
        None
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
            let mut h = BinaryHeap::new();
            let mut seq = 0u64;
            let mut now = 0;
            for _ in 0..30_000 {
                if rng.below(3) > 0 || h.is_empty() {
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
