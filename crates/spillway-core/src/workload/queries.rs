//! Request/response, partition/aggregate and sequential queries: Poisson query arrivals
//! (at a steady rate, or modulated on and off), each a fan-out of requests and the
//! workers' responses; a sequential web request (DeTail §8.1.2) is `sequence` such
//! queries one after the other.

use super::arrivals::Arrivals;
use super::flow::{Emitted, NewFlow, QueryRecord, CLASS_RESPONSE};
use super::open_queries::{parse_tag, requests, response_tag, OpenQueries, Participants};
use super::spec::{mean, QueryArrivals, QuerySpec, ResponseSize};
use crate::rng::Rng;
use crate::units::Ps;

/// A query in flight: the round (a query of its own) whose flows are out, and for a
/// sequential web request, the request it belongs to.
struct OpenQuery {
    /// The current round's query id.
    id: u64,
    client: u32,
    /// When the current round's requests went out.
    start: Ps,
    /// Responses the current round still waits for, of `flows`.
    outstanding: u32,
    flows: u32,
    /// The current round's response bytes.
    bytes: u64,
    /// The current round's response size, when drawn per round (`response_sizes`).
    size: u64,
    /// The class of all the query's flows, if drawn (`priorities`).
    priority: Option<u8>,
    web: Option<WebRequest>,
}

/// A sequential web request: its own id and start, the rounds still to come after the
/// current one, and the totals of those done.
struct WebRequest {
    id: u64,
    start: Ps,
    left: u32,
    bytes: u64,
    flows: u32,
}

/// Request/response and partition/aggregate: a client asks `fanout` workers with a small
/// request each; each worker answers once its request has arrived. Sequential: a client
/// asks one worker, and when the response has arrived, the next, `sequence` times.
pub struct Queries {
    fanouts: Vec<u32>,
    request_size: u64,
    response: ResponseSize,
    sequence: u32,
    priorities: u8,
    hosts: Participants,
    arrivals: Arrivals,
    next_id: u64,
    open: OpenQueries<OpenQuery>,
    rng: Rng,
}

impl Queries {
    /// Queries at `workload.rate` per client, modulated or not, or at the rate that makes
    /// the responses (counted as `load.on` says) `load` of the clients' links.
    pub fn new(s: &QuerySpec, link_rate: u64, mut rng: Rng) -> Queries {
        let clients = s.clients.len() as f64;
        let arrivals = match &s.arrivals {
            QueryArrivals::Load(load) => {
                let mean_query_bytes =
                    s.sequence as f64 * mean(&s.fanouts) * s.response.mean_on(load.on);
                let rate = load.fraction * clients * link_rate as f64 / (8.0 * mean_query_bytes);
                Arrivals::new(rate, s.queries, &mut rng)
            }
            QueryArrivals::Rate(r) => Arrivals::new(r * clients, s.queries, &mut rng),
            QueryArrivals::OnOff(b) => Arrivals::on_off(b, clients, s.queries, &mut rng),
        };
        Queries {
            fanouts: s.fanouts.clone(),
            request_size: s.request_size,
            response: s.response.clone(),
            sequence: s.sequence,
            priorities: s.priorities,
            hosts: Participants::new(&s.clients, &s.workers),
            arrivals,
            next_id: 0,
            open: OpenQueries::default(),
            rng,
        }
    }

    pub fn next_time(&self) -> Option<Ps> {
        self.arrivals.next_time()
    }

    /// Queries (web requests) begun and not yet complete.
    pub fn open_queries(&self) -> u64 {
        self.open.len() as u64
    }

    pub fn exhausted(&self) -> bool {
        self.arrivals.exhausted() && self.open.is_empty()
    }

    fn id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    pub fn generate(&mut self, now: Ps, out: &mut Vec<NewFlow>) {
        while self.arrivals.due(now) {
            let client = self.hosts.client(&mut self.rng);
            let priority =
                (self.priorities > 1).then(|| self.rng.below(self.priorities as u64) as u8);
            let web = (self.sequence > 1).then(|| WebRequest {
                id: self.id(),
                start: now,
                left: self.sequence - 1,
                bytes: 0,
                flows: 0,
            });
            let slot = self.open.insert(OpenQuery {
                id: 0,
                client,
                start: now,
                outstanding: 0,
                flows: 0,
                bytes: 0,
                size: 0,
                priority,
                web,
            });
            self.round(now, slot, out);
            self.arrivals.advance(&mut self.rng);
        }
    }

    /// Sends the requests of a new round of the query in `slot`: its fan-out, its
    /// response size (when drawn per round) and its workers are drawn now.
    fn round(&mut self, now: Ps, slot: u32, out: &mut Vec<NewFlow>) {
        let fanout = match self.fanouts[..] {
            [f] => f,
            ref f => f[self.rng.below(f.len() as u64) as usize],
        };
        let size = match &self.response {
            ResponseSize::Choice(sizes) => sizes[self.rng.below(sizes.len() as u64) as usize],
            _ => 0,
        };
        let id = self.id();
        let q = self.open.get_mut(slot).expect("an open query");
        q.id = id;
        q.start = now;
        q.outstanding = fanout;
        q.flows = fanout;
        q.bytes = 0;
        q.size = size;
        let (client, priority) = (q.client, q.priority);
        let workers = self.hosts.workers(&mut self.rng, client, fanout as usize);
        let first = out.len();
        requests(out, client, workers, self.request_size, id, slot);
        for f in &mut out[first..] {
            f.priority = priority;
        }
    }

    pub fn on_flow_done(&mut self, now: Ps, tag: u64, dst: u32, out: &mut Emitted) {
        let (slot, is_response) = parse_tag(tag);
        if !is_response {
            // The request reached its worker: answer it.
            self.respond(dst, slot, &mut out.flows);
            return;
        }
        let Some(q) = self.open.get_mut(slot) else {
            return;
        };
        q.outstanding -= 1;
        if q.outstanding > 0 {
            return;
        }
        let parent = q.web.as_ref().map(|w| w.id);
        out.queries.push(QueryRecord {
            query_id: q.id,
            start: q.start,
            finish: now,
            size_bytes: q.bytes,
            flows: q.flows,
            parent,
        });
        match &mut q.web {
            Some(w) if w.left > 0 => {
                // The next query of the web request, now that this one has arrived.
                w.left -= 1;
                w.bytes += q.bytes;
                w.flows += q.flows;
                self.round(now, slot, &mut out.flows);
            }
            _ => {
                let q = self.open.remove(slot).unwrap();
                if let Some(w) = q.web {
                    out.queries.push(QueryRecord {
                        query_id: w.id,
                        start: w.start,
                        finish: now,
                        size_bytes: w.bytes + q.bytes,
                        flows: w.flows + q.flows,
                        parent: None,
                    });
                }
            }
        }
    }

    fn respond(&mut self, worker: u32, slot: u32, out: &mut Vec<NewFlow>) {
        // Drawn before the query is looked up, as it always was, so the stream's order
        // does not depend on whether the query is still open.
        let size = match &self.response {
            ResponseSize::Fixed(s) => *s,
            ResponseSize::Cdf(c) => c.sample(&mut self.rng),
            ResponseSize::Choice(_) => 0,
        };
        let Some(q) = self.open.get_mut(slot) else {
            return;
        };
        let size = if q.size > 0 { q.size } else { size };
        q.bytes += size;
        out.push(NewFlow {
            src: worker,
            dst: q.client,
            size,
            class: CLASS_RESPONSE,
            query: q.id,
            tag: response_tag(slot),
            priority: q.priority,
        });
    }
}
