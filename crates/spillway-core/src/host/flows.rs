//! The flow table: a slot per live flow (reused once its record is written), and the
//! records of flows that have ended, streamed out as they accumulate; with
//! `run.flow_throughput_interval`, the flows' goodput over time too.

use super::rx::Gro;
use crate::engine::context::Ctx;
use crate::output::flow_throughput::FlowThroughputRecords;
use crate::output::flows::FlowRecords;
use crate::transport::Transport;
use crate::units::Ps;

/// Which ends of a flow a slot holds. In a whole run, both; in a parallel run, a flow
/// whose source and destination belong to different processes has a slot at each: the
/// sender's end there, the receiver's here (docs/architecture.md § Parallel runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ends {
    Both,
    Sender,
    Receiver,
}

/// What a receiver's end knows for its flow's record when the sender's end is in
/// another process: written when the sender's end has written its half (or at the end
/// of the run), and joined to it by flow id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReceiverHalf {
    pub id: u64,
    pub finish: Option<Ps>,
    pub delivered_bytes: u64,
    pub duplicate_bytes: u64,
    pub notified: u32,
}

/// A flow, at both its ends: the connection, and what the hosts keep about it.
pub(super) struct Flow {
    pub(super) id: u64,
    pub(super) src: u32,
    pub(super) dst: u32,
    pub(super) size: u64,
    pub(super) start: Ps,
    pub(super) ideal: Ps,
    pub(super) class: u8,
    /// Its data's and ACKs' priority class, if the workload gave it one.
    pub(super) priority: Option<u8>,
    pub(super) query: u64,
    pub(super) tag: u64,
    pub(super) hash: u64,
    /// Its data packets and probes dropped anywhere.
    pub(super) drops: u32,
    pub(super) finish: Option<Ps>,
    /// Time of this flow's pending timer event, if one is queued.
    pub(super) timer_ev: Option<Ps>,
    pub(super) gro: Gro,
    /// Data segments waiting in the source host's NIC queue.
    pub(super) in_nic: u32,
    /// Waiting, after a local NIC drop, for its host's NIC to send something.
    pub(super) nic_blocked: bool,
    /// Drop notifications received by either end (FastLane).
    pub(super) notified: u32,
    /// Probes its sender sent.
    pub(super) probes: u32,
    pub(super) conn: Transport,
    pub(super) ends: Ends,
}

#[derive(Default)]
pub(super) struct FlowTable {
    slots: Vec<Option<Flow>>,
    free: Vec<u32>,
    active: u64,
    next_id: u64,
    records: FlowRecords,
    /// `run.flow_throughput_interval` (kept apart from the flows, which the hot path
    /// reads, and allocated only with it).
    throughput: Option<Box<Throughput>>,
    /// In a parallel run: per record written, the window it was written in and whether
    /// it is a sender's half (its receiver's half comes from another process); and the
    /// receivers' halves written here.
    pub(super) keys: Vec<(u64, bool)>,
    pub(super) halves: Vec<ReceiverHalf>,
    pub(super) keyed: bool,
    pub(super) window: u64,
}

/// The flows' goodput over time: per slot, the bytes its flow had acknowledged at its
/// last row; and the rows.
#[derive(Default)]
struct Throughput {
    acked: Vec<u64>,
    rows: FlowThroughputRecords,
}

impl Throughput {
    /// The row of the flow in `slot`, `acked` bytes acknowledged by `now`.
    fn row(&mut self, now: Ps, slot: u32, id: u64, acked: u64) {
        let last = std::mem::replace(&mut self.acked[slot as usize], acked);
        self.rows.time_ps.push(now);
        self.rows.flow_id.push(id);
        self.rows.bytes.push(acked - last);
    }
}

impl Flow {
    /// Payload bytes cumulatively acknowledged to the sender.
    fn acked(&self) -> u64 {
        self.size - self.conn.unacked()
    }
}

impl FlowTable {
    /// The next flow's id.
    pub(super) fn next_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// A slot for a new flow (`flow`), which counts as active.
    pub(super) fn insert(&mut self, flow: Flow) -> u32 {
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.slots.push(None);
                (self.slots.len() - 1) as u32
            }
        };
        self.active += (flow.ends != Ends::Receiver) as u64;
        self.slots[slot as usize] = Some(flow);
        if let Some(t) = &mut self.throughput {
            t.acked.resize(self.slots.len(), 0);
            t.acked[slot as usize] = 0;
        }
        slot
    }

    /// Keep the flows' goodput over time (`run.flow_throughput_interval`).
    pub(super) fn track_throughput(&mut self) {
        self.throughput = Some(Box::default());
    }

    pub(super) fn tracks_throughput(&self) -> bool {
        self.throughput.is_some()
    }

    /// An interval of `run.flow_throughput_interval` ends at `now`: a row for every
    /// active flow.
    pub(super) fn sample_throughput(&mut self, now: Ps) {
        let t = self.throughput.as_mut().expect("sampled only when tracked");
        for (slot, f) in self.slots.iter().enumerate() {
            // A receiver's end (parallel runs) knows nothing acknowledged: its sender's
            // process writes the flow's rows.
            if let Some(f) = f.as_ref().filter(|f| f.ends != Ends::Receiver) {
                t.row(now, slot as u32, f.id, f.acked());
            }
        }
    }

    /// The goodput rows written since the last call.
    pub(super) fn take_throughput(&mut self) -> FlowThroughputRecords {
        self.throughput
            .as_mut()
            .map(|t| std::mem::take(&mut t.rows))
            .unwrap_or_default()
    }

    pub(super) fn active(&self) -> u64 {
        self.active
    }

    /// The flow in `slot`, which is live.
    #[inline(always)]
    pub(super) fn get(&mut self, slot: u32) -> &mut Flow {
        self.slots[slot as usize]
            .as_mut()
            .expect("a live flow's slot")
    }

    /// The flow in `slot`, if any.
    #[inline(always)]
    pub(super) fn slot(&mut self, slot: u32) -> Option<&mut Flow> {
        self.slots[slot as usize].as_mut()
    }

    /// Flow `id` if it is still the one in `slot` (a packet may outlive its flow).
    #[inline(always)]
    pub(super) fn live_mut(&mut self, slot: u32, id: u64) -> Option<&mut Flow> {
        // A packet from another process whose flow has no end here carries no slot.
        self.slots
            .get_mut(slot as usize)
            .and_then(|f| f.as_mut())
            .filter(|f| f.id == id)
    }

    /// The live flow with id `id`.
    pub(super) fn find(&self, id: u64) -> Option<&Flow> {
        self.slots.iter().flatten().find(|f| f.id == id)
    }

    /// Over the live flows, the bytes not yet cumulatively acknowledged.
    pub(super) fn outstanding(&self) -> u64 {
        self.senders().map(|f| f.conn.unacked()).sum()
    }

    /// Over the live flows, the bytes neither cumulatively nor selectively acknowledged.
    pub(super) fn unsacked(&self) -> u64 {
        self.senders().map(|f| f.conn.unsacked()).sum()
    }

    /// The live flows whose sender's end is here.
    fn senders(&self) -> impl Iterator<Item = &Flow> {
        self.slots
            .iter()
            .flatten()
            .filter(|f| f.ends != Ends::Receiver)
    }

    /// The occupied slots, in order.
    pub(super) fn slots(&self) -> Vec<u32> {
        (0..self.slots.len() as u32)
            .filter(|&s| self.slots[s as usize].is_some())
            .collect()
    }

    /// Writes the record of the flow in `slot` and frees the slot; its transport's
    /// counts go to the run's counters. `class`: the priority class its data used when
    /// the workload gave it none (the transport's).
    pub(super) fn record(&mut self, cx: &mut Ctx, slot: u32, class: u8, acked: bool) {
        let f = self.slots[slot as usize]
            .take()
            .expect("recording a live flow");
        if let Some(t) = &mut self.throughput {
            // The flow's last (partial) interval.
            t.row(cx.now, slot, f.id, f.acked());
        }
        self.free.push(slot);
        self.active -= 1;
        let c = &mut cx.counters;
        let r = &mut self.records;
        if self.keyed {
            self.keys.push((self.window, f.ends == Ends::Sender));
        }
        r.flow_id.push(f.id);
        r.src.push(f.src);
        r.dst.push(f.dst);
        r.size_bytes.push(f.size);
        r.start_ps.push(f.start);
        match f.finish {
            Some(t) => {
                r.finish_ps.push(t);
                r.fct_ps.push(t - f.start);
                r.slowdown.push((t - f.start) as f64 / f.ideal as f64);
                c.flows_finished += 1;
            }
            None => {
                r.finish_ps.push(u64::MAX);
                r.fct_ps.push(u64::MAX);
                r.slowdown.push(f64::NAN);
                // A sender's half is counted once joined to its receiver's.
                c.flows_unfinished += (f.ends == Ends::Both) as u64;
            }
        }
        r.acked_ps.push(if acked { cx.now } else { u64::MAX });
        r.ideal_fct_ps.push(f.ideal);
        r.priority.push(f.priority.unwrap_or(class));
        r.class.push(f.class);
        r.query_id.push(f.query);
        let st = f.conn.stats();
        r.retransmits.push(st.retransmits);
        r.timeouts.push(st.timeouts);
        r.drops.push(f.drops);
        r.notifications.push(f.notified);
        r.probes.push(f.probes);
        r.inflations.push(st.inflations);
        r.duplicate_bytes.push(st.duplicate_bytes);
        c.notifications_stale += st.notifications_stale as u64;
        c.packs += st.packs as u64;
        c.undos += st.undos as u64;
        c.ecn_reductions += st.ecn_reductions as u64;
        r.delivered_bytes.push(st.delivered_bytes);
        c.bytes_delivered += st.delivered_bytes;
        c.duplicate_bytes += st.duplicate_bytes;
    }

    /// The records written since the last call.
    pub(super) fn take_records(&mut self) -> FlowRecords {
        std::mem::take(&mut self.records)
    }

    /// The receiver's end in `slot`, whose sender's end is in another process and has
    /// written its half (or the run has ended): its half, and the slot is free. Its
    /// transport's receiving counts go to the run's counters.
    pub(super) fn retire_receiver(&mut self, cx: &mut Ctx, slot: u32) {
        let f = self.slots[slot as usize]
            .take()
            .expect("retiring a live receiver");
        debug_assert_eq!(f.ends, Ends::Receiver);
        self.free.push(slot);
        let st = f.conn.stats();
        cx.counters.bytes_delivered += st.delivered_bytes;
        cx.counters.duplicate_bytes += st.duplicate_bytes;
        self.halves.push(ReceiverHalf {
            id: f.id,
            finish: f.finish,
            delivered_bytes: st.delivered_bytes,
            duplicate_bytes: st.duplicate_bytes,
            notified: f.notified,
        });
    }
}
