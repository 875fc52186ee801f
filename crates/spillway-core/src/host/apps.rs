//! The applications on the hosts: the workload (and background traffic) says when flows
//! start and hears when each finishes (a query completes, an incast round ends, a
//! response goes out); this drives it on the engine's clock.

use crate::engine::context::Ctx;
use crate::engine::event::Ev;
use crate::engine::mailbox::Done;
use crate::units::Ps;
use crate::workload::{Emitted, NewFlow, QueryRecord, Traffic};
use std::collections::VecDeque;

pub struct Apps {
    traffic: Traffic,
    /// The time of the pending `Workload` event.
    pending: Option<Ps>,
    /// Flows the workload asked for, to be started (kept to reuse its buffer), and the
    /// queries it completed.
    out: Emitted,
    /// In a parallel run, the completions every process's copy of the workload has
    /// heard and not yet acted on, in the canonical order; each is acted on `lag` (one
    /// lookahead) after it.
    deferred: VecDeque<Done>,
    lag: Ps,
}

impl Apps {
    pub fn new(traffic: Traffic) -> Apps {
        Apps {
            traffic,
            pending: None,
            out: Emitted::default(),
            deferred: VecDeque::new(),
            lag: 0,
        }
    }

    /// A parallel run: the workload acts on completions `lag` after them.
    pub fn set_lag(&mut self, lag: Ps) {
        self.lag = lag;
    }

    /// When the workload next has something to do: an open-loop arrival, or a
    /// completion to act on.
    fn next_time(&self) -> Option<Ps> {
        let heard = self.deferred.front().map(|d| d.time + self.lag);
        match (self.traffic.next_time(), heard) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Schedules the next arrivals, unless already scheduled for that time.
    pub fn schedule(&mut self, cx: &mut Ctx) {
        if let Some(t) = self.next_time() {
            let t = t.max(cx.now);
            if self.pending != Some(t) {
                self.pending = Some(t);
                cx.push(t, Ev::Workload);
            }
        }
    }

    /// The `Workload` event at `time`: the flows due now, if it is the pending one.
    pub fn arrivals(&mut self, time: Ps) -> Option<Vec<NewFlow>> {
        if self.pending != Some(time) {
            return None;
        }
        self.pending = None;
        let mut nf = std::mem::take(&mut self.out.flows);
        // Completions first, each at its own time (its query's finish), then the arrivals
        // due: the same order in every process.
        while let Some(&d) = self.deferred.front() {
            if d.time + self.lag > time {
                break;
            }
            self.deferred.pop_front();
            self.traffic
                .on_flow_done(d.time, d.tag, d.dst, &mut self.out);
            nf.append(&mut self.out.flows);
        }
        self.traffic.generate(time, &mut nf);
        Some(nf)
    }

    /// A parallel run's window has ended: `heard`, every process's completions in it in
    /// the canonical order (by time, then process), will be acted on one lookahead
    /// later: after the window, so no process has yet run past that time.
    pub fn defer(&mut self, cx: &mut Ctx, heard: impl Iterator<Item = Done>) {
        for d in heard {
            debug_assert!(self.deferred.back().is_none_or(|b| b.time <= d.time));
            self.deferred.push_back(d);
        }
        if let Some(t) = self.deferred.front().map(|d| d.time + self.lag) {
            // Never `schedule` here: the clock is this process's own, and the time it
            // would clamp to differs between processes.
            if self.pending.is_none_or(|p| t < p) {
                self.pending = Some(t);
                cx.push(t, Ev::Workload);
            }
        }
    }

    /// Flow `tag` to `dst` has fully arrived: the flows that start because of it.
    pub fn flow_done(&mut self, now: Ps, tag: u64, dst: u32) -> Vec<NewFlow> {
        self.traffic.on_flow_done(now, tag, dst, &mut self.out);
        std::mem::take(&mut self.out.flows)
    }

    /// Hands back the buffer of new flows, emptied.
    pub fn recycle(&mut self, nf: Vec<NewFlow>) {
        debug_assert!(nf.is_empty());
        self.out.flows = nf;
    }

    /// No more flows will ever come.
    pub fn exhausted(&self) -> bool {
        self.traffic.exhausted() && self.deferred.is_empty()
    }

    pub fn has_queries(&self) -> bool {
        self.traffic.has_queries()
    }

    /// A completion may start a flow or end a query (not so for open-loop traffic).
    pub fn reacts(&self) -> bool {
        self.traffic.reacts()
    }

    pub fn open_queries(&self) -> u64 {
        self.traffic.open_queries()
    }

    /// Queries completed since the last call.
    pub fn take_queries(&mut self) -> Vec<QueryRecord> {
        std::mem::take(&mut self.out.queries)
    }
}
