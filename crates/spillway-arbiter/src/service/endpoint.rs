//! `spillway-endpoint`'s state machine: the FCP [`Endpoint`] (§5.3), its demand ([`Demand`]),
//! and a sender that puts one data datagram on the wire in each granted timeslot (§6.1:
//! the qdisc holds packets until their timeslot). Every send and every receive is
//! logged as `(timeslot, peer)` so that conflicts can be checked from both sides.
//!
//! A grant whose timeslot has ended before the sender got to it (scheduling delay) is
//! not used: the packet is re-requested, as the paper's client re-requests overly late
//! allocations (§6.3). A grant with nothing queued for its destination (possible across
//! a failover, when both arbiters granted the same demand) is counted and left unused.

use super::clock::Lateness;
use super::config::ServiceConfig;
use super::data::{Data, STATUS_QUERY, STOP_QUERY};
use super::demand::Demand;
use super::log::{self, EventLog};
use super::runtime::{control_allowed, Service};
use crate::fcp::wire::MAX_MSG_LEN;
use crate::fcp::{Endpoint, Input};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::net::{SocketAddr, UdpSocket};

#[derive(Clone, Debug, Default)]
pub struct EndpointCounters {
    pub demand: u64,
    pub sent: u64,
    pub received: u64,
    /// Grants whose timeslot had ended before the sender got to them (re-requested).
    pub missed: u64,
    /// Grants with nothing queued for their destination.
    pub unused: u64,
    pub unknown_source: u64,
    pub malformed: u64,
    pub send_errors: u64,
}

pub struct EndpointService {
    cfg: ServiceConfig,
    id: u32,
    ep: Endpoint,
    gen: Demand,
    /// Packets waiting per destination.
    queue: Vec<u64>,
    /// Granted timeslots not yet used: (timeslot, dst, epoch of the grant).
    grants: BinaryHeap<Reverse<(u64, u32, u32)>>,
    events: EventLog,
    buf: Vec<u8>,
    data: Vec<u8>,
    seq: u32,
    lateness: Lateness,
    stop: bool,
    pub counters: EndpointCounters,
}

impl EndpointService {
    pub fn new(cfg: ServiceConfig, id: u32, gen: Demand, events: EventLog) -> Self {
        let n = cfg.endpoints.len();
        EndpointService {
            ep: Endpoint::new(cfg.endpoint(id)),
            data: vec![0; cfg.payload],
            id,
            gen,
            queue: vec![0; n],
            grants: BinaryHeap::new(),
            events,
            buf: vec![0; MAX_MSG_LEN],
            seq: 0,
            lateness: Lateness::default(),
            stop: false,
            counters: EndpointCounters::default(),
            cfg,
        }
    }

    /// FCP messages out (to every arbiter: the paper multicasts them, §5.1) and grants
    /// into the send queue.
    fn flush(&mut self, sock: &UdpSocket) {
        while let Some(m) = self.ep.poll_transmit() {
            let Ok(len) = m.encode(&mut self.buf) else {
                self.counters.send_errors += 1;
                continue;
            };
            for a in &self.cfg.arbiters {
                if sock.send_to(&self.buf[..len], a).is_err() {
                    self.counters.send_errors += 1;
                }
            }
        }
        let epoch = self.ep.epoch();
        while let Some(g) = self.ep.poll_event() {
            self.grants.push(Reverse((g.timeslot, g.dst, epoch)));
        }
    }

    fn send_due(&mut self, now: u64, sock: &UdpSocket) {
        let slot = self.cfg.timeslot;
        while let Some(&Reverse((ts, dst, epoch))) = self.grants.peek() {
            if ts.saturating_mul(slot) > now {
                break;
            }
            self.grants.pop();
            let q = &mut self.queue[dst as usize];
            if now >= (ts + 1).saturating_mul(slot) {
                // Its timeslot is over: sending now would collide with the next
                // timeslot's packets (§6.3); ask again.
                self.counters.missed += 1;
                if *q > 0 {
                    self.ep.handle(now, Input::Demand { dst, slots: 1 });
                }
                continue;
            }
            if *q == 0 {
                self.counters.unused += 1;
                continue;
            }
            *q -= 1;
            Data {
                src: self.id,
                dst,
                timeslot: ts,
                epoch,
                seq: self.seq,
            }
            .encode(&mut self.data);
            self.seq = self.seq.wrapping_add(1);
            if sock
                .send_to(&self.data, self.cfg.endpoints[dst as usize])
                .is_err()
            {
                self.counters.send_errors += 1;
            }
            self.counters.sent += 1;
            self.events.line(format_args!(
                "{{\"ev\": \"send\", \"ts\": {ts}, \"dst\": {dst}, \"epoch\": {epoch}, \"t\": {now}}}"
            ));
        }
    }

    pub fn summary_json(&self) -> String {
        let c = &self.counters;
        let s = self.ep.stats();
        format!(
            concat!(
                "{{\"endpoint\": {}, \"demand\": {}, \"sent\": {}, \"received\": {}, \"queued\": {}, ",
                "\"missed\": {}, \"unused\": {}, \"unknown_source\": {}, \"malformed\": {}, \"send_errors\": {}, ",
                "\"epoch\": {}, \"fcp\": {{\"reports_sent\": {}, \"retransmits\": {}, \"allocs_received\": {}, ",
                "\"allocs_stale\": {}, \"slots_granted\": {}, \"slots_lost\": {}, \"slots_late\": {}, \"resets\": {}, ",
                "\"reset_requests_sent\": {}, \"bad_checksums\": {}, \"stale_epoch\": {}, \"malformed\": {}}}, ",
                "\"timer_lateness\": {}}}"
            ),
            self.id,
            c.demand,
            c.sent,
            c.received,
            self.queue.iter().sum::<u64>(),
            c.missed,
            c.unused,
            c.unknown_source,
            c.malformed,
            c.send_errors,
            self.ep.epoch(),
            s.reports_sent,
            s.retransmits,
            s.allocs_received,
            s.allocs_stale,
            s.slots_granted,
            s.slots_lost,
            s.slots_late,
            s.resets,
            s.reset_requests_sent,
            s.bad_checksums,
            s.stale_epoch,
            s.malformed,
            self.lateness.json(),
        )
    }

    pub fn finish(&mut self) {
        self.events.flush();
        // The summary's members, inside the log line's object.
        let s = self.summary_json();
        log::event(&format!("endpoint{}", self.id), "stop", &s[1..s.len() - 1]);
    }
}

impl Service for EndpointService {
    fn on_datagram(&mut self, now: u64, bytes: &[u8], from: SocketAddr, sock: &UdpSocket) {
        if self.cfg.arbiters.contains(&from) {
            // FCP from an arbiter: the state machine checks version, length, checksum
            // and nonce, and counts what it drops.
            self.ep.handle_bytes(now, bytes);
            self.flush(sock);
            self.send_due(now, sock);
            return;
        }
        if let Some(src) = self.cfg.endpoints.iter().position(|a| *a == from) {
            match Data::decode(bytes) {
                Some(d) if d.dst == self.id && d.src == src as u32 => {
                    self.counters.received += 1;
                    self.events.line(format_args!(
                        "{{\"ev\": \"recv\", \"ts\": {}, \"src\": {}, \"epoch\": {}, \"t\": {now}}}",
                        d.timeslot, d.src, d.epoch
                    ));
                }
                _ => self.counters.malformed += 1,
            }
            return;
        }
        if control_allowed(&from) && bytes == STATUS_QUERY {
            let _ = sock.send_to(self.summary_json().as_bytes(), from);
        } else if control_allowed(&from) && bytes == STOP_QUERY {
            self.stop = true;
        } else {
            self.counters.unknown_source += 1;
        }
    }

    fn on_timer(&mut self, now: u64, sock: &UdpSocket) {
        while let Some((at, dst)) = self.gen.poll(now) {
            self.counters.demand += 1;
            self.queue[dst as usize] += 1;
            self.ep.handle(now, Input::Demand { dst, slots: 1 });
            self.events.line(format_args!(
                "{{\"ev\": \"demand\", \"dst\": {dst}, \"t\": {at}}}"
            ));
        }
        if self.ep.poll_timeout().is_some_and(|t| t <= now) {
            self.ep.handle_timeout(now);
        }
        self.flush(sock);
        self.send_due(now, sock);
    }

    fn next_deadline(&self) -> u64 {
        let mut t = self.gen.deadline();
        if let Some(x) = self.ep.poll_timeout() {
            t = t.min(x);
        }
        if let Some(Reverse((ts, _, _))) = self.grants.peek() {
            t = t.min(ts.saturating_mul(self.cfg.timeslot));
        }
        t
    }

    fn lateness(&mut self) -> &mut Lateness {
        &mut self.lateness
    }

    fn stopping(&self) -> bool {
        self.stop
    }
}
