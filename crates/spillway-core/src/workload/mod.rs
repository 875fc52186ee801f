//! Workloads generate flows as simulated time advances (never all up front) and react
//! to completions (incast rounds, query responses). Each is a small state machine:
//! the simulator asks for the next arrival time, collects due flows, and reports
//! completed flows back by their tag.
//!
//! This module dispatches to the generators (one module each) and runs the background
//! traffic beside the workload; what they share lives in leaf modules: `flow` (what a
//! workload hands out and records), `arrivals` (the Poisson clock), `open_queries` (a
//! query in flight).

mod arrivals;
pub mod cdf;
mod closed_loop;
mod flow;
mod incast;
pub mod load;
pub mod matrix;
mod open_queries;
mod poisson;
mod queries;
pub mod short_long;
pub mod size_classes;
pub mod spec;
mod trace;

pub use flow::{
    Emitted, NewFlow, QueryRecord, CLASS_BACKGROUND, CLASS_FLOW, CLASS_INCAST, CLASS_LABELS,
    CLASS_LONG, CLASS_REQUEST, CLASS_RESPONSE, CLASS_SHORT, CLASS_TRACE, NO_QUERY,
};
pub use incast::Incast;
pub use poisson::Poisson;
pub use queries::Queries;
pub use trace::Trace;

use crate::rng::Rng;
use crate::units::Ps;
use closed_loop::ClosedLoop;
use short_long::ShortLong;
use size_classes::SizeClasses;
use spec::{BackgroundSpec, WorkloadSpec};

/// Tags of background flows have this bit set, so completions reach the right part.
const BACKGROUND_TAG: u64 = 1 << 63;

pub enum Workload {
    Incast(Incast),
    Poisson(Poisson),
    Query(Queries),
    ShortLong(ShortLong),
    Trace(Trace),
}

impl Workload {
    pub fn new(spec: &WorkloadSpec, hosts: u32, link_rate: u64, rng: Rng) -> Workload {
        match spec {
            WorkloadSpec::Incast(s) => Workload::Incast(Incast::new(s, hosts, rng)),
            WorkloadSpec::Poisson(s) => Workload::Poisson(
                Poisson::new(
                    s.load,
                    &s.cdf,
                    s.sources.clone(),
                    s.destinations.clone(),
                    s.max_flows,
                    link_rate,
                    s.gaps,
                    rng,
                )
                .with_matrix(s.matrix.clone()),
            ),
            WorkloadSpec::Query(s) => Workload::Query(Queries::new(s, link_rate, rng)),
            WorkloadSpec::ShortLong(s) => Workload::ShortLong(ShortLong::new(s, link_rate, rng)),
            WorkloadSpec::Trace(flows) => Workload::Trace(Trace::new(flows)),
        }
    }

    /// When the next open-loop arrival is due, if any.
    pub fn next_time(&self) -> Option<Ps> {
        match self {
            Workload::Incast(w) => w.next_time(),
            Workload::Poisson(w) => w.next_time(),
            Workload::Query(w) => w.next_time(),
            Workload::ShortLong(w) => w.next_time(),
            Workload::Trace(w) => w.next_time(),
        }
    }

    /// Emits every flow due at `now`.
    pub fn generate(&mut self, now: Ps, out: &mut Vec<NewFlow>) {
        match self {
            Workload::Incast(w) => w.generate(now, out),
            Workload::Poisson(w) => w.generate(now, out),
            Workload::Query(w) => w.generate(now, out),
            Workload::ShortLong(w) => w.generate(now, out),
            Workload::Trace(w) => w.generate(now, out),
        }
    }

    /// A flow's receiver (`dst`) got its last byte.
    pub fn on_flow_done(&mut self, now: Ps, tag: u64, dst: u32, out: &mut Emitted) {
        match self {
            Workload::Incast(w) => w.on_flow_done(now, tag, &mut out.queries),
            Workload::Query(w) => w.on_flow_done(now, tag, dst, out),
            Workload::ShortLong(w) => w.on_flow_done(now, tag, dst, out),
            Workload::Poisson(_) | Workload::Trace(_) => {}
        }
    }

    /// Queries begun and not yet complete (an incast round's groups from its start).
    pub fn open_queries(&self) -> u64 {
        match self {
            Workload::Incast(w) => w.open_queries(),
            Workload::Query(w) => w.open_queries(),
            Workload::ShortLong(w) => w.open_queries(),
            Workload::Poisson(_) | Workload::Trace(_) => 0,
        }
    }

    /// No flow will ever be generated again (open loop exhausted, closed loop idle).
    pub fn exhausted(&self) -> bool {
        match self {
            Workload::Incast(w) => w.exhausted(),
            Workload::Poisson(w) => w.exhausted(),
            Workload::Query(w) => w.exhausted(),
            Workload::ShortLong(w) => w.exhausted(),
            Workload::Trace(w) => w.exhausted(),
        }
    }

    pub fn has_queries(&self) -> bool {
        matches!(
            self,
            Workload::Incast(_) | Workload::Query(_) | Workload::ShortLong(_)
        )
    }
}

/// The workload together with its optional background traffic: Poisson flows (CP §6.4:
/// queries beside the DCTCP paper's background flows) and a closed loop of flows per host
/// (DeTail §8.1.2). Background flows stop starting when the workload stops generating.
/// The workload's own flows may be marked by size (`workload.classes_by_size`); the
/// background's keep their classes.
pub struct Traffic {
    main: Workload,
    classes: SizeClasses,
    background: Option<Background>,
    closed_loop: Option<ClosedLoop>,
}

struct Background {
    gen: Poisson,
    scale: f64,
    scale_above: u64,
}

/// Tags of closed-loop background flows have this bit set too, and their source host in
/// the low bits.
const CLOSED_LOOP_TAG: u64 = 1 << 62;

/// The closed loop's stream, derived from the background's without drawing from it (so
/// the Poisson background's draws stay as they were).
const CLOSED_LOOP_STREAM: u64 = 1;

impl Traffic {
    pub fn new(
        spec: &WorkloadSpec,
        classes: &SizeClasses,
        background: Option<&BackgroundSpec>,
        hosts: u32,
        link_rate: u64,
        rng: Rng,
        background_rng: Rng,
    ) -> Traffic {
        let poisson = background.and_then(|b| b.poisson.as_ref());
        let closed = background.and_then(|b| b.closed_loop.as_ref());
        let closed_loop = closed.map(|c| {
            let seed = background_rng.clone().next_u64();
            ClosedLoop::new(c, Rng::new(seed, CLOSED_LOOP_STREAM))
        });
        let background = poisson.map(|b| Background {
            gen: Poisson::new(
                b.load,
                &b.cdf,
                b.hosts.clone(),
                b.hosts.clone(),
                None,
                link_rate,
                poisson::Gaps::Exponential,
                background_rng,
            ),
            scale: b.scale,
            scale_above: b.scale_above,
        });
        Traffic {
            main: Workload::new(spec, hosts, link_rate, rng),
            classes: classes.clone(),
            background,
            closed_loop,
        }
    }

    pub fn next_time(&self) -> Option<Ps> {
        let main = self.main.next_time();
        if self.main.exhausted() {
            return main;
        }
        let poisson = self.background.as_ref().and_then(|b| b.gen.next_time());
        let closed = self.closed_loop.as_ref().and_then(|c| c.next_time());
        main.into_iter().chain(poisson).chain(closed).min()
    }

    pub fn generate(&mut self, now: Ps, out: &mut Vec<NewFlow>) {
        let first = out.len();
        self.main.generate(now, out);
        self.mark(&mut out[first..]);
        if self.main.exhausted() {
            return;
        }
        if let Some(b) = &mut self.background {
            let first = out.len();
            b.gen.generate(now, out);
            for f in &mut out[first..] {
                if f.size > b.scale_above {
                    f.size = (f.size as f64 * b.scale).round().max(1.0) as u64;
                }
                f.class = CLASS_BACKGROUND;
                f.tag = BACKGROUND_TAG;
            }
        }
        if let Some(c) = &mut self.closed_loop {
            c.generate(out, closed_loop_tag);
        }
    }

    pub fn on_flow_done(&mut self, now: Ps, tag: u64, dst: u32, out: &mut Emitted) {
        if tag & BACKGROUND_TAG == 0 {
            let first = out.flows.len();
            self.main.on_flow_done(now, tag, dst, out);
            self.mark(&mut out.flows[first..]);
        } else if tag & CLOSED_LOOP_TAG != 0 && !self.main.exhausted() {
            // The host's closed-loop flow arrived: its next one starts.
            if let Some(c) = &mut self.closed_loop {
                let src = tag as u32;
                out.flows.push(c.flow(src, tag));
            }
        }
    }

    pub fn exhausted(&self) -> bool {
        self.main.exhausted()
    }

    /// The workload's new flows take their classes by size, when it is on: this is the
    /// one place a workload's flows get them, whatever their kind (a query's request
    /// and responses alike, each by its own size).
    #[inline]
    fn mark(&self, flows: &mut [NewFlow]) {
        if self.classes.is_off() {
            return;
        }
        for f in flows {
            f.priority = Some(self.classes.class_of(f.size));
        }
    }

    pub fn has_queries(&self) -> bool {
        self.main.has_queries()
    }

    /// A completion may start a flow or end a query: the workload's queries, or the
    /// closed-loop background.
    pub fn reacts(&self) -> bool {
        self.main.has_queries() || self.closed_loop.is_some()
    }

    /// Queries begun and not yet complete.
    pub fn open_queries(&self) -> u64 {
        self.main.open_queries()
    }
}

fn closed_loop_tag(host: u32) -> u64 {
    BACKGROUND_TAG | CLOSED_LOOP_TAG | host as u64
}

/// The workload with `workload.max_link_load` turned into the load it means (None when
/// it has none): the arrival rate that loads the busiest link so much
/// ([`matrix::RackMatrix::rate_for_max_load`]), as a fraction of the sources' line rate,
/// which is what the generator reads. The same arithmetic in every process of a parallel
/// run, so the same rate.
pub fn calibrated(
    spec: &WorkloadSpec,
    fabric: &crate::fabric::Fabric,
    link_rate: u64,
) -> Option<WorkloadSpec> {
    let WorkloadSpec::Poisson(p) = spec else {
        return None;
    };
    let (max, m) = (p.max_link_load?, p.matrix.as_ref()?);
    let mean = p.load.on.cdf_mean(&p.cdf);
    let rate = m.rate_for_max_load(fabric, max, mean);
    let mut p = p.clone();
    p.load.fraction = rate * 8.0 * mean / (p.sources.len() as f64 * link_rate as f64);
    Some(WorkloadSpec::Poisson(p))
}
