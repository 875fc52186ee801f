//! The retransmission timeout (RFC 6298): smoothed RTT and its variation, the timeout
//! they give within [rto_min, rto_max], and its exponential backoff. pFabric's timeout
//! is `rto_min`, fixed: no estimate, no backoff.

use super::config::TcpConfig;
use crate::units::Ps;

pub struct Rtt {
    srtt: Ps,
    rttvar: Ps,
    has_rtt: bool,
    base_rto: Ps,
    backoff: u32,
    rto_min: Ps,
    rto_max: Ps,
    fixed: bool,
}

impl Rtt {
    pub fn new(cfg: &TcpConfig) -> Self {
        Rtt {
            srtt: 0,
            rttvar: 0,
            has_rtt: false,
            base_rto: cfg.rto_init,
            backoff: 0,
            rto_min: cfg.rto_min,
            rto_max: cfg.rto_max,
            fixed: cfg.fixed_rto,
        }
    }

    /// The smoothed RTT, once there is a sample.
    #[inline]
    pub fn srtt(&self) -> Option<Ps> {
        self.has_rtt.then_some(self.srtt)
    }

    /// The current timeout, backed off.
    #[inline]
    pub fn rto(&self) -> Ps {
        if self.fixed {
            return self.rto_min;
        }
        let shifted = self.base_rto.saturating_mul(1u64 << self.backoff.min(40));
        shifted.min(self.rto_max)
    }

    /// RFC 6298 §2: a new measurement.
    #[inline]
    pub fn sample(&mut self, r: Ps) {
        if self.fixed {
            return;
        }
        if !self.has_rtt {
            self.srtt = r;
            self.rttvar = r / 2;
            self.has_rtt = true;
        } else {
            let diff = self.srtt.abs_diff(r);
            self.rttvar = (3 * self.rttvar + diff) / 4;
            self.srtt = (7 * self.srtt + r) / 8;
        }
        self.base_rto = (self.srtt + 4 * self.rttvar).clamp(self.rto_min, self.rto_max);
    }

    /// New data was acknowledged: the backoff ends (RFC 6298 §5.7, Karn).
    #[inline]
    pub fn reset_backoff(&mut self) {
        self.backoff = 0;
    }

    /// The timer expired (RFC 6298 §5.5).
    #[inline]
    pub fn back_off(&mut self) {
        self.backoff += 1;
    }
}
