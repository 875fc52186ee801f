//! What `[workload]` asks for, read once (config/workload.rs).

use super::cdf::Cdf;
use crate::units::Ps;

/// Poisson background flows beside the workload (`workload.background_*`).
#[derive(Debug, Clone)]
pub struct BackgroundSpec {
    pub load: f64,
    pub cdf: Cdf,
    pub scale: f64,
    pub scale_above: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FlowSpec {
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub start: Ps,
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
    pub load: f64,
    pub cdf: Cdf,
    pub sources: Vec<u32>,
    pub destinations: Vec<u32>,
    pub max_flows: Option<u64>,
}

/// `workload.kind = "request_response"` or `"partition_aggregate"`.
#[derive(Debug, Clone)]
pub struct QuerySpec {
    pub load: f64,
    pub queries: Option<u64>,
    pub fanout: u32,
    pub request_size: u64,
    pub response: ResponseSize,
    pub clients: Vec<u32>,
    pub workers: Vec<u32>,
}

/// `workload.kind = "short_long"`.
#[derive(Debug, Clone)]
pub struct ShortLongSpec {
    pub load: f64,
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
    Cdf(Cdf),
}

impl ResponseSize {
    pub fn mean(&self) -> f64 {
        match self {
            ResponseSize::Fixed(s) => *s as f64,
            ResponseSize::Cdf(c) => c.mean(),
        }
    }
}
