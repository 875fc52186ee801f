//! A log-linear histogram of times: the Fastpass queue-to-timeslot delay's percentiles
//! without keeping every sample (16 buckets per power of two: within 1/16 of the value).

use crate::units::Ps;

const SUB: u32 = 16;

#[derive(Debug, Default, Clone)]
pub struct Histogram {
    counts: Vec<u64>,
    n: u64,
    max: Ps,
}

fn bucket(v: u64) -> usize {
    if v < SUB as u64 {
        return v as usize;
    }
    let e = 63 - v.leading_zeros(); // v in [2^e, 2^(e+1))
    let sub = (v >> (e - 4)) & (SUB as u64 - 1);
    (SUB * (e - 3) + sub as u32) as usize
}

/// The largest value of bucket `b`.
fn upper(b: usize) -> u64 {
    let b = b as u64;
    if b < SUB as u64 {
        return b;
    }
    let e = b / SUB as u64 + 3;
    let sub = b % SUB as u64;
    ((SUB as u64 + sub + 1) << (e - 4)) - 1
}

impl Histogram {
    pub fn add(&mut self, v: Ps) {
        let b = bucket(v);
        if self.counts.len() <= b {
            self.counts.resize(b + 1, 0);
        }
        self.counts[b] += 1;
        self.n += 1;
        self.max = self.max.max(v);
    }

    pub fn max(&self) -> Ps {
        self.max
    }

    /// The `q` quantile (0..=1), as its bucket's upper edge (never above the maximum).
    pub fn quantile(&self, q: f64) -> Ps {
        if self.n == 0 {
            return 0;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return upper(b).min(self.max);
            }
        }
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_tile_the_line_and_quantiles_are_within_a_sixteenth() {
        for v in (0..5000u64).chain([1 << 20, (1 << 40) + 12345, u64::MAX >> 2]) {
            let b = bucket(v);
            assert!(upper(b) >= v, "{v}");
            if b > 0 {
                assert!(upper(b - 1) < v, "{v}");
            }
        }
        let mut h = Histogram::default();
        for v in 1..=1000u64 {
            h.add(v * 1000);
        }
        for q in [0.5, 0.9, 0.99] {
            let exact = (q * 1000.0) as u64 * 1000;
            let got = h.quantile(q);
            assert!(
                got >= exact && got <= exact + exact / 16,
                "{q}: {got} vs {exact}"
            );
        }
        assert_eq!(h.quantile(1.0), 1_000_000);
    }
}
