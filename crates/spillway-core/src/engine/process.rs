//! A [`Sim`] as one logical process of a parallel run (parallel.rs drives it): its
//! window of events, its post out and in, what it publishes at a window's end, and
//! what the run gathers from it at the end.

use super::event::Ev;
use super::mailbox::{Outbox, Post};
use super::Sim;
use crate::fabric::partition::Partition;
use crate::host::share::Share;
use crate::host::ReceiverHalf;
use crate::switch::port::PortReport;
use crate::units::Ps;
use std::sync::Arc;

impl Sim {
    /// This run, built as process `lp` of `part` (`Sim::build`), becomes it: the ports
    /// whose peer is another process's send by the post, the hosts keep their share.
    /// (Before its first event: building scheduled only the workload's first arrival.)
    pub(crate) fn take_part(&mut self, part: &Arc<Partition>, lp: u32) {
        let owns = |n: u32| part.lp(n) == lp;
        let hosts = self.hosts.count();
        for (i, sw) in self.switches.iter_mut().enumerate() {
            if part.builds(hosts + i as u32, lp) {
                sw.cut_links(|peer| !owns(peer));
            }
        }
        self.hosts.cut_links(|host, peer| owns(host) && !owns(peer));
        self.hosts.take_share(Share::new(part.clone(), lp));
        self.cx.outbox = Some(Box::new(Outbox::new(part.clone(), lp)));
    }

    /// A parallel run's process: the earliest pending event's time, if any.
    pub(crate) fn next_time(&mut self) -> Option<Ps> {
        self.cx.queue_mut().peek_time()
    }

    /// A parallel run's process runs window `w`: every event before `until` (and none
    /// past `run.duration`). Returns the events run.
    pub(crate) fn run_window(&mut self, w: u64, until: Ps) -> u64 {
        self.hosts.set_window(w);
        let until = until.min(self.end_time.saturating_add(1));
        let start = self.cx.counters.events;
        while let Some((time, ev)) = self.cx.queue_mut().pop() {
            if time >= until {
                self.cx.queue_mut().unpop(time, ev);
                break;
            }
            // (A process runs its samples and checks whatever else is left: the run
            // decides when only they are, over all processes: `idle`.)
            self.periodic -= ev.periodic() as usize;
            self.run_event(time, ev);
        }
        // Drops of flows whose sender is elsewhere, and completions for every process's
        // workload, go out with this window's post.
        self.cx.flush_away();
        self.hosts.count_drops(&mut self.cx);
        self.hosts.post_dones(&mut self.cx);
        self.cx.counters.events - start
    }

    /// Whether this window's post for process `to` has anything in it.
    pub(crate) fn has_post(&self, to: usize) -> bool {
        let out = self
            .cx
            .outbox
            .as_ref()
            .expect("a process of a parallel run");
        !out.to[to].is_empty()
    }

    /// This window's post for process `to` (taken: the outbox keeps `spare`'s buffers).
    pub(crate) fn swap_post(&mut self, to: usize, spare: &mut Post) {
        let out = self
            .cx
            .outbox
            .as_mut()
            .expect("a process of a parallel run");
        std::mem::swap(&mut out.to[to], spare);
    }

    /// Takes in another process's post: its packets into this arena and queue (their
    /// flow slots this process's), its notes to the hosts. Leaves `post` empty.
    pub(crate) fn import(&mut self, post: &mut Post) {
        let mut ints = post.ints.iter().peekable();
        for (k, parcel) in post.parcels.iter().enumerate() {
            let i = self.cx.pkts.put(&parcel.hot, &parcel.pkt);
            if let Some(&&(_, s)) = ints.peek().filter(|(at, _)| *at as usize == k) {
                self.cx.pkts.set_int(i, s);
                ints.next();
            }
            self.hosts.adopt(self.cx.pkts.get_mut(i));
            let mut ev = parcel.ev;
            match &mut ev {
                Ev::Arrive { pkt, .. } | Ev::Header { pkt, .. } => *pkt = i,
                _ => unreachable!("only packets cross between processes"),
            }
            self.cx.push(parcel.time, ev);
        }
        post.parcels.clear();
        post.ints.clear();
        for note in post.notes.drain(..) {
            self.hosts.on_note(&mut self.cx, note);
        }
        self.hosts.hear_dones(&mut post.dones);
    }

    /// Every process's post of a window has been taken in: what needs all of it acts.
    pub(crate) fn imported(&mut self) {
        self.hosts.settle_dones(&mut self.cx);
    }

    /// A parallel run's process: nothing is left here but samples and checks.
    pub(crate) fn idle(&self) -> bool {
        self.cx.queue().len() == self.periodic
    }

    /// A parallel run's process: its last progress check (`run.progress_limit`): when,
    /// whether nothing was acknowledged here since the one before, its active flows.
    pub(crate) fn progress_checked(&self) -> Option<(Ps, bool, u64)> {
        self.checked
    }

    /// A parallel run's process: flows whose sender's end is here and still active, and
    /// whether the workload will start no more.
    pub(crate) fn part_status(&self) -> (u64, bool) {
        (self.hosts.active_flows(), self.hosts.exhausted())
    }

    /// A parallel run's process: the run has stopped (its flows are recorded).
    pub(crate) fn end_part(&mut self) {
        if !self.ended {
            self.end();
        }
    }

    /// Receivers' halves written, and each record's window and kind (parallel runs).
    pub(crate) fn take_halves(&mut self) -> (Vec<ReceiverHalf>, Vec<(u64, bool)>) {
        self.hosts.take_halves()
    }

    /// Every port's report of switch `node`, and below a host's NIC's (parallel runs
    /// gather them from the processes that own them).
    pub(crate) fn switch_reports(&self, node: u32) -> Vec<PortReport> {
        self.switches[(node - self.cx.fabric.hosts()) as usize].reports(self.cx.now)
    }

    pub(crate) fn nic_report(&self, host: u32, now: Ps) -> PortReport {
        self.hosts.nic(host).report(now)
    }

    /// Payload and wire bytes of this process's data still in the network: for a
    /// parallel run's end.
    pub(crate) fn in_flight(&self) -> (u64, u64) {
        self.cx.pkts.in_network()
    }
}
