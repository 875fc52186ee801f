//! CoDel (RFC 8289) as an ECN marker: it watches each packet's sojourn time at dequeue
//! and, once the minimum sojourn has stayed above `target` for an `interval`, marks
//! packets at a rate that grows with the square root of the marks so far, until the
//! sojourn falls below target again. FastLane §5 runs TCP with CoDel marking, and Source
//! Quench's quenches are triggered by the same decision.
//!
//! Datacenter values (our defaults): target 10 us, interval 100 us. RFC 8289 sets the
//! interval near a worst-case RTT and the target at 5–10% of it; the 10 Gbps fat-tree's
//! base RTT is ~14 us, and a 128 KB port drains in ~105 us, so a 100 us interval spans
//! the RTTs a full queue can cause and 10 us is about one BDP of standing queue.

use crate::units::Ps;

#[derive(Debug, Clone, Copy)]
pub struct CodelConfig {
    pub target: Ps,
    pub interval: Ps,
    /// A queue holding no more than this is never marked (RFC 8289: one MTU).
    pub mtu_bytes: u64,
}

#[derive(Debug, Clone)]
pub struct Codel {
    cfg: CodelConfig,
    first_above: Ps,
    marking: bool,
    mark_next: Ps,
    count: u32,
    last_count: u32,
    marks: u64,
}

impl Codel {
    pub fn new(cfg: CodelConfig) -> Self {
        Codel {
            cfg,
            first_above: 0,
            marking: false,
            mark_next: 0,
            count: 0,
            last_count: 0,
            marks: 0,
        }
    }

    /// `interval / sqrt(count)` after `t` (RFC 8289 §5.5 control law).
    fn control_law(&self, t: Ps) -> Ps {
        t + (self.cfg.interval as f64 / (self.count.max(1) as f64).sqrt()) as Ps
    }

    /// Has the sojourn stayed above target for an interval? (RFC 8289 `dodequeue`)
    fn ok_to_mark(&mut self, now: Ps, sojourn: Ps, backlog: u64) -> bool {
        if sojourn < self.cfg.target || backlog <= self.cfg.mtu_bytes {
            self.first_above = 0;
            return false;
        }
        if self.first_above == 0 {
            self.first_above = now + self.cfg.interval;
            return false;
        }
        now >= self.first_above
    }

    /// A packet that waited `sojourn` is leaving a queue that keeps `backlog` bytes
    /// behind it: true when it should be marked. At most one mark per dequeue (marking, unlike
    /// dropping, still delivers the packet, so the loop of RFC 8289 §5.6 collapses).
    pub fn on_dequeue(&mut self, now: Ps, sojourn: Ps, backlog: u64) -> bool {
        let ok = self.ok_to_mark(now, sojourn, backlog);
        if self.marking {
            if !ok {
                self.marking = false;
                return false;
            }
            if now >= self.mark_next {
                self.count += 1;
                self.mark_next = self.control_law(self.mark_next);
                self.marks += 1;
                return true;
            }
            return false;
        }
        if ok {
            self.marking = true;
            // Resume near the previous rate if marking stopped only recently.
            let delta = self.count.saturating_sub(self.last_count);
            self.count = if delta > 1 && now < self.mark_next + 16 * self.cfg.interval {
                delta
            } else {
                1
            };
            self.mark_next = self.control_law(now);
            self.last_count = self.count;
            self.marks += 1;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codel() -> Codel {
        Codel::new(CodelConfig {
            target: 10_000_000,
            interval: 100_000_000,
            mtu_bytes: 1538,
        })
    }

    #[test]
    fn short_queues_are_never_marked() {
        let mut c = codel();
        for t in 0..10_000u64 {
            assert!(!c.on_dequeue(t * 1_000_000, 9_000_000, 100_000));
        }
    }

    #[test]
    fn a_standing_queue_is_marked_after_an_interval_at_a_rising_rate() {
        let mut c = codel();
        let step = 1_000_000; // a dequeue every microsecond, 20 us sojourn
        let marks: Vec<Ps> = (0..2_000u64)
            .map(|i| i * step)
            .filter(|&t| c.on_dequeue(t, 20_000_000, 50_000))
            .collect();
        // First mark one interval after the sojourn first exceeded target.
        assert_eq!(marks[0], 100_000_000);
        // Then interval/sqrt(n) apart: 100, 70.7, 57.7, ... us.
        let gaps: Vec<Ps> = marks.windows(2).map(|w| w[1] - w[0]).collect();
        assert!((gaps[0] as i64 - 100_000_000).abs() <= step as i64);
        assert!((gaps[1] as i64 - 70_710_678).abs() <= step as i64);
        assert!(gaps.windows(2).all(|g| g[1] <= g[0] + step));
        // The queue drains: marking stops.
        assert!(!c.on_dequeue(2_000 * step, 1_000, 50_000));
        assert!(!c.on_dequeue(2_001 * step, 20_000_000, 50_000));
    }
}
