//! A port: a byte-bounded buffer shared by 8 strict-priority classes (class 0 highest)
//! with tail drop, or a pFabric queue, and the link it transmits on.

use crate::packet::{Hot, NIL};
use crate::switch::discipline::pfabric::{Entry, PFabricQueue};
use crate::switch::marking::codel::Codel;
use crate::switch::overflow::fastlane::NotifQueue;
use crate::units::Ps;

pub const CLASSES: usize = 8;

/// Per-port drop and mark counters, exported in summary.json (the others are kept in
/// `Port`, in the cache line their updates touch anyway).
#[derive(Debug, Clone, Default)]
pub struct PortStats {
    pub dropped: u64,
    /// Packets CE-marked (or quenched) by the port's marker.
    pub marked: u64,
}

/// `Port::wake_at` when no wake-up is pending.
pub const NO_WAKE: Ps = Ps::MAX;

/// `Port::extras` bits: which optional mechanisms the port has.
const HAS_PFABRIC: u8 = 1;
const HAS_NOTIF: u8 = 2;
const HAS_CODEL: u8 = 4;

/// An egress port: 8 strict-priority FIFOs sharing `capacity` bytes, tail drop.
/// The FIFOs are intrusive lists through the packets' hot headers.
///
/// Laid out by cache line (64 B): the first holds all that a packet passing through an
/// idle port reads and writes (most hops touch no other line of the port), then the
/// occupancy integral and, for classes 0-3, FIFO heads and tails that a queued packet
/// needs, then the optional mechanisms and the rest.
#[repr(C, align(64))]
pub struct Port {
    pub busy_until: Ps,
    /// When the pending wake-up is due (an earlier, superseded one is ignored), or
    /// [`NO_WAKE`].
    pub wake_at: Ps,
    pub bytes: u64,
    pub capacity: u64,
    /// Packets admitted, and the most bytes ever queued (counted as if a packet that
    /// passes straight through had queued).
    pub enqueued: u64,
    pub max_bytes: u64,
    /// Exact picoseconds per byte at this rate, or 0 when not a whole number or too big
    /// for 32 bits (then `serialization` computes from `rate`).
    ps_per_byte: u32,
    /// `delay` when it fits in 32 bits (4.29 ms), else u32::MAX: see [`Port::hop_delay`].
    delay32: u32,
    pub peer: u32,
    /// This link's port index at the peer (where a packet sent here arrives).
    pub peer_port: u16,
    nonempty: u8,
    /// HAS_* bits, so that the common path need not look at the boxes below.
    extras: u8,
    /// ∫ occupancy dt, in byte·ps, for the time average, up to `last_change`.
    area: u128,
    last_change: Ps,
    /// Threshold marking (`switch.ecn = "threshold"`): mark arrivals beyond K bytes.
    pub mark_above: u64,
    /// Per class, (head, tail) of its FIFO: side by side, so that an enqueue and a
    /// dequeue touch one line.
    fifo: [(u32, u32); CLASSES],
    pub stats: PortStats,
    /// `switch.queue = "pfabric"`: replaces the 8 FIFOs.
    pub pfabric: Option<Box<PFabricQueue>>,
    /// FastLane's notification queue (`switch.overflow = "fastlane"`).
    pub notif: Option<Box<NotifQueue>>,
    /// CoDel marking (`switch.ecn = "codel"`).
    pub codel: Option<Box<Codel>>,
    pub rate: u64,
    pub delay: Ps,
    /// CP: payload-cut packets created here and those refused by the extra allowance.
    pub cut: u64,
    pub cut_dropped: u64,
}

// The first cache line must hold the pass-through fields, the second the queueing ones
// of classes 0-3 (see above).
const _: () = assert!(std::mem::offset_of!(Port, extras) < 64);
const _: () = assert!(std::mem::offset_of!(Port, fifo) + 4 * 8 == 128);

/// Exact picoseconds per byte at `rate`, or 0 when not a whole number or too big.
fn ps_per_byte(rate: u64) -> u32 {
    if (8 * crate::units::PS_PER_S).is_multiple_of(rate) {
        u32::try_from(8 * crate::units::PS_PER_S / rate).unwrap_or(0)
    } else {
        0
    }
}

impl Port {
    pub fn new(peer: u32, peer_port: u16, rate: u64, delay: Ps, capacity: u64) -> Port {
        let ps_per_byte = ps_per_byte(rate);
        Port {
            busy_until: 0,
            wake_at: NO_WAKE,
            bytes: 0,
            capacity,
            enqueued: 0,
            max_bytes: 0,
            ps_per_byte,
            delay32: u32::try_from(delay).unwrap_or(u32::MAX),
            peer,
            peer_port,
            nonempty: 0,
            extras: 0,
            area: 0,
            last_change: 0,
            mark_above: u64::MAX,
            fifo: [(NIL, NIL); CLASSES],
            stats: PortStats::default(),
            pfabric: None,
            notif: None,
            codel: None,
            rate,
            delay,
            cut: 0,
            cut_dropped: 0,
        }
    }

    /// The link's propagation delay, from the first cache line when it fits.
    #[inline(always)]
    pub fn hop_delay(&self) -> Ps {
        if self.delay32 != u32::MAX {
            self.delay32 as Ps
        } else {
            self.delay
        }
    }

    /// Installs the optional mechanisms (at construction).
    pub fn set_extras(
        &mut self,
        pfabric: Option<Box<PFabricQueue>>,
        notif: Option<Box<NotifQueue>>,
        codel: Option<Box<Codel>>,
    ) {
        self.extras = (pfabric.is_some() as u8 * HAS_PFABRIC)
            | (notif.is_some() as u8 * HAS_NOTIF)
            | (codel.is_some() as u8 * HAS_CODEL);
        self.pfabric = pfabric;
        self.notif = notif;
        self.codel = codel;
    }

    /// A plain FIFO port: no pFabric queue, notification queue or CoDel.
    #[inline]
    pub fn is_plain(&self) -> bool {
        debug_assert_eq!(
            self.extras == 0,
            self.pfabric.is_none() && self.notif.is_none() && self.codel.is_none()
        );
        self.extras == 0
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
    pub fn has_codel(&self) -> bool {
        self.extras & HAS_CODEL != 0
    }

    /// Nothing queued and the link free at `now`: a packet can start at once.
    #[inline]
    pub fn idle_at(&self, now: Ps) -> bool {
        self.nonempty == 0 && self.busy_until <= now && self.wake_at == NO_WAKE
    }

    /// [`Port::enqueue`] immediately followed by [`Port::dequeue`] on an idle plain port:
    /// the same counters, without the FIFO round trip. False when the packet does not fit.
    #[inline]
    pub fn pass_through(&mut self, wire: u64) -> bool {
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

    /// Transmit at `rate` bit/s instead (`topology.clock_ppm`: this port's clock).
    pub fn set_rate(&mut self, rate: u64) {
        self.rate = rate;
        self.ps_per_byte = ps_per_byte(rate);
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

    /// pFabric admission: evicts lower-priority packets into `evicted` as needed;
    /// false (and a counted drop) when the arriving packet is itself the victim.
    pub fn enqueue_pfabric(&mut self, now: Ps, e: Entry, evicted: &mut Vec<Entry>) -> bool {
        self.account(now);
        let q = self.pfabric.as_mut().expect("a pFabric port");
        let n = evicted.len();
        if !q.enqueue(e, &mut self.bytes, self.capacity, evicted) {
            self.stats.dropped += 1;
            return false;
        }
        self.stats.dropped += (evicted.len() - n) as u64;
        self.enqueued += 1;
        self.max_bytes = self.max_bytes.max(self.bytes);
        true
    }

    /// The head of the highest-priority non-empty class (pFabric: its own choice).
    #[inline]
    pub fn dequeue(&mut self, now: Ps, hot: &[Hot]) -> Option<u32> {
        if self.extras & HAS_PFABRIC != 0 {
            self.account(now);
            let q = self.pfabric.as_mut().unwrap();
            return q.dequeue(&mut self.bytes).map(|e| e.pkt);
        }
        self.dequeue_fifo(now, hot).map(|(pkt, _)| pkt)
    }

    /// [`Port::dequeue`] for a port known to have no pFabric queue, with the packet's
    /// hot part (read here anyway, for its sender); always inlined, as the one per
    /// packet that waited.
    #[inline(always)]
    pub fn dequeue_fifo(&mut self, now: Ps, hot: &[Hot]) -> Option<(u32, Hot)> {
        if self.nonempty == 0 {
            return None;
        }
        let c = self.nonempty.trailing_zeros() as usize;
        let pkt = self.fifo[c].0;
        let h = &hot[pkt as usize];
        self.fifo[c].0 = h.next;
        if h.next == NIL {
            self.nonempty &= !(1 << c);
        }
        self.account(now);
        self.bytes -= h.wire as u64;
        Some((pkt, *h))
    }

    /// No data waiting (notifications aside).
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.nonempty == 0
            && (self.extras & HAS_PFABRIC == 0
                || self.pfabric.as_ref().is_none_or(|q| q.is_empty()))
    }

    /// Nothing at all to send: no data and no notification.
    #[inline(always)]
    pub fn is_idle(&self) -> bool {
        self.is_empty()
            && (self.extras & HAS_NOTIF == 0 || self.notif.as_ref().is_none_or(|n| n.is_empty()))
    }

    pub fn mean_bytes(&self, now: Ps) -> f64 {
        if now == 0 {
            return 0.0;
        }
        let area = self.area + self.bytes as u128 * (now - self.last_change) as u128;
        area as f64 / now as f64
    }
}
