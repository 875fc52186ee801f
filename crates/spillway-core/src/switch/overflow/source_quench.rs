//! ICMP Source Quench (RFC 792, as FastLane §2.2.1 evaluates it): when the port's marker
//! (CoDel) would mark a packet, the switch sends the packet's source a quench carrying
//! the IP header and the first 8 bytes of the transport header, so the source can find
//! the flow. It travels at the data packet's own priority and nothing caps how many are
//! sent; the source reduces its window as for an ECN echo and never retransmits for it.

use crate::packet::quench::QUENCH_IP_BYTES;
use crate::packet::wire::wire_bytes;
use crate::packet::{Packet, PktKind};

/// The quench for data packet `p`, addressed to its source, at the data's own class.
pub fn quench(p: &Packet, framing: u32) -> Packet {
    let wire = wire_bytes(QUENCH_IP_BYTES, framing);
    let mut q = Packet::new(
        PktKind::Quench,
        p.flow_slot,
        p.flow_id,
        p.dst,
        p.src,
        p.class,
        wire,
        p.hash.rotate_left(29),
    );
    q.orig = p.kind;
    q.seq = p.seq;
    q
}
