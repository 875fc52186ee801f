//! FastLane, switch half (FastLane §3.2–§3.3): every dropped packet becomes a drop
//! notification in the data plane — source and destination flipped, marked (TOS),
//! truncated after the transport header (64 B on the wire) but keeping the original
//! length, so the source knows exactly which bytes were lost — and leaves by the port it
//! arrived on, ahead of all data.
//!
//! Safeguards (§3.3): notifications wait in their own small buffer (default 2.5% of the
//! port buffer: 3.2 KB of 128 KB) and are clocked out at no more than a bandwidth cap
//! (default 1% of the link). Past the buffer cap they are dropped: the network is then
//! congested enough that a timeout is the best way back to stability. By default the cap
//! is work conserving — a notification may use the link when no data waits (§3.3.1);
//! `strict` forbids that, for the sensitivity study of §5.1.3.

use crate::packet::notification::NOTIFICATION_FRAME;
use crate::packet::{Packet, PktKind};
use crate::units::Ps;
use std::collections::VecDeque;

/// The notification a dropped packet `p` becomes (§3.2): addresses flipped, marked, cut
/// after the transport header (keeping the original length, sequence and epoch), at top
/// priority. It leaves by the port the victim arrived on.
pub fn notification(p: &Packet) -> Packet {
    let mut n = p.clone();
    n.kind = PktKind::Notify;
    n.orig = p.kind;
    n.src = p.dst;
    n.dst = p.src;
    n.class = 0;
    n.wire = NOTIFICATION_FRAME;
    n.hash = p.hash.rotate_left(29);
    n
}

#[derive(Debug, Clone, Copy)]
pub struct FastLaneConfig {
    /// Bandwidth cap in parts per million of the link rate (10_000 = 1%).
    pub bandwidth_ppm: u64,
    /// Bytes of notification buffer per port.
    pub buffer: u64,
    /// Forbid notifications from exceeding the cap even on an idle link.
    pub strict: bool,
}

/// Counters of one port's notifications.
#[derive(Debug, Clone, Default)]
pub struct NotifStats {
    /// Created here from a dropped packet.
    pub generated: u64,
    /// Admitted to this port's notification buffer (generated here or passing through).
    pub enqueued: u64,
    /// Refused because the notification buffer was full.
    pub dropped: u64,
    /// Transmitted, and their bytes on the wire.
    pub sent: u64,
    pub sent_bytes: u64,
    /// Of those, sent beyond the cap on an otherwise idle link (work conservation).
    pub sent_idle: u64,
    pub max_bytes: u64,
}

/// A port's notification queue with its buffer and bandwidth caps.
#[derive(Debug)]
pub struct NotifQueue {
    q: VecDeque<(u32, u32)>, // (packet, wire bytes)
    bytes: u64,
    cfg: FastLaneConfig,
    /// Earliest time the next notification may go out within the cap.
    next_ok: Ps,
    stats: NotifStats,
}

impl NotifQueue {
    pub fn new(cfg: FastLaneConfig) -> Self {
        NotifQueue {
            q: VecDeque::new(),
            bytes: 0,
            cfg,
            next_ok: 0,
            stats: NotifStats::default(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The notification that would go out next.
    pub fn front(&self) -> Option<u32> {
        self.q.front().map(|&(p, _)| p)
    }

    pub fn stats(&self) -> &NotifStats {
        &self.stats
    }

    /// A notification was made here from a dropped packet.
    pub fn count_generated(&mut self) {
        self.stats.generated += 1;
    }

    pub fn capacity(&self) -> u64 {
        self.cfg.buffer
    }

    pub fn strict(&self) -> bool {
        self.cfg.strict
    }

    /// When the cap next allows a notification out.
    pub fn next_ok(&self) -> Ps {
        self.next_ok
    }

    /// Admits a notification; false when the buffer cap is reached (it must be dropped).
    pub fn admit(&mut self, pkt: u32, wire: u32) -> bool {
        if self.bytes + wire as u64 > self.cfg.buffer {
            self.stats.dropped += 1;
            return false;
        }
        self.bytes += wire as u64;
        self.stats.enqueued += 1;
        self.stats.max_bytes = self.stats.max_bytes.max(self.bytes);
        self.q.push_back((pkt, wire));
        true
    }

    /// May a notification go out now? `data_waiting`: the port has data queued.
    #[inline]
    pub fn ready(&self, now: Ps, data_waiting: bool) -> bool {
        !self.q.is_empty() && (now >= self.next_ok || (!self.cfg.strict && !data_waiting))
    }

    /// Takes the next notification for transmission; `serialization` is its time on
    /// the link. Within the cap, the next one may follow after serialization / cap
    /// (FastLane §3.3.1: a 64 B notification every 5.1 us at 10 Gbps for 1%).
    pub fn pop(&mut self, now: Ps, serialization: Ps) -> Option<u32> {
        let (pkt, wire) = self.q.pop_front()?;
        self.bytes -= wire as u64;
        self.stats.sent += 1;
        self.stats.sent_bytes += wire as u64;
        if now >= self.next_ok {
            self.next_ok = now + serialization * 1_000_000 / self.cfg.bandwidth_ppm.max(1);
        } else {
            // Idle capacity: it does not count against the cap.
            self.stats.sent_idle += 1;
        }
        Some(pkt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(strict: bool) -> FastLaneConfig {
        FastLaneConfig {
            bandwidth_ppm: 10_000,
            buffer: 3_276, // 2.5% of 128 KB
            strict,
        }
    }

    #[test]
    fn buffer_cap_is_never_exceeded() {
        let mut q = NotifQueue::new(cfg(false));
        let admitted = (0..100).filter(|&i| q.admit(i, 64)).count();
        assert_eq!(admitted, 3_276 / 64);
        assert_eq!(q.stats.dropped, 100 - admitted as u64);
        assert!(q.stats.max_bytes <= 3_276);
    }

    #[test]
    fn busy_link_sees_at_most_the_cap() {
        // 10 Gbps: 64 B take 51.2 ns; at 1% the next may follow 5.12 us later.
        let ser = 51_200;
        let mut q = NotifQueue::new(cfg(false));
        for i in 0..40 {
            q.admit(i, 64);
        }
        let mut now = 0;
        let mut sent = Vec::new();
        while !q.is_empty() {
            // Data always waiting: only the cap lets notifications through.
            if q.ready(now, true) {
                sent.push(now);
                q.pop(now, ser);
            }
            now += 1_000_000 / 7; // poll at an odd step
        }
        for w in sent.windows(2) {
            assert!(w[1] - w[0] >= ser * 100, "{w:?}");
        }
        assert_eq!(q.stats.sent_idle, 0);
    }

    #[test]
    fn idle_link_is_work_conserving_unless_strict() {
        let mut q = NotifQueue::new(cfg(false));
        q.admit(1, 64);
        q.admit(2, 64);
        assert!(q.ready(0, false));
        q.pop(0, 51_200);
        assert!(q.ready(51_200, false), "idle link: send beyond the cap");
        assert!(!q.ready(51_200, true), "data waiting: respect the cap");
        let mut s = NotifQueue::new(cfg(true));
        s.admit(1, 64);
        s.admit(2, 64);
        s.pop(0, 51_200);
        assert!(!s.ready(51_200, false));
        assert!(s.ready(5_120_000, false));
    }
}
