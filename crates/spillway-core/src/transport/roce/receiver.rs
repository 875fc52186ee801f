//! The RoCE receiver (as the HPCC simulator's `RdmaHw::ReceiveUdp`): a packet in order is
//! taken and ACKed; one beyond the next expected byte is dropped and answered with a NACK
//! of that byte (again for the same byte only after `nack_interval`); one below it, a
//! duplicate, is dropped and ACKed, so a sender that timed out hears where the receiver is
//! (the simulator drops it silently). Every ACK and NACK carries the CNP flag: a CE mark
//! since the last CNP, at most one per `cnp_interval` (DCQCN §3.1's notification point).

use crate::transport::connection::{Data, Handled};
use crate::units::Ps;

/// The acknowledgement due.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RoceAckOut {
    pub cum: u64,
    pub nack: bool,
    pub cnp: bool,
    pub echo_ts: Ps,
}

pub struct RoceReceiver {
    size: u64,
    expected: u64,
    nack_interval: Ps,
    last_nack: Option<(u64, Ps)>,
    /// None: the CNP flag echoes each packet's CE bit.
    cnp_interval: Option<Ps>,
    last_cnp: Option<Ps>,
    marked: bool,
    ack: RoceAckOut,
    dup_bytes: u64,
    nacks: u32,
}

impl RoceReceiver {
    pub fn new(size: u64, nack_interval: Ps, cnp_interval: Option<Ps>) -> Self {
        RoceReceiver {
            size,
            expected: 0,
            nack_interval,
            last_nack: None,
            cnp_interval: cnp_interval.filter(|&i| i > 0),
            last_cnp: None,
            marked: false,
            ack: RoceAckOut::default(),
            dup_bytes: 0,
            nacks: 0,
        }
    }

    /// The CNP flag of the acknowledgement of a packet with CE bit `ce`.
    fn cnp(&mut self, now: Ps, ce: bool) -> bool {
        let Some(n) = self.cnp_interval else {
            return ce;
        };
        self.marked |= ce;
        if self.marked && self.last_cnp.is_none_or(|t| now >= t + n) {
            self.marked = false;
            self.last_cnp = Some(now);
            true
        } else {
            false
        }
    }

    pub fn on_data(&mut self, now: Ps, d: Data) -> Handled {
        let was_complete = self.complete();
        let nack = if d.seq == self.expected {
            self.expected += d.len as u64;
            false
        } else if d.seq > self.expected {
            let again = self
                .last_nack
                .is_some_and(|(at, t)| at == self.expected && now < t + self.nack_interval);
            if again {
                // Dropped without a word: the NACK of this byte went a moment ago.
                self.marked |= d.ce && self.cnp_interval.is_some();
                return Handled::default();
            }
            self.last_nack = Some((self.expected, now));
            self.nacks += 1;
            true
        } else {
            self.dup_bytes += d.len as u64;
            false
        };
        let cnp = self.cnp(now, d.ce);
        self.ack = RoceAckOut {
            cum: self.expected,
            nack,
            cnp,
            echo_ts: d.ts,
        };
        Handled {
            ack_now: true,
            completed: !was_complete && self.complete(),
        }
    }

    pub fn make_ack(&self) -> RoceAckOut {
        self.ack
    }

    pub fn complete(&self) -> bool {
        self.expected >= self.size
    }

    pub fn delivered(&self) -> u64 {
        self.expected
    }

    pub fn dup_bytes(&self) -> u64 {
        self.dup_bytes
    }

    pub fn nacks(&self) -> u32 {
        self.nacks
    }

    /// The receiver has every byte of the packet at `seq`.
    pub fn is_duplicate(&self, seq: u64) -> bool {
        seq < self.expected
    }
}
