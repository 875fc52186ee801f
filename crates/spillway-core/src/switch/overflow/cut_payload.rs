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

use crate::packet::cut::CUT_IP_BYTES;
use crate::packet::wire::wire_bytes;
use crate::packet::{Packet, PktKind};

/// What CP does with a packet that did not fit the buffer.
pub enum Cut {
    /// A normal packet: dropped as on a plain switch.
    Refused,
    /// A payload-cut packet or a PACK: it may use the allowance as it is.
    AsIs,
    /// A CP-enabled data packet, cut to its headers: this one takes its place.
    Cut(Packet),
}

/// CP §4.2 for packet `p` (wire sizes with `framing`).
pub fn cut(p: &Packet, framing: u32) -> Cut {
    if p.kind == PktKind::Data && p.cpa && !p.ppl {
        let mut c = p.clone();
        c.ppl = true;
        c.wire = wire_bytes(CUT_IP_BYTES, framing);
        Cut::Cut(c)
    } else if p.ppl {
        Cut::AsIs
    } else {
        Cut::Refused
    }
}
