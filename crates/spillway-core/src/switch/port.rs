//! A port: the queue in front of one link and the link's timing. Eight strict-priority
//! FIFOs (class 0 highest) share a byte-bounded buffer with tail drop, or a pFabric queue
//! replaces them; a FastLane notification queue and a marker (DCTCP's threshold, CoDel)
//! may ride along. Switch ports and host NICs are both this: their owners decide what a
//! drop, a mark or a transmission means for them.
//!
//! Dequeue honours a per-class paused mask (flow control: a class paused by its
//! downstream neighbour sends nothing new; no mechanism pauses yet, so it stays empty).

use crate::engine::context::Ctx;
use crate::engine::event::{Ev, ROUTE_ON_ARRIVAL};
use crate::fabric::LinkEnd;
use crate::packet::int::IntHop;
use crate::packet::notification::NOTIFICATION_FRAME;
use crate::packet::{prefetch, Arena, Hot, PktKind, BLOCKED, CARRIES_INT, NIL};
use crate::switch::discipline::pfabric::{Entry, PFabricQueue};
use crate::switch::marking::threshold::Threshold;
use crate::switch::marking::AtDequeue;
use crate::switch::overflow::fastlane::{NotifQueue, NotifStats};
use crate::units::Ps;

pub const CLASSES: usize = 8;

/// `Port::wake_at` when no wake-up is pending.
pub const NO_WAKE: Ps = Ps::MAX;

/// `Port::extras` bits: which optional mechanisms the port has, and whether a class is
/// paused (then the port takes its slow paths, which honour the paused mask: the fast
/// paths never look at it).
const HAS_PFABRIC: u8 = 1;
const HAS_NOTIF: u8 = 2;
/// A marker that decides at dequeue (CoDel, RED).
const HAS_DEQUEUE_MARK: u8 = 4;
const PAUSED: u8 = 8;
/// Not a slow path: a packet sent here reaches the peer's forwarding decision other than
/// at the end of its serialization plus the hop's delay: it crosses the peer's crossbar
/// on the way (a delay of its own serialization at the crossbar's rate), or the peer
/// forwards cut-through and takes it once its header is in (`Port::push_timed`); or the
/// peer belongs to another process of a parallel run (`Port::remote`).
const PEER_TIMING: u8 = 16;
/// Not a slow path: the port keeps its queued bytes per class (adaptive load balancing
/// reads them), which the common path need not.
const CLASS_BYTES: u8 = 32;
/// Control frames (flow control's pauses) wait to go ahead of the data.
const HAS_CONTROL: u8 = 64;
/// Not a slow path: the pFabric queue holds packets (kept here so that a packet passing
/// an idle pFabric port, and every transmission's "more to send?", need not load the
/// queue).
const PF_QUEUED: u8 = 128;
/// The bits that send a packet down the owner's full pipeline.
const SLOW: u8 = HAS_PFABRIC | HAS_NOTIF | HAS_DEQUEUE_MARK | PAUSED | HAS_CONTROL;

/// Why a port did not keep a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum DropReason {
    /// No room in the buffer (tail drop), nor in CP's allowance for a packet that may
    /// use it.
    Full,
    /// CP: a packet cut to its header here that did not fit the allowance either.
    Cut,
    /// pFabric: pushed out by a more urgent arrival.
    Displaced,
    /// pFabric: the arrival was the least urgent packet.
    Least,
    /// FastLane: a notification refused by the notification buffer's cap.
    Notification,
    /// A combined input/output-queued switch: no room in the input's buffer (with
    /// flow control, thresholds set too high for the buffer).
    Ingress,
}

pub const DROP_REASONS: usize = 6;

/// A packet a port has started on its link: who, its kind, and whether the port's
/// marker chose it as it left (CoDel marks at dequeue). Eight bytes: it travels in a
/// register.
#[derive(Debug, Clone, Copy)]
pub struct Sent {
    pub pkt: u32,
    pub kind: PktKind,
    pub mark: bool,
}

/// What a packet offered to a port's fast path became.
pub enum Offer {
    /// It started on the idle link at once (its kind).
    Sent(PktKind),
    /// It queued behind a busy link.
    Queued,
    /// Neither: the owner takes it through its full pipeline.
    Slow,
}

/// Laid out by cache line (64 B): the first holds all that a packet passing through an
/// idle port reads and writes but the sent counters; the second those counters, the
/// occupancy integral and, for classes 0-1, the FIFO heads and tails that a queued
/// packet needs; then the optional mechanisms and the rest. Every hop touches the
/// first two lines, and both are prefetched ([`Port::prefetch`]); the layout is
/// checked below (`LINE_*`). The sent counters, added on a line of their own (the
/// fourth), cost a miss a hop at 1,024 hosts: 14.5 M in 8 ms of fattree16_websearch.
#[repr(C, align(64))]
pub struct Port {
    busy_until: Ps,
    /// When the pending wake-up is due (an earlier, superseded one is ignored), or
    /// [`NO_WAKE`].
    wake_at: Ps,
    bytes: u64,
    capacity: u64,
    /// Packets admitted, and the most bytes ever queued (counted as if a packet that
    /// passes straight through had queued).
    enqueued: u64,
    max_bytes: u64,
    /// Exact picoseconds per byte at this rate, or 0 when not a whole number or too big
    /// for 16 bits (then `serialization` computes from `rate`).
    ps_per_byte: u16,
    /// Classes paused by flow control: dequeue passes them over.
    paused: u8,
    /// `delay` when it fits in 32 bits (4.29 ms), else u32::MAX: see [`Port::hop_delay`].
    delay32: u32,
    peer: u32,
    /// This link's port index at the peer (where a packet sent here arrives).
    peer_port: u16,
    nonempty: u8,
    /// HAS_* bits, so that the common path need not look at the boxes below.
    extras: u8,
    /// Packets and wire bytes this port started on its link (control frames aside).
    sent: u64,
    sent_bytes: u64,
    /// ∫ occupancy dt, in byte·ps, for the time average, up to `last_change`.
    area: u128,
    last_change: Ps,
    /// Threshold marking (`switch.ecn = "threshold"`): mark arrivals beyond K bytes.
    mark_above: Threshold,
    /// Per class, (head, tail) of its FIFO: side by side, so that an enqueue and a
    /// dequeue touch one line.
    fifo: [(u32, u32); CLASSES],
    /// Drops by [`DropReason`], and packets marked (or quenched) by the marker.
    drops: [u64; DROP_REASONS],
    marked: u64,
    /// Wire bytes of the packets dropped here, every reason.
    dropped_bytes: u64,
    /// `switch.queue = "pfabric"`: replaces the 8 FIFOs.
    pfabric: Option<Box<PFabricQueue>>,
    /// FastLane's notification queue (`switch.overflow = "fastlane"`).
    notif: Option<Box<NotifQueue>>,
    /// Marking as data leaves (`switch.ecn = "codel"` or `"red"`).
    at_dequeue: Option<Box<AtDequeue>>,
    rate: u64,
    /// To the peer's forwarding decision: the link's delay and the peer switch's
    /// forwarding delay (`LinkEnd::latency`).
    delay: Ps,
    /// The link's propagation delay alone (control frames).
    link_delay: Ps,
    /// The peer's crossbar rate when crossing it is a delay on the way (PEER_TIMING).
    crossbar_rate: u64,
    /// The peer forwards cut-through once this many bytes of a packet are in
    /// (PEER_TIMING); 0: it stores them whole.
    cut_header: u32,
    /// CP: payload-cut packets created here.
    cut: u64,
    /// Bytes queued per class, kept when CLASS_BYTES is set.
    class_bytes: [u64; CLASSES],
    /// Flow control at this port (`switch.flow_control`, and hosts' NICs with it).
    control: Option<Box<Control>>,
    /// The peer belongs to another logical process of a parallel run: what is sent here
    /// goes by the post (`Ctx::send_away`). Set with PEER_TIMING, so that the common
    /// path tests nothing more.
    remote: bool,
}

// What a hop touches is on the first two lines (see the struct's comment).
const LINE_0: usize = 64;
const _: () = assert!(std::mem::offset_of!(Port, extras) < LINE_0);
const _: () = assert!(std::mem::offset_of!(Port, paused) < LINE_0);
const _: () = assert!(std::mem::offset_of!(Port, peer_port) < LINE_0);
const _: () = assert!(std::mem::offset_of!(Port, sent) >= LINE_0);
const _: () = assert!(std::mem::offset_of!(Port, sent_bytes) + 8 <= 2 * LINE_0);
const _: () = assert!(std::mem::offset_of!(Port, fifo) + 16 <= 2 * LINE_0);

/// A port's flow-control state: the control frames waiting to go (ahead of all data,
/// after the frame on the wire), the pause frames it sent and received, and how long
/// each class has been paused.
#[derive(Debug, Default)]
pub struct Control {
    queue: std::collections::VecDeque<u32>,
    sent: u64,
    received: u64,
    /// Per class: when its current pause began, if paused.
    since: [Option<Ps>; CLASSES],
    /// Per class: time paused before the current pause.
    total: [Ps; CLASSES],
    /// The same for "some class paused".
    any_since: Option<Ps>,
    any_total: Ps,
}

/// Exact picoseconds per byte at `rate`, or 0 when not a whole number or too big.
fn ps_per_byte(rate: u64) -> u16 {
    if (8 * crate::units::PS_PER_S).is_multiple_of(rate) {
        u16::try_from(8 * crate::units::PS_PER_S / rate).unwrap_or(0)
    } else {
        0
    }
}

/// What a port reports (ports.parquet).
pub struct PortReport {
    pub peer: u32,
    pub capacity: u64,
    pub enqueued: u64,
    pub drops: [u64; DROP_REASONS],
    pub max_bytes: u64,
    pub mean_bytes: f64,
    pub rate: u64,
    pub marked: u64,
    pub notif: NotifStats,
    pub notif_capacity: u64,
    pub cut: u64,
    /// Flow control: pause frames sent and received here, and per class the time it
    /// was paused.
    pub pause_sent: u64,
    pub pause_received: u64,
    pub paused: [Ps; CLASSES],
    /// Flow control: the time some class was paused.
    pub paused_any: Ps,
    /// A combined input/output-queued switch: the most bytes its input buffer held.
    pub ingress_max_bytes: u64,
    /// Packets and wire bytes started on the link (control frames aside), wire bytes
    /// dropped.
    pub sent: u64,
    pub sent_bytes: u64,
    pub dropped_bytes: u64,
}

impl Port {
    /// A port at the near end of `link`, buffering `capacity` bytes.
    pub fn new(link: &LinkEnd, capacity: u64) -> Port {
        Port {
            busy_until: 0,
            wake_at: NO_WAKE,
            bytes: 0,
            capacity,
            enqueued: 0,
            max_bytes: 0,
            ps_per_byte: ps_per_byte(link.rate),
            paused: 0,
            delay32: u32::try_from(link.latency).unwrap_or(u32::MAX),
            peer: link.peer,
            peer_port: link.peer_port,
            nonempty: 0,
            extras: if link.crossbar_rate != 0 || link.cut_header != 0 {
                PEER_TIMING
            } else {
                0
            },
            area: 0,
            last_change: 0,
            mark_above: Threshold::OFF,
            fifo: [(NIL, NIL); CLASSES],
            drops: [0; DROP_REASONS],
            marked: 0,
            dropped_bytes: 0,
            sent: 0,
            sent_bytes: 0,
            pfabric: None,
            notif: None,
            at_dequeue: None,
            rate: link.rate,
            delay: link.latency,
            link_delay: link.delay,
            crossbar_rate: link.crossbar_rate,
            cut_header: link.cut_header,
            class_bytes: [0; CLASSES],
            control: None,
            cut: 0,
            remote: false,
        }
    }

    /// Installs the optional mechanisms (at construction).
    pub fn install(
        &mut self,
        pfabric: Option<Box<PFabricQueue>>,
        notif: Option<Box<NotifQueue>>,
        at_dequeue: Option<Box<AtDequeue>>,
        threshold: Threshold,
    ) {
        self.extras = (self.extras & (PEER_TIMING | CLASS_BYTES))
            | (pfabric.is_some() as u8 * HAS_PFABRIC)
            | (notif.is_some() as u8 * HAS_NOTIF)
            | (at_dequeue.is_some() as u8 * HAS_DEQUEUE_MARK);
        self.pfabric = pfabric;
        self.notif = notif;
        self.at_dequeue = at_dequeue;
        self.mark_above = threshold;
    }

    /// From the end of serialization to the peer's forwarding decision, from the first
    /// cache line when it fits.
    #[inline(always)]
    fn hop_delay(&self) -> Ps {
        if self.delay32 != u32::MAX {
            self.delay32 as Ps
        } else {
            self.delay
        }
    }

    /// A plain FIFO port: no pFabric queue, notification queue or CoDel, no class paused,
    /// no control frame waiting.
    #[inline]
    pub fn is_plain(&self) -> bool {
        debug_assert_eq!(
            self.extras & SLOW == 0,
            self.pfabric.is_none()
                && self.notif.is_none()
                && self.at_dequeue.is_none()
                && self.paused == 0
                && self.control.as_ref().is_none_or(|c| c.queue.is_empty())
        );
        self.extras & SLOW == 0
    }

    /// Give the port flow control: control frames and pause accounting.
    pub fn enable_flow_control(&mut self) {
        self.control = Some(Box::default());
    }

    /// Flow control: the classes in `mask` may start no new packet until resumed
    /// (a packet on the wire finishes). Paused time is counted per class from `now`.
    pub fn set_paused(&mut self, now: Ps, mask: u8) {
        if let Some(c) = self.control.as_mut() {
            match (c.any_since, mask != 0) {
                (None, true) => c.any_since = Some(now),
                (Some(t), false) => {
                    c.any_total += now - t;
                    c.any_since = None;
                }
                _ => {}
            }
            for k in 0..CLASSES {
                let on = mask & 1 << k != 0;
                match (c.since[k], on) {
                    (None, true) => c.since[k] = Some(now),
                    (Some(t), false) => {
                        c.total[k] += now - t;
                        c.since[k] = None;
                    }
                    _ => {}
                }
            }
        }
        self.paused = mask;
        self.extras = (self.extras & !PAUSED) | if mask != 0 { PAUSED } else { 0 };
    }

    /// The classes paused now.
    pub fn paused(&self) -> u8 {
        self.paused
    }

    /// Since when the port has had a class paused without a break (the earliest start
    /// among the classes paused now), if it has one.
    pub fn paused_since(&self) -> Option<Ps> {
        let c = self.control.as_ref()?;
        c.since.iter().flatten().min().copied()
    }

    /// The buffer's size.
    #[inline(always)]
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// A shared buffer's threshold for this port now (`switch.buffer_sharing`): what it
    /// may hold, set before each offer.
    #[inline]
    pub fn set_capacity(&mut self, bytes: u64) {
        self.capacity = bytes;
    }

    /// When the frame on the wire (if any) ends (tests).
    #[cfg(test)]
    pub fn busy_until(&self) -> Ps {
        self.busy_until
    }

    /// A pause frame reached this port (counted; its effect is [`Port::set_paused`]).
    pub fn count_pause_received(&mut self) {
        if let Some(c) = self.control.as_mut() {
            c.received += 1;
        }
    }

    /// Sends control frame `pkt` ahead of all queued data: at once if the link is free,
    /// else when the frame on the wire ends. The port must have flow control.
    pub fn send_control(&mut self, cx: &mut Ctx, node: u32, port: u32, pkt: u32) -> Option<Sent> {
        let c = self.control.as_mut().expect("a port with flow control");
        c.queue.push_back(pkt);
        c.sent += 1;
        self.extras |= HAS_CONTROL;
        if self.wake_at == NO_WAKE {
            if self.busy_until <= cx.now {
                return self.transmit_next(cx, node, port);
            }
            let t = self.busy_until;
            self.arm_wake(cx, node, port, t);
        } else if self.wake_at > self.busy_until.max(cx.now) {
            // A wake-up held back by a strict notification cap: control frames do not wait.
            let t = self.busy_until.max(cx.now);
            if t <= cx.now {
                self.wake_at = NO_WAKE;
                return self.transmit_next(cx, node, port);
            }
            self.arm_wake(cx, node, port, t);
        }
        None
    }

    // The optional mechanisms, from the flags in the port's first cache line: asking
    // the boxes themselves would load the port's last line for every packet.
    #[inline(always)]
    pub fn has_pfabric(&self) -> bool {
        self.extras & HAS_PFABRIC != 0
    }
    #[inline(always)]
    pub fn has_notif(&self) -> bool {
        self.extras & HAS_NOTIF != 0
    }
    #[inline(always)]
    pub fn marks_at_dequeue(&self) -> bool {
        self.extras & HAS_DEQUEUE_MARK != 0
    }

    /// The threshold marker's K (DCTCP), when one is on.
    #[inline(always)]
    pub fn threshold(&self) -> Threshold {
        self.mark_above
    }

    /// Bytes queued.
    #[inline(always)]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Keep the bytes queued per class from now on (for [`Port::drain_bytes`]).
    pub fn count_classes(&mut self) {
        debug_assert!(self.bytes == 0 && !self.has_pfabric());
        self.extras |= CLASS_BYTES;
    }

    /// DeTail §5.4's drain bytes of `class`: the bytes queued in it and the classes
    /// above it, which leave before a new packet of the class (strict priority). At a
    /// port that does not count by class ([`Port::count_classes`]), every byte queued.
    #[inline]
    pub fn drain_bytes(&self, class: u8) -> u64 {
        if self.extras & CLASS_BYTES == 0 {
            return self.bytes;
        }
        self.class_bytes[..=class as usize].iter().sum()
    }

    /// The node at the other end of the link.
    pub fn peer(&self) -> u32 {
        self.peer
    }

    /// FastLane's notification queue, at a port that has one.
    #[inline]
    pub fn notif_mut(&mut self) -> Option<&mut NotifQueue> {
        self.notif.as_deref_mut()
    }

    /// Start loading the port's first two lines (every hop touches both).
    #[inline(always)]
    pub fn prefetch(&self) {
        Port::prefetch_at(self as *const Port as usize);
    }

    /// [`Port::prefetch`] for the port at address `at` (which need not be read first).
    #[inline(always)]
    pub fn prefetch_at(at: usize) {
        prefetch(at as *const u8);
        prefetch(at.wrapping_add(64) as *const u8);
    }

    /// Nothing queued and the link free at `now`: a packet can start at once (on a plain
    /// port, where no class is paused).
    #[inline]
    fn idle_at(&self, now: Ps) -> bool {
        self.nonempty == 0 && self.busy_until <= now && self.wake_at == NO_WAKE
    }

    /// [`Port::enqueue`] immediately followed by [`Port::dequeue`] on an idle plain port:
    /// the same counters, without the FIFO round trip. False when the packet does not fit.
    #[inline]
    fn pass_through(&mut self, wire: u64) -> bool {
        // A plain port with no packet queued has no byte queued.
        debug_assert!(self.is_plain() && self.nonempty == 0 && self.bytes == 0);
        if wire > self.capacity {
            return false;
        }
        // No account(now): with nothing queued it adds nothing to the area, and
        // `last_change` matters only once bytes queue, which enqueue accounts first.
        self.max_bytes = self.max_bytes.max(wire);
        self.enqueued += 1;
        true
    }

    #[inline]
    fn account(&mut self, now: Ps) {
        let dt = now - self.last_change;
        self.area += self.bytes as u128 * dt as u128;
        self.last_change = now;
    }

    /// Time to serialize `bytes` on this port's link.
    #[inline]
    pub fn serialization(&self, bytes: u64) -> Ps {
        if self.ps_per_byte != 0 {
            bytes * self.ps_per_byte as u64
        } else {
            crate::units::serialization_ps(bytes, self.rate)
        }
    }

    /// The port's fast path, inlined where packets are offered: a plain port that is idle
    /// sends the packet at once; one that is busy and marks nothing queues it and waits
    /// for the link. Anything else (a full buffer, a marker, the optional mechanisms) is
    /// the owner's slow path.
    #[inline(always)]
    pub fn offer(&mut self, cx: &mut Ctx, node: u32, port: u32, pkt: u32) -> Offer {
        let now = cx.now;
        if self.is_plain() {
            if self.idle_at(now) {
                // Most packets find their port idle: they go at once, without the round
                // trip through the FIFO and kick (same counters, same order of effects).
                // Inlined at the call sites, this path makes no call but the event push.
                let h = *cx.pkts.hot(pkt);
                if self.pass_through(h.wire as u64) {
                    self.transmit(cx, node, port, pkt, h);
                    return Offer::Sent(h.kind);
                }
            } else if self.mark_above.is_off()
                && (self.busy_until > now || (self.wake_at != NO_WAKE && self.wake_at <= now))
                && self.enqueue(now, pkt, &mut cx.pkts.hot, 0)
            {
                // Most of the others queue at a busy port that marks nothing: exactly
                // the owner's plain slow path, without its call (~28 instructions a hop).
                // Under these conditions that path arms a wake-up at the end of the
                // current transmission when none is pending, and otherwise its `kick`
                // does nothing. A packet that does not fit goes on to be dropped there.
                if self.wake_at == NO_WAKE {
                    let t = self.busy_until;
                    self.arm_wake(cx, node, port, t);
                }
                return Offer::Queued;
            }
        } else if self.extras & (SLOW | PF_QUEUED) == HAS_PFABRIC
            && self.busy_until <= now
            && self.wake_at == NO_WAKE
        {
            // An empty pFabric port (no other mechanism, nothing paused) with its link
            // idle: the arrival would be admitted and served at once, so it goes as on
            // a plain port (same counters; no eviction, nothing to choose from).
            let h = *cx.pkts.hot(pkt);
            if self.pass_through_pfabric(h.wire as u64) {
                self.transmit(cx, node, port, pkt, h);
                return Offer::Sent(h.kind);
            }
        }
        Offer::Slow
    }

    /// [`Port::enqueue_pfabric`] immediately followed by [`Port::dequeue`] on an idle,
    /// empty pFabric port: the same counters. False when the packet does not fit (the
    /// slow path drops it).
    #[inline]
    fn pass_through_pfabric(&mut self, wire: u64) -> bool {
        debug_assert!(self.bytes == 0 && self.pfabric.as_ref().is_some_and(|q| q.is_empty()));
        if wire > self.capacity {
            return false;
        }
        // No account(now): with nothing queued it adds nothing, as in `pass_through`.
        self.max_bytes = self.max_bytes.max(wire);
        self.enqueued += 1;
        true
    }

    /// Tail-drop admission; returns false when the packet does not fit in the buffer
    /// plus `extra` bytes (CP's allowance; 0 otherwise). The caller counts the drop.
    #[inline]
    pub fn enqueue(&mut self, now: Ps, pkt: u32, hot: &mut [Hot], extra: u64) -> bool {
        let (wire, class) = {
            let h = &hot[pkt as usize];
            (h.wire as u64, h.class as usize)
        };
        if self.bytes + wire > self.capacity + extra {
            return false;
        }
        self.account(now);
        self.bytes += wire;
        if self.extras & CLASS_BYTES != 0 {
            self.class_bytes[class] += wire;
        }
        self.max_bytes = self.max_bytes.max(self.bytes);
        self.enqueued += 1;
        hot[pkt as usize].next = NIL;
        let f = &mut self.fifo[class];
        if f.0 == NIL {
            f.0 = pkt;
        } else {
            hot[f.1 as usize].next = pkt;
        }
        f.1 = pkt;
        self.nonempty |= 1 << class;
        true
    }

    /// pFabric admission: evicts lower-priority packets into `evicted` as needed (each
    /// counted here, [`DropReason::Displaced`]); false (and a drop counted,
    /// [`DropReason::Least`]) when the arriving packet is itself the victim.
    pub fn enqueue_pfabric(&mut self, cx: &mut Ctx, e: Entry, evicted: &mut Vec<Entry>) -> bool {
        self.account(cx.now);
        let q = self.pfabric.as_mut().expect("a pFabric port");
        let n = evicted.len();
        if !q.enqueue(e, &mut self.bytes, self.capacity, evicted) {
            self.count_drop(cx, DropReason::Least, e.pkt);
            return false;
        }
        let mut displaced_other = false;
        for v in &evicted[n..] {
            self.count_drop(cx, DropReason::Displaced, v.pkt);
            displaced_other |= v.flow != e.flow;
        }
        if displaced_other {
            // Turbo §4.1: it took another flow's place (a zombie if it dies later).
            cx.pkts.get_mut(e.pkt).journey |= BLOCKED;
        }
        self.extras |= PF_QUEUED;
        self.enqueued += 1;
        self.max_bytes = self.max_bytes.max(self.bytes);
        true
    }

    /// Counts a drop here (and in the run's counters), with its reason: every drop is
    /// counted in this one place.
    #[inline]
    pub fn count_drop(&mut self, cx: &mut Ctx, reason: DropReason, pkt: u32) {
        self.drops[reason as usize] += 1;
        if reason == DropReason::Notification {
            cx.counters.notifications_dropped += 1;
        } else {
            self.dropped_bytes += cx.pkts.hot(pkt).wire as u64;
            cx.counters.drops += 1;
            if reason == DropReason::Ingress {
                cx.counters.ingress_drops += 1;
            }
        }
    }

    /// Counts a mark by this port's marker (and in the run's counters).
    #[inline]
    pub fn count_mark(&mut self, cx: &mut Ctx) {
        self.marked += 1;
        cx.counters.ecn_marks += 1;
    }

    /// Counts a mark and sets CE on `pkt` when it is ECN-capable (switches that do not
    /// quench).
    #[inline]
    pub fn mark_ecn(&mut self, cx: &mut Ctx, pkt: u32) {
        self.count_mark(cx);
        if cx.pkts.get(pkt).ect {
            cx.pkts.get_mut(pkt).ce = true;
        }
    }

    /// What this port just started on its link: marked now if its dequeue marker chose it.
    #[inline(always)]
    pub fn mark_sent(&mut self, cx: &mut Ctx, sent: Option<Sent>) {
        if let Some(s) = sent.filter(|s| s.mark) {
            self.mark_ecn(cx, s.pkt);
        }
    }

    /// Counts a packet cut to its header here (CP).
    #[inline]
    pub fn count_cut(&mut self) {
        self.cut += 1;
    }

    /// The head of the highest-priority non-empty class that is not paused (pFabric: its
    /// own choice).
    #[inline]
    fn dequeue(&mut self, now: Ps, pkts: &mut Arena) -> Option<u32> {
        if self.extras & HAS_PFABRIC != 0 {
            self.account(now);
            let q = self.pfabric.as_mut().unwrap();
            let e = q.dequeue(&mut self.bytes, self.paused)?;
            if q.is_empty() {
                self.extras &= !PF_QUEUED;
            } else if q.others_queued(e.flow, e.class) {
                // Turbo §4.1: served ahead of another flow's packet (a zombie if it
                // dies later).
                pkts.get_mut(e.pkt).journey |= BLOCKED;
            }
            return Some(e.pkt);
        }
        let open = !self.paused;
        self.dequeue_fifo(now, &pkts.hot, open).map(|(pkt, _)| pkt)
    }

    /// [`Port::dequeue`] for a port known to have no pFabric queue, from the classes in
    /// `open` (a plain port passes them all), with the packet's hot part (read here
    /// anyway, for its sender); always inlined, as the one per packet that waited.
    #[inline(always)]
    fn dequeue_fifo(&mut self, now: Ps, hot: &[Hot], open: u8) -> Option<(u32, Hot)> {
        let ready = self.nonempty & open;
        if ready == 0 {
            return None;
        }
        let c = ready.trailing_zeros() as usize;
        let pkt = self.fifo[c].0;
        let h = &hot[pkt as usize];
        self.fifo[c].0 = h.next;
        if h.next == NIL {
            self.nonempty &= !(1 << c);
        }
        self.account(now);
        self.bytes -= h.wire as u64;
        if self.extras & CLASS_BYTES != 0 {
            self.class_bytes[c] -= h.wire as u64;
        }
        Some((pkt, *h))
    }

    /// No data waiting (notifications aside).
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        debug_assert_eq!(
            self.extras & PF_QUEUED != 0,
            self.pfabric.as_ref().is_some_and(|q| !q.is_empty())
        );
        self.nonempty == 0 && self.extras & PF_QUEUED == 0
    }

    /// Nothing at all to send: no data, notification or control frame (data of a
    /// paused class counts as something: the port wakes and finds it held).
    #[inline(always)]
    fn is_idle(&self) -> bool {
        self.is_empty()
            && self.extras & HAS_CONTROL == 0
            && (self.extras & HAS_NOTIF == 0 || self.notif.as_ref().is_none_or(|n| n.is_empty()))
    }

    /// Wake this port at `t`: `wake_at` names its one pending `PortFree` event, so a
    /// wake-up it supersedes is recognised (and ignored) when it pops.
    #[inline(always)]
    fn arm_wake(&mut self, cx: &mut Ctx, node: u32, port: u32, t: Ps) {
        self.wake_at = t;
        cx.push(t, Ev::PortFree { node, port });
    }

    /// Something was queued: start it now if the link is free.
    #[inline(always)]
    pub fn kick(&mut self, cx: &mut Ctx, node: u32, port: u32) -> Option<Sent> {
        let now = cx.now;
        if self.wake_at != NO_WAKE {
            // A wake-up beyond the end of the current transmission only waits for the
            // notification cap (strict FastLane): data need not wait for it. If the link
            // is idle, use it now; if busy, wake when it frees (the later wake-up is
            // superseded and ignored).
            if self.wake_at > now && self.wake_at > self.busy_until {
                if self.busy_until <= now {
                    self.wake_at = NO_WAKE;
                    return self.transmit_next(cx, node, port);
                } else {
                    let t = self.busy_until;
                    self.arm_wake(cx, node, port, t);
                }
            }
            return None;
        }
        if self.busy_until <= now {
            self.transmit_next(cx, node, port)
        } else {
            let t = self.busy_until;
            self.arm_wake(cx, node, port, t);
            None
        }
    }

    /// A queued packet was admitted: arm the wake-up for the end of the current
    /// transmission if none is pending, or start it now (the plain path's tail).
    #[inline(always)]
    pub fn queued(&mut self, cx: &mut Ctx, node: u32, port: u32) -> Option<Sent> {
        if self.wake_at == NO_WAKE && self.busy_until > cx.now {
            let t = self.busy_until;
            self.arm_wake(cx, node, port, t);
            None
        } else {
            self.kick(cx, node, port)
        }
    }

    /// The `PortFree` event of this port at `time`: unless superseded, the next packet
    /// goes.
    #[inline(always)]
    pub fn on_wake(&mut self, cx: &mut Ctx, node: u32, port: u32, time: Ps) -> Option<Sent> {
        // Superseded wake-ups (see `kick`) are ignored.
        if self.wake_at != time {
            return None;
        }
        self.wake_at = NO_WAKE;
        if self.is_plain() {
            // `transmit_next` for a plain FIFO port, without the call: the head of the
            // FIFO goes (one is there: nothing else takes).
            let (pkt, h) = self.dequeue_fifo(time, &cx.pkts.hot, u8::MAX)?;
            self.transmit(cx, node, port, pkt, h);
            Some(Sent {
                pkt,
                kind: h.kind,
                mark: false,
            })
        } else {
            self.transmit_next(cx, node, port)
        }
    }

    /// The link is free: the next packet goes (a notification the cap allows first, then
    /// data by class; CoDel decides on a mark as data leaves).
    fn transmit_next(&mut self, cx: &mut Ctx, node: u32, port: u32) -> Option<Sent> {
        let now = cx.now;
        if self.extras & HAS_CONTROL != 0 {
            let c = self.control.as_mut().expect("control frames queued");
            let pkt = c.queue.pop_front().expect("control frames queued");
            if c.queue.is_empty() {
                self.extras &= !HAS_CONTROL;
            }
            let h = *cx.pkts.hot(pkt);
            self.transmit_control(cx, node, port, pkt, h);
            return Some(Sent {
                pkt,
                kind: h.kind,
                mark: false,
            });
        }
        let data_waiting = !self.is_empty();
        let mut mark = false;
        let pkt = if self.has_notif()
            && self
                .notif
                .as_ref()
                .is_some_and(|n| n.ready(now, data_waiting))
        {
            let ser = self.serialization(NOTIFICATION_FRAME as u64);
            self.notif.as_mut().unwrap().pop(now, ser).unwrap()
        } else if let Some(pkt) = self.dequeue(now, &mut cx.pkts) {
            // The hot part says what it is (read anyway, to send it); only CoDel needs
            // the packet's cold part (its enqueue time).
            if self.marks_at_dequeue() && cx.pkts.hot(pkt).kind == PktKind::Data {
                // RFC 8289 `dodequeue` (and Linux), and the HPCC simulator's RED and
                // telemetry, look at what stays behind.
                let backlog = self.bytes;
                match self.at_dequeue.as_deref_mut().expect("a marking port") {
                    AtDequeue::Telemetry => {
                        // HPCC §4.2: the bytes sent before this packet and the queue it
                        // leaves, as the HPCC simulator stamps them at dequeue. Every data
                        // packet of a run whose ports stamp carries the header.
                        debug_assert!(cx.pkts.get(pkt).journey & CARRIES_INT != 0);
                        let hop = IntHop {
                            ts: now,
                            tx_bytes: self.sent_bytes,
                            qlen: backlog,
                            rate: self.rate,
                        };
                        cx.pkts.push_int(pkt, hop);
                    }
                    AtDequeue::Red(r) => mark = r.on_dequeue(backlog),
                    AtDequeue::Codel(c) => {
                        let sojourn = now.saturating_sub(cx.pkts.get(pkt).enq);
                        mark = c.on_dequeue(now, sojourn, backlog);
                    }
                }
            }
            pkt
        } else {
            // Only notifications wait, held back by a strict cap: wake when it allows.
            if let Some(n) = self.notif.as_ref().filter(|n| !n.is_empty()) {
                let t = n.next_ok().max(now);
                self.arm_wake(cx, node, port, t);
            }
            return None;
        };
        let h = *cx.pkts.hot(pkt);
        self.transmit(cx, node, port, pkt, h);
        Some(Sent {
            pkt,
            kind: h.kind,
            mark,
        })
    }

    /// `pkt` (hot part `h`) starts on this port's link now: schedule its arrival at the
    /// peer and the port's next wake-up.
    #[inline(always)]
    fn transmit(&mut self, cx: &mut Ctx, node: u32, port: u32, pkt: u32, h: Hot) {
        let now = cx.now;
        let (wire, dst, hash) = (h.wire, h.dst, h.hash);
        let done = now + self.serialization(wire as u64);
        self.busy_until = done;
        let (peer, peer_port) = (self.peer, self.peer_port);
        let delay = self.hop_delay();
        if !self.is_idle() {
            // Data, or notifications allowed on an idle link, can follow at once; only a
            // strict cap makes lone notifications wait longer.
            let notif = if self.has_notif() {
                self.notif.as_ref()
            } else {
                None
            };
            let at = match notif {
                Some(n) if self.is_empty() && n.strict() => done.max(n.next_ok()),
                _ => done,
            };
            self.arm_wake(cx, node, port, at);
        }
        cx.counters.packet_hops += 1;
        self.sent += 1;
        self.sent_bytes += wire as u64;
        let egress = if peer >= cx.fabric.hosts() {
            cx.forwarding
                .fixed_egress(cx.fabric.routes(), peer, dst, hash)
        } else {
            ROUTE_ON_ARRIVAL
        };
        if self.extras & PEER_TIMING != 0 {
            self.push_timed(cx, pkt, h.wire, done, delay, egress);
            return;
        }
        cx.push(
            done + delay,
            Ev::Arrive {
                node: peer,
                pkt,
                port: peer_port,
                egress,
            },
        );
    }

    /// [`Port::transmit`]'s event on a link with PEER_TIMING: the packet arrives after
    /// crossing the peer's crossbar (its serialization at the crossbar's rate more), or
    /// at a peer that cuts through its header arrives, `serialization - header time`
    /// before the end of its serialization (a header as long as the packet: at its end).
    /// Out of line, so that the common path only tests for it.
    #[inline(never)]
    fn push_timed(&self, cx: &mut Ctx, pkt: u32, wire: u16, done: Ps, delay: Ps, egress: u16) {
        let (node, port) = (self.peer, self.peer_port);
        let wire = wire as u64;
        if self.cut_header != 0 {
            let rest =
                self.serialization(wire) - self.serialization(wire.min(self.cut_header as u64));
            let ev = Ev::Header {
                node,
                pkt,
                port,
                egress,
            };
            self.deliver(cx, done - rest + delay, ev);
        } else {
            let crossing = if self.crossbar_rate != 0 {
                crate::units::serialization_ps(wire, self.crossbar_rate)
            } else {
                0
            };
            let ev = Ev::Arrive {
                node,
                pkt,
                port,
                egress,
            };
            self.deliver(cx, done + crossing + delay, ev);
        }
    }

    /// Queues `ev` for the peer: here, or by the post when the peer is another
    /// process's.
    #[inline]
    fn deliver(&self, cx: &mut Ctx, time: Ps, ev: Ev) {
        if self.remote {
            cx.send_away(time, ev);
        } else {
            cx.push(time, ev);
        }
    }

    /// The peer belongs to another logical process of a parallel run.
    pub fn set_remote(&mut self) {
        self.remote = true;
        self.extras |= PEER_TIMING;
    }

    /// Nothing at all to send or waiting, the link free at `now` and no class paused: a
    /// packet offered now starts at once, whatever the pipeline (a cut-through switch
    /// may start it before its tail is in).
    #[inline]
    pub fn idle_for_cut_through(&self, now: Ps) -> bool {
        self.is_idle() && self.busy_until <= now && self.wake_at == NO_WAKE && self.paused == 0
    }

    /// Control frame `pkt` starts on the link now: it reaches the peer's MAC after the
    /// link's delay (no forwarding engine, no crossbar), and is not a packet-hop.
    fn transmit_control(&mut self, cx: &mut Ctx, node: u32, port: u32, pkt: u32, h: Hot) {
        let done = cx.now + self.serialization(h.wire as u64);
        self.busy_until = done;
        if !self.is_idle() {
            self.arm_wake(cx, node, port, done);
        }
        let ev = Ev::Arrive {
            node: self.peer,
            pkt,
            port: self.peer_port,
            egress: ROUTE_ON_ARRIVAL,
        };
        self.deliver(cx, done + self.link_delay, ev);
    }

    /// Data waits here for a wake-up later than the end of the current transmission (a
    /// lapse of work conservation): the wake-up and when the link is free (tests).
    #[cfg(test)]
    pub fn waiting_past_free(&self, now: Ps) -> Option<(Ps, Ps)> {
        let free = self.busy_until.max(now);
        (!self.is_empty() && self.wake_at > free).then_some((self.wake_at, free))
    }

    pub fn mean_bytes(&self, now: Ps) -> f64 {
        if now == 0 {
            return 0.0;
        }
        let area = self.area + self.bytes as u128 * (now - self.last_change) as u128;
        area as f64 / now as f64
    }

    /// What this port reports at time `now`.
    pub fn report(&self, now: Ps) -> PortReport {
        PortReport {
            peer: self.peer,
            capacity: self.capacity,
            enqueued: self.enqueued,
            drops: self.drops,
            max_bytes: self.max_bytes,
            mean_bytes: self.mean_bytes(now),
            rate: self.rate,
            marked: self.marked,
            notif: self
                .notif
                .as_ref()
                .map(|n| n.stats().clone())
                .unwrap_or_default(),
            notif_capacity: self.notif.as_ref().map_or(0, |n| n.capacity()),
            cut: self.cut,
            pause_sent: self.control.as_ref().map_or(0, |c| c.sent),
            pause_received: self.control.as_ref().map_or(0, |c| c.received),
            paused: self.control.as_ref().map_or([0; CLASSES], |c| {
                std::array::from_fn(|k| c.total[k] + c.since[k].map_or(0, |t| now - t))
            }),
            paused_any: self
                .control
                .as_ref()
                .map_or(0, |c| c.any_total + c.any_since.map_or(0, |t| now - t)),
            ingress_max_bytes: 0,
            sent: self.sent,
            sent_bytes: self.sent_bytes,
            dropped_bytes: self.dropped_bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Scenario;
    use crate::engine::queue::EventQueue;
    use crate::fabric::Fabric;
    use crate::packet::Packet;
    use crate::switch::forwarding::Forwarder;

    /// A star's switch port toward host 0, with its context.
    fn port() -> (Ctx, Port, u32) {
        let sc = Scenario::parse("[topology]\nkind = \"star\"\nhosts = 2", &[], None).unwrap();
        let fabric = Fabric::build(&sc.topology, &sc.routes, sc.switch.timing, 1).unwrap();
        let fwd = Forwarder::new(sc.switch.forwarding, fabric.routes());
        let cx = Ctx::new(EventQueue::new(), fabric, fwd);
        let node = cx.fabric.hosts();
        let end = cx.fabric.ports(node)[0];
        (cx, Port::new(&end, 1 << 20), node)
    }

    fn packet(cx: &mut Ctx, class: u8) -> u32 {
        cx.pkts
            .alloc(Packet::new(PktKind::Data, 0, 0, 1, 0, class, 1538, 7))
    }

    /// A paused class starts nothing new (the packet on the wire finishes); the other
    /// classes go by; resumed, it goes.
    #[test]
    fn a_paused_class_waits_and_the_others_go() {
        let (mut cx, mut p, node) = port();
        let first = packet(&mut cx, 1);
        assert!(matches!(p.offer(&mut cx, node, 0, first), Offer::Sent(_)));
        let (hi, lo) = (packet(&mut cx, 0), packet(&mut cx, 1));
        for pkt in [hi, lo] {
            assert!(matches!(p.offer(&mut cx, node, 0, pkt), Offer::Queued));
        }
        p.set_paused(cx.now, 0b01);
        assert!(!p.is_plain(), "a pause takes the slow paths");
        let t = p.busy_until;
        cx.now = t;
        let sent = p.on_wake(&mut cx, node, 0, t).expect("class 1 may go");
        assert_eq!(sent.pkt, lo, "class 0 is paused: class 1 goes first");
        // The link frees: its wake-up finds only the paused class waiting.
        let t = p.busy_until;
        cx.now = t;
        assert!(
            p.on_wake(&mut cx, node, 0, t).is_none(),
            "only the paused class waits"
        );
        assert!(!p.is_empty());
        // Resuming kicks the port (as flow control will).
        p.set_paused(cx.now, 0);
        assert!(p.is_plain());
        let sent = p.kick(&mut cx, node, 0).expect("resumed");
        assert_eq!(sent.pkt, hi);
        assert!(p.is_empty());
    }
}
