//! `spillway-arbiterd`'s state machine: FCP ([`Comm`]) + allocator ([`Arbiter`]) + path
//! selection ([`TwoTier`]) on real time. Each batch of timeslots is allocated when its
//! first timeslot is `lead` away (§5.1; the simulator's `fastpass::arbiter` does the
//! same), paths are chosen per timeslot (§4), and every endpoint gets one message per
//! batch (§6.2). Datagrams are accepted only from the configured addresses: an endpoint
//! message must come from that endpoint's address, a watchdog from another arbiter's;
//! anything else is counted and dropped before it is decoded, so a flood from elsewhere
//! costs a `recv` and a lookup, and allocates nothing.

use super::clock::{Clock, Lateness};
use super::config::ServiceConfig;
use super::data::{STATUS_QUERY, STOP_QUERY};
use super::log::{self, EventLog};
use super::runtime::{control_allowed, Service};
use crate::fcp::wire::{self, Kind, MAX_MSG_LEN};
use crate::fcp::{Comm, CommEvent, Dest, FailoverEvent, Role};
use crate::pathsel::TwoTier;
use crate::{Arbiter, Batch, Flow, Mode, Policy};
use std::net::{SocketAddr, UdpSocket};

/// Status queries answered per second at most: a flood of them (any loopback process
/// may ask) must not turn the arbiter into a JSON formatter.
pub const STATUS_PER_S: u32 = 200;

/// A grant's path when there is no choice (same rack, or a star).
pub const ANY_PATH: u16 = u16::MAX;

#[derive(Clone, Debug, Default)]
pub struct ArbiterStats {
    pub granted: u64,
    pub batches: u64,
    /// Batches allocated more than one batch's time after they were due: the arbiter
    /// did not keep up with real time then.
    pub batches_late: u64,
    /// Timeslots never allocated because they had begun before the arbiter got to them.
    pub slots_skipped: u64,
    pub path_errors: u64,
    /// Datagrams from an address that is not the endpoint (or arbiter) they claim to be.
    pub unknown_source: u64,
    /// Datagrams too short or otherwise unreadable as FCP, before any state is touched.
    pub malformed: u64,
    pub status_queries: u64,
    pub send_errors: u64,
    pub datagrams: u64,
    /// Takeovers held back for a watchdog period because this process had stalled.
    pub takeovers_held: u64,
    /// Allocations held back for a watchdog period because this primary had stalled
    /// for long enough that another arbiter may have taken over (split brain).
    pub primary_holds: u64,
    /// Status queries not answered: over [`STATUS_PER_S`] in a second.
    pub status_limited: u64,
    /// When it last took over, and the first timeslot it allocated after.
    pub took_over_at: Option<u64>,
    pub first_after_takeover: Option<u64>,
}

pub struct ArbiterService {
    cfg: ServiceConfig,
    rank: u32,
    clock: Clock,
    arb: Arbiter,
    comm: Comm,
    batch: Batch,
    paths: Option<TwoTier>,
    next_first: u64,
    flows: Vec<Flow>,
    sel: Vec<Option<u32>>,
    path_of: Vec<u16>,
    buf: Vec<u8>,
    started: u64,
    grant_log: EventLog,
    lateness: Lateness,
    /// How late each batch was allocated (after `first x timeslot - lead`).
    pub alloc_lag: Lateness,
    stop: bool,
    /// Timers held back until this time after a stall (see `on_timer`); 0: none.
    grace_until: u64,
    /// The current second (ps / 1e12) and the status queries answered in it.
    status_window: (u64, u32),
    pub stats: ArbiterStats,
}

impl ArbiterService {
    /// Arbiter `rank` of `cfg` at `now`. The initial primary (rank 0) resets every
    /// endpoint at once so that they learn its epoch and nonces (§5.3).
    pub fn new(
        cfg: ServiceConfig,
        rank: u32,
        clock: Clock,
        now: u64,
        nonce_seed: u64,
        grant_log: EventLog,
    ) -> Self {
        let fabric = cfg.topology.fabric();
        let mut arb = Arbiter::new(&fabric, Policy::MaxMin, Mode::Greedy, cfg.batch)
            .expect("the batch width is checked when the file is read");
        let comm = Comm::new(
            cfg.comm(rank, nonce_seed),
            fabric.endpoints() as u32,
            &mut arb,
            now,
        );
        let paths = cfg
            .topology
            .paths()
            .expect("path selection is checked when the file is read");
        let n = fabric.endpoints();
        let s = ArbiterService {
            rank,
            clock,
            arb,
            comm,
            batch: Batch::new(),
            paths,
            next_first: (now + cfg.lead).div_ceil(cfg.timeslot),
            flows: Vec::new(),
            sel: Vec::new(),
            path_of: vec![ANY_PATH; cfg.batch as usize * n],
            buf: vec![0; MAX_MSG_LEN],
            started: now,
            grant_log,
            lateness: Lateness::default(),
            alloc_lag: Lateness::default(),
            stop: false,
            grace_until: 0,
            status_window: (0, 0),
            stats: ArbiterStats::default(),
            cfg,
        };
        s.log_role("start");
        s
    }

    pub fn role(&self) -> Role {
        self.comm.role()
    }
    pub fn epoch(&self) -> u32 {
        self.comm.epoch()
    }
    fn name(&self) -> String {
        format!("arbiter{}", self.rank)
    }

    fn log_role(&self, ev: &str) {
        let role = match self.role() {
            Role::Primary => "primary",
            Role::Secondary => "secondary",
        };
        log::event(
            &self.name(),
            ev,
            &format!(
                "\"rank\": {}, \"role\": \"{role}\", \"epoch\": {}, \"origin_unix_ns\": {}",
                self.rank,
                self.epoch(),
                self.clock.origin_unix_ns
            ),
        );
    }

    /// Allocate timeslots `first .. first + batch`, choose their paths, queue the grants.
    fn allocate(&mut self, now: u64, first: u64) {
        let slot = self.cfg.timeslot;
        let due = (first * slot).saturating_sub(self.cfg.lead);
        let lag = now.saturating_sub(due);
        self.alloc_lag.record(lag);
        self.stats.batches += 1;
        if lag > self.cfg.batch as u64 * slot {
            self.stats.batches_late += 1;
        }
        self.arb.allocate(first, &mut self.batch);
        let n = self.cfg.endpoints.len();
        for k in 0..self.cfg.batch {
            self.flows.clear();
            self.flows.extend(self.batch.timeslot(k));
            if self.flows.is_empty() {
                continue;
            }
            self.stats.granted += self.flows.len() as u64;
            let ok = match &mut self.paths {
                None => {
                    self.sel.clear();
                    self.sel.resize(self.flows.len(), None);
                    true
                }
                Some(p) => p.select(&self.flows, &mut self.sel).is_ok(),
            };
            if !ok {
                // The allocator keeps rack limits, so this is a bug if ever counted.
                self.stats.path_errors += 1;
                self.sel.clear();
                self.sel.resize(self.flows.len(), None);
            }
            for (f, p) in self.flows.iter().zip(&self.sel) {
                self.path_of[k as usize * n + f.src as usize] =
                    p.map_or(ANY_PATH, |c| c.min(ANY_PATH as u32 - 1) as u16);
            }
        }
        if self.stats.took_over_at.is_some()
            && self.stats.first_after_takeover.is_none()
            && !self.batch.is_empty()
        {
            self.stats.first_after_takeover = Some(first);
        }
        if self.grant_log.enabled() && !self.batch.is_empty() {
            let mut g = String::new();
            for x in self.batch.grants() {
                if !g.is_empty() {
                    g.push(',');
                }
                g.push_str(&format!("[{},{},{}]", first + x.slot as u64, x.src, x.dst));
            }
            self.grant_log.line(format_args!(
                "{{\"epoch\": {}, \"first\": {first}, \"grants\": [{g}]}}",
                self.epoch()
            ));
            // Flushed per batch: a killed primary's log still says what it granted.
            self.grant_log.flush();
        }
        let path_of = &self.path_of;
        self.comm.send_batch(&self.arb, &self.batch, |g| {
            path_of[g.slot as usize * n + g.src as usize]
        });
    }

    /// Send what `Comm` queued; endpoints by their address, the arbiters' group as one
    /// unicast per other arbiter (loopback has no multicast group to join, §5.1).
    fn flush(&mut self, sock: &UdpSocket) {
        while let Some(t) = self.comm.poll_transmit() {
            let len = match t.msg.encode(&mut self.buf) {
                Ok(n) => n,
                Err(_) => {
                    self.stats.send_errors += 1;
                    continue;
                }
            };
            let bytes = &self.buf[..len];
            match t.dest {
                Dest::Endpoint(e) => {
                    if sock.send_to(bytes, self.cfg.endpoints[e as usize]).is_err() {
                        self.stats.send_errors += 1;
                    }
                }
                Dest::Arbiters => {
                    for (r, a) in self.cfg.arbiters.iter().enumerate() {
                        if r as u32 != self.rank && sock.send_to(bytes, a).is_err() {
                            self.stats.send_errors += 1;
                        }
                    }
                }
            }
        }
        while let Some(ev) = self.comm.poll_event() {
            match ev {
                CommEvent::Failover(FailoverEvent::TookOver { .. }) => {
                    self.stats.took_over_at = Some(self.clock.now());
                    self.stats.first_after_takeover = None;
                    self.log_role("took_over");
                }
                CommEvent::Failover(FailoverEvent::StoodDown { .. }) => self.log_role("stood_down"),
                CommEvent::Reset { .. } | CommEvent::Synced { .. } => {}
            }
        }
    }

    /// The status answer: one JSON object.
    pub fn status_json(&self, now: u64) -> String {
        let up_s = (now.saturating_sub(self.started)) as f64 / 1e12;
        let s = &self.stats;
        let c = self.comm.stats();
        let role = match self.role() {
            Role::Primary => "primary",
            Role::Secondary => "secondary",
        };
        let keep_up = if s.batches == 0 {
            1.0
        } else {
            1.0 - s.batches_late as f64 / s.batches as f64
        };
        format!(
            concat!(
                "{{\"rank\": {}, \"role\": \"{}\", \"epoch\": {}, \"endpoints\": {}, \"uptime_s\": {:.3}, ",
                "\"granted_slots\": {}, \"allocated_slots_per_s\": {:.0}, \"batches\": {}, \"batches_late\": {}, ",
                "\"keep_up_share\": {:.4}, \"slots_skipped\": {}, \"path_errors\": {}, \"datagrams\": {}, ",
                "\"unknown_source\": {}, \"malformed\": {}, \"bad_checksums\": {}, \"fcp_malformed\": {}, ",
                "\"reports\": {}, \"refused\": {}, \"resets\": {}, \"watchdogs_sent\": {}, \"dropped_secondary\": {}, ",
                "\"send_errors\": {}, \"takeovers_held\": {}, \"primary_holds\": {}, \"status_queries\": {}, \"status_limited\": {}, \"took_over_at_ps\": {}, \"first_after_takeover\": {}, ",
                "\"timeslot_ps\": {}, \"origin_unix_ns\": {}, \"timer_lateness\": {}, \"alloc_lag\": {}}}"
            ),
            self.rank,
            role,
            self.epoch(),
            self.cfg.endpoints.len(),
            up_s,
            s.granted,
            if up_s > 0.0 { s.granted as f64 / up_s } else { 0.0 },
            s.batches,
            s.batches_late,
            keep_up,
            s.slots_skipped,
            s.path_errors,
            s.datagrams,
            s.unknown_source,
            s.malformed,
            c.bad_checksums,
            c.malformed,
            c.reports,
            c.refused,
            c.resets,
            c.watchdogs_sent,
            c.dropped_secondary,
            s.send_errors,
            s.takeovers_held,
            s.primary_holds,
            s.status_queries,
            s.status_limited,
            s.took_over_at.map_or("null".into(), |t| t.to_string()),
            s.first_after_takeover.map_or("null".into(), |t| t.to_string()),
            self.cfg.timeslot,
            self.clock.origin_unix_ns,
            self.lateness.json(),
            self.alloc_lag.json(),
        )
    }

    /// Whether `from` may send this FCP datagram: by its header, the registered
    /// address of the endpoint it names, or another arbiter for a watchdog.
    fn registered(&self, bytes: &[u8], from: &SocketAddr) -> Result<bool, ()> {
        let h = wire::peek(bytes).map_err(|_| ())?;
        Ok(match h.kind {
            Kind::Watchdog => self
                .cfg
                .arbiters
                .iter()
                .enumerate()
                .any(|(r, a)| r as u32 != self.rank && a == from),
            _ => self.cfg.endpoints.get(h.endpoint as usize) == Some(from),
        })
    }

    pub fn grant_log_flush(&mut self) {
        self.grant_log.flush();
    }
}

impl Service for ArbiterService {
    fn on_datagram(&mut self, now: u64, bytes: &[u8], from: SocketAddr, sock: &UdpSocket) {
        self.stats.datagrams += 1;
        if bytes.first() != Some(&wire::VERSION) {
            if control_allowed(&from) && bytes == STATUS_QUERY {
                let sec = now / 1_000_000_000_000;
                if self.status_window.0 != sec {
                    self.status_window = (sec, 0);
                }
                if self.status_window.1 >= STATUS_PER_S {
                    self.stats.status_limited += 1;
                    return;
                }
                self.status_window.1 += 1;
                self.stats.status_queries += 1;
                let _ = sock.send_to(self.status_json(now).as_bytes(), from);
            } else if control_allowed(&from) && bytes == STOP_QUERY {
                self.stop = true;
            } else {
                self.stats.malformed += 1;
            }
            return;
        }
        match self.registered(bytes, &from) {
            Err(()) => self.stats.malformed += 1,
            Ok(false) => self.stats.unknown_source += 1,
            Ok(true) => {
                self.comm.handle_bytes(now, bytes, &mut self.arb);
                self.flush(sock);
            }
        }
    }

    fn on_timer(&mut self, now: u64, sock: &UdpSocket) {
        // After a stall, timers are held for one watchdog period while the receive
        // thread reads what queued up meanwhile; then they run, unchecked once.
        let held = self.grace_until != 0;
        if held {
            if now < self.grace_until {
                return;
            }
            self.grace_until = 0;
        }
        // How late this call is past the deadline that caused it: a stall of this process.
        let stalled = now.saturating_sub(self.next_deadline());
        if !held
            && self.role() == Role::Secondary
            && self.comm.poll_timeout() <= now
            && stalled > self.cfg.watchdog
        {
            // This process was not running for longer than a watchdog period (a loaded
            // machine): the silence may be ours, with the primary's watchdogs queued
            // unread in the socket. Let the receive thread read them before taking over
            // (found by the demo: spurious takeovers after stalls). It delays a real
            // takeover by at most T_w, and only after a stall.
            self.grace_until = now + self.cfg.watchdog;
            self.stats.takeovers_held += 1;
            return;
        }
        if !held && self.role() == Role::Primary && stalled > self.cfg.takeover / 2 {
            // A primary that was away for a good part of T_d (stopped, cut off, swapped
            // out) may have been replaced: a secondary that heard nothing took over with
            // a higher epoch. Read the socket for a watchdog period before granting
            // anything, so that it steps down on the new primary's watchdog instead of
            // granting timeslots the new one grants too (§5.1's split brain). Endpoints
            // would refuse the stale epoch's grants anyway; this keeps them off the wire.
            // Two periods: a watchdog may have been lost while this process was away
            // (its socket buffer full, e.g. of a flood's junk; found by the demo).
            self.grace_until = now + 2 * self.cfg.watchdog;
            self.stats.primary_holds += 1;
            return;
        }
        self.comm.handle_timeout(now, &mut self.arb);
        self.flush(sock);
        let slot = self.cfg.timeslot;
        let due = (now + self.cfg.lead) / slot;
        if self.role() != Role::Primary {
            // A new primary starts `lead` ahead of its takeover (§5.1).
            self.next_first = self.next_first.max(due + 1);
            return;
        }
        // Never allocate a timeslot that has begun: after a stall, skip to the next.
        let min_first = now / slot + 1;
        if self.next_first < min_first {
            self.stats.slots_skipped += min_first - self.next_first;
            self.next_first = min_first;
        }
        while self.next_first * slot <= now + self.cfg.lead {
            let first = self.next_first;
            self.allocate(now, first);
            self.next_first += self.cfg.batch as u64;
        }
        self.flush(sock);
    }

    fn next_deadline(&self) -> u64 {
        if self.grace_until != 0 {
            return self.grace_until;
        }
        let t = self.comm.poll_timeout();
        if self.role() == Role::Primary {
            t.min((self.next_first * self.cfg.timeslot).saturating_sub(self.cfg.lead))
        } else {
            t
        }
    }

    fn lateness(&mut self) -> &mut Lateness {
        &mut self.lateness
    }

    fn stopping(&self) -> bool {
        self.stop
    }
}
