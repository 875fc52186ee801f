//! The output-queued switch: a packet is forwarded as it arrives and waits at its
//! egress port, whose pipeline is queue discipline × ECN marking × overflow action.
//! What the pipeline's stages decide is theirs ([`super::discipline`],
//! [`super::marking`], [`super::overflow`]); this module runs them in order.

use super::config::{QueueKind, SharedBuffer, SwitchConfig};
use super::cut_through::{CutThrough, Decision};
use super::discipline::pfabric::{Entry, PFabricQueue};
use super::forwarding::{ecmp, Forwarding};
use super::marking::threshold::Threshold;
use super::overflow::cut_payload::{self, Cut};
use super::overflow::fastlane::{self, NotifQueue};
use super::overflow::source_quench;
use super::overflow::Overflow;
use super::port::{DropReason, Offer, Port, PortReport, Sent};
use crate::engine::context::Ctx;
use crate::engine::event::{Ev, ROUTE_ON_ARRIVAL};
use crate::fabric::Fabric;
use crate::packet::notification::NOTIFICATION_FRAME;
use crate::packet::PktKind;
use crate::rng::Rng;

pub struct OqSwitch {
    ports: Vec<Port>,
    overflow: Overflow,
    /// CP's extra allowance per port, beyond the buffer.
    cut_extra: u64,
    framing: u32,
    /// The switch's own stream: spraying's and weighted forwarding's draws.
    rng: Rng,
    /// pFabric victims of the current admission.
    evicted: Vec<Entry>,
    /// `switch.cut_through`: packets come first as their header (`on_header`).
    cut_through: Option<CutThrough>,
    /// `switch.buffer_sharing = "dynamic"`: the pool, and the bytes its ports hold.
    shared: Option<(SharedBuffer, u64)>,
}

impl OqSwitch {
    /// Switch `node` of `fabric`, its ports built from `cfg`.
    pub fn new(cfg: &SwitchConfig, fabric: &Fabric, node: u32, rng: Rng, framing: u32) -> Self {
        let ports = fabric
            .ports(node)
            .iter()
            .enumerate()
            .map(|(i, end)| {
                let mut p = Port::new(end, cfg.port_buffer(fabric, node, end));
                // pFabric end hosts serve their NIC by priority too (pFabric §4.1).
                p.install(
                    (cfg.queue == QueueKind::PFabric)
                        .then(|| Box::new(PFabricQueue::new(cfg.serve_order))),
                    (cfg.overflow == Overflow::FastLane)
                        .then(|| Box::new(NotifQueue::new(cfg.fastlane))),
                    cfg.port_dequeue_marker(end, i, &rng),
                    Threshold::new(cfg.port_ecn_threshold(end)),
                );
                if matches!(cfg.forwarding, Forwarding::Alb(_)) {
                    p.count_classes();
                }
                p
            })
            .collect();
        OqSwitch {
            ports,
            overflow: cfg.overflow,
            cut_extra: cfg.cut_extra,
            framing,
            rng,
            evicted: Vec::new(),
            cut_through: cfg
                .timing
                .cut_through
                .map(|h| CutThrough::new(fabric, node, h)),
            shared: cfg.shared.map(|b| (b, 0)),
        }
    }

    pub fn ports(&self) -> &[Port] {
        &self.ports
    }

    /// A switch of another process of a parallel run: no ports, never sent to.
    pub fn absent() -> Self {
        OqSwitch {
            ports: Vec::new(),
            overflow: Overflow::Drop,
            cut_extra: 0,
            framing: 0,
            rng: Rng::new(0, 0),
            evicted: Vec::new(),
            cut_through: None,
            shared: None,
        }
    }

    pub fn ports_mut(&mut self) -> &mut [Port] {
        &mut self.ports
    }

    /// A packet has arrived by `in_port`, its egress `egress` if chosen when it was sent.
    #[inline(always)]
    pub fn on_arrive(&mut self, cx: &mut Ctx, node: u32, pkt: u32, in_port: u16, egress: u16) {
        let port = self.egress(cx, node, pkt, egress);
        self.enqueue(cx, node, port as u32, pkt, in_port);
    }

    /// The egress of `pkt`: `egress` if chosen when it was sent, else the forwarding's
    /// choice now.
    #[inline(always)]
    fn egress(&mut self, cx: &mut Ctx, node: u32, pkt: u32, egress: u16) -> u16 {
        if egress != ROUTE_ON_ARRIVAL {
            egress
        } else {
            let h = *cx.pkts.hot(pkt);
            cx.forwarding.on_arrival(
                cx.fabric.routes(),
                node,
                h.dst,
                h.hash,
                &mut self.rng,
                |p| self.ports[p as usize].drain_bytes(h.class),
            )
        }
    }

    /// Cut-through (`switch.cut_through`): the header of `pkt` has arrived by
    /// `in_port`. The egress is chosen now, from the header; the packet starts on it at
    /// once if it may, and otherwise arrives (store-and-forward, to that egress) when
    /// its last byte is in. Out of line: the engine's loop, where `on_arrive`'s pipeline is
    /// inlined, should not carry a second copy of it for a key that is off.
    #[inline(never)]
    pub fn on_header(&mut self, cx: &mut Ctx, node: u32, pkt: u32, in_port: u16, egress: u16) {
        let port = self.egress(cx, node, pkt, egress);
        let ct = self.cut_through.as_ref().expect("a cut-through switch");
        let wire = cx.pkts.hot(pkt).wire as u64;
        match ct.decide(cx.now, in_port, wire, &self.ports[port as usize]) {
            Decision::Start => self.enqueue(cx, node, port as u32, pkt, in_port),
            Decision::StoreUntil(t) => cx.push(
                t,
                Ev::Arrive {
                    node,
                    pkt,
                    port: in_port,
                    egress: port,
                },
            ),
        }
    }

    /// Port `port`'s wake-up at `time`.
    #[inline(always)]
    pub fn on_port_free(&mut self, cx: &mut Ctx, node: u32, port: u32, time: u64) {
        let before = self.shared.map(|_| self.ports[port as usize].bytes());
        let sent = self.ports[port as usize].on_wake(cx, node, port, time);
        self.sent(cx, node, port, sent);
        if let Some(before) = before {
            self.account(port, before);
        }
    }

    /// Offers `pkt` to port `port`; `in_port` is where it entered (u16::MAX: made here).
    #[inline(always)]
    fn enqueue(&mut self, cx: &mut Ctx, node: u32, port: u32, pkt: u32, in_port: u16) {
        if self.shared.is_some() {
            return self.enqueue_shared(cx, node, port, pkt, in_port);
        }
        if let Offer::Slow = self.ports[port as usize].offer(cx, node, port, pkt) {
            self.enqueue_waiting(cx, node, port, pkt, in_port);
        }
    }

    /// [`Self::enqueue`] on a shared buffer: the port's threshold is set from the pool
    /// first (Choudhury-Hahne: alpha times the free bytes, and never past the pool), and
    /// what the port then holds is counted against the pool.
    #[inline(never)]
    fn enqueue_shared(&mut self, cx: &mut Ctx, node: u32, port: u32, pkt: u32, in_port: u16) {
        let (pool, used) = self.shared.expect("a shared buffer");
        let p = &mut self.ports[port as usize];
        let before = p.bytes();
        let free = pool.pool.saturating_sub(used);
        let threshold = (pool.alpha * free as f64) as u64;
        p.set_capacity(threshold.min(before + free));
        if let Offer::Slow = p.offer(cx, node, port, pkt) {
            self.enqueue_waiting(cx, node, port, pkt, in_port);
        }
        self.account(port, before);
    }

    /// Port `port` held `before` bytes: the pool counts what it holds now.
    fn account(&mut self, port: u32, before: u64) {
        let now = self.ports[port as usize].bytes();
        if let Some((_, used)) = &mut self.shared {
            *used = (*used + now).saturating_sub(before);
        }
    }

    /// The bytes a shared buffer's ports hold (None: none is shared).
    pub fn shared_bytes(&self) -> Option<u64> {
        self.shared.map(|(_, used)| used)
    }

    /// What a port started on its link: a packet its marker chose as it left (CoDel) is
    /// marked now.
    #[inline(always)]
    fn sent(&mut self, cx: &mut Ctx, node: u32, port: u32, sent: Option<Sent>) {
        if let Some(s) = sent {
            if s.mark {
                self.mark(cx, node, port, s.pkt);
            }
        }
    }

    #[inline(always)]
    fn kick(&mut self, cx: &mut Ctx, node: u32, port: u32) {
        let sent = self.ports[port as usize].kick(cx, node, port);
        self.sent(cx, node, port, sent);
    }

    /// [`Self::enqueue`] when the packet cannot start at once (or does not fit): the
    /// port's whole pipeline.
    #[inline(never)]
    fn enqueue_waiting(&mut self, cx: &mut Ctx, node: u32, port: u32, pkt: u32, in_port: u16) {
        let now = cx.now;
        let kind = cx.pkts.hot(pkt).kind;
        let p = &mut self.ports[port as usize];
        if kind == PktKind::Notify {
            // FastLane §3.3.2: notifications wait in their own capped buffer.
            let wire = cx.pkts.hot(pkt).wire as u32;
            match p.notif_mut().map(|nq| nq.admit(pkt, wire)) {
                Some(true) => {
                    self.kick(cx, node, port);
                    return;
                }
                Some(false) => {
                    p.count_drop(cx, DropReason::Notification, pkt);
                    cx.pkts.free(pkt);
                    return;
                }
                None => {}
            }
        }
        // (A plain idle port refused the packet above only when it does not fit: it is
        // dropped below, as it would be had it been offered to the FIFO.)
        if p.is_plain() {
            if p.enqueue(now, pkt, &mut cx.pkts.hot, 0) {
                // The common case, on the one port reference: no CoDel, and unless DCTCP
                // marks it, the kick below without looking the port up again.
                let before = p.bytes() - cx.pkts.hot(pkt).wire as u64;
                if kind == PktKind::Data && p.threshold().marks(before) {
                    self.mark(cx, node, port, pkt);
                    self.kick(cx, node, port);
                    return;
                }
                let sent = p.queued(cx, node, port);
                self.sent(cx, node, port, sent);
                return;
            }
            if let Err(reason) = self.overflow(cx, port, pkt) {
                self.ports[port as usize].count_drop(cx, reason, pkt);
                self.on_drop(cx, node, pkt, in_port);
                return;
            }
        } else if p.has_pfabric() {
            let e = Entry::of(&cx.pkts, pkt, in_port);
            let mut evicted = std::mem::take(&mut self.evicted);
            let admitted = p.enqueue_pfabric(cx, e, &mut evicted);
            for v in evicted.drain(..) {
                self.on_drop(cx, node, v.pkt, v.in_port);
            }
            self.evicted = evicted;
            if !admitted {
                self.on_drop(cx, node, pkt, in_port);
                return;
            }
        } else if !p.enqueue(now, pkt, &mut cx.pkts.hot, 0) {
            if let Err(reason) = self.overflow(cx, port, pkt) {
                self.ports[port as usize].count_drop(cx, reason, pkt);
                self.on_drop(cx, node, pkt, in_port);
                return;
            }
        }
        let p = &self.ports[port as usize];
        if p.marks_at_dequeue() {
            cx.pkts.get_mut(pkt).enq = now;
        }
        if kind == PktKind::Data {
            // DCTCP's marking: the arrival found more than K bytes queued.
            let before = p.bytes() - cx.pkts.hot(pkt).wire as u64;
            if p.threshold().marks(before) {
                self.mark(cx, node, port, pkt);
            }
        }
        self.kick(cx, node, port);
    }

    /// The overflow action for a packet that did not fit: queued after all (CP's cut, in
    /// the allowance), or the reason it is dropped.
    fn overflow(&mut self, cx: &mut Ctx, port: u32, pkt: u32) -> Result<(), DropReason> {
        if self.overflow != Overflow::CutPayload {
            return Err(DropReason::Full);
        }
        // CP §4.2: a CP-enabled data packet loses its payload and queues in the extra
        // allowance; payload-cut packets and PACKs may use the allowance as they are.
        let cut = match cut_payload::cut(cx.pkts.get(pkt), self.framing) {
            Cut::Refused => return Err(DropReason::Full),
            Cut::AsIs => false,
            Cut::Cut(c) => {
                cx.counters.cut_packets += 1;
                cx.counters.cut_bytes += c.wire as u64;
                self.ports[port as usize].count_cut();
                cx.pkts.replace(pkt, c);
                true
            }
        };
        let p = &mut self.ports[port as usize];
        if p.enqueue(cx.now, pkt, &mut cx.pkts.hot, self.cut_extra) {
            return Ok(());
        }
        if cut {
            cx.counters.cut_dropped += 1;
            return Err(DropReason::Cut);
        }
        Err(DropReason::Full)
    }

    /// The ECN marker chose `pkt`: set CE, or with Source Quench tell its source.
    fn mark(&mut self, cx: &mut Ctx, node: u32, port: u32, pkt: u32) {
        if self.overflow == Overflow::SourceQuench {
            self.ports[port as usize].count_mark(cx);
            self.send_quench(cx, node, pkt);
        } else {
            self.ports[port as usize].mark_ecn(cx, pkt);
        }
    }

    /// Source Quench (FastLane §2.2.1): tell the source of `pkt`, at the data's own
    /// priority, through the ordinary queues, with no cap.
    fn send_quench(&mut self, cx: &mut Ctx, node: u32, pkt: u32) {
        let q = source_quench::quench(cx.pkts.get(pkt), self.framing);
        let dst = q.dst;
        let q = cx.pkts.alloc(q);
        cx.counters.quenches_sent += 1;
        let hops = cx.fabric.routes().next_hops(node, dst);
        let port = ecmp::pick_own(hops, cx.pkts.hot(q).hash);
        self.enqueue(cx, node, port as u32, q, u16::MAX);
    }

    /// A packet a port did not keep (or evicted), its drop already counted: its flow
    /// hears of it, and at a FastLane switch it becomes a notification for its source.
    fn on_drop(&mut self, cx: &mut Ctx, node: u32, pkt: u32, in_port: u16) {
        cx.report_network_drop(pkt);
        let kind = cx.pkts.get(pkt).kind;
        let notify = self.overflow == Overflow::FastLane
            && matches!(kind, PktKind::Data | PktKind::Ack | PktKind::Probe);
        if !notify {
            cx.pkts.free(pkt);
            return;
        }
        // FastLane §3.2: it leaves by the port it came in, ahead of all data.
        let n = fastlane::notification(cx.pkts.get(pkt));
        cx.pkts.replace(pkt, n);
        cx.counters.notifications_generated += 1;
        let port = &mut self.ports[in_port as usize];
        let nq = port
            .notif_mut()
            .expect("FastLane ports have a notification queue");
        nq.count_generated();
        if !nq.admit(pkt, NOTIFICATION_FRAME) {
            port.count_drop(cx, DropReason::Notification, pkt);
            cx.pkts.free(pkt);
            return;
        }
        self.kick(cx, node, in_port as u32);
    }

    /// Every port's report, in port order.
    pub fn reports(&self, now: u64) -> impl Iterator<Item = PortReport> + '_ {
        // A shared pool's port has no buffer of its own: report the most its dynamic
        // threshold lets it hold alone, q = alpha (B - q), not the threshold it last had.
        let alone = self
            .shared
            .map(|(b, _)| (b.alpha * b.pool as f64 / (1.0 + b.alpha)) as u64);
        self.ports.iter().map(move |p| {
            let mut r = p.report(now);
            if let Some(q) = alone {
                r.capacity = q;
            }
            r
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Scenario;
    use crate::engine::queue::EventQueue;
    use crate::packet::cut::CUT_IP_BYTES;
    use crate::packet::wire::wire_bytes;
    use crate::packet::Packet;
    use crate::switch::forwarding::Forwarder;

    /// A star's switch alone, with its context: (context, switch, its node).
    fn star(text: &str) -> (Ctx, OqSwitch, u32) {
        let sc = Scenario::parse(text, &[], None).unwrap();
        let fabric = Fabric::build(&sc.topology, &sc.routes, sc.switch.timing, 1).unwrap();
        let fwd = Forwarder::new(sc.switch.forwarding, fabric.routes());
        let cx = Ctx::new(EventQueue::new(), fabric, fwd);
        let node = cx.fabric.hosts();
        let sw = OqSwitch::new(&sc.switch, &cx.fabric, node, Rng::new(1, 0), 38);
        (cx, sw, node)
    }

    /// The switch's port toward host `h`.
    fn port_to(cx: &Ctx, node: u32, h: u32) -> usize {
        cx.fabric
            .ports(node)
            .iter()
            .position(|p| p.peer == h)
            .unwrap()
    }

    /// Choudhury-Hahne's fixed point: N ports of one switch, all filling at once and none
    /// draining, stop admitting when each holds alpha (B - N q), that is q = alpha B /
    /// (1 + N alpha), to within a packet; and the pool counts what they hold.
    #[test]
    fn dynamic_thresholds_settle_at_alpha_b_over_one_plus_n_alpha() {
        let pool = 1_000_000u64;
        for (alpha, n) in [(1.0, 1), (1.0, 3), (0.5, 4), (2.0, 2), (0.125, 6)] {
            let text = format!(
                "[topology]\nkind = \"star\"\nhosts = 8\n[switch]\nbuffer_sharing = \"dynamic\"\n\
                 shared_buffer = \"{pool}B\"\ndt_alpha = {alpha}\n[workload]\nkind = \"trace\"\n\
                 flows = [{{ src = 0, dst = 1, size = 1000 }}]"
            );
            let (mut cx, mut sw, node) = star(&text);
            let ports: Vec<u32> = (1..=n).map(|h| port_to(&cx, node, h) as u32).collect();
            let wire = wire_bytes(1460 + 40, 38);
            // Offered round-robin at one instant until no port admits any more.
            let mut refused = vec![false; n as usize];
            while refused.iter().any(|r| !r) {
                for (i, &port) in ports.iter().enumerate() {
                    if refused[i] {
                        continue;
                    }
                    let mut p = Packet::new(PktKind::Data, 0, 0, 0, i as u32 + 1, 0, wire, 7);
                    p.len = 1460;
                    let pkt = cx.pkts.alloc(p);
                    let dropped = |sw: &OqSwitch| -> u64 {
                        sw.ports()[port as usize].report(0).drops.iter().sum()
                    };
                    let before = dropped(&sw);
                    sw.enqueue(&mut cx, node, port, pkt, 0);
                    refused[i] = dropped(&sw) > before;
                }
            }
            let want = alpha * pool as f64 / (1.0 + n as f64 * alpha);
            let held: Vec<u64> = ports
                .iter()
                .map(|&p| sw.ports()[p as usize].bytes())
                .collect();
            for &q in &held {
                assert!(
                    (q as f64 - want).abs() <= 2.0 * wire as f64,
                    "alpha {alpha}, {n} ports: {held:?}, want {want:.0} each"
                );
            }
            assert_eq!(sw.shared_bytes(), Some(held.iter().sum::<u64>()));
            // ports.parquet's capacity: the fixed point of a port alone (N = 1).
            let alone = (alpha * pool as f64 / (1.0 + alpha)) as u64;
            assert!(sw.reports(0).all(|r| r.capacity == alone), "alpha {alpha}");
        }
    }

    /// FastLane §3.2: a victim becomes one notification for its source, with its
    /// sequence number and original length, at top priority, queued on the port the
    /// victim arrived by.
    #[test]
    fn a_dropped_packet_becomes_a_notification_out_its_input_port() {
        let (mut cx, mut sw, node) =
            star("[topology]\nkind = \"star\"\nhosts = 3\n[switch]\noverflow = \"fastlane\"");
        let mut p = Packet::new(PktKind::Data, 0, 7, 1, 0, 5, 1538, 99);
        p.seq = 2 * 1460;
        p.len = 1460;
        p.epoch = 3;
        let pkt = cx.pkts.alloc(p);
        let in_port = port_to(&cx, node, 1);
        sw.on_drop(&mut cx, node, pkt, in_port as u16);
        assert_eq!(cx.counters.notifications_generated, 1);
        assert_eq!(
            cx.flow_drops().as_slice(),
            &[(0, 7, 1)],
            "its flow hears of it"
        );
        // Exactly one notification, and it is on its way out of the input port (the
        // idle link took it at once).
        let r = sw.ports[in_port].report(cx.now);
        assert_eq!(
            (r.notif.generated, r.notif.enqueued, r.notif.sent),
            (1, 1, 1)
        );
        let n = cx.pkts.get(pkt);
        assert_eq!(n.kind, PktKind::Notify);
        assert_eq!(n.orig, PktKind::Data);
        assert_eq!((n.src, n.dst), (0, 1), "addressed to the source");
        assert_eq!((n.seq, n.len, n.epoch), (2 * 1460, 1460, 3));
        assert_eq!(n.class, 0, "top priority");
        assert_eq!(n.wire, NOTIFICATION_FRAME);
        assert_eq!(cx.pkts.hot(pkt).wire as u32, NOTIFICATION_FRAME);
        // The other ports saw nothing.
        for (i, p) in sw.ports.iter().enumerate() {
            if i != in_port {
                assert_eq!(p.report(cx.now).notif.enqueued, 0);
            }
        }
    }

    /// CP §4.2: a CP-enabled packet that does not fit is cut to its headers, keeps its
    /// sequence number and original length, is marked payload-cut, and queues in the
    /// extra allowance; a normal packet is dropped; the allowance is never exceeded.
    #[test]
    fn a_cp_enabled_packet_that_does_not_fit_is_cut_into_the_allowance() {
        let (mut cx, mut sw, node) = star(
            "[topology]\nkind = \"star\"\nhosts = 3\n[switch]\nbuffer = \"3KB\"\n\
             overflow = \"cut_payload\"\ncut_payload_extra = \"200B\"",
        );
        let out = port_to(&cx, node, 0) as u32;
        let in_port = port_to(&cx, node, 1) as u16;
        let data = |cx: &mut Ctx, seq: u64, cpa: bool| {
            let mut p = Packet::new(PktKind::Data, 0, 7, 1, 0, 0, 1538, 99);
            p.seq = seq;
            p.len = 1460;
            p.cpa = cpa;
            cx.pkts.alloc(p)
        };
        // The first leaves at once (idle link); the next ones fill the 3 KB.
        for k in 0..3 {
            let pkt = data(&mut cx, k * 1460, true);
            sw.enqueue(&mut cx, node, out, pkt, in_port);
        }
        let cuts = cx.counters.cut_packets;
        let cut_wire = wire_bytes(CUT_IP_BYTES, 38);
        assert_eq!(cut_wire, 90, "66 B of CP §4.6 plus FCS, preamble and gap");
        let pkt = data(&mut cx, 3 * 1460, true);
        sw.enqueue(&mut cx, node, out, pkt, in_port);
        let c = cx.pkts.get(pkt);
        assert!(c.ppl && c.cpa, "marked payload-cut");
        assert_eq!((c.kind, c.seq, c.len), (PktKind::Data, 3 * 1460, 1460));
        assert_eq!(c.wire, cut_wire);
        assert_eq!(cx.counters.cut_packets, cuts + 1);
        assert_eq!(sw.ports[out as usize].report(cx.now).cut, cuts + 1);
        // More cut packets fill the 200 B allowance, then are dropped; normal packets
        // are dropped outright.
        for k in 4..40 {
            let pkt = data(&mut cx, k * 1460, true);
            sw.enqueue(&mut cx, node, out, pkt, in_port);
        }
        let normal = data(&mut cx, 40 * 1460, false);
        let drops = cx.counters.drops;
        sw.enqueue(&mut cx, node, out, normal, in_port);
        assert_eq!(cx.counters.drops, drops + 1);
        let r = sw.ports[out as usize].report(cx.now);
        assert!(r.max_bytes <= r.capacity + 200);
        assert!(r.max_bytes > r.capacity, "the allowance was used");
        assert_eq!(r.cut, cx.counters.cut_packets);
        let (full, cut) = (
            r.drops[DropReason::Full as usize],
            r.drops[DropReason::Cut as usize],
        );
        assert!(cut > 0 && cut < r.cut, "some cut packets fit, some did not");
        assert_eq!(full, 1, "the normal packet, dropped for want of room");
        assert_eq!(cut + full, cx.counters.drops);
    }
}
