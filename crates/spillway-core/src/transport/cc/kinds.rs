//! The congestion controls a flow can run, dispatched statically in the hot loop.

use super::cubic::Cubic;
use super::dctcp::Dctcp;
use super::newreno::NewReno;
use super::pfabric::PFabricCc;
use super::{CongestionControl, Window};
use crate::units::Ps;

/// Which congestion control a flow runs, with its parameters (`transport.kind`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CcKind {
    NewReno,
    Cubic,
    /// DCTCP with gain `g`.
    Dctcp {
        g: f64,
    },
    /// pFabric, its window capped at `max_cwnd` bytes.
    PFabric {
        max_cwnd: u64,
    },
}

impl CcKind {
    /// A fresh congestion control of this kind, for a new flow.
    pub fn build(&self) -> Cc {
        match *self {
            CcKind::NewReno => Cc::NewReno(NewReno::default()),
            CcKind::Cubic => Cc::Cubic(Cubic::default()),
            CcKind::Dctcp { g } => Cc::Dctcp(Dctcp::new(g)),
            CcKind::PFabric { max_cwnd } => Cc::PFabric(PFabricCc::new(max_cwnd)),
        }
    }
}

/// A flow's congestion control.
#[derive(Debug, Clone)]
pub enum Cc {
    NewReno(NewReno),
    Cubic(Cubic),
    Dctcp(Dctcp),
    PFabric(PFabricCc),
}

macro_rules! each_cc {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            Cc::NewReno($c) => $e,
            Cc::Cubic($c) => $e,
            Cc::Dctcp($c) => $e,
            Cc::PFabric($c) => $e,
        }
    };
}

impl CongestionControl for Cc {
    #[inline]
    fn on_ack(&mut self, w: &mut Window, acked: u64, now: Ps) {
        each_cc!(self, c => c.on_ack(w, acked, now))
    }
    fn on_loss(&mut self, w: &mut Window, flight: u64) {
        each_cc!(self, c => c.on_loss(w, flight))
    }
    fn on_recovery_end(&mut self, w: &mut Window) {
        each_cc!(self, c => c.on_recovery_end(w))
    }
    fn on_timeout(&mut self, w: &mut Window, flight: u64) {
        each_cc!(self, c => c.on_timeout(w, flight))
    }
    fn on_ecn(&mut self, w: &mut Window, flight: u64) {
        each_cc!(self, c => c.on_ecn(w, flight))
    }
    #[inline]
    fn on_ack_feedback(&mut self, acked: u64, ece: bool, una: u64, nxt: u64) {
        each_cc!(self, c => c.on_ack_feedback(acked, ece, una, nxt))
    }
    fn holds_ssthresh_on_repeat(&self) -> bool {
        each_cc!(self, c => c.holds_ssthresh_on_repeat())
    }
    fn ecn_cut_covers_loss(&self) -> bool {
        each_cc!(self, c => c.ecn_cut_covers_loss())
    }
    fn on_rtt(&mut self, rtt: Ps) {
        each_cc!(self, c => c.on_rtt(rtt))
    }
}
