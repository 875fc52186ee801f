//! A log-linear histogram of non-negative integers (HDR histogram's layout): exact below
//! 128, and above it 64 buckets to every power of two, so a value is reported as its
//! bucket's midpoint within 1/128 (0.78%) of itself, from one byte to 2^64. It holds
//! counts only for the buckets up to the largest value seen: a queue that never held
//! more than 128 KB needs 769 counters (6 KB), one of 4 MB 1,089 (8.5 KB).

/// Values below this are counted exactly (bucket width 1).
const EXACT: u64 = 128;
/// Buckets to every power of two above [`EXACT`]: 2^6.
const SUB_BITS: u32 = 6;
const SUB: u64 = 1 << SUB_BITS;

#[derive(Debug, Clone, Default)]
pub struct LogHistogram {
    counts: Vec<u64>,
    total: u64,
}

/// The bucket of `v`.
#[inline]
fn index(v: u64) -> usize {
    if v < EXACT {
        return v as usize;
    }
    // v in [2^e, 2^(e+1)), e >= 7: buckets 2^(e-6) wide.
    let e = 63 - v.leading_zeros();
    let shift = e - SUB_BITS;
    (EXACT + (e as u64 - 7) * SUB + ((v >> shift) - SUB)) as usize
}

/// The values bucket `i` holds: its lowest and its width.
fn bounds(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < EXACT {
        return (i, 1);
    }
    let e = 7 + (i - EXACT) / SUB;
    let sub = SUB + (i - EXACT) % SUB;
    let shift = e as u32 - SUB_BITS;
    (sub << shift, 1 << shift)
}

impl LogHistogram {
    /// Counts one value.
    #[inline]
    pub fn record(&mut self, v: u64) {
        let i = index(v);
        if i >= self.counts.len() {
            self.grow(i);
        }
        self.counts[i] += 1;
        self.total += 1;
    }

    #[inline(never)]
    fn grow(&mut self, i: usize) {
        self.counts.reserve_exact(i + 1 - self.counts.len());
        self.counts.resize(i + 1, 0);
    }

    /// Values counted.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// The value of rank `rank` (1 = the smallest) among those counted, as its bucket's
    /// midpoint (rounded down): exact below 128, within 1/128 above. `None` if fewer
    /// values were counted, or `rank` is 0.
    pub fn at_rank(&self, rank: u64) -> Option<u64> {
        if rank == 0 || rank > self.total {
            return None;
        }
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, width) = bounds(i);
                return Some(lo + (width - 1) / 2);
            }
        }
        unreachable!("the counts sum to the total")
    }

    /// Bytes its counters take (for the documentation's figures and tests).
    pub fn footprint(&self) -> usize {
        self.counts.capacity() * std::mem::size_of::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_tile_the_integers_in_order() {
        let mut next = 0u64;
        for i in 0..index(u64::MAX) + 1 {
            let (lo, width) = bounds(i);
            assert_eq!(lo, next, "bucket {i}");
            assert_eq!(index(lo), i);
            assert_eq!(index(lo + (width - 1)), i);
            next = lo.wrapping_add(width);
        }
        assert_eq!(next, 0, "the last bucket ends at 2^64");
    }

    #[test]
    fn every_value_comes_back_within_one_part_in_128() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for k in 0..200_000u64 {
            // Values spread over every octave, small ones included.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = if k < 1000 { k } else { x >> (x % 64) };
            let mut h = LogHistogram::default();
            h.record(v);
            let got = h.at_rank(1).unwrap();
            if v < EXACT {
                assert_eq!(got, v);
            } else {
                let err = got.abs_diff(v) as f64 / v as f64;
                assert!(err <= 1.0 / 128.0, "{v} -> {got}");
            }
        }
    }

    #[test]
    fn ranks_follow_the_sorted_values() {
        let values: Vec<u64> = (0..5000u64).map(|i| (i * 7919) % 100_003).collect();
        let mut h = LogHistogram::default();
        for &v in &values {
            h.record(v);
        }
        let mut sorted = values.clone();
        sorted.sort_unstable();
        for rank in [1, 2, 100, 2500, 4999, 5000] {
            let truth = sorted[rank - 1];
            let got = h.at_rank(rank as u64).unwrap();
            assert!(
                got.abs_diff(truth) * 128 <= truth.max(1),
                "{rank}: {got} vs {truth}"
            );
        }
        assert_eq!(h.at_rank(0), None);
        assert_eq!(h.at_rank(5001), None);
        assert_eq!(h.count(), 5000);
    }

    #[test]
    fn memory_grows_with_the_largest_value_only() {
        let mut h = LogHistogram::default();
        for v in 0..=128 * 1024 {
            h.record(v);
        }
        assert_eq!(h.counts.len(), 769);
        h.record(4 << 20);
        assert_eq!(h.counts.len(), 1089);
        assert_eq!(h.footprint(), 1089 * 8);
    }
}
