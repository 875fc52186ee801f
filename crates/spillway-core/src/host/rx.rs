//! A host's receive path, between its NIC and its transports: timing noise
//! (`host.rx_jitter`), interrupt moderation (`host.rx_coalesce`), receive offload
//! (`host.gro`, per flow in [`Gro`]) and the server model (`host.proc_time` with
//! `host.proc_parallel`, FastLane §4.2.1).

use super::config::HostConfig;
use crate::engine::context::Ctx;
use crate::engine::event::Ev;
use crate::rng::{component, Rng};
use crate::units::Ps;
use std::collections::VecDeque;

/// `host.gro`: Linux's merged segment stays under 64 KB (`skb_gro_receive`).
const GRO_MAX_BYTES: u32 = 65535;

#[derive(Default)]
struct Server {
    busy: u32,
    waiting: VecDeque<u32>,
}

pub struct RxPath {
    jitter: Ps,
    coalesce: Ps,
    /// Per host: the jitter's own stream (empty without `host.rx_jitter`), the latest
    /// release time (packets never overtake each other inside a host), the time of the
    /// latest interrupt (`Ps::MAX`: none yet) and the jitter drawn for it (its batch
    /// goes up together).
    rng: Vec<Rng>,
    last: Vec<Ps>,
    irq: Vec<Ps>,
    irq_jitter: Vec<Ps>,
    proc_time: Ps,
    proc_parallel: u32,
    servers: Vec<Server>,
    gro: bool,
}

impl RxPath {
    pub fn new(cfg: &HostConfig, hosts: u32, seed: u64) -> RxPath {
        RxPath {
            jitter: cfg.rx_jitter,
            coalesce: cfg.rx_coalesce,
            // One stream per host: traffic elsewhere does not move a host's draws.
            rng: if cfg.rx_jitter > 0 {
                (0..hosts as u64)
                    .map(|h| Rng::new(seed, component::RX_JITTER_BASE + h))
                    .collect()
            } else {
                Vec::new()
            },
            last: vec![0; hosts as usize],
            irq: vec![Ps::MAX; hosts as usize],
            irq_jitter: vec![0; hosts as usize],
            proc_time: cfg.proc_time,
            proc_parallel: cfg.proc_parallel,
            servers: (0..hosts).map(|_| Server::default()).collect(),
            gro: cfg.gro,
        }
    }

    /// Receive offload is on.
    #[inline(always)]
    pub fn gro(&self) -> bool {
        self.gro
    }

    /// When a packet arriving now at `host` reaches its stack, if not at once: after the
    /// interrupt that takes it and the stack's latency, never before one that arrived
    /// earlier.
    #[inline(always)]
    pub fn release_time(&mut self, now: Ps, host: u32) -> Option<Ps> {
        if self.jitter == 0 && self.coalesce == 0 {
            return None;
        }
        let h = host as usize;
        let mut t = now;
        if self.coalesce > 0 {
            // Interrupt moderation: at most one interrupt per interval; a packet waits
            // for the pending one, or for the next the interval allows.
            let irq = self.irq[h];
            let next = if irq == Ps::MAX || t >= irq + self.coalesce {
                t
            } else if t > irq {
                irq + self.coalesce
            } else {
                irq
            };
            if next != irq {
                self.irq[h] = next;
                // One softirq handles the whole batch: one draw of its latency.
                self.irq_jitter[h] = if self.jitter > 0 {
                    self.rng[h].below(self.jitter)
                } else {
                    0
                };
            }
            t = next + self.irq_jitter[h];
        } else if self.jitter > 0 {
            t += self.rng[h].below(self.jitter);
        }
        let t = t.max(self.last[h]);
        self.last[h] = t;
        Some(t)
    }

    /// A packet reaches `host`'s stack: true if its transport takes it now; otherwise
    /// the server model has it (its `HostDone` event comes when it is processed).
    #[inline]
    pub fn admit(&mut self, cx: &mut Ctx, host: u32, pkt: u32) -> bool {
        if self.proc_time == 0 {
            return true;
        }
        // FastLane §4.2.1: up to P packets in service at once, each taking t.
        let s = &mut self.servers[host as usize];
        if s.busy < self.proc_parallel {
            s.busy += 1;
            cx.push(cx.now + self.proc_time, Ev::HostDone { host, pkt });
        } else {
            s.waiting.push_back(pkt);
        }
        false
    }

    /// `host`'s server finished a packet: the next waiting one starts.
    pub fn done(&mut self, cx: &mut Ctx, host: u32) {
        let s = &mut self.servers[host as usize];
        match s.waiting.pop_front() {
            Some(next) => cx.push(cx.now + self.proc_time, Ev::HostDone { host, pkt: next }),
            None => s.busy -= 1,
        }
    }
}

/// `host.gro` for one flow: the segment held for merging until its interrupt's batch has
/// been handled.
pub struct Gro {
    /// The interrupt time of the held segment (`Ps::MAX`: none), the sequence that would
    /// continue it, and its merged payload bytes.
    at: Ps,
    next: u64,
    bytes: u32,
    /// Time of the flow's queued `GroFlush` event (`Ps::MAX`: none).
    ev: Ps,
}

impl Default for Gro {
    fn default() -> Gro {
        Gro {
            at: Ps::MAX,
            next: 0,
            bytes: 0,
            ev: Ps::MAX,
        }
    }
}

impl Gro {
    /// A segment is held.
    #[inline]
    pub fn held(&self) -> bool {
        self.at != Ps::MAX
    }

    /// An ACK went: it covers the held segment.
    #[inline(always)]
    pub fn release(&mut self) {
        self.at = Ps::MAX;
    }

    /// Does segment `seq` of `len` bytes, arriving now in this batch, continue the held
    /// one (up to 64 KB)?
    #[inline]
    pub fn joins(&self, now: Ps, seq: u64, len: u32) -> bool {
        self.at == now && self.next == seq && self.bytes + len <= GRO_MAX_BYTES
    }

    /// Holds segment `seq` of `len` bytes (merged with the held one if it `joins`); true
    /// when the flow needs a `GroFlush` event now.
    #[inline]
    pub fn hold(&mut self, now: Ps, seq: u64, len: u32, joins: bool) -> bool {
        self.bytes = if joins { self.bytes + len } else { len };
        self.at = now;
        self.next = seq + len as u64;
        if self.ev != now {
            self.ev = now;
            return true;
        }
        false
    }

    /// The flow's `GroFlush` event at `time`: true if it is the one queued last.
    #[inline]
    pub fn flush_due(&mut self, time: Ps) -> bool {
        if self.ev == time {
            self.ev = Ps::MAX;
            return true;
        }
        false
    }
}
