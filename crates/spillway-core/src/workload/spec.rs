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

#[derive(Debug, Clone)]
pub enum WorkloadSpec {
    Incast(IncastSpec),
    Poisson {
        load: f64,
        cdf: Cdf,
        sources: Vec<u32>,
        destinations: Vec<u32>,
        max_flows: Option<u64>,
    },
    Query {
        load: f64,
        queries: Option<u64>,
        fanout: u32,
        request_size: u64,
        response: ResponseSize,
        clients: Vec<u32>,
        workers: Vec<u32>,
    },
    ShortLong {
        load: f64,
        short_fraction: f64,
        long_size: u64,
        request_size: u64,
        queries: Option<u64>,
        clients: Vec<u32>,
        workers: Vec<u32>,
    },
    Trace {
        flows: Vec<FlowSpec>,
    },
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
