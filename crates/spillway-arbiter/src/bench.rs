//! Benchmarks of issue 6 (`spillway bench arbiter`): the paper's allocation workload
//! (§7.3 Experiment F) and path-selection workload (Experiment G).
//!
//! Allocation is measured in thread CPU time (`CLOCK_THREAD_CPUTIME_ID`), as the
//! original was: immune to the other work on a shared machine. The workload is generated
//! before the clock starts. As in the paper's Experiment F (§7.3), where a stress-test
//! core feeds demands to the alloc-cores (the original's `add_backlog` updates the demand
//! table and queues new pairs on that core), the headline figures time the allocation
//! core only: `Arbiter::allocate`. The demand reports (`Arbiter::request`, comm-core
//! work, §6.2) run on the same thread between batches and are timed separately
//! (`report_us_per_timeslot`); `gbps_per_core_with_reports` counts both. Path
//! selection is timed per timeslot with the monotonic clock (a vDSO read, ~20 ns; the
//! thread CPU clock is a system call too coarse for a few microseconds), reported as
//! median and p99, which preemption barely moves.

use crate::alloc::{Arbiter, Batch, Mode, Policy};
pub use crate::cputime::thread_cpu_seconds;
use crate::demand::{DemandError, Flow};
use crate::fabric::{ConfigError, Fabric};
use crate::pathsel::{TwoTier, VirtualCores};
use crate::pipeline::Pipeline;
use std::time::Instant;

/// Bits in one timeslot (one 1500-byte MTU).
pub const BITS_PER_TIMESLOT: f64 = 12_000.0;
/// Endpoint link rate (Gbit/s) in the paper's workload.
pub const LINK_GBPS: f64 = 10.0;
/// Real-time budget per timeslot: 1500 B at 10 Gbit/s (§3).
pub const REALTIME_US: f64 = 1.2;

/// xorshift64*: small, fast, deterministic (the benchmark's only randomness).
pub struct Rng(u64);
impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() >> 32) * n) >> 32
    }
}

/// Request sizes.
#[derive(Clone, Copy, Debug)]
pub enum Sizes {
    /// Every request is this many MTUs (Experiment F: "requests are for 10 MTUs").
    Fixed(u64),
    /// Geometric with this mean, at least 1 (Experiment G: exponential, mean 10).
    Exponential(f64),
}

impl Sizes {
    /// Mean request size in MTUs, if the sizes are valid: a whole number of MTUs from 1,
    /// or a finite mean of at least 1 (a geometric size is at least 1 MTU).
    fn mean(self) -> Option<f64> {
        match self {
            Sizes::Fixed(s) if s >= 1 => Some(s as f64),
            Sizes::Exponential(m) if m.is_finite() && m >= 1.0 => Some(m),
            _ => None,
        }
    }
}

/// Most endpoints a generated workload may have: the endpoint-side totals (n^2 words)
/// and the arbiter's demand table (n^2 records of 32 bytes, 512 MB at this size).
pub const MAX_ENDPOINTS: u32 = 4096;

/// Most requests a generated workload may hold (24 bytes each, generated before the clock
/// starts): 2^24, about 400 MB. The benchmark's largest workload has ~3.4 million.
pub const MAX_REQUESTS: f64 = (1u64 << 24) as f64;

/// Most samples of a path-selection measurement (8 bytes each).
pub const MAX_SAMPLES: usize = 1 << 24;

/// A workload the benchmark cannot generate or measure: refused before any memory is
/// taken for it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WorkloadError {
    /// Fewer than 2 endpoints (no pair to request for), or more than [`MAX_ENDPOINTS`].
    Endpoints(u32),
    /// An offered load that is not a finite number above 0.
    Load(f64),
    /// Request sizes below 1 MTU, or a mean that is not finite.
    Size,
    /// No batch to measure, or more than `u32::MAX` in all (batch indices are u32).
    Batches(u64),
    /// About `requests` requests: more than [`MAX_REQUESTS`].
    TooLarge { requests: f64 },
    /// No sample to measure: 0 samples, fewer timeslots than one batch, or more than
    /// [`MAX_SAMPLES`].
    Samples(u64),
    /// The arbiter refused the configuration (batch width, pipeline stages).
    Config(ConfigError),
    /// The arbiter refused a report (request sizes so large that a pair would have more
    /// than [`crate::MAX_OUTSTANDING`] outstanding).
    Demand(DemandError),
}

impl From<ConfigError> for WorkloadError {
    fn from(e: ConfigError) -> Self {
        WorkloadError::Config(e)
    }
}

impl From<DemandError> for WorkloadError {
    fn from(e: DemandError) -> Self {
        WorkloadError::Demand(e)
    }
}

impl std::fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            WorkloadError::Endpoints(n) => {
                write!(f, "{n} endpoints: a workload needs 2..={MAX_ENDPOINTS}")
            }
            WorkloadError::Load(l) => {
                write!(f, "load {l}: the offered load must be a finite number above 0")
            }
            WorkloadError::Size => write!(
                f,
                "request sizes must be at least 1 MTU, with a finite mean"
            ),
            WorkloadError::Batches(b) => {
                write!(f, "{b} batches: at least 1 measured, at most {} in all", u32::MAX)
            }
            WorkloadError::TooLarge { requests } => write!(
                f,
                "about {requests:.3e} requests: more than the {MAX_REQUESTS:.3e} a workload may hold"
            ),
            WorkloadError::Samples(n) => {
                write!(f, "{n} samples: at least 1, at most {MAX_SAMPLES}")
            }
            WorkloadError::Config(e) => e.fmt(f),
            WorkloadError::Demand(e) => e.fmt(f),
        }
    }
}
impl std::error::Error for WorkloadError {}

/// Whether [`poisson_requests`] can generate this workload: `n` endpoints, an offered
/// load (MTUs per endpoint per timeslot), `batches` batches of `width` timeslots (at
/// least one), and about [`MAX_REQUESTS`] requests at most. A load that is not finite or
/// not above 0 used to run the generator's clock backwards or nowhere, holding every
/// request it made: gigabytes until memory ran out.
pub fn check_workload(
    n: u32,
    load: f64,
    sizes: Sizes,
    width: u32,
    batches: u64,
) -> Result<(), WorkloadError> {
    if !(2..=MAX_ENDPOINTS).contains(&n) {
        return Err(WorkloadError::Endpoints(n));
    }
    if !(load.is_finite() && load > 0.0) {
        return Err(WorkloadError::Load(load));
    }
    let mean = sizes.mean().ok_or(WorkloadError::Size)?;
    crate::slots::check_width(width)?;
    if batches == 0 || batches > u32::MAX as u64 {
        return Err(WorkloadError::Batches(batches));
    }
    let requests = n as f64 * load * (batches * width as u64) as f64 / mean;
    if requests > MAX_REQUESTS {
        return Err(WorkloadError::TooLarge { requests });
    }
    Ok(())
}

/// A generated request: `(batch, src, dst, total)`, see [`poisson_requests`].
pub type Request = (u32, u32, u32, u64);

/// The requests of [`poisson_requests`] reported by batch `b` that `*next` has not
/// passed yet; advances `*next` past them.
pub fn due<'a>(reqs: &'a [Request], next: &mut usize, b: u64) -> &'a [Request] {
    let start = *next;
    while *next < reqs.len() && reqs[*next].0 as u64 <= b {
        *next += 1;
    }
    &reqs[start..*next]
}

/// Poisson requests, uniform source and destination (Experiment F/G), grouped by the
/// batch in which they are reported: `(batch, src, dst, total)` where `total` is the
/// endpoint's FCP aggregate count after this request (computed here, outside the timed
/// region: it is the endpoint's work, not the arbiter's). The workload must pass
/// [`check_workload`].
pub fn poisson_requests(
    n: u32,
    load: f64,
    sizes: Sizes,
    width: u32,
    batches: u64,
    seed: u64,
) -> Result<Vec<Request>, WorkloadError> {
    check_workload(n, load, sizes, width, batches)?;
    let mut rng = Rng::new(seed);
    let mean = sizes.mean().ok_or(WorkloadError::Size)?;
    // Offered load = MTUs per endpoint per timeslot; requests per timeslot network-wide.
    let rate = n as f64 * load / mean;
    let horizon = (batches * width as u64) as f64;
    let mut t = 0.0;
    let mut out = Vec::new();
    let mut totals = vec![0u64; (n * n) as usize];
    loop {
        t += -(1.0 - rng.unit()).ln() / rate;
        if t >= horizon {
            break;
        }
        let src = rng.below(n as u64) as u32;
        let mut dst = rng.below(n as u64 - 1) as u32;
        if dst >= src {
            dst += 1;
        }
        let size = match sizes {
            Sizes::Fixed(s) => s,
            Sizes::Exponential(m) => {
                // Geometric on {1, 2, ...} with mean m.
                let p = 1.0 / m;
                1 + ((1.0 - rng.unit()).ln() / (1.0 - p).ln()).floor() as u64
            }
        };
        let k = (src * n + dst) as usize;
        totals[k] += size;
        out.push(((t as u64 / width as u64) as u32, src, dst, totals[k]));
    }
    Ok(out)
}

#[derive(Clone, Copy, Debug)]
pub struct AllocResult {
    pub load: f64,
    pub mode: Mode,
    pub us_per_timeslot: f64,
    pub utilization: f64,
    /// Allocated bits per CPU-second of the allocation core(s) (Experiment F).
    pub gbps_per_core: f64,
    /// CPU time of the demand reports (comm-core work), per timeslot.
    pub report_us_per_timeslot: f64,
    /// Allocated bits per CPU-second of allocation and reports together.
    pub gbps_per_core_with_reports: f64,
    /// CPU time per timeslot of the allocation work that cannot overlap between batches:
    /// all of it on one core; in the pipeline, what stages do after their input has
    /// ended ([`Pipeline::serial_cpu_seconds`]), a lower bound of `us_per_timeslot`
    /// however many stages run.
    pub serial_us_per_timeslot: f64,
}

/// How many times each single-core measurement is repeated; the run with the least
/// allocation CPU time is reported. Thread CPU time still grows when other jobs share
/// the cores (caches, memory bandwidth); the least of a few identical runs is the best
/// estimate of the arbiter's own cost (the same workload and seed every time).
pub const REPS: u32 = 3;

/// An allocation workload as the benchmark measures it: Poisson requests of 10 MTUs
/// ([`poisson_requests`] from `seed`) at offered `load` on a full-bisection fabric of `n`
/// endpoints, allocated in batches of `width` timeslots: `warm` batches unmeasured, then
/// `batches` measured (at least one).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AllocWorkload {
    pub n: u32,
    pub load: f64,
    pub width: u32,
    pub warm: u64,
    pub batches: u64,
    pub seed: u64,
}

impl AllocWorkload {
    /// The fabric and every batch's requests (warm-up included), generated before any
    /// clock starts.
    pub fn generate(&self) -> Result<(Fabric, Vec<Request>), WorkloadError> {
        let fabric = Fabric::full_bisection(self.n as usize);
        // A result of no measured batches would be NaN.
        if self.batches == 0 {
            return Err(WorkloadError::Batches(0));
        }
        let all = self
            .warm
            .checked_add(self.batches)
            .ok_or(WorkloadError::Batches(u64::MAX))?;
        let reqs = poisson_requests(
            self.n,
            self.load,
            Sizes::Fixed(10),
            self.width,
            all,
            self.seed,
        )?;
        Ok((fabric, reqs))
    }

    /// The result of the measured batches: `granted` timeslots, `alloc_cpu` seconds of
    /// allocation and `report_cpu` of demand reports.
    fn result(&self, mode: Mode, granted: u64, alloc_cpu: f64, report_cpu: f64) -> AllocResult {
        let slots = (self.batches * self.width as u64) as f64;
        let bits = granted as f64 * BITS_PER_TIMESLOT;
        AllocResult {
            load: self.load,
            mode,
            us_per_timeslot: alloc_cpu / slots * 1e6,
            utilization: granted as f64 / (slots * self.n as f64),
            gbps_per_core: bits / alloc_cpu / 1e9,
            report_us_per_timeslot: report_cpu / slots * 1e6,
            gbps_per_core_with_reports: bits / (alloc_cpu + report_cpu) / 1e9,
            serial_us_per_timeslot: alloc_cpu / slots * 1e6,
        }
    }
}

/// [`alloc_1core_once`], [`REPS`] times: the run with the least allocation CPU time.
pub fn alloc_1core(w: &AllocWorkload, mode: Mode) -> Result<AllocResult, WorkloadError> {
    let mut best: Option<AllocResult> = None;
    for _ in 0..REPS {
        let r = alloc_1core_once(w, mode)?;
        if best.is_none_or(|b| r.us_per_timeslot < b.us_per_timeslot) {
            best = Some(r);
        }
    }
    best.ok_or(WorkloadError::Samples(0))
}

/// Single-threaded allocation of the workload, in `mode`.
pub fn alloc_1core_once(w: &AllocWorkload, mode: Mode) -> Result<AllocResult, WorkloadError> {
    let (fabric, reqs) = w.generate()?;
    let (width, warm) = (w.width, w.warm);
    let mut arb = Arbiter::new(&fabric, Policy::MaxMin, mode, width)?;
    let mut out = Batch::new();
    let (mut granted, mut r) = (0u64, 0usize);
    let (mut alloc_cpu, mut report_cpu) = (0.0, 0.0);
    for b in 0..warm + w.batches {
        if b == warm {
            granted = 0;
            (alloc_cpu, report_cpu) = (0.0, 0.0);
        }
        let t0 = thread_cpu_seconds();
        for &(_, s, d, total) in due(&reqs, &mut r, b) {
            arb.request(s, d, total)?;
        }
        let t1 = thread_cpu_seconds();
        arb.allocate(b * width as u64, &mut out);
        let t2 = thread_cpu_seconds();
        granted += out.len() as u64;
        report_cpu += t1 - t0;
        alloc_cpu += t2 - t1;
    }
    Ok(w.result(mode, granted, alloc_cpu, report_cpu))
}

/// The pipeline with `stages` threads. `gbps_per_core` divides by the CPU time of the
/// allocator threads; the feeding thread's demand reports (comm-core work) are
/// `report_us_per_timeslot` and count in `gbps_per_core_with_reports`.
/// `us_per_timeslot` is wall-clock time per timeslot: what the pipeline sustains.
pub fn alloc_pipeline(w: &AllocWorkload, stages: usize) -> Result<AllocResult, WorkloadError> {
    let (fabric, reqs) = w.generate()?;
    let (width, warm, batches) = (w.width, w.warm, w.batches);
    let mut pipe = Pipeline::new(&fabric, stages, width)?;
    let (mut granted, mut r) = (0u64, 0usize);
    let mut feed_cpu = 0.0;
    let (mut alloc_cpu0, mut serial0) = (0.0, 0.0);
    let mut wall0 = Instant::now();
    for b in 0..warm + batches {
        if b == warm {
            while pipe.in_flight() > 0 {
                let x = pipe.recv();
                pipe.recycle(x);
            }
            granted = 0;
            alloc_cpu0 = pipe.cpu_seconds();
            serial0 = pipe.serial_cpu_seconds();
            wall0 = Instant::now();
        }
        let c0 = thread_cpu_seconds();
        for &(_, s, d, total) in due(&reqs, &mut r, b) {
            pipe.request(s, d, total)?;
        }
        pipe.allocate(b * width as u64);
        if b >= warm {
            feed_cpu += thread_cpu_seconds() - c0;
        }
        if pipe.in_flight() > stages {
            let x = pipe.recv();
            if b >= warm {
                granted += x.len() as u64;
            }
            pipe.recycle(x);
        }
    }
    while pipe.in_flight() > 0 {
        let x = pipe.recv();
        granted += x.len() as u64;
        pipe.recycle(x);
    }
    let wall = wall0.elapsed().as_secs_f64();
    let cpu = pipe.cpu_seconds() - alloc_cpu0;
    let mut res = w.result(Mode::Greedy, granted, cpu, feed_cpu);
    // Wall-clock time per timeslot is what the pipeline sustains.
    res.us_per_timeslot = wall / (batches * width as u64) as f64 * 1e6;
    res.serial_us_per_timeslot =
        (pipe.serial_cpu_seconds() - serial0) / (batches * width as u64) as f64 * 1e6;
    Ok(res)
}

/// Highest offered load that one core allocates within the real-time budget, found by
/// bisection; returns (load, achieved Tbit/s) for the allocation core alone (Experiment
/// F) and, second, for allocation plus demand reports on the same core.
pub fn realtime_capacity(
    n: u32,
    mode: Mode,
    width: u32,
    batches: u64,
) -> Result<[(f64, f64); 2], WorkloadError> {
    let us = |r: &AllocResult, with_reports: bool| {
        r.us_per_timeslot
            + if with_reports {
                r.report_us_per_timeslot
            } else {
                0.0
            }
    };
    let tbps = |r: &AllocResult| r.utilization * n as f64 * LINK_GBPS / 1000.0;
    // The workload at each load tried: a quarter of the batches to warm up, seed 7.
    let at = |load| AllocWorkload {
        n,
        load,
        width,
        warm: batches / 4,
        batches,
        seed: 7,
    };
    let mut out = [(0.0, 0.0); 2];
    for (i, with_reports) in [false, true].into_iter().enumerate() {
        let (mut lo, mut hi) = (0.05, 1.0);
        let top = alloc_1core(&at(hi), mode)?;
        if us(&top, with_reports) <= REALTIME_US {
            out[i] = (hi, tbps(&top));
            continue;
        }
        for _ in 0..7 {
            let mid = (lo + hi) / 2.0;
            let r = alloc_1core(&at(mid), mode)?;
            if us(&r, with_reports) <= REALTIME_US {
                lo = mid;
                out[i] = (mid, tbps(&r));
            } else {
                hi = mid;
            }
        }
    }
    Ok(out)
}

/// Median and p99 of a sample (not empty), in microseconds.
fn median_p99(v: &mut [f64]) -> (f64, f64) {
    debug_assert!(!v.is_empty());
    v.sort_unstable_by(|a, b| a.total_cmp(b));
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.99))
}

/// The path-selection benchmark's network: 16 racks x 32 endpoints, 4 cores at 8x the
/// endpoint rate (32 virtual cores).
pub fn pathsel_512() -> TwoTier {
    let rack_of: Vec<u32> = (0..512).map(|e| e / 32).collect();
    TwoTier::new(rack_of, VirtualCores::new(&[8; 4])).expect("16 racks")
}

/// Random full permutations of `pathsel_512`'s endpoints, as matchings listed by source:
/// each `next` reshuffles the permutation in place (Fisher-Yates) and rewrites `flows`.
pub struct Permutations {
    rng: Rng,
    perm: Vec<u32>,
}

impl Permutations {
    pub fn new(seed: u64) -> Self {
        Permutations {
            rng: Rng::new(seed),
            perm: (0..512).collect(),
        }
    }

    pub fn next(&mut self, flows: &mut Vec<Flow>) {
        for i in (1..512).rev() {
            self.perm.swap(i, self.rng.below(i as u64 + 1) as usize);
        }
        flows.clear();
        flows.extend((0..512u32).map(|s| Flow {
            src: s,
            dst: self.perm[s as usize],
        }));
    }
}

/// Path selection on full random permutations of [`pathsel_512`]'s network: `samples`
/// permutations, 1..=[`MAX_SAMPLES`].
pub fn pathsel_permutations(samples: usize, seed: u64) -> Result<(f64, f64), WorkloadError> {
    if !(1..=MAX_SAMPLES).contains(&samples) {
        return Err(WorkloadError::Samples(samples as u64));
    }
    let mut sel = pathsel_512();
    let mut perms = Permutations::new(seed);
    let mut flows = Vec::with_capacity(512);
    let mut out = Vec::with_capacity(512);
    let mut times = Vec::with_capacity(samples);
    for _ in 0..samples {
        perms.next(&mut flows);
        let t = Instant::now();
        sel.select(&flows, &mut out).expect("non-blocking");
        times.push(t.elapsed().as_secs_f64() * 1e6);
    }
    Ok(median_p99(&mut times))
}

/// Path selection of the allocator's own matchings (Experiment G: exponential sizes,
/// mean 10 MTUs) at an offered load: (median, p99) per timeslot, over `timeslots` (at
/// least one batch of 64).
pub fn pathsel_allocator(
    load: f64,
    timeslots: u64,
    seed: u64,
) -> Result<(f64, f64), WorkloadError> {
    let n = 512u32;
    let width = 64u32;
    let fabric = Fabric::full_bisection(n as usize);
    let batches = timeslots / width as u64;
    if batches == 0 || timeslots > MAX_SAMPLES as u64 {
        return Err(WorkloadError::Samples(timeslots));
    }
    let warm = 20;
    let reqs = poisson_requests(
        n,
        load,
        Sizes::Exponential(10.0),
        width,
        warm + batches,
        seed,
    )?;
    let mut arb = Arbiter::new(&fabric, Policy::MaxMin, Mode::Greedy, width)?;
    let mut sel = pathsel_512();
    let (mut out, mut paths) = (Batch::new(), Vec::new());
    let mut by_slot: Vec<Vec<Flow>> = (0..width).map(|_| Vec::new()).collect();
    let mut times = Vec::new();
    let mut r = 0;
    for b in 0..warm + batches {
        for &(_, s, d, total) in due(&reqs, &mut r, b) {
            arb.request(s, d, total)?;
        }
        arb.allocate(b * width as u64, &mut out);
        if b < warm {
            continue;
        }
        by_slot.iter_mut().for_each(Vec::clear);
        for g in out.grants() {
            by_slot[g.slot as usize].push(g.flow());
        }
        for flows in &by_slot {
            let t = Instant::now();
            sel.select(flows, &mut paths).expect("non-blocking");
            times.push(t.elapsed().as_secs_f64() * 1e6);
        }
    }
    Ok(median_p99(&mut times))
}
