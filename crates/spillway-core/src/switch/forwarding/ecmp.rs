//! ECMP: the hash of a flow's 5-tuple, mixed with the switch's id, picks one of the
//! equal-cost next hops, so a flow keeps its path and flows spread over the paths.

use crate::rng::mix64;

/// `h % n` for an ECMP choice among `n` ports: a mask when `n` is a power of two (fat
/// trees' k/2 uplinks), the same number without a 64-bit division (tens of cycles of
/// latency on the forwarding path of every switch hop).
#[inline(always)]
fn index(h: u64, n: usize) -> usize {
    let n = n as u64;
    (if n.is_power_of_two() {
        h & (n - 1)
    } else {
        h % n
    }) as usize
}

/// The next hop a flow of 5-tuple hash `hash` takes at `switch` among `hops`.
#[inline(always)]
pub fn pick(hops: &[u16], switch: u32, hash: u32) -> u16 {
    if hops.len() == 1 {
        hops[0]
    } else {
        hops[index(mix64((hash as u64) << 32 | switch as u64), hops.len())]
    }
}

/// The next hop a packet a switch makes itself (a quench) takes, by its own hash.
pub fn pick_own(hops: &[u16], hash: u32) -> u16 {
    hops[(mix64(hash as u64) % hops.len() as u64) as usize]
}
