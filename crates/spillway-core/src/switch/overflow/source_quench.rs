//! ICMP Source Quench (RFC 792, as FastLane §2.2.1 evaluates it): when the port's marker
//! (CoDel) would mark a packet, the switch sends the packet's source a quench carrying
//! the IP header and the first 8 bytes of the transport header, so the source can find
//! the flow. It travels at the data packet's own priority and nothing caps how many are
//! sent; the source reduces its window as for an ECN echo and never retransmits for it.

/// Quench size on the wire before framing: IP header (20) + ICMP header (8) + the
/// offending packet's IP header (20) + 8 bytes of its transport header.
pub const QUENCH_IP_BYTES: u32 = 20 + 8 + 20 + 8;
