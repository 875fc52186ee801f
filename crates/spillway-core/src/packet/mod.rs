//! Packets: common fields plus what each kind's header carries, in an arena of indices.
//!
//! A packet is split in two: [`Hot`], the 16 bytes forwarding and queueing read at every
//! hop, and [`Packet`], the whole packet, read where it is made and where it is delivered.
//! Both live in the [`Arena`] and are referred to by index: no per-packet allocation.

use crate::units::Ps;
use int::{IntHop, IntStack};

pub mod cut;
pub mod int;
pub mod notification;
pub mod pause;
pub mod quench;
pub mod tcp;
pub mod wire;

pub const MAX_SACK: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum PktKind {
    Data,
    Ack,
    /// Header-only probe (pFabric §4.3 probe mode, FastLane §3.4.2), echoed by the
    /// destination's NIC as a `ProbeAck`.
    Probe,
    ProbeAck,
    /// FastLane drop notification (FastLane §3.2), addressed to the dropped packet's source.
    Notify,
    /// ICMP Source Quench (FastLane §2.2.1).
    Quench,
    /// Flow control: a pause or resume frame to the link's other end (`pause.rs`).
    Pause,
    /// A Fastpass control protocol message between an endpoint and an arbiter, or
    /// between arbiters (host/fastpass/channel.rs keeps the message; `seq` is its id).
    Fcp,
    /// The ping workload's request (`host/ping.rs`), answered by the destination's NIC
    /// with a `PingReply` of the same size; `seq` numbers it, `ts` is its send time.
    Ping,
    PingReply,
}

/// [`Packet::journey`]: its source host has sent it and no host has received it yet.
pub const IN_NETWORK: u8 = 1;
/// [`Packet::journey`]: it was served ahead of another flow's packet, or took its place,
/// at some pFabric queue on its way (Turbo §4.1: dropped later, it is a zombie).
pub const BLOCKED: u8 = 2;
/// [`Packet::journey`]: it carries HPCC's telemetry header (`packet/int.rs`), its records
/// in the arena beside it ([`Arena::int`]).
pub const CARRIES_INT: u8 = 4;

#[derive(Debug, Clone)]
pub struct Packet {
    pub flow_slot: u32,
    pub flow_id: u64,
    pub src: u32,
    pub dst: u32,
    pub kind: PktKind,
    pub class: u8,
    /// Data: this packet is a retransmission. Ack: it echoes one (Karn's rule).
    pub retx: bool,
    pub nsack: u8,
    /// Bytes on the wire: IP packet + framing.
    pub wire: u32,
    /// Payload bytes (data).
    pub len: u32,
    /// Data: first byte. Ack: cumulative ACK (next byte expected).
    pub seq: u64,
    /// Data: when it was sent. Ack: the echoed send time of the data it acknowledges.
    pub ts: Ps,
    pub sack: [(u64, u64); MAX_SACK],
    /// Fixed per flow: the 5-tuple hash ECMP uses.
    pub hash: u64,
    /// pFabric priority: lower is more urgent (remaining bytes); 0 for ACKs.
    pub prio: u64,
    /// FastLane timeout-epoch option (§3.4.1): the sender's timeouts so far.
    pub epoch: u16,
    /// ECN: ECN-capable transport; congestion experienced; (ACK) echo of CE.
    pub ect: bool,
    pub ce: bool,
    pub ece: bool,
    /// Notify / Quench: the kind of the packet it reports.
    pub orig: PktKind,
    /// ACK: FastLane's multipath option, out-of-order bytes held above `seq` (§3.4.1).
    /// (32 bits: a window's worth; keeps the packet at 152 bytes.)
    pub ooo: u32,
    /// When it joined its current queue (CoDel's sojourn time).
    pub enq: Ps,
    /// CP bits (CP §5.1): CP-available and precise-packet-loss. Data (1, 0) is
    /// CP-enabled, (1, 1) payload-cut; an ACK with `ppl` is a PACK.
    pub cpa: bool,
    pub ppl: bool,
    /// ACK: D-SACK flag (`AckInfo::dsack`).
    pub dsack: bool,
    /// Data: what has happened to it on its way, bits [`IN_NETWORK`] and [`BLOCKED`]; data
    /// and ACKs: [`CARRIES_INT`] (one byte, which keeps the packet at 152 bytes).
    pub journey: u8,
    /// PACK option (CP §4.3): the lost block with its edges swapped, (right, left).
    pub pack: (u64, u64),
    /// At a combined input/output-queued switch with FIFO inputs: the output it waits
    /// for (a virtual output queue knows its own).
    pub hop_egress: u16,
}

impl Packet {
    /// A packet of `kind` with every option field at its neutral value.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        kind: PktKind,
        flow_slot: u32,
        flow_id: u64,
        src: u32,
        dst: u32,
        class: u8,
        wire: u32,
        hash: u64,
    ) -> Packet {
        Packet {
            flow_slot,
            flow_id,
            src,
            dst,
            kind,
            class,
            retx: false,
            nsack: 0,
            wire,
            len: 0,
            seq: 0,
            ts: 0,
            sack: [(0, 0); MAX_SACK],
            hash,
            prio: 0,
            epoch: 0,
            ect: false,
            ce: false,
            ece: false,
            orig: kind,
            ooo: 0,
            enq: 0,
            cpa: false,
            ppl: false,
            dsack: false,
            journey: 0,
            pack: (0, 0),
            hop_egress: 0,
        }
    }

    /// Payload bytes a data packet carries: none once CP has cut it (`ppl`).
    #[inline]
    pub fn payload(&self) -> u64 {
        if self.ppl {
            0
        } else {
            self.len as u64
        }
    }
}

/// What forwarding and queueing read at every hop, kept apart from the rest of the
/// packet so that the hot path touches 16 bytes per packet, not a whole packet: four to
/// a cache line and none across two (the flow slot, read as a packet leaves its
/// source, is in the cold part, beside the flow id read with it).
#[derive(Debug, Clone, Copy)]
#[repr(align(16))]
pub struct Hot {
    pub dst: u32,
    /// ECMP hash of the flow's 5-tuple.
    pub hash: u32,
    /// Next packet in the same port queue (intrusive list), or NIL.
    pub(crate) next: u32,
    pub wire: u16,
    pub class: u8,
    pub kind: PktKind,
}

/// No packet: the end of a queue's intrusive list.
pub const NIL: u32 = u32::MAX;

/// A hint to start loading the cache line at `p` (nothing on other targets).
#[inline(always)]
pub fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

const _: () = assert!(std::mem::size_of::<Hot>() == 16);
// The cold part's size sets the arena's footprint (docs/performance.md): a field added
// here should not grow it.
const _: () = assert!(std::mem::size_of::<Packet>() == 152);

/// Packet arena with a free list: no per-packet heap allocation in steady state.
/// `hot[i]` holds the per-hop fields of packet i, `cold[i]` the whole packet.
#[derive(Default)]
pub struct Arena {
    pub hot: Vec<Hot>,
    cold: Vec<Packet>,
    free: Vec<u32>,
    /// HPCC's telemetry of the packets that carry it ([`CARRIES_INT`]), by index: kept
    /// apart so that the packets of every other transport stay 152 bytes, and empty
    /// unless some flow runs HPCC.
    int: Vec<IntStack>,
}

impl Arena {
    #[inline(always)]
    pub fn alloc(&mut self, p: Packet) -> u32 {
        let h = Hot {
            dst: p.dst,
            hash: p.hash as u32,
            next: NIL,
            wire: p.wire as u16,
            class: p.class,
            kind: p.kind,
        };
        self.store(h, p)
    }

    /// Packet `p` with hot part `h` into a free slot (or a new one).
    #[inline(always)]
    fn store(&mut self, h: Hot, p: Packet) -> u32 {
        if let Some(i) = self.free.pop() {
            self.hot[i as usize] = h;
            self.cold[i as usize] = p;
            i
        } else {
            self.hot.push(h);
            self.cold.push(p);
            (self.cold.len() - 1) as u32
        }
    }
    #[inline]
    pub fn free(&mut self, i: u32) {
        self.free.push(i);
    }
    #[inline]
    pub fn hot(&self, i: u32) -> &Hot {
        &self.hot[i as usize]
    }
    #[inline]
    pub fn get(&self, i: u32) -> &Packet {
        &self.cold[i as usize]
    }
    /// Start loading packet i's lines (hot part, and the whole packet if `cold`).
    #[inline(always)]
    pub fn prefetch(&self, i: u32, cold: bool) {
        if let Some(h) = self.hot.get(i as usize) {
            prefetch(h as *const Hot as *const u8);
        }
        if cold {
            if let Some(p) = self.cold.get(i as usize) {
                let b = p as *const Packet as *const u8;
                let mut off = 0;
                while off < std::mem::size_of::<Packet>() {
                    prefetch(b.wrapping_add(off));
                    off += 64;
                }
            }
        }
    }
    #[inline]
    pub fn get_mut(&mut self, i: u32) -> &mut Packet {
        &mut self.cold[i as usize]
    }
    /// Stores a copy of a packet that came from another process, its hot part as it
    /// was there: copied once, from the post straight into its slot.
    pub fn put(&mut self, h: &Hot, p: &Packet) -> u32 {
        let h = Hot { next: NIL, ..*h };
        if let Some(i) = self.free.pop() {
            self.hot[i as usize] = h;
            self.cold[i as usize].clone_from(p);
            i
        } else {
            self.hot.push(h);
            self.cold.push(p.clone());
            (self.cold.len() - 1) as u32
        }
    }

    /// Rewrites packet i as `p` (FastLane turns a victim into a notification in place).
    pub fn replace(&mut self, i: u32, p: Packet) {
        let next = self.hot[i as usize].next;
        self.hot[i as usize] = Hot {
            dst: p.dst,
            hash: p.hash as u32,
            next,
            wire: p.wire as u16,
            class: p.class,
            kind: p.kind,
        };
        self.cold[i as usize] = p;
    }
    pub fn live(&self) -> usize {
        self.cold.len() - self.free.len()
    }
    /// Every live packet (for end-of-run accounting: this walks the whole arena).
    pub fn live_packets(&self) -> impl Iterator<Item = (u32, &Packet)> {
        let mut free = vec![false; self.cold.len()];
        for &i in &self.free {
            free[i as usize] = true;
        }
        self.cold
            .iter()
            .enumerate()
            .filter(move |(i, _)| !free[*i])
            .map(|(i, p)| (i as u32, p))
    }
    /// Payload and wire bytes of the data packets still in the network (sent by a host,
    /// not yet received): walks the whole arena, for the end of a run.
    pub fn in_network(&self) -> (u64, u64) {
        let (mut bytes, mut wire) = (0, 0);
        for (i, p) in self.live_packets() {
            if p.journey & IN_NETWORK != 0 {
                bytes += p.payload();
                wire += self.hot(i).wire as u64;
            }
        }
        (bytes, wire)
    }

    pub fn capacity(&self) -> usize {
        self.cold.len()
    }

    /// Packet i's telemetry ([`CARRIES_INT`] packets).
    #[inline]
    pub fn int(&self, i: u32) -> &IntStack {
        &self.int[i as usize]
    }

    /// Packet i starts carrying telemetry `s` (an empty header at its source, an ACK
    /// the copy of its data packet's records).
    #[inline]
    pub fn set_int(&mut self, i: u32, s: IntStack) {
        let i = i as usize;
        if self.int.len() <= i {
            self.int
                .resize(self.cold.len().max(i + 1), IntStack::default());
        }
        self.int[i] = s;
        self.cold[i].journey |= CARRIES_INT;
    }

    /// A switch port appends its record to packet i's telemetry.
    #[inline]
    pub fn push_int(&mut self, i: u32, hop: IntHop) {
        self.int[i as usize].push(hop);
    }
}
