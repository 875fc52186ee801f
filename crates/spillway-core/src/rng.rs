//! Seeded random streams, one per component.
//!
//! Each stream is xoshiro256** seeded through SplitMix64 from (run seed, component id),
//! so adding a host or a switch never reshuffles another component's draws.

#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 4],
}

#[inline]
pub fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A stateless 64-bit mix, for hashing (ECMP) rather than streams.
#[inline]
pub fn mix64(mut x: u64) -> u64 {
    splitmix64(&mut x)
}

/// Component ids: disjoint ranges so streams never collide.
pub mod component {
    pub const WORKLOAD: u64 = 1;
    pub const BACKGROUND: u64 = 2;
    pub const SWITCH_BASE: u64 = 1 << 32;
    /// Per host: its receive path's timing noise (`host.rx_jitter`).
    pub const RX_JITTER_BASE: u64 = 2 << 32;
    /// Per host, then per switch: its clock's offset (`topology.clock_ppm`).
    pub const HOST_CLOCK_BASE: u64 = 3 << 32;
    pub const SWITCH_CLOCK_BASE: u64 = 4 << 32;
}

impl Rng {
    pub fn new(seed: u64, component: u64) -> Rng {
        let mut x = seed ^ mix64(component.wrapping_add(0xA076_1D64_78BD_642F));
        let s = [
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
        ];
        Rng { s }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1).
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in 0..n (Lemire's multiply-shift; bias below 2^-32 for our n).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Exponential with the given mean.
    pub fn exp(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.next_f64()).ln()
    }

    /// Standard normal (Box-Muller, one of the pair: two uniforms a draw, so a stream's
    /// position never depends on an earlier draw's spare).
    pub fn normal(&mut self) -> f64 {
        let u = 1.0 - self.next_f64(); // (0, 1]: ln is finite
        let v = self.next_f64();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_independent() {
        let a: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(1, 5);
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(1, 5);
                move |_| r.next_u64()
            })
            .collect();
        let c: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(1, 6);
                move |_| r.next_u64()
            })
            .collect();
        let d: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(2, 5);
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }

    #[test]
    fn below_is_in_range_and_roughly_uniform() {
        let mut r = Rng::new(3, 3);
        let mut counts = [0u32; 10];
        for _ in 0..100_000 {
            counts[r.below(10) as usize] += 1;
        }
        for c in counts {
            assert!((9_000..11_000).contains(&c), "{counts:?}");
        }
    }
}
