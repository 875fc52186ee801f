//! The context every component gets from the engine: the time, a way to schedule an
//! event, the packet arena, the run's counters, and the fabric (wiring, routes and
//! forwarding, read-only). Components keep their own random streams.

use super::event::Ev;
use super::mailbox::{Note, Outbox, Parcel};
use super::queue::EventQueue;
use crate::fabric::Fabric;
use crate::output::counters::Counters;
use crate::packet::{Arena, PktKind, BLOCKED, CARRIES_INT};
use crate::switch::forwarding::Forwarder;
use crate::units::Ps;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    Running,
    AllFlowsDone,
    Duration,
    MaxEvents,
    /// The clock reached [`crate::units::HORIZON`] (a run with no `run.duration`).
    Horizon,
    /// No event left while flows are unfinished: a simulator bug, reported, not hidden.
    Stalled,
    /// A cycle of ports paused by flow control, which nothing would ever lift
    /// (`switch::deadlock`; `Ctx::stop_detail` names it).
    Deadlock,
    /// Active flows, and none of their bytes acknowledged for `run.progress_limit`: a
    /// livelock (`Ctx::stop_detail` says since when).
    NoProgress,
}

impl StopReason {
    pub fn as_str(&self) -> &'static str {
        match self {
            StopReason::Running => "running",
            StopReason::AllFlowsDone => "all_flows_done",
            StopReason::Duration => "duration",
            StopReason::MaxEvents => "max_events",
            StopReason::Horizon => "horizon",
            StopReason::Stalled => "stalled",
            StopReason::Deadlock => "deadlock",
            StopReason::NoProgress => "no_progress",
        }
    }
}

pub struct Ctx {
    pub now: Ps,
    queue: EventQueue<Ev>,
    pub pkts: Arena,
    pub counters: Counters,
    /// Shared by the logical processes of a parallel run (read-only).
    pub fabric: Arc<Fabric>,
    /// Which next hop a packet takes at a switch (fixed choices are made as a packet is
    /// sent toward it).
    pub forwarding: Forwarder,
    /// Flows' packets dropped in the network and not yet counted against their flows:
    /// (flow slot, flow id, the flow's source host). The hosts count them before they
    /// write a flow's record (in a parallel run, the source's process does).
    flow_drops: Vec<(u32, u64, u32)>,
    /// Why the run stops, once a component or the engine has said so (`Running` until
    /// then): the loop's one check an event.
    pub stop: StopReason,
    /// What stopped the run, in words, when its reason needs them (a deadlock's cycle).
    pub stop_detail: String,
    /// In a parallel run, this process's post to the others (None in a whole run).
    pub outbox: Option<Box<Outbox>>,
}

impl Ctx {
    pub fn new(
        queue: EventQueue<Ev>,
        fabric: impl Into<Arc<Fabric>>,
        forwarding: Forwarder,
    ) -> Ctx {
        Ctx {
            now: 0,
            queue,
            pkts: Arena::default(),
            counters: Counters::default(),
            fabric: fabric.into(),
            forwarding,
            flow_drops: Vec::new(),
            stop: StopReason::Running,
            stop_detail: String::new(),
            outbox: None,
        }
    }

    /// Schedules `ev` (an `Arrive` or `Header` over a cut link) at `time`: here, if it
    /// arrives in this process after all (at a split switch, for a destination here),
    /// else by the post at the window's end ([`Ctx::flush_away`]). The packet stays in
    /// this arena until then: what is done to it after it has started on the link (a
    /// CoDel mark, decided as it leaves) goes with it, as in a whole run.
    #[inline(never)]
    pub fn send_away(&mut self, time: Ps, ev: Ev) {
        let (node, pkt) = match ev {
            Ev::Arrive { node, pkt, .. } | Ev::Header { node, pkt, .. } => (node, pkt),
            _ => unreachable!("only packets cross between processes"),
        };
        let out = self
            .outbox
            .as_mut()
            .expect("a cut link only in a parallel run");
        let lp = out.part.lp_for(node, self.pkts.hot(pkt).dst);
        if lp == out.lp {
            self.queue.push(time, ev);
        } else {
            out.away.push((time, ev, lp));
        }
    }

    /// The window's end: the packets sent away leave this arena for the post, in the
    /// order sent.
    pub fn flush_away(&mut self) {
        let Some(out) = self.outbox.as_mut() else {
            return;
        };
        // The packets were sent some time ago in the window and their lines have gone
        // cold: each is loaded a few ahead of its copy (the copy was 5% of a cut run's
        // time, nearly all of it waiting on the reads).
        const AHEAD: usize = 4;
        let pkt_of = |ev: &Ev| match ev {
            Ev::Arrive { pkt, .. } | Ev::Header { pkt, .. } => *pkt,
            _ => unreachable!("only packets cross between processes"),
        };
        for (_, ev, _) in out.away.iter().take(AHEAD) {
            self.pkts.prefetch(pkt_of(ev), true);
        }
        for k in 0..out.away.len() {
            if let Some((_, ev, _)) = out.away.get(k + AHEAD) {
                self.pkts.prefetch(pkt_of(ev), true);
            }
            let (time, mut ev, lp) = out.away[k];
            let pkt = match &mut ev {
                Ev::Arrive { pkt, .. } | Ev::Header { pkt, .. } => pkt,
                _ => unreachable!("only packets cross between processes"),
            };
            // Renumbered where it lands; copied from its slot straight into the post (not
            // through a temporary).
            let i = std::mem::replace(pkt, u32::MAX);
            let post = &mut out.to[lp as usize];
            let p = self.pkts.get(i);
            if p.journey & CARRIES_INT != 0 {
                post.ints
                    .push((post.parcels.len() as u32, *self.pkts.int(i)));
            }
            post.parcels.push(Parcel {
                time,
                ev,
                hot: *self.pkts.hot(i),
                pkt: p.clone(),
            });
            self.pkts.free(i);
        }
        out.away.clear();
    }

    /// A note for the process that owns `node`.
    pub fn note(&mut self, node: u32, note: Note) {
        let out = self.outbox.as_mut().expect("notes only in a parallel run");
        let lp = out.part.lp(node) as usize;
        out.to[lp].notes.push(note);
    }

    /// Schedules `ev` at `time` (not before now).
    #[inline(always)]
    pub fn push(&mut self, time: Ps, ev: Ev) {
        self.queue.push(time, ev);
    }

    /// Packet `pkt` was dropped in the network (its port counted the drop): a data
    /// packet's or probe's flow hears of it, and a data packet's bytes are dead (Turbo
    /// §4.1: they consumed the links that brought them here), a zombie's if it had held
    /// up another flow's packet on the way.
    #[inline]
    pub fn report_network_drop(&mut self, pkt: u32) {
        let p = self.pkts.get(pkt);
        if matches!(p.kind, PktKind::Data | PktKind::Probe) {
            self.flow_drops.push((p.flow_slot, p.flow_id, p.src));
        }
        if p.kind == PktKind::Data {
            let c = &mut self.counters;
            c.dropped_data_bytes += p.payload();
            c.dropped_data_wire_bytes += self.pkts.hot(pkt).wire as u64;
            c.zombie_packets += (p.journey & BLOCKED != 0) as u64;
        }
    }

    /// The drops reported and not yet counted.
    #[inline]
    pub fn flow_drops(&mut self) -> &mut Vec<(u32, u64, u32)> {
        &mut self.flow_drops
    }

    #[inline(always)]
    pub fn queue(&self) -> &EventQueue<Ev> {
        &self.queue
    }

    #[inline(always)]
    pub fn queue_mut(&mut self) -> &mut EventQueue<Ev> {
        &mut self.queue
    }
}
