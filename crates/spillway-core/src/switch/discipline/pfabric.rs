//! The pFabric queue (pFabric §4.2, as FastLane §3.4.2 and Turbo §3 describe it):
//! dequeue the earliest packet of the flow that owns the highest-priority packet in the
//! port; when the buffer is full, drop the lowest-priority packet, the arriving one if it
//! is the lowest.
//!
//! A priority is (class, prio): the port's strict class first (0 highest), then the
//! transport's number (lower is more urgent: remaining bytes). Ties go by arrival:
//! among equals the earliest is served first and the latest is the victim.
//!
//! pFabric buffers are small (2 x BDP, tens of packets), so the queue is a vector in
//! arrival order and each operation is one linear scan: O(n) per packet, no allocation
//! in steady state, and far cheaper than a heap pair at these sizes.

use crate::packet::Arena;

/// One queued packet, with what the discipline needs so it never reads the packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub pkt: u32,
    pub class: u8,
    pub prio: u64,
    pub flow: u64,
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
            wire: hot.wire as u32,
            in_port,
        }
    }

    #[inline]
    fn key(&self) -> (u8, u64) {
        (self.class, self.prio)
    }
}

#[derive(Debug, Default)]
pub struct PFabricQueue {
    /// In arrival order.
    q: Vec<Entry>,
}

impl PFabricQueue {
    pub fn len(&self) -> usize {
        self.q.len()
    }

    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
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
        let wire = e.wire as u64;
        if *bytes + wire > capacity {
            // Room made only from packets of strictly lower priority than `e`.
            let need = *bytes + wire - capacity;
            let mut freeable = 0u64;
            for x in &self.q {
                if x.key() > e.key() {
                    freeable += x.wire as u64;
                }
            }
            if freeable < need {
                return false;
            }
            let mut freed = 0u64;
            while freed < need {
                // The lowest priority; the latest arrival among equals.
                let mut v = 0;
                for (i, x) in self.q.iter().enumerate() {
                    if x.key() >= self.q[v].key() {
                        v = i;
                    }
                }
                let x = self.q.remove(v);
                freed += x.wire as u64;
                *bytes -= x.wire as u64;
                evicted.push(x);
            }
        }
        *bytes += wire;
        self.q.push(e);
        true
    }

    /// Some packet of another (flow, class) than this one is queued.
    pub fn others_queued(&self, flow: u64, class: u8) -> bool {
        self.q.iter().any(|x| x.flow != flow || x.class != class)
    }

    /// Removes and returns the earliest packet of the flow owning the highest-priority
    /// packet (the first such packet among equal priorities), among the classes not
    /// `paused` (a bit per class).
    pub fn dequeue(&mut self, bytes: &mut u64, paused: u8) -> Option<Entry> {
        let open = |x: &Entry| paused & (1 << x.class) == 0;
        let mut best: Option<(usize, (u8, u64))> = None;
        for (i, x) in self.q.iter().enumerate() {
            if open(x) && best.is_none_or(|(_, k)| x.key() < k) {
                best = Some((i, x.key()));
            }
        }
        let (best, _) = best?;
        let flow = self.q[best].flow;
        // The flow's earliest packet is at or before `best` in arrival order.
        let at = self.q[..=best]
            .iter()
            .position(|x| x.flow == flow && open(x))
            .expect("the best packet's flow is queued");
        let x = self.q.remove(at);
        *bytes -= x.wire as u64;
        Some(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// A slow reference written from the definition: sort by priority to find the victim
    /// or the owner of the best packet, then take that flow's earliest arrival.
    #[derive(Default)]
    struct Reference {
        q: Vec<(u64, Entry)>, // (arrival number, entry)
        n: u64,
        bytes: u64,
    }

    impl Reference {
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

        fn dequeue(&mut self) -> Option<Entry> {
            let (_, best) = *self.q.iter().min_by_key(|(n, x)| (x.class, x.prio, *n))?;
            let i = self
                .q
                .iter()
                .position(|(_, x)| x.flow == best.flow)
                .unwrap();
            let (_, x) = self.q.remove(i);
            self.bytes -= x.wire as u64;
            Some(x)
        }
    }

    #[test]
    fn matches_the_reference_and_never_serves_a_lower_priority_flow() {
        for seed in 0..40 {
            let mut rng = Rng::new(seed, 7);
            let cap = 4_000 + rng.below(20_000);
            let (mut q, mut r) = (PFabricQueue::default(), Reference::default());
            let mut bytes = 0u64;
            let mut evicted = Vec::new();
            for i in 0..3_000u32 {
                if rng.below(5) < 3 {
                    let flow = rng.below(12);
                    let e = Entry {
                        pkt: i,
                        class: rng.below(2) as u8,
                        // Flows mostly keep their priority, as remaining size does.
                        prio: flow * 1_000 + rng.below(3),
                        flow,
                        wire: [64, 600, 1538][rng.below(3) as usize],
                        in_port: 0,
                    };
                    evicted.clear();
                    let ok = q.enqueue(e, &mut bytes, cap, &mut evicted);
                    let (ok_ref, ev_ref) = r.enqueue(e, cap);
                    assert_eq!((ok, &evicted), (ok_ref, &ev_ref), "seed {seed} op {i}");
                    assert!(bytes <= cap);
                } else {
                    let best = q.q.iter().map(|x| x.key()).min();
                    let got = q.dequeue(&mut bytes, 0);
                    assert_eq!(got, r.dequeue(), "seed {seed} op {i}");
                    if let Some(x) = got {
                        // The served packet's flow owns a packet of the best priority.
                        let owner_best =
                            q.q.iter()
                                .filter(|y| y.flow == x.flow)
                                .map(|y| y.key())
                                .chain([x.key()])
                                .min();
                        assert_eq!(owner_best, best, "seed {seed} op {i}");
                    }
                }
                assert_eq!(bytes, r.bytes);
                assert_eq!(bytes, q.q.iter().map(|x| x.wire as u64).sum::<u64>());
            }
        }
    }

    #[test]
    fn overflow_drops_the_lowest_priority_and_arrivals_that_are_lowest() {
        let mut q = PFabricQueue::default();
        let mut bytes = 0;
        let mut ev = Vec::new();
        let e = |pkt, prio| Entry {
            pkt,
            class: 0,
            prio,
            flow: prio,
            wire: 1000,
            in_port: 0,
        };
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

    /// A paused class is passed over: the best packet of the open classes goes, and a
    /// flow's packets in a paused class wait.
    #[test]
    fn paused_classes_are_passed_over() {
        let mut q = PFabricQueue::default();
        let mut bytes = 0;
        let mut ev = Vec::new();
        let e = |pkt, class, prio, flow| Entry {
            pkt,
            class,
            prio,
            flow,
            wire: 100,
            in_port: 0,
        };
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
