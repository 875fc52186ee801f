//! Turbo (Turbo §4): no rate control at all. A flow sends whenever its host's NIC will
//! take a packet, each packet carrying the flow's remaining size as its priority, and
//! the network's priority queues (pFabric's, served by sequence, §4(3)) do all the
//! congestion control. Loss is found by timeouts alone; SACK keeps received data from
//! being sent again; ACKs go at the top priority.
//!
//! The four design options of §4.2 are three orthogonal choices ([`TurboConfig`]) with
//! a preset each (`transport.turbo_variant`):
//!
//! | variant | timeouts | on a timeout | probes |
//! |---|---|---|---|
//! | T1 | one per flow ("simple") | cliff inflation, resend from the first hole | every timeout |
//! | T2 | one per flow | stop, probe every RTO until the path answers | every RTO while stopped |
//! | T3 | one per packet | cliff inflation, resend the expired packet | every expiry |
//! | T4 | one per packet | as T3 | at most one per RTO |
//!
//! [`sender`] is the state machine; the receiver is TCP's (cumulative ACK and SACK
//! blocks, an ACK per segment).

pub mod config;
pub mod sender;

use crate::transport::connection::{Ack, Handled, Input, Segment, Stats};
use crate::transport::tcp::receiver::TcpReceiver;
use crate::units::Ps;
pub use config::{OnTimeout, TurboConfig, CLIFF};
use sender::TurboSender;

/// Both ends of one Turbo flow.
pub struct TurboConnection {
    sender: TurboSender,
    receiver: TcpReceiver,
    header_bytes: u32,
    ack_class: u8,
}

impl TurboConnection {
    pub fn new(cfg: &TurboConfig, size: u64, class: Option<u8>) -> Self {
        TurboConnection {
            sender: TurboSender::new(cfg, size, class.unwrap_or(cfg.data_class)),
            // An ACK per segment: the sender's only news of its path.
            receiver: TcpReceiver::with(cfg.mss, None, size),
            header_bytes: cfg.header_bytes,
            ack_class: class.unwrap_or(cfg.ack_class),
        }
    }

    pub fn start(&mut self) {}

    #[inline(always)]
    pub fn handle(&mut self, now: Ps, input: Input) -> Handled {
        match input {
            Input::Ack(a) => self.sender.on_ack(now, a),
            Input::ProbeEcho => self.sender.on_probe_echo(now),
            Input::Timeout => self.sender.on_timeout(now),
            Input::Data(d) => return self.receiver.on_data(now, d),
            // A NIC's freed slot is seen through `wants_poll`'s budget; Turbo has no
            // notifications, quenches or payload cuts (refused at validation), and its
            // hosts' NICs never refuse (a pFabric NIC drops by priority).
            Input::NicFreed
            | Input::Notified { .. }
            | Input::ProbeNotified
            | Input::Quench
            | Input::Refused(_)
            | Input::RoceAck(_)
            | Input::Cut { .. } => {}
        }
        Handled::default()
    }

    #[inline(always)]
    pub fn poll_transmit(&mut self, now: Ps, budget: usize, out: &mut Vec<Segment>) {
        self.sender.poll_transmit(now, budget, out);
    }

    #[inline(always)]
    pub fn wants_poll(&self, budget: usize) -> bool {
        budget > 0 && self.sender.has_work()
    }

    /// The receiver's ACK: headers only (Turbo §4(4): 40 B; its SACK blocks are not
    /// counted on the wire, as in the paper's simulator), at the top priority.
    pub fn poll_ack(&mut self) -> Ack {
        let info = self.receiver.make_ack();
        Ack {
            info,
            class: self.ack_class,
            ip_bytes: self.header_bytes,
            pack: false,
        }
    }

    #[inline(always)]
    pub fn poll_timeout(&self) -> Option<Ps> {
        self.sender.timer()
    }

    pub fn finished(&self) -> bool {
        self.sender.done() && self.receiver.complete()
    }

    pub fn stats(&self) -> Stats {
        let s = &self.sender;
        Stats {
            retransmits: s.retransmits(),
            timeouts: s.timeouts(),
            delivered_bytes: self.receiver.delivered(),
            duplicate_bytes: self.receiver.dup_bytes(),
            inflations: s.inflations(),
            ..Stats::default()
        }
    }

    /// Bytes sent and not yet acknowledged cumulatively (Turbo §3's outstanding bytes
    /// count every unacknowledged byte of a started flow: see [`TurboSender::unacked`]).
    pub fn unacked(&self) -> u64 {
        self.sender.unacked()
    }

    pub fn sender(&self) -> &TurboSender {
        &self.sender
    }

    pub fn receiver(&self) -> &TcpReceiver {
        &self.receiver
    }
}

#[cfg(test)]
mod tests;
