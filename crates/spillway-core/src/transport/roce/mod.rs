//! RoCE (RDMA over Converged Ethernet) hosts: a queue pair's sender and receiver with a
//! rate-based congestion control, on the lossless fabric (PFC) or a lossy one.
//!
//! - [`sender`]: line-rate start, the NIC's per-flow rate limiter, go-back-N on a NACK or
//!   a timeout
//! - [`receiver`]: ACK per packet, NACK on a gap, the CNP flag (DCQCN's notification point)
//! - [`dcqcn`], [`hpcc`], [`dctcp`]: `transport.cc`, the reaction to CNPs, to telemetry
//!   (`packet/int.rs`, stamped by the switches), to ECN echoes
//!
//! What each follows, and where it departs from the papers and the HPCC simulator:
//! docs/mechanisms.md § RoCE.

pub mod config;
pub mod dcqcn;
pub mod dctcp;
pub mod hpcc;
pub mod receiver;
pub mod sender;

use crate::transport::connection::{Ack, AckInfo, Handled, Input, Segment, Stats};
use crate::units::Ps;
pub use config::{DcqcnConfig, HpccConfig, RoceCc, RoceConfig, RoceDctcpConfig};
use receiver::RoceReceiver;
use sender::RoceSender;

/// Both ends of one RoCE flow.
pub struct RoceConnection {
    sender: RoceSender,
    receiver: RoceReceiver,
    /// IP bytes of an ACK: the data headers without payload (telemetry included).
    ack_bytes: u32,
    ack_class: u8,
}

impl RoceConnection {
    pub fn new(cfg: &RoceConfig, size: u64, class: Option<u8>) -> Self {
        let cnp_interval = match cfg.cc {
            RoceCc::Dcqcn(d) => Some(d.cnp_interval),
            _ => None,
        };
        RoceConnection {
            sender: RoceSender::new(cfg, size, class.unwrap_or(cfg.data_class)),
            receiver: RoceReceiver::new(size, cfg.nack_interval, cnp_interval),
            ack_bytes: cfg.header_bytes + cfg.int_bytes(),
            ack_class: class.unwrap_or(cfg.ack_class),
        }
    }

    pub fn start(&mut self) {}

    #[inline(always)]
    pub fn handle(&mut self, now: Ps, input: Input) -> Handled {
        match input {
            Input::RoceAck(a) => self.sender.on_ack(now, a),
            Input::Timeout => self.sender.on_timeout(now),
            Input::Data(d) => return self.receiver.on_data(now, d),
            // The NIC's freed slot is seen through `wants_poll`; nothing else reaches a
            // RoCE flow (refused when the scenario is read).
            Input::Ack(_)
            | Input::NicFreed
            | Input::Notified { .. }
            | Input::ProbeNotified
            | Input::ProbeEcho
            | Input::Quench
            | Input::Refused(_)
            | Input::Cut { .. } => {}
        }
        Handled::default()
    }

    #[inline(always)]
    pub fn poll_transmit(&mut self, now: Ps, budget: usize, out: &mut Vec<Segment>) {
        self.sender.poll_transmit(now, budget, out);
    }

    /// A freed NIC slot matters to a flow with data to send, or whose timeout waits for
    /// the NIC to start its last packet ([`RoceSender::timer`]).
    #[inline(always)]
    pub fn wants_poll(&self, budget: usize) -> bool {
        budget > 0 && (self.sender.has_work() || self.sender.waits_for_nic())
    }

    /// The receiver's ACK or NACK: `cum` the next byte expected, `ece` its CNP (or ECN
    /// echo) flag, `pack` (the packet's negative-acknowledgement bit) a NACK.
    pub fn poll_ack(&mut self) -> Ack {
        let a = self.receiver.make_ack();
        Ack {
            info: AckInfo {
                cum: a.cum,
                echo_ts: a.echo_ts,
                ece: a.cnp,
                ..AckInfo::default()
            },
            class: self.ack_class,
            ip_bytes: self.ack_bytes,
            pack: a.nack,
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
            ecn_reductions: s.cuts(),
            delivered_bytes: self.receiver.delivered(),
            duplicate_bytes: self.receiver.dup_bytes(),
            ..Stats::default()
        }
    }

    pub fn sender(&self) -> &RoceSender {
        &self.sender
    }

    pub fn receiver(&self) -> &RoceReceiver {
        &self.receiver
    }
}

#[cfg(test)]
mod tests;
