//! A Fastpass endpoint's queues (Fastpass §6.1): one FIFO per destination between the
//! host's transports and its NIC. Demand is counted in timeslots as the packets will be
//! sent: in each granted timeslot the endpoint sends, from the head of the queue, the
//! packets whose total time on the wire fits in the timeslot (§6.1: greedily), so the
//! queue's packets are packed into timeslots in FIFO order and a packet that does not
//! fit in the last one opens the next. Each timeslot opened is one timeslot of demand.

use crate::units::Ps;
use std::collections::{BTreeMap, VecDeque};

/// A packet waiting for its timeslot.
#[derive(Debug, Clone, Copy)]
pub struct Waiting {
    pub pkt: u32,
    /// When it joined the queue.
    pub since: Ps,
    pub wire: u32,
}

#[derive(Debug, Default)]
struct DstQueue {
    pkts: VecDeque<Waiting>,
    /// Timeslots the queue's packets fill (the demand not yet served).
    slots: u64,
    /// Bytes in the last of them.
    tail: u32,
}

/// One host's per-destination queues; a destination with nothing queued has no entry.
#[derive(Debug, Default)]
pub struct EndpointQueues {
    dsts: BTreeMap<u32, DstQueue>,
}

impl EndpointQueues {
    /// Queues `w` for `dst`; true if it opened a new timeslot (one more of demand).
    pub fn push(&mut self, dst: u32, w: Waiting, slot_bytes: u32) -> bool {
        let q = self.dsts.entry(dst).or_default();
        q.pkts.push_back(w);
        if q.slots > 0 && q.tail + w.wire <= slot_bytes {
            q.tail += w.wire;
            return false;
        }
        q.slots += 1;
        q.tail = w.wire;
        true
    }

    /// A timeslot to `dst`: the packets of the first timeslot's worth go to `out`; false
    /// if nothing was queued for `dst` (the timeslot is wasted).
    pub fn pop_slot(&mut self, dst: u32, slot_bytes: u32, out: &mut Vec<Waiting>) -> bool {
        let Some(q) = self.dsts.get_mut(&dst) else {
            return false;
        };
        let mut used = 0;
        while let Some(&w) = q.pkts.front() {
            if used > 0 && used + w.wire > slot_bytes {
                break;
            }
            used += w.wire;
            out.push(w);
            q.pkts.pop_front();
        }
        q.slots -= 1;
        if q.pkts.is_empty() {
            debug_assert_eq!(q.slots, 0);
            self.dsts.remove(&dst);
        }
        true
    }

    /// Timeslots of demand queued for `dst`.
    pub fn slots(&self, dst: u32) -> u64 {
        self.dsts.get(&dst).map_or(0, |q| q.slots)
    }

    /// Packets queued, over every destination.
    pub fn packets(&self) -> usize {
        self.dsts.values().map(|q| q.pkts.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(pkt: u32, wire: u32) -> Waiting {
        Waiting {
            pkt,
            since: 0,
            wire,
        }
    }

    /// Full-size packets take a timeslot each; small ones share one until it is full,
    /// and each timeslot sends exactly the packets counted into it.
    #[test]
    fn timeslots_are_packed_in_fifo_order_and_served_as_packed() {
        let mut q = EndpointQueues::default();
        let slot = 1538;
        assert!(q.push(7, w(0, 1538), slot));
        assert!(q.push(7, w(1, 84), slot));
        assert!(!q.push(7, w(2, 84), slot));
        assert!(q.push(7, w(3, 1538), slot));
        assert!(q.push(7, w(4, 1000), slot));
        assert!(q.push(7, w(5, 1000), slot));
        assert_eq!(q.slots(7), 5);
        let mut out = Vec::new();
        let mut served = Vec::new();
        while q.pop_slot(7, slot, &mut out) {
            served.push(out.iter().map(|w| w.pkt).collect::<Vec<_>>());
            out.clear();
        }
        assert_eq!(served, vec![vec![0], vec![1, 2], vec![3], vec![4], vec![5]]);
        assert_eq!(q.slots(7), 0);
        assert_eq!(q.packets(), 0);
        assert!(!q.pop_slot(7, slot, &mut out));
    }
}
