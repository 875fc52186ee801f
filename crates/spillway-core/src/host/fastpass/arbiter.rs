//! The Fastpass arbiter as a host agent (§2, §3, §5): the allocator and path selection
//! of `spillway-arbiter`, behind the same FCP state machine ([`Comm`]) the real service
//! runs. It allocates each batch of timeslots when the batch's first timeslot is
//! `fastpass.lead` away (§5.1: 65 us), colors each timeslot's matching into paths (§4),
//! and sends every endpoint its grants. While its own link is too far behind for a
//! batch's allocations to reach the endpoints in time ([`TxLink`]), it waits, and the
//! timeslots that pass meanwhile go unallocated. A secondary hears the same reports,
//! allocates nothing, and takes over after the primary's silence (§5.1).

use super::channel::fcp_wire_bytes;
use super::config::{Control, FastpassConfig};
use super::link::TxLink;
use super::paths::{PathSelection, ANY_PATH};
use crate::units::Ps;
use spillway_arbiter::fcp::{
    Comm, CommConfig, CommEvent, FailoverConfig, FailoverEvent, Msg, Role, Transmit,
};
use spillway_arbiter::pathsel::Path3;
use spillway_arbiter::{Arbiter, Batch, Fabric as ArbFabric, Flow, Mode};

pub struct ArbiterAgent {
    pub rank: u32,
    pub host: u32,
    arb: Arbiter,
    comm: Comm,
    batch: Batch,
    paths: PathSelection,
    width: u32,
    endpoints: usize,
    /// First timeslot of the next batch.
    next_first: u64,
    /// When its queued timer event fires, if one is queued.
    pub timer: Option<Ps>,
    /// Its own link: when what it has sent will have left.
    pub link: TxLink,
    framing: u32,
    /// It stopped allocating because its link was behind; the timeslots it passes over
    /// before it allocates again are counted.
    held: bool,
    /// Timeslots it left unallocated because its link was behind.
    pub skipped: u64,
    /// The path of the grant to `src` in the batch's timeslot k: `path_of[k * n + src]`.
    path_of: Vec<u16>,
    flows: Vec<Flow>,
    two: Vec<Option<u32>>,
    three: Vec<Option<Path3>>,
    sel: Vec<u16>,
    /// Timeslots granted.
    pub granted: u64,
    /// Timeslots whose matching path selection could not color (their packets go by
    /// ECMP): a bug if ever non-zero, since the allocator keeps rack limits.
    pub path_errors: u64,
    /// The last timeslot this arbiter granted.
    pub last_granted: Option<u64>,
    /// When it last took over, and the first timeslot it granted since.
    pub took_over: Option<Ps>,
    pub first_after_takeover: Option<u64>,
}

impl ArbiterAgent {
    /// Arbiter `rank` of `arbiters` on `host`, serving endpoints `0..endpoints`, at `now`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        rank: u32,
        arbiters: u32,
        host: u32,
        cfg: &FastpassConfig,
        fabric: &ArbFabric,
        paths: PathSelection,
        seed: u64,
        now: Ps,
        slot: Ps,
        framing: u32,
    ) -> ArbiterAgent {
        let endpoints = fabric.endpoints();
        let mut arb = Arbiter::new(fabric, cfg.policy, Mode::Greedy, cfg.batch)
            .expect("fastpass.batch is checked to be in 1..=64");
        let failover = FailoverConfig {
            rank,
            arbiters,
            watchdog: cfg.watchdog,
            takeover: cfg.takeover,
        };
        let mut comm_cfg = CommConfig::new(failover, seed ^ rank as u64);
        // One message per endpoint per batch, answers to reports included (§7.3, Exp. E:
        // FCP's share of the arbiter's link).
        comm_cfg.defer_acks = true;
        let comm = Comm::new(comm_cfg, endpoints as u32, &mut arb, now);
        ArbiterAgent {
            rank,
            host,
            arb,
            comm,
            batch: Batch::new(),
            paths,
            width: cfg.batch,
            endpoints,
            next_first: (now + cfg.lead).div_ceil(slot),
            timer: None,
            // Off the network (`fastpass.control = "ideal"`) its messages cross no link.
            link: match cfg.control {
                Control::Network => TxLink::new(cfg.arbiter_link_rate),
                Control::Ideal(_) => TxLink::unlimited(),
            },
            framing,
            held: false,
            skipped: 0,
            path_of: vec![ANY_PATH; cfg.batch as usize * endpoints],
            flows: Vec::new(),
            two: Vec::new(),
            three: Vec::new(),
            sel: Vec::new(),
            granted: 0,
            path_errors: 0,
            last_granted: None,
            took_over: None,
            first_after_takeover: None,
        }
    }

    pub fn role(&self) -> Role {
        self.comm.role()
    }

    /// An FCP message for this arbiter, handled now.
    pub fn handle(&mut self, now: Ps, m: Msg) {
        self.comm.handle(now, m, &mut self.arb);
    }

    /// Its timers at `now`: failover, watchdogs, reset retries, and every batch whose
    /// first timeslot is now `lead` away, if its link can deliver the allocations in
    /// time.
    pub fn on_timer(&mut self, now: Ps, slot: Ps, lead: Ps) {
        self.comm.handle_timeout(now, &mut self.arb);
        // The first timeslot at most `lead` away (a new primary starts there).
        let due = (now + lead) / slot;
        if self.role() != Role::Primary {
            self.next_first = self.next_first.max(due + 1);
            return;
        }
        let first = due.saturating_sub(self.width as u64 - 1);
        if first > self.next_first && self.held {
            self.skipped += first - self.next_first;
        }
        self.next_first = self.next_first.max(first);
        while self.next_first * slot <= now + lead {
            // Fastpass §5.1: the lead is for the allocations to reach the endpoints
            // before their timeslots. With its link behind, a batch allocated now would
            // arrive late, be requested again and allocated again, each time adding to
            // the queue that made it late. It waits instead: the timeslots that pass are
            // lost, the ones it allocates are on time.
            self.held = !self.link.deliverable(now, lead);
            if self.held {
                return;
            }
            self.link.batch_begins(now);
            self.allocate(self.next_first);
            self.next_first += self.width as u64;
        }
    }

    /// Allocates timeslots `first..first + width`, selects their paths, sends the grants.
    fn allocate(&mut self, first: u64) {
        self.arb.allocate(first, &mut self.batch);
        let n = self.endpoints;
        for k in 0..self.width {
            self.flows.clear();
            self.flows.extend(self.batch.timeslot(k));
            if self.flows.is_empty() {
                continue;
            }
            let ok = self
                .paths
                .select(
                    first + k as u64,
                    &self.flows,
                    &mut self.two,
                    &mut self.three,
                    &mut self.sel,
                )
                .is_ok();
            if !ok {
                self.path_errors += 1;
                self.sel.clear();
                self.sel.resize(self.flows.len(), ANY_PATH);
            }
            for (f, &p) in self.flows.iter().zip(&self.sel) {
                self.path_of[k as usize * n + f.src as usize] = p;
            }
            let ts = first + k as u64;
            self.granted += self.flows.len() as u64;
            self.last_granted = Some(ts);
            if self.took_over.is_some() && self.first_after_takeover.is_none() {
                self.first_after_takeover = Some(ts);
            }
        }
        let path_of = &self.path_of;
        self.comm.send_batch(&self.arb, &self.batch, |g| {
            path_of[g.slot as usize * n + g.src as usize]
        });
    }

    /// When its timer should fire next: the next batch's time, or once its link can
    /// deliver the batch, whichever is later.
    pub fn next_timer(&self, slot: Ps, lead: Ps) -> Ps {
        let t = self.comm.poll_timeout();
        if self.role() == Role::Primary {
            let batch = (self.next_first * slot).saturating_sub(lead);
            t.min(batch.max(self.link.deliverable_at(lead)))
        } else {
            t
        }
    }

    /// The next message to send, handed to its link at `now`.
    pub fn poll_transmit(&mut self, now: Ps) -> Option<Transmit> {
        let t = self.comm.poll_transmit()?;
        self.link.send(now, fcp_wire_bytes(&t.msg, self.framing));
        Some(t)
    }

    /// Its protocol events since the last call; a takeover is noted at `now`.
    pub fn poll_events(&mut self, now: Ps, resets: &mut u64, takeovers: &mut u64) {
        while let Some(ev) = self.comm.poll_event() {
            match ev {
                CommEvent::Failover(FailoverEvent::TookOver { .. }) => {
                    *takeovers += 1;
                    if self.took_over.is_none() {
                        self.took_over = Some(now);
                    }
                }
                CommEvent::Reset { .. } => *resets += 1,
                _ => {}
            }
        }
    }

    pub fn comm_stats(&self) -> &spillway_arbiter::fcp::CommStats {
        self.comm.stats()
    }
}
