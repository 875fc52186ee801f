//! NewReno's window (RFC 5681, RFC 6582).

use super::{half_flight, CongestionControl, Window};
use crate::units::Ps;

/// RFC 5681 / RFC 6582 NewReno.
#[derive(Debug, Clone, Default)]
pub struct NewReno {
    /// Bytes acknowledged toward the next one-MSS increase in congestion avoidance.
    ca_acc: u64,
}

impl CongestionControl for NewReno {
    fn on_ack(&mut self, w: &mut Window, acked: u64, _now: Ps) {
        if w.cwnd < w.ssthresh {
            // Slow start, with appropriate byte counting limited to one MSS (RFC 5681 §3.1).
            w.cwnd += acked.min(w.mss);
        } else {
            // Congestion avoidance: one MSS per window of acknowledged bytes.
            self.ca_acc += acked;
            if self.ca_acc >= w.cwnd {
                self.ca_acc -= w.cwnd;
                w.cwnd += w.mss;
            }
        }
    }

    fn on_loss(&mut self, w: &mut Window, flight: u64) {
        w.ssthresh = half_flight(w, flight);
        w.cwnd = w.ssthresh;
        self.ca_acc = 0;
    }

    fn on_recovery_end(&mut self, w: &mut Window) {
        w.cwnd = w.ssthresh;
    }

    fn on_timeout(&mut self, w: &mut Window, flight: u64) {
        w.ssthresh = half_flight(w, flight);
        w.cwnd = w.mss;
        self.ca_acc = 0;
    }
}
