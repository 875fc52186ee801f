//! Request/response and partition/aggregate queries: Poisson query arrivals, each a
//! fan-out of requests and the workers' responses.

use super::arrivals::Arrivals;
use super::flow::{Emitted, NewFlow, QueryRecord, CLASS_RESPONSE};
use super::open_queries::{parse_tag, requests, response_tag, OpenQueries, Participants};
use super::spec::{QuerySpec, ResponseSize};
use crate::rng::Rng;
use crate::units::Ps;

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
    hosts: Participants,
    arrivals: Arrivals,
    next_id: u64,
    open: OpenQueries<OpenQuery>,
    rng: Rng,
}

impl Queries {
    /// Queries at the rate that makes the responses' payload `load` of the clients' links.
    pub fn new(s: &QuerySpec, link_rate: u64, mut rng: Rng) -> Queries {
        let mean_query_bytes = s.fanout as f64 * s.response.mean();
        let rate = s.load * s.clients.len() as f64 * link_rate as f64 / (8.0 * mean_query_bytes);
        Queries {
            fanout: s.fanout,
            request_size: s.request_size,
            response: s.response.clone(),
            hosts: Participants::new(&s.clients, &s.workers),
            arrivals: Arrivals::new(rate, s.queries, &mut rng),
            next_id: 0,
            open: OpenQueries::default(),
            rng,
        }
    }

    pub fn next_time(&self) -> Option<Ps> {
        self.arrivals.next_time()
    }

    pub fn open_queries(&self) -> u64 {
        self.open.len() as u64
    }

    pub fn exhausted(&self) -> bool {
        self.arrivals.exhausted() && self.open.is_empty()
    }

    pub fn generate(&mut self, now: Ps, out: &mut Vec<NewFlow>) {
        while self.arrivals.due(now) {
            let client = self.hosts.client(&mut self.rng);
            let workers = self
                .hosts
                .workers(&mut self.rng, client, self.fanout as usize);
            let id = self.next_id;
            self.next_id += 1;
            let slot = self.open.insert(OpenQuery {
                id,
                client,
                start: now,
                outstanding: self.fanout,
                bytes: 0,
            });
            requests(out, client, workers, self.request_size, id, slot);
            self.arrivals.advance(&mut self.rng);
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
        if q.outstanding == 0 {
            let q = self.open.remove(slot).unwrap();
            out.queries.push(QueryRecord {
                query_id: q.id,
                start: q.start,
                finish: now,
                size_bytes: q.bytes,
                flows: self.fanout,
            });
        }
    }

    fn respond(&mut self, worker: u32, slot: u32, out: &mut Vec<NewFlow>) {
        // Drawn before the query is looked up, as it always was, so the stream's order
        // does not depend on whether the query is still open.
        let size = match &self.response {
            ResponseSize::Fixed(s) => *s,
            ResponseSize::Cdf(c) => c.sample(&mut self.rng),
        };
        let Some(q) = self.open.get_mut(slot) else {
            return;
        };
        q.bytes += size;
        out.push(NewFlow {
            src: worker,
            dst: q.client,
            size,
            class: CLASS_RESPONSE,
            query: q.id,
            tag: response_tag(slot),
        });
    }
}
