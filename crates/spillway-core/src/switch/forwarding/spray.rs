//! Packet spraying: each packet draws one of the equal-cost next hops at random, from
//! the switch's own stream (FastLane §5's FL-PS, pFabric).

use crate::rng::Rng;

pub fn pick(hops: &[u16], rng: &mut Rng) -> u16 {
    hops[rng.below(hops.len() as u64) as usize]
}
