//! TCP as sans-IO state machines: the sender (NewReno, RFC 6582, with an RFC 6675-style
//! SACK scoreboard) and the receiver (cumulative ACK + RFC 2018 SACK blocks, optional
//! delayed ACK), one of each per flow in a [`TcpConnection`]. They take arrivals and
//! timer expiries and hand back what to send; the host moves the bytes and keeps the
//! clock.
//!
//! Sequence numbers are byte offsets within the flow. Every segment but the last carries
//! exactly one MSS, so the scoreboard keeps one state byte per segment.
//!
//! One concept per module: [`sender`] (the glue: ACKs, timeouts, recovery, sending),
//! [`scoreboard`], [`rtt`], [`receiver`], and what the papers and Linux add, each behind
//! its key: [`fastlane`] (FastLane §3.4), [`pack`] (CP §4.4), [`probe`] (pFabric §4.3),
//! [`undo`], [`tso`]. The window is the congestion control's ([`crate::transport::cc`]).

pub mod config;
pub mod fastlane;
pub mod pack;
pub mod probe;
pub mod receiver;
pub mod rtt;
pub mod scoreboard;
pub mod sender;
pub mod tso;
pub mod undo;

use crate::packet::tcp::ack_option_bytes;
use crate::transport::cc::kinds::Cc;
use crate::transport::connection::{Ack, Handled, Input, Segment, Stats};
use crate::units::Ps;
use config::TcpConfig;
use receiver::TcpReceiver;
use sender::TcpSender;

/// Both ends of one TCP flow.
pub struct TcpConnection {
    sender: TcpSender<Cc>,
    receiver: TcpReceiver,
    header_bytes: u32,
    ack_class: u8,
    ooo_option: bool,
}

impl TcpConnection {
    /// Both ends of a flow of `size` bytes. `class`: the priority class of its data and
    /// its ACKs alike (a workload's per-flow priority); `None`: `cfg.data_class` for
    /// data, `cfg.ack_class` for ACKs.
    pub fn new(cfg: &TcpConfig, size: u64, class: Option<u8>) -> Self {
        let mut sender = TcpSender::new(cfg, size, cfg.cc.build());
        if let Some(c) = class {
            sender.set_class(c);
        }
        TcpConnection {
            sender,
            receiver: TcpReceiver::new(cfg, size),
            header_bytes: cfg.header_bytes,
            ack_class: class.unwrap_or(cfg.ack_class),
            ooo_option: cfg.ooo_option,
        }
    }

    /// The flow begins: what its initial window allows goes at the next poll.
    pub fn start(&mut self) {
        self.sender.start();
    }

    #[inline(always)]
    pub fn handle(&mut self, now: Ps, input: Input) -> Handled {
        match input {
            Input::Ack(a) => self.sender.on_ack(now, a),
            Input::Notified { seq, epoch } => self.sender.on_notify(now, seq, epoch),
            Input::ProbeNotified => self.sender.on_probe_lost(),
            Input::ProbeEcho => self.sender.on_probe_ack(),
            Input::Quench => self.sender.on_quench(),
            Input::NicFreed => self.sender.on_nic_freed(),
            Input::Refused(segs) => self.sender.unsend(segs),
            // Only RoCE flows get these.
            Input::RoceAck(_) => {}
            Input::Timeout => {
                self.sender.on_timeout(now);
                return Handled {
                    ack_now: self.receiver.on_timer(now),
                    completed: false,
                };
            }
            Input::Data(d) => return self.receiver.on_data(now, d),
            Input::Cut { seq, len } => {
                // CP §4.3: answered at once by a PACK.
                self.receiver.on_cut(seq, len);
                return Handled {
                    ack_now: true,
                    completed: false,
                };
            }
        }
        Handled::default()
    }

    /// The sender's segments, at most `budget` (see [`TcpSender::poll_transmit`]).
    #[inline(always)]
    pub fn poll_transmit(&mut self, now: Ps, budget: usize, out: &mut Vec<Segment>) {
        self.sender.poll_transmit(now, budget, out);
    }

    /// Would [`Input::NicFreed`] send anything, with `budget` segments of room? (The
    /// host asks on every packet its NIC takes, and most find the window closed.)
    #[inline(always)]
    pub fn wants_poll(&self, budget: usize) -> bool {
        budget > 0 && !self.sender.window_closed()
    }

    /// The receiver's acknowledgement, now.
    pub fn poll_ack(&mut self) -> Ack {
        let info = self.receiver.make_ack();
        let pack = info.pack_block().is_some();
        Ack {
            info,
            class: self.ack_class,
            ip_bytes: self.header_bytes + ack_option_bytes(info.nsack, self.ooo_option, pack),
            pack,
        }
    }

    /// When the connection's earliest timer (retransmission or delayed ACK) is due.
    #[inline(always)]
    pub fn poll_timeout(&self) -> Option<Ps> {
        match (self.sender.timer(), self.receiver.timer()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Both ends are done: every byte acknowledged and received.
    pub fn finished(&self) -> bool {
        self.sender.done() && self.receiver.complete()
    }

    /// What the flow's record reports of its transport.
    pub fn stats(&self) -> Stats {
        let s = &self.sender;
        Stats {
            retransmits: s.retransmits(),
            timeouts: s.timeouts(),
            notifications_stale: s.stale_notifications(),
            packs: s.packs().0,
            undos: s.undos(),
            ecn_reductions: s.ecn_reductions(),
            delivered_bytes: self.receiver.delivered(),
            duplicate_bytes: self.receiver.dup_bytes(),
            inflations: 0,
        }
    }

    pub fn sender(&self) -> &TcpSender<Cc> {
        &self.sender
    }

    pub fn receiver(&self) -> &TcpReceiver {
        &self.receiver
    }
}

#[cfg(test)]
mod tests;
