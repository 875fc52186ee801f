//! TCP as sans-IO state machines: the sender (NewReno, RFC 6582, with an RFC 6675-style
//! SACK scoreboard) and the receiver (cumulative ACK + RFC 2018 SACK blocks, optional
//! delayed ACK). They take arrivals and timer expiries and return segments to send; the
//! simulator (or anything else) moves the bytes and keeps the clock.
//!
//! Sequence numbers are byte offsets within the flow. Every segment but the last carries
//! exactly one MSS, so the scoreboard keeps one state byte per segment.

use crate::packet::MAX_SACK;
use crate::transport::cc::{CongestionControl, Window};
use fastlane::{NotifyMode, Recovery};

pub mod fastlane;
use crate::units::Ps;
use std::collections::VecDeque;

/// What a pFabric packet's priority is (lower = more urgent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PriorityMode {
    /// Bytes of the flow not yet acknowledged (pFabric's SRPT approximation).
    Remaining,
    /// The flow's total size, fixed (FastLane §4.2.2: avoids priority inversion among
    /// the responses of one request).
    FlowSize,
}

#[derive(Debug, Clone)]
pub struct TcpConfig {
    pub mss: u32,
    pub init_cwnd: u32,
    pub rwnd: u64,
    /// The window grows per ACK that advances `una` (Linux 2.6), not per byte it
    /// acknowledges (RFC 5681 byte counting).
    pub per_ack_increase: bool,
    /// Grow the window only while it limits the sender (Linux's tcp_is_cwnd_limited).
    pub cwnd_limited: bool,
    /// Reductions halve the congestion window (Linux), not the flight size (RFC 5681).
    pub ssthresh_from_cwnd: bool,
    pub rto_min: Ps,
    pub rto_init: Ps,
    pub rto_max: Ps,
    /// `None`: no fast retransmit; loss is left to the timeout (multipath).
    pub dupthresh: Option<u32>,
    pub delayed_ack: Option<Ps>,
    /// Detect a lost retransmission when data sent after it is SACKed (Linux
    /// `tcp_mark_lost_retrans`, RACK today) instead of waiting for the RTO (RFC 6675).
    pub lost_retransmit: bool,
    /// pFabric: the timeout is `rto_min`, fixed: no RTT estimate, no backoff.
    pub fixed_rto: bool,
    /// pFabric probe mode: after this many consecutive timeouts, probe before resending.
    pub probe_after: Option<u32>,
    /// React to ECN echoes and Source Quench (RFC 3168: halve once per window).
    pub ecn: bool,
    /// FastLane's multipath option (§3.4.1): the window is inflated by the receiver's
    /// out-of-order bytes instead of being freed by SACKed ones.
    pub ooo_option: bool,
    /// How notifications are used (FastLane §3.4.1 TCP, §3.4.2 pFabric).
    pub notify: NotifyMode,
    /// Restart the timer when the first unacknowledged segment is retransmitted (Linux).
    pub rearm_rto: bool,
    /// Linux's reordering adaptation (`tcp_update_reordering`): raise `dupthresh` to the
    /// reordering seen, up to this many segments. `None`: the threshold stays fixed.
    pub max_reordering: Option<u32>,
    /// Linux's TSO deferral (`tcp_tso_should_defer`): in the Open state, new data waits
    /// until a third of the window (or 64 KB) can go at once, unless the last deferral
    /// is this long ago (two jiffies). `None`: segments go as the window opens.
    pub tso_defer: Option<Ps>,
    /// Linux's undo of a spurious fast retransmit (`tcp_try_undo_partial`,
    /// `tcp_try_undo_recovery`): an ACK whose echoed timestamp is older than the
    /// recovery's first retransmission shows the original arrived.
    pub undo: bool,
}

/// A segment the sender wants on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegOut {
    pub seq: u64,
    pub len: u32,
    pub retx: bool,
    /// A header-only probe (no data), echoed by the receiver's NIC.
    pub probe: bool,
}

impl SegOut {
    fn data(seq: u64, len: u32, retx: bool) -> SegOut {
        SegOut {
            seq,
            len,
            retx,
            probe: false,
        }
    }
}

/// What an ACK tells the sender.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AckInfo {
    pub cum: u64,
    pub sack: [(u64, u64); MAX_SACK],
    pub nsack: u8,
    pub echo_ts: Ps,
    pub echo_retx: bool,
    /// ECN echo: a data packet acknowledged here arrived CE-marked.
    pub ece: bool,
    /// FastLane multipath option: out-of-order bytes held above `cum`.
    pub ooo: u64,
    /// CP's PACK option (CP §4.3): a lost block with its edges swapped, (right, left);
    /// (0, 0) when absent. Swapped edges cannot be a SACK block (left < right there).
    pub pack: (u64, u64),
    /// D-SACK (RFC 2883), as a flag: a segment acknowledged here had arrived before.
    pub dsack: bool,
}

impl AckInfo {
    /// The bytes a PACK reports lost, [left, right), if this ACK is a PACK.
    pub fn pack_block(&self) -> Option<(u64, u64)> {
        let (r, l) = self.pack;
        (r > l).then_some((l, r))
    }
}

// Scoreboard states, one byte per outstanding segment.
const SACKED: u8 = 1;
const LOST: u8 = 2;
const RETX: u8 = 4;
/// Lost by a FastLane notification: resent from the notification table only.
const NOTIFIED: u8 = 8;

pub struct TcpSender<C: CongestionControl> {
    size: u64,
    mss: u64,
    rwnd: u64,
    per_ack_increase: bool,
    cwnd_limited: bool,
    ssthresh_from_cwnd: bool,
    rto_min: Ps,
    rto_max: Ps,
    dupthresh: Option<u32>,
    max_reordering: Option<u32>,
    /// `TcpConfig::tso_defer`, 0 for none (the struct stays small: one flow's state).
    tso_defer: Ps,
    /// When new data was last held back by `tso_defer`; `Ps::MAX`: it is not.
    deferred_at: Ps,
    /// `tso_defer`: new data below this byte belongs to a burst already decided on, so
    /// it goes without a new decision when the host's NIC budget split the burst.
    burst_end: u64,
    /// `TcpConfig::undo`.
    undo: bool,
    /// Undo state of the current fast recovery: a reduction that may still be undone,
    /// whether it was (the window restored), ssthresh before it (Linux's
    /// `tcp_current_ssthresh`), and when its first retransmission went (`Ps::MAX`: none
    /// yet).
    undo_marker: bool,
    undone: bool,
    /// Retransmissions of this recovery not yet reported duplicate (Linux's
    /// `undo_retrans`): at 0, every one was spurious.
    undo_retrans: u32,
    /// The window before the reduction (Linux restores twice the halved ssthresh).
    prior_cwnd: u64,
    prior_ssthresh: u64,
    retrans_stamp: Ps,
    /// Lowest unacknowledged byte; always a segment boundary (or `size`).
    una: u64,
    /// `una` in segments: the scoreboard's first segment (kept, not divided out on
    /// every use).
    una_k: u64,
    /// Next new byte to send.
    nxt: u64,
    /// States of segments [una/mss, ceil(nxt/mss)).
    sb: VecDeque<u8>,
    /// Transmission order of each segment's latest transmission (parallel to `sb`).
    sb_tx: VecDeque<u32>,
    /// Transmissions so far (the order stamp of the next one).
    tx_count: u32,
    /// Highest transmission stamp known delivered (SACKed or cumulatively acknowledged).
    delivered_tx: u32,
    /// Segments retransmitted and not yet SACKed: the candidates for lost retransmissions.
    retx_out: u32,
    lost_retransmit: bool,
    /// Bytes in flight by RFC 6675's definition.
    pipe: u64,
    pub w: Window,
    cc: C,
    in_recovery: bool,
    /// RFC 6582 `recover`: no new fast recovery until `una` passes it.
    recover: u64,
    dupacks: u32,
    /// One past the highest SACKed segment.
    high_sacked: u64,
    /// One past the highest segment `mark_lost_by_sack` (or a timeout) has marked lost:
    /// every segment below it has been examined for RFC 6675's IsLost since.
    lost_scanned: u64,
    /// No lost-and-not-retransmitted segment lies below this segment.
    retx_cursor: u64,
    srtt: Ps,
    rttvar: Ps,
    has_rtt: bool,
    base_rto: Ps,
    backoff: u32,
    deadline: Option<Ps>,
    pub retransmits: u32,
    pub timeouts: u32,
    /// Fast recoveries undone as spurious (`TcpConfig::undo`).
    pub undos: u32,
    fixed_rto: bool,
    rearm_rto: bool,
    ecn: bool,
    /// No ECN/quench reaction until `una` passes this (once per window).
    cwr_until: u64,
    ooo_option: bool,
    /// Bytes of SACKed segments above `una`.
    sacked: u64,
    /// FastLane multipath window inflation (bytes).
    inflation: u64,
    fl: Recovery,
    probe_after: Option<u32>,
    consecutive_timeouts: u32,
    /// pFabric probe mode: no data until the probe is answered.
    probing: bool,
    /// A probe is out and unanswered.
    probe_out: bool,
    probe_due: bool,
    /// Notifications received, and those ignored as stale (before the last timeout).
    pub notifications: u32,
    pub stale_notifications: u32,
    pub ecn_reductions: u32,
    /// RFC 6675 (4.3): on entering recovery the first lost segment goes out whatever
    /// the window says.
    retx_now: bool,
    /// PACKs received, and those that named bytes already received or already lost.
    pub packs: u32,
    pub packs_ignored: u32,
}

impl<C: CongestionControl> TcpSender<C> {
    pub fn new(cfg: &TcpConfig, size: u64, cc: C) -> Self {
        let mss = cfg.mss as u64;
        TcpSender {
            size,
            mss,
            rwnd: cfg.rwnd,
            per_ack_increase: cfg.per_ack_increase,
            cwnd_limited: cfg.cwnd_limited,
            ssthresh_from_cwnd: cfg.ssthresh_from_cwnd,
            rto_min: cfg.rto_min,
            rto_max: cfg.rto_max,
            dupthresh: cfg.dupthresh,
            max_reordering: cfg.max_reordering,
            tso_defer: cfg.tso_defer.unwrap_or(0),
            undo: cfg.undo,
            undo_marker: false,
            undone: false,
            undo_retrans: 0,
            prior_cwnd: 0,
            prior_ssthresh: 0,
            retrans_stamp: Ps::MAX,
            deferred_at: Ps::MAX,
            burst_end: 0,
            una: 0,
            una_k: 0,
            nxt: 0,
            sb: VecDeque::new(),
            sb_tx: VecDeque::new(),
            tx_count: 0,
            delivered_tx: 0,
            retx_out: 0,
            lost_retransmit: cfg.lost_retransmit,
            pipe: 0,
            w: Window {
                cwnd: cfg.init_cwnd as u64 * mss,
                ssthresh: u64::MAX,
                mss,
            },
            cc,
            in_recovery: false,
            recover: 0,
            dupacks: 0,
            high_sacked: 0,
            lost_scanned: 0,
            retx_cursor: 0,
            srtt: 0,
            rttvar: 0,
            has_rtt: false,
            base_rto: cfg.rto_init,
            backoff: 0,
            deadline: None,
            retransmits: 0,
            undos: 0,
            timeouts: 0,
            fixed_rto: cfg.fixed_rto,
            rearm_rto: cfg.rearm_rto,
            ecn: cfg.ecn,
            cwr_until: 0,
            ooo_option: cfg.ooo_option,
            sacked: 0,
            inflation: 0,
            fl: Recovery::new(cfg.notify),
            probe_after: cfg.probe_after,
            consecutive_timeouts: 0,
            probing: false,
            probe_out: false,
            probe_due: false,
            notifications: 0,
            stale_notifications: 0,
            ecn_reductions: 0,
            retx_now: false,
            packs: 0,
            packs_ignored: 0,
        }
    }

    /// The FastLane timeout epoch carried in every packet (§3.4.1).
    pub fn epoch(&self) -> u16 {
        self.timeouts as u16
    }

    /// Bytes not yet acknowledged: pFabric's packet priority.
    pub fn remaining(&self) -> u64 {
        self.size - self.una
    }

    /// The FastLane notification table, for tests and metrics.
    pub fn notify_table(&self) -> &Recovery {
        &self.fl
    }

    /// What a window reduction (loss, timeout, ECN echo) halves: Linux's cwnd, or RFC
    /// 5681's FlightSize, which is less when the sender was not window-limited. Never
    /// more than cwnd: RFC 5681 §3.2 leaves out of FlightSize what was sent beyond the
    /// window while duplicate ACKs came in (RFC 3042's limited transmit; our pipe sender
    /// does the same as SACKs arrive), and with no duplicate-ACK threshold `nxt - una`
    /// can hold many windows of SACKed data, half of which would raise the window.
    #[inline]
    fn reduction_base(&self) -> u64 {
        if self.ssthresh_from_cwnd {
            self.w.cwnd
        } else {
            (self.nxt - self.una).min(self.w.cwnd)
        }
    }

    /// Bytes in flight as the window sees them.
    #[inline]
    fn flight(&self) -> u64 {
        if self.ooo_option {
            // FastLane §3.4.1: SACKed bytes stay in flight; the out-of-order option's
            // inflation stands in for them.
            (self.pipe + self.sacked).saturating_sub(self.inflation)
        } else {
            self.pipe
        }
    }

    pub fn done(&self) -> bool {
        self.una >= self.size
    }

    /// When the retransmission timer expires, if it is running.
    pub fn timer(&self) -> Option<Ps> {
        self.deadline
    }

    pub fn una(&self) -> u64 {
        self.una
    }

    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    pub fn srtt(&self) -> Option<Ps> {
        self.has_rtt.then_some(self.srtt)
    }

    pub fn rto(&self) -> Ps {
        if self.fixed_rto {
            return self.rto_min;
        }
        let shifted = self.base_rto.saturating_mul(1u64 << self.backoff.min(40));
        shifted.min(self.rto_max)
    }

    #[inline]
    fn seg_len(&self, k: u64) -> u64 {
        (self.size - k * self.mss).min(self.mss)
    }

    #[inline]
    fn una_seg(&self) -> u64 {
        // `una` is a segment boundary, or `size` once everything is acknowledged.
        debug_assert_eq!(self.una_k, self.una.div_ceil(self.mss));
        self.una_k
    }

    /// One past the last segment sent: the scoreboard holds [una_seg, nxt_seg).
    #[inline]
    fn nxt_seg(&self) -> u64 {
        debug_assert_eq!(
            self.una_k + self.sb.len() as u64,
            self.nxt.div_ceil(self.mss)
        );
        self.una_k + self.sb.len() as u64
    }

    #[inline]
    fn sacked_len(state: u8, len: u64) -> u64 {
        if state & SACKED != 0 {
            len
        } else {
            0
        }
    }

    #[inline]
    fn contrib(state: u8, len: u64) -> u64 {
        if state & SACKED != 0 || (state & LOST != 0 && state & RETX == 0) {
            0
        } else {
            len
        }
    }

    #[inline]
    fn retx_pending(state: u8) -> u32 {
        u32::from(state & RETX != 0 && state & SACKED == 0)
    }

    /// Changes the state of absolute segment `k`, keeping `pipe` exact.
    #[inline]
    fn set_state(&mut self, k: u64, new: u8) {
        let i = (k - self.una_seg()) as usize;
        let old = self.sb[i];
        let len = self.seg_len(k);
        self.pipe = self.pipe + Self::contrib(new, len) - Self::contrib(old, len);
        self.sacked = self.sacked + Self::sacked_len(new, len) - Self::sacked_len(old, len);
        self.retx_out = self.retx_out + Self::retx_pending(new) - Self::retx_pending(old);
        self.sb[i] = new;
    }

    /// Starts the flow: sends what the initial window allows.
    ///
    /// Every call that may send takes `limit`: the most segments `out` may hold on
    /// return (the host's backpressure, TCP Small Queues style). Whatever the window
    /// allows beyond it waits for [`TcpSender::poll`].
    pub fn start(&mut self, now: Ps, limit: usize, out: &mut Vec<SegOut>) {
        self.send_available(now, limit, out, false);
    }

    /// True when [`TcpSender::poll`] would send nothing and change nothing: no probe
    /// due, and the window full with nothing to resend (or a probe outstanding), and the
    /// retransmission timer running if data is out. The host polls a flow each time its
    /// NIC sends one of the flow's packets, and most polls find the window full.
    #[inline]
    pub fn window_closed(&self) -> bool {
        if self.probe_due {
            return false;
        }
        if self.probing {
            return true;
        }
        // What `send_available` would do: resend (FastLane's table, RFC 6675's first
        // loss), fill the window, or start the timer.
        let may_send = self.fl.active() || self.retx_now || !self.window_full();
        !(may_send || self.timer_unarmed())
    }

    /// No room in the congestion window for another full segment.
    #[inline]
    fn window_full(&self) -> bool {
        self.flight() + self.mss > self.w.cwnd.max(self.mss)
    }

    /// Data is out and the retransmission timer is not running.
    #[inline]
    fn timer_unarmed(&self) -> bool {
        self.deadline.is_none() && self.una < self.nxt
    }

    /// Sends what the window allows, up to `limit` segments in `out`.
    pub fn poll(&mut self, now: Ps, limit: usize, out: &mut Vec<SegOut>) {
        self.send_available(now, limit, out, true);
    }

    // One call site per packet (Sim::deliver): inlined there, which the inliner's
    // heuristics otherwise decide differently from build to build (~35 instructions
    // per ACK apart).
    #[inline]
    pub fn on_ack(&mut self, now: Ps, ack: &AckInfo, limit: usize, out: &mut Vec<SegOut>) {
        if ack.cum > self.nxt {
            return; // acknowledges data never sent: ignore
        }
        let mut newly_acked = 0;
        let prior_flight = if self.cwnd_limited { self.flight() } else { 0 };
        // One past the highest SACKed segment before this ACK: a never-retransmitted
        // segment delivered below it arrived out of order, by this distance.
        let fack = self.high_sacked;
        let una_before = self.una_seg();
        let mut reordered = 0;
        let mut duplicate = false;
        if ack.cum > self.una {
            let new_seg = ack.cum.div_ceil(self.mss);
            for k in self.una_seg()..new_seg {
                let st = self
                    .sb
                    .pop_front()
                    .expect("acked segment is on the scoreboard");
                if st & (SACKED | RETX) == 0 && k + 1 < fack {
                    reordered = reordered.max(fack - k);
                }
                let tx = self.sb_tx.pop_front().expect("parallel to sb");
                self.delivered_tx = self.delivered_tx.max(tx);
                self.pipe -= Self::contrib(st, self.seg_len(k));
                self.sacked -= Self::sacked_len(st, self.seg_len(k));
                self.retx_out -= Self::retx_pending(st);
            }
            newly_acked = ack.cum - self.una;
            self.consecutive_timeouts = 0;
            // New data acknowledged answers what a probe asks (the path delivers): a probe
            // lost on the way would otherwise keep the flow silent for `probe_after` more
            // timeouts. That probe's flag goes too, or a lost one would stop every later
            // FastLane probe; notified segments waiting on it get a probe of their own.
            if self.probing {
                self.probing = false;
                if self.probe_out {
                    self.probe_out = false;
                    self.probe_due = self.fl.awaits_probe();
                }
            }
            self.una = new_seg * self.mss;
            self.una = self.una.min(self.size);
            self.una_k = new_seg;
            self.dupacks = 0;
            self.backoff = 0;
            if !ack.echo_retx {
                self.sample_rtt(now.saturating_sub(ack.echo_ts));
            }
        } else if ack.cum == self.una && self.una < self.nxt {
            // RFC 5681 §2: a duplicate acknowledges exactly snd.una; an older ACK
            // overtaken by a newer one (reordered on the way back) is not one. Counted
            // below, once its SACK blocks are read.
            duplicate = true;
        }
        // Linux (tcp_packet_delayed): new data acknowledged by an ACK that echoes a send
        // time from before the recovery's first retransmission was delivered by its
        // original transmission, so the reduction was spurious.
        let delayed = self.undo_marker
            && newly_acked > 0
            && !ack.echo_retx
            && self.retrans_stamp != Ps::MAX
            && ack.echo_ts < self.retrans_stamp;
        if ack.dsack && self.undo_marker {
            self.undo_retrans = self.undo_retrans.saturating_sub(1);
        }
        if delayed && self.in_recovery && !self.undone {
            // tcp_try_undo_partial: the window back, and the reordering this shows
            // (tcp_update_reordering: fackets_out + acked).
            self.undo_cut();
            reordered = reordered.max(fack.saturating_sub(una_before));
        }
        if self.ooo_option {
            // §3.4.1: a new ACK sets the inflation; a duplicate may only raise it, in
            // case ACKs themselves arrive out of order.
            self.inflation = if newly_acked > 0 {
                ack.ooo
            } else {
                self.inflation.max(ack.ooo)
            };
        }
        self.cc
            .on_ack_feedback(newly_acked, ack.ece, self.una, self.nxt);
        if ack.ece && self.ecn {
            self.on_congestion_signal();
        }
        let mut sack_news = false;
        let una_seg = self.una_seg();
        let nxt_seg = self.nxt_seg();
        for &(l, r) in &ack.sack[..ack.nsack as usize] {
            let first = (l / self.mss).max(una_seg);
            let last = r.div_ceil(self.mss).min(nxt_seg);
            for k in first..last {
                let st = self.sb[(k - una_seg) as usize];
                if st & SACKED == 0 {
                    if st & RETX == 0 && k + 1 < fack {
                        reordered = reordered.max(fack - k);
                    }
                    self.set_state(k, st | SACKED);
                    let tx = self.sb_tx[(k - una_seg) as usize];
                    self.delivered_tx = self.delivered_tx.max(tx);
                    sack_news = true;
                }
            }
            self.high_sacked = self.high_sacked.max(last);
        }
        if let (Some(max), Some(th)) = (self.max_reordering, self.dupthresh) {
            let seen = reordered.min(max as u64) as u32;
            if seen > th {
                self.dupthresh = Some(seen);
            }
        }
        // RFC 6675 §2 (DupAck): with SACK, a duplicate counts only if it reports bytes
        // not SACKed before; a D-SACK or a PACK alone is no sign of a later arrival.
        if duplicate && sack_news {
            self.dupacks += 1;
        }
        // RFC 6582 §3.2 step 6: the recovery is over once `una` passes `recover`. Ended
        // before this ACK's PACK and lost marks are taken in, so that a loss they report
        // in the next window starts the next recovery below, with its own reduction.
        let ended = self.in_recovery && self.una >= self.recover;
        if ended {
            self.end_recovery(delayed);
        }
        // CP §4.4: after the SACK blocks, so a PACK for bytes this very ACK reports
        // received is seen as stale.
        if let Some((l, r)) = ack.pack_block() {
            self.on_pack(l, r);
        }
        if let Some(th) = self.dupthresh {
            if sack_news || newly_acked > 0 {
                self.mark_lost_by_sack(th);
                if self.lost_retransmit && self.retx_out > 0 {
                    self.mark_lost_retransmissions(th);
                }
            }
            let head_lost = self
                .sb
                .front()
                .is_some_and(|&s| s & LOST != 0 && s & NOTIFIED == 0);
            if !self.in_recovery
                && !self.fl.active()
                && self.una >= self.recover
                && (self.dupacks >= th || head_lost)
            {
                // Fast retransmit (RFC 6675 §5 / RFC 6582 §3.2 step 2).
                self.enter_recovery();
                self.mark_head_lost();
            } else if self.in_recovery
                && newly_acked > 0
                && self.una < self.recover
                && !self.undone
                && self.sb_tx.front().is_some_and(|&tx| tx < self.delivered_tx)
            {
                // Partial ACK: the next hole is lost too (RFC 6582 §3.2 step 5), if data
                // sent after it has arrived: a head resent late in an earlier recovery,
                // with the later segments still on the wire, is not (RFC 6675 resends
                // only what IsLost says; without this, 272 of 6234 retransmissions in a
                // review's stress test at 5% loss were duplicates). Not once the
                // recovery was undone (Linux: "if the first packet was delayed, the rest
                // ones are most probably delayed as well").
                self.mark_head_lost();
            }
        }
        if ended && !self.in_recovery && !self.fl.active() && self.lost_outstanding() {
            // Linux (tcp_time_to_recover: lost_out): data of the next window already
            // known lost when a recovery ends (a PACK, or IsLost, during the recovery)
            // starts the next one at once, with its own reduction. Without this a
            // sender with no duplicate-ACK threshold resent such data with no cut.
            self.enter_recovery();
        }
        if !ended
            && !self.in_recovery
            && !self.fl.active()
            && newly_acked > 0
            && (!self.cwnd_limited || self.was_cwnd_limited(prior_flight))
        {
            // Linux 2.6 counts ACKs, not bytes: a cumulative jump over data that arrived
            // out of order grows the window as one segment would.
            let counted = if self.per_ack_increase {
                newly_acked.min(self.mss)
            } else {
                newly_acked
            };
            self.cc.on_ack(&mut self.w, counted, now);
        }
        self.settle_notified();
        if newly_acked > 0 {
            // RFC 6298 §5.3: restart the timer on new data acknowledged.
            self.deadline = (self.una < self.nxt).then(|| now + self.rto());
        }
        self.send_available(now, limit, out, false);
    }

    /// `transport.cwnd_limited`: did the window limit the sender, with `flight` out before
    /// this ACK? Linux 2.6.38's tcp_is_cwnd_limited: yes when no more than tcp_max_burst
    /// (3) segments of it were unused, or, with TSO deferral, when what was unused was
    /// being held back for a larger burst (under a third of the window, under 64 KB).
    fn was_cwnd_limited(&self, flight: u64) -> bool {
        let cwnd = self.w.cwnd;
        if flight >= cwnd {
            return true;
        }
        let left = cwnd - flight;
        if self.tso_defer > 0 && 3 * left < cwnd && left < 65_536 {
            return true;
        }
        left <= 3 * self.mss
    }

    /// Fast retransmit (RFC 6675 §5, RFC 6582 §3.2 step 2) or a PACK (CP §4.4): enter
    /// recovery, reduce the window once, and resend the first loss at once.
    fn enter_recovery(&mut self) {
        self.in_recovery = true;
        self.recover = self.nxt;
        if self.undo {
            self.undo_marker = true;
            self.undone = false;
            self.undo_retrans = 0;
            self.retrans_stamp = Ps::MAX;
            self.prior_ssthresh = self.w.ssthresh.max(self.w.cwnd / 4 * 3);
            self.prior_cwnd = self.w.cwnd;
        }
        // RFC 3168 §6.1.2: one reduction for the losses and CE marks of one window
        // (Linux enters Recovery from CWR without asking for ssthresh again).
        if self.una >= self.cwr_until || !self.cc.ecn_cut_covers_loss() {
            let flight = self.reduction_base();
            self.cc.on_loss(&mut self.w, flight);
        }
        self.retx_now = true;
    }

    /// `una` has passed `recover` (RFC 6582 §3.2 step 6).
    fn end_recovery(&mut self, delayed: bool) {
        self.in_recovery = false;
        if self.undo_marker && (delayed || self.undo_retrans == 0) {
            // tcp_try_undo_recovery (the last ACK shows the original arrived, or D-SACKs
            // reported every retransmission a duplicate), then tcp_complete_cwr:
            // ssthresh as before the reduction, the window no larger than it.
            if !self.undone {
                self.undo_cut();
            }
            self.w.ssthresh = self.w.ssthresh.max(self.prior_ssthresh);
            self.w.cwnd = self.w.cwnd.min(self.w.ssthresh);
        } else {
            self.cc.on_recovery_end(&mut self.w);
        }
        self.undo_marker = false;
        self.undone = false;
    }

    /// A segment marked lost and not since SACKed (resent or not): Linux's lost_out.
    fn lost_outstanding(&self) -> bool {
        self.sb
            .iter()
            .any(|&st| st & LOST != 0 && st & (SACKED | NOTIFIED) == 0)
    }

    /// `transport.undo`: the recovery's window cut was spurious; the window goes back
    /// to what it was (Linux's tcp_undo_cwr: twice the halved ssthresh).
    fn undo_cut(&mut self) {
        self.w.cwnd = self.w.cwnd.max(self.prior_cwnd);
        self.undone = true;
        self.undos += 1;
    }

    /// Called when the timer may have expired; does nothing if it has not.
    pub fn on_timer(&mut self, now: Ps, limit: usize, out: &mut Vec<SegOut>) {
        match self.deadline {
            Some(d) if d <= now => {}
            _ => return,
        }
        if self.una >= self.nxt {
            self.deadline = None;
            return;
        }
        self.timeouts += 1;
        self.consecutive_timeouts += 1;
        let flight = self.reduction_base();
        // RFC 5681 §3.1: a timeout of data the timer has already resent leaves ssthresh
        // as the first one set it (halving a window of one segment again would set it to
        // two, and with `ssthresh_from = "cwnd"` it did). So does a timeout in a window
        // already reduced by a recovery or an ECN echo (Linux's tcp_enter_loss; RFC 3168
        // §6.1.2): a window-based cut would compound the first (CUBIC's to β²).
        let reduced =
            self.in_recovery || (self.una < self.cwr_until && self.cc.ecn_cut_covers_loss());
        let held = ((self.consecutive_timeouts > 1 || reduced)
            && self.cc.holds_ssthresh_on_repeat())
        .then_some(self.w.ssthresh);
        self.cc.on_timeout(&mut self.w, flight);
        if let Some(s) = held {
            self.w.ssthresh = s;
        }
        self.backoff += 1;
        // Everything is resent below: notifications from before now are stale (§3.4.1),
        // and so is a probe unanswered for a whole timeout (lost, with its notification).
        self.fl.clear();
        self.probe_out = false;
        // Everything outstanding and not SACKed is presumed lost; SACKed data is not resent.
        for k in self.una_seg()..self.nxt_seg() {
            let st = self.sb[(k - self.una_seg()) as usize];
            if st & SACKED == 0 {
                self.set_state(k, LOST);
            }
        }
        self.retx_cursor = self.una_seg();
        self.lost_scanned = self.nxt_seg();
        self.in_recovery = false;
        self.undo_marker = false;
        self.undone = false;
        self.retx_now = false;
        self.recover = self.nxt;
        self.dupacks = 0;
        self.deadline = Some(now + self.rto());
        if self
            .probe_after
            .is_some_and(|n| self.consecutive_timeouts >= n)
        {
            // pFabric probe mode: ask whether the path is clear before resending.
            self.probing = true;
            self.probe_out = false;
            self.probe_due = true;
        }
        self.send_available(now, limit, out, false);
    }

    /// CP §4.4: a PACK names the bytes of a payload-cut packet. Segments already
    /// received (SACKed or acknowledged) or already lost are left alone; the others
    /// become lost and queue for retransmission, and outside recovery the sender enters
    /// fast retransmit and cuts its window once.
    fn on_pack(&mut self, l: u64, r: u64) {
        self.packs += 1;
        let una_seg = self.una_seg();
        let nxt_seg = self.nxt_seg();
        let first = (l / self.mss).max(una_seg);
        let last = r.div_ceil(self.mss).min(nxt_seg);
        let mut news = false;
        for k in first..last {
            let st = self.sb[(k - una_seg) as usize];
            if st & SACKED != 0 || (st & LOST != 0 && st & RETX == 0) {
                continue;
            }
            // A retransmission cut again is lost again.
            self.set_state(k, LOST);
            self.retx_cursor = self.retx_cursor.min(k);
            news = true;
        }
        if !news {
            self.packs_ignored += 1;
            return;
        }
        // Not before snd.una passes a timeout's `recover` (RFC 6582 §4): the timeout
        // has already reduced the window for this data, which is being resent anyway.
        if !self.in_recovery && !self.fl.active() && self.una >= self.recover {
            self.enter_recovery();
        }
    }

    /// ECN echo or Source Quench: reduce the window, at most once per window of data
    /// (RFC 3168 §6.1.2), and never retransmit because of it.
    fn on_congestion_signal(&mut self) {
        // Not while a timeout's data is being resent either (`una` short of its
        // `recover`): the timeout has reduced for that window (Linux ignores ECE in its
        // Loss state).
        if self.in_recovery
            || self.fl.active()
            || self.una < self.cwr_until
            || self.una < self.recover
        {
            return;
        }
        // RFC 3168 §6.1.2 halves cwnd (or less: `reduction_base`).
        let cwnd = self.w.cwnd;
        let flight = self.reduction_base();
        self.cc.on_ecn(&mut self.w, flight);
        // RFC 3168 §6.1.2: an ECN echo never raises the window (a floor of two segments
        // would, from one).
        self.w.cwnd = self.w.cwnd.min(cwnd);
        self.cwr_until = self.nxt;
        self.ecn_reductions += 1;
    }

    /// The host's NIC refused `segs`, the last of what this sender just emitted (Linux:
    /// dev_queue_xmit returns NET_XMIT_DROP and tcp_write_xmit stops there). They never
    /// left the host, so they are not losses and leave no hole at the receiver: new data
    /// is taken back (snd.nxt steps back), a retransmission waits to be sent again, and
    /// the window shrinks at most once per window, as tcp_enter_cwr does.
    pub fn unsend(&mut self, segs: &[SegOut]) {
        // Last first, so trailing new data comes off the end of the scoreboard.
        for s in segs.iter().rev().filter(|s| !s.probe) {
            let len = s.len as u64;
            let k = s.seq / self.mss;
            if !s.retx && s.seq + len == self.nxt && self.sb.back() == Some(&0) {
                self.sb.pop_back();
                self.sb_tx.pop_back();
                self.tx_count -= 1;
                self.pipe -= len;
                self.nxt = s.seq;
                continue;
            }
            let una_seg = self.una_seg();
            if k < una_seg || s.seq >= self.nxt {
                continue;
            }
            let st = self.sb[(k - una_seg) as usize];
            if st & (SACKED | NOTIFIED) != 0 {
                continue;
            }
            if s.retx {
                self.retransmits -= 1;
                if self.undo_marker {
                    self.undo_retrans = self.undo_retrans.saturating_sub(1);
                }
            }
            self.set_state(k, (st & !RETX) | LOST);
            self.retx_cursor = self.retx_cursor.min(k);
        }
        if self.una >= self.nxt {
            self.deadline = None;
        }
        self.on_congestion_signal();
    }

    /// An ICMP Source Quench for this flow arrived.
    pub fn on_quench(&mut self) {
        if self.ecn {
            self.on_congestion_signal();
        }
    }

    /// A FastLane notification: the packet carrying `seq` (of `len` payload bytes) was
    /// dropped; `epoch` is the timeout epoch it was sent in.
    pub fn on_notify(
        &mut self,
        now: Ps,
        seq: u64,
        epoch: u16,
        limit: usize,
        out: &mut Vec<SegOut>,
    ) {
        self.notifications += 1;
        if epoch != self.epoch() {
            self.stale_notifications += 1;
            return;
        }
        if seq < self.una || seq >= self.nxt {
            return;
        }
        let k = seq / self.mss;
        let una_seg = self.una_seg();
        let st = self.sb[(k - una_seg) as usize];
        if st & SACKED != 0 {
            return;
        }
        // Dropped: it has left the network.
        self.set_state(k, LOST | NOTIFIED);
        self.fl.on_notify(k, self.w.cwnd, self.mss);
        match self.fl.mode {
            NotifyMode::Tcp if k == una_seg => {
                // §3.4.1: the lowest outstanding segment is resent at once, whatever
                // max_sim says, so the cumulative ACK can move.
                self.resend(now, k, out);
                self.fl.mark_sent(k);
            }
            NotifyMode::Tcp => {}
            NotifyMode::Probe => {
                if !self.probe_out {
                    self.probe_due = true;
                }
            }
        }
        if self.deadline.is_none() {
            self.deadline = Some(now + self.rto());
        }
        self.send_available(now, limit, out, false);
    }

    /// The receiver's NIC echoed our probe.
    pub fn on_probe_ack(&mut self, now: Ps, limit: usize, out: &mut Vec<SegOut>) {
        if !self.probe_out {
            return;
        }
        self.probe_out = false;
        if self.probing {
            self.probing = false;
        }
        self.fl.on_probe_ack();
        self.send_available(now, limit, out, false);
    }

    /// The probe itself was dropped and notified: send another.
    pub fn on_probe_lost(&mut self, now: Ps, limit: usize, out: &mut Vec<SegOut>) {
        if self.probe_out {
            self.probe_out = false;
            self.probe_due = true;
            self.send_available(now, limit, out, false);
        }
    }

    /// Drops delivered segments from the notification table; ends FastLane recovery
    /// when it empties (§3.4.1: the window becomes half its value on entering).
    fn settle_notified(&mut self) {
        if !self.fl.active() {
            return;
        }
        let una_seg = self.una_seg();
        let sb = &self.sb;
        let done = self
            .fl
            .settle(|k| k < una_seg || sb[(k - una_seg) as usize] & SACKED != 0);
        if done && self.fl.mode == NotifyMode::Tcp {
            // Not below two segments, the floor every other reduction keeps (RFC 5681).
            self.w.cwnd = (self.fl.entry_cwnd / 2).max(2 * self.mss);
            self.w.ssthresh = self.w.cwnd;
        }
    }

    fn resend(&mut self, now: Ps, k: u64, out: &mut Vec<SegOut>) {
        let i = (k - self.una_seg()) as usize;
        if i == 0 && self.rearm_rto {
            // As Linux does (tcp_xmit_retransmit_queue): resending the head restarts the
            // timer, so a head that keeps being lost and resent in recovery (CP's cut
            // packets) is not also timed out.
            self.deadline = Some(now + self.rto());
        }
        if self.undo_marker {
            if self.retrans_stamp == Ps::MAX {
                self.retrans_stamp = now;
            }
            self.undo_retrans += 1;
        }
        let st = self.sb[i];
        self.set_state(k, st | RETX);
        self.tx_count += 1;
        self.sb_tx[i] = self.tx_count;
        self.retransmits += 1;
        out.push(SegOut::data(k * self.mss, self.seg_len(k) as u32, true));
    }

    fn sample_rtt(&mut self, r: Ps) {
        self.cc.on_rtt(r);
        if self.fixed_rto {
            return;
        }
        // RFC 6298 §2.
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

    fn mark_head_lost(&mut self) {
        let k = self.una_seg();
        if let Some(&st) = self.sb.front() {
            if st & (SACKED | LOST) == 0 {
                self.set_state(k, st | LOST);
                self.retx_cursor = self.retx_cursor.min(k);
            }
        }
    }

    /// RFC 6675 IsLost: a segment with at least `th` SACKed segments above it is lost.
    fn mark_lost_by_sack(&mut self, th: u32) {
        let una_seg = self.una_seg();
        if self.high_sacked <= una_seg {
            return;
        }
        let mut sacked_above = 0;
        for k in (una_seg..self.high_sacked).rev() {
            let st = self.sb[(k - una_seg) as usize];
            if st & SACKED != 0 {
                sacked_above += 1;
            } else if sacked_above >= th {
                if st & NOTIFIED != 0 {
                    continue; // FastLane's table owns it
                }
                if st & LOST != 0 {
                    if k < self.lost_scanned {
                        // Everything below was examined when the scan marked this one
                        // or one above it. A segment a PACK or a partial ACK marked
                        // is no such bound: the scan goes on below it.
                        break;
                    }
                    continue;
                }
                self.set_state(k, st | LOST);
                self.retx_cursor = self.retx_cursor.min(k);
                self.lost_scanned = self.lost_scanned.max(k + 1);
            }
        }
    }

    /// A retransmission is lost when a segment sent `th` or more transmissions after it
    /// has been delivered (the same tolerance for reordering as the duplicate-ACK
    /// threshold): it becomes lost-and-unsent again and is resent without waiting for
    /// the RTO.
    fn mark_lost_retransmissions(&mut self, th: u32) {
        let una_seg = self.una_seg();
        // Only the `retx_out` pending retransmissions can change, and they usually sit
        // near the head: stop at the last of them instead of walking the whole
        // scoreboard on every ACK of a recovery (callgrind: 2% of all instructions on
        // the fat-tree benchmark).
        let mut left = self.retx_out;
        for i in 0..self.sb.len() {
            if left == 0 {
                break;
            }
            let st = self.sb[i];
            if Self::retx_pending(st) == 1 {
                left -= 1;
                if st & NOTIFIED == 0 && self.sb_tx[i] + th <= self.delivered_tx {
                    let k = una_seg + i as u64;
                    self.set_state(k, LOST);
                    self.retx_cursor = self.retx_cursor.min(k);
                }
            }
        }
    }

    /// Lowest segment marked lost and not yet retransmitted.
    fn next_lost(&mut self) -> Option<u64> {
        let una_seg = self.una_seg();
        let nxt_seg = self.nxt_seg();
        let mut k = self.retx_cursor.max(una_seg);
        while k < nxt_seg {
            let st = self.sb[(k - una_seg) as usize];
            if st & LOST != 0 && st & (RETX | SACKED | NOTIFIED) == 0 {
                self.retx_cursor = k;
                return Some(k);
            }
            k += 1;
        }
        self.retx_cursor = nxt_seg;
        None
    }

    /// Sends what the window allows, resends first, up to `limit` segments in `out`.
    /// `polled`: called from [`TcpSender::poll`] (the host's NIC), not from an ACK, a
    /// timer or a notification; TSO deferral does not re-stamp its time then.
    fn send_available(&mut self, now: Ps, limit: usize, out: &mut Vec<SegOut>, polled: bool) {
        if self.probe_due && out.len() < limit {
            self.probe_due = false;
            self.probe_out = true;
            out.push(SegOut {
                seq: self.una,
                len: 0,
                retx: false,
                probe: true,
            });
        }
        if self.probing {
            return; // pFabric probe mode: nothing else until the probe is answered
        }
        // New data is already going out in this call (TSO deferral decides once).
        let mut sending = false;
        loop {
            if out.len() >= limit {
                break;
            }
            if self.fl.active() {
                // FastLane: resends come from the notification table, within max_sim.
                if let Some(k) = self.fl.next_to_send() {
                    self.resend(now, k, out);
                    self.fl.mark_sent(k);
                    continue;
                }
                if self.fl.mode == NotifyMode::Tcp {
                    break; // §3.4.1: no new data while recovering
                }
            }
            if self.retx_now {
                self.retx_now = false;
                if let Some(k) = self.next_lost() {
                    self.resend(now, k, out);
                    continue;
                }
            }
            if self.window_full() {
                break;
            }
            if let Some(k) = self.next_lost() {
                self.resend(now, k, out);
                continue;
            }
            if self.nxt < self.size {
                let len = self.seg_len(self.nxt_seg());
                if self.nxt + len > self.una + self.rwnd {
                    break;
                }
                if !sending && self.tso_defer != 0 && self.tso_should_defer(now, polled) {
                    break;
                }
                sending = true;
                self.sb.push_back(0);
                self.tx_count += 1;
                self.sb_tx.push_back(self.tx_count);
                self.pipe += len;
                out.push(SegOut::data(self.nxt, len as u32, false));
                self.nxt += len;
                continue;
            }
            break;
        }
        if self.timer_unarmed() {
            self.deadline = Some(now + self.rto());
        }
    }

    /// Linux 2.6.38 `tcp_tso_should_defer` (tcp_tso_win_divisor = 3, 64 KB GSO): hold
    /// new data back while less than a third of min(cwnd, rwnd) may be sent, so that
    /// the NIC gets one large burst instead of a segment per ACK. Only in the Open state
    /// (nothing SACKed, lost or being retransmitted, no recovery, no window reduction
    /// for ECN or a local NIC drop in progress: Linux's CWR state), never for the data
    /// that fits all that is left (the FIN goes at once), and not if the last deferral
    /// was `tso_defer` ago or more: Linux re-stamps it at every deferral, so only a pause
    /// in the ACKs ends one. A burst decided on is sent whole even when the host's NIC
    /// budget splits it over several calls.
    fn tso_should_defer(&mut self, now: Ps, polled: bool) -> bool {
        const GSO_MAX: u64 = 65_536;
        if self.nxt < self.burst_end {
            return false;
        }
        let open = !self.in_recovery
            && !self.fl.active()
            && self.sacked == 0
            && self.dupacks == 0
            && self.retx_out == 0
            && self.una >= self.recover
            && self.una >= self.cwr_until;
        if !open {
            return false;
        }
        let cong = self.w.cwnd.saturating_sub(self.flight());
        let send = (self.una + self.rwnd).saturating_sub(self.nxt);
        let limit = cong.min(send);
        let stale =
            self.deferred_at != Ps::MAX && now.saturating_sub(self.deferred_at) >= self.tso_defer;
        if stale
            || limit >= GSO_MAX
            || limit >= self.size - self.nxt
            || limit >= self.w.cwnd.min(self.rwnd) / 3
        {
            self.deferred_at = Ps::MAX;
            self.burst_end = self.nxt + limit;
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

    /// Bytes in flight (RFC 6675 pipe), for tests and metrics.
    pub fn pipe(&self) -> u64 {
        self.pipe
    }

    /// The congestion window, in bytes (diagnostics).
    pub fn cwnd(&self) -> u64 {
        self.w.cwnd
    }

    /// Sent and not yet cumulatively acknowledged, in bytes (what the receive window
    /// limits).
    pub fn outstanding(&self) -> u64 {
        self.nxt - self.una
    }
}

/// What the receiver wants done after an arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxResult {
    pub ack_now: bool,
    /// This arrival completed the flow: the receiver now holds every byte.
    pub completed: bool,
}

pub struct TcpReceiver {
    size: u64,
    mss: u64,
    delayed_ack: Option<Ps>,
    rcv_nxt: u64,
    /// ooo[i]: segment rcv_nxt/mss + i has arrived (ooo[0] is the hole, never set).
    ooo: VecDeque<bool>,
    /// The segment whose arrival triggers the next ACK's first SACK block.
    last_seg: Option<u64>,
    /// The segments whose blocks the last ACKs reported first, most recent first
    /// (RFC 2018 §4: later ACKs repeat them, so one lost ACK does not hide a block).
    reported: [Option<u64>; MAX_SACK],
    pending: u32,
    ack_deadline: Option<Ps>,
    echo_ts: Ps,
    echo_retx: bool,
    /// A CE-marked packet arrived since the last ACK (echoed per ACK, as DCTCP does).
    ce_pending: bool,
    /// Bytes held out of order above `rcv_nxt` (FastLane's multipath option).
    ooo_bytes: u64,
    /// CP: the lost block a payload-cut packet reported, for the next ACK (a PACK).
    pack: Option<(u64, u64)>,
    /// A duplicate segment arrived since the last ACK (reported as a D-SACK).
    dsack: bool,
    /// Payload bytes that arrived more than once.
    pub dup_bytes: u64,
}

impl TcpReceiver {
    pub fn new(cfg: &TcpConfig, size: u64) -> Self {
        TcpReceiver {
            size,
            mss: cfg.mss as u64,
            delayed_ack: cfg.delayed_ack,
            rcv_nxt: 0,
            ooo: VecDeque::new(),
            last_seg: None,
            reported: [None; MAX_SACK],
            pending: 0,
            ack_deadline: None,
            echo_ts: 0,
            echo_retx: false,
            ce_pending: false,
            ooo_bytes: 0,
            pack: None,
            dsack: false,
            dup_bytes: 0,
        }
    }

    /// Bytes delivered in order, each exactly once.
    pub fn delivered(&self) -> u64 {
        self.rcv_nxt
    }

    pub fn complete(&self) -> bool {
        self.rcv_nxt >= self.size
    }

    pub fn timer(&self) -> Option<Ps> {
        self.ack_deadline
    }

    fn seg_len(&self, k: u64) -> u64 {
        (self.size - k * self.mss).min(self.mss)
    }

    pub fn on_data(
        &mut self,
        now: Ps,
        seq: u64,
        len: u32,
        ts: Ps,
        retx: bool,
        ce: bool,
    ) -> RxResult {
        let was_complete = self.complete();
        self.ce_pending |= ce;
        let k = seq / self.mss;
        let base = self.rcv_nxt / self.mss;
        let mut in_order_no_holes = false;
        self.last_seg = None;
        if seq < self.rcv_nxt || seq >= self.size {
            self.dup_bytes += len as u64;
            self.dsack = true;
        } else if seq == self.rcv_nxt {
            // RFC 5681 §4.2: a segment that fills all or part of a gap is acknowledged at
            // once, so only one arriving with nothing out of order may be delayed. (The
            // hole map is empty or ends with a segment received: it only grows to mark one.)
            let had_holes = !self.ooo.is_empty();
            self.ooo.pop_front();
            self.rcv_nxt += len as u64;
            while self.ooo.front() == Some(&true) {
                self.ooo.pop_front();
                let next = self.rcv_nxt / self.mss;
                self.rcv_nxt += self.seg_len(next);
                self.ooo_bytes -= self.seg_len(next);
            }
            in_order_no_holes = !had_holes;
        } else {
            let i = (k - base) as usize;
            if self.ooo.len() <= i {
                self.ooo.resize(i + 1, false);
            }
            if self.ooo[i] {
                self.dup_bytes += len as u64;
                self.dsack = true;
            } else {
                self.ooo[i] = true;
                self.ooo_bytes += len as u64;
            }
            self.last_seg = Some(k);
        }
        let completed = !was_complete && self.complete();
        if self.pending == 0 {
            self.echo_ts = ts;
            self.echo_retx = retx;
        }
        self.pending += 1;
        let ack_now = match self.delayed_ack {
            // Delay only in-order data that leaves no hole, and never the last byte.
            Some(d) if in_order_no_holes && !self.complete() => {
                if self.pending >= 2 {
                    true
                } else {
                    self.ack_deadline.get_or_insert(now + d);
                    false
                }
            }
            _ => true,
        };
        RxResult { ack_now, completed }
    }

    /// RFC 8257 §3.2: a segment whose CE mark differs from that of the segments an ACK
    /// is being delayed for ends the delay: they are acknowledged at once, echoing their
    /// own mark, before this one is taken in (so one ACK never mixes marked and unmarked
    /// data, and the sender's fraction of marked bytes stays exact).
    pub fn ce_flips(&self, ce: bool) -> bool {
        self.pending > 0 && ce != self.ce_pending
    }

    /// CP §4.3: a payload-cut packet arrived — `seq` and its original payload length
    /// `len` name the lost bytes. The PACK goes out at once (the caller sends the ACK).
    pub fn on_cut(&mut self, seq: u64, len: u32) {
        let right = (seq + len as u64).min(self.size);
        if seq >= self.rcv_nxt && right > seq {
            self.pack = Some((seq, right));
        }
    }

    /// The segment at `seq` has arrived before (or lies outside the data).
    pub fn is_duplicate(&self, seq: u64) -> bool {
        if seq < self.rcv_nxt || seq >= self.size {
            return true;
        }
        let i = (seq / self.mss - self.rcv_nxt / self.mss) as usize;
        self.ooo.get(i).copied().unwrap_or(false)
    }

    /// Delayed-ACK timer; true when an ACK is due now.
    pub fn on_timer(&mut self, now: Ps) -> bool {
        match self.ack_deadline {
            Some(d) if d <= now => {
                self.ack_deadline = None;
                self.pending > 0
            }
            _ => false,
        }
    }

    /// Builds the ACK and clears the pending count.
    pub fn make_ack(&mut self) -> AckInfo {
        let mut ack = AckInfo {
            cum: self.rcv_nxt,
            echo_ts: self.echo_ts,
            echo_retx: self.echo_retx,
            ece: self.ce_pending,
            ooo: self.ooo_bytes,
            // Swapped edges: (right, left) (CP §4.3, Fig. 4b).
            pack: self.pack.take().map_or((0, 0), |(l, r)| (r, l)),
            dsack: std::mem::take(&mut self.dsack),
            ..Default::default()
        };
        self.ce_pending = false;
        self.pending = 0;
        self.ack_deadline = None;
        // Consumed here: an ACK made for no new arrival (a PACK, a resent ACK) has no
        // triggering segment.
        let last_seg = self.last_seg.take();
        if self.ooo.is_empty() {
            return ack;
        }
        // RFC 2018: the block holding the segment that triggered this ACK comes first.
        let (mss, size) = (self.mss, self.size);
        let base = self.rcv_nxt / mss;
        let trigger = last_seg.filter(|&k| k >= base);
        // The blocks are found by scanning the hole map, once or twice per ACK while
        // data is out of order: as one slice (rotated in place only when it has wrapped),
        // not through the deque's wrap-around indexing.
        let ooo: &[bool] = self.ooo.make_contiguous();
        let block_of = |i: usize| -> (usize, usize) {
            let mut a = i;
            while a > 0 && ooo[a - 1] {
                a -= 1;
            }
            let mut b = i + 1;
            while b < ooo.len() && ooo[b] {
                b += 1;
            }
            (a, b)
        };
        let to_bytes = |(a, b): (usize, usize)| -> (u64, u64) {
            let l = (base + a as u64) * mss;
            let r = ((base + b as u64) * mss).min(size);
            (l, r)
        };
        let mut blocks = [(0usize, 0usize); MAX_SACK];
        let mut n = 0;
        // RFC 2018 §4: then the most recently reported blocks, then (our fill) the
        // lowest others.
        let recent = self.reported.iter().flatten().copied();
        // As indices into the hole map, those still held out of order.
        let candidates = trigger.into_iter().chain(recent).filter_map(|k| {
            let i = k.checked_sub(base)? as usize;
            ooo.get(i).is_some_and(|&held| held).then_some(i)
        });
        for i in candidates {
            // Recent segments are mostly in a block already taken (arrivals extending
            // one block): known without walking the hole map.
            if n == MAX_SACK {
                break;
            }
            if blocks[..n].iter().any(|&(a, b)| a <= i && i < b) {
                continue;
            }
            blocks[n] = block_of(i);
            n += 1;
        }
        let mut i = 0;
        while i < ooo.len() && n < MAX_SACK {
            if ooo[i] {
                let b = block_of(i);
                if !blocks[..n].contains(&b) {
                    blocks[n] = b;
                    n += 1;
                }
                i = b.1;
            } else {
                i += 1;
            }
        }
        for (s, &b) in ack.sack.iter_mut().zip(&blocks[..n]) {
            *s = to_bytes(b);
        }
        ack.nsack = n as u8;
        if let Some(k) = trigger {
            // Distinct blocks, most recent first (Linux keeps its list so): entries now
            // inside the trigger's block (blocks[0]) give way to it, or arrivals extending
            // one block would fill the list with it and push older blocks out.
            let (lo, hi) = (base + blocks[0].0 as u64, base + blocks[0].1 as u64);
            let mut kept = [None; MAX_SACK];
            kept[0] = Some(k);
            let older = self.reported.iter().flatten();
            for (slot, &r) in kept[1..]
                .iter_mut()
                .zip(older.filter(|&&r| r < lo || r >= hi))
            {
                *slot = Some(r);
            }
            self.reported = kept;
        }
        ack
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::cc::newreno::NewReno;

    fn cfg() -> TcpConfig {
        TcpConfig {
            mss: 1000,
            init_cwnd: 4,
            rwnd: 1 << 20,
            per_ack_increase: false,
            cwnd_limited: false,
            ssthresh_from_cwnd: false,
            rto_min: 1_000,
            rto_init: 1_000,
            rto_max: 1_000_000,
            dupthresh: Some(3),
            delayed_ack: None,
            lost_retransmit: true,
            fixed_rto: false,
            probe_after: None,
            ecn: true,
            ooo_option: false,
            notify: NotifyMode::Tcp,
            rearm_rto: false,
            max_reordering: None,
            tso_defer: None,
            undo: false,
        }
    }

    /// Linux's undo (`transport.undo`). Segment 0 is delayed, not lost: three segments
    /// behind it start a fast retransmit at t = 30, which halves the window. Then the
    /// original arrives; its ACK echoes its send time (5, before 30), so the window goes
    /// back to twice ssthresh, and when the retransmission arrives as a duplicate
    /// (D-SACK) and the recovery ends, ssthresh is restored too. Without undo, or when
    /// the original was really lost (the hole is filled by the retransmission, whose
    /// ACK echoes t = 30), the reduction stands.
    #[test]
    fn undo_restores_a_window_cut_for_a_delayed_segment() {
        let mut c = cfg();
        c.init_cwnd = 10;
        let size = 20_000;
        let run = |undo: bool, original_lost: bool| {
            let mut c = c.clone();
            c.undo = undo;
            let mut s = TcpSender::new(&c, size, NewReno::default());
            let mut r = TcpReceiver::new(&c, size);
            let mut out = Vec::new();
            s.start(0, 100, &mut out);
            // Slow start over, so that no growth blurs the comparison.
            s.w.ssthresh = s.w.cwnd;
            let before = s.w.cwnd;
            let segs = std::mem::take(&mut out);
            for seg in &segs[1..4] {
                r.on_data(20, seg.seq, seg.len, 5, false, false);
                s.on_ack(30, &r.make_ack(), 100, &mut out);
            }
            assert!(s.in_recovery());
            let resent = out.iter().find(|o| o.retx).expect("fast retransmit");
            assert_eq!(resent.seq, 0);
            let halved = s.w.cwnd;
            assert!(halved < before);
            // The hole is filled: by the original (sent at 5) or by the retransmission.
            let (ts, retx) = if original_lost {
                (30, true)
            } else {
                (5, false)
            };
            r.on_data(40, 0, segs[0].len, ts, retx, false);
            s.on_ack(50, &r.make_ack(), 100, &mut out);
            // The late original's ACK restores the window at once (partial undo).
            assert_eq!(s.undos, u32::from(undo && !original_lost));
            if s.undos == 1 {
                assert!(s.w.cwnd >= before && s.in_recovery());
            }
            if !original_lost {
                // The retransmission arrives too: a duplicate, reported by D-SACK.
                r.on_data(41, 0, segs[0].len, 30, true, false);
                let a = r.make_ack();
                assert!(a.dsack);
                s.on_ack(51, &a, 100, &mut out);
            }
            // Everything else arrives; the recovery ends.
            let mut t = 60;
            while !s.done() {
                let sent = std::mem::take(&mut out);
                for seg in segs[4..].iter().chain(sent.iter().filter(|o| !o.retx)) {
                    if seg.seq >= r.delivered() {
                        r.on_data(t, seg.seq, seg.len, t, false, false);
                        s.on_ack(t + 1, &r.make_ack(), 100, &mut out);
                        t += 2;
                    }
                }
                if t > 10_000 {
                    break;
                }
            }
            assert!(s.done() && !s.in_recovery());
            (before, halved, s.w.cwnd, s.w.ssthresh, s.undos)
        };
        let (before, halved, cwnd, ssthresh, undos) = run(true, false);
        assert_eq!(undos, 1);
        assert!(cwnd >= before, "{cwnd} after undo, {before} before the cut");
        assert!(ssthresh >= before / 4 * 3, "{ssthresh}");
        assert!(halved < before);
        for (undo, lost) in [(false, false), (true, true)] {
            let (before, halved, cwnd, ssthresh, undos) = run(undo, lost);
            assert_eq!(undos, 0);
            assert_eq!(ssthresh, halved);
            assert!(
                cwnd < before,
                "undo {undo}, lost {lost}: {cwnd} vs {before}"
            );
        }
    }

    /// Review findings on recovery: a PACK after a timeout starts no fast recovery (RFC
    /// 6582 §4), and a second timeout of the same data keeps ssthresh (RFC 5681 §3.1),
    /// also when a loss halves the window rather than the flight (Linux).
    #[test]
    fn timeouts_are_not_reduced_for_twice() {
        let c = TcpConfig {
            init_cwnd: 10,
            dupthresh: None,
            ssthresh_from_cwnd: true,
            ..cfg()
        };
        let mut s = TcpSender::new(&c, 100_000, NewReno::default());
        let mut out = Vec::new();
        s.start(0, usize::MAX, &mut out);
        assert_eq!(out.len(), 10);
        out.clear();
        s.on_timer(s.timer().unwrap(), usize::MAX, &mut out);
        assert_eq!(s.w.ssthresh, 5000);
        out.clear();
        s.on_timer(s.timer().unwrap(), usize::MAX, &mut out);
        assert_eq!((s.timeouts, s.w.ssthresh), (2, 5000));
        // A PACK for segment 5 (never received) before snd.una passes `recover`.
        let (cwnd, ssthresh) = (s.w.cwnd, s.w.ssthresh);
        let pack = AckInfo {
            cum: 0,
            pack: (6000, 5000),
            ..Default::default()
        };
        s.on_ack(s.timer().unwrap() - 1, &pack, usize::MAX, &mut out);
        assert!(!s.in_recovery);
        assert_eq!((s.w.cwnd, s.w.ssthresh), (cwnd, ssthresh));
    }

    /// RFC 5681 §4.2: with delayed ACKs, the segment that fills a hole is acknowledged
    /// at once, not held.
    #[test]
    fn a_segment_filling_a_hole_is_acknowledged_at_once() {
        let mut c = cfg();
        c.delayed_ack = Some(40_000_000);
        let mut r = TcpReceiver::new(&c, 10_000);
        assert!(
            !r.on_data(1, 0, 1000, 1, false, false).ack_now,
            "in order: delayed"
        );
        assert!(
            r.on_data(2, 2000, 1000, 2, false, false).ack_now,
            "out of order"
        );
        r.make_ack();
        assert!(
            r.on_data(3, 1000, 1000, 3, false, false).ack_now,
            "fills the hole"
        );
        r.make_ack();
        assert!(
            !r.on_data(4, 3000, 1000, 4, false, false).ack_now,
            "in order again"
        );
    }

    /// RFC 8257 §3.2 with delayed ACKs: an ACK never covers both marked and unmarked
    /// data, so the bytes acknowledged with ECE are exactly the bytes that arrived with CE
    /// (the fraction DCTCP's α estimates). Marks in runs of 1 to 3 segments.
    #[test]
    fn delayed_acks_echo_ce_exactly_for_the_marked_bytes() {
        let mut c = cfg();
        c.delayed_ack = Some(40_000_000);
        let size = 1460 * 60;
        let mut r = TcpReceiver::new(&c, size);
        let (mut marked, mut echoed, mut acks, mut last) = (0, 0, 0, 0);
        let mut ack = |r: &mut TcpReceiver, echoed: &mut u64| {
            let a = r.make_ack();
            if a.ece {
                *echoed += a.cum - last;
            }
            last = a.cum;
            acks += 1;
        };
        for k in 0..60u64 {
            let ce = (k / 2 + k / 3) % 2 == 1;
            if ce {
                marked += 1460;
            }
            if r.ce_flips(ce) {
                ack(&mut r, &mut echoed);
            }
            if r.on_data(k, k * 1460, 1460, k, false, ce).ack_now {
                ack(&mut r, &mut echoed);
            }
        }
        assert!(r.complete());
        assert!(marked > 0 && marked < size);
        assert_eq!(echoed, marked);
        // Still delayed where the marks allow: fewer ACKs than segments.
        assert!(acks < 60, "{acks} ACKs");
    }

    /// ACKs reordered on the way back: old ACKs arriving after a newer one are not
    /// duplicates (RFC 5681 §2), so three of them start no fast retransmit.
    #[test]
    fn old_acks_are_not_duplicate_acks() {
        let mut c = cfg();
        c.init_cwnd = 10;
        let size = 100_000;
        let mut s = TcpSender::new(&c, size, NewReno::default());
        let mut r = TcpReceiver::new(&c, size);
        let mut out = Vec::new();
        s.start(0, 100, &mut out);
        let segs = std::mem::take(&mut out);
        let mut acks = Vec::new();
        for (i, seg) in segs[..3].iter().enumerate() {
            r.on_data(10 + i as u64, seg.seq, seg.len, 0, false, false);
            acks.push(r.make_ack());
        }
        // The newest first, then the two older ones, the oldest twice.
        for (t, a) in [(20, 2), (21, 0), (22, 1), (23, 0)] {
            s.on_ack(t, &acks[a], 100, &mut out);
        }
        assert!(out.iter().all(|o| !o.retx), "{out:?}");
        assert!(!s.in_recovery());
        // Three true duplicates (segments 4-6 arrive, 3 is missing) do start one.
        for seg in &segs[4..7] {
            r.on_data(30, seg.seq, seg.len, 0, false, false);
            s.on_ack(30, &r.make_ack(), 100, &mut out);
        }
        assert!(s.in_recovery());
        assert!(
            out.iter().any(|o| o.retx && o.seq == segs[3].seq),
            "{out:?}"
        );
    }

    /// Linux's TSO deferral (tcp_tso_should_defer, win_divisor 3): with 30 segments of
    /// window, ACKs that free one segment each send nothing until a third of the window
    /// (10 segments) can go, which then leaves as one burst; without it, each ACK sends
    /// a segment.
    #[test]
    fn tso_deferral_sends_a_third_of_the_window_at_once() {
        let mut c = cfg();
        c.init_cwnd = 30;
        c.per_ack_increase = true;
        let size = 1_000_000;
        for defer in [None, Some(2_000_000)] {
            c.tso_defer = defer;
            let mut s = TcpSender::new(&c, size, NewReno::default());
            let mut r = TcpReceiver::new(&c, size);
            let mut out = Vec::new();
            s.start(0, 100, &mut out);
            assert_eq!(
                out.len(),
                30,
                "the initial window fits the deferral's limit"
            );
            let first: Vec<SegOut> = std::mem::take(&mut out);
            // In order, one ACK each (slow start is over: no growth to blur the count).
            s.w.ssthresh = s.w.cwnd;
            let mut bursts = Vec::new();
            for (i, seg) in first.iter().enumerate() {
                r.on_data(10 + i as u64, seg.seq, seg.len, 0, false, false);
                s.on_ack(10 + i as u64, &r.make_ack(), 100, &mut out);
                if !out.is_empty() {
                    bursts.push(out.len());
                    out.clear();
                }
            }
            match defer {
                // One per ACK (two once the window has grown by a segment).
                None => assert!(bursts.len() == 30 && bursts.iter().all(|&b| b <= 2)),
                // cwnd is 30 segments (one more after 30 ACKs at most): a burst goes
                // once 10 are free.
                Some(_) => {
                    assert!(bursts.len() >= 2, "{bursts:?}");
                    assert!(bursts.iter().all(|&b| b >= 10), "{bursts:?}");
                }
            }
        }
    }

    /// A burst decided on goes whole: when the host's NIC budget (2 segments a call)
    /// cuts it, the host's polls send the rest without a new decision.
    #[test]
    fn tso_deferral_burst_split_by_the_nic_budget_goes_on_at_polls() {
        let mut c = cfg();
        c.init_cwnd = 30;
        c.per_ack_increase = true;
        c.tso_defer = Some(2_000_000);
        let size = 1_000_000;
        let mut s = TcpSender::new(&c, size, NewReno::default());
        let mut r = TcpReceiver::new(&c, size);
        let mut out = Vec::new();
        s.start(0, 100, &mut out);
        s.w.ssthresh = s.w.cwnd;
        let segs = std::mem::take(&mut out);
        for (i, seg) in segs[..10].iter().enumerate() {
            r.on_data(10 + i as u64, seg.seq, seg.len, 0, false, false);
            s.on_ack(10 + i as u64, &r.make_ack(), 2, &mut out);
        }
        assert_eq!(
            out.len(),
            2,
            "the tenth ACK frees a third: a burst, cut to 2"
        );
        let mut sent = out.len();
        for t in 0..10 {
            out.clear();
            s.poll(100 + t, 2, &mut out);
            sent += out.len();
        }
        assert_eq!(
            sent, 10,
            "the polls send the rest of the burst, and no more"
        );
    }

    /// The deferral is for the Open state only, ends when the ACKs pause for two
    /// jiffies, and never holds back the end of the data.
    #[test]
    fn tso_deferral_stops_out_of_order_after_a_pause_and_at_the_tail() {
        let mut c = cfg();
        c.init_cwnd = 30;
        c.dupthresh = None;
        c.tso_defer = Some(2_000_000);
        // A sender past slow start with its initial window out, its receiver, and the
        // segments sent.
        let start = |size: u64| {
            let mut s = TcpSender::new(&c, size, NewReno::default());
            let mut out = Vec::new();
            s.start(0, 100, &mut out);
            s.w.ssthresh = s.w.cwnd;
            (s, TcpReceiver::new(&c, size), out)
        };
        // Segment `seg` arrives at time t (CE-marked or not) and its ACK is handled.
        let ack = |s: &mut TcpSender<NewReno>,
                   r: &mut TcpReceiver,
                   t: Ps,
                   seg: &SegOut,
                   ce: bool,
                   out: &mut Vec<SegOut>| {
            r.on_data(t, seg.seq, seg.len, 0, false, ce);
            s.on_ack(t, &r.make_ack(), 100, out);
        };
        let size = 1_000_000;
        let mut out = Vec::new();
        // Out of order: segment 0 is missing, so segment 1's ACK SACKs it (Disorder):
        // the freed segment goes at once.
        let (mut s, mut r, first) = start(size);
        ack(&mut s, &mut r, 10, &first[1], false, &mut out);
        assert_eq!(out.len(), 1, "a SACK leaves the Open state");
        // In order, the first ACK defers; one two jiffies later sends.
        let (mut s, mut r, first) = start(size);
        out.clear();
        ack(&mut s, &mut r, 10, &first[0], false, &mut out);
        assert!(out.is_empty());
        ack(&mut s, &mut r, 20, &first[1], false, &mut out);
        assert!(out.is_empty(), "ACKs 10 ps apart keep deferring");
        ack(&mut s, &mut r, 2_000_020, &first[2], false, &mut out);
        assert_eq!(
            out.len(),
            3,
            "an ACK two jiffies after the last deferral sends"
        );
        // A poll in between (from the NIC, not an ACK) does not re-stamp the deferral.
        let (mut s, mut r, first) = start(size);
        out.clear();
        ack(&mut s, &mut r, 10, &first[0], false, &mut out);
        s.poll(1_500_000, 100, &mut out);
        assert!(out.is_empty());
        ack(&mut s, &mut r, 2_000_010, &first[1], false, &mut out);
        assert_eq!(
            out.len(),
            2,
            "two jiffies after the ACK's deferral, not the poll's"
        );
        // After an ECN echo the window shrinks (Linux's CWR state): no deferral until
        // the data sent before it is acknowledged.
        let (mut s, mut r, first) = start(size);
        out.clear();
        ack(&mut s, &mut r, 10, &first[0], true, &mut out);
        assert!(
            out.is_empty(),
            "the window halved to ~15 segments with 29 out"
        );
        let mut bursts = Vec::new();
        for (i, seg) in first[1..25].iter().enumerate() {
            ack(&mut s, &mut r, 20 + i as u64, seg, false, &mut out);
            if !out.is_empty() {
                bursts.push(out.len());
                out.clear();
            }
        }
        // Deferring would wait for a third of the window (5 segments) each time.
        assert!(
            bursts.len() >= 5 && bursts.iter().all(|&b| b < 5),
            "{bursts:?}"
        );
        // The tail: 31 segments in all, so the one left after the initial window fits.
        let (mut s, mut r, first) = start(31_000);
        out.clear();
        ack(&mut s, &mut r, 10, &first[0], false, &mut out);
        assert_eq!(out.len(), 1, "the last segment is not held back");
    }

    /// `window_closed` is what lets the host skip a poll: whenever it says so, a poll
    /// sends nothing and changes neither the pipe nor the timer. Checked after every
    /// event of random lossy, reordering exchanges (with recoveries and timeouts) that
    /// send one segment per call, so the window is found both closed and open.
    #[test]
    fn a_poll_of_a_closed_window_does_nothing() {
        let c = cfg();
        let (mut closed, mut open) = (0, 0);
        for seed in 0..20 {
            let mut rng = crate::rng::Rng::new(seed, 3);
            let size = 100_000;
            let mut s = TcpSender::new(&c, size, NewReno::default());
            let mut r = TcpReceiver::new(&c, size);
            let (mut net, mut out) = (Vec::new(), Vec::new());
            s.start(0, 1, &mut out);
            let mut t = 0;
            while !s.done() {
                t += 10;
                assert!(t < 1_000_000_000, "exchange stalled");
                net.append(&mut out);
                if net.is_empty() {
                    // Nothing in the network: the retransmission timer must fire.
                    t = t.max(s.timer().expect("data out, timer running"));
                    s.on_timer(t, 1, &mut out);
                } else if rng.below(3) == 0 {
                    s.poll(t, 1, &mut out);
                } else {
                    // One segment, any of those in flight (reordering), lost 1 in 10.
                    let seg = net.swap_remove(rng.below(net.len() as u64) as usize);
                    if rng.below(10) != 0 && !seg.probe {
                        r.on_data(t, seg.seq, seg.len, t, seg.retx, false);
                        s.on_ack(t, &r.make_ack(), 1, &mut out);
                    }
                }
                net.append(&mut out);
                if s.window_closed() {
                    closed += 1;
                    let (pipe, timer) = (s.pipe(), s.timer());
                    s.poll(t, 4, &mut out);
                    assert!(out.is_empty(), "seed {seed}: a closed window sent");
                    assert_eq!((s.pipe(), s.timer()), (pipe, timer), "seed {seed}");
                } else {
                    open += 1;
                }
            }
        }
        assert!(closed > 1000 && open > 1000, "closed {closed}, open {open}");
    }

    /// Feeds every segment but `lost` to a receiver and the ACKs back to the sender.
    #[test]
    fn single_loss_is_repaired_by_fast_retransmit_without_timeout() {
        let c = cfg();
        let mut s = TcpSender::new(&c, 10_000, NewReno::default());
        let mut r = TcpReceiver::new(&c, 10_000);
        let mut out = Vec::new();
        s.start(0, usize::MAX, &mut out);
        let mut t = 0;
        let mut dropped = false;
        while !s.done() {
            assert!(!out.is_empty(), "sender stalled");
            let batch: Vec<SegOut> = std::mem::take(&mut out);
            t += 10;
            for seg in batch {
                if seg.seq == 2000 && !dropped {
                    dropped = true;
                    continue;
                }
                r.on_data(t, seg.seq, seg.len, t, seg.retx, false);
                let ack = r.make_ack();
                s.on_ack(t + 5, &ack, usize::MAX, &mut out);
            }
        }
        assert_eq!(r.delivered(), 10_000);
        assert_eq!(s.timeouts, 0);
        assert_eq!(s.retransmits, 1);
        assert_eq!(s.pipe(), 0);
    }

    /// Drops segment 2 twice (the original and its first retransmission); returns the
    /// sender's (timeouts, retransmits) once the flow completes.
    fn lose_a_retransmission(lost_retransmit: bool) -> (u32, u32) {
        let c = TcpConfig {
            lost_retransmit,
            ..cfg()
        };
        let mut s = TcpSender::new(&c, 40_000, NewReno::default());
        let mut r = TcpReceiver::new(&c, 40_000);
        let mut out = Vec::new();
        s.start(0, usize::MAX, &mut out);
        let (mut t, mut drops) = (0, 0);
        while !s.done() {
            if out.is_empty() {
                // Nothing in flight to clock the sender: only the timer is left.
                t = s.timer().expect("a timer while data is outstanding");
                s.on_timer(t, usize::MAX, &mut out);
                continue;
            }
            let batch: Vec<SegOut> = std::mem::take(&mut out);
            t += 10;
            for seg in batch {
                if seg.seq == 2000 && drops < 2 {
                    drops += 1;
                    continue;
                }
                r.on_data(t, seg.seq, seg.len, t, seg.retx, false);
                let ack = r.make_ack();
                s.on_ack(t + 5, &ack, usize::MAX, &mut out);
            }
        }
        assert_eq!(r.delivered(), 40_000);
        (s.timeouts, s.retransmits)
    }

    #[test]
    fn a_lost_retransmission_is_resent_when_later_data_is_sacked() {
        assert_eq!(lose_a_retransmission(true), (0, 2));
        // RFC 6675 alone waits for the timer.
        let (timeouts, _) = lose_a_retransmission(false);
        assert_eq!(timeouts, 1);
    }

    #[test]
    fn timeout_resends_only_unsacked_segments() {
        let c = TcpConfig {
            dupthresh: None,
            ..cfg()
        };
        let mut s = TcpSender::new(&c, 4_000, NewReno::default());
        let mut r = TcpReceiver::new(&c, 4_000);
        let mut out = Vec::new();
        s.start(0, usize::MAX, &mut out);
        assert_eq!(out.len(), 4);
        // Segment 0 is lost; 1..3 arrive and are SACKed.
        for seg in out.drain(..).skip(1).collect::<Vec<_>>() {
            r.on_data(10, seg.seq, seg.len, 0, false, false);
            let ack = r.make_ack();
            assert_eq!(ack.cum, 0);
            s.on_ack(20, &ack, usize::MAX, &mut out);
        }
        assert!(out.is_empty(), "no fast retransmit with the threshold off");
        s.on_timer(s.timer().unwrap(), usize::MAX, &mut out);
        assert_eq!(out, vec![SegOut::data(0, 1000, true)]);
        assert_eq!(s.timeouts, 1);
        r.on_data(2000, 0, 1000, 1500, true, false);
        assert!(r.complete());
    }

    /// Congestion avoidance at cwnd 4000: segments 1-3 arrive before segment 0, whose
    /// arrival acknowledges all four at once. Returns cwnd after that ACK.
    fn cwnd_after_a_cumulative_jump(per_ack: bool) -> u64 {
        let c = TcpConfig {
            per_ack_increase: per_ack,
            dupthresh: None,
            ..cfg()
        };
        let mut s = TcpSender::new(&c, 100_000, NewReno::default());
        s.w.ssthresh = 1000;
        let mut r = TcpReceiver::new(&c, 100_000);
        let mut out = Vec::new();
        s.start(0, usize::MAX, &mut out);
        let sent: Vec<SegOut> = std::mem::take(&mut out);
        assert_eq!(sent.len(), 4);
        for seg in sent.iter().skip(1).chain(sent.iter().take(1)) {
            r.on_data(10, seg.seq, seg.len, 0, false, false);
            s.on_ack(20, &r.make_ack(), usize::MAX, &mut out);
        }
        assert_eq!(s.una, 4000);
        s.w.cwnd
    }

    #[test]
    fn per_ack_counting_grows_the_window_once_per_cumulative_jump() {
        // RFC 5681 byte counting: 4000 bytes acknowledged = one window = one MSS more.
        assert_eq!(cwnd_after_a_cumulative_jump(false), 5000);
        // Linux 2.6: one ACK advancing una counts as one segment, a quarter window.
        assert_eq!(cwnd_after_a_cumulative_jump(true), 4000);
    }

    /// A sender held to 4 segments by the receive window, in congestion avoidance at 10:
    /// cwnd after 400 round trips of ACKs.
    fn cwnd_held_by_rwnd(cwnd_limited: bool) -> u64 {
        let c = TcpConfig {
            init_cwnd: 10,
            rwnd: 4000,
            cwnd_limited,
            ..cfg()
        };
        let size = 2_000_000;
        let mut s = TcpSender::new(&c, size, NewReno::default());
        s.w.ssthresh = 1000;
        let mut r = TcpReceiver::new(&c, size);
        let mut out = Vec::new();
        s.start(0, usize::MAX, &mut out);
        let mut t = 0;
        for _ in 0..400 {
            assert!(s.flight() <= 4000, "the receive window holds the sender");
            for seg in std::mem::take(&mut out) {
                t += 1;
                r.on_data(t, seg.seq, seg.len, 0, false, false);
                s.on_ack(t, &r.make_ack(), usize::MAX, &mut out);
            }
        }
        assert!(s.una > 1_000_000);
        s.w.cwnd
    }

    #[test]
    fn a_window_that_does_not_limit_the_sender_grows_only_without_cwnd_limited() {
        // RFC 5681: every ACK grows it, to far beyond what the sender can use.
        assert!(
            cwnd_held_by_rwnd(false) > 40 * 1000,
            "{}",
            cwnd_held_by_rwnd(false)
        );
        // Linux: 6 of its 10 segments unused, more than 3: it stays.
        assert_eq!(cwnd_held_by_rwnd(true), 10_000);
    }

    /// A sender held to 4000 bytes by the receive window with cwnd 10,000 loses its first
    /// segment and enters fast retransmit; returns ssthresh.
    fn ssthresh_after_loss(from_cwnd: bool) -> u64 {
        let c = TcpConfig {
            init_cwnd: 10,
            rwnd: 4000,
            ssthresh_from_cwnd: from_cwnd,
            ..cfg()
        };
        let mut s = TcpSender::new(&c, 100_000, NewReno::default());
        let mut r = TcpReceiver::new(&c, 100_000);
        let mut out = Vec::new();
        s.start(0, usize::MAX, &mut out);
        let sent: Vec<SegOut> = std::mem::take(&mut out);
        assert_eq!(sent.len(), 4);
        for seg in &sent[1..] {
            r.on_data(10, seg.seq, seg.len, 0, false, false);
            s.on_ack(20, &r.make_ack(), usize::MAX, &mut out);
        }
        assert!(s.in_recovery);
        s.w.ssthresh
    }

    #[test]
    fn a_loss_halves_the_flight_or_the_window() {
        // RFC 5681: FlightSize / 2 = 4000 / 2.
        assert_eq!(ssthresh_after_loss(false), 2000);
        // Linux: cwnd / 2.
        assert_eq!(ssthresh_after_loss(true), 5000);
    }

    /// `host.nic_drop = "local"`: segments the host's NIC refused are taken back, not
    /// lost. Trailing new data comes off the scoreboard (snd.nxt steps back), a refused
    /// retransmission waits to be sent again, and the window halves once per window.
    #[test]
    fn refused_segments_are_taken_back_not_lost() {
        let c = cfg();
        let mut s = TcpSender::new(&c, 100_000, NewReno::default());
        let mut out = Vec::new();
        s.start(0, usize::MAX, &mut out);
        assert_eq!(out.len(), 4);
        // The NIC took the first two of the burst.
        s.unsend(&out[2..]);
        assert_eq!((s.nxt, s.pipe()), (2000, 2000));
        assert_eq!(
            s.w.cwnd, 2000,
            "halved from 4000 (ECN-style, once per window)"
        );
        assert!(!s.in_recovery);
        out.clear();
        s.poll(1, usize::MAX, &mut out);
        assert!(out.is_empty(), "pipe 2000 fills cwnd 2000");
        // The last one sent refused as well, within the same window: taken back, and no
        // second reduction.
        s.unsend(&[SegOut::data(1000, 1000, false)]);
        assert_eq!(s.w.cwnd, 2000);
        assert_eq!((s.nxt, s.pipe()), (1000, 1000));
        // It goes out again as new data, and nothing counts as retransmitted.
        s.poll(2, usize::MAX, &mut out);
        assert_eq!(out, vec![SegOut::data(1000, 1000, false)]);
        assert_eq!(s.retransmits, 0);
        // A refused retransmission is resent later, counted once.
        s.on_pack(0, 1000); // the first segment was cut on the way
        out.clear();
        s.poll(4, usize::MAX, &mut out);
        assert!(out.contains(&SegOut::data(0, 1000, true)));
        assert_eq!(s.retransmits, 1);
        s.unsend(&out);
        assert_eq!(s.retransmits, 0);
        out.clear();
        s.poll(5, usize::MAX, &mut out);
        assert_eq!(out[0], SegOut::data(0, 1000, true));
        assert_eq!(s.retransmits, 1);
    }

    /// A NewReno sender of `size` bytes with an initial window of `init_cwnd` segments,
    /// started, its receiver, and what it sent.
    fn started(init_cwnd: u32, size: u64) -> (TcpSender<NewReno>, TcpReceiver, Vec<SegOut>) {
        started_with(&TcpConfig { init_cwnd, ..cfg() }, size, NewReno::default())
    }

    /// The same with any configuration and congestion control.
    fn started_with<C: CongestionControl>(
        c: &TcpConfig,
        size: u64,
        cc: C,
    ) -> (TcpSender<C>, TcpReceiver, Vec<SegOut>) {
        let mut s = TcpSender::new(c, size, cc);
        let r = TcpReceiver::new(c, size);
        let mut out = Vec::new();
        s.start(0, usize::MAX, &mut out);
        (s, r, out)
    }

    /// RFC 6675 IsLost below a segment a PACK marked: segments 6-8 SACKed make 0-4 lost
    /// (three SACKed above each), although the scan from the top meets segment 5, which
    /// a PACK marked lost, first. The scan used to stop there.
    #[test]
    fn is_lost_reaches_below_a_segment_a_pack_marked() {
        let (mut s, mut r, mut out) = started(10, 10_000);
        assert_eq!(out.len(), 10);
        r.on_cut(5000, 1000);
        s.on_ack(1, &r.make_ack(), usize::MAX, &mut out);
        for seq in [6000, 7000, 8000] {
            r.on_data(2, seq, 1000, 0, false, false);
            s.on_ack(3, &r.make_ack(), usize::MAX, &mut out);
        }
        for k in 0..5 {
            assert_ne!(s.sb[k] & LOST, 0, "segment {k} has three SACKed above it");
        }
        assert_eq!(s.sb[9] & LOST, 0, "nothing SACKed above segment 9");
    }

    /// A PACK during a recovery for data sent after it began reports a loss in the next
    /// window: when the recovery ends, the next one starts, with its own reduction
    /// (Linux: lost_out at the end of Recovery), also with no duplicate-ACK threshold.
    #[test]
    fn a_loss_in_the_next_window_cuts_again_when_the_recovery_ends() {
        let c = TcpConfig {
            init_cwnd: 8,
            dupthresh: None,
            ..cfg()
        };
        let (mut s, mut r, mut out) = started_with(&c, 100_000, NewReno::default());
        s.w.ssthresh = s.w.cwnd; // no slow start: the window moves only by the cuts
        let first: Vec<SegOut> = std::mem::take(&mut out);
        // Segment 0 is cut; 1..8 arrive.
        r.on_cut(0, 1000);
        s.on_ack(1, &r.make_ack(), usize::MAX, &mut out);
        assert!(s.in_recovery);
        let after_first_cut = s.w.cwnd;
        assert_eq!(after_first_cut, 4000);
        for seg in &first[1..] {
            r.on_data(2, seg.seq, seg.len, 0, false, false);
            s.on_ack(3, &r.make_ack(), usize::MAX, &mut out);
        }
        // The retransmission of 0 and new data (8000 on) are out; 8000 is cut, and the
        // retransmission's ACK, which ends the recovery, carries the PACK.
        assert!(out.iter().any(|o| o.seq == 0 && o.retx), "{out:?}");
        assert!(out.iter().any(|o| o.seq == 8000 && !o.retx), "{out:?}");
        r.on_cut(8000, 1000);
        r.on_data(4, 0, 1000, 0, true, false);
        let ack = r.make_ack();
        assert_eq!((ack.cum, ack.pack_block()), (8000, Some((8000, 9000))));
        out.clear();
        s.on_ack(5, &ack, usize::MAX, &mut out);
        assert!(s.in_recovery, "the next recovery has begun");
        assert_eq!(s.w.cwnd, 2000, "and cut the window again");
        assert!(out.iter().any(|o| o.seq == 8000 && o.retx), "{out:?}");
        // The same PACK arriving while the first recovery still runs: marked lost at
        // once, and the cut comes when the recovery ends.
        let (mut s, mut r, mut out) = started_with(&c, 100_000, NewReno::default());
        s.w.ssthresh = s.w.cwnd;
        let first: Vec<SegOut> = std::mem::take(&mut out);
        r.on_cut(0, 1000);
        s.on_ack(1, &r.make_ack(), usize::MAX, &mut out);
        for seg in &first[1..] {
            r.on_data(2, seg.seq, seg.len, 0, false, false);
            s.on_ack(3, &r.make_ack(), usize::MAX, &mut out);
        }
        r.on_cut(8000, 1000);
        s.on_ack(4, &r.make_ack(), usize::MAX, &mut out);
        assert_eq!(s.w.cwnd, 4000, "one reduction per recovery");
        r.on_data(5, 0, 1000, 0, true, false);
        s.on_ack(6, &r.make_ack(), usize::MAX, &mut out);
        assert!(s.in_recovery);
        assert_eq!(s.w.cwnd, 2000);
    }

    /// RFC 6675 §2: a duplicate ACK that SACKs nothing new (here a D-SACK for a
    /// segment that arrived twice) does not count toward the threshold.
    #[test]
    fn a_dsack_alone_is_no_duplicate_ack() {
        let (mut s, mut r, mut out) = started(10, 10_000);
        // Segment 0 is late; segment 5 arrives, then arrives three times more (a
        // duplicated packet): one new SACK, three D-SACKs.
        for _ in 0..4 {
            r.on_data(1, 5000, 1000, 0, false, false);
            s.on_ack(2, &r.make_ack(), usize::MAX, &mut out);
        }
        assert_eq!(s.dupacks, 1);
        assert!(!s.in_recovery, "no fast retransmit on one new SACK");
        // Two more new SACKs make three duplicates.
        for seq in [6000, 7000] {
            r.on_data(3, seq, 1000, 0, false, false);
            s.on_ack(4, &r.make_ack(), usize::MAX, &mut out);
        }
        assert!(s.in_recovery);
    }

    #[test]
    fn sack_blocks_name_the_newest_block_first() {
        let c = cfg();
        let mut r = TcpReceiver::new(&c, 10_000);
        r.on_data(0, 2000, 1000, 0, false, false);
        r.on_data(0, 5000, 1000, 0, false, false);
        let ack = r.make_ack();
        assert_eq!(ack.cum, 0);
        assert_eq!(
            &ack.sack[..ack.nsack as usize],
            &[(5000, 6000), (2000, 3000)]
        );
    }

    /// RFC 2018 §4: after the triggering segment's block come the most recently reported
    /// blocks, so a block whose ACK was lost is repeated by the next ones. Our receiver
    /// filled the option with the lowest blocks, and with more holes than blocks a
    /// delivered segment could go unreported until IsLost resent it (duplicate bytes of
    /// the fat-tree DCTCP benchmark: 30,008, now 2,268).
    #[test]
    fn sack_blocks_repeat_the_most_recently_reported() {
        let c = cfg();
        let mut r = TcpReceiver::new(&c, 100_000);
        let mut last = AckInfo::default();
        for seq in [2000, 10_000, 20_000, 30_000, 40_000] {
            r.on_data(0, seq, 1000, 0, false, false);
            last = r.make_ack();
        }
        assert_eq!(
            &last.sack[..last.nsack as usize],
            &[(40_000, 41_000), (30_000, 31_000), (20_000, 21_000)]
        );
        // A block that grows moves to the front; the others keep their order.
        r.on_data(0, 21_000, 1000, 0, false, false);
        let a = r.make_ack();
        assert_eq!(
            &a.sack[..a.nsack as usize],
            &[(20_000, 22_000), (40_000, 41_000), (30_000, 31_000)]
        );
    }

    /// The recent blocks are distinct ones (RFC 2018 §4: "not subsets of a SACK block
    /// already included"): arrivals that extend one block count as one report of it, so
    /// they do not push the older blocks out. Before, the list kept the last three
    /// triggering segments, here 41, 42 and 43 of one block, and 30's block was dropped
    /// for 10's. A PACK made with no arrival does not count as a report either.
    #[test]
    fn sack_blocks_repeat_distinct_recent_blocks() {
        let c = cfg();
        let mut r = TcpReceiver::new(&c, 100_000);
        let mut last = AckInfo::default();
        for seq in [10_000, 20_000, 30_000, 40_000, 41_000, 42_000, 43_000] {
            r.on_data(0, seq, 1000, 0, false, false);
            last = r.make_ack();
        }
        assert_eq!(
            &last.sack[..last.nsack as usize],
            &[(40_000, 44_000), (30_000, 31_000), (20_000, 21_000)]
        );
        r.on_cut(50_000, 1000);
        assert_eq!(r.make_ack().pack_block(), Some((50_000, 51_000)));
        r.make_ack(); // an ACK sent again, with no new arrival
        r.on_data(0, 60_000, 1000, 0, false, false);
        let a = r.make_ack();
        assert_eq!(
            &a.sack[..a.nsack as usize],
            &[(60_000, 61_000), (40_000, 44_000), (30_000, 31_000)]
        );
    }

    #[test]
    fn delayed_ack_acks_every_second_segment() {
        let c = TcpConfig {
            delayed_ack: Some(500),
            ..cfg()
        };
        let mut r = TcpReceiver::new(&c, 10_000);
        assert!(!r.on_data(0, 0, 1000, 0, false, false).ack_now);
        assert_eq!(r.timer(), Some(500));
        assert!(r.on_data(1, 1000, 1000, 0, false, false).ack_now);
        r.make_ack();
        assert!(!r.on_data(2, 2000, 1000, 0, false, false).ack_now);
        assert!(r.on_timer(502));
    }

    /// CP §4.3–§4.4: a cut packet makes the receiver name exactly the lost bytes with
    /// swapped edges; the sender marks them lost and resends them without waiting for
    /// duplicate ACKs or a timeout; a PACK for data already received changes nothing.
    #[test]
    fn pack_names_the_lost_bytes_and_the_sender_resends_them_at_once() {
        let c = TcpConfig {
            dupthresh: None,
            ..cfg()
        };
        let mut s = TcpSender::new(&c, 6_500, NewReno::default());
        let mut r = TcpReceiver::new(&c, 6_500);
        let mut out = Vec::new();
        s.start(0, usize::MAX, &mut out);
        assert_eq!(out.len(), 4);
        // Segment 1 (bytes 1000..2000) is cut at a switch; the others arrive.
        r.on_data(1, 0, 1000, 0, false, false);
        s.on_ack(2, &r.make_ack(), usize::MAX, &mut out);
        r.on_cut(1000, 1000);
        let pack = r.make_ack();
        assert_eq!(pack.pack, (2000, 1000), "edges swapped: right first");
        assert_eq!(pack.pack_block(), Some((1000, 2000)));
        let before = s.w.cwnd;
        out.clear();
        s.on_ack(3, &pack, usize::MAX, &mut out);
        assert!(out.contains(&SegOut::data(1000, 1000, true)), "{out:?}");
        assert!(s.in_recovery());
        assert!(s.w.cwnd < before, "the window is cut once");
        let cwnd = s.w.cwnd;
        // A PACK for bytes the receiver already has is ignored.
        r.on_data(4, 2000, 1000, 0, false, false);
        r.on_cut(0, 1000);
        let stale = r.make_ack();
        assert_eq!(
            stale.pack_block(),
            None,
            "bytes below rcv_nxt are not reported"
        );
        let mut pk = stale;
        pk.pack = (3000, 2000); // a PACK for bytes the receiver SACKed
        out.clear();
        s.on_ack(5, &pk, usize::MAX, &mut out);
        assert_eq!(s.packs_ignored, 1);
        assert_eq!(s.w.cwnd, cwnd);
        assert!(
            out.iter().all(|o| o.seq != 2000),
            "received data is not resent"
        );
        assert_eq!(s.timeouts, 0);
    }

    /// Ten segments out, the timer fires, then the resent head is acknowledged by an ACK
    /// echoing CE: (cwnd, ssthresh) after the timeout and after the ACK.
    fn ece_after_a_timeout<C: CongestionControl>(cc: C) -> ((u64, u64), (u64, u64)) {
        let c = TcpConfig {
            init_cwnd: 10,
            ..cfg()
        };
        let (mut s, _, mut out) = started_with(&c, 100_000, cc);
        let t = s.timer().unwrap();
        s.on_timer(t, usize::MAX, &mut out);
        let before = (s.w.cwnd, s.w.ssthresh);
        let ack = AckInfo {
            cum: 1000,
            ece: true,
            echo_ts: t,
            ..Default::default()
        };
        s.on_ack(t + 10, &ack, usize::MAX, &mut out);
        (before, (s.w.cwnd, s.w.ssthresh))
    }

    /// RFC 3168 §6.1.2: the timeout has reduced for this window; an echo of a CE mark on
    /// its data neither raises the window (NewReno's echo set it to half the flight, 4.5
    /// segments, from one) nor cuts ssthresh again (CUBIC's and DCTCP's went to 2).
    #[test]
    fn an_ecn_echo_after_a_timeout_changes_nothing() {
        use crate::transport::cc::cubic::Cubic;
        use crate::transport::cc::dctcp::Dctcp;
        let runs = [
            ("newreno", ece_after_a_timeout(NewReno::default())),
            ("cubic", ece_after_a_timeout(Cubic::default())),
            ("dctcp", ece_after_a_timeout(Dctcp::new(1.0 / 16.0))),
        ];
        for (name, (before, after)) in runs {
            // Slow start alone: one segment more for the one acknowledged.
            assert_eq!(after.0, before.0 + 1000, "{name}: cwnd");
            assert_eq!(after.1, before.1, "{name}: ssthresh");
        }
    }

    /// RFC 3168 §6.1.2 halves the window. With no duplicate-ACK threshold, a late
    /// segment 0 leaves 25 segments SACKed above it, and FlightSize (nxt − una) is over
    /// twice cwnd: half of it set ssthresh above the window, and the sender slow-started
    /// after the "reduction" (cwnd 10 segments, ssthresh 10 -> 17).
    #[test]
    fn an_ecn_echo_halves_the_window_when_sacked_data_outweighs_it() {
        let (mut s, mut out, cwnd) = sacked_far_above_a_hole();
        let mut a = AckInfo {
            ece: true,
            ..Default::default()
        };
        a.sack[0] = (1000, 26_000);
        a.nsack = 1;
        s.on_ack(20, &a, usize::MAX, &mut out);
        assert_eq!(s.ecn_reductions, 1);
        assert_eq!((s.w.cwnd, s.w.ssthresh), (cwnd / 2, cwnd / 2));
    }

    /// A sender with no duplicate-ACK threshold whose segment 0 is late: 25 segments
    /// SACKed above it, FlightSize (nxt − una) over twice cwnd.
    fn sacked_far_above_a_hole() -> (TcpSender<NewReno>, Vec<SegOut>, u64) {
        let c = TcpConfig {
            init_cwnd: 10,
            dupthresh: None,
            ..cfg()
        };
        let (mut s, _r, mut out) = started_with(&c, 1_000_000, NewReno::default());
        s.w.ssthresh = s.w.cwnd;
        for right in 2..=26u64 {
            let mut a = AckInfo::default();
            a.sack[0] = (1000, right * 1000);
            a.nsack = 1;
            s.on_ack(10, &a, usize::MAX, &mut out);
        }
        let cwnd = s.w.cwnd;
        assert!(s.nxt - s.una > 2 * cwnd);
        (s, out, cwnd)
    }

    /// A PACK or a timeout for the hole halves the window, not FlightSize: half of
    /// FlightSize was above cwnd, and a loss raised the window (cwnd 10,000 -> 17,500
    /// bytes for the PACK).
    #[test]
    fn a_loss_never_halves_more_than_the_window() {
        let (mut s, mut out, cwnd) = sacked_far_above_a_hole();
        let mut a = AckInfo {
            pack: (1000, 0),
            ..Default::default()
        };
        a.sack[0] = (1000, 26_000);
        a.nsack = 1;
        s.on_ack(20, &a, usize::MAX, &mut out);
        assert!(s.in_recovery);
        assert_eq!((s.w.cwnd, s.w.ssthresh), (cwnd / 2, cwnd / 2));

        let (mut s, mut out, cwnd) = sacked_far_above_a_hole();
        let due = s.deadline.expect("data outstanding");
        s.on_timer(due, usize::MAX, &mut out);
        assert_eq!(s.timeouts, 1);
        assert_eq!((s.w.cwnd, s.w.ssthresh), (1000, cwnd / 2));
    }

    /// RFC 5681 §3.2 step 2: what was sent beyond the window while the duplicate ACKs
    /// came in (limited transmit; here the pipe sender's new segments as SACKs shrink
    /// the pipe) is not part of the FlightSize that the third one halves.
    #[test]
    fn data_sent_on_duplicate_acks_is_not_halved() {
        let (mut s, mut r, mut out) = started(10, 100_000);
        out.clear();
        for seq in [1000u64, 2000, 3000] {
            r.on_data(10, seq, 1000, 0, false, false);
            s.on_ack(20, &r.make_ack(), usize::MAX, &mut out);
        }
        assert!(s.in_recovery);
        assert!(
            out.iter().any(|o| o.seq >= 10_000),
            "new data went out on the SACKs"
        );
        assert!(s.nxt - s.una > 10_000);
        assert_eq!(s.w.ssthresh, 5000);
    }

    /// Ten segments out, slow start over; segment 0's ACK echoes CE, then segment 1 of
    /// the same window is lost (2, 3 and 4 SACKed): (cwnd, ssthresh) after the echo and
    /// after the loss, and whether segment 1 was resent.
    fn ecn_then_loss<C: CongestionControl>(cc: C) -> ((u64, u64), (u64, u64), bool) {
        let c = TcpConfig {
            init_cwnd: 10,
            ..cfg()
        };
        let (mut s, _, mut out) = started_with(&c, 100_000, cc);
        s.w.ssthresh = s.w.cwnd;
        let ack = AckInfo {
            cum: 1000,
            ece: true,
            ..Default::default()
        };
        s.on_ack(100, &ack, usize::MAX, &mut out);
        assert_eq!(s.ecn_reductions, 1);
        let after_ecn = (s.w.cwnd, s.w.ssthresh);
        for r in [3000u64, 4000, 5000] {
            let mut a = AckInfo {
                cum: 1000,
                ..Default::default()
            };
            a.sack[0] = (2000, r);
            a.nsack = 1;
            s.on_ack(200, &a, usize::MAX, &mut out);
        }
        assert!(s.in_recovery);
        let resent = out.iter().any(|o| o.seq == 1000 && o.retx);
        (after_ecn, (s.w.cwnd, s.w.ssthresh), resent)
    }

    /// RFC 3168 §6.1.2: one reduction for the marks and losses of one window. An ECN cut,
    /// then a loss of the same window: CUBIC's ssthresh stays at the first cut (it went to
    /// β² of the window).
    #[test]
    fn an_ecn_cut_and_a_loss_in_one_window_cut_once() {
        use crate::transport::cc::cubic::Cubic;
        let (after_ecn, after_loss, resent) = ecn_then_loss(Cubic::default());
        assert!(after_ecn.1 < 10_000);
        assert_eq!(after_loss.1, after_ecn.1);
        assert!(resent, "the loss is resent");
    }

    /// A timeout during a fast recovery keeps the recovery's ssthresh (Linux's
    /// tcp_enter_loss): a cut based on the already-cut window compounded it, to β² for
    /// CUBIC and a quarter for NewReno with `ssthresh_from = "cwnd"`.
    #[test]
    fn a_timeout_during_a_recovery_does_not_cut_again() {
        use crate::transport::cc::cubic::Cubic;
        fn run<C: CongestionControl>(cc: C, from_cwnd: bool) -> (u64, u64) {
            let c = TcpConfig {
                init_cwnd: 10,
                ssthresh_from_cwnd: from_cwnd,
                ..cfg()
            };
            let (mut s, _, mut out) = started_with(&c, 100_000, cc);
            for r in [2000u64, 3000, 4000] {
                let mut a = AckInfo::default();
                a.sack[0] = (1000, r);
                a.nsack = 1;
                s.on_ack(100, &a, usize::MAX, &mut out);
            }
            assert!(s.in_recovery);
            let in_recovery = s.w.ssthresh;
            let t = s.timer().unwrap();
            s.on_timer(t, usize::MAX, &mut out);
            assert_eq!(s.w.cwnd, 1000);
            (in_recovery, s.w.ssthresh)
        }
        let (a, b) = run(Cubic::default(), false);
        assert_eq!((a, b), (7001, 7001));
        let (a, b) = run(NewReno::default(), true);
        assert_eq!((a, b), (5000, 5000));
    }

    /// A pFabric sender (with FastLane's probes) whose first window went unanswered for
    /// three timeouts: in probe mode. Returns it, what the last timeout sent, and when.
    fn pfabric_in_probe_mode() -> (
        TcpSender<crate::transport::cc::pfabric::PFabricCc>,
        Vec<SegOut>,
        Ps,
    ) {
        use crate::transport::cc::pfabric::PFabricCc;
        let c = TcpConfig {
            init_cwnd: 10,
            dupthresh: None,
            fixed_rto: true,
            probe_after: Some(3),
            notify: NotifyMode::Probe,
            ..cfg()
        };
        let mut s = TcpSender::new(&c, 100_000, PFabricCc::new(20_000));
        let mut out = Vec::new();
        s.start(0, usize::MAX, &mut out);
        let mut t = 0;
        for _ in 0..3 {
            out.clear();
            t = s.timer().unwrap();
            s.on_timer(t, usize::MAX, &mut out);
        }
        (s, out, t)
    }

    /// pFabric probe mode ends when new data is acknowledged: a probe lost on the way,
    /// with the original head only delayed, kept the flow silent for `probe_after` more
    /// timeouts (Turbo §4's stuck packet).
    #[test]
    fn an_ack_of_new_data_ends_pfabric_probe_mode() {
        let (mut s, mut out, t) = pfabric_in_probe_mode();
        assert!(
            out.iter().any(|o| o.probe),
            "probe mode after three timeouts"
        );
        out.clear();
        let ack = AckInfo {
            cum: 1000,
            ..Default::default()
        };
        s.on_ack(t + 10, &ack, usize::MAX, &mut out);
        if out.is_empty() {
            let d = s.timer().unwrap();
            s.on_timer(d, usize::MAX, &mut out);
        }
        assert!(
            out.iter().any(|o| !o.probe && o.len > 0),
            "data goes out by the next timeout: {out:?}"
        );
    }

    /// A probe that is never answered (lost, and its notification dropped too) must not
    /// stop later FastLane probes (`NotifyMode::Probe`): its flag goes when new data ends
    /// pFabric's probe mode, and at the next timeout otherwise. Before, a later
    /// notification sent no probe, so its segment waited for a timeout, every time.
    #[test]
    fn a_lost_probe_does_not_silence_later_notifications() {
        let probed = |out: &[SegOut]| out.iter().any(|o| o.probe);
        // pFabric: probe mode after three timeouts; its probe is lost, the delayed head's
        // ACK ends probe mode, then segment 5 is dropped and notified.
        let (mut s, mut out, t) = pfabric_in_probe_mode();
        assert!(probed(&out));
        out.clear();
        let ack = AckInfo {
            cum: 1000,
            ..Default::default()
        };
        s.on_ack(t + 10, &ack, usize::MAX, &mut out);
        out.clear();
        let e = s.epoch();
        s.on_notify(t + 20, 5000, e, usize::MAX, &mut out);
        assert!(probed(&out), "a probe for the notified segment: {out:?}");

        // FastLane probe mode alone: a notification's probe is lost with its own
        // notification; after the timeout, the next notification is probed for again.
        let c = TcpConfig {
            init_cwnd: 10,
            dupthresh: None,
            notify: NotifyMode::Probe,
            ..cfg()
        };
        let (mut s, mut r, mut out) = started_with(&c, 100_000, NewReno::default());
        r.on_data(1, 0, 1000, 0, false, false);
        s.on_ack(2, &r.make_ack(), usize::MAX, &mut out);
        out.clear();
        let e = s.epoch();
        s.on_notify(3, 3000, e, usize::MAX, &mut out);
        assert!(probed(&out), "the first notification's probe");
        out.clear();
        let d = s.timer().unwrap();
        s.on_timer(d, usize::MAX, &mut out);
        let resent: Vec<u64> = out.iter().filter(|o| !o.probe).map(|o| o.seq).collect();
        for seq in resent {
            r.on_data(d + 1, seq, 1000, d, true, false);
        }
        out.clear();
        s.on_ack(d + 2, &r.make_ack(), usize::MAX, &mut out);
        let k = s.nxt - 1000;
        out.clear();
        let e = s.epoch();
        s.on_notify(d + 3, k, e, usize::MAX, &mut out);
        assert!(probed(&out), "a probe after the timeout: {out:?}");
    }

    /// RFC 8257 §3.5: DCTCP's echo cut is α-sized, so a loss in the same window still
    /// halves the window as conventional TCP would (Linux's dctcp_react_to_loss); the
    /// once-per-window rule of RFC 3168 holds for the others (the test above).
    #[test]
    fn a_dctcp_loss_halves_even_in_a_window_cut_for_an_echo() {
        use crate::transport::cc::dctcp::Dctcp;
        let (after_ecn, after_loss, resent) = ecn_then_loss(Dctcp::new(1.0 / 16.0));
        assert!(
            after_loss.0 < after_ecn.0,
            "{after_ecn:?} then {after_loss:?}"
        );
        assert!(resent);
    }
}
