//! Transports: sans-IO state machines that keep the contract in [`connection`], driven
//! by the host that runs them.
//!
//! - [`tcp`]: the TCP sender and receiver (NewReno + SACK), which every transport here
//!   shares, with FastLane's transport half (drop notifications), CP's PACKs and
//!   pFabric's probe mode
//! - [`cc`]: the congestion controls: NewReno, CUBIC, DCTCP, pFabric
//! - [`turbo`]: Turbo (no rate control; priorities, timeouts and probes), T1 to T4
//! - [`roce`]: RoCE hosts, rate-based, go-back-N, with DCQCN, HPCC or DCTCP
//!
//! [`Transport`] is the one a flow runs, dispatched statically (an enum, one variant per
//! transport).

pub mod cc;
pub mod connection;
pub mod roce;
pub mod tcp;
pub mod turbo;

use crate::units::Ps;
use connection::{Ack, Handled, Input, Segment, Stats};
use roce::{RoceConfig, RoceConnection};
use tcp::config::TcpConfig;
use tcp::TcpConnection;
use turbo::{TurboConfig, TurboConnection};

/// A transport's settings (`[transport]`), read once.
#[derive(Debug, Clone)]
pub enum TransportConfig {
    Tcp(TcpConfig),
    Turbo(TurboConfig),
    Roce(RoceConfig),
}

impl TransportConfig {
    /// Payload bytes of a full segment.
    pub fn mss(&self) -> u32 {
        match self {
            TransportConfig::Tcp(c) => c.mss,
            TransportConfig::Turbo(c) => c.mss,
            TransportConfig::Roce(c) => c.mss,
        }
    }

    /// IP and transport header bytes of a packet without options.
    pub fn header_bytes(&self) -> u32 {
        match self {
            TransportConfig::Tcp(c) => c.header_bytes,
            TransportConfig::Turbo(c) => c.header_bytes,
            // HPCC's telemetry header rides on every packet.
            TransportConfig::Roce(c) => c.header_bytes + c.int_bytes(),
        }
    }

    /// Priority class of data packets.
    pub fn data_class(&self) -> u8 {
        match self {
            TransportConfig::Tcp(c) => c.data_class,
            TransportConfig::Turbo(c) => c.data_class,
            TransportConfig::Roce(c) => c.data_class,
        }
    }

    /// Priority class of acknowledgements (and of a probe's echo).
    pub fn ack_class(&self) -> u8 {
        match self {
            TransportConfig::Tcp(c) => c.ack_class,
            TransportConfig::Turbo(c) => c.ack_class,
            TransportConfig::Roce(c) => c.ack_class,
        }
    }

    /// TCP's settings, if the flows run TCP.
    pub fn tcp(&self) -> Option<&TcpConfig> {
        match self {
            TransportConfig::Tcp(c) => Some(c),
            TransportConfig::Turbo(_) | TransportConfig::Roce(_) => None,
        }
    }

    /// The most segments of one flow its host's NIC may hold, if the transport sets it:
    /// Turbo keeps one there, so a host's NIC is never idle while a flow has data and
    /// serves the best flow next (its queue is pFabric's), where the paper lets every
    /// flow send at line rate on its own (Turbo §4(1)).
    ///
    /// A RoCE NIC holds one packet per queue pair too: it serves the queue pairs the rate
    /// limiter lets go in turn (the HPCC simulator's round robin).
    pub fn nic_segments(&self) -> Option<u32> {
        match self {
            TransportConfig::Tcp(_) => None,
            TransportConfig::Turbo(_) | TransportConfig::Roce(_) => Some(1),
        }
    }

    /// RoCE's settings, if the flows run RoCE.
    pub fn roce(&self) -> Option<&RoceConfig> {
        match self {
            TransportConfig::Roce(c) => Some(c),
            _ => None,
        }
    }
}

/// The connection a flow runs, inline in its flow's slot: boxing the larger variant would
/// cost a pointer chase per packet of every TCP flow.
#[allow(clippy::large_enum_variant)]
pub enum Transport {
    Tcp(TcpConnection),
    Turbo(TurboConnection),
    Roce(RoceConnection),
}

impl Transport {
    /// A flow of `size` bytes whose data and ACKs go in priority class `class` (0
    /// highest .. 7), or, with `None`, in the configuration's `data_class` and
    /// `ack_class`.
    pub fn new(cfg: &TransportConfig, size: u64, class: Option<u8>) -> Transport {
        match cfg {
            TransportConfig::Tcp(c) => Transport::Tcp(TcpConnection::new(c, size, class)),
            TransportConfig::Turbo(c) => Transport::Turbo(TurboConnection::new(c, size, class)),
            TransportConfig::Roce(c) => Transport::Roce(RoceConnection::new(c, size, class)),
        }
    }

    /// The priority class of the flow's data packets.
    pub fn data_class(&self) -> u8 {
        match self {
            Transport::Tcp(c) => c.sender().class(),
            Transport::Turbo(c) => c.sender().class(),
            Transport::Roce(c) => c.sender().class(),
        }
    }

    pub fn start(&mut self) {
        match self {
            Transport::Tcp(c) => c.start(),
            Transport::Turbo(c) => c.start(),
            Transport::Roce(c) => c.start(),
        }
    }

    #[inline(always)]
    pub fn handle(&mut self, now: Ps, input: Input) -> Handled {
        match self {
            Transport::Tcp(c) => c.handle(now, input),
            Transport::Turbo(c) => c.handle(now, input),
            Transport::Roce(c) => c.handle(now, input),
        }
    }

    #[inline(always)]
    pub fn poll_transmit(&mut self, now: Ps, budget: usize, out: &mut Vec<Segment>) {
        match self {
            Transport::Tcp(c) => c.poll_transmit(now, budget, out),
            Transport::Turbo(c) => c.poll_transmit(now, budget, out),
            Transport::Roce(c) => c.poll_transmit(now, budget, out),
        }
    }

    #[inline(always)]
    pub fn wants_poll(&self, budget: usize) -> bool {
        match self {
            Transport::Tcp(c) => c.wants_poll(budget),
            Transport::Turbo(c) => c.wants_poll(budget),
            Transport::Roce(c) => c.wants_poll(budget),
        }
    }

    pub fn poll_ack(&mut self) -> Ack {
        match self {
            Transport::Tcp(c) => c.poll_ack(),
            Transport::Turbo(c) => c.poll_ack(),
            Transport::Roce(c) => c.poll_ack(),
        }
    }

    #[inline(always)]
    pub fn poll_timeout(&self) -> Option<Ps> {
        match self {
            Transport::Tcp(c) => c.poll_timeout(),
            Transport::Turbo(c) => c.poll_timeout(),
            Transport::Roce(c) => c.poll_timeout(),
        }
    }

    /// Every byte acknowledged and received.
    #[inline(always)]
    pub fn finished(&self) -> bool {
        match self {
            Transport::Tcp(c) => c.finished(),
            Transport::Turbo(c) => c.finished(),
            Transport::Roce(c) => c.finished(),
        }
    }

    /// Every byte acknowledged: all a sender's end can know of its flow when the
    /// receiver's end is elsewhere (a parallel run). A cumulative acknowledgement of
    /// every byte means the receiver holds them all, so for a connection with both ends
    /// this and `finished` agree once the last ACK is in.
    #[inline]
    pub fn sender_done(&self) -> bool {
        match self {
            Transport::Tcp(c) => c.sender().done(),
            Transport::Turbo(c) => c.sender().done(),
            Transport::Roce(c) => c.sender().done(),
        }
    }

    pub fn stats(&self) -> Stats {
        match self {
            Transport::Tcp(c) => c.stats(),
            Transport::Turbo(c) => c.stats(),
            Transport::Roce(c) => c.stats(),
        }
    }

    /// The receiver has had the segment at `seq` before (receive offload merges none).
    pub fn is_duplicate(&self, seq: u64) -> bool {
        match self {
            Transport::Tcp(c) => c.receiver().is_duplicate(seq),
            Transport::Turbo(c) => c.receiver().is_duplicate(seq),
            Transport::Roce(c) => c.receiver().is_duplicate(seq),
        }
    }

    /// A segment marked `ce` would end the receiver's delayed ACK (RFC 8257 §3.2).
    #[inline(always)]
    pub fn ce_flips(&self, ce: bool) -> bool {
        match self {
            Transport::Tcp(c) => c.receiver().ce_flips(ce),
            Transport::Turbo(c) => c.receiver().ce_flips(ce),
            // An ACK per packet: nothing is held.
            Transport::Roce(_) => false,
        }
    }

    pub fn tcp(&self) -> Option<&TcpConnection> {
        match self {
            Transport::Tcp(c) => Some(c),
            Transport::Turbo(_) | Transport::Roce(_) => None,
        }
    }

    pub fn turbo(&self) -> Option<&TurboConnection> {
        match self {
            Transport::Turbo(c) => Some(c),
            Transport::Tcp(_) | Transport::Roce(_) => None,
        }
    }

    pub fn roce(&self) -> Option<&RoceConnection> {
        match self {
            Transport::Roce(c) => Some(c),
            _ => None,
        }
    }

    /// Bytes of the flow not yet cumulatively acknowledged.
    pub fn unacked(&self) -> u64 {
        match self {
            Transport::Tcp(c) => c.sender().remaining(),
            Transport::Turbo(c) => c.unacked(),
            Transport::Roce(c) => c.sender().remaining(),
        }
    }

    /// Bytes of the flow neither cumulatively nor selectively acknowledged: what the
    /// receiver is still to get, as the sender knows it (`run.progress_limit`).
    pub fn unsacked(&self) -> u64 {
        match self {
            Transport::Tcp(c) => c.sender().unsacked(),
            Transport::Turbo(c) => c.sender().remaining(),
            Transport::Roce(c) => c.sender().remaining(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::connection::{Data, Input};
    use super::*;
    use crate::config::Scenario;

    /// A flow's data and ACKs, as its connection stamps them: the flow's own class for
    /// both when it has one, else `transport.data_class` and `transport.ack_class`.
    fn classes(class: Option<u8>) -> (Vec<u8>, u8) {
        let sc = Scenario::parse("[transport]\ndata_class = 2\nack_class = 5", &[], None).unwrap();
        let mut t = Transport::new(&sc.transport, 10 * 1460, class);
        t.start();
        let mut segs = Vec::new();
        t.poll_transmit(0, usize::MAX, &mut segs);
        assert_eq!(segs.len(), 10);
        let s = segs[0];
        t.handle(
            1,
            Input::Data(Data {
                seq: s.seq,
                len: s.len,
                ts: s.ts,
                retx: false,
                ce: false,
            }),
        );
        assert_eq!(t.data_class(), segs[0].class);
        (segs.iter().map(|s| s.class).collect(), t.poll_ack().class)
    }

    #[test]
    fn a_flow_with_a_class_sends_its_data_and_acks_in_it() {
        assert_eq!(classes(Some(6)), (vec![6; 10], 6));
        assert_eq!(classes(Some(0)), (vec![0; 10], 0));
        assert_eq!(classes(None), (vec![2; 10], 5));
    }
}
