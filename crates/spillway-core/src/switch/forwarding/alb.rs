//! DeTail's adaptive load balancing (DeTail §4.2, §5.3, §6.2): per packet, as it arrives,
//! among the equal-cost next hops, those whose egress queue holds the fewest *drain
//! bytes* for the packet's class (bytes of that class and higher, which must leave before
//! it), by tiers: the hops below the first threshold if any, else below the second, ...,
//! else all; one of the best tier uniformly at random.

use crate::rng::Rng;

/// Most thresholds a switch takes (DeTail §6.2 uses two, 16 KB and 64 KB).
pub const MAX_THRESHOLDS: usize = 4;

/// The tier thresholds, ascending, in drain bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tiers {
    bounds: [u64; MAX_THRESHOLDS],
    len: u8,
}

impl Tiers {
    /// DeTail §6.2: 16 KB and 64 KB.
    pub const DETAIL: Tiers = Tiers {
        bounds: [16 << 10, 64 << 10, 0, 0],
        len: 2,
    };

    /// `thresholds`, ascending and at most [`MAX_THRESHOLDS`] (checked when read).
    pub fn new(thresholds: &[u64]) -> Tiers {
        assert!(!thresholds.is_empty() && thresholds.len() <= MAX_THRESHOLDS);
        assert!(thresholds.windows(2).all(|w| w[0] < w[1]));
        let mut bounds = [0; MAX_THRESHOLDS];
        bounds[..thresholds.len()].copy_from_slice(thresholds);
        Tiers {
            bounds,
            len: thresholds.len() as u8,
        }
    }

    /// The tier of a port holding `drain` bytes: 0 below the first threshold, ..., the
    /// number of thresholds at or above the last.
    #[inline]
    pub fn tier(&self, drain: u64) -> usize {
        self.bounds[..self.len as usize]
            .iter()
            .take_while(|&&b| drain >= b)
            .count()
    }
}

/// The next hop among `hops` (more than one), `drain(port)` giving each one's drain bytes
/// for the packet's class.
pub fn pick(hops: &[u16], tiers: &Tiers, drain: impl Fn(u16) -> u64, rng: &mut Rng) -> u16 {
    let mut best = usize::MAX;
    let mut count = 0u64;
    let mut chosen = hops[0];
    // One pass: reservoir sampling within the best tier seen so far keeps the choice
    // uniform over the final best tier with one draw per candidate of it.
    for &h in hops {
        let t = tiers.tier(drain(h));
        if t < best {
            best = t;
            count = 0;
        }
        if t == best {
            count += 1;
            if count == 1 || rng.below(count) == 0 {
                chosen = h;
            }
        }
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_follow_the_thresholds() {
        let t = Tiers::DETAIL;
        assert_eq!(t.tier(0), 0);
        assert_eq!(t.tier(16 * 1024 - 1), 0);
        assert_eq!(t.tier(16 * 1024), 1);
        assert_eq!(t.tier(64 * 1024 - 1), 1);
        assert_eq!(t.tier(64 * 1024), 2);
        assert_eq!(t.tier(u64::MAX), 2);
    }

    /// The pick is always in the best non-empty tier, and uniform within it (a
    /// chi-square bound over many draws).
    #[test]
    fn picks_the_best_tier_uniformly() {
        let hops = [3u16, 5, 7, 9, 11, 13];
        let mut rng = Rng::new(1, 2);
        let cases: [[u64; 6]; 4] = [
            [0, 100_000, 20_000, 0, 70_000, 1_000], // tier 0: 3, 9, 13
            [20_000, 100_000, 17_000, 90_000, 70_000, 65_536], // tier 1: 3, 7
            [90_000; 6],                            // all tier 2
            [70_000, 70_000, 70_000, 70_000, 70_000, 1], // only 13
        ];
        for drains in cases {
            let drain = |p: u16| drains[hops.iter().position(|&h| h == p).unwrap()];
            let best = drains.iter().map(|&d| Tiers::DETAIL.tier(d)).min().unwrap();
            let want: Vec<u16> = hops
                .iter()
                .copied()
                .filter(|&h| Tiers::DETAIL.tier(drain(h)) == best)
                .collect();
            let n = 60_000;
            let mut counts = std::collections::HashMap::new();
            for _ in 0..n {
                let p = pick(&hops, &Tiers::DETAIL, drain, &mut rng);
                assert!(want.contains(&p), "{p} not in the best tier {want:?}");
                *counts.entry(p).or_insert(0u64) += 1;
            }
            let e = n as f64 / want.len() as f64;
            let chi2: f64 = want
                .iter()
                .map(|h| (counts.get(h).copied().unwrap_or(0) as f64 - e).powi(2) / e)
                .sum();
            // 99.9th percentile of chi-square with up to 5 degrees of freedom: 20.5.
            assert!(chi2 < 20.5, "chi2 {chi2} for {counts:?}");
        }
    }
}
