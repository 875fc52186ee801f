//! The Poisson arrival process the open-loop generators share: exponential gaps on an
//! exact clock, with an optional limit on how many arrivals there are; or, modulated on
//! and off (DeTail §8.1's bursty and mixed workloads), a Poisson process whose rate is
//! one value during a burst at the start of every period and another for the rest; or
//! log-normal gaps of the same mean (Parsimon's generator: burstier than Poisson at
//! sigma > 1).

use super::spec::BurstSpec;
use crate::rng::Rng;
use crate::units::{Ps, PS_PER_S};

pub struct Arrivals {
    clock: Clock,
    /// The clock rounded: when the next arrival is due.
    next_time: Ps,
    remaining: u64,
}

enum Clock {
    /// A constant rate: gaps of mean `mean_gap_ps`. `at`: the exact arrival clock in ps
    /// as f64, so rounding does not accumulate.
    Steady {
        mean_gap_ps: f64,
        at: f64,
    },
    OnOff(OnOff),
    /// Log-normal gaps, ln(gap) ~ N(mu, sigma²) with mu = ln(mean) − sigma² / 2, so the
    /// gaps' mean is `mean_gap_ps` (parsimon-eval `workload/src/flowgen.rs`).
    LogNormal {
        mu: f64,
        sigma: f64,
        at: f64,
    },
}

impl Arrivals {
    /// Arrivals at `rate` per second, at most `limit` of them. The first is drawn now, so
    /// the caller's stream is consumed in the same order as it always was: the first gap
    /// at construction, then one after each arrival.
    pub fn new(rate: f64, limit: Option<u64>, rng: &mut Rng) -> Arrivals {
        Arrivals::start(
            Clock::Steady {
                mean_gap_ps: PS_PER_S as f64 / rate,
                at: 0.0,
            },
            limit,
            rng,
        )
    }

    /// Arrivals at `rate` per second on average, the gaps log-normal with shape
    /// `sigma`, at most `limit` of them.
    pub fn lognormal(rate: f64, sigma: f64, limit: Option<u64>, rng: &mut Rng) -> Arrivals {
        let mean = PS_PER_S as f64 / rate;
        Arrivals::start(
            Clock::LogNormal {
                mu: mean.ln() - sigma * sigma / 2.0,
                sigma,
                at: 0.0,
            },
            limit,
            rng,
        )
    }

    /// Arrivals modulated by `burst` (its rates per second, times `scale`: the number of
    /// clients), at most `limit` of them; the first period starts at time 0.
    pub fn on_off(burst: &BurstSpec, scale: f64, limit: Option<u64>, rng: &mut Rng) -> Arrivals {
        Arrivals::start(Clock::OnOff(OnOff::new(burst, scale)), limit, rng)
    }

    fn start(clock: Clock, limit: Option<u64>, rng: &mut Rng) -> Arrivals {
        let mut a = Arrivals {
            clock,
            next_time: 0,
            remaining: limit.unwrap_or(u64::MAX),
        };
        a.draw(rng);
        a
    }

    fn draw(&mut self, rng: &mut Rng) {
        let at = match &mut self.clock {
            Clock::Steady { mean_gap_ps, at } => {
                *at += rng.exp(*mean_gap_ps);
                *at
            }
            Clock::OnOff(c) => c.next(rng.exp(1.0)),
            Clock::LogNormal { mu, sigma, at } => {
                *at += (*mu + *sigma * rng.normal()).exp();
                *at
            }
        };
        self.next_time = at.round() as Ps;
    }

    /// When the next arrival is due, if any is left.
    pub fn next_time(&self) -> Option<Ps> {
        (self.remaining > 0).then_some(self.next_time)
    }

    /// An arrival is due at or before `now`.
    pub fn due(&self, now: Ps) -> bool {
        self.remaining > 0 && self.next_time <= now
    }

    /// The due arrival has been served: count it and draw the next gap.
    pub fn advance(&mut self, rng: &mut Rng) {
        self.remaining -= 1;
        self.draw(rng);
    }

    /// Every arrival the limit allows has come.
    pub fn exhausted(&self) -> bool {
        self.remaining == 0
    }
}

/// A Poisson process with a piecewise-constant, periodic rate: `burst` per ps for the
/// first `length` ps of every `period`, `steady` per ps for the rest. Arrivals are drawn
/// in unit-rate time and mapped through the rate's integral: the next arrival is where
/// the integral since the last one reaches an Exp(1) draw, which is exact across phase
/// boundaries (a burst that ends between two arrivals, a steady phase of rate 0).
struct OnOff {
    period: Ps,
    length: Ps,
    burst: f64,
    steady: f64,
    /// Arrivals a whole period holds on average: burst · length + steady · (period −
    /// length).
    per_period: f64,
    /// The current period's start (exact, in ps).
    period_start: Ps,
    /// In the burst phase of the current period.
    in_burst: bool,
    /// The last arrival, in ps within the current period (at or after the current
    /// phase's start).
    at: f64,
}

impl OnOff {
    fn new(b: &BurstSpec, scale: f64) -> OnOff {
        let per_ps = |r: f64| r * scale / PS_PER_S as f64;
        let (burst, steady) = (per_ps(b.burst_rate), per_ps(b.rate));
        OnOff {
            period: b.period,
            length: b.length,
            burst,
            steady,
            per_period: burst * b.length as f64 + steady * (b.period - b.length) as f64,
            period_start: 0,
            in_burst: true,
            at: 0.0,
        }
    }

    /// The time (absolute ps, as f64) of the next arrival, `mass` (an Exp(1) draw) of
    /// unit-rate time after the last.
    fn next(&mut self, mut mass: f64) -> f64 {
        loop {
            let (end, rate) = if self.in_burst {
                (self.length as f64, self.burst)
            } else {
                (self.period as f64, self.steady)
            };
            if rate > 0.0 {
                let gap = mass / rate;
                if self.at + gap < end {
                    self.at += gap;
                    return self.period_start as f64 + self.at;
                }
                mass -= rate * (end - self.at);
            }
            // On to the next phase.
            if self.in_burst {
                self.in_burst = false;
                self.at = self.length as f64;
            } else {
                self.in_burst = true;
                self.at = 0.0;
                self.period_start = self.period_start.saturating_add(self.period);
                // Whole periods the draw spans are skipped at once.
                if mass >= self.per_period {
                    let skip = (mass / self.per_period).floor();
                    mass -= skip * self.per_period;
                    let skip = skip.min(u64::MAX as f64) as u64;
                    self.period_start = self
                        .period_start
                        .saturating_add(skip.saturating_mul(self.period));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::PS_PER_MS;

    fn burst(rate: f64, burst_rate: f64) -> BurstSpec {
        BurstSpec {
            period: 50 * PS_PER_MS,
            length: 10 * PS_PER_MS,
            burst_rate,
            rate,
        }
    }

    /// The arrivals of `n` periods, each as (period, in the burst).
    fn phases(b: &BurstSpec, periods: u64, seed: u64) -> Vec<(u64, bool)> {
        let mut rng = Rng::new(seed, 9);
        let mut a = Arrivals::on_off(b, 1.0, None, &mut rng);
        let mut out = Vec::new();
        while let Some(t) = a.next_time().filter(|&t| t < periods * b.period) {
            out.push((t / b.period, t % b.period < b.length));
            a.advance(&mut rng);
        }
        out
    }

    /// A Poisson count's mean and variance are both its mean: `n` counts of mean `mean`
    /// total within 5 standard deviations of `n · mean`.
    fn poisson_total(counts: &[u64], mean: f64) {
        let n = counts.len() as f64;
        let total: u64 = counts.iter().sum();
        let sd = (n * mean).sqrt();
        assert!(
            (total as f64 - n * mean).abs() < 5.0 * sd,
            "{total} arrivals, expected {} ± {sd:.0}",
            n * mean
        );
        // The counts' spread is Poisson's too (variance = mean), within 20%.
        let m = total as f64 / n;
        let var = counts.iter().map(|&c| (c as f64 - m).powi(2)).sum::<f64>() / (n - 1.0);
        assert!(
            (var / mean - 1.0).abs() < 0.2,
            "variance {var}, mean {mean}"
        );
    }

    #[test]
    fn bursts_and_steady_phases_have_their_rates() {
        let b = burst(1_000.0, 10_000.0);
        let periods = 2_000;
        let ph = phases(&b, periods, 3);
        let mut on = vec![0u64; periods as usize];
        let mut off = vec![0u64; periods as usize];
        for &(p, burst) in &ph {
            if burst {
                on[p as usize] += 1;
            } else {
                off[p as usize] += 1;
            }
        }
        poisson_total(&on, 10_000.0 * 0.010); // 100 a burst
        poisson_total(&off, 1_000.0 * 0.040); // 40 a steady phase
    }

    #[test]
    fn a_bursty_workload_is_silent_between_bursts() {
        let b = burst(0.0, 10_000.0);
        let ph = phases(&b, 1_000, 4);
        assert!(ph.iter().all(|&(_, burst)| burst));
        let mut on = vec![0u64; 1_000];
        for &(p, _) in &ph {
            on[p as usize] += 1;
        }
        poisson_total(&on, 100.0);
    }

    #[test]
    fn sparse_arrivals_skip_whole_periods_correctly() {
        // 0.2 arrivals a period: most periods have none, and gaps span many.
        let b = BurstSpec {
            period: PS_PER_MS,
            length: PS_PER_MS / 10,
            burst_rate: 2_000.0,
            rate: 0.0,
        };
        let periods = 200_000;
        let ph = phases(&b, periods, 5);
        let mut on = vec![0u64; periods as usize];
        for &(p, burst) in &ph {
            assert!(burst);
            on[p as usize] += 1;
        }
        poisson_total(&on, 0.2);
    }

    #[test]
    fn lognormal_gaps_have_the_mean_and_sigma_asked() {
        // 10,000 flows/s: a 100 us mean gap; sigma 2 as Parsimon's benchmark.
        for sigma in [0.5, 1.0, 2.0] {
            let mut rng = Rng::new(11, 9);
            let mut a = Arrivals::lognormal(10_000.0, sigma, None, &mut rng);
            let n = 400_000;
            let (mut last, mut logs) = (0u64, Vec::with_capacity(n));
            let mut sum = 0.0;
            for _ in 0..n {
                let t = a.next_time().unwrap();
                let gap = (t - last) as f64;
                sum += gap;
                logs.push(gap.max(1.0).ln());
                last = t;
                a.advance(&mut rng);
            }
            let mean_gap: f64 = 1e8; // ps
            let mu = mean_gap.ln() - sigma * sigma / 2.0;
            // ln(gap) ~ N(mu, sigma²): its mean within 5 standard errors, its standard
            // deviation within 2%.
            let m = logs.iter().sum::<f64>() / n as f64;
            let sd = (logs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
            assert!(
                (m - mu).abs() < 5.0 * sigma / (n as f64).sqrt(),
                "sigma {sigma}: mean log {m} vs {mu}"
            );
            assert!((sd / sigma - 1.0).abs() < 0.02, "sigma {sigma}: sd {sd}");
            // The gaps' mean: a log-normal's mean has variance (e^{σ²} − 1) mean², so at
            // sigma 2 (e^4 − 1 ≈ 54) the standard error of 400,000 gaps is 1.2%.
            let se = ((sigma * sigma).exp() - 1.0).sqrt() / (n as f64).sqrt();
            assert!(
                (sum / n as f64 / mean_gap - 1.0).abs() < 5.0 * se,
                "sigma {sigma}: mean gap {}",
                sum / n as f64
            );
        }
    }

    #[test]
    fn on_off_arrivals_are_deterministic_and_ordered() {
        let b = burst(333.0, 800.0);
        let a = phases(&b, 50, 7);
        assert_eq!(a, phases(&b, 50, 7));
        assert_ne!(a, phases(&b, 50, 8));
        let mut rng = Rng::new(1, 9);
        let mut arr = Arrivals::on_off(&b, 48.0, Some(500), &mut rng);
        let mut last = 0;
        let mut n = 0;
        while let Some(t) = arr.next_time() {
            assert!(t >= last);
            last = t;
            arr.advance(&mut rng);
            n += 1;
        }
        assert_eq!(n, 500);
        assert!(arr.exhausted());
    }
}
