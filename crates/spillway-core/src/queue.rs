//! The event queue: a calendar queue ordered by (time, insertion sequence).
//!
//! Most events land within a few microseconds of now (a packet reaching the next node, a
//! port finishing a packet), while timers wait milliseconds. So near events go into a
//! ring of `SLOTS` slots of 2^`SHIFT` ps each (a 67 µs window) in O(1), with a bitmap of
//! occupied slots to find the next one; the slot being drained is a small binary heap;
//! events beyond the window wait in an overflow heap and move into the ring as the
//! window reaches them.
//!
//! Ties break by insertion sequence, so the order is total and every run is identical.

use crate::units::Ps;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

const SHIFT: u32 = 14; // 16.4 ns per slot
const SLOTS: u64 = 4096;
const MASK: u64 = SLOTS - 1;
const WORDS: usize = (SLOTS / 64) as usize;

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
    seq: u64,
    len: usize,
    /// The slot being drained: every event of an earlier slot has been popped.
    cursor: u64,
    cur: BinaryHeap<Item<T>>,
    /// Slot s, for cursor < s < cursor + SLOTS, lives at ring[s & MASK].
    ring: Vec<Vec<Item<T>>>,
    occupied: [u64; WORDS],
    far: BinaryHeap<Item<T>>,
}

impl<T> Default for EventQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> EventQueue<T> {
    pub fn new() -> Self {
        EventQueue {
            seq: 0,
            len: 0,
            cursor: 0,
            cur: BinaryHeap::new(),
            ring: (0..SLOTS).map(|_| Vec::new()).collect(),
            occupied: [0; WORDS],
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
        let slot = it.time >> SHIFT;
        debug_assert!(slot >= self.cursor, "event in the past");
        if slot <= self.cursor {
            self.cur.push(it);
        } else if slot < self.cursor + SLOTS {
            let i = (slot & MASK) as usize;
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
        let next_far = self.far.peek().map(|it| it.time >> SHIFT);
        self.cursor = match (next_ring, next_far) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (None, None) => unreachable!("len > 0 but no events"),
        };
        let i = (self.cursor & MASK) as usize;
        if self.occupied[i / 64] & (1 << (i % 64)) != 0 {
            self.occupied[i / 64] &= !(1 << (i % 64));
            let mut v = std::mem::take(&mut self.ring[i]);
            self.cur.extend(v.drain(..));
            self.ring[i] = v;
        }
        // The window moved: overflow events now inside it join the ring.
        while self
            .far
            .peek()
            .is_some_and(|it| (it.time >> SHIFT) < self.cursor + SLOTS)
        {
            let it = self.far.pop().unwrap();
            self.place(it);
        }
    }

    /// The first occupied ring slot after the cursor, as an absolute slot number.
    fn next_occupied(&self) -> Option<u64> {
        let p = (self.cursor & MASK) as usize;
        let base = self.cursor - p as u64;
        let start = p + 1;
        // Scan words circularly starting at the word holding `start`.
        for k in 0..=WORDS {
            let w = (start / 64 + k) % WORDS;
            let mut bits = self.occupied[w];
            if k == 0 {
                bits &= u64::MAX.checked_shl((start % 64) as u32).unwrap_or(0);
            }
            if bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                if k == WORDS && i >= start {
                    return None; // wrapped all the way around
                }
                let abs = if i > p {
                    base + i as u64
                } else {
                    base + SLOTS + i as u64
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
            let mut q = EventQueue::new();
            let mut h = BinaryHeap::new();
            let mut seq = 0u64;
            let mut now = 0;
            for _ in 0..30_000 {
                if rng.below(3) > 0 || h.is_empty() {
                    // Ties, same slot, near ring, wrap-around and far overflow.
                    let dt = match rng.below(6) {
                        0 => 0,
                        1 => rng.below(1 << SHIFT),
                        2 => rng.below(1 << 20),
                        3 => rng.below(SLOTS << SHIFT),
                        4 => (SLOTS << SHIFT) - 1 + rng.below(4),
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
