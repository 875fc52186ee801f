//! Queue occupancy sampled over time (`run.queue_sample_interval`): at every sample, every
//! port's queued bytes, kept per port as a [`LogHistogram`] of the non-zero samples, so a
//! port's percentiles cost memory only once its queue has held something (most ports of
//! a large network seldom queue). The zeros are counted by difference: every port is
//! sampled at every sample.

use super::histogram::LogHistogram;

/// The percentiles reported, in thousandths: p50, p90, p99, p99.9.
pub const PERMILLE: [u64; 4] = [500, 900, 990, 999];

/// What a port's row of ports.parquet says of its sampled queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueRow {
    /// Samples taken (the same at every port), `u64::MAX` when not sampling.
    pub samples: u64,
    /// The percentiles of [`PERMILLE`], `u64::MAX` when no sample was taken.
    pub percentiles: [u64; 4],
}

impl QueueRow {
    /// Sampling is off.
    pub const NONE: QueueRow = QueueRow {
        samples: u64::MAX,
        percentiles: [u64::MAX; 4],
    };
}

pub struct QueueSamples {
    samples: u64,
    /// By port (hosts' NICs first, then switches' ports, as ports.parquet's rows): the
    /// non-zero samples, from the first one on.
    nonzero: Vec<Option<Box<LogHistogram>>>,
}

impl QueueSamples {
    /// Sampling of `ports` ports.
    pub fn new(ports: usize) -> QueueSamples {
        QueueSamples {
            samples: 0,
            nonzero: (0..ports).map(|_| None).collect(),
        }
    }

    /// A sample begins: every port's bytes follow, by [`QueueSamples::record`].
    pub fn begin(&mut self) {
        self.samples += 1;
    }

    /// Port `port` holds `bytes` at this sample.
    #[inline]
    pub fn record(&mut self, port: usize, bytes: u64) {
        if bytes != 0 {
            self.nonzero[port]
                .get_or_insert_with(Default::default)
                .record(bytes);
        }
    }

    /// Port `port`'s row: the percentiles by nearest rank (the ⌈q·n⌉-th smallest of the
    /// n samples), zeros exact, others within 1/128.
    pub fn row(&self, port: usize) -> QueueRow {
        let n = self.samples;
        if n == 0 {
            return QueueRow {
                samples: 0,
                percentiles: [u64::MAX; 4],
            };
        }
        let h = self.nonzero[port].as_deref();
        let zeros = n - h.map_or(0, |h| h.count());
        let percentiles = PERMILLE.map(|k| {
            let rank = ((n as u128 * k as u128).div_ceil(1000) as u64).max(1);
            if rank <= zeros {
                0
            } else {
                h.and_then(|h| h.at_rank(rank - zeros))
                    .expect("ranks above the zeros are in the histogram")
            }
        });
        QueueRow {
            samples: n,
            percentiles,
        }
    }

    /// Ports whose queue has held something at a sample (the histograms allocated).
    pub fn ports_with_samples(&self) -> usize {
        self.nonzero.iter().flatten().count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The nearest-rank percentiles of samples known by value: 90 zeros and 10 of 1 MB
    /// put p50 and p90 at 0, p99 and p99.9 at 1 MB (within 1/128).
    #[test]
    fn zeros_are_counted_by_difference() {
        let mut q = QueueSamples::new(3);
        for k in 0..100 {
            q.begin();
            q.record(0, 0);
            q.record(1, if k % 10 == 9 { 1 << 20 } else { 0 });
            q.record(2, 100 + k);
        }
        assert_eq!(q.ports_with_samples(), 2);
        assert_eq!(q.row(0).percentiles, [0; 4]);
        assert_eq!(q.row(0).samples, 100);
        let r = q.row(1).percentiles;
        assert_eq!(&r[..2], &[0, 0]);
        for v in &r[2..] {
            assert!(v.abs_diff(1 << 20) * 128 <= 1 << 20, "{v}");
        }
        // 100..199, exact below 128: the 50th is 149 (bucket [148, 150): 148).
        let r = q.row(2).percentiles;
        assert_eq!(r[0], 148);
        assert!(r[3].abs_diff(199) <= 1);
    }

    #[test]
    fn no_sample_no_percentile() {
        let q = QueueSamples::new(1);
        assert_eq!(q.row(0).samples, 0);
        assert_eq!(q.row(0).percentiles, [u64::MAX; 4]);
    }
}
