//! Weighted random forwarding (a `switch.routes` entry with `weights`; CP §6.3's
//! random-forwarding ToR): each packet picks a neighbour with probability proportional
//! to its weight.

use crate::rng::Rng;

/// `cum`: the cumulative weights, normalised to end at 1.
pub fn pick(hops: &[u16], cum: &[f64], rng: &mut Rng) -> u16 {
    let x = rng.next_f64();
    hops[cum.iter().position(|&c| x < c).unwrap_or(hops.len() - 1)]
}
