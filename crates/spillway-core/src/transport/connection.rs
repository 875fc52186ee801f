//! The contract every transport keeps with the host that runs it, in quinn-proto's
//! sans-IO shape: the host hands a connection what arrived ([`Input`]) with
//! `handle(now, input)`, asks it for what to send with `poll_transmit(now, budget)`
//! (data, probes) and `poll_ack()` (the receiver's acknowledgement), and arms one timer
//! at `poll_timeout()`. A connection never touches a clock, a queue or a packet: what it
//! sends carries everything its packet will (class, priority, ECN and CP bits, the
//! timeout epoch, its length with options), and the host only frames it.
//!
//! A connection here is both ends of one flow: the sender at the flow's source and the
//! receiver at its destination. Inputs name the end they arrive at.

use crate::packet::int::IntStack;
use crate::packet::MAX_SACK;
use crate::units::Ps;

/// What arrived for a connection (or its timer).
#[derive(Debug, Clone, Copy)]
pub enum Input<'a> {
    /// At the sender: an acknowledgement.
    Ack(&'a AckInfo),
    /// At the sender: a FastLane drop notification (§3.2) for the data packet carrying
    /// `seq`, sent in timeout epoch `epoch`.
    Notified { seq: u64, epoch: u16 },
    /// At the sender: a FastLane notification that its probe was dropped.
    ProbeNotified,
    /// At the sender: the receiver's NIC echoed its probe.
    ProbeEcho,
    /// At the sender: an ICMP Source Quench (FastLane §2.2.1).
    Quench,
    /// At the sender: its host's NIC took one of its packets, so it may send another.
    NicFreed,
    /// At the sender: its own NIC refused these segments, the last it emitted
    /// (`host.nic_drop = "local"`); they never left the host.
    Refused(&'a [Segment]),
    /// At either end: the connection's timer (`poll_timeout`) is due.
    Timeout,
    /// At the receiver: a data segment.
    Data(Data),
    /// At the receiver: a payload-cut data packet (CP §4.3): bytes `seq..seq + len` were
    /// lost at a switch.
    Cut { seq: u64, len: u32 },
    /// At a RoCE sender: an ACK or NACK (`transport/roce`).
    RoceAck(RoceAck<'a>),
}
/// What an ACK or NACK tells the sender.
#[derive(Debug, Clone, Copy)]
pub struct RoceAck<'a> {
    /// Every byte below this has arrived.
    pub cum: u64,
    /// A NACK: the receiver dropped a packet beyond `cum`, so send again from `cum`.
    pub nack: bool,
    /// DCQCN: the ACK carries a CNP; DCTCP: an ECN echo.
    pub ece: bool,
    /// HPCC: the telemetry of the data packet it acknowledges.
    pub int: Option<&'a IntStack>,
}

/// A data segment as it reached the receiver: what its headers carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Data {
    pub seq: u64,
    pub len: u32,
    /// The sender's timestamp (echoed for RTT samples).
    pub ts: Ps,
    /// A retransmission (its timestamp is later than the original's).
    pub retx: bool,
    /// It arrived CE-marked.
    pub ce: bool,
}

/// What the receiver wants done after an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Handled {
    /// An acknowledgement is due now (`poll_ack`).
    pub ack_now: bool,
    /// This input completed the flow: the receiver now holds every byte.
    pub completed: bool,
}

/// A data segment or probe the sender hands to its host, stamped with all its packet
/// carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub seq: u64,
    /// When it was sent (echoed back by the ACK it elicits).
    pub ts: Ps,
    /// Transport priority (lower is more urgent): what a pFabric queue serves by.
    pub prio: u64,
    /// Payload bytes (0 for a probe).
    pub len: u32,
    /// Bytes of the IP packet: headers, options and payload.
    pub ip_bytes: u32,
    /// The timeout epoch (FastLane §3.4.1): the sender's timeouts so far.
    pub epoch: u16,
    /// Priority class (0 highest) at every queue.
    pub class: u8,
    /// A retransmission.
    pub retx: bool,
    /// A header-only probe (pFabric §4.3, FastLane §3.4.2), echoed by the receiver's NIC.
    pub probe: bool,
    /// ECN-capable transport (RFC 3168).
    pub ect: bool,
    /// CP-enabled (CP §4.1): a full switch may cut its payload instead of dropping it.
    pub cpa: bool,
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

/// An acknowledgement the receiver hands to its host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ack {
    pub info: AckInfo,
    /// Priority class (0 highest).
    pub class: u8,
    /// Bytes of the IP packet: headers and options (SACK, FastLane's, CP's PACK).
    pub ip_bytes: u32,
    /// A PACK (CP §4.3): the `ppl` bit of its packet.
    pub pack: bool,
}

/// What a connection reports for its flow's record and the run's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    pub retransmits: u32,
    pub timeouts: u32,
    /// FastLane notifications ignored as sent before the last timeout.
    pub notifications_stale: u32,
    /// CP PACKs the sender received.
    pub packs: u32,
    /// Fast recoveries undone as spurious.
    pub undos: u32,
    /// Window cuts for ECN echoes or quenches.
    pub ecn_reductions: u32,
    /// Bytes the receiver holds in order.
    pub delivered_bytes: u64,
    /// Payload bytes that arrived more than once.
    pub duplicate_bytes: u64,
    /// Turbo: times the flow's priority was inflated (Turbo §4.1).
    pub inflations: u32,
}
