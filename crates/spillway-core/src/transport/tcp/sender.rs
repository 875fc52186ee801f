//! The TCP sender: NewReno (RFC 6582) with an RFC 6675-style SACK scoreboard, fast
//! retransmit and recovery, the retransmission timer (RFC 6298), ECN (RFC 3168), and what
//! the papers add: FastLane's notifications (§3.4), CP's PACKs (§4.4), pFabric's probe
//! mode (§4.3); and Linux 2.6.38's behaviours the CP testbed shows (reordering
//! adaptation, lost-retransmission detection, undo, TSO deferral), each behind its key.
//!
//! Each concept keeps its state in its own module: the sequence space and loss marks in
//! [`Scoreboard`], the timeout in [`Rtt`], FastLane's table in [`Recovery`], probe mode
//! in [`ProbeMode`], undo in [`Undo`], TSO deferral in [`TsoDeferral`], the window in
//! the congestion control. This module is the glue: what an ACK, a timeout or a
//! notification does to them, and what goes out.

use super::config::{PriorityMode, TcpConfig};
use super::fastlane::{NotifyMode, Recovery};
use super::pack::Packs;
use super::probe::ProbeMode;
use super::rtt::Rtt;
use super::scoreboard::{Scoreboard, TakenBack};
use super::tso::TsoDeferral;
use super::undo::Undo;
use crate::transport::cc::{CongestionControl, Window};
use crate::transport::connection::{AckInfo, Segment};
use crate::units::Ps;

/// How the sender stamps its packets.
#[derive(Debug, Clone, Copy)]
struct Stamp {
    priority: PriorityMode,
    header_bytes: u32,
    class: u8,
    ect: bool,
    cpa: bool,
}

pub struct TcpSender<C: CongestionControl> {
    size: u64,
    mss: u64,
    rwnd: u64,
    per_ack_increase: bool,
    cwnd_limited: bool,
    ssthresh_from_cwnd: bool,
    dupthresh: Option<u32>,
    max_reordering: Option<u32>,
    lost_retransmit: bool,
    rearm_rto: bool,
    ecn: bool,
    ooo_option: bool,
    stamp: Stamp,
    sb: Scoreboard,
    rtt: Rtt,
    tso: TsoDeferral,
    undo: Undo,
    probe: ProbeMode,
    fl: Recovery,
    w: Window,
    cc: C,
    in_recovery: bool,
    /// RFC 6582 `recover`: no new fast recovery until `una` passes it.
    recover: u64,
    dupacks: u32,
    deadline: Option<Ps>,
    /// No ECN/quench reaction until `una` passes this (once per window).
    cwr_until: u64,
    /// FastLane multipath window inflation (bytes).
    inflation: u64,
    /// RFC 6675 (4.3): on entering recovery the first lost segment goes out whatever
    /// the window says.
    retx_now: bool,
    /// An input asked for a send pass (`poll_transmit` makes it): `Some(polled)`, polled
    /// when the input was the host's NIC freeing room ([`TcpSender::on_nic_freed`]).
    send_due: Option<bool>,
    /// A notified lowest segment to resend at once, before anything else (§3.4.1).
    urgent: Option<u64>,
    retransmits: u32,
    timeouts: u32,
    /// Notifications received, and those ignored as stale (before the last timeout).
    notifications: u32,
    stale_notifications: u32,
    ecn_reductions: u32,
    packs: Packs,
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
            dupthresh: cfg.dupthresh,
            max_reordering: cfg.max_reordering,
            lost_retransmit: cfg.lost_retransmit,
            rearm_rto: cfg.rearm_rto,
            ecn: cfg.ecn,
            ooo_option: cfg.ooo_option,
            stamp: Stamp {
                priority: cfg.priority,
                header_bytes: cfg.header_bytes,
                class: cfg.data_class,
                ect: cfg.ecn,
                cpa: cfg.cp,
            },
            sb: Scoreboard::new(size, mss),
            rtt: Rtt::new(cfg),
            tso: TsoDeferral::new(cfg.tso_defer),
            undo: Undo::new(cfg.undo),
            probe: ProbeMode::new(cfg.probe_after),
            fl: Recovery::new(cfg.notify),
            w: Window {
                cwnd: cfg.init_cwnd as u64 * mss,
                ssthresh: u64::MAX,
                mss,
            },
            cc,
            in_recovery: false,
            recover: 0,
            dupacks: 0,
            deadline: None,
            cwr_until: 0,
            inflation: 0,
            retx_now: false,
            send_due: None,
            urgent: None,
            retransmits: 0,
            timeouts: 0,
            notifications: 0,
            stale_notifications: 0,
            ecn_reductions: 0,
            packs: Packs::default(),
        }
    }

    /// The priority class its segments are stamped with.
    pub fn class(&self) -> u8 {
        self.stamp.class
    }

    /// Stamps its segments with priority class `class` (the flow's own, in place of
    /// `transport.data_class`).
    pub fn set_class(&mut self, class: u8) {
        self.stamp.class = class;
    }

    /// The FastLane timeout epoch carried in every packet (§3.4.1).
    pub fn epoch(&self) -> u16 {
        self.timeouts as u16
    }

    /// Bytes not yet acknowledged: pFabric's packet priority.
    pub fn remaining(&self) -> u64 {
        self.size - self.sb.una()
    }

    /// Bytes neither cumulatively acknowledged nor SACKed (the run's progress check).
    pub fn unsacked(&self) -> u64 {
        self.remaining() - self.sb.sacked()
    }

    /// The FastLane notification table, for tests and metrics.
    pub fn notify_table(&self) -> &Recovery {
        &self.fl
    }

    /// Segments sent more than once.
    pub fn retransmits(&self) -> u32 {
        self.retransmits
    }

    /// Retransmission timer expiries.
    pub fn timeouts(&self) -> u32 {
        self.timeouts
    }

    /// FastLane notifications received, and those ignored as sent before the last
    /// timeout.
    pub fn notifications(&self) -> u32 {
        self.notifications
    }

    pub fn stale_notifications(&self) -> u32 {
        self.stale_notifications
    }

    /// Window cuts for ECN echoes or quenches.
    pub fn ecn_reductions(&self) -> u32 {
        self.ecn_reductions
    }

    /// The window (congestion window, ssthresh).
    pub fn window(&self) -> Window {
        self.w
    }

    /// The window, to set up a test.
    #[cfg(test)]
    pub fn window_mut(&mut self) -> &mut Window {
        &mut self.w
    }

    /// Fast recoveries undone as spurious (`transport.undo`).
    pub fn undos(&self) -> u32 {
        self.undo.undos()
    }

    /// PACKs received (CP), and those that named nothing new.
    pub fn packs(&self) -> (u32, u32) {
        (self.packs.received(), self.packs.ignored())
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
            (self.sb.nxt() - self.sb.una()).min(self.w.cwnd)
        }
    }

    /// Bytes in flight as the window sees them.
    #[inline]
    pub fn flight(&self) -> u64 {
        if self.ooo_option {
            // FastLane §3.4.1: SACKed bytes stay in flight; the out-of-order option's
            // inflation stands in for them.
            (self.sb.pipe() + self.sb.sacked()).saturating_sub(self.inflation)
        } else {
            self.sb.pipe()
        }
    }

    pub fn done(&self) -> bool {
        self.sb.una() >= self.size
    }

    /// When the retransmission timer expires, if it is running.
    pub fn timer(&self) -> Option<Ps> {
        self.deadline
    }

    pub fn una(&self) -> u64 {
        self.sb.una()
    }

    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    pub fn srtt(&self) -> Option<Ps> {
        self.rtt.srtt()
    }

    pub fn rto(&self) -> Ps {
        self.rtt.rto()
    }

    /// Starts the flow: what the initial window allows goes at the next send pass.
    pub fn start(&mut self) {
        self.send_due = Some(false);
    }

    /// The host's NIC took one of this flow's packets: the window may send into the room
    /// (the host asks [`TcpSender::window_closed`] first, and most find it closed).
    pub fn on_nic_freed(&mut self) {
        self.send_due = Some(true);
    }

    /// True when a send pass after [`TcpSender::on_nic_freed`] would send nothing and
    /// change nothing: no probe due, and the window full with nothing to
    /// resend (or a probe outstanding), and the retransmission timer running if data is
    /// out. The host polls a flow each time its NIC sends one of the flow's packets, and
    /// most polls find the window full.
    #[inline]
    pub fn window_closed(&self) -> bool {
        if self.probe.due() {
            return false;
        }
        if self.probe.probing() {
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
        self.deadline.is_none() && self.sb.una() < self.sb.nxt()
    }

    /// What goes out now, after an input: the send pass it asked for, at most `limit`
    /// segments in `out` (the host's backpressure, TCP Small Queues style; what the
    /// window allows beyond it waits for the NIC to free room).
    #[inline]
    pub fn poll_transmit(&mut self, now: Ps, limit: usize, out: &mut Vec<Segment>) {
        if let Some(k) = self.urgent.take() {
            let t = self.template(now);
            self.resend(now, k, &t, out);
            self.fl.mark_sent(k);
        }
        if let Some(polled) = self.send_due.take() {
            self.send_available(now, limit, out, polled);
        }
    }

    // One call site per packet: inlined there, which the inliner's heuristics otherwise
    // decide differently from build to build (~35 instructions per ACK apart).
    #[inline]
    pub fn on_ack(&mut self, now: Ps, ack: &AckInfo) {
        let (una, nxt) = (self.sb.una(), self.sb.nxt());
        if ack.cum > nxt {
            return; // acknowledges data never sent: ignore
        }
        let mut newly_acked = 0;
        let prior_flight = if self.cwnd_limited { self.flight() } else { 0 };
        // One past the highest SACKed segment before this ACK: a never-retransmitted
        // segment delivered below it arrived out of order, by this distance.
        let fack = self.sb.high_sacked();
        let una_before = self.sb.una_seg();
        let mut reordered = 0;
        let mut duplicate = false;
        if ack.cum > una {
            let (acked, r) = self.sb.ack_to(ack.cum, fack);
            newly_acked = acked;
            reordered = r;
            self.probe.on_delivery(self.fl.awaits_probe());
            self.dupacks = 0;
            self.rtt.reset_backoff();
            if !ack.echo_retx {
                self.sample_rtt(now.saturating_sub(ack.echo_ts));
            }
        } else if ack.cum == una && una < nxt {
            // RFC 5681 §2: a duplicate acknowledges exactly snd.una; an older ACK
            // overtaken by a newer one (reordered on the way back) is not one. Counted
            // below, once its SACK blocks are read.
            duplicate = true;
        }
        let delayed = self.undo.delayed(newly_acked, ack);
        if ack.dsack {
            self.undo.on_dsack();
        }
        if delayed && self.in_recovery && !self.undo.undone() {
            // tcp_try_undo_partial: the window back, and the reordering this shows
            // (tcp_update_reordering: fackets_out + acked).
            self.undo.undo_cut(&mut self.w);
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
            .on_ack_feedback(newly_acked, ack.ece, self.sb.una(), self.sb.nxt());
        if ack.ece && self.ecn {
            self.on_congestion_signal();
        }
        let (sack_news, r) = self.sb.sack(&ack.sack[..ack.nsack as usize], fack);
        reordered = reordered.max(r);
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
        let ended = self.in_recovery && self.sb.una() >= self.recover;
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
                self.sb.mark_lost_by_sack(th);
                if self.lost_retransmit && self.sb.retx_out() > 0 {
                    self.sb.mark_lost_retransmissions(th);
                }
            }
            let una = self.sb.una();
            if !self.in_recovery
                && !self.fl.active()
                && una >= self.recover
                && (self.dupacks >= th || self.sb.head_lost())
            {
                // Fast retransmit (RFC 6675 §5 / RFC 6582 §3.2 step 2).
                self.enter_recovery();
                self.sb.mark_head_lost();
            } else if self.in_recovery
                && newly_acked > 0
                && una < self.recover
                && !self.undo.undone()
                && self.sb.head_overtaken()
            {
                // Partial ACK: the next hole is lost too (RFC 6582 §3.2 step 5), if data
                // sent after it has arrived: a head resent late in an earlier recovery,
                // with the later segments still on the wire, is not (RFC 6675 resends
                // only what IsLost says; without this, 272 of 6234 retransmissions in a
                // review's stress test at 5% loss were duplicates). Not once the
                // recovery was undone (Linux: "if the first packet was delayed, the rest
                // ones are most probably delayed as well").
                self.sb.mark_head_lost();
            }
        }
        if ended && !self.in_recovery && !self.fl.active() && self.sb.lost_outstanding() {
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
            self.deadline = (self.sb.una() < self.sb.nxt()).then(|| now + self.rto());
        }
        self.send_due = Some(false);
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
        if self.tso.enabled() && 3 * left < cwnd && left < 65_536 {
            return true;
        }
        left <= 3 * self.mss
    }

    /// Fast retransmit (RFC 6675 §5, RFC 6582 §3.2 step 2) or a PACK (CP §4.4): enter
    /// recovery, reduce the window once, and resend the first loss at once.
    fn enter_recovery(&mut self) {
        self.in_recovery = true;
        self.recover = self.sb.nxt();
        self.undo.on_enter_recovery(&self.w);
        // RFC 3168 §6.1.2: one reduction for the losses and CE marks of one window
        // (Linux enters Recovery from CWR without asking for ssthresh again).
        if self.sb.una() >= self.cwr_until || !self.cc.ecn_cut_covers_loss() {
            let flight = self.reduction_base();
            self.cc.on_loss(&mut self.w, flight);
        }
        self.retx_now = true;
    }

    /// `una` has passed `recover` (RFC 6582 §3.2 step 6).
    fn end_recovery(&mut self, delayed: bool) {
        self.in_recovery = false;
        if !self.undo.on_recovery_end(&mut self.w, delayed) {
            self.cc.on_recovery_end(&mut self.w);
        }
    }

    /// The timer may have expired; does nothing if it has not.
    fn on_timer(&mut self, now: Ps) {
        match self.deadline {
            Some(d) if d <= now => {}
            _ => return,
        }
        if self.sb.una() >= self.sb.nxt() {
            self.deadline = None;
            return;
        }
        self.timeouts += 1;
        // Counts this timeout, forgets a probe unanswered for a whole timeout (lost, with
        // its notification), and enters probe mode when timeouts repeat.
        self.probe.on_timeout();
        let flight = self.reduction_base();
        // RFC 5681 §3.1: a timeout of data the timer has already resent leaves ssthresh
        // as the first one set it (halving a window of one segment again would set it to
        // two, and with `ssthresh_from = "cwnd"` it did). So does a timeout in a window
        // already reduced by a recovery or an ECN echo (Linux's tcp_enter_loss; RFC 3168
        // §6.1.2): a window-based cut would compound the first (CUBIC's to β²).
        let reduced =
            self.in_recovery || (self.sb.una() < self.cwr_until && self.cc.ecn_cut_covers_loss());
        let held = ((self.probe.consecutive_timeouts() > 1 || reduced)
            && self.cc.holds_ssthresh_on_repeat())
        .then_some(self.w.ssthresh);
        self.cc.on_timeout(&mut self.w, flight);
        if let Some(s) = held {
            self.w.ssthresh = s;
        }
        self.rtt.back_off();
        // Everything is resent below: notifications from before now are stale (§3.4.1).
        self.fl.clear();
        self.sb.mark_unsacked_lost();
        self.in_recovery = false;
        self.undo.on_timeout();
        self.retx_now = false;
        self.recover = self.sb.nxt();
        self.dupacks = 0;
        self.deadline = Some(now + self.rto());
        self.send_due = Some(false);
    }

    /// CP §4.4: a PACK names the bytes of a payload-cut packet ([`Packs`]).
    pub fn on_pack(&mut self, l: u64, r: u64) {
        if !self.packs.on_pack(&mut self.sb, l, r) {
            return;
        }
        // Not before snd.una passes a timeout's `recover` (RFC 6582 §4): the timeout
        // has already reduced the window for this data, which is being resent anyway.
        if !self.in_recovery && !self.fl.active() && self.sb.una() >= self.recover {
            self.enter_recovery();
        }
    }

    /// ECN echo or Source Quench: reduce the window, at most once per window of data
    /// (RFC 3168 §6.1.2), and never retransmit because of it.
    fn on_congestion_signal(&mut self) {
        // Not while a timeout's data is being resent either (`una` short of its
        // `recover`): the timeout has reduced for that window (Linux ignores ECE in its
        // Loss state).
        let una = self.sb.una();
        if self.in_recovery || self.fl.active() || una < self.cwr_until || una < self.recover {
            return;
        }
        // RFC 3168 §6.1.2 halves cwnd (or less: `reduction_base`).
        let cwnd = self.w.cwnd;
        let flight = self.reduction_base();
        self.cc.on_ecn(&mut self.w, flight);
        // RFC 3168 §6.1.2: an ECN echo never raises the window (a floor of two segments
        // would, from one).
        self.w.cwnd = self.w.cwnd.min(cwnd);
        self.cwr_until = self.sb.nxt();
        self.ecn_reductions += 1;
    }

    /// The host's NIC refused `segs`, the last of what this sender just emitted (Linux:
    /// dev_queue_xmit returns NET_XMIT_DROP and tcp_write_xmit stops there). They never
    /// left the host, so they are not losses and leave no hole at the receiver: new data
    /// is taken back (snd.nxt steps back), a retransmission waits to be sent again, and
    /// the window shrinks at most once per window, as tcp_enter_cwr does.
    pub fn unsend(&mut self, segs: &[Segment]) {
        // Last first, so trailing new data comes off the end of the scoreboard.
        for s in segs.iter().rev().filter(|s| !s.probe) {
            if let TakenBack::Remarked { retx: true } =
                self.sb.take_back(s.seq, s.len as u64, s.retx)
            {
                self.retransmits -= 1;
                self.undo.on_retransmission_taken_back();
            }
        }
        if self.sb.una() >= self.sb.nxt() {
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

    /// A FastLane notification: the packet carrying `seq` was dropped; `epoch` is the
    /// timeout epoch it was sent in.
    pub fn on_notify(&mut self, now: Ps, seq: u64, epoch: u16) {
        self.notifications += 1;
        if epoch != self.epoch() {
            self.stale_notifications += 1;
            return;
        }
        let una_seg = self.sb.una_seg();
        let Some(k) = self.sb.mark_notified(seq) else {
            return;
        };
        self.fl.on_notify(k, self.w.cwnd, self.mss);
        match self.fl.mode() {
            NotifyMode::Tcp if k == una_seg => {
                // §3.4.1: the lowest outstanding segment is resent at once, whatever
                // max_sim says, so the cumulative ACK can move.
                self.urgent = Some(k);
            }
            NotifyMode::Tcp => {}
            NotifyMode::Probe => self.probe.on_notified(),
        }
        if self.deadline.is_none() {
            self.deadline = Some(now + self.rto());
        }
        self.send_due = Some(false);
    }

    /// The receiver's NIC echoed our probe.
    pub fn on_probe_ack(&mut self) {
        if self.probe.on_echo() {
            self.fl.on_probe_ack();
            self.send_due = Some(false);
        }
    }

    /// The probe itself was dropped and notified: send another.
    pub fn on_probe_lost(&mut self) {
        if self.probe.on_lost() {
            self.send_due = Some(false);
        }
    }

    /// A timeout of the retransmission timer may be due.
    pub fn on_timeout(&mut self, now: Ps) {
        self.on_timer(now);
    }

    /// Drops delivered segments from the notification table; ends FastLane recovery
    /// when it empties (§3.4.1: the window becomes half its value on entering).
    fn settle_notified(&mut self) {
        if !self.fl.active() {
            return;
        }
        let sb = &self.sb;
        let done = self.fl.settle(|k| sb.delivered(k));
        if done && self.fl.mode() == NotifyMode::Tcp {
            // Not below two segments, the floor every other reduction keeps (RFC 5681).
            self.w.cwnd = (self.fl.entry_cwnd() / 2).max(2 * self.mss);
            self.w.ssthresh = self.w.cwnd;
        }
    }

    /// What every data segment of one send pass carries (priority and epoch do not
    /// change within a pass): the pass fills in each one's sequence and length.
    #[inline]
    fn template(&self, now: Ps) -> Segment {
        let s = &self.stamp;
        Segment {
            seq: 0,
            ts: now,
            prio: match s.priority {
                PriorityMode::Remaining => self.remaining(),
                PriorityMode::FlowSize => self.size,
            },
            len: 0,
            ip_bytes: s.header_bytes,
            epoch: self.epoch(),
            class: s.class,
            retx: false,
            probe: false,
            ect: s.ect,
            cpa: s.cpa,
        }
    }

    /// Data segment `seq` of `len` bytes, from a pass's template `t`.
    #[inline(always)]
    fn data(t: &Segment, seq: u64, len: u32, retx: bool) -> Segment {
        Segment {
            seq,
            len,
            ip_bytes: t.ip_bytes + len,
            retx,
            ..*t
        }
    }

    fn resend(&mut self, now: Ps, k: u64, t: &Segment, out: &mut Vec<Segment>) {
        if k == self.sb.una_seg() && self.rearm_rto {
            // As Linux does (tcp_xmit_retransmit_queue): resending the head restarts the
            // timer, so a head that keeps being lost and resent in recovery (CP's cut
            // packets) is not also timed out.
            self.deadline = Some(now + self.rto());
        }
        self.undo.on_resend(now);
        self.sb.resend(k);
        self.retransmits += 1;
        out.push(Self::data(t, k * self.mss, self.sb.seg_len(k) as u32, true));
    }

    fn sample_rtt(&mut self, r: Ps) {
        self.cc.on_rtt(r);
        self.rtt.sample(r);
    }

    /// Sends what the window allows, resends first, up to `limit` segments in `out`.
    /// `polled`: a poll from the host's NIC, not an ACK, a timer or a notification; TSO
    /// deferral does not re-stamp its time then.
    #[inline(never)]
    fn send_available(&mut self, now: Ps, limit: usize, out: &mut Vec<Segment>, polled: bool) {
        let t = self.template(now);
        if out.len() < limit && self.probe.send_due() {
            // A probe: header only, neither ECN-capable nor CP-enabled.
            out.push(Segment {
                seq: self.sb.una(),
                probe: true,
                ect: false,
                cpa: false,
                ..t
            });
        }
        if self.probe.probing() {
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
                    self.resend(now, k, &t, out);
                    self.fl.mark_sent(k);
                    continue;
                }
                if self.fl.mode() == NotifyMode::Tcp {
                    break; // §3.4.1: no new data while recovering
                }
            }
            if self.retx_now {
                self.retx_now = false;
                if let Some(k) = self.sb.next_lost() {
                    self.resend(now, k, &t, out);
                    continue;
                }
            }
            if self.window_full() {
                break;
            }
            if let Some(k) = self.sb.next_lost() {
                self.resend(now, k, &t, out);
                continue;
            }
            let nxt = self.sb.nxt();
            if nxt < self.size {
                let len = self.sb.seg_len(self.sb.nxt_seg());
                if nxt + len > self.sb.una() + self.rwnd {
                    break;
                }
                if !sending && self.tso.enabled() && self.tso_defers(now, polled) {
                    break;
                }
                sending = true;
                let (seq, len) = self.sb.send_new();
                out.push(Self::data(&t, seq, len as u32, false));
                continue;
            }
            break;
        }
        if self.timer_unarmed() {
            self.deadline = Some(now + self.rto());
        }
    }

    /// [`TsoDeferral::should_defer`] for the next new segment.
    fn tso_defers(&mut self, now: Ps, polled: bool) -> bool {
        let (una, nxt) = (self.sb.una(), self.sb.nxt());
        let open = !self.in_recovery
            && !self.fl.active()
            && self.sb.sacked() == 0
            && self.dupacks == 0
            && self.sb.retx_out() == 0
            && una >= self.recover
            && una >= self.cwr_until;
        let cong = self.w.cwnd.saturating_sub(self.flight());
        let send = (una + self.rwnd).saturating_sub(nxt);
        let window = self.w.cwnd.min(self.rwnd);
        self.tso.should_defer(
            now,
            polled,
            nxt,
            open,
            cong.min(send),
            self.size - nxt,
            window,
        )
    }

    /// Next new byte to send (tests).
    #[cfg(test)]
    pub fn nxt(&self) -> u64 {
        self.sb.nxt()
    }

    /// Duplicate ACKs counted (tests).
    #[cfg(test)]
    pub fn dupacks(&self) -> u32 {
        self.dupacks
    }

    /// The scoreboard state of the `i`-th outstanding segment (tests).
    #[cfg(test)]
    pub fn seg_state(&self, i: u64) -> u8 {
        self.sb.state(self.sb.una_seg() + i)
    }

    /// Bytes in flight (RFC 6675 pipe), for tests and metrics.
    pub fn pipe(&self) -> u64 {
        self.sb.pipe()
    }

    /// The congestion window, in bytes (diagnostics).
    pub fn cwnd(&self) -> u64 {
        self.w.cwnd
    }

    /// Sent and not yet cumulatively acknowledged, in bytes (what the receive window
    /// limits).
    pub fn outstanding(&self) -> u64 {
        self.sb.nxt() - self.sb.una()
    }
}
