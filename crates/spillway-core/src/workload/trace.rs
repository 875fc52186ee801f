//! Explicit flows at given start times (`[[workload.flows]]`, a CSV file or HPCC's
//! flow.txt).

use super::flow::{NewFlow, CLASS_TRACE, NO_QUERY};
use super::spec::FlowSpec;
use crate::units::Ps;

/// Explicit flows at given start times.
pub struct Trace {
    /// In order of start time.
    flows: Vec<FlowSpec>,
    next: usize,
}

impl Trace {
    pub fn new(flows: &[FlowSpec]) -> Trace {
        let mut flows = flows.to_vec();
        flows.sort_by_key(|f| f.start);
        Trace { flows, next: 0 }
    }

    pub fn next_time(&self) -> Option<Ps> {
        self.flows.get(self.next).map(|f| f.start)
    }

    pub fn exhausted(&self) -> bool {
        self.next >= self.flows.len()
    }

    pub fn generate(&mut self, now: Ps, out: &mut Vec<NewFlow>) {
        while let Some(f) = self.flows.get(self.next) {
            if f.start > now {
                break;
            }
            out.push(NewFlow {
                src: f.src,
                dst: f.dst,
                size: f.size,
                class: CLASS_TRACE,
                query: NO_QUERY,
                tag: 0,
                priority: f.priority,
            });
            self.next += 1;
        }
    }
}
