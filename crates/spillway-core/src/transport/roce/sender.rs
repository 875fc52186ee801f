//! The RoCE sender (a queue pair's send side, as the HPCC simulator's `RdmaQueuePair` and
//! `RdmaHw` keep it): no slow start, the flow starts at line rate; the NIC's rate limiter
//! spaces its frames at the congestion control's rate; a NACK, or a timeout with nothing
//! acknowledged, sends again from the first unacknowledged byte (go-back-N).

use super::config::{RoceCc, RoceConfig};
use super::dcqcn::Dcqcn;
use super::dctcp::RoceDctcp;
use super::hpcc::Hpcc;
use crate::packet::wire::wire_bytes;
use crate::transport::connection::{RoceAck, Segment};
use crate::units::{serialization_ps, Ps};

/// The most doublings of the timeout ([`RoceSender::deadline`]).
const MAX_BACKOFF: u32 = 6;

/// The congestion control's state.
#[derive(Debug, Clone)]
pub enum Control {
    None,
    Dcqcn(Dcqcn),
    Hpcc(Hpcc),
    Dctcp(RoceDctcp),
}

pub struct RoceSender {
    size: u64,
    mss: u64,
    /// IP bytes of a data packet besides its payload (telemetry included).
    header: u32,
    framing: u32,
    class: u8,
    ect: bool,
    /// First byte not acknowledged; next byte to send; the most ever sent.
    una: u64,
    nxt: u64,
    high: u64,
    /// The rate limiter's rate R_C and the NIC's, bit/s.
    rate: f64,
    line: f64,
    line_bps: u64,
    min_rate: f64,
    /// The limiter lets the next frame go at this time.
    next_avail: Ps,
    /// The last poll found the flow waiting for the limiter only.
    paced: bool,
    /// The flow's last packet is in its NIC (the last poll sent it, or found it still
    /// there): the NIC polls the flow again when it starts that packet.
    in_nic: bool,
    /// One BDP at line rate (bytes), when the window bounds the flow: W = BDP·R/line.
    bdp: Option<f64>,
    base_rtt: Ps,
    timeout: Ps,
    /// The timeout runs from here: the last advance of `una`, or a send into an empty pipe.
    progress_at: Ps,
    /// Timeouts since `una` last advanced: each doubles the next (up to 64 times).
    backoff: u32,
    /// The last send went into an empty pipe: its timeout runs from when the NIC starts
    /// it (a pause may hold it in the NIC), not from the hand-over.
    timer_at_start: bool,
    /// Wire bytes of the last frame (HPCC re-times the pending send for a new rate).
    last_wire: u32,
    control: Control,
    retransmits: u32,
    timeouts: u32,
    nacks: u32,
}

impl RoceSender {
    pub fn new(cfg: &RoceConfig, size: u64, class: u8) -> Self {
        let line = cfg.line_rate as f64;
        let control = match cfg.cc {
            RoceCc::None => Control::None,
            RoceCc::Dcqcn(c) => Control::Dcqcn(Dcqcn::new(c)),
            RoceCc::Hpcc(c) => Control::Hpcc(Hpcc::new(c, line)),
            RoceCc::Dctcp(c) => Control::Dctcp(RoceDctcp::new(c)),
        };
        RoceSender {
            size,
            mss: cfg.mss as u64,
            header: cfg.header_bytes + cfg.int_bytes(),
            framing: cfg.framing,
            class,
            ect: cfg.ecn_capable(),
            una: 0,
            nxt: 0,
            high: 0,
            rate: line,
            line,
            line_bps: cfg.line_rate,
            min_rate: cfg.min_rate,
            next_avail: 0,
            paced: false,
            in_nic: false,
            bdp: cfg.window.then(|| line * cfg.base_rtt as f64 * 1e-12 / 8.0),
            base_rtt: cfg.base_rtt,
            timeout: cfg.timeout,
            progress_at: 0,
            backoff: 0,
            timer_at_start: false,
            last_wire: 0,
            control,
            retransmits: 0,
            timeouts: 0,
            nacks: 0,
        }
    }

    pub fn class(&self) -> u8 {
        self.class
    }

    /// The limiter's rate now, bit/s.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    pub fn control(&self) -> &Control {
        &self.control
    }

    /// The window in bytes, when one bounds the flow (HPCC's W = R·T; the simulator's
    /// `GetWin` with `VAR_WIN`).
    pub fn window(&self) -> Option<u64> {
        self.bdp.map(|b| (b * self.rate / self.line) as u64)
    }

    /// Every byte acknowledged.
    pub fn done(&self) -> bool {
        self.una >= self.size
    }

    /// Bytes not yet acknowledged.
    pub fn remaining(&self) -> u64 {
        self.size - self.una.min(self.size)
    }

    /// Bytes sent and not acknowledged.
    pub fn in_flight(&self) -> u64 {
        self.nxt.saturating_sub(self.una)
    }

    pub fn has_work(&self) -> bool {
        self.nxt < self.size
    }

    /// The timeout is held back until the NIC starts the flow's last packet.
    pub fn waits_for_nic(&self) -> bool {
        self.in_nic
    }

    pub fn retransmits(&self) -> u32 {
        self.retransmits
    }
    pub fn timeouts(&self) -> u32 {
        self.timeouts
    }
    pub fn nacks(&self) -> u32 {
        self.nacks
    }

    /// Rate (or window) cuts by the congestion control.
    pub fn cuts(&self) -> u32 {
        match &self.control {
            Control::None => 0,
            Control::Dcqcn(d) => d.cuts(),
            Control::Hpcc(h) => h.cuts(),
            Control::Dctcp(d) => d.cuts(),
        }
    }

    /// The time the limiter takes for a frame of `wire` bytes at the current rate: at
    /// line rate exactly the NIC's serialization, so a lone flow leaves no gaps.
    fn spacing(&self, wire: u32) -> Ps {
        Self::spacing_at(self.rate, self.line, self.line_bps, wire)
    }

    fn spacing_at(rate: f64, line: f64, line_bps: u64, wire: u32) -> Ps {
        if rate >= line {
            serialization_ps(wire as u64, line_bps)
        } else {
            (wire as f64 * 8e12 / rate).ceil() as Ps
        }
    }

    /// DCQCN's timers up to `now`.
    #[inline]
    fn catch_up(&mut self, now: Ps) {
        if let Control::Dcqcn(d) = &mut self.control {
            d.advance(now, &mut self.rate, self.line, self.min_rate);
        }
    }

    /// The next frame, if the NIC has room (`budget`), the window allows and the limiter
    /// lets it go now.
    pub fn poll_transmit(&mut self, now: Ps, budget: usize, out: &mut Vec<Segment>) {
        self.paced = false;
        if self.in_nic && budget > 0 && self.timer_at_start {
            // The NIC started the packet sent into the empty pipe: its timeout runs now.
            self.progress_at = self.progress_at.max(now);
            self.timer_at_start = false;
        }
        self.in_nic = budget == 0;
        if self.in_flight() > 0 && now >= self.deadline() {
            // Due while the NIC held the flow's packet (no timer runs then): now.
            self.on_timeout(now);
        }
        if budget == 0 || self.nxt >= self.size {
            return;
        }
        if self.window().is_some_and(|w| self.in_flight() >= w.max(1)) {
            return; // an ACK reopens it
        }
        if now < self.next_avail {
            self.paced = true;
            return;
        }
        self.catch_up(now);
        let len = (self.size - self.nxt).min(self.mss) as u32;
        let ip_bytes = self.header + len;
        let retx = self.nxt < self.high;
        if self.nxt == self.una {
            self.progress_at = now;
            self.timer_at_start = true;
        }
        out.push(Segment {
            seq: self.nxt,
            ts: now,
            prio: 0,
            len,
            ip_bytes,
            epoch: 0,
            class: self.class,
            retx,
            probe: false,
            ect: self.ect,
            cpa: false,
        });
        // The NIC polls the flow again as it starts this packet.
        self.in_nic = true;
        self.retransmits += retx as u32;
        self.nxt += len as u64;
        self.high = self.high.max(self.nxt);
        self.last_wire = wire_bytes(ip_bytes, self.framing);
        self.next_avail = now + self.spacing(self.last_wire);
    }

    /// The limiter's next frame when only it holds the flow back; else, with bytes in
    /// flight and nothing to wake the flow (no frame to pace, none in the NIC), their
    /// timeout. While the limiter or the NIC will wake the flow, the timeout waits for
    /// that poll: a far timer armed per packet (superseded by the next pacing one) would
    /// fill the event queue's overflow heap, one stale event per packet.
    pub fn timer(&self) -> Option<Ps> {
        if self.paced {
            let rto = (self.in_flight() > 0).then(|| self.deadline());
            return Some(rto.map_or(self.next_avail, |d| d.min(self.next_avail)));
        }
        (self.in_flight() > 0 && !self.in_nic).then(|| self.deadline())
    }

    /// When the bytes in flight time out: the timeout after the last progress, doubled for
    /// each timeout since. (A RoCE NIC retries at one fixed timeout up to a retry count;
    /// doubling, as TCP's RFC 6298 timer does, keeps a timeout shorter than a long PFC
    /// pause from resending the pipe again and again, which fills the pauses further.)
    fn deadline(&self) -> Ps {
        self.progress_at + (self.timeout << self.backoff)
    }

    /// The timer fired: a timeout with nothing acknowledged goes back to `una`.
    pub fn on_timeout(&mut self, now: Ps) {
        if self.in_flight() > 0 && now >= self.deadline() {
            self.timeouts += 1;
            self.backoff = (self.backoff + 1).min(MAX_BACKOFF);
            self.nxt = self.una;
            self.progress_at = now;
            // The resend waits for nothing but the NIC.
            self.next_avail = self.next_avail.min(now);
        }
    }

    /// An ACK or NACK arrived.
    pub fn on_ack(&mut self, now: Ps, a: RoceAck) {
        let cum = a.cum.min(self.size);
        if cum > self.una {
            self.una = cum;
            self.progress_at = now;
            self.backoff = 0;
        }
        self.nxt = self.nxt.max(self.una);
        if a.nack {
            // Go-back-N: everything from the first missing byte again; the congestion
            // control then sees the rewound snd_nxt (the simulator's RecoverQueue comes
            // before its HandleAck*).
            self.nacks += 1;
            self.nxt = self.una;
        }
        match &mut self.control {
            Control::None => {}
            Control::Dcqcn(d) => {
                d.advance(now, &mut self.rate, self.line, self.min_rate);
                if a.ece {
                    d.on_cnp(now, self.rate);
                }
            }
            Control::Hpcc(h) => {
                if let Some(int) = a.int {
                    let before = self.rate;
                    h.on_ack(
                        cum,
                        self.nxt,
                        int,
                        &mut self.rate,
                        self.line,
                        self.min_rate,
                        self.base_rtt,
                    );
                    if self.rate != before && self.last_wire > 0 {
                        // The simulator's ChangeRate: the pending frame's gap at the new
                        // rate instead of the old.
                        let (old, new) = (
                            Self::spacing_at(before, self.line, self.line_bps, self.last_wire),
                            self.spacing(self.last_wire),
                        );
                        self.next_avail = (self.next_avail + new).saturating_sub(old);
                    }
                }
            }
            Control::Dctcp(d) => d.on_ack(
                cum,
                self.nxt,
                a.ece,
                self.mss,
                &mut self.rate,
                self.line,
                self.min_rate,
            ),
        }
    }
}
