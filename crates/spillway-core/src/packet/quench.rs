//! ICMP Source Quench (RFC 792): it carries the offending packet's IP header and the
//! first 8 bytes of its transport header, so the source can find the flow.

/// A quench before framing: IP header (20) + ICMP header (8) + the offending packet's IP
/// header (20) + 8 bytes of its transport header.
pub const QUENCH_IP_BYTES: u32 = 20 + 8 + 20 + 8;
