//! CP, switch half (CP §4.1–§4.2, §4.6, §5.2): when a CP-enabled data packet (CPA) meets
//! a full port, the switch cuts off its payload instead of dropping it. The header-only
//! packet keeps the original IP length (so the receiver knows exactly which bytes were
//! lost), is marked payload-cut (PPL), and queues as a normal packet in a small extra
//! allowance beyond the port buffer (default 4 KB, §5.2); if that is full too, it is
//! dropped, and the flow falls back to SACK, duplicate ACKs or its timeout (§4.6).
//! Normal packets (CPA = 0) are dropped as on a plain switch. PACKs and payload-cut
//! packets may use the allowance at every CP switch on their way.
//!
//! The packet kinds of §4.1/§5.1 are two bits on the packet: `cpa` and `ppl`:
//! normal (0, 0), CP-enabled (1, 0), payload-cut (1, 1), PACK (0, 1, on an ACK).

/// A payload-cut packet before framing: IP 20 + TCP 20 + 12 B timestamp option — the
/// 66 B of CP §4.6 (footnote 5) once the 14 B MAC header is added; our framing also
/// counts the FCS, preamble and inter-frame gap.
pub const CUT_IP_BYTES: u32 = 20 + 20 + 12;
