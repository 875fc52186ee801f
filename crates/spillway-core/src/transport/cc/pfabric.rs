//! pFabric's transport (pFabric §4.3, as Turbo §3 and FastLane §4.2.2 run it): start at
//! line rate (initial window = one BDP), never above a maximum window (2 x BDP, Turbo §5),
//! SACK, no fast retransmit — loss is found by a small fixed timeout only — slow start
//! after a timeout, and probe mode after repeated consecutive timeouts. Packets carry
//! the flow's priority (remaining bytes, or the whole flow's size) for the pFabric queue.
//!
//! The sender machinery is TCP's ([`super::tcp`]) with `fixed_rto`, `probe_after` and
//! the duplicate-ACK threshold off; this module is the window policy.

use super::newreno::NewReno;
use super::{half_flight, CongestionControl, Window};
use crate::units::Ps;

#[derive(Debug, Clone)]
pub struct PFabricCc {
    /// Most bytes the window may reach.
    max_cwnd: u64,
    growth: NewReno,
}

impl PFabricCc {
    pub fn new(max_cwnd: u64) -> Self {
        PFabricCc {
            max_cwnd,
            growth: NewReno::default(),
        }
    }
}

impl CongestionControl for PFabricCc {
    fn on_ack(&mut self, w: &mut Window, acked: u64, now: Ps) {
        // Slow start after a timeout, then additive increase, capped.
        self.growth.on_ack(w, acked, now);
        w.cwnd = w.cwnd.min(self.max_cwnd);
    }

    fn on_loss(&mut self, w: &mut Window, flight: u64) {
        // Unused (no duplicate-ACK threshold), but well defined if one is configured.
        self.growth.on_loss(w, flight);
    }

    fn on_recovery_end(&mut self, w: &mut Window) {
        self.growth.on_recovery_end(w);
    }

    fn on_timeout(&mut self, w: &mut Window, _flight: u64) {
        // Half the window the timeout ends, not the data outstanding, which a timeout
        // leaves as it was: so each further timeout lowers ssthresh again (Turbo §3:
        // "each timeout incurred will decrease SSTHRESH"; ns-2's TCP, which pFabric's
        // simulations ran, halves min(cwnd, window)).
        w.ssthresh = half_flight(w, w.cwnd).min(self.max_cwnd);
        w.cwnd = w.mss;
    }

    fn holds_ssthresh_on_repeat(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_timeout_halves_the_window_before_it() {
        let mss = 1460;
        let mut cc = PFabricCc::new(24 * mss);
        let mut w = Window {
            cwnd: 12 * mss,
            ssthresh: u64::MAX,
            mss,
        };
        let mut seen = Vec::new();
        for _ in 0..4 {
            // The same 12 segments stay outstanding through repeated timeouts.
            cc.on_timeout(&mut w, 12 * mss);
            seen.push(w.ssthresh / mss);
            assert_eq!(w.cwnd, mss);
        }
        assert_eq!(seen, [6, 2, 2, 2]);
    }
}
