//! The samplers: what a `Sample` event records, each at its own interval (the state of
//! the network for timeseries.parquet, every port's queued bytes, every active flow's
//! goodput). A sample only reads the components' state, so no other result depends on
//! whether or how often it is taken.

use super::event::Sampled;
use crate::config::RunSpec;
use crate::fabric::Fabric;
use crate::host::Hosts;
use crate::output::counters::Counters;
use crate::output::queues::{QueueRow, QueueSamples};
use crate::output::timeseries::TimeseriesRecords;
use crate::switch::Switch;
use crate::units::Ps;

const SAMPLERS: [Sampled; 3] = [
    Sampled::Timeseries,
    Sampled::Queues,
    Sampled::FlowThroughput,
];

pub struct Sampling {
    /// Each sampler's interval, in [`SAMPLERS`] order; `None` when it is off.
    every: [Option<Ps>; 3],
    timeseries: TimeseriesRecords,
    /// `run.queue_sample_interval`: ports in ports.parquet's order.
    queues: Option<QueueSamples>,
}

impl Sampling {
    /// The samplers `run` turns on, for a network of `ports` ports (NICs included).
    pub fn new(run: &RunSpec, ports: usize) -> Sampling {
        Sampling {
            every: [run.timeseries, run.queue_samples, run.flow_throughput],
            timeseries: TimeseriesRecords::default(),
            queues: run.queue_samples.map(|_| QueueSamples::new(ports)),
        }
    }

    /// The samplers that are on, each with its interval (its first sample is one
    /// interval after the start).
    pub fn on(&self) -> impl Iterator<Item = (Sampled, Ps)> + '_ {
        SAMPLERS
            .into_iter()
            .zip(self.every)
            .filter_map(|(s, e)| Some((s, e?)))
    }

    /// The interval of sampler `what`, which is on.
    pub fn every(&self, what: Sampled) -> Ps {
        self.every[what as usize].expect("only samplers that are on sample")
    }

    /// Sampler `what` samples at `now`.
    pub fn sample(
        &mut self,
        what: Sampled,
        now: Ps,
        hosts: &mut Hosts,
        switches: &[Switch],
        counters: &Counters,
        fabric: &Fabric,
    ) {
        match what {
            Sampled::Timeseries => {
                let t = &mut self.timeseries;
                t.time_ps.push(now);
                t.active_flows.push(hosts.active_flows());
                t.outstanding_bytes.push(hosts.outstanding_bytes());
                t.flows_started.push(counters.flows_started);
                t.drops.push(counters.drops);
            }
            Sampled::Queues => {
                let q = self.queues.as_mut().expect("sampled only when on");
                q.begin();
                // Ports by their place in the fabric (ports.parquet's order): in a parallel
                // run a process's switches are some of them, the others' absent.
                let base = hosts.nic_base();
                for (i, n) in hosts.nics().iter().enumerate() {
                    q.record(fabric.first_port(base + i as u32), n.port().bytes());
                }
                let first = fabric.hosts();
                for (i, s) in switches.iter().enumerate() {
                    let base = fabric.first_port(first + i as u32);
                    for (j, p) in s.ports().iter().enumerate() {
                        q.record(base + j, p.bytes());
                    }
                }
            }
            Sampled::FlowThroughput => hosts.sample_flow_throughput(now),
        }
    }

    /// The timeseries' rows taken since the last call.
    pub fn take_timeseries(&mut self) -> TimeseriesRecords {
        std::mem::take(&mut self.timeseries)
    }

    pub fn has_timeseries(&self) -> bool {
        self.every[Sampled::Timeseries as usize].is_some()
    }

    /// What port `k` (in ports.parquet's order) reports of its sampled queue.
    pub fn queue_row(&self, k: usize) -> QueueRow {
        self.queues.as_ref().map_or(QueueRow::NONE, |q| q.row(k))
    }
}
