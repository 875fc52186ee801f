//! Open-loop Poisson flows between random hosts, sizes from an empirical CDF (the
//! workload `poisson`, and the background traffic beside any workload).

use super::arrivals::Arrivals;
use super::cdf::Cdf;
use super::flow::{NewFlow, CLASS_FLOW, NO_QUERY};
use super::load::Load;
use super::matrix::RackMatrix;
pub use super::spec::Gaps;
use crate::rng::Rng;
use crate::units::Ps;
use std::sync::Arc;

/// Open-loop Poisson arrivals, sizes from an empirical CDF.
pub struct Poisson {
    cdf: Cdf,
    /// Flows between racks by weight, when the workload gives a matrix.
    matrix: Option<Arc<RackMatrix>>,
    sources: Vec<u32>,
    destinations: Vec<u32>,
    arrivals: Arrivals,
    rng: Rng,
}

impl Poisson {
    /// Arrivals at the rate that makes the flows `load` of the sources' links:
    /// λ (flows/s) = load · (sending hosts · link rate) / (8 · mean size), the size
    /// counted as `load.on` says (payload, or bytes on the wire).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        load: Load,
        cdf: &Cdf,
        sources: Vec<u32>,
        destinations: Vec<u32>,
        max_flows: Option<u64>,
        link_rate: u64,
        gaps: Gaps,
        mut rng: Rng,
    ) -> Poisson {
        let rate =
            load.fraction * sources.len() as f64 * link_rate as f64 / (8.0 * load.on.cdf_mean(cdf));
        let arrivals = match gaps {
            Gaps::Exponential => Arrivals::new(rate, max_flows, &mut rng),
            Gaps::LogNormal { sigma } => Arrivals::lognormal(rate, sigma, max_flows, &mut rng),
        };
        Poisson {
            cdf: cdf.clone(),
            matrix: None,
            sources,
            destinations,
            arrivals,
            rng,
        }
    }

    /// Flows between racks by `matrix`'s weights, not between uniform sources and
    /// destinations.
    pub fn with_matrix(mut self, matrix: Option<Arc<RackMatrix>>) -> Poisson {
        self.matrix = matrix;
        self
    }

    pub fn next_time(&self) -> Option<Ps> {
        self.arrivals.next_time()
    }

    pub fn exhausted(&self) -> bool {
        self.arrivals.exhausted()
    }

    pub fn generate(&mut self, now: Ps, out: &mut Vec<NewFlow>) {
        while self.arrivals.due(now) {
            let (src, dst) = match &self.matrix {
                Some(m) => m.sample(&mut self.rng),
                None => {
                    let src = self.sources[self.rng.below(self.sources.len() as u64) as usize];
                    let dst = loop {
                        let d = self.destinations
                            [self.rng.below(self.destinations.len() as u64) as usize];
                        if d != src {
                            break d;
                        }
                    };
                    (src, dst)
                }
            };
            let size = self.cdf.sample(&mut self.rng);
            out.push(NewFlow {
                src,
                dst,
                size,
                class: CLASS_FLOW,
                query: NO_QUERY,
                tag: 0,
                priority: None,
            });
            self.arrivals.advance(&mut self.rng);
        }
    }
}
