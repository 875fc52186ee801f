//! TCP's header and the options Spillway's transports carry, with their sizes. The base
//! header (IP 20 + TCP 20 by default) is `transport.header_bytes`; options add to it.

/// The SACK option (RFC 2018): 2 B kind and length, 8 B per block, padded to 4 B.
fn sack_option_bytes(blocks: u32) -> u32 {
    if blocks == 0 {
        0
    } else {
        (2 + 8 * blocks).div_ceil(4) * 4
    }
}

/// FastLane's out-of-order option (§3.4.1): 2 B kind and length, 4 B count, padding.
pub const OOO_OPTION_BYTES: u32 = 8;

/// Option bytes of an ACK with `nsack` SACK blocks, FastLane's out-of-order option if
/// `ooo_option`, and CP's PACK block if `pack` (CP §4.3: it rides in the SACK option as
/// one more block, or a whole option of its own, 2 + 8 padded, when there is no SACK).
pub fn ack_option_bytes(nsack: u8, ooo_option: bool, pack: bool) -> u32 {
    let sack = sack_option_bytes(nsack as u32);
    let ooo = if ooo_option { OOO_OPTION_BYTES } else { 0 };
    let pack = if pack {
        sack_option_bytes(nsack as u32 + 1) - sack
    } else {
        0
    };
    sack + ooo + pack
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_sizes_follow_the_rfcs() {
        assert_eq!(ack_option_bytes(0, false, false), 0);
        // One block: 2 + 8 = 10, padded to 12; three: 26 -> 28 (RFC 2018).
        assert_eq!(ack_option_bytes(1, false, false), 12);
        assert_eq!(ack_option_bytes(3, false, false), 28);
        assert_eq!(ack_option_bytes(0, true, false), 8);
        // A PACK alone is a whole option; beside SACK blocks, one block more.
        assert_eq!(ack_option_bytes(0, false, true), 12);
        assert_eq!(ack_option_bytes(1, false, true), 20);
        assert_eq!(ack_option_bytes(3, true, true), 44);
    }
}
