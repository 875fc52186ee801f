//! DCTCP (RFC 8257; the DCTCP paper; CP §6 runs it with K = 32 KB and g = 1/16).
//!
//! Switches mark arrivals beyond K bytes of queue; the receiver echoes CE on the ACK of
//! every marked packet (delayed ACK off). Once per window of data the sender updates
//! α ← (1 − g)·α + g·F, F being the fraction of acknowledged bytes that came back
//! marked, and on an echo cuts the window to cwnd·(1 − α/2), at most once per window.
//! Growth, loss recovery and timeouts are NewReno's.
//!
//! ssthresh never falls below 2 segments: a DCTCP whose cuts can reach one segment may,
//! after losses, sit with nothing in flight and no ACK clock (as ns-3's stock model does
//! under incast); two segments keep duplicate ACKs and PACKs possible.

use super::newreno::NewReno;
use super::{CongestionControl, Window};
use crate::units::Ps;

#[derive(Debug, Clone)]
pub struct Dctcp {
    g: f64,
    /// The marked-fraction estimate; starts at 1 (RFC 8257 §3.3, Linux's default), so the
    /// first reaction is a halving.
    alpha: f64,
    acked: u64,
    marked: u64,
    /// The observation window ends when `una` passes this.
    window_end: u64,
    growth: NewReno,
}

impl Dctcp {
    pub fn new(g: f64) -> Self {
        Dctcp {
            g,
            alpha: 1.0,
            acked: 0,
            marked: 0,
            window_end: 0,
            growth: NewReno::default(),
        }
    }
}

impl CongestionControl for Dctcp {
    fn ecn_cut_covers_loss(&self) -> bool {
        false
    }

    fn on_ack(&mut self, w: &mut Window, acked: u64, now: Ps) {
        self.growth.on_ack(w, acked, now);
    }

    fn on_loss(&mut self, w: &mut Window, flight: u64) {
        self.growth.on_loss(w, flight);
    }

    fn on_recovery_end(&mut self, w: &mut Window) {
        self.growth.on_recovery_end(w);
    }

    fn on_timeout(&mut self, w: &mut Window, flight: u64) {
        self.growth.on_timeout(w, flight);
    }

    fn on_ecn(&mut self, w: &mut Window, _flight: u64) {
        let cut = (w.cwnd as f64 * (1.0 - self.alpha / 2.0)) as u64;
        w.cwnd = cut.max(2 * w.mss);
        w.ssthresh = w.cwnd;
    }

    fn on_ack_feedback(&mut self, acked: u64, ece: bool, una: u64, nxt: u64) {
        self.acked += acked;
        if ece {
            self.marked += acked;
        }
        if una >= self.window_end && self.acked > 0 {
            let f = self.marked as f64 / self.acked as f64;
            self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
            self.acked = 0;
            self.marked = 0;
            self.window_end = nxt;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_tracks_the_marked_fraction_and_sets_the_cut() {
        let mut d = Dctcp::new(1.0 / 16.0);
        let mut una = 0;
        // Windows of 10 segments with half the bytes marked: α converges to 0.5.
        for _ in 0..200 {
            let end = una + 10_000;
            d.on_ack_feedback(0, false, una, end); // opens a window ending at `end`
            for i in 0..10 {
                una += 1_000;
                d.on_ack_feedback(1_000, i % 2 == 0, una, end + 10_000);
            }
        }
        assert!((d.alpha - 0.5).abs() < 0.01, "alpha {}", d.alpha);
        let mut w = Window {
            cwnd: 100_000,
            ssthresh: u64::MAX,
            mss: 1_000,
        };
        d.on_ecn(&mut w, 100_000);
        assert!(
            w.cwnd.abs_diff(75_000) <= 500,
            "cwnd x (1 - alpha/2): {}",
            w.cwnd
        );
        // The floor: never below two segments.
        d.alpha = 1.0;
        w.cwnd = 2_500;
        d.on_ecn(&mut w, 2_500);
        assert_eq!((w.cwnd, w.ssthresh), (2_000, 2_000));
    }
}
