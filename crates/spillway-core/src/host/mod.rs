//! Hosts: one component for every end host of the fabric. A host owns its NIC
//! ([`nic`]), its receive path ([`rx`]: timing noise, interrupt moderation, receive
//! offload, the server model), the connections of the flows it runs (both ends of each
//! flow in one slot of the flow table, [`flows`]), the agents that answer protocols of
//! no flow ([`agent`]), the hook for a host queue discipline ([`qdisc`]), the
//! applications that start flows ([`apps`]), and the ping workload's source ([`ping`]).
//! Sending is in [`transmit`], receiving and the demultiplexer in [`receive`].

pub mod agent;
pub mod apps;
pub mod config;
pub mod fastpass;
mod flows;
pub mod nic;
pub mod ping;
pub mod qdisc;
pub mod receive;
pub mod rx;
pub mod share;
pub mod transmit;

use crate::engine::context::Ctx;
use crate::engine::context::StopReason;
use crate::engine::mailbox::{Done, Note};
use crate::output::flow_throughput::FlowThroughputRecords;
use crate::output::flows::FlowRecords;
use crate::output::pings::PingRecords;
use crate::packet::wire::wire_bytes;
use crate::packet::PktKind;
use crate::switch::port::PortReport;
use crate::transport::connection::Segment;
use crate::transport::{Transport, TransportConfig};
use crate::units::Ps;
use crate::workload::{QueryRecord, Traffic};
use agent::Agent;
use apps::Apps;
use fastpass::Fastpass;
pub use flows::ReceiverHalf;
use flows::{Ends, FlowTable};
use share::Share;

use crate::packet::int::IntStack;
pub use config::HostConfig;
use nic::Nic;
use ping::{PingConfig, Pinger};
use qdisc::Qdisc;
use rx::RxPath;

pub struct Hosts {
    count: u32,
    /// The NICs of hosts `nic_base..`: every host's in a whole run, this process's (a
    /// contiguous range: share.rs) in a parallel one.
    nics: Vec<Nic>,
    nic_base: u32,
    rx: RxPath,
    flows: FlowTable,
    apps: Apps,
    agents: Vec<Agent>,
    qdisc: Qdisc,
    transport: TransportConfig,
    framing: u32,
    seed: u64,
    /// `host.nic_flow_limit` (TCP Small Queues), u32::MAX for none.
    nic_limit: u32,
    nic_drop_local: bool,
    /// `switch.priorities`: stamp flows' own classes on their packets.
    priorities: bool,
    /// Per host (with `host.nic_drop = "local"`): flows a full NIC refused, woken when
    /// it next starts a packet.
    nic_blocked: Vec<Vec<u32>>,
    /// Set by a local NIC drop, read by `send_segments`.
    nic_refused: bool,
    /// Flows whose segment just left their NIC: offered another slot after this event.
    nic_wake: Vec<u32>,
    /// Scratch: segments a connection hands over, packets a NIC dropped.
    segs: Vec<Segment>,
    dropped: Vec<u32>,
    /// `[ping]`: the ping workload's source.
    pinger: Option<Pinger>,
    /// The flows run RoCE (their ACKs go to `Input::RoceAck`); with HPCC, whose data and
    /// ACKs carry telemetry.
    roce: bool,
    telemetry: bool,
    /// Scratch: the telemetry of the packet being delivered, for its ACK or its sender.
    int_rx: IntStack,
    /// In a parallel run, this process's share of the hosts (None: all are ours).
    share: Option<Box<Share>>,
}

impl Hosts {
    /// The hosts of `cx`'s fabric, their flows running `transport`, the workload's
    /// flows from `traffic`.
    pub fn new(
        cfg: &HostConfig,
        transport: &TransportConfig,
        traffic: Traffic,
        cx: &Ctx,
        framing: u32,
        seed: u64,
    ) -> Hosts {
        let count = cx.fabric.hosts();
        Hosts {
            count,
            nics: (0..count)
                .map(|h| Nic::new(&cx.fabric.ports(h)[0], cfg.nic_buffer, cfg.nic_pfabric))
                .collect(),
            nic_base: 0,
            rx: RxPath::new(cfg, count, seed),
            flows: FlowTable::default(),
            apps: Apps::new(traffic),
            agents: vec![Agent::ProbeResponder {
                class: transport.ack_class(),
            }],
            qdisc: match &cfg.fastpass {
                Some(fp) => {
                    let frame = wire_bytes(transport.mss() + transport.header_bytes(), framing);
                    Qdisc::Fastpass(Box::new(Fastpass::new(fp, cx, frame, framing, seed)))
                }
                None => Qdisc::Fifo,
            },
            transport: transport.clone(),
            framing,
            seed,
            nic_limit: cfg
                .nic_flow_limit
                .map_or(u32::MAX, |v| v.min(u32::MAX as u64) as u32)
                .min(transport.nic_segments().unwrap_or(u32::MAX)),
            nic_drop_local: cfg.nic_drop_local,
            priorities: cfg.priorities,
            nic_blocked: if cfg.nic_drop_local {
                vec![Vec::new(); count as usize]
            } else {
                Vec::new()
            },
            nic_refused: false,
            nic_wake: Vec::new(),
            segs: Vec::new(),
            dropped: Vec::new(),
            pinger: None,
            roce: transport.roce().is_some(),
            telemetry: transport.roce().is_some_and(|r| r.int_bytes() > 0),
            int_rx: IntStack::default(),
            share: None,
        }
    }

    /// In a parallel run: these hosts are process `share.lp`'s share; the flows kept are
    /// those with an end among them.
    pub fn take_share(&mut self, share: Share) {
        self.apps.set_lag(share.part.lookahead);
        // Only this process's NICs are kept (memory per process): its hosts are a pod's
        // or racks', numbered contiguously.
        let mine: Vec<u32> = (0..self.count).filter(|&h| share.owns(h)).collect();
        if let (Some(&lo), Some(&hi)) = (mine.first(), mine.last()) {
            if (hi - lo + 1) as usize == mine.len() {
                self.nics.truncate(hi as usize + 1);
                self.nics.drain(..lo as usize);
                self.nics.shrink_to_fit();
                self.nic_base = lo;
            }
        }
        self.share = Some(Box::new(share));
        self.flows.keyed = true;
    }

    /// A parallel run's window `w` begins.
    pub fn set_window(&mut self, w: u64) {
        self.flows.window = w;
    }

    /// The run starts: the workload's first arrivals are scheduled.
    pub fn start(&mut self, cx: &mut Ctx) {
        self.apps.schedule(cx);
        if let Qdisc::Fastpass(fp) = &mut self.qdisc {
            fp.start(cx);
            self.flush_fastpass(cx);
        }
    }

    /// `[ping]`: `cfg.src` will ping `cfg.dst` (each `Ping` event sends a request:
    /// [`Hosts::send_ping`]), and every host answers pings.
    pub fn start_pings(&mut self, cfg: &PingConfig) {
        let class = self.transport.data_class();
        self.pinger = Some(Pinger::new(*cfg, class, self.framing, self.seed));
        self.agents.push(Agent::PingResponder { class });
    }

    /// `[ping]` is on: the run writes pings.parquet.
    pub fn has_pings(&self) -> bool {
        self.pinger.is_some()
    }

    /// Ping rows that are final (with `all`, every row: the run has stopped).
    pub fn take_pings(&mut self, all: bool) -> PingRecords {
        self.pinger
            .as_mut()
            .map(|p| p.take(all))
            .unwrap_or_default()
    }

    /// Keep every flow's goodput over time (`run.flow_throughput_interval`).
    pub fn track_flow_throughput(&mut self) {
        self.flows.track_throughput();
    }

    pub fn tracks_flow_throughput(&self) -> bool {
        self.flows.tracks_throughput()
    }

    /// An interval of `run.flow_throughput_interval` ends at `now`.
    pub fn sample_flow_throughput(&mut self, now: Ps) {
        self.flows.sample_throughput(now);
    }

    /// Goodput rows written since the last call.
    pub fn take_flow_throughput(&mut self) -> FlowThroughputRecords {
        self.flows.take_throughput()
    }

    /// Ends the run if every flow has finished and no more will come.
    fn check_done(&mut self, cx: &mut Ctx) {
        // A parallel run's processes end together (engine/parallel.rs decides).
        if self.flows.active() == 0 && self.apps.exhausted() && self.share.is_none() {
            cx.stop = StopReason::AllFlowsDone;
        }
    }

    /// The `Workload` event at `time`: its flows start.
    pub fn on_workload(&mut self, cx: &mut Ctx, time: Ps) {
        if let Some(mut nf) = self.apps.arrivals(time) {
            for f in nf.drain(..) {
                self.start_flow(cx, f);
            }
            self.apps.recycle(nf);
            self.apps.schedule(cx);
            self.check_done(cx);
        }
    }

    /// After each event: the flows whose segments left their NICs may send more.
    #[inline(always)]
    pub fn poll_woken(&mut self, cx: &mut Ctx) {
        while let Some(slot) = self.nic_wake.pop() {
            self.poll_flow(cx, slot);
        }
    }

    /// Writes the record of the flow in `slot`, once the drops reported in the network
    /// have been counted against their flows (they are counted only now: a flow's count
    /// is read only for its record, and a report names the flow's id, so one of a flow
    /// since gone from its slot counts for nothing).
    fn record(&mut self, cx: &mut Ctx, slot: u32) {
        self.count_drops(cx);
        if let Some(sh) = &mut self.share {
            let f = self.flows.get(slot);
            sh.remove(f.id);
            if f.ends == Ends::Sender {
                // The receiver's end, in another process, writes its half and goes.
                let (id, dst) = (f.id, f.dst);
                cx.note(dst, Note::Closed { id });
            }
        }
        // Called as the last acknowledgement comes in: the sender's end is done now.
        self.flows
            .record(cx, slot, self.transport.data_class(), true);
    }

    /// The drops reported in the network are counted against their flows (in a
    /// parallel run, a flow whose sender is another process's hears of it by a note).
    pub fn count_drops(&mut self, cx: &mut Ctx) {
        if cx.flow_drops().is_empty() {
            return;
        }
        let mut drops = std::mem::take(cx.flow_drops());
        for (s, id, src) in drops.drain(..) {
            match &self.share {
                Some(sh) if !sh.owns(src) => cx.note(src, Note::Dropped { id }),
                _ => {
                    if let Some(f) = self.flows.live_mut(s, id) {
                        f.drops += 1;
                    }
                }
            }
        }
        *cx.flow_drops() = drops;
    }

    /// A note from another process about a flow with an end here.
    pub fn on_note(&mut self, cx: &mut Ctx, note: Note) {
        let Some(sh) = &mut self.share else {
            unreachable!("notes only in a parallel run")
        };
        match note {
            Note::Closed { id } => {
                if let Some(slot) = sh.remove(id) {
                    self.flows.retire_receiver(cx, slot);
                }
            }
            Note::Dropped { id } => {
                if let Some(slot) = sh.find(id) {
                    if let Some(f) = self.flows.live_mut(slot, id) {
                        f.drops += 1;
                    }
                }
            }
        }
    }

    /// A parallel run's window has ended: this process's completions go to every other
    /// process, and are heard here too.
    pub fn post_dones(&mut self, cx: &mut Ctx) {
        let Some(sh) = &mut self.share else { return };
        if sh.mine.is_empty() {
            return;
        }
        let out = cx.outbox.as_mut().expect("a process of a parallel run");
        for (lp, post) in out.to.iter_mut().enumerate() {
            if lp as u32 != sh.lp {
                post.dones.extend_from_slice(&sh.mine);
            }
        }
        sh.heard.append(&mut sh.mine);
    }

    /// Another process's completions, heard.
    pub fn hear_dones(&mut self, dones: &mut Vec<Done>) {
        if let Some(sh) = &mut self.share {
            sh.heard.append(dones);
        }
    }

    /// Every process's post is in: the workload acts on the completions heard, in the
    /// canonical order (by time, then by process: the same in every process).
    pub fn settle_dones(&mut self, cx: &mut Ctx) {
        let Some(sh) = &mut self.share else { return };
        if sh.heard.is_empty() {
            return;
        }
        // Stable: a process's own completions at one time keep their order.
        sh.heard.sort_by_key(|d| (d.time, d.lp));
        self.apps.defer(cx, sh.heard.drain(..));
    }

    /// A packet has come from another process: its flow slot, that process's, becomes
    /// this one's when its flow has an end here.
    pub fn adopt(&self, p: &mut crate::packet::Packet) {
        let Some(sh) = &self.share else { return };
        let has_flow = !matches!(
            p.kind,
            PktKind::Pause | PktKind::Fcp | PktKind::Ping | PktKind::PingReply
        );
        if has_flow && sh.owns(p.dst) {
            p.flow_slot = sh.slot_of(p.flow_id);
        }
    }

    /// The receivers' halves written since the last call, and the window and kind of
    /// each record written (parallel runs).
    pub fn take_halves(&mut self) -> (Vec<ReceiverHalf>, Vec<(u64, bool)>) {
        (
            std::mem::take(&mut self.flows.halves),
            std::mem::take(&mut self.flows.keys),
        )
    }

    #[inline(always)]
    pub fn prefetch_nic(&self, host: u32) {
        if let Some(n) = self.nics.get(host.wrapping_sub(self.nic_base) as usize) {
            n.prefetch();
        }
    }

    /// The run has ended: every flow still there is recorded (finished ones awaiting
    /// their last ACK, and unfinished ones).
    pub fn end(&mut self, cx: &mut Ctx) {
        self.count_drops(cx);
        for slot in self.flows.slots() {
            if self.flows.get(slot).ends == Ends::Receiver {
                self.flows.retire_receiver(cx, slot);
            } else {
                self.flows
                    .record(cx, slot, self.transport.data_class(), false);
            }
        }
        cx.counters.queries_unfinished = self.apps.open_queries();
        if let Qdisc::Fastpass(fp) = &mut self.qdisc {
            fp.end(cx);
        }
        // A parallel run's processes send and receive apart: the run settles these
        // over all of them (engine/parallel.rs).
        if self.share.is_none() {
            // Data still on its way when the run stopped is not dead: counted apart.
            let (bytes, wire) = cx.pkts.in_network();
            let c = &mut cx.counters;
            c.in_flight_data_bytes = bytes;
            c.dead_bytes = c.host_sent_data_bytes - c.host_received_data_bytes - bytes;
            c.dead_wire_bytes =
                c.host_sent_data_wire_bytes - c.host_received_data_wire_bytes - wire;
        }
    }

    pub fn count(&self) -> u32 {
        self.count
    }

    /// Over the active flows, the bytes not yet cumulatively acknowledged.
    pub fn outstanding_bytes(&self) -> u64 {
        self.flows.outstanding()
    }

    /// Bytes of the live flows neither cumulatively nor selectively acknowledged.
    pub fn unsacked_bytes(&self) -> u64 {
        self.flows.unsacked()
    }

    pub fn active_flows(&self) -> u64 {
        self.flows.active()
    }

    /// No flow will ever start again.
    pub fn exhausted(&self) -> bool {
        self.apps.exhausted()
    }

    pub fn has_queries(&self) -> bool {
        self.apps.has_queries()
    }

    /// Flow records finished since the last call.
    pub fn take_flows(&mut self) -> FlowRecords {
        self.flows.take_records()
    }

    /// Query records finished since the last call.
    pub fn take_queries(&mut self) -> Vec<QueryRecord> {
        self.apps.take_queries()
    }

    /// Every NIC's report, host by host.
    pub fn reports(&self, now: Ps) -> Vec<PortReport> {
        self.nics.iter().map(|n| n.report(now)).collect()
    }

    /// Every NIC obeys pause frames (the switches send them: `switch.flow_control`).
    pub fn obey_pauses(&mut self) {
        for n in &mut self.nics {
            n.obey_pauses();
        }
    }

    /// The NICs of hosts for which `cut(host, peer)` holds send by the post (a parallel
    /// run's cut links; none in the shapes it cuts, where a host shares its switch's
    /// process).
    pub fn cut_links(&mut self, cut: impl Fn(u32, u32) -> bool) {
        for (i, n) in self.nics.iter_mut().enumerate() {
            if cut(self.nic_base + i as u32, n.port().peer()) {
                n.port_mut().set_remote();
            }
        }
    }

    /// The NICs, host by host, from host [`Hosts::nic_base`].
    pub fn nics(&self) -> &[Nic] {
        &self.nics
    }

    /// The host of the first NIC kept (0 but in a parallel run).
    pub fn nic_base(&self) -> u32 {
        self.nic_base
    }

    /// Host `host`'s NIC, which this process keeps.
    pub fn nic(&self, host: u32) -> &Nic {
        &self.nics[(host - self.nic_base) as usize]
    }

    #[inline(always)]
    pub(super) fn nic_mut(&mut self, host: u32) -> &mut Nic {
        &mut self.nics[(host - self.nic_base) as usize]
    }

    /// Fastpass's endpoints and arbiters, with `host.qdisc = "fastpass"`.
    pub fn fastpass(&self) -> Option<&Fastpass> {
        match &self.qdisc {
            Qdisc::Fastpass(fp) => Some(fp),
            Qdisc::Fifo => None,
        }
    }

    /// The Fastpass part's packets for the NICs (FCP messages, released timeslots) go.
    fn flush_fastpass(&mut self, cx: &mut Ctx) {
        let Qdisc::Fastpass(fp) = &mut self.qdisc else {
            return;
        };
        if fp.outbox.is_empty() {
            return;
        }
        let mut out = std::mem::take(&mut fp.outbox);
        for (host, pkt) in out.drain(..) {
            self.nic_offer(cx, host, pkt);
        }
        if let Qdisc::Fastpass(fp) = &mut self.qdisc {
            fp.outbox = out;
        }
    }

    /// Runs `f` on the Fastpass part (its events come only with it), then sends what it
    /// released.
    fn with_fastpass(&mut self, cx: &mut Ctx, f: impl FnOnce(&mut Fastpass, &mut Ctx)) {
        if let Qdisc::Fastpass(fp) = &mut self.qdisc {
            f(fp, cx);
            self.flush_fastpass(cx);
        }
    }

    /// Fastpass: a granted timeslot of `host`'s to `dst` begins.
    pub fn on_fastpass_slot(&mut self, cx: &mut Ctx, host: u32, dst: u32, path: u16, lo: u16) {
        self.with_fastpass(cx, |fp, cx| fp.on_slot(cx, host, dst, path, lo));
    }

    /// Fastpass: `host`'s FCP endpoint timer, queued for `at`.
    pub fn on_fastpass_endpoint(&mut self, cx: &mut Ctx, host: u32, at: Ps) {
        self.with_fastpass(cx, |fp, cx| fp.on_endpoint_timer(cx, host, at));
    }

    /// Fastpass: arbiter `rank`'s timer, queued for `at`.
    pub fn on_fastpass_arbiter(&mut self, cx: &mut Ctx, rank: u32, at: Ps) {
        self.with_fastpass(cx, |fp, cx| fp.on_arbiter_timer(cx, rank, at));
    }

    /// Fastpass: FCP message `msg` reaches `host` off the network.
    pub fn on_fastpass_deliver(&mut self, cx: &mut Ctx, host: u32, msg: u32) {
        self.with_fastpass(cx, |fp, cx| fp.arrived(cx, host, msg));
    }

    /// Fastpass: arbiter `rank` handles message `msg`.
    pub fn on_fastpass_handle(&mut self, cx: &mut Ctx, rank: u32, msg: u32) {
        self.with_fastpass(cx, |fp, cx| fp.on_arbiter_msg(cx, rank, msg));
    }

    /// The connection of a live flow, for tests.
    pub fn connection(&self, flow_id: u64) -> Option<&Transport> {
        self.flows.find(flow_id).map(|f| &f.conn)
    }
}
