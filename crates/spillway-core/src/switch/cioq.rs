//! The combined input/output-queued switch (DeTail §5.1, Fig. 1). A packet that arrives
//! is forwarded (its egress chosen) and waits in its input's ingress queue; the crossbar,
//! scheduled by iSLIP with strict priority classes ([`super::crossbar::islip`]), moves it
//! to its egress port, whose droptail queue sends it on. An input and an output take
//! part in one transfer at a time, which lasts the packet's serialization at `speedup`
//! times the input's link rate (instant without a speedup).
//!
//! Ingress queues are virtual output queues (per output and class) or one FIFO per
//! class ([`Ingress`]). Lossy (no flow control): the egress queue tail-drops, the ingress
//! queue drops what does not fit. Lossless (`pause`, `pfc`): the crossbar moves a packet
//! only when its egress queue has room for it, so egress never drops, and the ingress
//! queues pause their upstream port by class as they fill ([`super::flow_control`]).
//!
//! The common case costs about what an output-queued hop does: a packet that finds no
//! ingress queue holding anything and its input and output free crosses at once (and,
//! without a speedup, goes straight to its egress port's fast path).

use super::config::{BuildError, CioqConfig, Ingress, SwitchConfig};
use super::crossbar::islip::{Islip, Requests, MAX_PORTS, NO_REQUEST};
use super::flow_control::{self, decide, FlowControl, Thresholds};
use super::forwarding::Forwarding;
use super::marking::threshold::Threshold;
use super::port::{DropReason, Offer, Port, PortReport, CLASSES};
use crate::engine::context::Ctx;
use crate::engine::event::{Ev, ROUTE_ON_ARRIVAL};
use crate::fabric::Fabric;
use crate::packet::wire::wire_bytes;
use crate::packet::{pause, Arena, PktKind, NIL};
use crate::rng::Rng;
use crate::units::{format_size, serialization_ps, Ps, PS_PER_S};

/// One ingress FIFO per class, linked through the packets' `next` (free while a packet
/// waits here: it is in no port's queue).
#[derive(Clone, Copy)]
struct Queue {
    fifo: [(u32, u32); CLASSES],
    nonempty: u8,
}

const EMPTY: Queue = Queue {
    fifo: [(NIL, NIL); CLASSES],
    nonempty: 0,
};

/// An input: its ingress buffer's accounting and flow control.
struct Input {
    bytes: u64,
    /// Bytes per class, for the drain bytes flow control compares with its thresholds.
    class_bytes: [u64; CLASSES],
    capacity: u64,
    max_bytes: u64,
    /// The outputs its queues hold packets for (VOQ), or its FIFO heads wait for.
    wants: u64,
    /// Classes it has paused upstream.
    paused_up: u8,
    thresholds: Thresholds,
    /// The crossbar's rate from this input (link rate × speedup); 0: instant.
    xbar_rate: u64,
}

pub struct CioqSwitch {
    egress: Vec<Port>,
    inputs: Vec<Input>,
    /// Queue (input i, q) is `queues[index[i * n + q]]` (VOQ: q the output; FIFO: 0),
    /// NIL until first used: memory grows with the pairs that carry traffic.
    index: Vec<u32>,
    queues: Vec<Queue>,
    n: usize,
    fifo: bool,
    islip: Islip,
    /// Inputs and outputs in a transfer now.
    in_busy: u64,
    out_busy: u64,
    /// Inputs whose queues hold packets.
    waiting: u64,
    /// Per output, the inputs that want it (the transpose of the inputs' `wants`): room
    /// freed at an output is news only to them.
    wanted_by: Vec<u64>,
    /// Bytes crossing to each output now (room they take in its egress queue).
    incoming: Vec<u64>,
    /// Packets in all ingress queues.
    queued: u64,
    lossless: bool,
    flow_control: FlowControl,
    instant: bool,
    framing: u32,
    /// The switch's own stream: spraying's and ALB's draws.
    rng: Rng,
    matches: Vec<(u16, u16)>,
}

/// The crossbar's view of the queues for one iSLIP round.
struct View<'a> {
    egress: &'a [Port],
    inputs: &'a [Input],
    index: &'a [u32],
    queues: &'a [Queue],
    incoming: &'a [u64],
    n: usize,
    fifo: bool,
    lossless: bool,
    pkts: &'a Arena,
}

impl View<'_> {
    /// Output `o` can take `wire` more bytes (always, when lossy: it drops what it
    /// cannot hold).
    #[inline]
    fn fits(&self, o: usize, wire: u64) -> bool {
        !self.lossless
            || self.egress[o].bytes() + self.incoming[o] + wire <= self.egress[o].capacity()
    }

    /// The class whose head input `i` would send to output `o` now, with the queue
    /// holding it, or None.
    #[inline]
    fn pick(&self, i: usize, o: usize) -> Option<(usize, u8)> {
        let q = self.index[queue_key(self.fifo, self.n, i, o)];
        if q == NIL {
            return None;
        }
        let queue = &self.queues[q as usize];
        let mut ne = queue.nonempty;
        while ne != 0 {
            let c = ne.trailing_zeros() as usize;
            ne &= ne - 1;
            let head = queue.fifo[c].0;
            if self.fifo && self.pkts.get(head).hop_egress as usize != o {
                continue;
            }
            if self.fits(o, self.pkts.hot(head).wire as u64) {
                return Some((q as usize, c as u8));
            }
            if self.fifo {
                // The head waits for room; nothing of this class passes it.
                continue;
            }
        }
        None
    }
}

/// `$s`'s queues as the crossbar sees them, borrowed field by field.
macro_rules! view {
    ($s:expr, $pkts:expr) => {
        View {
            egress: &$s.egress,
            inputs: &$s.inputs,
            index: &$s.index,
            queues: &$s.queues,
            incoming: &$s.incoming,
            n: $s.n,
            fifo: $s.fifo,
            lossless: $s.lossless,
            pkts: $pkts,
        }
    };
}

impl Requests for View<'_> {
    fn class(&self, i: usize, o: usize) -> u8 {
        self.pick(i, o).map_or(NO_REQUEST, |(_, c)| c)
    }
    fn wants(&self, i: usize) -> u64 {
        self.inputs[i].wants
    }
}

impl CioqSwitch {
    /// Switch `node` of `fabric`: its egress ports as an output-queued switch's, its
    /// inputs with `cioq`'s buffers and thresholds.
    pub fn new(
        cfg: &SwitchConfig,
        cioq: &CioqConfig,
        fabric: &Fabric,
        node: u32,
        rng: Rng,
        framing: u32,
    ) -> Result<Self, BuildError> {
        let links = fabric.ports(node);
        let n = links.len();
        if n > MAX_PORTS {
            return Err(BuildError {
                key: "switch.kind",
                value: "cioq".into(),
                message: format!(
                    "{} has {n} ports; the crossbar's scheduler takes at most {MAX_PORTS}",
                    fabric.node_name(node)
                ),
            });
        }
        let timing = cfg.timing;
        let mut egress = Vec::with_capacity(n);
        let mut inputs = Vec::with_capacity(n);
        for (i, end) in links.iter().enumerate() {
            let capacity = cfg.port_buffer(fabric, node, end);
            let mut p = Port::new(end, capacity);
            p.install(
                None,
                None,
                // RED (DCQCN's marking) only: CoDel is refused here.
                cfg.port_dequeue_marker(end, i, &rng),
                Threshold::new(cfg.port_ecn_threshold(end)),
            );
            if matches!(cfg.forwarding, Forwarding::Alb(_)) {
                p.count_classes();
            }
            if cioq.flow_control != FlowControl::None {
                p.enable_flow_control();
            }
            egress.push(p);
            let in_cap = cioq.ingress_buffer.unwrap_or(capacity);
            // What may still arrive once this input decides to pause: §6.1's H for the
            // link (its rate is the peer's sending rate: links are symmetric), and three
            // things §6.1 leaves out: the frame whose arrival crossed XOFF (up to a full
            // frame past it), the pause frame's own time on the wire, and this switch's
            // forwarding engine, which holds packets before they queue here. Without
            // the first two, 802.3x pause (one headroom for the whole buffer) overflowed
            // under DeTail's bursts (Fig. 5: 189 ingress drops in FC over 3 seeds).
            let h = flow_control::headroom(end.rate, end.delay, cioq.max_frame)
                + cioq.max_frame
                + wire_bytes(pause::PAUSE_PAYLOAD_BYTES, framing) as u64
                + bytes_in(end.rate, timing.forwarding_delay);
            let thresholds = match (cioq.xoff, cioq.xon) {
                (Some(xoff), xon) => Thresholds {
                    xoff,
                    xon: xon.unwrap_or(h.min(xoff - 1)),
                },
                (None, xon) => {
                    let classes = cioq.flow_control.classes();
                    let xoff = in_cap
                        .checked_sub(classes * h)
                        .map(|b| b / classes)
                        .filter(|&x| x > xon.unwrap_or(h));
                    match xoff {
                        Some(xoff) => Thresholds {
                            xoff,
                            xon: xon.unwrap_or(h),
                        },
                        None if cioq.flow_control == FlowControl::None => Thresholds {
                            xoff: u64::MAX,
                            xon: 0,
                        },
                        None => {
                            return Err(BuildError {
                                key: "switch.ingress_buffer",
                                value: format_size(in_cap),
                                message: format!(
                                    "too small for {classes} classes' headroom of {h} B each on \
                                     the link from {} (DeTail §6.1: XOFF = (buffer - N·H) / N \
                                     must exceed XON): give a larger buffer or switch.pfc_xoff",
                                    fabric.node_name(end.peer)
                                ),
                            });
                        }
                    }
                }
            };
            inputs.push(Input {
                bytes: 0,
                class_bytes: [0; CLASSES],
                capacity: in_cap,
                max_bytes: 0,
                wants: 0,
                paused_up: 0,
                thresholds,
                xbar_rate: timing
                    .speedup
                    .map_or(0, |s| end.rate.saturating_mul(s as u64)),
            });
        }
        Ok(CioqSwitch {
            egress,
            inputs,
            index: vec![NIL; n * if cioq.ingress == Ingress::Fifo { 1 } else { n }],
            queues: Vec::new(),
            n,
            fifo: cioq.ingress == Ingress::Fifo,
            islip: Islip::new(n.max(1)),
            in_busy: 0,
            out_busy: 0,
            waiting: 0,
            wanted_by: vec![0; n],
            incoming: vec![0; n],
            queued: 0,
            lossless: cioq.flow_control != FlowControl::None,
            flow_control: cioq.flow_control,
            instant: timing.speedup.is_none(),
            framing,
            rng,
            matches: Vec::new(),
        })
    }

    pub fn ports(&self) -> &[Port] {
        &self.egress
    }

    pub fn ports_mut(&mut self) -> &mut [Port] {
        &mut self.egress
    }

    /// A packet has arrived by `in_port`, its egress `egress` if chosen when it was sent.
    #[inline(always)]
    pub fn on_arrive(&mut self, cx: &mut Ctx, node: u32, pkt: u32, in_port: u16, egress: u16) {
        let h = *cx.pkts.hot(pkt);
        if h.kind == PktKind::Pause {
            self.pause_arrived(cx, node, pkt, in_port);
            return;
        }
        let o = if egress != ROUTE_ON_ARRIVAL {
            egress
        } else {
            cx.forwarding.on_arrival(
                cx.fabric.routes(),
                node,
                h.dst,
                h.hash,
                &mut self.rng,
                |p| self.egress[p as usize].drain_bytes(h.class),
            )
        };
        let (i, o) = (in_port as usize, o as usize);
        let wire = h.wire as u64;
        let busy = (self.in_busy >> i | self.out_busy >> o) & 1;
        if busy == 0
            && self.wanted_by[o] == 0
            && self.inputs[i].bytes == 0
            && (!self.lossless
                || self.egress[o].bytes() + self.incoming[o] + wire <= self.egress[o].capacity())
        {
            // Both ends are free, nothing waits at this input nor for this output: iSLIP
            // would match this pair alone (and nothing else has changed for the others).
            let input = &mut self.inputs[i];
            input.max_bytes = input.max_bytes.max(wire);
            self.islip.matched_alone(i, o);
            self.cross(cx, node, pkt, i, o, wire);
            return;
        }
        self.ingress(cx, node, pkt, i, o, wire);
    }

    /// The packet waits in input `i`'s queues for output `o`.
    #[inline(never)]
    fn ingress(&mut self, cx: &mut Ctx, node: u32, pkt: u32, i: usize, o: usize, wire: u64) {
        let input = &mut self.inputs[i];
        if input.bytes + wire > input.capacity {
            self.egress[i].count_drop(cx, DropReason::Ingress, pkt);
            cx.report_network_drop(pkt);
            cx.pkts.free(pkt);
            return;
        }
        let class = cx.pkts.hot(pkt).class as usize;
        input.bytes += wire;
        input.class_bytes[class] += wire;
        input.max_bytes = input.max_bytes.max(input.bytes);
        let key = queue_key(self.fifo, self.n, i, o);
        if self.index[key] == NIL {
            self.index[key] = self.queues.len() as u32;
            self.queues.push(EMPTY);
        }
        let q = &mut self.queues[self.index[key] as usize];
        if self.fifo {
            cx.pkts.get_mut(pkt).hop_egress = o as u16;
        }
        cx.pkts.hot[pkt as usize].next = NIL;
        let f = &mut q.fifo[class];
        let head = f.0 == NIL;
        if head {
            f.0 = pkt;
        } else {
            cx.pkts.hot[f.1 as usize].next = pkt;
        }
        f.1 = pkt;
        q.nonempty |= 1 << class;
        if head || !self.fifo {
            // (FIFO: a new head; VOQ: the queue for `o` holds something.)
            self.inputs[i].wants |= 1 << o;
            self.wanted_by[o] |= 1 << i;
        }
        self.queued += 1;
        self.waiting |= 1 << i;
        self.flow_control(cx, node, i);
        self.schedule(cx, node);
    }

    /// The queues as the crossbar sees them.
    #[inline(always)]
    fn view<'a>(&'a self, pkts: &'a Arena) -> View<'a> {
        view!(self, pkts)
    }

    /// Runs the crossbar: matches free inputs holding packets to free outputs (iSLIP)
    /// and starts their transfers, until no pair is left (instant) or every matched pair
    /// is busy.
    fn schedule(&mut self, cx: &mut Ctx, node: u32) {
        loop {
            let inputs = self.waiting & !self.in_busy;
            let all = if self.n == 64 {
                u64::MAX
            } else {
                (1u64 << self.n) - 1
            };
            let outputs = all & !self.out_busy;
            // A round only if some free input wants some free output.
            let mut free = inputs;
            let mut wanted = 0;
            let mut wanting = 0u64;
            while free != 0 {
                let i = free.trailing_zeros() as usize;
                let w = self.inputs[i].wants & outputs;
                if w != 0 {
                    wanting |= 1 << i;
                    wanted |= w;
                }
                free &= free - 1;
            }
            if wanting == 0 {
                return;
            }
            if wanting.is_power_of_two() && wanted.is_power_of_two() {
                // One input wants one free output: iSLIP would match them alone (if the
                // request stands: with flow control, the output may lack room).
                let (i, o) = (
                    wanting.trailing_zeros() as usize,
                    wanted.trailing_zeros() as usize,
                );
                if self.view(&cx.pkts).pick(i, o).is_none() {
                    return;
                }
                self.islip.matched_alone(i, o);
                self.transfer(cx, node, i, o);
                if !self.instant {
                    return;
                }
                continue;
            }
            let mut matches = std::mem::take(&mut self.matches);
            matches.clear();
            // Field by field (the macro), so that the round may hold the iSLIP state
            // mutably beside it.
            self.islip
                .round(&view!(self, &cx.pkts), wanting, outputs, &mut matches);
            let any = !matches.is_empty();
            for &(i, o) in &matches {
                self.transfer(cx, node, i as usize, o as usize);
            }
            self.matches = matches;
            if !any || !self.instant {
                return;
            }
        }
    }

    /// Input `i`'s head for output `o` crosses (iSLIP matched them).
    fn transfer(&mut self, cx: &mut Ctx, node: u32, i: usize, o: usize) {
        let (q, c) = self
            .view(&cx.pkts)
            .pick(i, o)
            .expect("a matched pair has a request");
        let queue = &mut self.queues[q];
        let f = &mut queue.fifo[c as usize];
        let pkt = f.0;
        let next = cx.pkts.hot(pkt).next;
        f.0 = next;
        if next == NIL {
            f.1 = NIL;
            queue.nonempty &= !(1 << c);
        }
        let wire = cx.pkts.hot(pkt).wire as u64;
        let input = &mut self.inputs[i];
        input.bytes -= wire;
        input.class_bytes[c as usize] -= wire;
        self.queued -= 1;
        if input.bytes == 0 {
            self.waiting &= !(1 << i);
        }
        if self.fifo {
            // The outputs the heads now wait for.
            let mut wants = 0u64;
            let mut ne = queue.nonempty;
            while ne != 0 {
                let k = ne.trailing_zeros() as usize;
                ne &= ne - 1;
                wants |= 1 << cx.pkts.get(queue.fifo[k].0).hop_egress;
            }
            let (gone, new) = (input.wants & !wants, wants & !input.wants);
            input.wants = wants;
            for (mut bits, set) in [(gone, false), (new, true)] {
                while bits != 0 {
                    let k = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    if set {
                        self.wanted_by[k] |= 1 << i;
                    } else {
                        self.wanted_by[k] &= !(1 << i);
                    }
                }
            }
        } else if queue.nonempty == 0 {
            input.wants &= !(1 << o);
            self.wanted_by[o] &= !(1 << i);
        }
        self.flow_control(cx, node, i);
        self.cross(cx, node, pkt, i, o, wire);
    }

    /// `pkt` crosses from input `i` to output `o`: at once, or busying both for its
    /// serialization at the crossbar's rate.
    #[inline(always)]
    fn cross(&mut self, cx: &mut Ctx, node: u32, pkt: u32, i: usize, o: usize, wire: u64) {
        if self.instant {
            self.deliver(cx, node, pkt, o);
            return;
        }
        self.in_busy |= 1 << i;
        self.out_busy |= 1 << o;
        self.incoming[o] += wire;
        let t = cx.now + serialization_ps(wire, self.inputs[i].xbar_rate);
        cx.push(
            t,
            Ev::Crossed {
                node,
                pkt,
                input: i as u16,
                output: o as u16,
            },
        );
    }

    /// The crossbar has delivered `pkt` from `input` to `output`.
    pub fn on_crossed(&mut self, cx: &mut Ctx, node: u32, pkt: u32, input: u16, output: u16) {
        let (i, o) = (input as usize, output as usize);
        self.in_busy &= !(1 << i);
        self.out_busy &= !(1 << o);
        self.incoming[o] -= cx.pkts.hot(pkt).wire as u64;
        self.deliver(cx, node, pkt, o);
        if self.queued > 0 {
            self.schedule(cx, node);
        }
    }

    /// `pkt` reaches egress port `o`'s queue.
    #[inline(always)]
    fn deliver(&mut self, cx: &mut Ctx, node: u32, pkt: u32, o: usize) {
        if let Offer::Slow = self.egress[o].offer(cx, node, o as u32, pkt) {
            self.egress_slow(cx, node, pkt, o);
        }
    }

    /// [`Self::deliver`] past the port's fast path: tail drop, threshold marking, a
    /// paused class.
    #[inline(never)]
    fn egress_slow(&mut self, cx: &mut Ctx, node: u32, pkt: u32, o: usize) {
        let now = cx.now;
        let p = &mut self.egress[o];
        if !p.enqueue(now, pkt, &mut cx.pkts.hot, 0) {
            debug_assert!(!self.lossless, "the crossbar checked for room");
            p.count_drop(cx, DropReason::Full, pkt);
            cx.report_network_drop(pkt);
            cx.pkts.free(pkt);
            return;
        }
        if cx.pkts.hot(pkt).kind == PktKind::Data {
            // DCTCP's marking: the arrival found more than K bytes queued.
            let before = p.bytes() - cx.pkts.hot(pkt).wire as u64;
            if p.threshold().marks(before) {
                p.mark_ecn(cx, pkt);
            }
        }
        let sent = p.kick(cx, node, o as u32);
        p.mark_sent(cx, sent);
    }

    /// Egress port `port`'s wake-up at `time`: its next packet goes, and with flow
    /// control the room it leaves may let a waiting packet cross.
    #[inline(always)]
    pub fn on_port_free(&mut self, cx: &mut Ctx, node: u32, port: u32, time: u64) {
        let p = &mut self.egress[port as usize];
        let sent = p.on_wake(cx, node, port, time);
        p.mark_sent(cx, sent);
        // The room the departure left matters to free inputs that want this output.
        if self.lossless
            && self.out_busy >> port & 1 == 0
            && self.wanted_by[port as usize] & !self.in_busy != 0
        {
            self.schedule(cx, node);
        }
    }

    /// Input `i`'s queues changed: pause or resume classes upstream as its drain bytes
    /// cross the thresholds (DeTail §5.2: the pause goes out of the arrival port).
    #[inline(always)]
    fn flow_control(&mut self, cx: &mut Ctx, node: u32, i: usize) {
        let input = &self.inputs[i];
        // Drain bytes never exceed the bytes held: below XOFF with nothing paused, no
        // class can change (the common case, one compare).
        if self.flow_control == FlowControl::None
            || (input.paused_up == 0 && input.bytes < input.thresholds.xoff)
        {
            return;
        }
        let mut drain = [0u64; CLASSES];
        let mut sum = 0;
        for (d, b) in drain.iter_mut().zip(&input.class_bytes) {
            sum += b;
            *d = sum;
        }
        let (on, off) = decide(self.flow_control, &drain, input.paused_up, input.thresholds);
        for (classes, pause) in [(on, true), (off, false)] {
            if classes == 0 {
                continue;
            }
            let input = &mut self.inputs[i];
            input.paused_up = pause::apply(input.paused_up, classes, pause);
            let p = &mut self.egress[i];
            let frame = pause::frame(node, p.peer(), classes, pause, self.framing);
            let f = cx.pkts.alloc(frame);
            cx.counters.pause_frames += 1;
            let sent = p.send_control(cx, node, i as u32, f);
            p.mark_sent(cx, sent);
        }
    }

    /// A pause frame from the neighbour on `port`: it takes effect after the response
    /// time (802.1Qbb: two 512-bit times).
    fn pause_arrived(&mut self, cx: &mut Ctx, node: u32, pkt: u32, port: u16) {
        let p = &mut self.egress[port as usize];
        p.count_pause_received();
        let t = cx.now + p.serialization(pause::RESPONSE_BYTES);
        cx.push(
            t,
            Ev::PauseTakes {
                node,
                port: port as u32,
                pkt,
            },
        );
    }

    /// A pause frame's effect: egress port `port` pauses or resumes its classes.
    pub fn on_pause_takes(&mut self, cx: &mut Ctx, node: u32, port: u32, pkt: u32) {
        let p = &mut self.egress[port as usize];
        let (classes, on) = pause::read(cx.pkts.get(pkt));
        cx.pkts.free(pkt);
        let before = p.paused();
        p.set_paused(cx.now, pause::apply(before, classes, on));
        if before & !p.paused() != 0 {
            let sent = p.kick(cx, node, port);
            p.mark_sent(cx, sent);
        }
    }

    /// For deadlock detection: since when egress port `port` has been paused without a
    /// break while holding packets, if it is.
    pub fn stuck_since(&self, port: usize) -> Option<Ps> {
        let p = &self.egress[port];
        if p.is_empty() {
            return None;
        }
        p.paused_since()
    }

    /// The outputs input `port`'s queued packets wait for.
    pub fn waits_for(&self, port: usize) -> u64 {
        self.inputs[port].wants
    }

    /// Checks the switch's bookkeeping against its queues (tests): every queued packet
    /// counted once in its input's bytes and classes, `wants` and `wanted_by` exactly the
    /// queues' outputs, each transfer in flight holding one input and one output (so no
    /// input sends two packets at once and no output receives two), room reserved for
    /// each, and with flow control no egress over its buffer.
    #[cfg(test)]
    pub fn check(&self, pkts: &Arena) {
        let mut queued = 0;
        for (i, input) in self.inputs.iter().enumerate() {
            let mut bytes = [0u64; CLASSES];
            let mut wants = 0u64;
            for q in 0..if self.fifo { 1 } else { self.n } {
                let k = self.index[queue_key(self.fifo, self.n, i, q)];
                if k == NIL {
                    continue;
                }
                let queue = &self.queues[k as usize];
                for (c, &(head, tail)) in queue.fifo.iter().enumerate() {
                    assert_eq!(head == NIL, queue.nonempty & 1 << c == 0);
                    let mut p = head;
                    let mut last = NIL;
                    while p != NIL {
                        let h = pkts.hot(p);
                        assert_eq!(h.class as usize, c);
                        bytes[c] += h.wire as u64;
                        queued += 1;
                        let o = if self.fifo {
                            pkts.get(p).hop_egress as usize
                        } else {
                            q
                        };
                        if !self.fifo || p == head {
                            wants |= 1 << o;
                        }
                        last = p;
                        p = h.next;
                    }
                    assert_eq!(last, if head == NIL { NIL } else { tail });
                }
            }
            assert_eq!(bytes, input.class_bytes, "input {i}");
            assert_eq!(bytes.iter().sum::<u64>(), input.bytes, "input {i}");
            assert!(input.bytes <= input.capacity);
            assert_eq!(input.wants, wants, "input {i}");
            assert_eq!(self.waiting >> i & 1 == 1, input.bytes > 0);
            for o in 0..self.n {
                assert_eq!(self.wanted_by[o] >> i & 1, wants >> o & 1);
            }
        }
        assert_eq!(queued, self.queued);
        assert_eq!(self.in_busy.count_ones(), self.out_busy.count_ones());
        for (o, p) in self.egress.iter().enumerate() {
            assert_eq!(
                self.incoming[o] > 0,
                self.out_busy >> o & 1 == 1,
                "output {o}"
            );
            if self.lossless {
                assert!(p.bytes() + self.incoming[o] <= p.capacity(), "output {o}");
            }
        }
    }

    /// Every port's report (egress and the ingress on the same link), in port order.
    pub fn reports(&self, now: u64) -> impl Iterator<Item = PortReport> + '_ {
        self.egress.iter().zip(&self.inputs).map(move |(p, i)| {
            let mut r = p.report(now);
            r.ingress_max_bytes = i.max_bytes;
            r
        })
    }
}

/// Where the index keeps queue (input `i`, output `o`): VOQ, one per pair; FIFO, one per
/// input.
#[inline(always)]
fn queue_key(fifo: bool, n: usize, i: usize, o: usize) -> usize {
    if fifo {
        i
    } else {
        i * n + o
    }
}

/// Bytes a link of `rate` carries in `t`, rounded up.
fn bytes_in(rate: u64, t: Ps) -> u64 {
    ((t as u128 * rate as u128).div_ceil(8 * PS_PER_S as u128)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Scenario;
    use crate::switch::config::SwitchKind;

    /// DeTail's network as this model has it: 1538 B frames on the wire, 6.6 us links,
    /// 1 GbE, 128 KB, and the 3.1 us forwarding engine. §6.1's T = 2 x 12.304 us +
    /// 2 x 6.6 us + 1.024 us = 38.832 us -> 4,854 B; + 1,538 B (the frame that crosses
    /// XOFF) + 84 B (the pause frame) + 388 B (forwarding delay) = 6,864 B of headroom;
    /// XOFF = (131,072 - 8 x 6,864) / 8 = 9,520 B. With 802.3x pause, one headroom:
    /// XOFF = 131,072 - 6,864.
    #[test]
    fn every_input_has_the_thresholds_of_its_link() {
        for (fc, xoff) in [("pfc", 9_520), ("pause", 131_072 - 6_864)] {
            let sc = Scenario::parse(
                &format!(
                    "[topology]\nkind = \"detail96\"\n[switch]\nkind = \"cioq\"\n\
                     flow_control = \"{fc}\"\nforwarding_delay = \"3100ns\""
                ),
                &[],
                None,
            )
            .unwrap();
            let fabric = Fabric::build(&sc.topology, &sc.routes, sc.switch.timing, 1).unwrap();
            let SwitchKind::Cioq(c) = sc.switch.kind else {
                panic!("cioq")
            };
            assert_eq!(c.max_frame, 1538);
            for node in fabric.hosts()..fabric.node_count() as u32 {
                let s = CioqSwitch::new(&sc.switch, &c, &fabric, node, Rng::new(1, 0), 38).unwrap();
                for i in &s.inputs {
                    assert_eq!((i.thresholds.xoff, i.thresholds.xon), (xoff, 6_864), "{fc}");
                }
            }
        }
    }
}
