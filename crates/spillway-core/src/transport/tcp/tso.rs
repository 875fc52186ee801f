//! Linux's TSO deferral (2.6.38 `tcp_tso_should_defer`, tcp_tso_win_divisor = 3, 64 KB
//! GSO) with a segmentation-offloading NIC: hold new data back while less than a third
//! of min(cwnd, rwnd) may be sent, so that the NIC gets one large burst instead of a
//! segment per ACK.

use crate::units::Ps;

const GSO_MAX: u64 = 65_536;

pub struct TsoDeferral {
    /// `transport.tso_defer`, 0 for none.
    defer: Ps,
    /// When new data was last held back; `Ps::MAX`: it is not.
    deferred_at: Ps,
    /// New data below this byte belongs to a burst already decided on, so it goes
    /// without a new decision when the host's NIC budget split the burst.
    burst_end: u64,
}

impl TsoDeferral {
    pub fn new(defer: Option<Ps>) -> Self {
        TsoDeferral {
            defer: defer.unwrap_or(0),
            deferred_at: Ps::MAX,
            burst_end: 0,
        }
    }

    #[inline]
    pub fn enabled(&self) -> bool {
        self.defer != 0
    }

    /// Should new data starting at `nxt` wait? Only in the Open state (`open`: nothing
    /// SACKed, lost or being retransmitted, no recovery, no window reduction for ECN or
    /// a local NIC drop in progress: Linux's CWR state), never for data that fits all
    /// that is `left` (the FIN goes at once), and not if the last deferral was
    /// `tso_defer` ago or more: Linux re-stamps it at every deferral, so only a pause in
    /// the ACKs ends one. `limit` is what the windows allow now, `window` min(cwnd, rwnd).
    /// A burst decided on is sent whole even when the host's NIC budget splits it over
    /// several calls.
    #[allow(clippy::too_many_arguments)]
    pub fn should_defer(
        &mut self,
        now: Ps,
        polled: bool,
        nxt: u64,
        open: bool,
        limit: u64,
        left: u64,
        window: u64,
    ) -> bool {
        if nxt < self.burst_end || !open {
            return false;
        }
        let stale =
            self.deferred_at != Ps::MAX && now.saturating_sub(self.deferred_at) >= self.defer;
        if stale || limit >= GSO_MAX || limit >= left || limit >= window / 3 {
            self.deferred_at = Ps::MAX;
            self.burst_end = nxt + limit;
            return false;
        }
        // A poll comes from the NIC, not from an ACK (where Linux decides: tcp_write_xmit,
        // on ACKs, not on NIC completions): it may find a burst allowed (nothing
        // outstanding, say) but does not re-stamp a deferral.
        if !polled {
            self.deferred_at = now;
        }
        true
    }
}
