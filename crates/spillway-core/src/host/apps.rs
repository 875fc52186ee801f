//! The applications on the hosts: the workload (and background traffic) says when flows
//! start and hears when each finishes (a query completes, an incast round ends, a
//! response goes out); this drives it on the engine's clock.

use crate::engine::context::Ctx;
use crate::engine::event::Ev;
use crate::units::Ps;
use crate::workload::{Emitted, NewFlow, QueryRecord, Traffic};

pub struct Apps {
    traffic: Traffic,
    /// The time of the pending `Workload` event.
    pending: Option<Ps>,
    /// Flows the workload asked for, to be started (kept to reuse its buffer), and the
    /// queries it completed.
    out: Emitted,
}

impl Apps {
    pub fn new(traffic: Traffic) -> Apps {
        Apps {
            traffic,
            pending: None,
            out: Emitted::default(),
        }
    }

    /// Schedules the next arrivals, unless already scheduled for that time.
    pub fn schedule(&mut self, cx: &mut Ctx) {
        if let Some(t) = self.traffic.next_time() {
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
        self.traffic.generate(time, &mut nf);
        Some(nf)
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
        self.traffic.exhausted()
    }

    pub fn has_queries(&self) -> bool {
        self.traffic.has_queries()
    }

    pub fn open_queries(&self) -> u64 {
        self.traffic.open_queries()
    }

    /// Queries completed since the last call.
    pub fn take_queries(&mut self) -> Vec<QueryRecord> {
        std::mem::take(&mut self.out.queries)
    }
}
