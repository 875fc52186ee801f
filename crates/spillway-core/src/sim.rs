//! The simulator: one event loop moving packets between mechanisms.
//!
//! Events are ordered by (time, insertion order) (see [`EventQueue`]), so equal-time
//! events run in the order they were scheduled and every run of a scenario is identical. Mechanisms
//! (transport, queues, workload) never touch the queue or the clock: the loop calls them
//! with the time and acts on what they return.

use crate::metrics::{ideal_fct, wire_bytes, FlowRecords};
use crate::network::{Arena, Network, Packet, PktKind, MAX_SACK};
use crate::queue::EventQueue;
use crate::rng::{component, mix64, Rng};
use crate::scenario::{Forwarding, Scenario, ScenarioError};
use crate::topology::Topology;
use crate::transport::cc::NewReno;
use crate::transport::tcp::{AckInfo, SegOut, TcpConfig, TcpReceiver, TcpSender};
use crate::units::Ps;
use crate::workload::{NewFlow, QueryRecord, Workload};
use std::collections::VecDeque;

#[derive(Debug, Clone, Copy)]
enum Ev {
    /// A packet has been fully received at a node (store-and-forward).
    Arrive { node: u32, pkt: u32 },
    /// A port finished serializing and has more queued.
    PortFree { node: u32, port: u32 },
    /// A flow's earliest timer (RTO or delayed ACK) may be due.
    Timer { slot: u32 },
    /// A receiving host finished processing a packet (server model).
    HostDone { host: u32, pkt: u32 },
    /// The workload has arrivals due.
    Workload,
}

struct Flow {
    id: u64,
    src: u32,
    dst: u32,
    size: u64,
    start: Ps,
    ideal: Ps,
    class: u8,
    query: u64,
    tag: u64,
    hash: u64,
    drops: u32,
    finish: Option<Ps>,
    /// Time of this flow's pending timer event, if one is queued.
    timer_ev: Option<Ps>,
    /// Data segments waiting in the source host's NIC queue.
    in_nic: u32,
    sender: TcpSender<NewReno>,
    receiver: TcpReceiver,
}

#[derive(Default)]
struct HostProc {
    busy: u32,
    waiting: VecDeque<u32>,
}

/// Counters for summary.json.
#[derive(Debug, Clone, Default)]
pub struct Counters {
    pub events: u64,
    pub packet_hops: u64,
    pub drops: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub flows_started: u64,
    pub flows_finished: u64,
    pub flows_unfinished: u64,
    pub bytes_offered: u64,
    pub bytes_delivered: u64,
    pub dup_bytes: u64,
    pub stale_packets: u64,
    pub peak_active_flows: u64,
    pub peak_packets: u64,
}

/// Per-port statistics, one row per egress port.
#[derive(Debug, Clone, Default)]
pub struct PortRecords {
    pub node: Vec<u32>,
    pub port: Vec<u32>,
    pub peer: Vec<u32>,
    pub is_switch: Vec<bool>,
    pub capacity: Vec<u64>,
    pub enqueued: Vec<u64>,
    pub dropped: Vec<u64>,
    pub max_bytes: Vec<u64>,
    pub mean_bytes: Vec<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    Running,
    AllFlowsDone,
    Duration,
    MaxEvents,
}

impl StopReason {
    pub fn as_str(&self) -> &'static str {
        match self {
            StopReason::Running => "running",
            StopReason::AllFlowsDone => "all_flows_done",
            StopReason::Duration => "duration",
            StopReason::MaxEvents => "max_events",
        }
    }
}

/// Calendar geometry for this network: slots narrow enough to hold a few events each
/// when every host link is busy (~4 events per packet-time per host), and a ring long
/// enough to hold the furthest hop (propagation + serialization of a jumbo frame).
fn queue_geometry(t: &crate::scenario::TopologySpec, hosts: u32, net: &Network) -> (u32, u32) {
    let events_per_s = hosts as f64 * t.link_rate as f64 / (8.0 * 1538.0) * 4.0;
    // ~8 events per slot: measured (cachegrind, fat-trees k=8 and k=16) to need the
    // fewest instructions; narrower slots cost more cursor moves, wider ones more sorting.
    let width_ps = 8.0 * 1e12 / events_per_s;
    let shift = (width_ps.log2().floor() as u32).clamp(8, 20);
    let horizon = net
        .nodes
        .iter()
        .flat_map(|n| n.ports.iter())
        .map(|p| p.delay + p.serialization(9100))
        .max()
        .unwrap_or(0);
    let slots_log2 = (64 - (horizon >> shift).leading_zeros()).clamp(12, 16);
    (shift, slots_log2)
}

pub struct Sim {
    now: Ps,
    heap: EventQueue<Ev>,
    net: Network,
    pkts: Arena,
    flows: Vec<Option<Flow>>,
    free_slots: Vec<u32>,
    active: u64,
    workload: Workload,
    wl_pending: Option<Ps>,
    tcp: TcpConfig,
    header: u32,
    framing: u32,
    data_class: u8,
    ack_class: u8,
    forwarding: Forwarding,
    switch_rng: Vec<Rng>,
    proc_time: Ps,
    proc_parallel: u32,
    nic_limit: u32,
    /// Flows whose segment just left their NIC: offered another slot after this event.
    nic_wake: Vec<u32>,
    procs: Vec<HostProc>,
    duration: Option<Ps>,
    max_events: Option<u64>,
    seed: u64,
    next_flow_id: u64,
    segs: Vec<SegOut>,
    newflows: Vec<NewFlow>,
    records: FlowRecords,
    queries: Vec<QueryRecord>,
    pub counters: Counters,
    stop: StopReason,
}

impl Sim {
    pub fn new(sc: &Scenario) -> Result<Sim, ScenarioError> {
        let topo = Topology::build(&sc.topology);
        let net = Network::new(&topo, sc.switch.buffer, sc.host.nic_buffer)
            .map_err(|m| ScenarioError::new("topology", &sc.topology.kind, m))?;
        let t = &sc.transport;
        let tcp = TcpConfig {
            mss: t.mss,
            init_cwnd: t.init_cwnd,
            rwnd: t.rwnd,
            rto_min: t.rto_min,
            rto_init: t.rto_init,
            rto_max: t.rto_max,
            dupthresh: t.dupack_threshold,
            delayed_ack: t.delayed_ack,
            lost_retransmit: t.lost_retransmit,
        };
        let max_wire = wire_bytes(t.mss + t.header_bytes, sc.topology.framing_bytes) as u64;
        if sc.switch.buffer < max_wire {
            return Err(ScenarioError::new(
                "switch.buffer",
                sc.switch.buffer,
                format!("smaller than one full-size packet on the wire ({max_wire} B)"),
            ));
        }
        let hosts = topo.hosts;
        let workload = Workload::new(
            &sc.workload,
            hosts,
            sc.topology.link_rate,
            Rng::new(sc.run.seed, component::WORKLOAD),
        );
        let switch_rng = (0..topo.switches)
            .map(|s| Rng::new(sc.run.seed, component::SWITCH_BASE + s as u64))
            .collect();
        let (shift, slots_log2) = queue_geometry(&sc.topology, hosts, &net);
        let mut sim = Sim {
            now: 0,
            heap: EventQueue::with_geometry(shift, slots_log2),
            net,
            pkts: Arena::default(),
            flows: Vec::new(),
            free_slots: Vec::new(),
            active: 0,
            workload,
            wl_pending: None,
            tcp,
            header: t.header_bytes,
            framing: sc.topology.framing_bytes,
            data_class: t.data_class,
            ack_class: t.ack_class,
            forwarding: sc.switch.forwarding,
            switch_rng,
            proc_time: sc.host.proc_time,
            proc_parallel: sc.host.proc_parallel,
            nic_limit: sc
                .host
                .nic_flow_limit
                .map_or(u32::MAX, |v| v.min(u32::MAX as u64) as u32),
            nic_wake: Vec::new(),
            procs: (0..hosts).map(|_| HostProc::default()).collect(),
            duration: sc.run.duration,
            max_events: sc.run.max_events,
            seed: sc.run.seed,
            next_flow_id: 0,
            segs: Vec::new(),
            newflows: Vec::new(),
            records: FlowRecords::default(),
            queries: Vec::new(),
            counters: Counters::default(),
            stop: StopReason::Running,
        };
        sim.schedule_workload();
        Ok(sim)
    }

    pub fn now(&self) -> Ps {
        self.now
    }

    pub fn stop_reason(&self) -> StopReason {
        self.stop
    }

    pub fn finished(&self) -> bool {
        self.stop != StopReason::Running
    }

    pub fn active_flows(&self) -> u64 {
        self.active
    }

    pub fn has_queries(&self) -> bool {
        self.workload.has_queries()
    }

    #[inline]
    fn push(&mut self, time: Ps, ev: Ev) {
        self.heap.push(time, ev);
    }

    /// Runs up to `budget` events; returns true once the run has ended.
    pub fn step(&mut self, budget: u64) -> bool {
        for _ in 0..budget {
            if self.finished() {
                break;
            }
            let Some((time, ev)) = self.heap.pop() else {
                self.end(StopReason::AllFlowsDone);
                break;
            };
            if let Some(d) = self.duration {
                if time > d {
                    self.now = d;
                    self.end(StopReason::Duration);
                    break;
                }
            }
            self.now = time;
            self.counters.events += 1;
            match ev {
                Ev::Arrive { node, pkt } => self.on_arrive(node, pkt),
                Ev::PortFree { node, port } => {
                    self.net.nodes[node as usize].ports[port as usize].wake_pending = false;
                    self.transmit_next(node, port);
                }
                Ev::Timer { slot } => self.on_timer(slot, time),
                Ev::HostDone { host, pkt } => self.on_host_done(host, pkt),
                Ev::Workload => {
                    if self.wl_pending == Some(time) {
                        self.wl_pending = None;
                        let mut nf = std::mem::take(&mut self.newflows);
                        self.workload.generate(self.now, &mut nf);
                        for f in nf.drain(..) {
                            self.start_flow(f);
                        }
                        self.newflows = nf;
                        self.schedule_workload();
                        self.check_done();
                    }
                }
            }
            while let Some(slot) = self.nic_wake.pop() {
                self.poll_flow(slot);
            }
            if let Some(m) = self.max_events {
                if self.counters.events >= m && !self.finished() {
                    self.end(StopReason::MaxEvents);
                }
            }
        }
        self.finished()
    }

    pub fn run_to_end(&mut self) {
        while !self.step(1 << 20) {}
    }

    fn end(&mut self, why: StopReason) {
        self.stop = why;
        // Dump the flows still active: finished ones (awaiting their last ACK) and not.
        for slot in 0..self.flows.len() {
            if self.flows[slot].is_some() {
                self.record_flow(slot as u32);
            }
        }
        self.counters.peak_packets = self.pkts.capacity() as u64;
    }

    fn check_done(&mut self) {
        if self.active == 0 && self.workload.exhausted() {
            self.end(StopReason::AllFlowsDone);
        }
    }

    fn schedule_workload(&mut self) {
        if let Some(t) = self.workload.next_time() {
            let t = t.max(self.now);
            if self.wl_pending != Some(t) {
                self.wl_pending = Some(t);
                self.push(t, Ev::Workload);
            }
        }
    }

    // ---------------------------------------------------------------- flows

    fn start_flow(&mut self, f: NewFlow) {
        let id = self.next_flow_id;
        self.next_flow_id += 1;
        let slot = match self.free_slots.pop() {
            Some(s) => s,
            None => {
                self.flows.push(None);
                (self.flows.len() - 1) as u32
            }
        };
        let mss = self.tcp.mss as u64;
        let packets = f.size.div_ceil(mss);
        let last = f.size - (packets - 1) * mss;
        let ideal = ideal_fct(
            &self.net.path(f.src, f.dst),
            packets,
            wire_bytes(self.tcp.mss + self.header, self.framing),
            wire_bytes(last as u32 + self.header, self.framing),
        );
        // The 5-tuple: addresses plus ephemeral ports, which we derive from the flow id.
        let hash = mix64(self.seed ^ ((f.src as u64) << 40) ^ ((f.dst as u64) << 20) ^ mix64(id));
        self.flows[slot as usize] = Some(Flow {
            id,
            src: f.src,
            dst: f.dst,
            size: f.size,
            start: self.now,
            ideal,
            class: f.class,
            query: f.query,
            tag: f.tag,
            hash,
            drops: 0,
            finish: None,
            timer_ev: None,
            in_nic: 0,
            sender: TcpSender::new(&self.tcp, f.size, NewReno::default()),
            receiver: TcpReceiver::new(&self.tcp, f.size),
        });
        self.active += 1;
        self.counters.flows_started += 1;
        self.counters.bytes_offered += f.size;
        self.counters.peak_active_flows = self.counters.peak_active_flows.max(self.active);
        let mut segs = std::mem::take(&mut self.segs);
        let f = self.flows[slot as usize].as_mut().unwrap();
        let budget = self.nic_limit.saturating_sub(f.in_nic) as usize;
        f.sender.start(self.now, budget, &mut segs);
        self.send_segments(slot, &mut segs);
        self.segs = segs;
        self.arm_timer(slot);
    }

    /// A segment of this flow left its NIC: let the window send into the freed slot.
    fn poll_flow(&mut self, slot: u32) {
        let now = self.now;
        let Some(f) = self.flows[slot as usize].as_mut() else {
            return;
        };
        let budget = self.nic_limit.saturating_sub(f.in_nic) as usize;
        if budget == 0 {
            return;
        }
        let mut segs = std::mem::take(&mut self.segs);
        f.sender.poll(now, budget, &mut segs);
        self.counters.retransmits += segs.iter().filter(|s| s.retx).count() as u64;
        self.send_segments(slot, &mut segs);
        self.segs = segs;
        self.arm_timer(slot);
    }

    fn send_segments(&mut self, slot: u32, segs: &mut Vec<SegOut>) {
        if segs.is_empty() {
            return;
        }
        let f = self.flows[slot as usize].as_mut().unwrap();
        f.in_nic += segs.len() as u32;
        let (src, dst, id, hash) = (f.src, f.dst, f.id, f.hash);
        for s in segs.drain(..) {
            let pkt = self.pkts.alloc(Packet {
                flow_slot: slot,
                flow_id: id,
                src,
                dst,
                kind: PktKind::Data,
                class: self.data_class,
                retx: s.retx,
                nsack: 0,
                wire: wire_bytes(s.len + self.header, self.framing),
                len: s.len,
                seq: s.seq,
                ts: self.now,
                sack: [(0, 0); MAX_SACK],
                hash,
            });
            self.enqueue(src, 0, pkt);
        }
    }

    fn send_ack(&mut self, slot: u32) {
        let f = self.flows[slot as usize].as_mut().unwrap();
        let ack = f.receiver.make_ack();
        // SACK option: 2 B kind/len + 8 B per block, padded to 4 B (RFC 2018).
        let opt = if ack.nsack > 0 {
            (2 + 8 * ack.nsack as u32).div_ceil(4) * 4
        } else {
            0
        };
        let pkt = Packet {
            flow_slot: slot,
            flow_id: f.id,
            src: f.dst,
            dst: f.src,
            kind: PktKind::Ack,
            class: self.ack_class,
            retx: ack.echo_retx,
            nsack: ack.nsack,
            wire: wire_bytes(self.header + opt, self.framing),
            len: 0,
            seq: ack.cum,
            ts: ack.echo_ts,
            sack: ack.sack,
            hash: f.hash.rotate_left(17),
        };
        let from = f.dst;
        let pkt = self.pkts.alloc(pkt);
        self.enqueue(from, 0, pkt);
    }

    /// Schedules a timer event if this flow's earliest deadline is earlier than the one queued.
    fn arm_timer(&mut self, slot: u32) {
        let f = self.flows[slot as usize].as_mut().unwrap();
        let want = match (f.sender.timer(), f.receiver.timer()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if let Some(t) = want {
            if f.timer_ev.is_none_or(|p| t < p) {
                f.timer_ev = Some(t);
                self.push(t, Ev::Timer { slot });
            }
        }
    }

    fn on_timer(&mut self, slot: u32, at: Ps) {
        let Some(f) = self.flows[slot as usize].as_mut() else {
            return;
        };
        if f.timer_ev != Some(at) {
            return; // superseded by an earlier timer event
        }
        f.timer_ev = None;
        let now = self.now;
        let mut segs = std::mem::take(&mut self.segs);
        let before = f.sender.timeouts;
        let budget = self.nic_limit.saturating_sub(f.in_nic) as usize;
        f.sender.on_timer(now, budget, &mut segs);
        self.counters.timeouts += (f.sender.timeouts - before) as u64;
        self.counters.retransmits += segs.iter().filter(|s| s.retx).count() as u64;
        let ack_due = f.receiver.on_timer(now);
        self.send_segments(slot, &mut segs);
        self.segs = segs;
        if ack_due {
            self.send_ack(slot);
        }
        self.arm_timer(slot);
    }

    fn record_flow(&mut self, slot: u32) {
        let f = self.flows[slot as usize]
            .take()
            .expect("recording a live flow");
        self.free_slots.push(slot);
        self.active -= 1;
        let r = &mut self.records;
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
                self.counters.flows_finished += 1;
            }
            None => {
                r.finish_ps.push(u64::MAX);
                r.fct_ps.push(u64::MAX);
                r.slowdown.push(f64::NAN);
                self.counters.flows_unfinished += 1;
            }
        }
        r.ideal_fct_ps.push(f.ideal);
        r.priority.push(self.data_class);
        r.class.push(f.class);
        r.query_id.push(f.query);
        r.retransmits.push(f.sender.retransmits);
        r.timeouts.push(f.sender.timeouts);
        r.drops.push(f.drops);
        r.notifications.push(0);
        r.delivered_bytes.push(f.receiver.delivered());
        self.counters.bytes_delivered += f.receiver.delivered();
        self.counters.dup_bytes += f.receiver.dup_bytes;
    }

    // ---------------------------------------------------------------- packets

    fn on_arrive(&mut self, node: u32, pkt: u32) {
        if node < self.net.hosts {
            if self.proc_time == 0 {
                self.deliver(pkt);
            } else {
                // FastLane §4.2.1: up to P packets in service at once, each taking t.
                let p = &mut self.procs[node as usize];
                if p.busy < self.proc_parallel {
                    p.busy += 1;
                    self.push(self.now + self.proc_time, Ev::HostDone { host: node, pkt });
                } else {
                    p.waiting.push_back(pkt);
                }
            }
            return;
        }
        let p = self.pkts.hot(pkt);
        let hops = self.net.next_hops(node, p.dst);
        let port = if hops.len() == 1 {
            hops[0]
        } else {
            match self.forwarding {
                Forwarding::Ecmp => {
                    hops[(mix64((p.hash as u64) << 32 | node as u64) % hops.len() as u64) as usize]
                }
                Forwarding::Spray => {
                    let rng = &mut self.switch_rng[(node - self.net.hosts) as usize];
                    hops[rng.below(hops.len() as u64) as usize]
                }
            }
        };
        self.enqueue(node, port as u32, pkt);
    }

    fn on_host_done(&mut self, host: u32, pkt: u32) {
        self.deliver(pkt);
        let p = &mut self.procs[host as usize];
        match p.waiting.pop_front() {
            Some(next) => self.push(self.now + self.proc_time, Ev::HostDone { host, pkt: next }),
            None => p.busy -= 1,
        }
    }

    fn enqueue(&mut self, node: u32, port: u32, pkt: u32) {
        let now = self.now;
        let port_ref = &mut self.net.nodes[node as usize].ports[port as usize];
        if !port_ref.enqueue(now, pkt, &mut self.pkts.hot) {
            self.counters.drops += 1;
            let p = self.pkts.get(pkt);
            if let Some(f) = self.flows[p.flow_slot as usize].as_mut() {
                if f.id == p.flow_id {
                    f.drops += 1;
                    if node < self.net.hosts && p.kind == PktKind::Data {
                        f.in_nic -= 1;
                        self.nic_wake.push(p.flow_slot);
                    }
                }
            }
            self.pkts.free(pkt);
            return;
        }
        if port_ref.wake_pending {
            return;
        }
        if port_ref.busy_until <= now {
            self.transmit_next(node, port);
        } else {
            port_ref.wake_pending = true;
            let t = port_ref.busy_until;
            self.push(t, Ev::PortFree { node, port });
        }
    }

    fn transmit_next(&mut self, node: u32, port: u32) {
        let now = self.now;
        let pkts = &self.pkts;
        let p = &mut self.net.nodes[node as usize].ports[port as usize];
        let Some(pkt) = p.dequeue(now, &pkts.hot) else {
            return;
        };
        let pk = pkts.hot(pkt);
        let wire = pk.wire;
        if node < self.net.hosts && pk.kind == PktKind::Data {
            // The segment leaves the NIC queue: its flow may queue another.
            if let Some(f) = self.flows[pk.flow_slot as usize].as_mut() {
                if f.id == pkts.get(pkt).flow_id {
                    f.in_nic -= 1;
                    self.nic_wake.push(pk.flow_slot);
                }
            }
        }
        let done = now + p.serialization(wire as u64);
        p.busy_until = done;
        let (peer, delay) = (p.peer, p.delay);
        let more = !p.is_empty();
        if more {
            p.wake_pending = true;
        }
        self.counters.packet_hops += 1;
        self.push(done + delay, Ev::Arrive { node: peer, pkt });
        if more {
            self.push(done, Ev::PortFree { node, port });
        }
    }

    /// A packet reached its destination host's transport.
    fn deliver(&mut self, pkt: u32) {
        let p = self.pkts.get(pkt).clone();
        self.pkts.free(pkt);
        let slot = p.flow_slot;
        let live = matches!(&self.flows[slot as usize], Some(f) if f.id == p.flow_id);
        if !live {
            self.counters.stale_packets += 1;
            return;
        }
        let now = self.now;
        match p.kind {
            PktKind::Data => {
                let f = self.flows[slot as usize].as_mut().unwrap();
                let rx = f.receiver.on_data(now, p.seq, p.len, p.ts, p.retx);
                if rx.ack_now {
                    self.send_ack(slot);
                }
                if rx.completed {
                    let f = self.flows[slot as usize].as_mut().unwrap();
                    f.finish = Some(now);
                    let (tag, dst) = (f.tag, f.dst);
                    let mut nf = std::mem::take(&mut self.newflows);
                    self.workload
                        .on_flow_done(now, tag, dst, &mut nf, &mut self.queries);
                    for f in nf.drain(..) {
                        self.start_flow(f);
                    }
                    self.newflows = nf;
                    self.schedule_workload();
                }
                self.arm_timer(slot);
            }
            PktKind::Ack => {
                let ack = AckInfo {
                    cum: p.seq,
                    sack: p.sack,
                    nsack: p.nsack,
                    echo_ts: p.ts,
                    echo_retx: p.retx,
                };
                let mut segs = std::mem::take(&mut self.segs);
                let f = self.flows[slot as usize].as_mut().unwrap();
                let budget = self.nic_limit.saturating_sub(f.in_nic) as usize;
                f.sender.on_ack(now, &ack, budget, &mut segs);
                self.counters.retransmits += segs.iter().filter(|s| s.retx).count() as u64;
                let done = f.sender.done() && f.receiver.complete();
                self.send_segments(slot, &mut segs);
                self.segs = segs;
                if done {
                    self.record_flow(slot);
                    self.check_done();
                } else {
                    self.arm_timer(slot);
                }
            }
        }
    }

    // ---------------------------------------------------------------- outputs

    /// Takes the flow records produced since the last call (stream them out).
    pub fn take_flows(&mut self) -> FlowRecords {
        std::mem::take(&mut self.records)
    }

    pub fn take_queries(&mut self) -> Vec<QueryRecord> {
        std::mem::take(&mut self.queries)
    }

    pub fn port_records(&self) -> PortRecords {
        let mut r = PortRecords::default();
        for (n, node) in self.net.nodes.iter().enumerate() {
            for (i, p) in node.ports.iter().enumerate() {
                r.node.push(n as u32);
                r.port.push(i as u32);
                r.peer.push(p.peer);
                r.is_switch.push(n as u32 >= self.net.hosts);
                r.capacity.push(p.capacity);
                r.enqueued.push(p.stats.enqueued);
                r.dropped.push(p.stats.dropped);
                r.max_bytes.push(p.stats.max_bytes);
                r.mean_bytes.push(p.mean_bytes(self.now));
            }
        }
        r
    }

    pub fn hosts(&self) -> u32 {
        self.net.hosts
    }

    pub fn live_packets(&self) -> usize {
        self.pkts.live()
    }
}
