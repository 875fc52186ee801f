//! The simulator: one event loop moving packets between mechanisms.
//!
//! Events are ordered by (time, insertion order) (see [`EventQueue`]), so equal-time
//! events run in the order they were scheduled and every run of a scenario is identical. Mechanisms
//! (transport, queues, workload) never touch the queue or the clock: the loop calls them
//! with the time and acts on what they return.

use crate::fabric::Network;
use crate::output::counters::Counters;
use crate::output::flows::FlowRecords;
use crate::output::ideal::ideal_fct;
use crate::output::ports::PortRecords;
use crate::packet::wire::wire_bytes;
use crate::packet::{Arena, Hot, Packet, PktKind};
use crate::switch::discipline::pfabric::{Entry, PFabricQueue};
use crate::switch::marking::codel::Codel;
use crate::switch::overflow::cut_payload::CUT_IP_BYTES;
use crate::switch::overflow::fastlane::{NotifQueue, NOTIFICATION_FRAME};
use crate::switch::overflow::source_quench::QUENCH_IP_BYTES;
use crate::switch::overflow::Overflow;
use crate::switch::port::{Port, NO_WAKE};
use queue::EventQueue;

pub mod queue;
use crate::config::{Forwarding, QueueKind, Scenario, ScenarioError};
use crate::fabric::topology::Topology;
use crate::rng::{component, mix64, Rng};
use crate::transport::cc::kinds::Cc;
use crate::transport::connection::{AckInfo, Handled, Input, Segment};
use crate::transport::tcp::sender::TcpSender;
use crate::transport::{Transport, TransportConfig};
use crate::units::Ps;
use crate::workload::{NewFlow, QueryRecord, Traffic};
use std::collections::VecDeque;

/// `Ev::Arrive::egress` when the egress is chosen on arrival.
const ROUTE_ON_ARRIVAL: u16 = u16::MAX;

/// Prefetching for the next event pays only when the lines it loads have left L2
/// between a port's packets: measured on this machine (AMD EPYC, 512 KB L2), fat tree
/// k=16 (6144 ports of 256 B, 1.5 MB) 8-10% less wall time, k=8 (768 ports, 192 KB)
/// no change, incast on a star (130 ports) ~4% more. So it is on above 512 KB of ports.
const PREFETCH_ABOVE_BYTES: usize = 512 << 10;

/// `host.gro`: Linux's merged segment stays under 64 KB (`skb_gro_receive`).
const GRO_MAX_BYTES: u32 = 65535;

#[derive(Debug, Clone, Copy)]
enum Ev {
    /// A packet has been fully received at a node (store-and-forward), by `port`. At a
    /// switch with fixed routes (one next hop, or ECMP's hash) it carries the egress
    /// port, chosen when the packet was sent toward it: the event before it can then
    /// prefetch that port's line (`Sim::prefetch_for`). `ROUTE_ON_ARRIVAL` otherwise
    /// (hosts, spraying, weighted random forwarding: drawn when the packet arrives).
    Arrive {
        node: u32,
        pkt: u32,
        port: u16,
        egress: u16,
    },
    /// A port finished serializing and has more queued. This stays an event of its own,
    /// at its place in the (time, insertion) order: what was processed before it decides
    /// which packet goes next (strict priority), the bytes that same-time arrivals find
    /// queued, and the insertion rank of the next packet's `Arrive`, which orders it among
    /// same-time arrivals at the next node. Starting the next packet early (when the
    /// previous one starts, or at enqueue) would push that `Arrive` earlier and reorder
    /// such ties into the same egress FIFO: at least 234 in fattree_websearch's 20 ms,
    /// 647 in examples/websearch.toml's first 40 ms, so results would change.
    PortFree { node: u32, port: u32 },
    /// A flow's earliest timer (RTO or delayed ACK) may be due.
    Timer { slot: u32 },
    /// A receiving host finished processing a packet (server model).
    HostDone { host: u32, pkt: u32 },
    /// A received packet's host-side latency (`host.rx_jitter`) has passed.
    HostRx { host: u32, pkt: u32 },
    /// `host.gro`: the interrupt batch that a flow's held segment came in has been
    /// handled; the merged segment is acknowledged now.
    GroFlush { slot: u32 },
    /// The workload has arrivals due.
    Workload,
}

// The event queue's nodes hold time, event and link: 8 + 16 + 4 (+ 4) = 32 bytes
// (queue.rs).
const _: () = assert!(std::mem::size_of::<Ev>() == 16);

/// A host's receive path (`host.rx_coalesce`, `host.rx_jitter`): the jitter's random
/// stream, and per host the latest release time (packets never overtake each other
/// inside a host).
struct RxLatency {
    /// Per host (empty without `host.rx_jitter`).
    rng: Vec<Rng>,
    last: Vec<Ps>,
    /// `host.rx_coalesce`: per host, the time of its latest interrupt (`Ps::MAX`: none yet).
    irq: Vec<Ps>,
    /// With `rx_coalesce`, the jitter drawn for that interrupt (its batch goes up together).
    irq_jitter: Vec<Ps>,
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
    /// `host.gro`: the interrupt time of the segment held for merging (`Ps::MAX`: none),
    /// the sequence that would continue it, and its merged payload bytes.
    gro_at: Ps,
    gro_next: u64,
    gro_bytes: u32,
    /// Time of this flow's queued `GroFlush` event (`Ps::MAX`: none).
    gro_ev: Ps,
    /// Data segments waiting in the source host's NIC queue.
    in_nic: u32,
    /// Waiting, after a local NIC drop, for its host's NIC to send something.
    nic_blocked: bool,
    /// Drop notifications received by either end (FastLane).
    notified: u32,
    conn: Transport,
}

#[derive(Default)]
struct HostProc {
    busy: u32,
    waiting: VecDeque<u32>,
}

/// What [`Sim::deliver`] reads of a packet.
struct Delivered {
    flow_slot: u32,
    flow_id: u64,
    kind: PktKind,
    orig: PktKind,
    ppl: bool,
    seq: u64,
    len: u32,
    ts: Ps,
    retx: bool,
    ce: bool,
    epoch: u16,
    ack: Option<AckInfo>,
}

impl Delivered {
    #[inline(always)]
    fn of(p: &Packet) -> Delivered {
        Delivered {
            flow_slot: p.flow_slot,
            flow_id: p.flow_id,
            kind: p.kind,
            orig: p.orig,
            ppl: p.ppl,
            seq: p.seq,
            len: p.len,
            ts: p.ts,
            retx: p.retx,
            ce: p.ce,
            epoch: p.epoch,
            ack: if p.kind == PktKind::Ack {
                Some(AckInfo {
                    cum: p.seq,
                    sack: p.sack,
                    nsack: p.nsack,
                    echo_ts: p.ts,
                    echo_retx: p.retx,
                    ece: p.ece,
                    ooo: p.ooo as u64,
                    pack: p.pack,
                    dsack: p.dsack,
                })
            } else {
                None
            },
        }
    }
}

/// `h % n` for an ECMP choice among `n` ports: a mask when `n` is a power of two (fat
/// trees' k/2 uplinks), the same number without a 64-bit division (tens of cycles of
/// latency on the forwarding path of every switch hop).
#[inline(always)]
fn ecmp_index(h: u64, n: usize) -> usize {
    let n = n as u64;
    (if n.is_power_of_two() {
        h & (n - 1)
    } else {
        h % n
    }) as usize
}

/// After a transmission: does data still wait at this port?
#[inline]
fn data_waiting_after(p: &crate::switch::port::Port) -> bool {
    !p.is_empty()
}

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
        }
    }
}

/// Calendar geometry for this network: slots narrow enough to hold about four events
/// each when every host link is busy (~4 events per packet-time per host), so that a slot
/// needs little sorting, and a ring long enough to hold the furthest hop (propagation +
/// serialization of a jumbo frame) twice over.
fn queue_geometry(t: &crate::config::TopologySpec, hosts: u32, net: &Network) -> (u32, u32) {
    let events_per_s = hosts as f64 * t.link_rate as f64 / (8.0 * 1538.0) * 4.0;
    // Measured (callgrind, fat-trees k=8 and k=16), with a slot's events insertion-sorted
    // as the cursor reaches it: 4 per slot beats 2 (more cursor moves, a ring twice as
    // long: D1 misses per hop 8.24 / 9.65 against 8.12 / 9.42) and 8 (more sorting:
    // 557 instructions per hop at k=8 against 549).
    let width_ps = 4.0 * 1e12 / events_per_s;
    let shift = (width_ps.log2().floor() as u32).clamp(8, 20);
    let horizon = net
        .all_ports()
        .iter()
        .map(|p| p.delay + p.serialization(9100))
        .max()
        .unwrap_or(0);
    let slots_log2 = (65 - (horizon >> shift).leading_zeros()).clamp(12, 17);
    (shift, slots_log2)
}

/// ECMP: the next hop a flow of 5-tuple hash `hash` takes at `switch` among `hops`.
#[inline(always)]
fn ecmp_pick(hops: &[u16], switch: u32, hash: u32) -> u16 {
    if hops.len() == 1 {
        hops[0]
    } else {
        hops[ecmp_index(mix64((hash as u64) << 32 | switch as u64), hops.len())]
    }
}

/// Wake `port` at `t`: `wake_at` names its one pending `PortFree` event, so a wake-up it
/// supersedes is recognised (and ignored) when it pops.
#[inline(always)]
fn arm_wake(heap: &mut EventQueue<Ev>, p: &mut Port, node: u32, port: u32, t: Ps) {
    p.wake_at = t;
    heap.push(t, Ev::PortFree { node, port });
}

pub struct Sim {
    now: Ps,
    heap: EventQueue<Ev>,
    net: Network,
    pkts: Arena,
    flows: Vec<Option<Flow>>,
    free_slots: Vec<u32>,
    active: u64,
    workload: Traffic,
    wl_pending: Option<Ps>,
    transport: TransportConfig,
    framing: u32,
    ack_class: u8,
    forwarding: Forwarding,
    overflow: Overflow,
    cut_extra: u64,
    /// pFabric victims of the current admission.
    evicted: Vec<Entry>,
    switch_rng: Vec<Rng>,
    rx_jitter: Ps,
    rx_latency: RxLatency,
    rx_coalesce: Ps,
    /// `host.gro`: merge each interrupt's in-sequence segments, one ACK per merge.
    gro: bool,
    proc_time: Ps,
    proc_parallel: u32,
    nic_limit: u32,
    nic_drop_local: bool,
    /// Per host (with `host.nic_drop = "local"`): flows a full NIC refused, woken when
    /// it next starts a packet.
    nic_blocked: Vec<Vec<u32>>,
    /// Set by a local NIC drop, read by `send_segments`.
    nic_refused: bool,
    /// Flows whose segment just left their NIC: offered another slot after this event.
    nic_wake: Vec<u32>,
    procs: Vec<HostProc>,
    /// `run.duration` and `run.max_events`, u64::MAX when unset (one compare an event).
    end_time: Ps,
    event_limit: u64,
    seed: u64,
    next_flow_id: u64,
    segs: Vec<Segment>,
    newflows: Vec<NewFlow>,
    records: FlowRecords,
    queries: Vec<QueryRecord>,
    pub counters: Counters,
    stop: StopReason,
}

impl Sim {
    pub fn new(sc: &Scenario) -> Result<Sim, ScenarioError> {
        let topo = Topology::build(&sc.topology);
        let mut net = Network::new(
            &topo,
            sc.switch.buffer,
            sc.switch.edge_buffer,
            sc.switch.spine_buffer,
            sc.host.nic_buffer,
            &sc.switch.routes,
            &|i| sc.topology.shape.node_name(i),
        )
        .map_err(|e| {
            // The topology's errors name its kind; routes that fail only together (a
            // loop) name no one value.
            let value = if e.key == "topology" {
                sc.topology.kind.as_str()
            } else {
                ""
            };
            ScenarioError::new(&e.key, value, e.message)
        })?;
        let hosts = topo.hosts;
        // `topology.clock_ppm`: one clock per node (a switch's ports share its
        // oscillator), each drawn from the node's own stream (hosts and switches
        // numbered apart), so that adding a host leaves every other clock as it was.
        let ppm = sc.topology.clock_ppm * 1e-6;
        for n in 0..net.node_count() as u32 {
            let is_switch = n >= hosts;
            let clock = (ppm > 0.0).then(|| {
                let id = if is_switch {
                    component::SWITCH_CLOCK_BASE + (n - hosts) as u64
                } else {
                    component::HOST_CLOCK_BASE + n as u64
                };
                let mut r = Rng::new(sc.run.seed, id);
                1.0 + (2.0 * r.next_f64() - 1.0) * ppm
            });
            for p in net.node_ports_mut(n) {
                if let Some(x) = clock {
                    p.set_rate((p.rate as f64 * x).round() as u64);
                }
                // pFabric end hosts serve their NIC by priority too (pFabric §4.1).
                let pfabric =
                    (sc.switch.queue == QueueKind::PFabric).then(Box::<PFabricQueue>::default);
                let notif = (is_switch && sc.switch.overflow == Overflow::FastLane)
                    .then(|| Box::new(NotifQueue::new(sc.switch.fastlane)));
                let codel = sc
                    .switch
                    .codel
                    .filter(|_| is_switch)
                    .map(|c| Box::new(Codel::new(c)));
                p.set_extras(pfabric, notif, codel);
                if let (true, Some(k)) = (is_switch, sc.switch.ecn_threshold) {
                    p.mark_above = k;
                }
            }
        }
        let workload = Traffic::new(
            &sc.workload,
            sc.background.as_ref(),
            hosts,
            sc.topology.link_rate,
            Rng::new(sc.run.seed, component::WORKLOAD),
            Rng::new(sc.run.seed, component::BACKGROUND),
        );
        let switch_rng = (0..topo.switches)
            .map(|s| Rng::new(sc.run.seed, component::SWITCH_BASE + s as u64))
            .collect();
        let (shift, slots_log2) = queue_geometry(&sc.topology, hosts, &net);
        let mut heap = EventQueue::with_geometry(shift, slots_log2);
        // One switch for both prefetches, the calendar's and `Sim::prefetch_for`.
        heap.set_prefetch(std::mem::size_of_val(net.all_ports()) > PREFETCH_ABOVE_BYTES);
        let mut sim = Sim {
            now: 0,
            heap,
            net,
            pkts: Arena::default(),
            flows: Vec::new(),
            free_slots: Vec::new(),
            active: 0,
            workload,
            wl_pending: None,
            transport: sc.transport.clone(),
            framing: sc.topology.framing_bytes,
            ack_class: sc.transport.ack_class(),
            forwarding: sc.switch.forwarding,
            overflow: sc.switch.overflow,
            cut_extra: sc.switch.cut_extra,
            evicted: Vec::new(),
            switch_rng,
            rx_jitter: sc.host.rx_jitter,
            rx_latency: RxLatency {
                // One stream per host: traffic elsewhere does not move a host's draws.
                rng: if sc.host.rx_jitter > 0 {
                    (0..hosts as u64)
                        .map(|h| Rng::new(sc.run.seed, component::RX_JITTER_BASE + h))
                        .collect()
                } else {
                    Vec::new()
                },
                last: vec![0; hosts as usize],
                irq: vec![Ps::MAX; hosts as usize],
                irq_jitter: vec![0; hosts as usize],
            },
            rx_coalesce: sc.host.rx_coalesce,
            gro: sc.host.gro,
            proc_time: sc.host.proc_time,
            proc_parallel: sc.host.proc_parallel,
            nic_limit: sc
                .host
                .nic_flow_limit
                .map_or(u32::MAX, |v| v.min(u32::MAX as u64) as u32),
            nic_drop_local: sc.host.nic_drop_local,
            nic_blocked: if sc.host.nic_drop_local {
                vec![Vec::new(); hosts as usize]
            } else {
                Vec::new()
            },
            nic_refused: false,
            nic_wake: Vec::new(),
            procs: (0..hosts).map(|_| HostProc::default()).collect(),
            end_time: sc.run.duration.unwrap_or(crate::units::HORIZON),
            event_limit: sc.run.max_events.unwrap_or(u64::MAX),
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

    #[inline(always)]
    fn push(&mut self, time: Ps, ev: Ev) {
        self.heap.push(time, ev);
    }

    /// Runs up to `budget` events; returns true once the run has ended.
    pub fn step(&mut self, budget: u64) -> bool {
        // Never past `run.max_events`: that limit is checked once per call, not per event.
        // (The limit was checked after each event, so even `max_events = 0` ran one.)
        let budget = budget.min(self.event_limit.max(1).saturating_sub(self.counters.events));
        for _ in 0..budget {
            if self.finished() {
                break;
            }
            let Some((time, ev)) = self.heap.pop() else {
                self.end(if self.active > 0 {
                    StopReason::Stalled
                } else {
                    StopReason::AllFlowsDone
                });
                break;
            };
            if time > self.end_time {
                self.now = self.end_time;
                self.end(if self.end_time == crate::units::HORIZON {
                    StopReason::Horizon
                } else {
                    StopReason::Duration
                });
                break;
            }
            self.now = time;
            self.counters.events += 1;
            if self.heap.prefetching() {
                if let Some(&next) = self.heap.peek_near() {
                    self.prefetch_for(next);
                }
            }
            match ev {
                Ev::Arrive {
                    node,
                    pkt,
                    port,
                    egress,
                } => self.on_arrive(node, pkt, port, egress),
                Ev::PortFree { node, port } => {
                    let pi = self.net.port_index(node, port);
                    let p = self.net.port_at_mut(pi);
                    // Superseded wake-ups (see `enqueue`) are ignored.
                    if p.wake_at == time {
                        p.wake_at = NO_WAKE;
                        if p.is_plain() {
                            // `transmit_next` for a plain FIFO port, without the call: the
                            // head of the FIFO goes (one is there: nothing else takes).
                            if let Some((pkt, h)) = p.dequeue_fifo(time, &self.pkts.hot) {
                                self.send_at(node, port, pi, pkt, h, false);
                            }
                        } else {
                            self.transmit_next(node, port);
                        }
                    }
                }
                Ev::Timer { slot } => self.on_timer(slot, time),
                Ev::HostDone { host, pkt } => self.on_host_done(host, pkt),
                Ev::HostRx { host, pkt } => self.host_receive(host, pkt),
                Ev::GroFlush { slot } => {
                    if let Some(f) = self.flows[slot as usize].as_mut() {
                        if f.gro_ev == time {
                            f.gro_ev = Ps::MAX;
                            self.gro_flush(slot);
                        }
                    }
                }
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
        }
        if self.counters.events >= self.event_limit && !self.finished() {
            self.end(StopReason::MaxEvents);
        }
        self.finished()
    }

    /// Start loading what event `ev` will touch first, while the event before it runs:
    /// at a host the packet (its delivery reads it whole), at a switch the packet's hot
    /// part and the egress port's first line. With many hosts these lines are no longer
    /// in L2 when their event comes (docs/performance.md § Scale).
    #[inline(always)]
    fn prefetch_for(&self, ev: Ev) {
        match ev {
            Ev::Arrive {
                node, pkt, egress, ..
            } => {
                if node < self.net.hosts {
                    self.pkts.prefetch(pkt, true);
                } else if egress != ROUTE_ON_ARRIVAL {
                    self.pkts.prefetch(pkt, false);
                    self.net
                        .prefetch_port(self.net.port_index(node, egress as u32));
                }
            }
            Ev::PortFree { node, port } => {
                self.net.prefetch_port(self.net.port_index(node, port));
            }
            _ => {}
        }
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
        self.counters.queries_unfinished = self.workload.open_queries();
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
        let mss = self.transport.mss() as u64;
        let header = self.transport.header_bytes();
        let packets = f.size.div_ceil(mss);
        let last = f.size - (packets - 1) * mss;
        let ideal = ideal_fct(
            &self.net.path(f.src, f.dst),
            packets,
            wire_bytes(mss as u32 + header, self.framing),
            wire_bytes(last as u32 + header, self.framing),
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
            gro_at: Ps::MAX,
            gro_next: 0,
            gro_bytes: 0,
            gro_ev: Ps::MAX,
            in_nic: 0,
            nic_blocked: false,
            notified: 0,
            conn: Transport::new(&self.transport, f.size),
        });
        self.active += 1;
        self.counters.flows_started += 1;
        self.counters.bytes_offered += f.size;
        self.counters.peak_active_flows = self.counters.peak_active_flows.max(self.active);
        let mut segs = std::mem::take(&mut self.segs);
        let f = self.flows[slot as usize].as_mut().unwrap();
        let budget = self.nic_limit.saturating_sub(f.in_nic) as usize;
        f.conn.start();
        f.conn.poll_transmit(self.now, budget, &mut segs);
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
        if !f.conn.wants_poll(budget) {
            return;
        }
        let mut segs = std::mem::take(&mut self.segs);
        f.conn.handle(now, Input::NicFreed);
        f.conn.poll_transmit(now, budget, &mut segs);
        self.send_segments(slot, &mut segs);
        self.segs = segs;
        self.arm_timer(slot);
    }

    fn send_segments(&mut self, slot: u32, segs: &mut Vec<Segment>) {
        if segs.is_empty() {
            return;
        }
        let f = self.flows[slot as usize].as_mut().unwrap();
        f.in_nic += segs.len() as u32;
        let (src, dst, id, hash) = (f.src, f.dst, f.id, f.hash);
        for (i, &s) in segs.iter().enumerate() {
            let kind = if s.probe {
                self.counters.probes += 1;
                PktKind::Probe
            } else {
                PktKind::Data
            };
            let wire = wire_bytes(s.ip_bytes, self.framing);
            let mut p = Packet::new(kind, slot, id, src, dst, s.class, wire, hash);
            p.retx = s.retx;
            p.len = s.len;
            p.seq = s.seq;
            p.ts = s.ts;
            p.prio = s.prio;
            p.epoch = s.epoch;
            p.ect = s.ect;
            p.cpa = s.cpa;
            let pkt = self.pkts.alloc(p);
            self.enqueue(src, 0, pkt, u16::MAX);
            if self.nic_refused {
                self.nic_refused = false;
                self.refused(slot, src, &segs[i..]);
                break;
            }
            // Counted as it leaves: a segment its own NIC refused was never sent.
            self.counters.retransmits += s.retx as u64;
        }
        segs.clear();
    }

    /// `host.nic_drop = "local"`: the host's NIC refused `segs[0]`, so neither it nor the
    /// rest of the burst leaves (Linux's tcp_write_xmit stops at the first refusal). The
    /// sender takes them back, and the flow waits for the NIC to start its next packet
    /// (a wake now would offer them to the still-full queue; Linux waits for its next
    /// ACK, or with nothing in flight for a probe timer).
    #[inline(never)]
    fn refused(&mut self, slot: u32, host: u32, segs: &[Segment]) {
        let f = self.flows[slot as usize].as_mut().unwrap();
        f.in_nic -= segs.len() as u32 - 1; // the first was counted out as it was dropped
        f.conn.handle(self.now, Input::Refused(segs));
        if !f.nic_blocked {
            f.nic_blocked = true;
            self.nic_blocked[host as usize].push(slot);
        }
    }

    fn send_ack(&mut self, slot: u32) {
        let f = self.flows[slot as usize].as_mut().unwrap();
        // Any ACK covers a segment held for merging (`host.gro`).
        f.gro_at = Ps::MAX;
        let a = f.conn.poll_ack();
        let ack = a.info;
        let wire = wire_bytes(a.ip_bytes, self.framing);
        let mut pkt = Packet::new(
            PktKind::Ack,
            slot,
            f.id,
            f.dst,
            f.src,
            a.class,
            wire,
            f.hash.rotate_left(17),
        );
        pkt.retx = ack.echo_retx;
        pkt.nsack = ack.nsack;
        pkt.seq = ack.cum;
        pkt.ts = ack.echo_ts;
        pkt.sack = ack.sack;
        pkt.ece = ack.ece;
        pkt.ooo = ack.ooo.min(u32::MAX as u64) as u32;
        pkt.ppl = a.pack;
        pkt.pack = ack.pack;
        pkt.dsack = ack.dsack;
        let from = f.dst;
        let pkt = self.pkts.alloc(pkt);
        self.enqueue(from, 0, pkt, u16::MAX);
    }

    /// Schedules a timer event if this flow's earliest deadline is earlier than the one queued.
    ///
    /// Called after every packet a flow handles, and nearly always a no-op (a restarted
    /// retransmission timer is later than the event already queued): the check is
    /// inlined, only the push is a call (as one call, its register saves and restores
    /// were half of its instructions).
    #[inline(always)]
    fn arm_timer(&mut self, slot: u32) {
        let f = self.flows[slot as usize].as_mut().unwrap();
        // Deadlines are at most rto_max after now, never Ps::MAX ("none").
        let want = f.conn.poll_timeout().unwrap_or(Ps::MAX);
        if want < f.timer_ev.unwrap_or(Ps::MAX) {
            self.queue_timer(slot, want);
        }
    }

    #[inline(never)]
    fn queue_timer(&mut self, slot: u32, t: Ps) {
        self.flows[slot as usize].as_mut().unwrap().timer_ev = Some(t);
        self.push(t, Ev::Timer { slot });
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
        let before = f.conn.stats().timeouts;
        let budget = self.nic_limit.saturating_sub(f.in_nic) as usize;
        let ack_due = f.conn.handle(now, Input::Timeout).ack_now;
        f.conn.poll_transmit(now, budget, &mut segs);
        self.counters.timeouts += (f.conn.stats().timeouts - before) as u64;
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
        r.priority.push(self.transport.data_class());
        r.class.push(f.class);
        r.query_id.push(f.query);
        let st = f.conn.stats();
        r.retransmits.push(st.retransmits);
        r.timeouts.push(st.timeouts);
        r.drops.push(f.drops);
        r.notifications.push(f.notified);
        self.counters.notifications_stale += st.notifications_stale as u64;
        self.counters.packs += st.packs as u64;
        self.counters.undos += st.undos as u64;
        self.counters.ecn_reductions += st.ecn_reductions as u64;
        r.delivered_bytes.push(st.delivered_bytes);
        self.counters.bytes_delivered += st.delivered_bytes;
        self.counters.dup_bytes += st.duplicate_bytes;
    }

    // ---------------------------------------------------------------- packets

    fn on_arrive(&mut self, node: u32, pkt: u32, in_port: u16, egress: u16) {
        if node < self.net.hosts {
            let kind = self.pkts.hot(pkt).kind;
            if kind == PktKind::Probe {
                // The NIC echoes probes at once, past any server delay (FastLane §4.2.2).
                self.echo_probe(pkt);
            } else if kind == PktKind::ProbeAck {
                // And the echo is not queued behind the source's server either.
                self.deliver(pkt);
            } else if self.rx_jitter > 0 || self.rx_coalesce > 0 {
                let rx = &mut self.rx_latency;
                let mut t = self.now;
                if self.rx_coalesce > 0 {
                    // Interrupt moderation: at most one interrupt per interval; a packet
                    // waits for the pending one, or for the next the interval allows.
                    let h = node as usize;
                    let irq = rx.irq[h];
                    let next = if irq == Ps::MAX || t >= irq + self.rx_coalesce {
                        t
                    } else if t > irq {
                        irq + self.rx_coalesce
                    } else {
                        irq
                    };
                    if next != irq {
                        rx.irq[h] = next;
                        // One softirq handles the whole batch: one draw of its latency.
                        rx.irq_jitter[h] = if self.rx_jitter > 0 {
                            rx.rng[h].below(self.rx_jitter)
                        } else {
                            0
                        };
                    }
                    t = next + rx.irq_jitter[h];
                } else if self.rx_jitter > 0 {
                    t += rx.rng[node as usize].below(self.rx_jitter);
                }
                let t = t.max(rx.last[node as usize]);
                rx.last[node as usize] = t;
                self.push(t, Ev::HostRx { host: node, pkt });
            } else {
                self.host_receive(node, pkt);
            }
            return;
        }
        let port = if egress != ROUTE_ON_ARRIVAL {
            egress
        } else {
            let h = *self.pkts.hot(pkt);
            self.route_on_arrival(node, h.dst, h.hash)
        };
        self.enqueue(node, port as u32, pkt, in_port);
    }

    /// The egress of a packet for `dst` at `switch`, if it is fixed (one next hop, or
    /// ECMP's hash of the flow): else [`ROUTE_ON_ARRIVAL`].
    #[inline(always)]
    fn fixed_egress(&self, switch: u32, dst: u32, hash: u32) -> u16 {
        if self.net.weighted || self.forwarding != Forwarding::Ecmp {
            return ROUTE_ON_ARRIVAL;
        }
        ecmp_pick(self.net.next_hops(switch, dst), switch, hash)
    }

    /// The egress of a packet at `switch`, chosen as it arrives: spraying and weighted
    /// random forwarding draw from the switch's stream.
    #[inline(never)]
    fn route_on_arrival(&mut self, node: u32, dst: u32, hash: u32) -> u16 {
        let hops = self.net.next_hops(node, dst);
        let weights = if self.net.weighted && hops.len() > 1 {
            self.net.hop_weights(node, dst)
        } else {
            None
        };
        if hops.len() == 1 {
            hops[0]
        } else if let Some(cum) = weights {
            // A random-forwarding switch (CP §6.3): each packet picks by weight.
            let rng = &mut self.switch_rng[(node - self.net.hosts) as usize];
            let x = rng.next_f64();
            hops[cum.iter().position(|&c| x < c).unwrap_or(hops.len() - 1)]
        } else {
            match self.forwarding {
                Forwarding::Ecmp => ecmp_pick(hops, node, hash),
                Forwarding::Spray => {
                    let rng = &mut self.switch_rng[(node - self.net.hosts) as usize];
                    hops[rng.below(hops.len() as u64) as usize]
                }
            }
        }
    }

    /// `host.gro`: a data segment reaches the transport. One that continues the segment
    /// held from this interrupt's batch joins it (Linux merges up to 64 KB; a CE mark,
    /// which changes the IP header, ends a merge); one that cannot join sends the held one
    /// up first. The merged segment is acknowledged once the batch has been handled.
    #[inline(never)]
    fn gro_receive(
        &mut self,
        slot: u32,
        seq: u64,
        len: u32,
        ts: Ps,
        retx: bool,
        ce: bool,
    ) -> Handled {
        let now = self.now;
        let f = self.flows[slot as usize].as_mut().unwrap();
        // Linux merges only segments whose headers and options match: not a CE mark,
        // not a retransmission (a later timestamp), and not a duplicate.
        let mergeable = !ce && !retx && !f.conn.is_duplicate(seq);
        let joins =
            mergeable && f.gro_at == now && f.gro_next == seq && f.gro_bytes + len <= GRO_MAX_BYTES;
        if !joins {
            self.gro_flush(slot);
        }
        self.ack_held_if_ce_flips(slot, ce);
        let f = self.flows[slot as usize].as_mut().unwrap();
        let rx = f.conn.handle(
            now,
            Input::Data {
                seq,
                len,
                ts,
                retx,
                ce,
            },
        );
        if rx.ack_now && mergeable {
            f.gro_bytes = if joins { f.gro_bytes + len } else { len };
            f.gro_at = now;
            f.gro_next = seq + len as u64;
            if f.gro_ev != now {
                f.gro_ev = now;
                // After every packet of the batch: they were queued before it.
                self.push(now, Ev::GroFlush { slot });
            }
        } else if rx.ack_now {
            self.send_ack(slot);
        }
        rx
    }

    /// RFC 8257 §3.2: before a segment whose CE mark differs from the segments a delayed
    /// ACK is held for, those are acknowledged with their own mark
    /// ([`TcpReceiver::ce_flips`]).
    #[inline]
    fn ack_held_if_ce_flips(&mut self, slot: u32, ce: bool) {
        let f = self.flows[slot as usize].as_mut().unwrap();
        if f.conn.ce_flips(ce) {
            self.send_ack(slot);
        }
    }

    /// `host.gro`: acknowledges the flow's segment held for merging, if any. (An ACK
    /// only clears the receiver's timer, so no timer needs arming after it.)
    fn gro_flush(&mut self, slot: u32) {
        let Some(f) = self.flows[slot as usize].as_mut() else {
            return;
        };
        if f.gro_at != Ps::MAX {
            self.send_ack(slot);
        }
    }

    /// A received packet reaches the host's stack: delivered at once, or through the
    /// server model.
    fn host_receive(&mut self, node: u32, pkt: u32) {
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
    }

    fn on_host_done(&mut self, host: u32, pkt: u32) {
        self.deliver(pkt);
        let p = &mut self.procs[host as usize];
        match p.waiting.pop_front() {
            Some(next) => self.push(self.now + self.proc_time, Ev::HostDone { host, pkt: next }),
            None => p.busy -= 1,
        }
    }

    /// Offers `pkt` to a port's queue; `in_port` is where it entered `node` (u16::MAX
    /// at its source host).
    #[inline(always)]
    fn enqueue(&mut self, node: u32, port: u32, pkt: u32, in_port: u16) {
        let now = self.now;
        let pi = self.net.port_index(node, port);
        let port_ref = self.net.port_at_mut(pi);
        if port_ref.is_plain() {
            if port_ref.idle_at(now) {
                // Most packets find their port idle: they go at once, without the round
                // trip through the FIFO and kick (same counters, same order of effects).
                // Inlined at the call sites, this path makes no call but the event push.
                let h = *self.pkts.hot(pkt);
                if port_ref.pass_through(h.wire as u64) {
                    self.send_at(node, port, pi, pkt, h, false);
                    return;
                }
            } else if port_ref.mark_above == u64::MAX
                && (port_ref.busy_until > now
                    || (port_ref.wake_at != NO_WAKE && port_ref.wake_at <= now))
                && port_ref.enqueue(now, pkt, &mut self.pkts.hot, 0)
            {
                // Most of the others queue at a busy port that marks nothing: exactly
                // `enqueue_waiting`'s plain path, without its call (~28 instructions a
                // hop). Under these conditions that path arms a wake-up at the end of the
                // current transmission when none is pending, and otherwise its `kick`
                // does nothing. A packet that does not fit goes on to be dropped there.
                if port_ref.wake_at == NO_WAKE {
                    let t = port_ref.busy_until;
                    arm_wake(&mut self.heap, port_ref, node, port, t);
                }
                return;
            }
        }
        self.enqueue_waiting(node, port, pkt, in_port);
    }

    /// [`Self::enqueue`] when the packet cannot start at once (or does not fit).
    #[inline(never)]
    fn enqueue_waiting(&mut self, node: u32, port: u32, pkt: u32, in_port: u16) {
        let now = self.now;
        let kind = self.pkts.hot(pkt).kind;
        let port_ref = self.net.port_mut(node, port);
        if kind == PktKind::Notify {
            if let Some(nq) = port_ref.notif.as_mut() {
                // FastLane §3.3.2: notifications wait in their own capped buffer.
                let wire = self.pkts.hot(pkt).wire as u32;
                if !nq.admit(pkt, wire) {
                    self.counters.notifications_dropped += 1;
                    self.pkts.free(pkt);
                    return;
                }
                self.kick(node, port);
                return;
            }
        }
        // (A plain idle port refused the packet above only when it does not fit: it is
        // dropped below, as it would be had it been offered to the FIFO.)
        if port_ref.is_plain() {
            if port_ref.enqueue(now, pkt, &mut self.pkts.hot, 0) {
                // The common case, on the one port reference: no CoDel, and unless DCTCP
                // marks it, the kick below without looking the port up again.
                let before = port_ref.bytes - self.pkts.hot(pkt).wire as u64;
                if port_ref.mark_above != u64::MAX
                    && kind == PktKind::Data
                    && before > port_ref.mark_above
                {
                    self.mark(node, port, pkt);
                    self.kick(node, port);
                    return;
                }
                if port_ref.wake_at == NO_WAKE && port_ref.busy_until > now {
                    let t = port_ref.busy_until;
                    arm_wake(&mut self.heap, port_ref, node, port, t);
                } else {
                    self.kick(node, port);
                }
                return;
            }
            if !self.try_cut(node, port, pkt) {
                self.net.port_mut(node, port).stats.dropped += 1;
                self.on_drop(node, pkt, in_port);
                return;
            }
        } else if port_ref.has_pfabric() {
            let (hot, cold) = (self.pkts.hot(pkt), self.pkts.get(pkt));
            let e = Entry {
                pkt,
                class: hot.class,
                prio: cold.prio,
                flow: cold.flow_id,
                wire: hot.wire as u32,
                in_port,
            };
            let mut evicted = std::mem::take(&mut self.evicted);
            let admitted = port_ref.enqueue_pfabric(now, e, &mut evicted);
            for v in evicted.drain(..) {
                self.on_drop(node, v.pkt, v.in_port);
            }
            self.evicted = evicted;
            if !admitted {
                self.on_drop(node, pkt, in_port);
                return;
            }
        } else if !port_ref.enqueue(now, pkt, &mut self.pkts.hot, 0)
            && !self.try_cut(node, port, pkt)
        {
            self.net.port_mut(node, port).stats.dropped += 1;
            self.on_drop(node, pkt, in_port);
            return;
        }
        let p = self.net.port(node, port);
        if p.has_codel() {
            self.pkts.get_mut(pkt).enq = now;
        }
        if p.mark_above != u64::MAX && kind == PktKind::Data {
            // DCTCP's marking: the arrival found more than K bytes queued.
            let before = p.bytes - self.pkts.hot(pkt).wire as u64;
            if before > p.mark_above {
                self.mark(node, port, pkt);
            }
        }
        self.kick(node, port);
    }

    /// The ECN marker chose `pkt`: set CE, or with Source Quench tell its source.
    fn mark(&mut self, node: u32, port: u32, pkt: u32) {
        self.net.port_mut(node, port).stats.marked += 1;
        self.counters.ecn_marks += 1;
        if self.overflow == Overflow::SourceQuench {
            self.send_quench(node, pkt);
        } else if self.pkts.get(pkt).ect {
            self.pkts.get_mut(pkt).ce = true;
        }
    }

    /// At a CP switch, offers a packet that did not fit to [`Self::cut_payload`].
    #[inline]
    fn try_cut(&mut self, node: u32, port: u32, pkt: u32) -> bool {
        self.overflow == Overflow::CutPayload
            && node >= self.net.hosts
            && self.cut_payload(node, port, pkt)
    }

    /// CP §4.2: a packet that did not fit. A CP-enabled data packet loses its payload and
    /// queues in the extra allowance; payload-cut packets and PACKs may use the allowance
    /// as they are. True when the packet (cut or not) was queued.
    fn cut_payload(&mut self, node: u32, port: u32, pkt: u32) -> bool {
        let p = self.pkts.get(pkt);
        let cut = p.kind == PktKind::Data && p.cpa && !p.ppl;
        if !(cut || p.ppl) {
            return false; // a normal packet: dropped as on a plain switch
        }
        if cut {
            let mut c = p.clone();
            c.ppl = true;
            c.wire = wire_bytes(CUT_IP_BYTES, self.framing);
            self.counters.cut_packets += 1;
            self.counters.cut_bytes += c.wire as u64;
            self.net.port_mut(node, port).cut += 1;
            self.pkts.replace(pkt, c);
        }
        let now = self.now;
        let port_ref = self.net.port_mut(node, port);
        if port_ref.enqueue(now, pkt, &mut self.pkts.hot, self.cut_extra) {
            return true;
        }
        if cut {
            port_ref.cut_dropped += 1;
            self.counters.cut_dropped += 1;
        }
        false
    }

    /// Something was queued at a port: start it now if the link is free.
    #[inline(always)]
    fn kick(&mut self, node: u32, port: u32) {
        let now = self.now;
        let p = self.net.port_mut(node, port);
        if p.wake_at != NO_WAKE {
            // A wake-up beyond the end of the current transmission only waits for the
            // notification cap (strict FastLane): data need not wait for it. If the link
            // is idle, use it now; if busy, wake when it frees (the later wake-up is
            // superseded and ignored).
            if p.wake_at > now && p.wake_at > p.busy_until {
                if p.busy_until <= now {
                    p.wake_at = NO_WAKE;
                    self.transmit_next(node, port);
                } else {
                    let t = p.busy_until;
                    arm_wake(&mut self.heap, p, node, port, t);
                }
            }
            return;
        }
        if p.busy_until <= now {
            self.transmit_next(node, port);
        } else {
            let t = p.busy_until;
            arm_wake(&mut self.heap, p, node, port, t);
        }
    }

    /// A packet that a port could not keep (or evicted): count it, and at a FastLane
    /// switch turn it into a notification for its source.
    fn on_drop(&mut self, node: u32, pkt: u32, in_port: u16) {
        self.counters.drops += 1;
        let p = self.pkts.get(pkt);
        let kind = p.kind;
        if let Some(f) = self.flows[p.flow_slot as usize].as_mut() {
            if f.id == p.flow_id {
                if matches!(kind, PktKind::Data | PktKind::Probe) {
                    f.drops += 1;
                }
                if node < self.net.hosts && matches!(kind, PktKind::Data | PktKind::Probe) {
                    f.in_nic -= 1;
                    if self.nic_drop_local && kind == PktKind::Data {
                        // `host.nic_drop = "local"`: send_segments hands the refused
                        // segments back to the sender.
                        self.nic_refused = true;
                    } else {
                        self.nic_wake.push(p.flow_slot);
                    }
                }
            }
        }
        let notify = self.overflow == Overflow::FastLane
            && node >= self.net.hosts
            && matches!(kind, PktKind::Data | PktKind::Ack | PktKind::Probe);
        if !notify {
            self.pkts.free(pkt);
            return;
        }
        // FastLane §3.2: flip the addresses, mark it, cut it after the transport header
        // (keeping the original length and sequence), top priority, out the input port.
        let mut n = p.clone();
        n.kind = PktKind::Notify;
        n.orig = kind;
        n.src = p.dst;
        n.dst = p.src;
        n.class = 0;
        n.wire = NOTIFICATION_FRAME;
        n.hash = p.hash.rotate_left(29);
        self.pkts.replace(pkt, n);
        self.counters.notifications_generated += 1;
        let port = self.net.port_mut(node, in_port as u32);
        let nq = port
            .notif
            .as_mut()
            .expect("FastLane ports have a notification queue");
        nq.stats.generated += 1;
        if !nq.admit(pkt, NOTIFICATION_FRAME) {
            self.counters.notifications_dropped += 1;
            self.pkts.free(pkt);
            return;
        }
        self.kick(node, in_port as u32);
    }

    fn transmit_next(&mut self, node: u32, port: u32) {
        let now = self.now;
        let p = self.net.port_mut(node, port);
        let data_waiting = !p.is_empty();
        let mut mark = false;
        let pkt = if p.has_notif() && p.notif.as_ref().is_some_and(|n| n.ready(now, data_waiting)) {
            let ser = p.serialization(NOTIFICATION_FRAME as u64);
            p.notif.as_mut().unwrap().pop(now, ser).unwrap()
        } else if let Some(pkt) = p.dequeue(now, &self.pkts.hot) {
            if p.has_codel() {
                let cold = self.pkts.get(pkt);
                if cold.kind == PktKind::Data {
                    // RFC 8289 `dodequeue` (and Linux) test what stays behind.
                    let backlog = p.bytes;
                    let c = p.codel.as_mut().expect("a CoDel port");
                    mark = c.on_dequeue(now, now - cold.enq, backlog);
                }
            }
            pkt
        } else {
            // Only notifications wait, held back by a strict cap: wake when it allows.
            if let Some(n) = p.notif.as_ref().filter(|n| !n.is_empty()) {
                let t = n.next_ok().max(now);
                arm_wake(&mut self.heap, p, node, port, t);
            }
            return;
        };
        self.send(node, port, pkt, mark);
    }

    /// `pkt` starts on `node`'s `port` now: schedule its arrival at the peer and the
    /// port's next wake-up.
    #[inline(always)]
    fn send(&mut self, node: u32, port: u32, pkt: u32, mark: bool) {
        let pi = self.net.port_index(node, port);
        let h = *self.pkts.hot(pkt);
        self.send_at(node, port, pi, pkt, h, mark);
    }

    /// [`Self::send`] given the port's [`Network::port_index`] and the packet's hot part,
    /// which the inlined callers have at hand: neither is looked up a second time.
    #[inline(always)]
    fn send_at(&mut self, node: u32, port: u32, pi: usize, pkt: u32, h: Hot, mark: bool) {
        let now = self.now;
        let (wire, dst, hash) = (h.wire, h.dst, h.hash);
        if node < self.net.hosts {
            if matches!(h.kind, PktKind::Data | PktKind::Probe) {
                self.left_nic(node, pkt);
            } else if self
                .nic_blocked
                .get(node as usize)
                .is_some_and(|b| !b.is_empty())
            {
                // Any packet leaving makes room: a flow whose whole burst was refused
                // while only ACKs were queued has nothing else to wake it.
                self.wake_nic_blocked(node);
            }
        }
        let p = self.net.port_at_mut(pi);
        let done = now + p.serialization(wire as u64);
        p.busy_until = done;
        let (peer, peer_port, delay) = (p.peer, p.peer_port, p.hop_delay());
        if !p.is_idle() {
            // Data, or notifications allowed on an idle link, can follow at once; only a
            // strict cap makes lone notifications wait longer.
            let notif = if p.has_notif() {
                p.notif.as_ref()
            } else {
                None
            };
            let at = match notif {
                Some(n) if !data_waiting_after(p) && n.strict() => done.max(n.next_ok()),
                _ => done,
            };
            arm_wake(&mut self.heap, p, node, port, at);
        }
        self.counters.packet_hops += 1;
        let egress = if peer >= self.net.hosts {
            self.fixed_egress(peer, dst, hash)
        } else {
            ROUTE_ON_ARRIVAL
        };
        self.push(
            done + delay,
            Ev::Arrive {
                node: peer,
                pkt,
                port: peer_port,
                egress,
            },
        );
        if mark {
            self.mark(node, port, pkt);
        }
    }

    /// A data segment or probe left its source's NIC queue: its flow may queue another.
    #[inline(never)]
    fn left_nic(&mut self, host: u32, pkt: u32) {
        let p = self.pkts.get(pkt);
        let slot = p.flow_slot;
        if let Some(f) = self.flows[slot as usize].as_mut() {
            if f.id == p.flow_id {
                f.in_nic -= 1;
                self.nic_wake.push(slot);
            }
        }
        self.wake_nic_blocked(host);
    }

    /// `host.nic_drop = "local"`: the flows whose segments the NIC refused may try again.
    fn wake_nic_blocked(&mut self, host: u32) {
        if let Some(blocked) = self.nic_blocked.get_mut(host as usize) {
            for s in blocked.drain(..) {
                if let Some(f) = self.flows[s as usize].as_mut() {
                    f.nic_blocked = false;
                }
                self.nic_wake.push(s);
            }
        }
    }

    /// Source Quench (FastLane §2.2.1): tell the source of `pkt` from switch `node`, at
    /// the data's own priority, through the ordinary queues, with no cap.
    fn send_quench(&mut self, node: u32, pkt: u32) {
        let p = self.pkts.get(pkt);
        let wire = wire_bytes(QUENCH_IP_BYTES, self.framing);
        let mut q = Packet::new(
            PktKind::Quench,
            p.flow_slot,
            p.flow_id,
            p.dst,
            p.src,
            p.class,
            wire,
            p.hash.rotate_left(29),
        );
        q.orig = p.kind;
        q.seq = p.seq;
        let dst = q.dst;
        let q = self.pkts.alloc(q);
        self.counters.quenches_sent += 1;
        let hops = self.net.next_hops(node, dst);
        let port = hops[(mix64(self.pkts.hot(q).hash as u64) % hops.len() as u64) as usize];
        self.enqueue(node, port as u32, q, u16::MAX);
    }

    /// The destination NIC answers a probe with a header-only ProbeAck.
    fn echo_probe(&mut self, pkt: u32) {
        let p = self.pkts.get_mut(pkt);
        let (src, dst) = (p.src, p.dst);
        p.kind = PktKind::ProbeAck;
        p.src = dst;
        p.dst = src;
        p.prio = 0;
        p.class = self.ack_class;
        p.hash = p.hash.rotate_left(17);
        let p = p.clone();
        self.pkts.replace(pkt, p);
        self.enqueue(dst, 0, pkt, u16::MAX);
    }

    /// A packet reached its destination host's transport.
    fn deliver(&mut self, pkt: u32) {
        // Only the fields read below, not the whole packet: its slot may be reused by
        // the ACK this sends, so they are taken before the packet is freed.
        let p = Delivered::of(self.pkts.get(pkt));
        self.pkts.free(pkt);
        let slot = p.flow_slot;
        let live = matches!(&self.flows[slot as usize], Some(f) if f.id == p.flow_id);
        if !live {
            self.counters.stale_packets += 1;
            return;
        }
        let now = self.now;
        match p.kind {
            PktKind::Data if p.ppl => {
                // CP §4.3: a payload-cut packet is answered at once by a PACK (after the
                // ACK of any segment held for merging, which came before it).
                if self.gro {
                    self.gro_flush(slot);
                }
                let f = self.flows[slot as usize].as_mut().unwrap();
                f.conn.handle(
                    now,
                    Input::Cut {
                        seq: p.seq,
                        len: p.len,
                    },
                );
                self.send_ack(slot);
                self.arm_timer(slot);
            }
            PktKind::Data => {
                let rx = if self.gro {
                    self.gro_receive(slot, p.seq, p.len, p.ts, p.retx, p.ce)
                } else {
                    self.ack_held_if_ce_flips(slot, p.ce);
                    let f = self.flows[slot as usize].as_mut().unwrap();
                    let rx = f.conn.handle(
                        now,
                        Input::Data {
                            seq: p.seq,
                            len: p.len,
                            ts: p.ts,
                            retx: p.retx,
                            ce: p.ce,
                        },
                    );
                    if rx.ack_now {
                        self.send_ack(slot);
                    }
                    rx
                };
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
                let ack = p.ack.expect("taken for every ACK");
                let mut segs = std::mem::take(&mut self.segs);
                let f = self.flows[slot as usize].as_mut().unwrap();
                let budget = self.nic_limit.saturating_sub(f.in_nic) as usize;
                f.conn.handle(now, Input::Ack(&ack));
                f.conn.poll_transmit(now, budget, &mut segs);
                let done = f.conn.finished();
                self.send_segments(slot, &mut segs);
                self.segs = segs;
                if done {
                    self.record_flow(slot);
                    self.check_done();
                } else {
                    self.arm_timer(slot);
                }
            }
            PktKind::Notify if p.orig == PktKind::Ack => {
                // FastLane §3.4.1: a lost control packet is resent at once.
                self.counters.notifications_delivered += 1;
                let f = self.flows[slot as usize].as_mut().unwrap();
                f.notified += 1;
                self.send_ack(slot);
            }
            PktKind::Notify | PktKind::ProbeAck | PktKind::Quench => {
                let mut segs = std::mem::take(&mut self.segs);
                let f = self.flows[slot as usize].as_mut().unwrap();
                let budget = self.nic_limit.saturating_sub(f.in_nic) as usize;
                let input = match p.kind {
                    PktKind::Notify => {
                        self.counters.notifications_delivered += 1;
                        f.notified += 1;
                        if p.orig == PktKind::Probe {
                            Input::ProbeNotified
                        } else {
                            Input::Notified {
                                seq: p.seq,
                                epoch: p.epoch,
                            }
                        }
                    }
                    PktKind::ProbeAck => Input::ProbeEcho,
                    _ => {
                        self.counters.quenches_delivered += 1;
                        Input::Quench
                    }
                };
                f.conn.handle(now, input);
                f.conn.poll_transmit(now, budget, &mut segs);
                self.send_segments(slot, &mut segs);
                self.segs = segs;
                self.arm_timer(slot);
            }
            PktKind::Probe => unreachable!("probes are echoed by the NIC"),
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
        for n in 0..self.net.node_count() {
            for (i, p) in self.net.node_ports(n as u32).iter().enumerate() {
                r.node.push(n as u32);
                r.port.push(i as u32);
                r.peer.push(p.peer);
                r.is_switch.push(n as u32 >= self.net.hosts);
                r.capacity.push(p.capacity);
                r.enqueued.push(p.enqueued);
                r.dropped.push(p.stats.dropped);
                r.max_bytes.push(p.max_bytes);
                r.mean_bytes.push(p.mean_bytes(self.now));
                r.rate_bps.push(p.rate);
                r.marked.push(p.stats.marked);
                let ns = p
                    .notif
                    .as_ref()
                    .map(|n| n.stats.clone())
                    .unwrap_or_default();
                r.notif_generated.push(ns.generated);
                r.notif_dropped.push(ns.dropped);
                r.notif_sent.push(ns.sent);
                r.notif_sent_bytes.push(ns.sent_bytes);
                r.notif_sent_idle.push(ns.sent_idle);
                r.notif_max_bytes.push(ns.max_bytes);
                r.notif_capacity
                    .push(p.notif.as_ref().map_or(0, |n| n.capacity()));
                r.cut.push(p.cut);
                r.cut_dropped.push(p.cut_dropped);
            }
        }
        r
    }

    pub fn hosts(&self) -> u32 {
        self.net.hosts
    }

    /// The sender of a live flow, for tests.
    pub fn sender_of(&self, flow_id: u64) -> Option<&TcpSender<Cc>> {
        self.flows
            .iter()
            .flatten()
            .find(|f| f.id == flow_id)
            .map(|f| f.conn.tcp().sender())
    }

    pub fn live_packets(&self) -> usize {
        self.pkts.live()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Work conservation with strict FastLane caps (§5.1.3): data never waits at a port
    /// beyond the end of the current transmission for a wake-up set for a capped
    /// notification. Checked after every event of an incast whose notification buffer
    /// holds one notification, so notifications often wait for the cap while data and
    /// ACKs come and go. Data that arrived while a packet was on the wire and only a
    /// notification waited used to sit until the cap allowed the notification.
    #[test]
    fn data_never_waits_for_a_strict_notification_cap() {
        // Flows both ways over a dumbbell: a host's switch port carries the data coming
        // to it and the notifications for the data it sent.
        let text = r#"
[topology]
kind = "dumbbell"
hosts = 8
link_rate = "10Gbps"
link_delay = "1us"
[switch]
buffer = "16KB"
overflow = "fastlane"
fastlane_strict = true
fastlane_buffer = "64B"
[transport]
rto_min = "1ms"
[workload]
kind = "trace"
flows = [
  { src = 0, dst = 4, size = "2MB" }, { src = 1, dst = 4, size = "2MB" },
  { src = 4, dst = 0, size = "2MB" }, { src = 5, dst = 0, size = "2MB" },
  { src = 2, dst = 6, size = "2MB" }, { src = 6, dst = 2, size = "2MB" },
]
"#;
        let sc = Scenario::parse(text, &[], None).unwrap();
        let mut sim = Sim::new(&sc).unwrap();
        let mut checked = 0u64;
        while !sim.step(1) {
            let now = sim.now;
            for p in sim.net.all_ports() {
                if !p.is_empty() {
                    let free = p.busy_until.max(now);
                    assert!(
                        p.wake_at <= free,
                        "data waits at t={now} for a wake-up at {} (link free at {free})",
                        p.wake_at
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 1000);
        assert!(sim.counters.notifications_dropped > 0, "the cap binds");
        assert_eq!(sim.counters.flows_unfinished, 0);
    }

    /// FastLane §3.2: a victim becomes one notification for its source, with its
    /// sequence number and original length, at top priority, queued on the port the
    /// victim arrived by.
    #[test]
    fn a_dropped_packet_becomes_a_notification_out_its_input_port() {
        let text = r#"
[topology]
kind = "star"
hosts = 3
[switch]
overflow = "fastlane"
[workload]
kind = "trace"
flows = [{ src = 1, dst = 0, size = "100KB" }]
"#;
        let sc = Scenario::parse(text, &[], None).unwrap();
        let mut sim = Sim::new(&sc).unwrap();
        sim.step(1); // the flow starts: slot 0 holds it
        let f = sim.flows[0].as_ref().unwrap();
        let (id, hash) = (f.id, f.hash);
        let mut p = Packet::new(PktKind::Data, 0, id, 1, 0, 5, 1538, hash);
        p.seq = 2 * 1460;
        p.len = 1460;
        p.epoch = 3;
        let pkt = sim.pkts.alloc(p);
        let switch = sim.net.hosts;
        let in_port = sim
            .net
            .node_ports(switch)
            .iter()
            .position(|p| p.peer == 1)
            .unwrap();
        let generated = sim.counters.notifications_generated;
        sim.on_drop(switch, pkt, in_port as u16);
        assert_eq!(sim.counters.notifications_generated, generated + 1);
        let port = sim.net.port(switch, in_port as u32);
        let nq = port.notif.as_ref().unwrap();
        // Exactly one notification, and it is on its way out of the input port
        // (the idle link took it at once) or first in its queue.
        assert_eq!(nq.stats.generated, 1);
        assert_eq!(nq.stats.enqueued, 1);
        assert!(nq.front().is_none_or(|q| q == pkt));
        let n = sim.pkts.get(pkt);
        assert_eq!(n.kind, PktKind::Notify);
        assert_eq!(n.orig, PktKind::Data);
        assert_eq!((n.src, n.dst), (0, 1), "addressed to the source");
        assert_eq!((n.seq, n.len, n.epoch), (2 * 1460, 1460, 3));
        assert_eq!(n.class, 0, "top priority");
        assert_eq!(n.wire, NOTIFICATION_FRAME);
        assert_eq!(sim.pkts.hot(pkt).wire as u32, NOTIFICATION_FRAME);
        // The other ports saw nothing.
        for (i, p) in sim.net.node_ports(switch).iter().enumerate() {
            if i != in_port {
                assert_eq!(p.notif.as_ref().unwrap().stats.enqueued, 0);
            }
        }
    }

    /// CP §4.2: a CP-enabled packet that does not fit is cut to its headers, keeps its
    /// sequence number and original length, is marked payload-cut, and queues in the
    /// extra allowance; a normal packet is dropped; the allowance is never exceeded.
    #[test]
    fn a_cp_enabled_packet_that_does_not_fit_is_cut_into_the_allowance() {
        let text = r#"
[topology]
kind = "star"
hosts = 3
[switch]
buffer = "3KB"
overflow = "cut_payload"
cut_payload_extra = "200B"
[workload]
kind = "trace"
flows = [{ src = 1, dst = 0, size = "100KB" }]
"#;
        let sc = Scenario::parse(text, &[], None).unwrap();
        let mut sim = Sim::new(&sc).unwrap();
        sim.step(1);
        let f = sim.flows[0].as_ref().unwrap();
        let (id, hash) = (f.id, f.hash);
        let switch = sim.net.hosts;
        let out = sim
            .net
            .node_ports(switch)
            .iter()
            .position(|p| p.peer == 0)
            .unwrap() as u32;
        let in_port = sim
            .net
            .node_ports(switch)
            .iter()
            .position(|p| p.peer == 1)
            .unwrap() as u16;
        let data = |sim: &mut Sim, seq: u64, cpa: bool| {
            let mut p = Packet::new(PktKind::Data, 0, id, 1, 0, 0, 1538, hash);
            p.seq = seq;
            p.len = 1460;
            p.cpa = cpa;
            sim.pkts.alloc(p)
        };
        // The first leaves at once (idle link); the next ones fill the 3 KB.
        for k in 0..3 {
            let pkt = data(&mut sim, k * 1460, true);
            sim.enqueue(switch, out, pkt, in_port);
        }
        let cuts = sim.counters.cut_packets;
        let cut_wire = wire_bytes(CUT_IP_BYTES, sim.framing);
        assert_eq!(cut_wire, 90, "66 B of CP §4.6 plus FCS, preamble and gap");
        let pkt = data(&mut sim, 3 * 1460, true);
        sim.enqueue(switch, out, pkt, in_port);
        let c = sim.pkts.get(pkt);
        assert!(c.ppl && c.cpa, "marked payload-cut");
        assert_eq!((c.kind, c.seq, c.len), (PktKind::Data, 3 * 1460, 1460));
        assert_eq!(c.wire, cut_wire);
        assert_eq!(sim.counters.cut_packets, cuts + 1);
        let port = sim.net.port(switch, out);
        assert_eq!(port.cut, cuts + 1);
        // More cut packets fill the 200 B allowance, then are dropped; normal packets
        // are dropped outright.
        for k in 4..40 {
            let pkt = data(&mut sim, k * 1460, true);
            sim.enqueue(switch, out, pkt, in_port);
        }
        let normal = data(&mut sim, 40 * 1460, false);
        let drops = sim.counters.drops;
        sim.enqueue(switch, out, normal, in_port);
        assert_eq!(sim.counters.drops, drops + 1);
        let port = sim.net.port(switch, out);
        assert!(port.max_bytes <= port.capacity + 200);
        assert!(port.max_bytes > port.capacity, "the allowance was used");
        assert_eq!(port.cut, sim.counters.cut_packets);
        assert!(port.cut_dropped > 0 && port.cut_dropped < port.cut);
    }

    /// The egress a packet carries from the hop before (fixed routes) is the one the
    /// switch would choose when the packet arrives, for every switch, destination and
    /// flow hash; spraying and weighted forwarding keep choosing on arrival.
    #[test]
    fn an_egress_chosen_at_send_is_the_one_chosen_on_arrival() {
        let text = r#"
[topology]
kind = "fat_tree"
k = 8
[workload]
kind = "trace"
flows = [{ src = 0, dst = 1, size = "1KB" }]
"#;
        for fwd in ["ecmp", "spray"] {
            let set = [format!("switch.forwarding={fwd}")];
            let sc = Scenario::parse(text, &set, None).unwrap();
            let mut sim = Sim::new(&sc).unwrap();
            let mut rng = Rng::new(7, 0);
            let hosts = sim.net.hosts;
            let mut spread = std::collections::HashSet::new();
            for switch in hosts..sim.net.node_count() as u32 {
                for dst in 0..hosts {
                    let hash = rng.below(1 << 32) as u32;
                    let at_send = sim.fixed_egress(switch, dst, hash);
                    if fwd == "spray" {
                        assert_eq!(at_send, ROUTE_ON_ARRIVAL);
                        continue;
                    }
                    assert_ne!(at_send, ROUTE_ON_ARRIVAL);
                    assert_eq!(at_send, sim.route_on_arrival(switch, dst, hash));
                    spread.insert((switch, at_send));
                }
            }
            if fwd == "ecmp" {
                // Edge and aggregation switches use all their uplinks.
                assert!(spread.len() > 3 * (sim.net.node_count() - hosts as usize));
            }
        }
    }
}
