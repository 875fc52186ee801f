//! What `[workload]` asks for, read once (config/workload.rs).

use super::cdf::Cdf;
use super::load::{Load, LoadOn};
use crate::units::Ps;

/// Background flows beside the workload (`workload.background_*`): Poisson arrivals,
/// a closed loop per host, or both.
#[derive(Debug, Clone)]
pub struct BackgroundSpec {
    pub poisson: Option<PoissonBackground>,
    pub closed_loop: Option<ClosedLoopSpec>,
}

/// Poisson background flows (`workload.background_load`, CP §6.4).
#[derive(Debug, Clone)]
pub struct PoissonBackground {
    pub load: Load,
    pub cdf: Cdf,
    pub scale: f64,
    pub scale_above: u64,
    /// The hosts it runs between: every host but those reserved (Fastpass's arbiters).
    pub hosts: Vec<u32>,
}

/// Every host keeps one flow of `size` bytes to a random other host running
/// (`workload.background_flows`, DeTail §8.1.2), in priority class `class`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClosedLoopSpec {
    pub size: u64,
    pub class: u8,
    /// The hosts that keep a flow running, and those a flow may go to.
    pub sources: Vec<u32>,
    pub destinations: Vec<u32>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FlowSpec {
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub start: Ps,
    /// The priority class the trace gives it (HPCC's `pg`), else the transport's.
    pub priority: Option<u8>,
}

/// `workload.kind = "incast"`.
#[derive(Debug, Clone)]
pub struct IncastSpec {
    pub all_to_all: bool,
    /// Hosts the senders are spread over (many_to_one).
    pub sources: Vec<u32>,
    pub receiver: u32,
    pub senders: u32,
    pub size: u64,
    pub rounds: u32,
    pub period: Option<Ps>,
    pub jitter: Ps,
}

/// `workload.kind = "poisson"`.
#[derive(Debug, Clone)]
pub struct PoissonSpec {
    pub load: Load,
    pub cdf: Cdf,
    pub sources: Vec<u32>,
    pub destinations: Vec<u32>,
    pub max_flows: Option<u64>,
    /// `workload.arrivals`: the gaps between arrivals.
    pub gaps: Gaps,
    /// `workload.matrix`: flows between racks by weight (sources and destinations are
    /// then every host).
    pub matrix: Option<std::sync::Arc<super::matrix::RackMatrix>>,
    /// `workload.max_link_load`: the rate is the one that loads the busiest link this
    /// much (with a matrix; `load` is then not read).
    pub max_link_load: Option<f64>,
}

/// The gaps between a flow workload's arrivals (`workload.arrivals`), of the mean the
/// load sets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Gaps {
    /// Poisson arrivals.
    Exponential,
    /// Log-normal, `workload.sigma` the shape (Parsimon's generator).
    LogNormal { sigma: f64 },
}

/// `workload.kind = "request_response"`, `"partition_aggregate"` or `"sequential"`.
/// A query is `sequence` rounds one after the other (1 but for sequential web
/// requests), each a fan-out of requests to distinct workers and their responses.
#[derive(Debug, Clone)]
pub struct QuerySpec {
    pub arrivals: QueryArrivals,
    pub queries: Option<u64>,
    /// Fan-outs, one drawn uniformly per round (none drawn when there is one).
    pub fanouts: Vec<u32>,
    pub request_size: u64,
    pub response: ResponseSize,
    /// Rounds per query, in series (`workload.sequence`).
    pub sequence: u32,
    /// Priority classes a query draws its class from uniformly (0..priorities); 1: the
    /// transport's classes.
    pub priorities: u8,
    pub clients: Vec<u32>,
    pub workers: Vec<u32>,
}

/// How queries arrive: all three are Poisson, the clients' rates summed.
#[derive(Debug, Clone, PartialEq)]
pub enum QueryArrivals {
    /// At the rate that makes the responses (their payload, or their bytes on the
    /// wire) this fraction of the clients' links (`workload.load`, `workload.load_on`).
    Load(Load),
    /// At this many queries per second per client (`workload.rate`).
    Rate(f64),
    /// Modulated on and off (`workload.burst_*`).
    OnOff(BurstSpec),
}

/// On/off modulation (DeTail §8.1): from the start of every `period`, queries arrive at
/// `burst_rate` for `length`, then at `rate` (possibly 0) for the rest; per second per
/// client.
#[derive(Debug, Clone, PartialEq)]
pub struct BurstSpec {
    pub period: Ps,
    pub length: Ps,
    pub burst_rate: f64,
    pub rate: f64,
}

/// `workload.kind = "short_long"`.
#[derive(Debug, Clone)]
pub struct ShortLongSpec {
    pub load: Load,
    pub short_fraction: f64,
    pub long_size: u64,
    pub request_size: u64,
    pub queries: Option<u64>,
    pub clients: Vec<u32>,
    pub workers: Vec<u32>,
}

#[derive(Debug, Clone)]
pub enum WorkloadSpec {
    Incast(IncastSpec),
    Poisson(PoissonSpec),
    Query(QuerySpec),
    ShortLong(ShortLongSpec),
    Trace(Vec<FlowSpec>),
}

#[derive(Debug, Clone)]
pub enum ResponseSize {
    Fixed(u64),
    /// Drawn per response.
    Cdf(Cdf),
    /// One of these (at least two), drawn uniformly per round of a query: all its
    /// responses have it.
    Choice(Vec<u64>),
}

impl ResponseSize {
    pub fn mean(&self) -> f64 {
        match self {
            ResponseSize::Fixed(s) => *s as f64,
            ResponseSize::Cdf(c) => c.mean(),
            ResponseSize::Choice(v) => mean(v),
        }
    }

    /// The mean weight of a response, counted as `on` says (payload: [`Self::mean`]).
    pub fn mean_on(&self, on: LoadOn) -> f64 {
        match (on, self) {
            (LoadOn::Payload, _) => self.mean(),
            (_, ResponseSize::Fixed(s)) => on.flow_bytes(*s),
            (_, ResponseSize::Cdf(c)) => on.cdf_mean(c),
            (_, ResponseSize::Choice(v)) => on.sizes_mean(v),
        }
    }
}

/// The mean of a non-empty list.
pub fn mean(v: &[impl Copy + Into<u64>]) -> f64 {
    v.iter().map(|&x| x.into() as f64).sum::<f64>() / v.len() as f64
}
