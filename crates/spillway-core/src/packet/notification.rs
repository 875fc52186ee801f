//! FastLane's drop notification (§3.2): the dropped packet's headers, addresses flipped,
//! truncated after the transport header, with the 4 B timeout-epoch option (§3.4.1).

/// A notification on the wire: Ethernet 14 + IP 20 + TCP 20 + 4 B FastLane option,
/// padded to the 64 B minimum frame, FCS included.
pub const NOTIFICATION_FRAME: u32 = 64;
