//! A run of a scenario: the whole fabric in one process ([`Sim`]), or cut into logical
//! processes run in parallel ([`Parallel`]) when `run.partitions` is more than one. The
//! bindings, the digest and the benchmarks drive a run through this, whichever it is.

use super::context::StopReason;
use super::parallel::{Parallel, ParallelStats};
use super::Sim;
use crate::config::{Scenario, ScenarioError};
use crate::fabric::partition::Partition;
use crate::fabric::topology::Shape;
use crate::fabric::Fabric;
use crate::output::counters::Counters;
use crate::output::flow_throughput::FlowThroughputRecords;
use crate::output::flows::FlowRecords;
use crate::output::hpcc::FctWriter;
use crate::output::pings::PingRecords;
use crate::output::ports::PortRecords;
use crate::output::timeseries::TimeseriesRecords;
use crate::packet::wire::wire_bytes;
use crate::switch::overflow::Overflow;
use crate::switch::SwitchKind;
use crate::units::Ps;
use crate::workload::QueryRecord;
use std::sync::Arc;

/// Below this many hosts `run.threads = "auto"` takes one thread: a window's work is
/// too small to share (docs/performance.md § Parallel runs).
const AUTO_THREADS_FROM_HOSTS: u32 = 64;

#[allow(clippy::large_enum_variant)]
pub enum Run {
    Whole(Sim),
    Parallel(Box<Parallel>),
}

impl Run {
    pub fn new(sc: &Scenario) -> Result<Run, ScenarioError> {
        let fabric = Sim::fabric(sc)?;
        let n = sc
            .run
            .partitions
            .unwrap_or_else(|| Partition::auto(fabric.shape(), fabric.hosts()));
        if n == 1 {
            return Ok(Run::Whole(Sim::build(sc, Arc::new(fabric), None)?));
        }
        // A top-tier switch is split by its egress ports (one cut crossed per packet
        // between units, not two) where nothing it does joins its ports: output-queued
        // (no input queues, no flow control) and nothing sent back toward a source.
        // (A shared buffer joins them too: the switch's pool is one process's.)
        let split_top = sc.switch.kind == SwitchKind::Oq
            && matches!(sc.switch.overflow, Overflow::Drop | Overflow::CutPayload)
            && sc.switch.shared.is_none();
        let part = Partition::plan(&fabric, n, split_top)
            .map_err(|m| ScenarioError::new("run.partitions", n.to_string(), m))?;
        refuse_parallel(sc, n)?;
        let threads = match sc.run.threads {
            Some(t) => t as usize,
            None if fabric.hosts() < AUTO_THREADS_FROM_HOSTS => 1,
            None => std::thread::available_parallelism().map_or(1, |c| c.get()),
        };
        Ok(Run::Parallel(Box::new(Parallel::new(
            sc, fabric, part, threads,
        )?)))
    }

    /// The fabric the run is on.
    pub fn fabric(&self) -> &Fabric {
        match self {
            Run::Whole(s) => &s.cx.fabric,
            Run::Parallel(p) => p.fabric(),
        }
    }

    /// A writer of HPCC's fct.txt for this run, if `run.fct_txt` asks for one: the
    /// payload a packet carries and the bytes each adds on the wire are the run's.
    pub fn fct_writer(&self, sc: &Scenario) -> Option<FctWriter> {
        let variant = sc.run.fct_txt?;
        let mss = sc.transport.mss();
        let wire = wire_bytes(mss + sc.transport.header_bytes(), sc.topology.framing_bytes);
        let ids = match self.fabric().shape() {
            Shape::Graph(g) => Some(g.ids[..g.hosts as usize].to_vec()),
            _ => None,
        };
        Some(FctWriter::new(
            variant,
            mss.into(),
            (wire - mss).into(),
            ids,
        ))
    }

    pub fn step(&mut self, budget: u64) -> bool {
        match self {
            Run::Whole(s) => s.step(budget),
            Run::Parallel(p) => p.step(budget),
        }
    }

    pub fn run_to_end(&mut self) {
        while !self.step(1 << 20) {}
    }

    pub fn now(&self) -> Ps {
        match self {
            Run::Whole(s) => s.now(),
            Run::Parallel(p) => p.now(),
        }
    }

    pub fn finished(&self) -> bool {
        match self {
            Run::Whole(s) => s.finished(),
            Run::Parallel(p) => p.finished(),
        }
    }

    pub fn stop_reason(&self) -> StopReason {
        match self {
            Run::Whole(s) => s.stop_reason(),
            Run::Parallel(p) => p.stop_reason(),
        }
    }

    pub fn stop_detail(&self) -> &str {
        match self {
            Run::Whole(s) => s.stop_detail(),
            Run::Parallel(p) => p.stop_detail(),
        }
    }

    pub fn active_flows(&self) -> u64 {
        match self {
            Run::Whole(s) => s.active_flows(),
            Run::Parallel(p) => p.active_flows(),
        }
    }

    pub fn has_queries(&self) -> bool {
        match self {
            Run::Whole(s) => s.has_queries(),
            Run::Parallel(p) => p.has_queries(),
        }
    }

    pub fn hosts(&self) -> u32 {
        match self {
            Run::Whole(s) => s.hosts(),
            Run::Parallel(p) => p.hosts(),
        }
    }

    pub fn counters(&self) -> Counters {
        match self {
            Run::Whole(s) => s.counters().clone(),
            Run::Parallel(p) => p.counters(),
        }
    }

    pub fn take_flows(&mut self) -> FlowRecords {
        match self {
            Run::Whole(s) => s.take_flows(),
            Run::Parallel(p) => p.take_flows(),
        }
    }

    pub fn take_queries(&mut self) -> Vec<QueryRecord> {
        match self {
            Run::Whole(s) => s.take_queries(),
            Run::Parallel(p) => p.take_queries(),
        }
    }

    pub fn port_records(&self) -> PortRecords {
        match self {
            Run::Whole(s) => s.port_records(),
            Run::Parallel(p) => p.port_records(),
        }
    }

    pub fn has_timeseries(&self) -> bool {
        match self {
            Run::Whole(s) => s.has_timeseries(),
            Run::Parallel(p) => p.has_timeseries(),
        }
    }

    pub fn take_timeseries(&mut self) -> TimeseriesRecords {
        match self {
            Run::Whole(s) => s.take_timeseries(),
            Run::Parallel(p) => p.take_timeseries(),
        }
    }

    pub fn has_flow_throughput(&self) -> bool {
        match self {
            Run::Whole(s) => s.has_flow_throughput(),
            Run::Parallel(p) => p.has_flow_throughput(),
        }
    }

    pub fn take_flow_throughput(&mut self) -> FlowThroughputRecords {
        match self {
            Run::Whole(s) => s.take_flow_throughput(),
            Run::Parallel(p) => p.take_flow_throughput(),
        }
    }

    pub fn has_pings(&self) -> bool {
        match self {
            Run::Whole(s) => s.has_pings(),
            Run::Parallel(p) => p.has_pings(),
        }
    }

    pub fn take_pings(&mut self) -> PingRecords {
        match self {
            Run::Whole(s) => s.take_pings(),
            Run::Parallel(p) => p.take_pings(),
        }
    }

    /// Logical processes and threads (1 and 1 for a whole run).
    pub fn partitions(&self) -> (u32, u32) {
        match self {
            Run::Whole(_) => (1, 1),
            Run::Parallel(p) => (p.stats().partitions, p.stats().threads),
        }
    }

    /// A parallel run's window and barrier figures.
    pub fn parallel_stats(&self) -> Option<&ParallelStats> {
        match self {
            Run::Whole(_) => None,
            Run::Parallel(p) => Some(p.stats()),
        }
    }
}

/// What a parallel run cannot do yet, refused with the key and the reason.
fn refuse_parallel(sc: &Scenario, n: u32) -> Result<(), ScenarioError> {
    let no = |key: &str, value: &str, why: &str| {
        Err(ScenarioError::new(
            key,
            value,
            format!(
                "not in a parallel run (run.partitions = {n}) yet: {why}; set run.partitions = 1"
            ),
        ))
    };
    if sc.host.fastpass.is_some() {
        return no(
            "host.qdisc",
            "fastpass",
            "the arbiter allocates for every host at once, and its FCP messages live in one shared channel, not in the packets that carry them",
        );
    }
    Ok(())
}
