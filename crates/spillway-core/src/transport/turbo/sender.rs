//! Turbo's sender (Turbo §4, §4.2): every segment goes as soon as the host's NIC takes
//! it, resends first, stamped with the flow's remaining size (bytes neither acknowledged
//! nor SACKed), inflated past [`CLIFF`] after a timeout until the path shows it is
//! clear. No window, no slow start, no duplicate-ACK recovery.
//!
//! The send space is two bitsets over segments (delivered; marked for resending), so an
//! ACK's SACK blocks cost a few word operations however long they are: at line rate
//! behind a hole they grow for a whole timeout.

use super::config::{OnTimeout, TurboConfig, CLIFF};
use crate::transport::connection::{AckInfo, Segment};
use crate::units::Ps;
use std::collections::VecDeque;

/// A set of segment numbers, 64 to a word.
#[derive(Debug, Default)]
struct Bits(Vec<u64>);

impl Bits {
    fn new(n: u64) -> Self {
        Bits(vec![0; n.div_ceil(64) as usize])
    }

    #[inline]
    fn get(&self, k: u64) -> bool {
        self.0[(k / 64) as usize] >> (k % 64) & 1 != 0
    }

    #[inline]
    fn set(&mut self, k: u64) {
        self.0[(k / 64) as usize] |= 1 << (k % 64);
    }

    #[inline]
    fn clear(&mut self, k: u64) {
        self.0[(k / 64) as usize] &= !(1 << (k % 64));
    }

    /// The bits of word `w` that lie in [a, b).
    #[inline]
    fn mask(w: u64, a: u64, b: u64) -> u64 {
        let lo = (w * 64).max(a) - w * 64;
        let hi = (b.min(w * 64 + 64)) - w * 64;
        if hi <= lo {
            return 0;
        }
        let upper = if hi == 64 { u64::MAX } else { (1 << hi) - 1 };
        upper & !((1u64 << lo) - 1)
    }

    /// Sets [a, b) and returns the segments newly set, as a callback per word:
    /// `f(word index, newly set bits)`.
    #[inline]
    fn set_range(&mut self, a: u64, b: u64, mut f: impl FnMut(u64, u64)) {
        if a >= b {
            return;
        }
        for w in a / 64..b.div_ceil(64) {
            let m = Self::mask(w, a, b);
            let word = &mut self.0[w as usize];
            let new = m & !*word;
            if new != 0 {
                *word |= new;
                f(w, new);
            }
        }
    }

    /// Sets every k in [a, b) that is not in `not`.
    #[inline]
    fn set_range_without(&mut self, not: &Bits, a: u64, b: u64) {
        for w in a / 64..b.div_ceil(64) {
            self.0[w as usize] |= Self::mask(w, a, b) & !not.0[w as usize];
        }
    }

    /// The lowest k in [a, b) set here and not in `not`.
    #[inline]
    fn first_without(&self, not: &Bits, a: u64, b: u64) -> Option<u64> {
        if a >= b {
            return None;
        }
        for w in a / 64..b.div_ceil(64) {
            let m = Self::mask(w, a, b) & self.0[w as usize] & !not.0[w as usize];
            if m != 0 {
                return Some(w * 64 + m.trailing_zeros() as u64);
            }
        }
        None
    }
}

pub struct TurboSender {
    size: u64,
    mss: u64,
    segs: u64,
    header_bytes: u32,
    class: u8,
    rto: Ps,
    per_packet: bool,
    on_timeout: OnTimeout,
    probe_spacing: bool,
    ack_deflates: bool,
    /// Segments acknowledged or SACKed.
    done: Bits,
    /// Segments to send again (taken as they go; a stale mark on a delivered segment is
    /// skipped).
    resend: Bits,
    /// The lowest segment that may be marked for resending.
    resend_from: u64,
    /// Transmissions of each segment so far (wrapping), for per-packet deadlines.
    sends: Vec<u8>,
    /// Per-packet deadlines in send order (the timeout is fixed, so in deadline order
    /// too): (deadline, segment, its transmission number).
    deadlines: VecDeque<(Ps, u64, u8)>,
    /// First segment not cumulatively acknowledged.
    una: u64,
    /// First segment never sent.
    nxt: u64,
    /// Bytes acknowledged or SACKed.
    done_bytes: u64,
    /// The flow's timer (T1, T2), or the stopped flow's probe clock.
    flow_timer: Option<Ps>,
    inflated: bool,
    stopped: bool,
    probe_due: bool,
    last_probe: Option<Ps>,
    retransmits: u32,
    timeouts: u32,
    probes: u32,
    inflations: u32,
}

impl TurboSender {
    pub fn new(cfg: &TurboConfig, size: u64, class: u8) -> Self {
        let mss = cfg.mss as u64;
        let segs = size.div_ceil(mss).max(1);
        TurboSender {
            size,
            mss,
            segs,
            header_bytes: cfg.header_bytes,
            class,
            rto: cfg.rto,
            per_packet: cfg.per_packet,
            on_timeout: cfg.on_timeout,
            probe_spacing: cfg.probe_spacing,
            ack_deflates: cfg.ack_deflates,
            done: Bits::new(segs),
            resend: Bits::new(segs),
            resend_from: segs,
            sends: if cfg.per_packet {
                vec![0; segs as usize]
            } else {
                Vec::new()
            },
            deadlines: VecDeque::new(),
            una: 0,
            nxt: 0,
            done_bytes: 0,
            flow_timer: None,
            inflated: false,
            stopped: false,
            probe_due: false,
            last_probe: None,
            retransmits: 0,
            timeouts: 0,
            probes: 0,
            inflations: 0,
        }
    }

    #[inline]
    fn seg_len(&self, k: u64) -> u64 {
        (self.size - k * self.mss).min(self.mss)
    }

    /// Payload bytes of the segments in word `w`'s bits `bits`.
    #[inline]
    fn bytes_of(&self, w: u64, bits: u64) -> u64 {
        let mut b = bits.count_ones() as u64 * self.mss;
        let last = self.segs - 1;
        if last / 64 == w && bits >> (last % 64) & 1 != 0 {
            b -= self.mss - self.seg_len(last);
        }
        b
    }

    /// Bytes neither acknowledged nor SACKed: the flow's true priority (Turbo §4(3)).
    #[inline]
    pub fn remaining(&self) -> u64 {
        self.size - self.done_bytes
    }

    /// The priority its packets carry now: the remaining size, past the cliff while
    /// inflated.
    #[inline]
    pub fn priority(&self) -> u64 {
        self.remaining() + if self.inflated { CLIFF } else { 0 }
    }

    /// Bytes not yet cumulatively acknowledged (Turbo §3's outstanding bytes).
    pub fn unacked(&self) -> u64 {
        self.size - (self.una * self.mss).min(self.size)
    }

    pub fn done(&self) -> bool {
        self.una >= self.segs
    }

    pub fn inflated(&self) -> bool {
        self.inflated
    }

    pub fn stopped(&self) -> bool {
        self.stopped
    }

    pub fn class(&self) -> u8 {
        self.class
    }

    pub fn retransmits(&self) -> u32 {
        self.retransmits
    }

    pub fn timeouts(&self) -> u32 {
        self.timeouts
    }

    pub fn probes(&self) -> u32 {
        self.probes
    }

    pub fn inflations(&self) -> u32 {
        self.inflations
    }

    /// Sent and neither delivered nor marked for resending.
    fn outstanding(&self) -> bool {
        self.done_bytes < self.size && self.una < self.nxt
    }

    /// Something would go if the NIC took it.
    #[inline]
    pub fn has_work(&self) -> bool {
        if self.done() {
            return false;
        }
        if self.probe_due {
            return true;
        }
        if self.stopped {
            return false;
        }
        self.nxt < self.segs
            || self
                .resend
                .first_without(&self.done, self.resend_from, self.nxt)
                .is_some()
    }

    /// The earliest of the flow's timer and its oldest live packet deadline.
    #[inline]
    pub fn timer(&self) -> Option<Ps> {
        if self.done() {
            return None;
        }
        let packet = self.deadlines.front().map(|d| d.0);
        match (self.flow_timer, packet) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Up to `budget` segments: a due probe, then segments to resend (lowest first),
    /// then new data.
    pub fn poll_transmit(&mut self, now: Ps, budget: usize, out: &mut Vec<Segment>) {
        let mut n = 0;
        if self.probe_due && n < budget && !self.done() {
            self.probe_due = false;
            self.last_probe = Some(now);
            self.probes += 1;
            // Turbo §4.1: the probe carries the flow's true priority.
            out.push(self.segment(now, self.una * self.mss, 0, self.remaining(), false, true));
            n += 1;
        }
        if self.stopped {
            return;
        }
        while n < budget {
            let (k, retx) = match self
                .resend
                .first_without(&self.done, self.resend_from, self.nxt)
            {
                Some(k) => {
                    self.resend_from = k + 1;
                    self.resend.clear(k);
                    self.retransmits += 1;
                    (k, true)
                }
                None if self.nxt < self.segs => {
                    // Nothing below `nxt` is marked: later scans start here.
                    self.resend_from = self.nxt + 1;
                    self.nxt += 1;
                    (self.nxt - 1, false)
                }
                None => {
                    self.resend_from = self.nxt;
                    break;
                }
            };
            let len = self.seg_len(k);
            out.push(self.segment(now, k * self.mss, len, self.priority(), retx, false));
            n += 1;
            if self.per_packet {
                let s = &mut self.sends[k as usize];
                *s = s.wrapping_add(1);
                self.deadlines.push_back((now + self.rto, k, *s));
            } else if self.flow_timer.is_none() {
                self.flow_timer = Some(now + self.rto);
            }
        }
    }

    fn segment(&self, now: Ps, seq: u64, len: u64, prio: u64, retx: bool, probe: bool) -> Segment {
        Segment {
            seq,
            ts: now,
            prio,
            len: len as u32,
            ip_bytes: self.header_bytes + len as u32,
            epoch: 0,
            class: self.class,
            retx,
            probe,
            ect: false,
            cpa: false,
        }
    }

    /// Marks segments [a, b) delivered; returns whether any was news.
    fn deliver(&mut self, a: u64, b: u64) -> bool {
        let mut news = 0;
        let mut bits = std::mem::take(&mut self.done);
        bits.set_range(a, b.min(self.nxt), |w, new| news += self.bytes_of(w, new));
        self.done = bits;
        self.done_bytes += news;
        news > 0
    }

    /// An ACK: delivered segments leave the send space; a new cumulative ACK restarts
    /// the flow's timer (and, with `ack_deflates`, ends the inflation); any news
    /// restarts a stopped flow.
    pub fn on_ack(&mut self, now: Ps, a: &AckInfo) {
        let cum = a.cum.min(self.size).div_ceil(self.mss).min(self.nxt);
        let mut news = self.deliver(self.una, cum);
        let advanced = cum > self.una;
        self.una = self.una.max(cum);
        for &(l, r) in &a.sack[..a.nsack as usize] {
            let (l, r) = ((l / self.mss).max(self.una), r.div_ceil(self.mss));
            news |= self.deliver(l, r);
        }
        if self.done() {
            self.flow_timer = None;
            self.deadlines.clear();
            self.probe_due = false;
            return;
        }
        if news && self.stopped {
            self.resume(now);
        }
        if advanced {
            if self.ack_deflates {
                self.inflated = false;
            }
            if !self.per_packet && !self.stopped {
                self.flow_timer = self.outstanding().then_some(now + self.rto);
            }
        }
        self.drop_stale_deadlines();
    }

    /// A probe's echo: the path carried the flow's true priority (Turbo §4.1).
    pub fn on_probe_echo(&mut self, now: Ps) {
        self.inflated = false;
        // A probe not yet gone asks what this one answered.
        self.probe_due = false;
        if self.stopped {
            self.resume(now);
        }
    }

    /// Stop-on-timeout ends: everything sent and not SACKed, from the first hole, goes
    /// again, at the true priority.
    fn resume(&mut self, now: Ps) {
        self.stopped = false;
        self.probe_due = false;
        self.flow_timer = None;
        self.mark_unsacked_for_resend();
        if !self.per_packet && self.una < self.nxt {
            self.flow_timer = Some(now + self.rto);
        }
    }

    fn mark_unsacked_for_resend(&mut self) {
        let (a, b) = (self.una, self.nxt);
        if a < b {
            self.resend.set_range_without(&self.done, a, b);
            self.resend_from = self.resend_from.min(a);
        }
    }

    /// Deadlines of packets delivered or sent again since leave the front, so the timer
    /// is the live one.
    fn drop_stale_deadlines(&mut self) {
        while let Some(&(_, k, s)) = self.deadlines.front() {
            if self.done.get(k) || self.sends[k as usize] != s || self.resend.get(k) {
                self.deadlines.pop_front();
            } else {
                break;
            }
        }
    }

    /// The flow's timer or a packet deadline is due.
    pub fn on_timeout(&mut self, now: Ps) {
        if self.done() {
            return;
        }
        if self.stopped {
            // T2: a probe every RTO until the path answers.
            if self.flow_timer.is_some_and(|t| t <= now) {
                self.timeouts += 1;
                self.probe_due = true;
                self.flow_timer = Some(now + self.rto);
            }
            return;
        }
        let mut fired = false;
        if self.per_packet {
            // T3: only the expired packets go again.
            while let Some(&(d, k, s)) = self.deadlines.front() {
                if d > now {
                    break;
                }
                self.deadlines.pop_front();
                if !self.done.get(k) && self.sends[k as usize] == s && !self.resend.get(k) {
                    self.resend.set(k);
                    self.resend_from = self.resend_from.min(k);
                    fired = true;
                }
            }
            self.drop_stale_deadlines();
        } else if self.flow_timer.is_some_and(|t| t <= now) {
            // T1: everything not SACKed from the first hole goes again.
            self.flow_timer = None;
            if self.outstanding() {
                self.mark_unsacked_for_resend();
                fired = true;
            }
        }
        if !fired {
            return;
        }
        self.timeouts += 1;
        match self.on_timeout {
            OnTimeout::Inflate => {
                if !self.inflated {
                    self.inflated = true;
                    self.inflations += 1;
                }
                // T4's guard: probes at least one RTO apart.
                if !self.probe_spacing || self.last_probe.is_none_or(|t| now - t >= self.rto) {
                    self.probe_due = true;
                }
                if !self.per_packet {
                    self.flow_timer = Some(now + self.rto);
                }
            }
            OnTimeout::Stop => {
                self.stopped = true;
                self.deadlines.clear();
                self.probe_due = true;
                self.flow_timer = Some(now + self.rto);
            }
        }
    }
}
