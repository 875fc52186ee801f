//! The endpoint side of FCP (Fastpass §5.3, §6.1, §6.3): running totals per destination,
//! batched reports, retransmission of current totals when something may have been lost
//! (a report unanswered, a gap in the arbiter's sequence numbers, the arbiter silent),
//! detection of lost and late allocations, resets and epochs.
//!
//! quinn-proto style: [`Endpoint::handle`] takes input, [`Endpoint::handle_timeout`]
//! fires timers, [`Endpoint::poll_transmit`] / [`Endpoint::poll_event`] drain output,
//! [`Endpoint::poll_timeout`] says when to call `handle_timeout` next.

use super::wire::{self, Alloc, Body, Demand, Msg, MAX_REPORT_ENTRIES};
use super::{newer, BurstDetector};
use std::collections::{BTreeMap, VecDeque};

/// Retransmissions in a row without a verified answer after which the endpoint asks for
/// a reset: its session is probably out of sync in a way the arbiter cannot see (e.g. it
/// adopted a reordered, older reset).
pub const UNANSWERED_RESET: u32 = 3;

/// Endpoint parameters; times in picoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EndpointConfig {
    pub id: u32,
    /// Timeslot length: timeslot t starts at `t * timeslot`.
    pub timeslot: u64,
    /// Reports are batched: new demand is reported this long after it arrives.
    pub report_interval: u64,
    /// The current totals are sent again when a destination's last report has gone
    /// unanswered this long, or when demand is waiting for allocations and nothing has
    /// come from the arbiter for this long.
    pub retransmit: u64,
    /// A granted timeslot that starts more than this before the allocation arrives is
    /// late: counted and re-requested, not handed to the host.
    pub late_threshold: u64,
    /// A reset request unanswered this long is sent again.
    pub reset_retry: u64,
    /// `bad_burst` session messages failing their checksum within `bad_window` make the
    /// endpoint ask for a reset.
    pub bad_burst: u32,
    pub bad_window: u64,
}

impl EndpointConfig {
    /// Defaults for a 10 Gbit/s endpoint with 1500-byte timeslots (1.2 us).
    pub fn new(id: u32) -> Self {
        EndpointConfig {
            id,
            timeslot: 1_200_000,
            report_interval: 2_000_000,
            retransmit: 200_000_000,
            late_threshold: 10_000_000,
            reset_retry: 200_000_000,
            bad_burst: 4,
            bad_window: 100_000_000,
        }
    }
}

/// Input to the endpoint.
#[derive(Clone, Debug)]
pub enum Input {
    /// The host queued `slots` more timeslots' worth of packets for `dst`.
    Demand { dst: u32, slots: u64 },
    /// A message from an arbiter.
    Msg(Msg),
}

/// A timeslot to send in, for the host's queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Granted {
    pub timeslot: u64,
    pub dst: u32,
    pub path: u16,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EndpointStats {
    pub reports_sent: u64,
    /// Reports sent because the retransmit timer fired.
    pub retransmits: u64,
    /// Messages from the arbiter found missing by the gap in its sequence numbers (each
    /// gap sends the current totals at once: the answer shows what was lost).
    pub gaps: u64,
    pub allocs_received: u64,
    /// Allocation messages dropped as older than one already processed.
    pub allocs_stale: u64,
    /// Timeslots the arbiter allocated that never arrived (re-requested).
    pub slots_lost: u64,
    /// Timeslots that arrived too late (re-requested).
    pub slots_late: u64,
    pub slots_granted: u64,
    pub resets: u64,
    pub reset_requests_sent: u64,
    pub bad_checksums: u64,
    /// Messages from an epoch below the current one, ignored.
    pub stale_epoch: u64,
    /// Decoding failures other than checksums.
    pub malformed: u64,
}

#[derive(Clone, Copy, Debug, Default)]
struct Dst {
    /// Running total requested since the last reset (modular).
    requested: u64,
    /// Timeslots accounted as allocated: received, or allocated and lost (modular).
    received: u64,
    /// The arbiter has acknowledged `requested`.
    acked: bool,
    /// To be included in the next report.
    dirty: bool,
    /// When it was last reported (the retransmission of an unanswered total counts from
    /// there: a newer report of the same destination supersedes the older), and the
    /// sequence number of that report (an allocation acknowledging it acknowledges the
    /// total, unless more demand has come since).
    reported_at: u64,
    reported_seq: u32,
}

pub struct Endpoint {
    cfg: EndpointConfig,
    epoch: u32,
    nonce: u64,
    /// A reset has been received in `epoch` (else reports would be rejected).
    synced: bool,
    dsts: BTreeMap<u32, Dst>,
    seq: u32,
    last_alloc: Option<u32>,
    /// The arbiter's sequence number on its last message of this session (reset or
    /// allocation), and when it came: the next should be one more (§5.3: a gap is a lost
    /// message), and while nothing comes, allocations may have been lost.
    heard: Option<u32>,
    heard_at: u64,
    /// Sequence number of the last reset accepted in `epoch`: an older one arriving late
    /// (reordered) is ignored.
    last_reset: Option<u32>,
    /// Bad checksums before this time are expected (messages of the old nonce still in
    /// flight after a reset) and not counted towards a reset request.
    quiet_until: u64,
    /// Retransmissions in a row with no verified answer: at
    /// [`UNANSWERED_RESET`] the endpoint asks for a reset (its nonce may be stale).
    unanswered: u32,
    report_due: Option<u64>,
    /// The next report resends current totals (a retransmission, or after a gap): it goes
    /// as a query, whose answer carries the arbiter's counts.
    query: bool,
    /// No retransmission is due before this (the timer is re-armed when it fires early:
    /// [`Endpoint::retransmit_deadline`] says when one is due).
    retransmit_due: Option<u64>,
    reset_request_due: Option<u64>,
    bad: BurstDetector,
    tx: VecDeque<Msg>,
    events: VecDeque<Granted>,
    stats: EndpointStats,
}

impl Endpoint {
    /// A new endpoint, not yet synchronized: it asks the arbiter for a reset at once.
    pub fn new(cfg: EndpointConfig) -> Self {
        Endpoint {
            cfg,
            epoch: 0,
            nonce: 0,
            synced: false,
            dsts: BTreeMap::new(),
            seq: 0,
            last_alloc: None,
            heard: None,
            heard_at: 0,
            last_reset: None,
            quiet_until: 0,
            unanswered: 0,
            report_due: None,
            query: false,
            retransmit_due: None,
            reset_request_due: Some(0),
            bad: BurstDetector::new(cfg.bad_burst, cfg.bad_window),
            tx: VecDeque::new(),
            events: VecDeque::new(),
            stats: EndpointStats::default(),
        }
    }

    pub fn config(&self) -> &EndpointConfig {
        &self.cfg
    }
    pub fn epoch(&self) -> u32 {
        self.epoch
    }
    pub fn nonce(&self) -> u64 {
        self.nonce
    }
    pub fn synced(&self) -> bool {
        self.synced
    }
    pub fn stats(&self) -> &EndpointStats {
        &self.stats
    }
    /// Timeslots requested for `dst` and not yet allocated.
    pub fn outstanding(&self, dst: u32) -> u64 {
        self.dsts
            .get(&dst)
            .map_or(0, |d| d.requested.wrapping_sub(d.received))
    }
    /// The running total requested for `dst` since the last reset.
    pub fn requested(&self, dst: u32) -> u64 {
        self.dsts.get(&dst).map_or(0, |d| d.requested)
    }

    pub fn handle(&mut self, now: u64, input: Input) {
        match input {
            Input::Demand { dst, slots } => self.add_demand(now, dst, slots),
            Input::Msg(m) => self.handle_msg(now, m),
        }
    }

    /// A datagram from the network: decoded with the current nonce; a bad checksum
    /// counts towards a reset request, other malformed input is counted and dropped.
    pub fn handle_bytes(&mut self, now: u64, bytes: &[u8]) {
        match wire::decode(bytes, self.nonce) {
            Ok(m) => self.handle_msg(now, m),
            Err(wire::DecodeError::Checksum) => self.bad_checksum(now),
            Err(_) => self.stats.malformed += 1,
        }
    }

    fn add_demand(&mut self, now: u64, dst: u32, slots: u64) {
        if slots == 0 || dst == self.cfg.id {
            return;
        }
        self.rerequest(now, dst, slots);
    }

    /// Add `slots` to `dst`'s total and schedule a report.
    fn rerequest(&mut self, now: u64, dst: u32, slots: u64) {
        let d = self.dsts.entry(dst).or_default();
        d.requested = d.requested.wrapping_add(slots);
        d.acked = false;
        d.dirty = true;
        if self.report_due.is_none() {
            self.report_due = Some(now.saturating_add(self.cfg.report_interval));
        }
    }

    fn bad_checksum(&mut self, now: u64) {
        self.stats.bad_checksums += 1;
        if now >= self.quiet_until && self.bad.hit(now) && self.reset_request_due.is_none() {
            self.synced = false;
            self.reset_request_due = Some(now);
        }
    }

    fn handle_msg(&mut self, now: u64, m: Msg) {
        if m.endpoint != self.cfg.id && !matches!(m.body, Body::Watchdog) {
            self.stats.malformed += 1;
            return;
        }
        if m.epoch < self.epoch {
            self.stats.stale_epoch += 1;
            return;
        }
        if m.kind().is_session() && m.nonce != self.nonce {
            self.bad_checksum(now);
            return;
        }
        let higher = m.epoch > self.epoch;
        match m.body {
            Body::Reset { nonce } => self.reset(now, m.epoch, m.seq, nonce),
            _ if higher => {
                // An arbiter of a higher epoch: follow it, and ask it for a reset (its
                // nonce is not ours, so nothing else it sends can verify).
                self.epoch = m.epoch;
                self.synced = false;
                if self.reset_request_due.is_none() {
                    self.reset_request_due = Some(now);
                }
            }
            Body::Alloc(a) if self.synced => self.alloc(now, m.seq, a),
            _ => {}
        }
    }

    /// §5.3: counts restart from zero; the endpoint re-reports what is still queued.
    fn reset(&mut self, now: u64, epoch: u32, seq: u32, nonce: u64) {
        let same_epoch = epoch == self.epoch;
        let dup = self.synced && same_epoch && nonce == self.nonce;
        if !dup && same_epoch && self.last_reset.is_some_and(|s| !newer(seq, s)) {
            // A reset older than the one adopted, reordered: adopting it would desync.
            return;
        }
        // The arbiter's numbering of this session starts here (a repeated reset, sent
        // again because our ack was lost, numbers on).
        if !dup || self.heard.is_none_or(|h| newer(seq, h)) {
            self.heard = Some(seq);
            self.heard_at = now;
        }
        if !dup {
            self.last_reset = Some(seq);
            self.quiet_until = now.saturating_add(self.cfg.bad_window);
            self.unanswered = 0;
            self.stats.resets += 1;
            self.epoch = epoch;
            self.nonce = nonce;
            self.synced = true;
            self.last_alloc = None;
            self.query = false;
            self.reset_request_due = None;
            for d in self.dsts.values_mut() {
                d.requested = d.requested.wrapping_sub(d.received);
                d.received = 0;
                d.acked = d.requested == 0;
                d.dirty = !d.acked;
            }
            self.dsts.retain(|_, d| !d.acked);
        }
        self.push(Body::ResetAck { nonce });
        // Report at once: the reset is one round trip.
        if self.dsts.values().any(|d| d.dirty) {
            self.report_due = Some(now);
        }
    }

    fn alloc(&mut self, now: u64, seq: u32, a: Alloc) {
        if let Some(last) = self.last_alloc {
            if !newer(seq, last) {
                // Older or duplicated: its grants were (or will be) counted as lost from
                // the totals of a newer message; using them would allocate twice.
                self.stats.allocs_stale += 1;
                return;
            }
        }
        self.last_alloc = Some(seq);
        self.stats.allocs_received += 1;
        self.unanswered = 0;
        // §5.3: the arbiter numbers its messages; one missing may have carried grants,
        // which only the arbiter's counts can reveal now.
        let gap = self.heard.is_some_and(|h| seq != h.wrapping_add(1));
        self.heard = Some(seq);
        self.heard_at = now;
        for g in &a.grants {
            let Some(d) = self.dsts.get_mut(&g.dst) else {
                continue;
            };
            d.received = d.received.wrapping_add(1);
            let ts = a.base.checked_add(g.offset as u64);
            let start = ts.and_then(|t| t.checked_mul(self.cfg.timeslot));
            match (ts, start) {
                (Some(timeslot), Some(s)) if now <= s.saturating_add(self.cfg.late_threshold) => {
                    self.stats.slots_granted += 1;
                    self.events.push_back(Granted {
                        timeslot,
                        dst: g.dst,
                        path: g.path,
                    });
                }
                _ => {
                    self.stats.slots_late += 1;
                    self.rerequest(now, g.dst, 1);
                }
            }
        }
        // The arbiter has the totals of the reports it acknowledges (§5.3: ACKs of
        // aggregate demands), unless more demand has come since.
        for d in self.dsts.values_mut() {
            if !d.acked && !d.dirty && a.acks(d.reported_seq) {
                d.acked = true;
            }
        }
        for t in &a.totals {
            let Some(d) = self.dsts.get_mut(&t.dst) else {
                continue;
            };
            let acked = t.requested == d.requested;
            let lost = t.allocated.wrapping_sub(d.received);
            if lost != 0 && lost <= crate::MAX_OUTSTANDING {
                // Allocated by the arbiter, never seen here: ask again.
                d.received = t.allocated;
                self.stats.slots_lost += lost;
                self.rerequest(now, t.dst, lost);
            } else if acked {
                d.acked = true;
            }
        }
        if gap && self.unsettled() {
            self.stats.gaps += 1;
            self.resend_unsettled(now);
        }
        if !self.unsettled() {
            self.retransmit_due = None;
        }
    }

    /// Every destination not acknowledged or not fully allocated goes in a report now,
    /// with its current total (old packets are never resent, §5.3).
    fn resend_unsettled(&mut self, now: u64) {
        for d in self.dsts.values_mut() {
            if !d.acked || d.requested != d.received {
                d.dirty = true;
            }
        }
        self.query = true;
        self.report_due = Some(now);
    }

    /// When a retransmission is due: a destination's last report unanswered for
    /// `retransmit`, or, with demand acknowledged but not all allocated, the arbiter
    /// silent for `retransmit` (the last allocation message may have been lost, and no
    /// later one will show the gap). Destinations about to be reported do not count.
    /// While allocations keep coming in sequence nothing is resent, however much demand
    /// waits: the retransmissions do not grow with the backlog.
    fn retransmit_deadline(&self) -> Option<u64> {
        let mut t: Option<u64> = None;
        let mut waiting = false;
        for d in self.dsts.values().filter(|d| !d.dirty) {
            if !d.acked {
                let due = d.reported_at.saturating_add(self.cfg.retransmit);
                t = Some(t.map_or(due, |t| t.min(due)));
            } else if d.requested != d.received {
                waiting = true;
            }
        }
        if waiting {
            let due = self.heard_at.saturating_add(self.cfg.retransmit);
            t = Some(t.map_or(due, |t| t.min(due)));
        }
        t
    }

    /// Some destination is not acknowledged or not fully allocated: the retransmit timer
    /// runs (a query of its current totals is answered with the arbiter's counts, which
    /// reveal lost allocations).
    fn unsettled(&self) -> bool {
        self.dsts
            .values()
            .any(|d| !d.acked || d.requested != d.received)
    }

    fn push(&mut self, body: Body) {
        let m = Msg {
            epoch: self.epoch,
            seq: self.seq,
            endpoint: self.cfg.id,
            nonce: self.nonce,
            body,
        };
        self.seq = self.seq.wrapping_add(1);
        self.tx.push_back(m);
    }

    /// Fire the timers due at `now`: batched reports, retransmission, reset requests.
    pub fn handle_timeout(&mut self, now: u64) {
        if self.reset_request_due.is_some_and(|t| t <= now) {
            self.stats.reset_requests_sent += 1;
            self.push(Body::ResetRequest);
            self.reset_request_due = Some(now.saturating_add(self.cfg.reset_retry));
        }
        if !self.synced {
            return;
        }
        if self.retransmit_due.is_some_and(|t| t <= now) {
            match self.retransmit_deadline() {
                Some(t) if t > now => self.retransmit_due = Some(t),
                None => self.retransmit_due = None,
                Some(_) => self.retransmit(now),
            }
        }
        if self.report_due.is_some_and(|t| t <= now) {
            self.report_due = None;
            // Settled destinations stay: the arbiter keeps its running totals for them
            // until the next reset, so forgetting ours would restart them at zero and
            // the next report would fall behind the arbiter's (a total it has already
            // allocated asks for nothing). They go at a reset, where both sides restart.
            let mut entries = Vec::new();
            let dirty: Vec<u32> = self
                .dsts
                .iter()
                .filter(|(_, d)| d.dirty)
                .map(|(&k, _)| k)
                .collect();
            let query = std::mem::take(&mut self.query);
            for dst in dirty {
                let seq = self.seq; // the message these entries go in
                let d = self.dsts.get_mut(&dst).expect("listed above");
                d.dirty = false;
                d.reported_at = now;
                d.reported_seq = seq;
                entries.push(Demand {
                    dst,
                    total: d.requested,
                });
                if entries.len() == MAX_REPORT_ENTRIES {
                    self.push_report(query, std::mem::take(&mut entries));
                }
            }
            if !entries.is_empty() {
                self.push_report(query, entries);
            }
            if self.unsettled() {
                // Not pushed back by later reports: when it fires it looks for what is
                // really due ([`Endpoint::retransmit_deadline`], per destination), so a
                // busy endpoint reporting every few microseconds still resends a total
                // whose answer was lost.
                if self.retransmit_due.is_none_or(|t| t <= now) {
                    self.retransmit_due = Some(now.saturating_add(self.cfg.retransmit));
                }
            } else {
                self.retransmit_due = None;
            }
        }
    }

    /// A report of `entries`, or a query if the totals are resent (its answer carries the
    /// arbiter's counts: what it holds, and what it allocated, which shows what was lost).
    fn push_report(&mut self, query: bool, entries: Vec<Demand>) {
        self.stats.reports_sent += 1;
        self.push(if query {
            Body::Query(entries)
        } else {
            Body::Report(entries)
        });
    }

    /// The retransmit timer fired with something due: the current totals of every
    /// destination not acknowledged or not fully allocated go out (old packets are never
    /// resent); after [`UNANSWERED_RESET`] of these in a row, a reset request too.
    fn retransmit(&mut self, now: u64) {
        self.stats.retransmits += 1;
        self.unanswered += 1;
        if self.unanswered >= UNANSWERED_RESET && self.reset_request_due.is_none() {
            self.unanswered = 0;
            self.stats.reset_requests_sent += 1;
            self.push(Body::ResetRequest);
            self.reset_request_due = Some(now.saturating_add(self.cfg.reset_retry));
        }
        self.resend_unsettled(now);
    }

    /// When to call [`Endpoint::handle_timeout`] next.
    pub fn poll_timeout(&self) -> Option<u64> {
        let mut t = self.reset_request_due;
        if self.synced {
            for x in [self.report_due, self.retransmit_due] {
                t = match (t, x) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
            }
        }
        t
    }

    /// The next message to send to the arbiters (a UDP service encodes it with
    /// [`Msg::encode`]; the simulator sends a packet of [`Msg::wire_len`] bytes).
    pub fn poll_transmit(&mut self) -> Option<Msg> {
        self.tx.pop_front()
    }

    /// The next granted timeslot for the host's queues.
    pub fn poll_event(&mut self) -> Option<Granted> {
        self.events.pop_front()
    }
}
