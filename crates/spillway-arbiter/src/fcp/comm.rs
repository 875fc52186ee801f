//! The arbiter's side of FCP (the paper's comm-core, §6.2): per endpoint the nonce and
//! reset state; reports go into an [`Arbiter`] as totals, so duplicated and reordered
//! reports never over-allocate (the demand table adds only `new total - stored total`);
//! allocations go out per endpoint from a [`Batch`], with the counts behind them; a
//! burst of bad checksums resets an endpoint (§5.3); the primary sends watchdogs and a
//! secondary takes over after silence (§5.1, [`super::failover`]).

use super::failover::{Failover, FailoverConfig, FailoverEvent, Role};
use super::wire::{self, Alloc, Body, Msg, SlotGrant, Totals, MAX_TOTALS};
use super::{splitmix, BurstDetector};
use crate::{Arbiter, Batch, Flow, Grant};
use std::collections::VecDeque;

/// Arbiter-side parameters; times in picoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommConfig {
    /// A reset not acknowledged this long is sent again.
    pub reset_retry: u64,
    /// `bad_burst` session messages from one endpoint failing their checksum (or of the
    /// wrong epoch) within `bad_window` reset it.
    pub bad_burst: u32,
    pub bad_window: u64,
    /// Seed of the nonces (deterministic; a service seeds it from its own randomness).
    pub nonce_seed: u64,
    pub failover: FailoverConfig,
    /// Answer reports with the next batch's allocation message instead of at once (one
    /// message per endpoint per batch, not one per report: what keeps FCP's share of
    /// the arbiter's link small when endpoints report every few microseconds). The
    /// answer then waits up to one batch; the endpoint's retransmission timeout must
    /// be longer than that.
    pub defer_acks: bool,
}

impl CommConfig {
    pub fn new(failover: FailoverConfig, nonce_seed: u64) -> Self {
        CommConfig {
            reset_retry: 200_000_000,
            bad_burst: 4,
            bad_window: 100_000_000,
            nonce_seed,
            failover,
            defer_acks: false,
        }
    }
}

/// Where a message goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dest {
    Endpoint(u32),
    /// The arbiters' multicast group (watchdogs).
    Arbiters,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transmit {
    pub dest: Dest,
    pub msg: Msg,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommEvent {
    Failover(FailoverEvent),
    /// A reset of `endpoint` began (its counts are zero).
    Reset {
        endpoint: u32,
    },
    /// `endpoint` acknowledged its reset.
    Synced {
        endpoint: u32,
    },
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CommStats {
    pub reports: u64,
    /// Report entries the demand table refused (an implausible total or destination).
    pub refused: u64,
    pub allocs_sent: u64,
    pub acks_sent: u64,
    pub resets: u64,
    pub bad_checksums: u64,
    pub malformed: u64,
    pub watchdogs_sent: u64,
    /// Endpoint messages dropped because this arbiter is a secondary.
    pub dropped_secondary: u64,
}

struct Peer {
    nonce: u64,
    /// A reset sent and not acknowledged: when to send it again.
    resetting: Option<u64>,
    /// Bad checksums before this time are expected (old-nonce messages in flight).
    quiet_until: u64,
    seq: u32,
    bad: BurstDetector,
    /// This batch's grants for the endpoint (scratch, reused).
    grants: Vec<SlotGrant>,
    /// With `defer_acks`: destinations queried since the last answer (their totals go in
    /// it), and whether an answer is owed at all (reports since the last).
    acks: Vec<u32>,
    answer: bool,
    /// The sequence number of the endpoint's latest message verified this session, and
    /// which of the 32 before it were too: every allocation message acknowledges them.
    heard: Option<u32>,
    heard_vec: u32,
}

impl Peer {
    /// The endpoint's message `seq` verified.
    fn hear(&mut self, seq: u32) {
        let Some(h) = self.heard else {
            self.heard = Some(seq);
            self.heard_vec = 0;
            return;
        };
        let ahead = seq.wrapping_sub(h);
        if ahead == 0 {
        } else if (ahead as i32) > 0 {
            self.heard_vec = match ahead {
                1..=31 => (self.heard_vec << ahead) | (1 << (ahead - 1)),
                32 => 1 << 31,
                _ => 0,
            };
            self.heard = Some(seq);
        } else if let d @ 1..=32 = h.wrapping_sub(seq) {
            self.heard_vec |= 1 << (d - 1);
        }
    }
}

pub struct Comm {
    cfg: CommConfig,
    failover: Failover,
    peers: Vec<Peer>,
    nonces: u64,
    touched: Vec<u32>,
    /// With `defer_acks`: endpoints owed an answer.
    acking: Vec<u32>,
    dsts: Vec<u32>,
    tx: VecDeque<Transmit>,
    events: VecDeque<CommEvent>,
    stats: CommStats,
}

impl Comm {
    /// The protocol side of an arbiter serving endpoints `0..endpoints`. The initial
    /// primary (rank 0) resets every endpoint at once, so they learn its epoch and nonce.
    pub fn new(cfg: CommConfig, endpoints: u32, arb: &mut Arbiter, now: u64) -> Self {
        let mut c = Comm {
            cfg,
            failover: Failover::new(cfg.failover, now),
            peers: (0..endpoints)
                .map(|_| Peer {
                    nonce: 0,
                    resetting: None,
                    quiet_until: 0,
                    seq: 0,
                    bad: BurstDetector::new(cfg.bad_burst, cfg.bad_window),
                    grants: Vec::new(),
                    acks: Vec::new(),
                    answer: false,
                    heard: None,
                    heard_vec: 0,
                })
                .collect(),
            nonces: 0,
            touched: Vec::new(),
            acking: Vec::new(),
            dsts: Vec::new(),
            tx: VecDeque::new(),
            events: VecDeque::new(),
            stats: CommStats::default(),
        };
        if c.failover.role() == Role::Primary {
            c.reset_all(now, arb);
        }
        c
    }

    pub fn role(&self) -> Role {
        self.failover.role()
    }
    pub fn epoch(&self) -> u32 {
        self.failover.epoch()
    }
    pub fn stats(&self) -> &CommStats {
        &self.stats
    }
    /// The nonce of `endpoint`'s session (0 if unknown).
    pub fn nonce(&self, endpoint: u32) -> u64 {
        self.peers.get(endpoint as usize).map_or(0, |p| p.nonce)
    }

    fn fresh_nonce(&mut self) -> u64 {
        loop {
            self.nonces += 1;
            let n = splitmix(
                self.cfg.nonce_seed ^ splitmix(self.nonces ^ ((self.epoch() as u64) << 40)),
            );
            if n != wire::CONTROL_NONCE {
                return n;
            }
        }
    }

    fn send(&mut self, e: u32, body: Body) {
        let epoch = self.epoch();
        let p = &mut self.peers[e as usize];
        let msg = Msg {
            epoch,
            seq: p.seq,
            endpoint: e,
            nonce: p.nonce,
            body,
        };
        p.seq = p.seq.wrapping_add(1);
        self.tx.push_back(Transmit {
            dest: Dest::Endpoint(e),
            msg,
        });
    }

    /// §5.3 re-synchronization: zero the endpoint's counts, pick a new nonce, send it.
    fn start_reset(&mut self, now: u64, e: u32, arb: &mut Arbiter) {
        let nonce = self.fresh_nonce();
        if arb.reset(e).is_err() {
            // An endpoint outside the arbiter's fabric: nothing to reset.
            self.stats.malformed += 1;
            return;
        }
        let p = &mut self.peers[e as usize];
        p.nonce = nonce;
        // Answers to reports of the old session would carry counts now zeroed.
        p.acks.clear();
        p.answer = false;
        p.heard = None;
        p.resetting = Some(now.saturating_add(self.cfg.reset_retry));
        p.quiet_until = now.saturating_add(self.cfg.bad_window);
        self.stats.resets += 1;
        self.events.push_back(CommEvent::Reset { endpoint: e });
        self.send(e, Body::Reset { nonce });
    }

    fn reset_all(&mut self, now: u64, arb: &mut Arbiter) {
        for e in 0..self.peers.len() as u32 {
            self.start_reset(now, e, arb);
        }
    }

    fn failover_event(&mut self, now: u64, ev: Option<FailoverEvent>, arb: &mut Arbiter) {
        let Some(ev) = ev else { return };
        self.events.push_back(CommEvent::Failover(ev));
        match ev {
            FailoverEvent::TookOver { .. } => self.reset_all(now, arb),
            FailoverEvent::StoodDown { .. } => {
                for p in &mut self.peers {
                    p.resetting = None;
                }
            }
        }
    }

    /// A datagram: decoded with the nonce of the endpoint it names; a bad checksum counts
    /// towards that endpoint's reset.
    pub fn handle_bytes(&mut self, now: u64, bytes: &[u8], arb: &mut Arbiter) {
        let h = match wire::peek(bytes) {
            Ok(h) => h,
            Err(_) => {
                self.stats.malformed += 1;
                return;
            }
        };
        let nonce = self.nonce(h.endpoint);
        match wire::decode(bytes, nonce) {
            Ok(m) => self.handle(now, m, arb),
            Err(wire::DecodeError::Checksum) if (h.endpoint as usize) < self.peers.len() => {
                self.bad(now, h.endpoint, arb)
            }
            Err(_) => self.stats.malformed += 1,
        }
    }

    fn bad(&mut self, now: u64, e: u32, arb: &mut Arbiter) {
        self.stats.bad_checksums += 1;
        if self.role() != Role::Primary {
            return;
        }
        let p = &mut self.peers[e as usize];
        // During a reset, old-nonce messages still in flight are expected.
        if p.resetting.is_none() && now >= p.quiet_until && p.bad.hit(now) {
            self.start_reset(now, e, arb);
        }
    }

    /// A message from an endpoint or another arbiter.
    pub fn handle(&mut self, now: u64, m: Msg, arb: &mut Arbiter) {
        if let Body::Watchdog = m.body {
            let ev = self.failover.on_watchdog(now, m.epoch);
            self.failover_event(now, ev, arb);
            return;
        }
        let e = m.endpoint;
        if e as usize >= self.peers.len() {
            self.stats.malformed += 1;
            return;
        }
        if m.epoch > self.epoch() {
            // The endpoint follows a higher epoch: a newer primary exists.
            let ev = self.failover.heard_higher(now, m.epoch);
            self.failover_event(now, ev, arb);
        }
        if self.role() != Role::Primary {
            self.stats.dropped_secondary += 1;
            return;
        }
        if let Body::ResetRequest = m.body {
            match self.peers[e as usize].resetting {
                // Already resetting: send the same reset again.
                Some(_) => {
                    let nonce = self.peers[e as usize].nonce;
                    self.send(e, Body::Reset { nonce });
                }
                None => self.start_reset(now, e, arb),
            }
            return;
        }
        if m.epoch != self.epoch() || m.nonce != self.peers[e as usize].nonce {
            self.bad(now, e, arb);
            return;
        }
        // A verified session message: the endpoint has the current nonce.
        if self.peers[e as usize].resetting.take().is_some() {
            self.events.push_back(CommEvent::Synced { endpoint: e });
        }
        self.peers[e as usize].hear(m.seq);
        let (entries, query) = match m.body {
            Body::Report(entries) => (entries, false),
            Body::Query(entries) => (entries, true),
            _ => return,
        };
        self.stats.reports += 1;
        self.dsts.clear();
        for d in &entries {
            match arb.request(e, d.dst, d.total) {
                Ok(()) => self.dsts.push(d.dst),
                Err(_) => self.stats.refused += 1,
            }
        }
        // §5.3: the answer acknowledges the report by its sequence number; only a
        // query's answer carries the counts (the endpoint resends its totals when it may
        // have missed allocations: `allocated` then shows which). Counts in answer to
        // every report were most of what an endpoint talking to many destinations was
        // sent, past the 1% of its link left for FCP (incast's receiver, issue 37).
        if !query {
            self.dsts.clear();
        }
        if self.cfg.defer_acks {
            let p = &mut self.peers[e as usize];
            if !p.answer {
                p.answer = true;
                self.acking.push(e);
            }
            p.acks.extend_from_slice(&self.dsts);
            return;
        }
        self.dsts.sort_unstable();
        self.dsts.dedup();
        // Ack at once.
        let dsts = std::mem::take(&mut self.dsts);
        self.send_alloc(e, 0, Vec::new(), &dsts, arb);
        self.stats.acks_sent += 1;
        self.dsts = dsts;
    }

    /// Allocation messages to `e`: `grants` (all in the first message) and the totals
    /// of `dsts`, split at [`MAX_TOTALS`].
    fn send_alloc(
        &mut self,
        e: u32,
        base: u64,
        mut grants: Vec<SlotGrant>,
        dsts: &[u32],
        arb: &Arbiter,
    ) {
        let totals = |dst: u32| {
            let f = Flow { src: e, dst };
            Totals {
                dst,
                requested: arb.demand().requested(f).unwrap_or(0),
                allocated: arb.demand().allocated(f).unwrap_or(0),
            }
        };
        // Sent only after a verified message from the endpoint (a report, for grants or
        // an answer), so `heard` is known.
        let p = &self.peers[e as usize];
        let (ack, ack_vec) = (p.heard.unwrap_or(0), p.heard_vec);
        let mut chunks = dsts.chunks(MAX_TOTALS);
        loop {
            let chunk = chunks.next().unwrap_or(&[]);
            let a = Alloc {
                base,
                ack,
                ack_vec,
                grants: std::mem::take(&mut grants),
                totals: chunk.iter().map(|&d| totals(d)).collect(),
            };
            self.send(e, Body::Alloc(a));
            if chunks.len() == 0 {
                break;
            }
        }
    }

    /// Allocate timeslots `first .. first + width` (see [`Arbiter::allocate`]) and queue
    /// each endpoint's grants, with the path id `path` gives each grant (the caller's
    /// path selection), and, with `defer_acks`, the answers to its reports. Nothing while
    /// a secondary. Call this, not `Arbiter::allocate`: totals sent later count these
    /// grants, so they must be on their way first.
    pub fn allocate(
        &mut self,
        first: u64,
        arb: &mut Arbiter,
        batch: &mut Batch,
        path: impl FnMut(Grant) -> u16,
    ) {
        if self.role() != Role::Primary {
            return;
        }
        arb.allocate(first, batch);
        self.send_batch(arb, batch, path);
    }

    /// The allocation messages of `batch`, just allocated by `arb` ([`Arbiter::allocate`]):
    /// for a caller whose path selection needs the whole batch before it can name any
    /// grant's path (it colors each timeslot's matching at once), so it allocates,
    /// selects, then sends. Call it right after the allocation, as [`Comm::allocate`]
    /// does; nothing while a secondary.
    pub fn send_batch(&mut self, arb: &Arbiter, batch: &Batch, mut path: impl FnMut(Grant) -> u16) {
        if self.role() != Role::Primary {
            return;
        }
        let first = batch.first_timeslot();
        for g in batch.grants() {
            let Some(p) = self.peers.get_mut(g.src as usize) else {
                continue;
            };
            if p.grants.is_empty() {
                self.touched.push(g.src);
            }
            p.grants.push(SlotGrant {
                offset: g.slot as u16,
                path: path(g),
                dst: g.dst,
            });
        }
        let touched = std::mem::take(&mut self.touched);
        let acking = std::mem::take(&mut self.acking);
        // Endpoints granted, then those with reports to answer (`defer_acks`); one in
        // both lists is sent to once. Totals go only with answers to queries: a grant
        // needs none (its message's sequence number shows the endpoint whether one
        // before it was lost, and its query then asks for the counts, §5.3), and totals
        // for every destination granted were most of the bytes the arbiter sent when
        // its endpoints each talked to many destinations (partition/aggregate on 1,024
        // hosts, issue 37).
        for &e in touched.iter().chain(&acking) {
            let p = &mut self.peers[e as usize];
            if p.grants.is_empty() && !p.answer {
                continue;
            }
            p.answer = false;
            let grants = std::mem::take(&mut p.grants);
            let mut dsts = std::mem::take(&mut p.acks);
            dsts.sort_unstable();
            dsts.dedup();
            if grants.is_empty() {
                self.stats.acks_sent += 1;
            } else {
                self.stats.allocs_sent += 1;
            }
            self.send_alloc(e, first, grants, &dsts, arb);
        }
        self.touched = touched;
        self.touched.clear();
        self.acking = acking;
        self.acking.clear();
    }

    /// Fire timers: takeover, watchdogs, reset retries.
    pub fn handle_timeout(&mut self, now: u64, arb: &mut Arbiter) {
        let ev = self.failover.handle_timeout(now);
        self.failover_event(now, ev, arb);
        if self.failover.watchdog_due(now) {
            self.stats.watchdogs_sent += 1;
            self.tx.push_back(Transmit {
                dest: Dest::Arbiters,
                msg: Msg {
                    epoch: self.epoch(),
                    seq: 0,
                    endpoint: self.cfg.failover.rank,
                    nonce: wire::CONTROL_NONCE,
                    body: Body::Watchdog,
                },
            });
        }
        if self.role() == Role::Primary {
            for e in 0..self.peers.len() as u32 {
                let p = &mut self.peers[e as usize];
                if p.resetting.is_some_and(|t| t <= now) {
                    p.resetting = Some(now.saturating_add(self.cfg.reset_retry));
                    let nonce = p.nonce;
                    self.send(e, Body::Reset { nonce });
                }
            }
        }
    }

    /// When to call [`Comm::handle_timeout`] next.
    pub fn poll_timeout(&self) -> u64 {
        let mut t = self.failover.poll_timeout();
        if self.role() == Role::Primary {
            for p in &self.peers {
                if let Some(r) = p.resetting {
                    t = t.min(r);
                }
            }
        }
        t
    }

    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.tx.pop_front()
    }

    pub fn poll_event(&mut self) -> Option<CommEvent> {
        self.events.pop_front()
    }
}
