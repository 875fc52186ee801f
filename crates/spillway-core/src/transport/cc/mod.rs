//! The congestion-control hook of the TCP sender.
//!
//! The sender owns loss detection, recovery and retransmission; a `CongestionControl`
//! only decides the window. NewReno, CUBIC, DCTCP and pFabric's window plug in here,
//! each in its own module; [`kinds::Cc`] is the one a flow runs, chosen per scenario.

use crate::units::Ps;

/// Window state shared between the sender and its congestion control, in bytes.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    pub cwnd: u64,
    pub ssthresh: u64,
    pub mss: u64,
}

pub trait CongestionControl {
    /// New data was cumulatively acknowledged outside recovery, at `now`.
    fn on_ack(&mut self, w: &mut Window, acked: u64, now: Ps);
    /// Loss detected by duplicate ACKs/SACK: entering fast recovery.
    fn on_loss(&mut self, w: &mut Window, flight: u64);
    /// Fast recovery ended (the recovery point was acknowledged).
    fn on_recovery_end(&mut self, w: &mut Window);
    /// The retransmission timer expired.
    fn on_timeout(&mut self, w: &mut Window, flight: u64);
    /// An ECN echo or a Source Quench, at most once per window (RFC 3168 §6.1.2: react
    /// as to a loss, without retransmitting).
    fn on_ecn(&mut self, w: &mut Window, flight: u64) {
        w.ssthresh = half_flight(w, flight);
        w.cwnd = w.ssthresh;
    }
    /// Every ACK: bytes it newly acknowledged and whether it echoed CE (DCTCP's
    /// estimate), with the sender's `una` and `nxt` after it.
    fn on_ack_feedback(&mut self, _acked: u64, _ece: bool, _una: u64, _nxt: u64) {}
    /// An RTT sample (CUBIC keeps the smallest).
    fn on_rtt(&mut self, _rtt: Ps) {}
    /// Whether a timeout of data the timer has already resent keeps ssthresh where the
    /// first timeout set it (RFC 5681 §3.1; Linux's tcp_enter_loss).
    fn holds_ssthresh_on_repeat(&self) -> bool {
        true
    }
    /// Whether a window already cut for an ECN echo needs no further cut for a loss in it
    /// (RFC 3168 §6.1.2: one reduction per window for losses and marks alike). Not for
    /// DCTCP, whose echo cut is α-sized: RFC 8257 §3.5 has a loss change the window as
    /// conventional TCP would (Linux's dctcp_react_to_loss halves on entering recovery).
    fn ecn_cut_covers_loss(&self) -> bool {
        true
    }
}

/// Half the flight, never below two segments (RFC 5681 §3.1).
pub fn half_flight(w: &Window, flight: u64) -> u64 {
    (flight / 2).max(2 * w.mss)
}

pub mod cubic;
pub mod dctcp;
pub mod kinds;
pub mod newreno;
pub mod pfabric;
