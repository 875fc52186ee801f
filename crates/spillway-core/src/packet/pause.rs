//! Flow control's pause frames: 802.1Qbb priority flow control (PFC, per class) and
//! 802.3x pause (all traffic), as DeTail uses them (§5.2, §6.1), on/off: a frame pauses
//! classes for the longest time or resumes them (time 0).
//!
//! A pause is a MAC control frame: the minimum 64 B frame, sent ahead of queued data
//! and addressed to the link's other end only (no forwarding engine sees it).

use super::wire::{wire_bytes, MIN_FRAME_BYTES};
use super::{Packet, PktKind};

/// A MAC control frame's payload (opcode, class-enable vector, eight times, padding):
/// the minimum frame's 46 B.
pub const PAUSE_PAYLOAD_BYTES: u32 = MIN_FRAME_BYTES - 18;

/// A port has two 512-bit times to act on a pause that reached it (802.1Qbb; DeTail §6.1:
/// 1.024 us at 1 Gbps).
pub const RESPONSE_BYTES: u64 = 2 * 512 / 8;

/// A pause frame from `node` to its neighbour `peer`: pause (`on`) or resume the
/// classes in `classes` (bit k: class k).
pub fn frame(node: u32, peer: u32, classes: u8, on: bool, framing: u32) -> Packet {
    let mut p = Packet::new(
        PktKind::Pause,
        u32::MAX,
        u64::MAX,
        node,
        peer,
        0,
        wire_bytes(PAUSE_PAYLOAD_BYTES, framing),
        0,
    );
    p.len = classes as u32;
    p.seq = on as u64;
    p
}

/// What a pause frame says: (classes, pause or resume).
pub fn read(p: &Packet) -> (u8, bool) {
    debug_assert_eq!(p.kind, PktKind::Pause);
    (p.len as u8, p.seq != 0)
}

/// The paused classes after frame `(classes, on)` reaches a port paused at `mask`.
pub fn apply(mask: u8, classes: u8, on: bool) -> u8 {
    if on {
        mask | classes
    } else {
        mask & !classes
    }
}
