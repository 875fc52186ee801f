//! Fastpass in the simulated network (Fastpass §2–§6): every host's endpoint — its
//! per-destination queues ([`queues`], the host queue discipline) and its FCP state
//! machine ([`spillway_arbiter::fcp::Endpoint`]) — and the arbiters ([`arbiter`]), each
//! an agent on its own host, with the FCP messages between them ([`channel`]) and the
//! paths the arbiter picks ([`paths`]).
//!
//! A packet a transport sends joins its destination's queue; each timeslot of demand it
//! opens is reported to the arbiters (batched, as running totals: §5.3). The arbiter's
//! grants come back `lead` ahead of their timeslots; at a granted timeslot's start (plus
//! the host's clock error, `fastpass.jitter`) the queue's next timeslot's worth of
//! packets leaves for the NIC, each pinned to the granted path.

pub mod arbiter;
pub mod channel;
pub mod config;
pub mod link;
pub mod paths;
pub mod queues;

use crate::engine::context::Ctx;
use crate::engine::event::Ev;
use crate::output::histogram::LogHistogram;
use crate::packet::{Packet, PktKind};
use crate::rng::{mix64, Rng};
use crate::units::{serialization_ps, Ps};
use arbiter::ArbiterAgent;
use channel::{fcp_wire_bytes, Channel, Toward};
use config::{Control, FastpassConfig};
use paths::Pins;
use queues::{EndpointQueues, Waiting};
use spillway_arbiter::fcp::wire::Body;
use spillway_arbiter::fcp::{Dest, Endpoint, EndpointConfig, Granted, Input, Msg, Role};

/// Timeslots remembered per host for the conflict check: more than any clock error
/// reorders.
const RING: usize = 64;

/// Random stream ids of Fastpass's parts (disjoint from the core's components).
const JITTER_BASE: u64 = 5 << 32;
const CONTROL_LOSS: u64 = 6 << 32;

pub struct Fastpass {
    cfg: FastpassConfig,
    slot: Ps,
    slot_bytes: u32,
    framing: u32,
    queues: Vec<EndpointQueues>,
    endpoints: Vec<Endpoint>,
    /// Per host: when its queued endpoint timer event fires, if one is queued.
    ep_timer: Vec<Option<Ps>>,
    jitter: Vec<Rng>,
    loss: Rng,
    arbiters: Vec<ArbiterAgent>,
    channel: Channel,
    pins: Pins,
    /// Per host, the last timeslots it sent and received in (`timeslot + 1`, 0 = none).
    sent_in: Vec<u64>,
    received_in: Vec<u64>,
    /// Queue-to-timeslot delays, and the largest.
    delays: LogHistogram,
    delay_max: Ps,
    /// Arbiter-to-endpoint delays of allocation messages, and the largest.
    alloc_delays: LogHistogram,
    alloc_delay_max: Ps,
    /// FCP packets and released data for the hosts' NICs: (host, packet).
    pub outbox: Vec<(u32, u32)>,
    scratch: Vec<Waiting>,
}

impl Fastpass {
    /// Endpoints on every host of `cx`'s fabric and the arbiters `cfg` names; `slot_bytes`:
    /// a full-size frame on the wire, whose time on a host link, plus the control
    /// reserve, is the timeslot.
    pub fn new(
        cfg: &FastpassConfig,
        cx: &Ctx,
        slot_bytes: u32,
        framing: u32,
        seed: u64,
    ) -> Fastpass {
        let fabric = &cx.fabric;
        let hosts = fabric.hosts();
        let hosts_arbiters = cfg.arbiter_hosts();
        // A workload host's link (an arbiter's may be faster): the timeslot's rate.
        let endpoint = (0..hosts)
            .find(|h| !hosts_arbiters.contains(h))
            .expect("config/fastpass.rs leaves two hosts for the workload");
        let link = fabric.ports(endpoint)[0];
        let frame = serialization_ps(slot_bytes as u64, link.rate);
        let slot = (frame as f64 * (1.0 + cfg.control_reserve)).round() as Ps;
        let arbiters = hosts_arbiters
            .iter()
            .enumerate()
            .map(|(rank, &host)| {
                let (arb_fabric, sel) = paths::build(fabric.shape(), link.rate, fabric_rate(cx))
                    .expect("config/fastpass.rs built this fabric's path selection");
                ArbiterAgent::new(
                    rank as u32,
                    hosts_arbiters.len() as u32,
                    host,
                    cfg,
                    &arb_fabric,
                    sel,
                    mix64(seed ^ 0xfa57_9a55),
                    cx.now,
                    slot,
                    framing,
                )
            })
            .collect();
        let endpoints = (0..hosts)
            .map(|h| {
                let mut e = EndpointConfig::new(h);
                e.timeslot = slot;
                e.report_interval = cfg.report_interval;
                e.retransmit = cfg.retransmit;
                e.late_threshold = cfg.late_threshold;
                Endpoint::new(e)
            })
            .collect();
        Fastpass {
            cfg: cfg.clone(),
            slot,
            slot_bytes,
            framing,
            queues: (0..hosts).map(|_| EndpointQueues::default()).collect(),
            endpoints,
            ep_timer: vec![None; hosts as usize],
            jitter: (0..hosts)
                .map(|h| Rng::new(seed, JITTER_BASE + h as u64))
                .collect(),
            loss: Rng::new(seed, CONTROL_LOSS),
            arbiters,
            channel: Channel::default(),
            pins: Pins::new(mix64(seed ^ 0x9a7c)),
            sent_in: vec![0; hosts as usize * RING],
            received_in: vec![0; hosts as usize * RING],
            delays: LogHistogram::default(),
            delay_max: 0,
            alloc_delays: LogHistogram::default(),
            alloc_delay_max: 0,
            outbox: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// The timeslot's length.
    pub fn slot(&self) -> Ps {
        self.slot
    }

    /// The run starts: the arbiters reset every endpoint, the endpoints ask for resets.
    pub fn start(&mut self, cx: &mut Ctx) {
        for rank in 0..self.arbiters.len() {
            self.arbiter_output(cx, rank);
        }
        for h in 0..self.endpoints.len() as u32 {
            self.endpoint_output(cx, h);
        }
    }

    /// The primary has stopped (`fastpass.fail_at`): it does nothing from then on.
    fn dead(&self, rank: usize, now: Ps) -> bool {
        rank == 0 && self.cfg.fail_at.is_some_and(|t| now >= t)
    }

    /// Host `host`'s transports send `pkt`: it waits in its destination's queue.
    pub fn enqueue(&mut self, cx: &mut Ctx, host: u32, pkt: u32) {
        let h = *cx.pkts.hot(pkt);
        let w = Waiting {
            pkt,
            since: cx.now,
            wire: h.wire as u32,
        };
        if self.queues[host as usize].push(h.dst, w, self.slot_bytes) {
            self.endpoints[host as usize].handle(
                cx.now,
                Input::Demand {
                    dst: h.dst,
                    slots: 1,
                },
            );
            self.endpoint_output(cx, host);
        }
    }

    /// `host` may send to `dst` in timeslot `lo` (its low 16 bits) by `path`: the
    /// timeslot's worth of packets at the head of the queue go to the NIC.
    pub fn on_slot(&mut self, cx: &mut Ctx, host: u32, dst: u32, path: u16, lo: u16) {
        let now = cx.now;
        let c = &mut cx.counters;
        c.fastpass_slots_received += 1;
        // The timeslot: the one with these low bits nearest the time (the clock error is
        // far below 2^15 timeslots).
        let here = now / self.slot;
        let ts = here.wrapping_sub((here as u16).wrapping_sub(lo) as i16 as i64 as u64);
        for (ring, who) in [(&mut self.sent_in, host), (&mut self.received_in, dst)] {
            let at = &mut ring[who as usize * RING + (ts as usize % RING)];
            if *at == ts + 1 {
                c.fastpass_slot_conflicts += 1;
            }
            *at = ts + 1;
        }
        let mut out = std::mem::take(&mut self.scratch);
        if !self.queues[host as usize].pop_slot(dst, self.slot_bytes, &mut out) {
            c.fastpass_slots_wasted += 1;
            self.scratch = out;
            return;
        }
        c.fastpass_slots_used += 1;

        let hash = self.pins.hash(&cx.fabric, host, dst, path);
        for w in out.drain(..) {
            self.delays.record(now - w.since);
            self.delay_max = self.delay_max.max(now - w.since);
            if let Some(h) = hash {
                cx.pkts.hot[w.pkt as usize].hash = h;
                cx.pkts.get_mut(w.pkt).hash = h as u64;
            }
            self.outbox.push((host, w.pkt));
        }
        self.scratch = out;
    }

    /// `host`'s endpoint timer event, queued for `at`.
    pub fn on_endpoint_timer(&mut self, cx: &mut Ctx, host: u32, at: Ps) {
        if self.ep_timer[host as usize] != Some(at) {
            return; // superseded by an earlier one
        }
        self.ep_timer[host as usize] = None;
        self.endpoints[host as usize].handle_timeout(cx.now);
        self.endpoint_output(cx, host);
    }

    /// Arbiter `rank`'s timer event, queued for `at`.
    pub fn on_arbiter_timer(&mut self, cx: &mut Ctx, rank: u32, at: Ps) {
        let r = rank as usize;
        if self.arbiters[r].timer != Some(at) {
            return;
        }
        self.arbiters[r].timer = None;
        if self.dead(r, cx.now) {
            return;
        }
        self.arbiters[r].on_timer(cx.now, self.slot, self.cfg.lead);
        self.arbiter_output(cx, r);
    }

    /// FCP packet `pkt` has arrived at `host`.
    pub fn on_packet(&mut self, cx: &mut Ctx, host: u32, pkt: u32) {
        let id = cx.pkts.get(pkt).seq as u32;
        cx.pkts.free(pkt);
        self.arrived(cx, host, id);
    }

    /// FCP message `id` has arrived at `host` (a packet, or the ideal channel).
    pub fn arrived(&mut self, cx: &mut Ctx, host: u32, id: u32) {
        let Some(toward) = self.channel.toward(id) else {
            return; // forgotten: counted as expired
        };
        match toward {
            Toward::Endpoint => {
                let Some((m, sent)) = self.channel.take(id) else {
                    return;
                };
                cx.counters.fastpass_fcp_to_endpoint_arrived += 1;
                if let Body::Alloc(_) = m.body {
                    self.alloc_delays.record(cx.now - sent);
                    self.alloc_delay_max = self.alloc_delay_max.max(cx.now - sent);
                }
                self.endpoints[host as usize].handle(cx.now, Input::Msg(m));
                self.endpoint_output(cx, host);
            }
            Toward::Arbiter | Toward::Peer => {
                if toward == Toward::Arbiter {
                    cx.counters.fastpass_fcp_to_arbiter_arrived += 1;
                }
                let Some(rank) = self.arbiters.iter().position(|a| a.host == host) else {
                    self.channel.take(id);
                    return;
                };
                // The arbiter handles it after its processing latency (§6.2, §7.3).
                if self.cfg.processing == 0 {
                    self.on_arbiter_msg(cx, rank as u32, id);
                } else {
                    cx.push(
                        cx.now + self.cfg.processing,
                        Ev::FpHandle {
                            rank: rank as u32,
                            msg: id,
                        },
                    );
                }
            }
        }
    }

    /// Arbiter `rank` handles message `id`, its processing latency after it arrived.
    pub fn on_arbiter_msg(&mut self, cx: &mut Ctx, rank: u32, id: u32) {
        let Some((m, _)) = self.channel.take(id) else {
            return;
        };
        let r = rank as usize;
        if self.dead(r, cx.now) {
            return;
        }
        self.arbiters[r].handle(cx.now, m);
        self.arbiter_output(cx, r);
    }

    /// What `host`'s endpoint wants done: messages to the arbiters, granted timeslots,
    /// its next timer.
    fn endpoint_output(&mut self, cx: &mut Ctx, host: u32) {
        let h = host as usize;
        while let Some(m) = self.endpoints[h].poll_transmit() {
            // To every arbiter (§5.1: a multicast group).
            for a in 0..self.arbiters.len() {
                let to = self.arbiters[a].host;
                self.send(cx, host, to, Toward::Arbiter, m.clone());
            }
        }
        while let Some(Granted {
            timeslot,
            dst,
            path,
        }) = self.endpoints[h].poll_event()
        {
            let start = (timeslot * self.slot).max(cx.now);
            let err = if self.cfg.jitter > 0 {
                self.jitter[h].below(self.cfg.jitter + 1)
            } else {
                0
            };
            cx.push(
                start + err,
                Ev::FpSlot {
                    host,
                    dst,
                    path,
                    lo: timeslot as u16,
                },
            );
        }
        if let Some(t) = self.endpoints[h].poll_timeout() {
            let t = t.max(cx.now);
            if self.ep_timer[h].is_none_or(|q| t < q) {
                self.ep_timer[h] = Some(t);
                cx.push(t, Ev::FpEndpoint { host });
            }
        }
    }

    /// What arbiter `r` wants done: messages to endpoints and arbiters, its next timer.
    fn arbiter_output(&mut self, cx: &mut Ctx, r: usize) {
        let from = self.arbiters[r].host;
        while let Some(t) = self.arbiters[r].poll_transmit(cx.now) {
            match t.dest {
                Dest::Endpoint(e) => self.send(cx, from, e, Toward::Endpoint, t.msg),
                Dest::Arbiters => {
                    for a in 0..self.arbiters.len() {
                        if a != r {
                            let to = self.arbiters[a].host;
                            self.send(cx, from, to, Toward::Peer, t.msg.clone());
                        }
                    }
                }
            }
        }
        let c = &mut cx.counters;
        self.arbiters[r].poll_events(
            cx.now,
            &mut c.fastpass_arbiter_resets,
            &mut c.fastpass_takeovers,
        );
        let t = self.arbiters[r]
            .next_timer(self.slot, self.cfg.lead)
            .max(cx.now);
        if self.arbiters[r].timer.is_none_or(|q| t < q) {
            self.arbiters[r].timer = Some(t);
            cx.push(t, Ev::FpArbiter { rank: r as u32 });
        }
    }

    /// FCP message `m` leaves `from` for `to`: a class-0 packet of its size, or an
    /// ideal-channel event; or lost (`fastpass.control_loss`).
    fn send(&mut self, cx: &mut Ctx, from: u32, to: u32, toward: Toward, m: Msg) {
        let wire = fcp_wire_bytes(&m, self.framing);
        let c = &mut cx.counters;
        match toward {
            Toward::Arbiter => {
                c.fastpass_fcp_to_arbiter += 1;
                c.fastpass_fcp_to_arbiter_bytes += wire as u64;
            }
            Toward::Endpoint => {
                c.fastpass_fcp_to_endpoint += 1;
                c.fastpass_fcp_to_endpoint_bytes += wire as u64;
            }
            Toward::Peer => c.fastpass_watchdog_bytes += wire as u64,
        }
        if self.cfg.control_loss > 0.0 && self.loss.next_f64() < self.cfg.control_loss {
            c.fastpass_fcp_lost += 1;
            return;
        }
        let id = self.channel.put(cx.now, toward, m);
        match self.cfg.control {
            // A host's own arbiter is reached without the network.
            _ if from == to => cx.push(cx.now, Ev::FpDeliver { host: to, msg: id }),
            Control::Ideal(d) => cx.push(cx.now + d, Ev::FpDeliver { host: to, msg: id }),
            Control::Network => {
                let hash = mix64(((from as u64) << 32 | to as u64) ^ 0xfc9);
                let mut p = Packet::new(PktKind::Fcp, 0, 0, from, to, 0, wire, hash);
                p.seq = id as u64;
                let pkt = cx.pkts.alloc(p);
                self.outbox.push((from, pkt));
            }
        }
    }

    /// The run has ended: the protocol's counts into the run's counters.
    pub fn end(&mut self, cx: &mut Ctx) {
        let c = &mut cx.counters;
        for e in &self.endpoints {
            let s = e.stats();
            c.fastpass_slots_rerequested += s.slots_lost + s.slots_late;
            c.fastpass_slots_late += s.slots_late;
            c.fastpass_report_retransmits += s.retransmits;
            c.fastpass_alloc_gaps += s.gaps;
            c.fastpass_endpoint_resets += s.resets;
        }
        for a in &self.arbiters {
            c.fastpass_slots_granted += a.granted;
            c.fastpass_path_errors += a.path_errors;
            c.fastpass_slots_skipped += a.skipped;
            c.fastpass_arbiter_backlog_max_ps =
                c.fastpass_arbiter_backlog_max_ps.max(a.link.backlog_max);
        }
        // §5.1: from the last timeslot the failed primary granted to the first its
        // successor granted.
        if let Some(new) = self
            .arbiters
            .iter()
            .skip(1)
            .find_map(|a| a.first_after_takeover)
        {
            if let Some(old) = self.arbiters[0].last_granted.filter(|&o| o < new) {
                c.fastpass_failover_gap_ps = (new - old) * self.slot;
            }
        }
        c.fastpass_fcp_expired += self.channel.expired;
        c.fastpass_unpinned_packets += self.pins.unpinned;
        // Nearest rank, as the ports' queue percentiles (output/queues.rs).
        let at = |h: &LogHistogram, q: f64| {
            let n = h.count();
            let rank = ((q * n as f64).ceil() as u64).clamp(1, n.max(1));
            h.at_rank(rank).unwrap_or(0)
        };
        c.fastpass_queue_delay_p50_ps = at(&self.delays, 0.5);
        c.fastpass_queue_delay_p99_ps = at(&self.delays, 0.99);
        c.fastpass_queue_delay_max_ps = self.delay_max;
        c.fastpass_alloc_delay_p50_ps = at(&self.alloc_delays, 0.5);
        c.fastpass_alloc_delay_p99_ps = at(&self.alloc_delays, 0.99);
        c.fastpass_alloc_delay_max_ps = self.alloc_delay_max;
        c.fastpass_queued_packets = self.queues.iter().map(|q| q.packets() as u64).sum();
    }

    /// Role of every arbiter (for tests).
    pub fn roles(&self) -> Vec<Role> {
        self.arbiters.iter().map(|a| a.role()).collect()
    }

    /// Timeslot `ts`'s start.
    pub fn slot_start(&self, ts: u64) -> Ps {
        ts * self.slot
    }
}

/// The rate of the fabric's switch-to-switch links (the host links' on a star): the
/// slowest, as the arbiters' own switches' uplinks may be faster
/// (`fastpass.arbiter_uplink_rate`).
fn fabric_rate(cx: &Ctx) -> u64 {
    let f = &cx.fabric;
    let hosts = f.hosts();
    (hosts..f.node_count() as u32)
        .flat_map(|n| f.ports(n))
        .filter(|p| p.peer >= hosts)
        .map(|p| p.rate)
        .min()
        .unwrap_or(f.ports(0)[0].rate)
}
