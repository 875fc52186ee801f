//! Workloads generate flows as simulated time advances (never all up front) and react
//! to completions (incast rounds, query responses). Each is a small state machine:
//! the simulator asks for the next arrival time, collects due flows, and reports
//! completed flows back by their tag.

pub mod cdf;
pub mod short_long;
pub mod spec;

use crate::rng::Rng;
use crate::units::{Ps, PS_PER_S};
use spec::{BackgroundSpec, FlowSpec, ResponseSize, WorkloadSpec};
use std::collections::VecDeque;

/// Flow class labels, the `class` column of flows.parquet.
pub const CLASS_LABELS: &[&str] = &[
    "incast",
    "flow",
    "request",
    "response",
    "trace",
    "short",
    "long",
    "background",
];
pub const CLASS_INCAST: u8 = 0;
pub const CLASS_FLOW: u8 = 1;
pub const CLASS_REQUEST: u8 = 2;
pub const CLASS_RESPONSE: u8 = 3;
pub const CLASS_TRACE: u8 = 4;
pub const CLASS_SHORT: u8 = 5;
pub const CLASS_LONG: u8 = 6;
pub const CLASS_BACKGROUND: u8 = 7;

/// Tags of background flows have this bit set, so completions reach the right part.
const BACKGROUND_TAG: u64 = 1 << 63;

pub const NO_QUERY: u64 = u64::MAX;

/// A flow the workload wants started now.
#[derive(Debug, Clone, Copy)]
pub struct NewFlow {
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub class: u8,
    pub query: u64,
    /// The workload's own handle, returned on completion.
    pub tag: u64,
}

/// One finished query (an incast round, a request with its responses).
#[derive(Debug, Clone, Copy)]
pub struct QueryRecord {
    pub query_id: u64,
    pub start: Ps,
    pub finish: Ps,
    pub size_bytes: u64,
    pub flows: u32,
}

pub enum Workload {
    Incast(Incast),
    Poisson(Poisson),
    Query(Queries),
    ShortLong(short_long::ShortLong),
    Trace(Trace),
}

impl Workload {
    pub fn new(spec: &WorkloadSpec, hosts: u32, link_rate: u64, rng: Rng) -> Workload {
        match spec {
            WorkloadSpec::Incast {
                all_to_all,
                sources,
                receiver,
                senders,
                size,
                rounds,
                period,
                jitter,
            } => {
                let groups = if *all_to_all {
                    // Each host receives `size` in total, evenly from every other host.
                    let per = (size / (hosts as u64 - 1)).max(1);
                    (0..hosts)
                        .map(|r| IncastGroup {
                            receiver: r,
                            senders: (0..hosts).filter(|&h| h != r).collect(),
                            size: per,
                        })
                        .collect()
                } else {
                    let others = sources;
                    vec![IncastGroup {
                        receiver: *receiver,
                        senders: (0..*senders)
                            .map(|i| others[i as usize % others.len()])
                            .collect(),
                        size: *size,
                    }]
                };
                Workload::Incast(Incast {
                    groups,
                    rounds: *rounds,
                    period: *period,
                    jitter: *jitter,
                    next_round: 0,
                    next_round_time: Some(0),
                    starts: VecDeque::new(),
                    open: Vec::new(),
                    open_rounds: Vec::new(),
                    rng,
                })
            }
            WorkloadSpec::Poisson {
                load,
                cdf,
                sources,
                destinations,
                max_flows,
            } => Workload::Poisson(Poisson::new(
                *load,
                cdf,
                sources.clone(),
                destinations.clone(),
                *max_flows,
                link_rate,
                rng,
            )),
            WorkloadSpec::Query {
                load,
                queries,
                fanout,
                request_size,
                response,
                clients,
                workers,
            } => {
                let mean_query_bytes = *fanout as f64 * response.mean();
                let rate =
                    load * clients.len() as f64 * link_rate as f64 / (8.0 * mean_query_bytes);
                let mut q = Queries {
                    fanout: *fanout,
                    request_size: *request_size,
                    response: response.clone(),
                    clients: clients.clone(),
                    workers: workers.clone(),
                    mean_gap_ps: PS_PER_S as f64 / rate,
                    remaining: queries.unwrap_or(u64::MAX),
                    next_time: 0,
                    clock: 0.0,
                    next_id: 0,
                    open: Vec::new(),
                    free: Vec::new(),
                    pick: Vec::new(),
                    rng,
                };
                q.advance();
                Workload::Query(q)
            }
            WorkloadSpec::ShortLong {
                load,
                short_fraction,
                long_size,
                request_size,
                queries,
                clients,
                workers,
            } => Workload::ShortLong(short_long::ShortLong::new(
                *load,
                *short_fraction,
                *long_size,
                *request_size,
                *queries,
                clients,
                workers,
                link_rate,
                rng,
            )),
            WorkloadSpec::Trace { flows } => {
                let mut flows = flows.clone();
                flows.sort_by_key(|f| f.start);
                Workload::Trace(Trace { flows, next: 0 })
            }
        }
    }

    /// When the next open-loop arrival is due, if any.
    pub fn next_time(&self) -> Option<Ps> {
        match self {
            Workload::Incast(w) => w.next_time(),
            Workload::Poisson(w) => (w.remaining > 0).then_some(w.next_time),
            Workload::Query(w) => (w.remaining > 0).then_some(w.next_time),
            Workload::ShortLong(w) => w.next_time(),
            Workload::Trace(w) => w.flows.get(w.next).map(|f| f.start),
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
    pub fn on_flow_done(
        &mut self,
        now: Ps,
        tag: u64,
        dst: u32,
        out: &mut Vec<NewFlow>,
        queries: &mut Vec<QueryRecord>,
    ) {
        match self {
            Workload::Incast(w) => w.on_flow_done(now, tag, queries),
            Workload::Query(w) => w.on_flow_done(now, tag, dst, out, queries),
            Workload::ShortLong(w) => w.on_flow_done(now, tag, dst, out, queries),
            Workload::Poisson(_) | Workload::Trace(_) => {}
        }
    }

    /// Queries begun and not yet complete (an incast round's groups from its start).
    pub fn open_queries(&self) -> u64 {
        match self {
            Workload::Incast(w) => w.open.len() as u64,
            Workload::Query(w) => w.open.iter().filter(|q| q.is_some()).count() as u64,
            Workload::ShortLong(w) => w.open_queries(),
            Workload::Poisson(_) | Workload::Trace(_) => 0,
        }
    }

    /// No flow will ever be generated again (open loop exhausted, closed loop idle).
    pub fn exhausted(&self) -> bool {
        match self {
            Workload::Incast(w) => {
                w.next_round_time.is_none() && w.starts.is_empty() && w.open.is_empty()
            }
            Workload::Poisson(w) => w.remaining == 0,
            Workload::Query(w) => w.remaining == 0 && w.open.iter().all(Option::is_none),
            Workload::ShortLong(w) => w.exhausted(),
            Workload::Trace(w) => w.next >= w.flows.len(),
        }
    }

    pub fn has_queries(&self) -> bool {
        matches!(
            self,
            Workload::Incast(_) | Workload::Query(_) | Workload::ShortLong(_)
        )
    }
}

/// The workload together with its optional background traffic (CP §6.4: queries beside
/// the DCTCP paper's background flows). Background arrivals stop when the workload
/// stops generating.
pub struct Traffic {
    main: Workload,
    background: Option<Background>,
}

struct Background {
    gen: Poisson,
    scale: f64,
    scale_above: u64,
}

impl Traffic {
    pub fn new(
        spec: &WorkloadSpec,
        background: Option<&BackgroundSpec>,
        hosts: u32,
        link_rate: u64,
        rng: Rng,
        background_rng: Rng,
    ) -> Traffic {
        let background = background.map(|b| {
            let all: Vec<u32> = (0..hosts).collect();
            Background {
                gen: Poisson::new(
                    b.load,
                    &b.cdf,
                    all.clone(),
                    all,
                    None,
                    link_rate,
                    background_rng,
                ),
                scale: b.scale,
                scale_above: b.scale_above,
            }
        });
        Traffic {
            main: Workload::new(spec, hosts, link_rate, rng),
            background,
        }
    }

    pub fn next_time(&self) -> Option<Ps> {
        let main = self.main.next_time();
        match &self.background {
            Some(b) if !self.main.exhausted() => {
                Some(main.map_or(b.gen.next_time, |t| t.min(b.gen.next_time)))
            }
            _ => main,
        }
    }

    pub fn generate(&mut self, now: Ps, out: &mut Vec<NewFlow>) {
        self.main.generate(now, out);
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
    }

    pub fn on_flow_done(
        &mut self,
        now: Ps,
        tag: u64,
        dst: u32,
        out: &mut Vec<NewFlow>,
        queries: &mut Vec<QueryRecord>,
    ) {
        if tag & BACKGROUND_TAG == 0 {
            self.main.on_flow_done(now, tag, dst, out, queries);
        }
    }

    pub fn exhausted(&self) -> bool {
        self.main.exhausted()
    }

    pub fn has_queries(&self) -> bool {
        self.main.has_queries()
    }

    /// Queries begun and not yet complete.
    pub fn open_queries(&self) -> u64 {
        self.main.open_queries()
    }
}

/// One receiver and its senders within an incast round.
struct IncastGroup {
    receiver: u32,
    senders: Vec<u32>,
    size: u64,
}

/// Incast rounds. Each round every group's senders send `size` bytes to the group's
/// receiver (one group for many-to-one, one per host for all-to-all); each group is one
/// query. Each sender starts at the round's start plus a uniform jitter in [0, jitter),
/// so that senders are not synchronized to the picosecond (as no two servers are).
pub struct Incast {
    groups: Vec<IncastGroup>,
    rounds: u32,
    period: Option<Ps>,
    jitter: Ps,
    next_round: u32,
    next_round_time: Option<Ps>,
    /// Sender starts not yet due: (time, group, sender index, round), time-ordered.
    starts: VecDeque<(Ps, u32, u32, u32)>,
    /// Open queries: (query id, start, flows still arriving).
    open: Vec<(u64, Ps, u32)>,
    /// Open rounds: (round, queries still open).
    open_rounds: Vec<(u32, u32)>,
    rng: Rng,
}

impl Incast {
    fn next_time(&self) -> Option<Ps> {
        match (self.starts.front(), self.next_round_time) {
            (Some(&(t, ..)), Some(r)) => Some(t.min(r)),
            (Some(&(t, ..)), None) => Some(t),
            (None, r) => r,
        }
    }

    fn query_id(&self, round: u32, group: u32) -> u64 {
        round as u64 * self.groups.len() as u64 + group as u64
    }

    fn generate(&mut self, now: Ps, out: &mut Vec<NewFlow>) {
        if self.next_round_time.is_some_and(|t| t <= now) {
            let round = self.next_round;
            let mut starts = Vec::new();
            for (g, group) in self.groups.iter().enumerate() {
                for i in 0..group.senders.len() as u32 {
                    let j = if self.jitter > 0 {
                        self.rng.below(self.jitter)
                    } else {
                        0
                    };
                    starts.push((now + j, g as u32, i, round));
                }
                let q = self.query_id(round, g as u32);
                self.open.push((q, now, group.senders.len() as u32));
            }
            starts.sort_unstable();
            // With a period shorter than the jitter, rounds overlap: keep the queue in
            // time order, which `next_time` and the loop below rely on.
            let overlaps = self
                .starts
                .back()
                .zip(starts.first())
                .is_some_and(|(last, first)| last > first);
            self.starts.extend(starts);
            if overlaps {
                self.starts.make_contiguous().sort_unstable();
            }
            self.open_rounds.push((round, self.groups.len() as u32));
            self.next_round += 1;
            self.next_round_time = match self.period {
                Some(p) if self.next_round < self.rounds => Some(now + p),
                _ => None, // closed loop: the next round starts when this one completes
            };
        }
        while let Some(&(t, g, i, round)) = self.starts.front() {
            if t > now {
                break;
            }
            self.starts.pop_front();
            let group = &self.groups[g as usize];
            let q = self.query_id(round, g);
            out.push(NewFlow {
                src: group.senders[i as usize],
                dst: group.receiver,
                size: group.size,
                class: CLASS_INCAST,
                query: q,
                tag: q,
            });
        }
    }

    fn on_flow_done(&mut self, now: Ps, tag: u64, queries: &mut Vec<QueryRecord>) {
        let Some(i) = self.open.iter().position(|r| r.0 == tag) else {
            return;
        };
        self.open[i].2 -= 1;
        if self.open[i].2 > 0 {
            return;
        }
        let (q, start, _) = self.open.remove(i);
        let group = &self.groups[(q % self.groups.len() as u64) as usize];
        queries.push(QueryRecord {
            query_id: q,
            start,
            finish: now,
            size_bytes: group.size * group.senders.len() as u64,
            flows: group.senders.len() as u32,
        });
        let round = (q / self.groups.len() as u64) as u32;
        let r = self
            .open_rounds
            .iter()
            .position(|r| r.0 == round)
            .expect("open round");
        self.open_rounds[r].1 -= 1;
        if self.open_rounds[r].1 == 0 {
            self.open_rounds.remove(r);
            if self.period.is_none() && self.next_round < self.rounds {
                self.next_round_time = Some(now);
            }
        }
    }
}

/// Open-loop Poisson arrivals, sizes from an empirical CDF.
pub struct Poisson {
    cdf: cdf::Cdf,
    sources: Vec<u32>,
    destinations: Vec<u32>,
    mean_gap_ps: f64,
    remaining: u64,
    next_time: Ps,
    /// Exact arrival clock in ps as f64, so rounding does not accumulate.
    clock: f64,
    rng: Rng,
}

impl Poisson {
    /// Arrivals at the rate that makes the flows' payload `load` of the sources' links:
    /// λ (flows/s) = load · (sending hosts · link rate) / (8 · mean size).
    fn new(
        load: f64,
        cdf: &cdf::Cdf,
        sources: Vec<u32>,
        destinations: Vec<u32>,
        max_flows: Option<u64>,
        link_rate: u64,
        rng: Rng,
    ) -> Poisson {
        let rate = load * sources.len() as f64 * link_rate as f64 / (8.0 * cdf.mean());
        let mut p = Poisson {
            cdf: cdf.clone(),
            sources,
            destinations,
            mean_gap_ps: PS_PER_S as f64 / rate,
            remaining: max_flows.unwrap_or(u64::MAX),
            next_time: 0,
            clock: 0.0,
            rng,
        };
        p.advance();
        p
    }

    fn advance(&mut self) {
        self.clock += self.rng.exp(self.mean_gap_ps);
        self.next_time = self.clock.round() as Ps;
    }

    fn generate(&mut self, now: Ps, out: &mut Vec<NewFlow>) {
        while self.remaining > 0 && self.next_time <= now {
            let src = self.sources[self.rng.below(self.sources.len() as u64) as usize];
            let dst = loop {
                let d = self.destinations[self.rng.below(self.destinations.len() as u64) as usize];
                if d != src {
                    break d;
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
            });
            self.remaining -= 1;
            self.advance();
        }
    }
}

struct OpenQuery {
    id: u64,
    client: u32,
    start: Ps,
    outstanding: u32,
    bytes: u64,
}

/// Request/response and partition/aggregate: a client asks `fanout` workers with a small
/// request each; each worker answers once its request has arrived.
pub struct Queries {
    fanout: u32,
    request_size: u64,
    response: ResponseSize,
    clients: Vec<u32>,
    workers: Vec<u32>,
    mean_gap_ps: f64,
    remaining: u64,
    next_time: Ps,
    clock: f64,
    next_id: u64,
    open: Vec<Option<OpenQuery>>,
    free: Vec<u32>,
    pick: Vec<u32>,
    rng: Rng,
}

// Tags: slot << 1 | is_response.
impl Queries {
    fn advance(&mut self) {
        self.clock += self.rng.exp(self.mean_gap_ps);
        self.next_time = self.clock.round() as Ps;
    }

    fn generate(&mut self, now: Ps, out: &mut Vec<NewFlow>) {
        while self.remaining > 0 && self.next_time <= now {
            let client = self.clients[self.rng.below(self.clients.len() as u64) as usize];
            pick_workers(
                &mut self.rng,
                &self.workers,
                client,
                self.fanout as usize,
                &mut self.pick,
            );
            let id = self.next_id;
            self.next_id += 1;
            let slot = self.free.pop().unwrap_or_else(|| {
                self.open.push(None);
                (self.open.len() - 1) as u32
            });
            self.open[slot as usize] = Some(OpenQuery {
                id,
                client,
                start: now,
                outstanding: self.fanout,
                bytes: 0,
            });
            for i in 0..self.fanout as usize {
                out.push(NewFlow {
                    src: client,
                    dst: self.pick[i],
                    size: self.request_size,
                    class: CLASS_REQUEST,
                    query: id,
                    tag: (slot as u64) << 1,
                });
            }
            self.remaining -= 1;
            self.advance();
        }
    }

    fn on_flow_done(
        &mut self,
        now: Ps,
        tag: u64,
        dst: u32,
        out: &mut Vec<NewFlow>,
        queries: &mut Vec<QueryRecord>,
    ) {
        let slot = (tag >> 1) as usize;
        if tag & 1 == 0 {
            // The request reached its worker: answer it.
            self.respond(dst, slot, out);
            return;
        }
        let Some(q) = self.open[slot].as_mut() else {
            return;
        };
        q.outstanding -= 1;
        if q.outstanding == 0 {
            let q = self.open[slot].take().unwrap();
            self.free.push(slot as u32);
            queries.push(QueryRecord {
                query_id: q.id,
                start: q.start,
                finish: now,
                size_bytes: q.bytes,
                flows: self.fanout,
            });
        }
    }

    fn respond(&mut self, worker: u32, slot: usize, out: &mut Vec<NewFlow>) {
        let size = match &self.response {
            ResponseSize::Fixed(s) => *s,
            ResponseSize::Cdf(c) => c.sample(&mut self.rng),
        };
        let Some(q) = self.open[slot].as_mut() else {
            return;
        };
        q.bytes += size;
        out.push(NewFlow {
            src: worker,
            dst: q.client,
            size,
            class: CLASS_RESPONSE,
            query: q.id,
            tag: ((slot as u64) << 1) | 1,
        });
    }
}

/// Draws `n` distinct workers other than `client` into `pick[..n]` (partial Fisher-Yates;
/// `n` at most the number of such workers).
fn pick_workers(rng: &mut Rng, workers: &[u32], client: u32, n: usize, pick: &mut Vec<u32>) {
    pick.clear();
    pick.extend(workers.iter().copied().filter(|&w| w != client));
    for i in 0..n {
        let j = i + rng.below((pick.len() - i) as u64) as usize;
        pick.swap(i, j);
    }
}

/// Explicit flows at given start times.
pub struct Trace {
    flows: Vec<FlowSpec>,
    next: usize,
}

impl Trace {
    fn generate(&mut self, now: Ps, out: &mut Vec<NewFlow>) {
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
            });
            self.next += 1;
        }
    }
}
