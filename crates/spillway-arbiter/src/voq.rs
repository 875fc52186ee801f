//! The Fastpass Appendix's queueing model, run with the real allocator: N endpoints on a
//! non-oversubscribed fabric seen as one input-queued switch, Q_ij(t) the virtual output
//! queue of packets waiting at i for j, and the queue bounds of Theorem 1.
//!
//! Model (Appendix, "System model"). Time is slotted. In every unit timeslot, for every
//! ordered pair (i, j), i != j, a request arrives with probability p and brings G packets
//! (Poisson or geometric with mean g, independent of everything else), so
//! λ_ij = p·g. The traffic is the proof sketch's uniform matrix, λ_ij = ρ/(N−1): every row
//! and column sums to ρ, the load of eq. (2). With speedup s the arbiter allocates s
//! matchings per unit timeslot and the network carries all of them (Appendix footnote 5:
//! "twice per unit timeslot" is s = 2).
//!
//! One unit timeslot t, in this order:
//! 1. Σ Q_ij(t) is sampled ([`VoqResult::mean_queue`]): every packet that arrived in
//!    timeslots before t, minus those served.
//! 2. The allocator ([`Arbiter`], one batch of s timeslots of its own clock) allocates s
//!    matchings from the queues; each grant serves one packet. (Max-min allocation is
//!    exact per timeslot within a batch, so a batch of s is s successive greedy
//!    matchings.)
//! 3. Σ Q is sampled again ([`VoqResult::mean_queue_after_service`]).
//! 4. Timeslot t's arrivals join the queues and are reported to the arbiter (FCP
//!    aggregate counts, §5.3): they can be served from timeslot t + 1 on.
//!
//! Why this order: it is the input-queued switch convention of the literature the
//! Appendix builds on (its references 25 and 13), and the one under which the lower bound (3) is the
//! M/D/1 queue its proof cites. At speedup 1 each destination j receives at most one
//! packet per timeslot, so Σ_i Q_ij(t) dominates, path by path, the single-server queue
//! Z_j(t + 1) = max(Z_j(t) − 1, 0) + A_j(t) fed by the same arrivals A_j(t)
//! ([`VoqResult::lindley_mean`] tracks it, with s in place of 1). With Poisson arrivals
//! of mean ρ per timeslot its stationary mean is ρ(2 − ρ)/(2(1 − ρ)), the M/D/1 number
//! in system, which is at least eq. (3)'s ρ/(2(1 − ρ)). Sampled after service (step 3)
//! the same queue has mean ρ²/(2(1 − ρ)) (the M/D/1 number waiting), below eq. (3): the
//! bound is about queues that include the packets about to be sent.
//!
//! Everything is deterministic: the arrivals come from a SplitMix64 generator seeded by
//! [`VoqParams::seed`].

use crate::alloc::{Arbiter, Batch, Mode, Policy};
use crate::demand::DemandError;
use crate::fabric::{ConfigError, Fabric};

/// Most endpoints [`simulate`] takes: the demand table and the queues are N x N.
pub const MAX_ENDPOINTS: usize = 1024;

/// Most unit timeslots (warm-up and measured) of one run.
pub const MAX_TIMESLOTS: u64 = 1 << 32;

/// The distribution of G, the packets a request brings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Packets {
    /// Poisson with mean g (the proof sketch's; a request may bring none). V = 1 + g.
    Poisson,
    /// Geometric on {1, 2, ...} with mean g >= 1 (every request brings a packet).
    /// V = 2g − 1.
    Geometric,
}

/// One run of the Appendix's model. See the module documentation for the model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VoqParams {
    /// N, at least 2 and at most [`MAX_ENDPOINTS`].
    pub endpoints: usize,
    /// ρ: packets arriving per endpoint per unit timeslot (every row and column sum of
    /// λ), finite and above 0. At 1 or more the queues have no stationary mean and both
    /// bounds are infinite (the run still reports what it measured).
    pub load: f64,
    /// p: probability that a request arrives for a given pair in a unit timeslot, in
    /// (0, 1]. The mean request size is then g = ρ / ((N − 1)·p).
    pub request_prob: f64,
    /// Distribution of the packets a request brings.
    pub packets: Packets,
    /// s: matchings allocated and carried per unit timeslot, 1..=64 (a batch of the
    /// allocator; Theorem 1's upper bound is for s = 2).
    pub speedup: u32,
    /// Allocation policy and matching mode (the paper's: max-min, greedy).
    pub policy: Policy,
    pub mode: Mode,
    /// Unit timeslots run before measuring.
    pub warmup: u64,
    /// Unit timeslots measured, at least 1.
    pub timeslots: u64,
    /// Seed of the arrivals.
    pub seed: u64,
}

impl VoqParams {
    /// The proof sketch's workload (Appendix, proof of Theorem 1): uniform λ_ij =
    /// ρ/(N−1), a request every timeslot for every pair (p = 1) bringing Poisson(λ_ij)
    /// packets, max-min greedy allocation, 5,000 unit timeslots of warm-up and 50,000
    /// measured, seed 1.
    pub fn uniform(endpoints: usize, load: f64, speedup: u32) -> Self {
        VoqParams {
            endpoints,
            load,
            request_prob: 1.0,
            packets: Packets::Poisson,
            speedup,
            policy: Policy::MaxMin,
            mode: Mode::Greedy,
            warmup: 5_000,
            timeslots: 50_000,
            seed: 1,
        }
    }

    /// g, the mean packets per request.
    pub fn mean_packets(&self) -> f64 {
        self.load / ((self.endpoints.max(2) - 1) as f64 * self.request_prob)
    }

    /// V of eq. (4), the least with E(G²) <= V·E(G).
    pub fn v(&self) -> f64 {
        let g = self.mean_packets();
        match self.packets {
            Packets::Poisson => 1.0 + g,
            Packets::Geometric => 2.0 * g - 1.0,
        }
    }

    fn check(&self) -> Result<(), VoqError> {
        if !(2..=MAX_ENDPOINTS).contains(&self.endpoints) {
            return Err(VoqError::Endpoints(self.endpoints));
        }
        if !(self.load.is_finite() && self.load > 0.0) {
            return Err(VoqError::Load(self.load));
        }
        if !(self.request_prob > 0.0 && self.request_prob <= 1.0) {
            return Err(VoqError::RequestProb(self.request_prob));
        }
        let g = self.mean_packets();
        let ok = match self.packets {
            Packets::Poisson => g.is_finite(),
            Packets::Geometric => g.is_finite() && g >= 1.0,
        };
        if !ok {
            return Err(VoqError::MeanPackets(g));
        }
        crate::slots::check_width(self.speedup).map_err(|_| VoqError::Speedup(self.speedup))?;
        let all = self.warmup.checked_add(self.timeslots);
        if self.timeslots == 0 || all.is_none_or(|t| t > MAX_TIMESLOTS) {
            return Err(VoqError::Timeslots(self.timeslots));
        }
        Ok(())
    }
}

/// What one run measured, and Theorem 1's bounds for it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VoqResult {
    /// ρ(Λ), eq. (2): (N − 1)·p·g, every row and column sum of the uniform λ.
    pub load: f64,
    /// g, the mean packets per request.
    pub mean_packets: f64,
    /// V of eq. (4): E(G²)/E(G) (Poisson 1 + g, geometric 2g − 1).
    pub v: f64,
    /// Time average of Σ Q_ij(t) over the measured unit timeslots, sampled at the start
    /// of each (before its matchings are served): what Theorem 1 bounds.
    pub mean_queue: f64,
    /// Standard error of `mean_queue` by batch means (20 consecutive batches of the
    /// window; NaN with fewer than 2 timeslots).
    pub mean_queue_stderr: f64,
    /// Time average of Σ Q_ij sampled after each unit timeslot's matchings are served,
    /// before its arrivals: `mean_queue` minus the packets served per unit timeslot.
    pub mean_queue_after_service: f64,
    /// Largest Σ Q_ij sampled in the window.
    pub max_queue: u64,
    /// Time average, sampled as `mean_queue`, of Σ_j Z_j(t), where Z_j is one server of
    /// rate s fed by destination j's arrivals: Z_j(t + 1) = max(Z_j(t) − s, 0) + A_j(t).
    /// Any allocator's Σ Q_ij dominates it at every timeslot (at most s packets reach j
    /// per unit timeslot, and none before the timeslot after its arrival).
    pub lindley_mean: f64,
    /// Eq. (3): Nρ / (2(1 − ρ)), the lower bound for any allocator at speedup 1 on the
    /// uniform Poisson workload; infinite for ρ >= 1.
    pub lower_bound: f64,
    /// Eq. (4): Nρ(ρ + V) / (2(1 − ρ)), the upper bound for a maximal-matching
    /// allocator at speedup 2; infinite for ρ >= 1.
    pub upper_bound: f64,
    /// Packets that arrived in the window, per endpoint per unit timeslot (an estimate
    /// of ρ).
    pub arrival_rate: f64,
    /// Packets served in the window, per endpoint per unit timeslot.
    pub throughput: f64,
}

/// A run [`simulate`] refuses, before any work.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum VoqError {
    /// Fewer than 2 endpoints or more than [`MAX_ENDPOINTS`].
    Endpoints(usize),
    /// A load that is not a finite number above 0.
    Load(f64),
    /// A request probability outside (0, 1].
    RequestProb(f64),
    /// The mean request size g = ρ/((N − 1)p) this makes: not finite, or below 1 for
    /// geometric sizes.
    MeanPackets(f64),
    /// A speedup outside 1..=64.
    Speedup(u32),
    /// No measured timeslot, or more than [`MAX_TIMESLOTS`] in all.
    Timeslots(u64),
    /// The arbiter refused its configuration.
    Config(ConfigError),
    /// The arbiter refused a report (a pair with more than
    /// [`crate::MAX_OUTSTANDING`] packets queued: an overloaded run).
    Demand(DemandError),
    /// The arbiter granted a pair with no packet queued: the allocator broke the model
    /// (never expected; reported rather than hidden).
    Overgrant { src: u32, dst: u32 },
}

impl std::fmt::Display for VoqError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            VoqError::Endpoints(n) => write!(f, "{n} endpoints: 2..={MAX_ENDPOINTS}"),
            VoqError::Load(l) => write!(f, "load {l}: must be a finite number above 0"),
            VoqError::RequestProb(p) => write!(f, "request probability {p}: must be in (0, 1]"),
            VoqError::MeanPackets(g) => write!(
                f,
                "mean packets per request {g}: must be finite (at least 1 for geometric sizes)"
            ),
            VoqError::Speedup(s) => write!(f, "speedup {s}: must be in 1..=64"),
            VoqError::Timeslots(t) => write!(
                f,
                "{t} measured timeslots: at least 1, at most {MAX_TIMESLOTS} with the warm-up"
            ),
            VoqError::Config(e) => e.fmt(f),
            VoqError::Demand(e) => e.fmt(f),
            VoqError::Overgrant { src, dst } => {
                write!(f, "the arbiter granted {src} -> {dst} with nothing queued")
            }
        }
    }
}
impl std::error::Error for VoqError {}

/// SplitMix64 (Steele, Lea, Flood 2014): the arrivals' only randomness.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in (0, 1]: a logarithm of it is finite.
    fn open_unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }
}

/// The requests that bring packets, in order of (timeslot, source, destination). A
/// Bernoulli trial per pair and timeslot, thinned to the requests with at least one
/// packet (probability p·P(G >= 1)), is walked by geometric gaps between successes: the
/// work is per packet-bearing request, not per pair.
struct Arrivals {
    rng: SplitMix64,
    packets: Packets,
    g: f64,
    /// ln(1 − probability that a trial brings packets); 0 when every trial does.
    ln_miss: f64,
    /// Index of the next packet-bearing trial: timeslot × pairs + pair.
    next: u64,
}

impl Arrivals {
    fn new(p: &VoqParams) -> Self {
        let g = p.mean_packets();
        let hit = match p.packets {
            // P(G >= 1) = 1 − e^(−g).
            Packets::Poisson => p.request_prob * -(-g).exp_m1(),
            Packets::Geometric => p.request_prob,
        };
        let mut a = Arrivals {
            rng: SplitMix64(p.seed),
            packets: p.packets,
            g,
            ln_miss: (-hit).ln_1p(),
            next: 0,
        };
        a.next = a.gap();
        a
    }

    /// Failed trials before the next success.
    fn gap(&mut self) -> u64 {
        if self.ln_miss == 0.0 {
            return 0;
        }
        // Saturating: an astronomically long gap is "never".
        (self.rng.open_unit().ln() / self.ln_miss).floor() as u64
    }

    /// G given G >= 1.
    fn size(&mut self) -> u64 {
        let g = self.g;
        match self.packets {
            Packets::Geometric => {
                let q = 1.0 / g;
                if q >= 1.0 {
                    1
                } else {
                    1 + (self.rng.open_unit().ln() / (-q).ln_1p()).floor() as u64
                }
            }
            // Inversion of the zero-truncated Poisson: P(k) = g^k / (k! (e^g − 1)).
            Packets::Poisson if g <= 30.0 => {
                let u = self.rng.open_unit();
                let (mut k, mut prob) = (1u64, g / g.exp_m1());
                let mut cum = prob;
                while u > cum && prob > 0.0 {
                    k += 1;
                    prob *= g / k as f64;
                    cum += prob;
                }
                k
            }
            // Large means: count a unit-rate Poisson process's points in [0, g]
            // (P(0) < e^-30: redrawn).
            Packets::Poisson => loop {
                let (mut t, mut k) = (0.0, 0u64);
                loop {
                    t -= self.rng.open_unit().ln();
                    if t > g {
                        break;
                    }
                    k += 1;
                }
                if k > 0 {
                    break k;
                }
            },
        }
    }
}

/// Run the Appendix's model with the real allocator (see the module documentation) and
/// report the measured queues with Theorem 1's bounds.
pub fn simulate(p: &VoqParams) -> Result<VoqResult, VoqError> {
    p.check()?;
    let n = p.endpoints;
    let s = p.speedup as u64;
    let fabric = Fabric::full_bisection(n);
    let mut arb = Arbiter::new(&fabric, p.policy, p.mode, p.speedup).map_err(VoqError::Config)?;
    let mut batch = Batch::new();
    // Per pair (src * n + dst): packets queued, and the FCP total requested so far.
    let mut q = vec![0u64; n * n];
    let mut total = vec![0u64; n * n];
    // Per destination: the single server of rate s fed by its arrivals.
    let mut z = vec![0u64; n];
    let (mut queued, mut z_sum) = (0u64, 0u64);
    let mut arrivals = Arrivals::new(p);
    let pairs = (n * (n - 1)) as u64;
    const BATCHES: u64 = 20;
    let per_batch = p.timeslots.div_ceil(BATCHES);
    let mut batch_sums = [0f64; BATCHES as usize];
    let (mut sum, mut sum_after, mut sum_z) = (0f64, 0f64, 0f64);
    let (mut max_queue, mut arrived, mut served) = (0u64, 0u64, 0u64);
    for t in 0..p.warmup + p.timeslots {
        let measuring = t >= p.warmup;
        if measuring {
            sum += queued as f64;
            sum_z += z_sum as f64;
            batch_sums[((t - p.warmup) / per_batch) as usize] += queued as f64;
            max_queue = max_queue.max(queued);
        }
        arb.allocate(t * s, &mut batch);
        for g in batch.grants() {
            let k = g.src as usize * n + g.dst as usize;
            q[k] = q[k].checked_sub(1).ok_or(VoqError::Overgrant {
                src: g.src,
                dst: g.dst,
            })?;
        }
        let grants = batch.len() as u64;
        queued -= grants;
        for zj in z.iter_mut() {
            let d = (*zj).min(s);
            *zj -= d;
            z_sum -= d;
        }
        if measuring {
            sum_after += queued as f64;
            served += grants;
        }
        // This timeslot's arrivals: trials t * pairs .. (t + 1) * pairs.
        let end = (t + 1) * pairs;
        while arrivals.next < end {
            let k = (arrivals.next - t * pairs) as usize;
            let (src, d) = (k / (n - 1), k % (n - 1));
            let dst = d + (d >= src) as usize;
            let g = arrivals.size();
            let pair = src * n + dst;
            q[pair] += g;
            total[pair] += g;
            queued += g;
            z[dst] += g;
            z_sum += g;
            if measuring {
                arrived += g;
            }
            arb.request(src as u32, dst as u32, total[pair])
                .map_err(VoqError::Demand)?;
            arrivals.next = arrivals.next.saturating_add(1 + arrivals.gap());
        }
    }
    let slots = p.timeslots as f64;
    let mean = sum / slots;
    let used = p.timeslots.div_ceil(per_batch) as usize;
    let stderr = if p.timeslots < 2 || used < 2 {
        f64::NAN
    } else {
        // Batch means (the last batch may be shorter: weighted by its length).
        let mut var = 0.0;
        for (b, &bs) in batch_sums[..used].iter().enumerate() {
            let len = (p.timeslots - b as u64 * per_batch).min(per_batch) as f64;
            var += len * (bs / len - mean).powi(2);
        }
        (var / slots / (used - 1) as f64).sqrt()
    };
    let (rho, v) = (p.load, p.v());
    let nf = n as f64;
    let (lower, upper) = if rho < 1.0 {
        (
            // Fastpass Appendix, eq. (3).
            nf * rho / (2.0 * (1.0 - rho)),
            // Fastpass Appendix, eq. (4).
            nf * rho * (rho + v) / (2.0 * (1.0 - rho)),
        )
    } else {
        (f64::INFINITY, f64::INFINITY)
    };
    Ok(VoqResult {
        load: rho,
        mean_packets: p.mean_packets(),
        v,
        mean_queue: mean,
        mean_queue_stderr: stderr,
        mean_queue_after_service: sum_after / slots,
        max_queue,
        lindley_mean: sum_z / slots,
        lower_bound: lower,
        upper_bound: upper,
        arrival_rate: arrived as f64 / (slots * nf),
        throughput: served as f64 / (slots * nf),
    })
}
