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

/// Bytes on the wire for the data of a flow of `size` payload bytes sent in segments of
/// at most `mss` bytes, each with `header` bytes of TCP/IP: the full segments, then the
/// last (padded, if short, like any frame). ACKs and retransmissions are not counted.
pub fn flow_wire_bytes(size: u64, mss: u32, header: u32, framing: u32) -> u64 {
    let mss = mss as u64;
    let packets = size.div_ceil(mss).max(1);
    let last = size - (packets - 1) * mss;
    (packets - 1) * wire_bytes(mss as u32 + header, framing) as u64
        + wire_bytes(last as u32 + header, framing) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flow_on_the_wire_is_its_segments_framed() {
        // 1460 B segments, 40 B headers, 38 B of framing: 1538 B a full frame.
        assert_eq!(flow_wire_bytes(1460, 1460, 40, 38), 1538);
        assert_eq!(flow_wire_bytes(1461, 1460, 40, 38), 1538 + 46 + 38);
        assert_eq!(flow_wire_bytes(3000, 1460, 40, 38), 2 * 1538 + 80 + 40 + 38);
        // A 1-byte flow is a minimum frame: 46 B of IP payload padded, plus framing.
        assert_eq!(flow_wire_bytes(1, 1460, 40, 38), 84);
        // Without framing (pFabric's 1500 B packets), nothing is padded.
        assert_eq!(flow_wire_bytes(1, 1460, 40, 0), 41);
        assert_eq!(flow_wire_bytes(14_600, 1460, 40, 0), 15_000);
    }
}
