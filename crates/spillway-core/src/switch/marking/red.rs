//! RED-style ECN marking on the instantaneous queue, as DCQCN's congestion point uses it
//! (DCQCN §3.1; the HPCC simulator's `SwitchMmu::ShouldSendCN`): no mark while the queue
//! holds at most `kmin` bytes, always above `kmax`, and in between with probability
//! `pmax (q - kmin) / (kmax - kmin)`. As in that simulator the test runs as a data packet
//! leaves, against the bytes that stay behind it, and the mark goes on the departing
//! packet, so a mark reaches the receiver a queue's drain earlier than at enqueue.

use crate::rng::Rng;

/// One port's thresholds (bytes) and the probability at `kmax`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RedConfig {
    pub kmin: u64,
    pub kmax: u64,
    pub pmax: f64,
}

impl RedConfig {
    /// The HPCC simulator's defaults for a port of `rate` bit/s, as its run.py writes
    /// KMIN_MAP / KMAX_MAP / PMAX_MAP for DCQCN: 100 KB and 400 KB per 25 Gbit/s
    /// (KB = 1000 B, `ConfigEcn` multiplies by 1000), pmax 0.2.
    /// (`switch.ecn_pmax`'s default is that simulator's 0.2.)
    pub fn hpcc_default(rate: u64) -> (u64, u64) {
        (rate / 250_000, rate / 62_500)
    }

    /// The marking probability of a departure that leaves `backlog` bytes behind.
    pub fn probability(&self, backlog: u64) -> f64 {
        if backlog > self.kmax {
            1.0
        } else if backlog > self.kmin {
            self.pmax * (backlog - self.kmin) as f64 / (self.kmax - self.kmin) as f64
        } else {
            0.0
        }
    }
}

/// A port's marker: its thresholds and its own random stream (one per port, so marks do
/// not depend on how ports' departures interleave, nor on the thread count).
#[derive(Debug, Clone)]
pub struct Red {
    cfg: RedConfig,
    rng: Rng,
}

impl Red {
    pub fn new(cfg: RedConfig, rng: Rng) -> Self {
        debug_assert!(cfg.kmin < cfg.kmax, "checked when the scenario is read");
        Red { cfg, rng }
    }

    pub fn config(&self) -> RedConfig {
        self.cfg
    }

    /// Does the data packet leaving now, with `backlog` bytes behind it, get marked?
    /// A draw is taken only between the thresholds (as `ShouldSendCN` does).
    #[inline]
    pub fn on_dequeue(&mut self, backlog: u64) -> bool {
        if backlog > self.cfg.kmax {
            true
        } else if backlog > self.cfg.kmin {
            self.rng.next_f64() < self.cfg.probability(backlog)
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn red() -> Red {
        Red::new(
            RedConfig {
                kmin: 40_000,
                kmax: 160_000,
                pmax: 0.2,
            },
            Rng::new(7, 3),
        )
    }

    #[test]
    fn never_at_or_below_kmin_always_above_kmax() {
        let mut r = red();
        for q in [0, 1, 39_999, 40_000] {
            assert!((0..1000).all(|_| !r.on_dequeue(q)), "marked at {q}");
        }
        for q in [160_001, 1_000_000] {
            assert!((0..1000).all(|_| r.on_dequeue(q)), "not marked at {q}");
        }
        // At kmax itself the probability is pmax, not 1.
        assert_eq!(r.config().probability(160_000), 0.2);
    }

    #[test]
    fn marks_between_the_thresholds_at_the_linear_probability() {
        // 40,000 departures at each queue: the count is binomial; 5 sigma either side.
        for (q, p) in [(70_000u64, 0.05), (100_000, 0.1), (145_000, 0.175)] {
            let mut r = red();
            assert!((r.config().probability(q) - p).abs() < 1e-12);
            let n = 40_000.0;
            let marks = (0..n as u64).filter(|_| r.on_dequeue(q)).count() as f64;
            let sigma = (n * p * (1.0 - p)).sqrt();
            assert!(
                (marks - n * p).abs() < 5.0 * sigma,
                "q {q}: {marks} marks, expected {} +- {}",
                n * p,
                5.0 * sigma
            );
        }
    }

    #[test]
    fn hpcc_defaults_scale_with_the_rate() {
        // run.py: kmin 100 and kmax 400 (x 1000 B) per 25 Gbit/s; 400/1600 at 100 G.
        assert_eq!(
            RedConfig::hpcc_default(100_000_000_000),
            (400_000, 1_600_000)
        );
        assert_eq!(RedConfig::hpcc_default(10_000_000_000), (40_000, 160_000));
    }
}
