//! CUBIC (RFC 8312), as Linux 2.6.38's `tcp_cubic` runs it: the default congestion
//! control of the kernel the CP testbed ran (CP §6), with that kernel's constants.
//!
//! After a reduction the window follows W(t) = C·(t − K)³ + W_max (segments, t in
//! seconds since the first ACK after the reduction, plus the minimum RTT), with
//! K = ∛((W_max − cwnd)/C): concave up to the window where the last loss happened, then
//! convex beyond it. Each ACK grows the window toward W(t) by one segment per `cnt` + 1
//! ACKs (Linux's tcp_cong_avoid_ai counts to `cnt`, then adds), `cnt` =
//! cwnd/(W(t) − cwnd). A Reno estimate that grows 3β/(2 − β) segments per RTT (β = 0.3,
//! the share cut) bounds `cnt` from above (TCP friendliness), so at
//! datacenter RTTs, where K is seconds long, the window grows like Reno's at about half
//! the speed and is cut to 0.7 of itself instead of half.
//!
//! Linux specifics kept: β = 717/1024, C = 0.4 (bic_scale 41), fast convergence (a loss
//! below the last W_max remembers (1 + β)/2 of the window), at most 20 ACKs per
//! segment of growth before the first loss (and again after each timeout, which forgets
//! the loss), slow start while cwnd ≤ ssthresh, and a timeout forgetting W_max and the
//! minimum delay (bictcp_reset on entering Loss). Left out: HyStart (slow
//! start ends at ssthresh or a loss), the jiffy (1 ms) clock (time here is exact), the
//! ≤ HZ/32 cache of `cnt` and the delayed-ACK ratio (every segment is acknowledged).
//! Linux grows the window only while it limits the sender (`tcp_is_cwnd_limited`); that
//! check is the transport's, `transport.cwnd_limited`, off unless set.

use super::{CongestionControl, Window};
use crate::units::{Ps, PS_PER_S};

/// Linux's `beta` over 1024: the window kept by a reduction.
const BETA: u64 = 717;
const BETA_SCALE: u64 = 1024;
/// The cubic's scaling constant C, segments per second³.
const C: f64 = 0.4;
/// Linux's `beta_scale`: the Reno estimate gains a segment every cwnd·FRIENDLY_SCALE/8
/// ACKs, (1 + b)/(3(1 − b)) in eighths with b = 717/1024 the share kept (15: one segment
/// per 1.875 windows of ACKs, 0.53 per RTT).
const FRIENDLY_SCALE: u64 = 8 * (BETA_SCALE + BETA) / 3 / (BETA_SCALE - BETA);

#[derive(Debug, Clone, Default)]
pub struct Cubic {
    /// Window (segments) at the last reduction, after fast convergence.
    last_max: u64,
    /// Window (segments) at the last reduction; 0 before the first.
    loss_cwnd: u64,
    /// Start of the current growth epoch; `None` until the first ACK after a reduction.
    epoch_start: Option<Ps>,
    /// K, ps after the epoch start at which W(t) reaches `origin`.
    k: Ps,
    origin: u64,
    /// ACKs counted toward the Reno estimate since the epoch started.
    ack_cnt: u64,
    /// The Reno estimate, segments.
    tcp_cwnd: u64,
    /// ACKs per segment of growth, from the last update.
    cnt: u64,
    /// ACKs counted toward the next segment (Linux's snd_cwnd_cnt).
    cwnd_cnt: u64,
    /// Smallest RTT sampled.
    delay_min: Option<Ps>,
}

impl Cubic {
    /// ACKs per segment of growth at `now` with the window at `cwnd` segments
    /// (bictcp_update).
    fn update(&mut self, cwnd: u64, now: Ps) {
        self.ack_cnt += 1;
        let start = *self.epoch_start.get_or_insert_with(|| {
            self.ack_cnt = 1;
            self.tcp_cwnd = cwnd;
            if self.last_max <= cwnd {
                self.k = 0;
                self.origin = cwnd;
            } else {
                let secs = ((self.last_max - cwnd) as f64 / C).cbrt();
                self.k = (secs * PS_PER_S as f64) as Ps;
                self.origin = self.last_max;
            }
            now
        });
        let t = now - start + self.delay_min.unwrap_or(0);
        let offs = t.abs_diff(self.k) as f64 / PS_PER_S as f64;
        let delta = (C * offs * offs * offs) as u64;
        let target = if t < self.k {
            self.origin.saturating_sub(delta)
        } else {
            self.origin + delta
        };
        self.cnt = if target > cwnd {
            cwnd / (target - cwnd)
        } else {
            100 * cwnd
        };
        if self.loss_cwnd == 0 {
            // Before any loss the cubic's start can be too slow: at least 5% per RTT.
            self.cnt = self.cnt.min(20);
        }
        // TCP friendliness: the Reno estimate's pace bounds the ACKs per segment.
        let per_seg = ((cwnd * FRIENDLY_SCALE) >> 3).max(1);
        while self.ack_cnt > per_seg {
            self.ack_cnt -= per_seg;
            self.tcp_cwnd += 1;
        }
        if self.tcp_cwnd > cwnd {
            self.cnt = self.cnt.min(cwnd / (self.tcp_cwnd - cwnd));
        }
        self.cnt = self.cnt.max(1);
    }

    fn reduce(&mut self, w: &Window, base: u64) -> u64 {
        let cwnd = w.cwnd / w.mss;
        self.epoch_start = None;
        self.last_max = if cwnd < self.last_max {
            cwnd * (BETA_SCALE + BETA) / (2 * BETA_SCALE)
        } else {
            cwnd
        };
        self.loss_cwnd = cwnd;
        self.cwnd_cnt = 0;
        // β of the window (RFC 8312 §4.5, Linux), or of FlightSize when less
        // (`ssthresh_from = "flight"`, a sender that was not window-limited): the sender
        // passes no more than the window (`reduction_base`).
        (base * BETA / BETA_SCALE).max(2 * w.mss)
    }
}

impl CongestionControl for Cubic {
    fn on_ack(&mut self, w: &mut Window, acked: u64, now: Ps) {
        if w.cwnd <= w.ssthresh {
            // Slow start, one MSS per ACK at most, as NewReno's (RFC 3465 with L = 1).
            w.cwnd += acked.min(w.mss);
            return;
        }
        // Congestion avoidance counts ACKs: one per call with per-ACK counting, one per
        // whole segment acknowledged with byte counting.
        for _ in 0..(acked / w.mss).max(1) {
            self.update(w.cwnd / w.mss, now);
            if self.cwnd_cnt >= self.cnt {
                w.cwnd += w.mss;
                self.cwnd_cnt = 0;
            } else {
                self.cwnd_cnt += 1;
            }
        }
    }

    fn on_loss(&mut self, w: &mut Window, flight: u64) {
        w.ssthresh = self.reduce(w, flight);
        w.cwnd = w.ssthresh;
    }

    fn on_recovery_end(&mut self, w: &mut Window) {
        w.cwnd = w.cwnd.min(w.ssthresh);
    }

    fn on_timeout(&mut self, w: &mut Window, flight: u64) {
        w.ssthresh = self.reduce(w, flight);
        w.cwnd = w.mss;
        // Entering Loss resets CUBIC (bictcp_state -> bictcp_reset): W_max, the
        // first-loss mark and the minimum delay go.
        *self = Cubic::default();
    }

    fn on_ecn(&mut self, w: &mut Window, flight: u64) {
        // Linux's tcp_enter_cwr asks the congestion control for ssthresh, as on a loss.
        self.on_loss(w, flight);
    }

    fn on_rtt(&mut self, rtt: Ps) {
        self.delay_min = Some(self.delay_min.map_or(rtt, |d| d.min(rtt)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// A window of `cwnd` segments that has just taken a loss with `cwnd` in flight.
    fn after_loss(c: &mut Cubic, cwnd: u64) -> Window {
        let mut w = Window {
            cwnd: cwnd * MSS,
            ssthresh: 10 * MSS,
            mss: MSS,
        };
        c.on_loss(&mut w, cwnd * MSS);
        w
    }

    #[test]
    fn a_loss_keeps_seven_tenths_and_remembers_the_window() {
        let mut c = Cubic::default();
        let w = after_loss(&mut c, 100);
        assert_eq!(w.cwnd, 100 * MSS * 717 / 1024);
        assert_eq!(c.last_max, 100);
        // Fast convergence: a loss below the last maximum remembers (1 + β)/2 of it.
        after_loss(&mut c, 80);
        assert_eq!(c.last_max, 80 * (1024 + 717) / 2048);
    }

    #[test]
    fn the_window_returns_to_the_last_maximum_after_k() {
        // Closed form (RFC 8312 §4.1): W(K) = W_max with K = ∛(W_max·(1 − β)/C). Feed
        // ACKs at a fixed rate and check the window is at W_max near K, not before.
        let mut c = Cubic::default();
        let mut w = after_loss(&mut c, 1000);
        let cut = w.cwnd / MSS;
        let k_s = ((1000 - cut) as f64 / C).cbrt();
        // 100 ms of RTT, so the Reno estimate (0.53 segments per RTT) stays below the
        // cubic; ACKs flow at a window per RTT.
        let rtt = PS_PER_S / 10;
        c.on_rtt(rtt);
        let mut now: Ps = 0;
        let mut at_k = 0;
        let mut half_k = 0;
        while now < (k_s * 1.05 * PS_PER_S as f64) as Ps {
            let per_ack = rtt / (w.cwnd / MSS);
            now += per_ack;
            c.on_ack(&mut w, MSS, now);
            if now as f64 / (PS_PER_S as f64) < k_s * 0.5 {
                half_k = w.cwnd / MSS;
            }
            if now as f64 / (PS_PER_S as f64) < k_s {
                at_k = w.cwnd / MSS;
            }
        }
        // Concave: 7/8 of the way back by K/2 (W(K/2) = W_max − C(K/2)³, and C·K³ is
        // the whole gap).
        let expect_half = 1000.0 - C * (k_s / 2.0).powi(3);
        assert!(
            (half_k as f64 - expect_half).abs() < 0.02 * 1000.0,
            "{half_k} vs {expect_half}"
        );
        assert!((990..=1001).contains(&at_k), "{at_k}");
    }

    #[test]
    fn friendliness_grows_like_reno_at_short_rtts() {
        // 100 µs RTT, window 100: K is about 4 s, so the Reno estimate sets the pace,
        // 3·0.3/1.7 ≈ 0.53 segments per RTT.
        let mut c = Cubic::default();
        let mut w = after_loss(&mut c, 143);
        c.on_rtt(100_000_000);
        let start = w.cwnd / MSS;
        let mut now: Ps = 0;
        let rtts = 200;
        for _ in 0..rtts {
            let n = w.cwnd / MSS;
            for _ in 0..n {
                now += 100_000_000 / n;
                c.on_ack(&mut w, MSS, now);
            }
        }
        let per_rtt = (w.cwnd / MSS - start) as f64 / rtts as f64;
        assert!((0.45..0.6).contains(&per_rtt), "{per_rtt} segments per RTT");
    }

    #[test]
    fn a_timeout_forgets_the_last_maximum() {
        let mut c = Cubic::default();
        let mut w = after_loss(&mut c, 100);
        let f = w.cwnd;
        c.on_timeout(&mut w, f);
        assert_eq!(w.cwnd, MSS);
        assert_eq!(c.last_max, 0);
        assert_eq!(c.loss_cwnd, 0);
    }
}
