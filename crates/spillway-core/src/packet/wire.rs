//! Ethernet framing: what a packet of so many IP bytes takes on the wire.

/// Ethernet's minimum frame (header, payload, FCS): the payload is padded to 46 B.
pub const MIN_FRAME_BYTES: u32 = 64;
const MIN_PAYLOAD_BYTES: u32 = MIN_FRAME_BYTES - 18;

/// Bytes on the wire for an IP packet of `ip_bytes`: Ethernet pads the frame payload to
/// 46 B (64 B minimum frame), then header, FCS, preamble and gap add `framing` bytes.
#[inline]
pub fn wire_bytes(ip_bytes: u32, framing: u32) -> u32 {
    if framing >= 18 {
        ip_bytes.max(MIN_PAYLOAD_BYTES) + framing
    } else {
        ip_bytes + framing
    }
}
