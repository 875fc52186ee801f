//! FastLane's request/response workload (FastLane §5): short partition/aggregate queries
//! over a background of long all-to-all transfers.
//!
//! Every request is a small flow (10 B by default) from a client to a worker; the worker
//! answers once the request has arrived. A *short* query picks a response size from
//! {2, 4, 8, 16, 32} KB and a total from {32, 64, 96, 128, 160} KB, each uniformly, and
//! asks total/size distinct workers at once (160 KB / 2 KB = 80 workers, twice the usual
//! fan-in of an aggregator). A *long* request asks one random worker for `long_size`
//! (1 MB). Queries arrive as one Poisson process; `short_fraction` of the offered load
//! (response bytes) is short:
//!
//!   λ_short = f · load · clients · rate / (8 · 96 KB),
//!   λ_long  = (1 − f) · load · clients · rate / (8 · long_size),
//!
//! 96 KB being the mean total of a short query. With `workload.load_on = "wire"` the
//! bytes are those on the wire: a short query's mean is E[total] · E[wire(size)/size]
//! (its size and total are drawn independently), a long one's wire(long_size). Response flows carry class `short` or
//! `long`; each query (short or long) yields one query row.

use super::arrivals::Arrivals;
use super::flow::{Emitted, NewFlow, QueryRecord, CLASS_LONG, CLASS_SHORT};
use super::load::LoadOn;
use super::open_queries::{parse_tag, requests, response_tag, OpenQueries, Participants};
use super::spec::ShortLongSpec;
use crate::rng::Rng;
use crate::units::Ps;

pub const KB: u64 = 1024;
pub const SHORT_SIZES: [u64; 5] = [2 * KB, 4 * KB, 8 * KB, 16 * KB, 32 * KB];
pub const SHORT_TOTALS: [u64; 5] = [32 * KB, 64 * KB, 96 * KB, 128 * KB, 160 * KB];
pub const MAX_FANOUT: u32 = (160 / 2) as u32;

struct Open {
    id: u64,
    client: u32,
    start: Ps,
    response: u64,
    class: u8,
    flows: u32,
    outstanding: u32,
}

pub struct ShortLong {
    p_short: f64,
    arrivals: Arrivals,
    long_size: u64,
    request_size: u64,
    hosts: Participants,
    next_id: u64,
    open: OpenQueries<Open>,
    rng: Rng,
}

impl ShortLong {
    pub fn new(s: &ShortLongSpec, link_rate: u64, mut rng: Rng) -> ShortLong {
        let capacity = s.load.fraction * s.clients.len() as f64 * link_rate as f64 / 8.0; // bytes/s
        let mean_total = SHORT_TOTALS.iter().sum::<u64>() as f64 / SHORT_TOTALS.len() as f64;
        let (mean_short, long) = match s.load.on {
            LoadOn::Payload => (mean_total, s.long_size as f64),
            on => {
                // A response of `size` weighs wire(size), total / size of them a query.
                let per_byte = SHORT_SIZES
                    .iter()
                    .map(|&z| on.flow_bytes(z) / z as f64)
                    .sum::<f64>()
                    / SHORT_SIZES.len() as f64;
                (mean_total * per_byte, on.flow_bytes(s.long_size))
            }
        };
        let l_short = s.short_fraction * capacity / mean_short;
        let l_long = (1.0 - s.short_fraction) * capacity / long;
        ShortLong {
            p_short: l_short / (l_short + l_long),
            arrivals: Arrivals::new(l_short + l_long, s.queries, &mut rng),
            long_size: s.long_size,
            request_size: s.request_size,
            hosts: Participants::new(&s.clients, &s.workers),
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
            let short = self.rng.next_f64() < self.p_short;
            let (response, fanout, class) = if short {
                let size = SHORT_SIZES[self.rng.below(5) as usize];
                let total = SHORT_TOTALS[self.rng.below(5) as usize];
                (size, (total / size) as usize, CLASS_SHORT)
            } else {
                (self.long_size, 1, CLASS_LONG)
            };
            // Distinct workers other than the client (all of them, if fewer).
            let workers = self.hosts.workers(&mut self.rng, client, fanout);
            let fanout = workers.len();
            let id = self.next_id;
            self.next_id += 1;
            let slot = self.open.insert(Open {
                id,
                client,
                start: now,
                response,
                class,
                flows: fanout as u32,
                outstanding: fanout as u32,
            });
            requests(out, client, workers, self.request_size, id, slot);
            self.arrivals.advance(&mut self.rng);
        }
    }

    pub fn on_flow_done(&mut self, now: Ps, tag: u64, dst: u32, out: &mut Emitted) {
        let (slot, is_response) = parse_tag(tag);
        let Some(q) = self.open.get_mut(slot) else {
            return;
        };
        if !is_response {
            // The request reached worker `dst`: it answers.
            out.flows.push(NewFlow {
                src: dst,
                dst: q.client,
                size: q.response,
                class: q.class,
                query: q.id,
                tag: response_tag(slot),
                priority: None,
            });
            return;
        }
        q.outstanding -= 1;
        if q.outstanding == 0 {
            let q = self.open.remove(slot).unwrap();
            out.queries.push(QueryRecord {
                query_id: q.id,
                start: q.start,
                finish: now,
                size_bytes: q.response * q.flows as u64,
                flows: q.flows,
                parent: None,
            });
        }
    }
}
