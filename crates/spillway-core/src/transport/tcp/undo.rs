//! Linux's undo of a spurious fast retransmit (2.6.38: tcp_try_undo_partial,
//! tcp_try_undo_recovery; TCP timestamps and D-SACK on, as on the CP testbed): an ACK of
//! new data that echoes a send time from before the recovery's first retransmission
//! shows the original arrived late, and a recovery whose every retransmission came back
//! reported duplicate (D-SACK) was spurious: either way the window cut is undone.

use crate::transport::cc::Window;
use crate::transport::connection::AckInfo;
use crate::units::Ps;

pub struct Undo {
    /// `transport.undo`.
    enabled: bool,
    /// The current recovery's reduction may still be undone.
    marker: bool,
    /// It was (the window restored).
    undone: bool,
    /// Retransmissions of this recovery not yet reported duplicate (Linux's
    /// `undo_retrans`): at 0, every one was spurious.
    retrans: u32,
    /// The window before the reduction (Linux restores twice the halved ssthresh), and
    /// ssthresh before it (Linux's `tcp_current_ssthresh`).
    prior_cwnd: u64,
    prior_ssthresh: u64,
    /// When the recovery's first retransmission went (`Ps::MAX`: none yet).
    retrans_stamp: Ps,
    /// Recoveries undone.
    undos: u32,
}

impl Undo {
    pub fn new(enabled: bool) -> Self {
        Undo {
            enabled,
            marker: false,
            undone: false,
            retrans: 0,
            prior_cwnd: 0,
            prior_ssthresh: 0,
            retrans_stamp: Ps::MAX,
            undos: 0,
        }
    }

    /// A reduction that may still be undone is in progress.
    #[inline]
    pub fn armed(&self) -> bool {
        self.marker
    }

    /// This recovery's cut has been undone.
    #[inline]
    pub fn undone(&self) -> bool {
        self.undone
    }

    #[inline]
    pub fn undos(&self) -> u32 {
        self.undos
    }

    /// A recovery starts with a window `w` about to be cut.
    #[inline]
    pub fn on_enter_recovery(&mut self, w: &Window) {
        if self.enabled {
            self.marker = true;
            self.undone = false;
            self.retrans = 0;
            self.retrans_stamp = Ps::MAX;
            self.prior_ssthresh = w.ssthresh.max(w.cwnd / 4 * 3);
            self.prior_cwnd = w.cwnd;
        }
    }

    /// Linux's tcp_packet_delayed: `ack` newly acknowledges data and echoes a send time
    /// from before the recovery's first retransmission.
    #[inline]
    pub fn delayed(&self, newly_acked: u64, ack: &AckInfo) -> bool {
        self.marker
            && newly_acked > 0
            && !ack.echo_retx
            && self.retrans_stamp != Ps::MAX
            && ack.echo_ts < self.retrans_stamp
    }

    /// A D-SACK: one retransmission was not needed.
    #[inline]
    pub fn on_dsack(&mut self) {
        if self.marker {
            self.retrans = self.retrans.saturating_sub(1);
        }
    }

    /// A segment is retransmitted at `now`.
    #[inline]
    pub fn on_resend(&mut self, now: Ps) {
        if self.marker {
            if self.retrans_stamp == Ps::MAX {
                self.retrans_stamp = now;
            }
            self.retrans += 1;
        }
    }

    /// A retransmission never left (its NIC refused it).
    #[inline]
    pub fn on_retransmission_taken_back(&mut self) {
        if self.marker {
            self.retrans = self.retrans.saturating_sub(1);
        }
    }

    /// The window goes back to what it was (Linux's tcp_undo_cwr: twice the halved
    /// ssthresh).
    #[inline]
    pub fn undo_cut(&mut self, w: &mut Window) {
        w.cwnd = w.cwnd.max(self.prior_cwnd);
        self.undone = true;
        self.undos += 1;
    }

    /// The recovery ends (`delayed`: its last ACK shows the original arrived). True when
    /// the cut was spurious and has been undone here (tcp_try_undo_recovery, then
    /// tcp_complete_cwr: ssthresh as before the reduction, the window no larger than
    /// it); false when the congestion control ends the recovery as usual.
    #[inline]
    pub fn on_recovery_end(&mut self, w: &mut Window, delayed: bool) -> bool {
        let spurious = self.marker && (delayed || self.retrans == 0);
        if spurious {
            if !self.undone {
                self.undo_cut(w);
            }
            w.ssthresh = w.ssthresh.max(self.prior_ssthresh);
            w.cwnd = w.cwnd.min(w.ssthresh);
        }
        self.marker = false;
        self.undone = false;
        spurious
    }

    /// A timeout ends any recovery: nothing of it can be undone.
    #[inline]
    pub fn on_timeout(&mut self) {
        self.marker = false;
        self.undone = false;
    }
}
