//! The ping workload (`[ping]`): one host sends a request to another every interval, and
//! learns each round-trip time from the reply, which the destination's ping responder
//! ([`super::agent::Agent::PingResponder`]) sends at once. The pinger is sans-IO: it
//! makes the request packet and reads the reply; the hosts send and deliver them, and the
//! engine keeps its clock.

use crate::output::pings::PingRecords;
use crate::packet::wire::wire_bytes;
use crate::packet::{Packet, PktKind};
use crate::rng::mix64;
use crate::units::Ps;

/// IP and ICMP headers: the smallest ping.
pub const MIN_PING_BYTES: u64 = 28;

/// `[ping]`, when `ping.interval` is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PingConfig {
    pub src: u32,
    pub dst: u32,
    pub interval: Ps,
    pub start: Ps,
    /// IP bytes of a request and of a reply.
    pub ip_bytes: u32,
}

/// Pings belong to no flow: the flow id they carry (one for all, so that a pFabric queue
/// serving by sequence takes them in order), and the flow-table slot.
pub const PING_FLOW: u64 = u64::MAX;
const NO_SLOT: u32 = u32::MAX;

pub struct Pinger {
    cfg: PingConfig,
    wire: u32,
    class: u8,
    hash: u64,
    /// The requests not yet handed out: row `i` is request `taken + i`.
    rows: PingRecords,
    taken: u64,
}

impl Pinger {
    /// The host that sends the requests.
    pub fn src(&self) -> u32 {
        self.cfg.src
    }

    /// The pinger of `cfg`: requests at priority class `class` (the transport's data
    /// class), framed with `framing` bytes, on one path (a real ping's ICMP identifier
    /// is fixed, so ECMP hashes every request alike).
    pub fn new(cfg: PingConfig, class: u8, framing: u32, seed: u64) -> Pinger {
        Pinger {
            cfg,
            wire: wire_bytes(cfg.ip_bytes, framing),
            class,
            hash: mix64(seed ^ 0x7069_6e67 ^ ((cfg.src as u64) << 40) ^ ((cfg.dst as u64) << 20)),
            rows: PingRecords::default(),
            taken: 0,
        }
    }

    /// The next request, sent at `now`, to hand to the source's send path.
    pub fn request(&mut self, now: Ps) -> Packet {
        let seq = self.taken + self.rows.len() as u64;
        self.rows.src.push(self.cfg.src);
        self.rows.dst.push(self.cfg.dst);
        self.rows.sent_ps.push(now);
        self.rows.rtt_ps.push(u64::MAX);
        let c = &self.cfg;
        let mut p = Packet::new(
            PktKind::Ping,
            NO_SLOT,
            PING_FLOW,
            c.src,
            c.dst,
            self.class,
            self.wire,
            self.hash,
        );
        p.seq = seq;
        p.ts = now;
        // pFabric's priority of a one-packet flow: its size.
        p.prio = c.ip_bytes as u64;
        p
    }

    /// Reply `p` has fully arrived at the source at `now`: its request's RTT.
    pub fn reply(&mut self, now: Ps, p: &Packet) {
        debug_assert_eq!(p.kind, PktKind::PingReply);
        let Some(i) = p.seq.checked_sub(self.taken) else {
            return;
        };
        if let Some(rtt) = self.rows.rtt_ps.get_mut(i as usize) {
            *rtt = now - p.ts;
        }
    }

    /// The rows that are final (every request up to the first still unanswered), or with
    /// `all`, every row (the run has stopped: an unanswered request has no RTT).
    pub fn take(&mut self, all: bool) -> PingRecords {
        let r = &mut self.rows;
        let n = if all {
            r.len()
        } else {
            r.rtt_ps
                .iter()
                .position(|&t| t == u64::MAX)
                .unwrap_or(r.len())
        };
        self.taken += n as u64;
        PingRecords {
            src: r.src.drain(..n).collect(),
            dst: r.dst.drain(..n).collect(),
            sent_ps: r.sent_ps.drain(..n).collect(),
            rtt_ps: r.rtt_ps.drain(..n).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> PingConfig {
        PingConfig {
            src: 1,
            dst: 2,
            interval: 1_000,
            start: 0,
            ip_bytes: 64,
        }
    }

    fn answer(mut p: Packet) -> Packet {
        p.kind = PktKind::PingReply;
        std::mem::swap(&mut p.src, &mut p.dst);
        p
    }

    #[test]
    fn replies_fill_their_requests_rows_and_final_rows_are_handed_out_in_order() {
        let mut pg = Pinger::new(cfg(), 0, 38, 1);
        let a = pg.request(100);
        let b = pg.request(200);
        let c = pg.request(300);
        assert_eq!(a.wire, 64 + 38);
        assert_eq!((a.src, a.dst, a.seq, b.seq), (1, 2, 0, 1));
        // Replies may come out of order; a row is handed out once it and every row
        // before it is answered.
        pg.reply(450, &answer(b));
        assert!(pg.take(false).is_empty());
        pg.reply(400, &answer(a));
        let t = pg.take(false);
        assert_eq!(t.sent_ps, [100, 200]);
        assert_eq!(t.rtt_ps, [300, 250]);
        let d = pg.request(400);
        pg.reply(500, &answer(d));
        assert!(pg.take(false).is_empty(), "request 2 is unanswered");
        let t = pg.take(true);
        assert_eq!(t.sent_ps, [300, 400]);
        assert_eq!(t.rtt_ps, [u64::MAX, 100]);
        // A reply to a request already handed out changes nothing.
        pg.reply(900, &answer(c));
        assert!(pg.take(true).is_empty());
    }
}
