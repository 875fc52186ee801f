//! `spillway-fcp-load`: many FCP endpoints in one process, to load an arbiter (issue 29,
//! must-show 6: 64 endpoints on loopback).
//!
//! Each endpoint is the shared [`Endpoint`] state machine on its own UDP socket (so the
//! arbiter sees N registered sources, as with N processes), with Poisson demand. It does
//! not send data: a granted timeslot just consumes a queued packet, so what is measured
//! is the arbiter and FCP, not the endpoints' data path. One thread serves all of them
//! with non-blocking sockets: N processes would measure the scheduler of a 2-core machine
//! rather than the arbiter.
//!
//! Every grant is checked as it arrives: no sender and no receiver twice in a timeslot.

use super::config::ServiceConfig;
use super::demand::Poisson;
use crate::fcp::wire::MAX_MSG_LEN;
use crate::fcp::{Endpoint, Input};
use std::collections::HashSet;
use std::net::UdpSocket;
use std::time::Duration;

#[derive(Clone, Debug, Default)]
pub struct LoadStats {
    pub demand: u64,
    pub granted: u64,
    /// Grants with nothing queued for the destination (the arbiter gave more than asked).
    pub surplus: u64,
    /// Timeslots in which a sender or a receiver was granted twice.
    pub conflicts: u64,
    pub fcp_sent: u64,
    pub fcp_received: u64,
    pub send_errors: u64,
    /// Loop iterations, and those that found nothing to do.
    pub loops: u64,
}

impl LoadStats {
    pub fn json(&self, endpoints: usize, secs: f64) -> String {
        format!(
            concat!(
                "{{\"endpoints\": {}, \"seconds\": {:.3}, \"demand_slots\": {}, \"granted_slots\": {}, ",
                "\"granted_per_s\": {:.0}, \"surplus\": {}, \"conflicts\": {}, \"fcp_sent\": {}, ",
                "\"fcp_received\": {}, \"send_errors\": {}, \"loops\": {}}}"
            ),
            endpoints,
            secs,
            self.demand,
            self.granted,
            self.granted as f64 / secs.max(1e-9),
            self.surplus,
            self.conflicts,
            self.fcp_sent,
            self.fcp_received,
            self.send_errors,
            self.loops,
        )
    }
}

/// Grants seen per timeslot, to find a sender or receiver given twice; timeslots well
/// in the past are forgotten.
#[derive(Default)]
struct Seen {
    src: HashSet<(u64, u32)>,
    dst: HashSet<(u64, u32)>,
    conflicted: HashSet<u64>,
}

impl Seen {
    fn add(&mut self, ts: u64, src: u32, dst: u32) -> bool {
        let fresh = self.src.insert((ts, src)) & self.dst.insert((ts, dst));
        !fresh && self.conflicted.insert(ts)
    }
    fn forget_before(&mut self, ts: u64) {
        self.src.retain(|k| k.0 >= ts);
        self.dst.retain(|k| k.0 >= ts);
        self.conflicted.retain(|k| *k >= ts);
    }
}

/// Run endpoints `ids` of `cfg` for `duration` ps of `clock` time, with Poisson demand at
/// `load` during the first `demand_for` ps.
pub fn run(
    cfg: &ServiceConfig,
    clock: super::clock::Clock,
    ids: std::ops::Range<u32>,
    load: f64,
    seed: u64,
    duration: u64,
    demand_for: u64,
) -> std::io::Result<LoadStats> {
    let n = cfg.endpoints.len() as u32;
    let mut socks = Vec::new();
    let mut eps = Vec::new();
    let mut gens = Vec::new();
    let start = clock.now();
    for id in ids.clone() {
        let s = UdpSocket::bind(cfg.endpoints[id as usize])?;
        s.set_nonblocking(true)?;
        socks.push(s);
        eps.push(Endpoint::new(cfg.endpoint(id)));
        gens.push(Poisson::new(
            seed,
            id,
            n,
            load,
            cfg.timeslot,
            start,
            start + demand_for,
        ));
    }
    let first = ids.start;
    let mut queued = vec![vec![0u64; n as usize]; eps.len()];
    let mut st = LoadStats::default();
    let mut seen = Seen::default();
    let mut buf = vec![0u8; 65536];
    let mut out = vec![0u8; MAX_MSG_LEN];
    let end = start + duration;
    let mut next_prune = start;
    loop {
        let now = clock.now();
        if now >= end || super::clock::stop_requested() {
            break;
        }
        st.loops += 1;
        let mut busy = false;
        for (i, ep) in eps.iter_mut().enumerate() {
            while let Ok((len, from)) = socks[i].recv_from(&mut buf) {
                busy = true;
                if cfg.arbiters.contains(&from) {
                    st.fcp_received += 1;
                    ep.handle_bytes(now, &buf[..len]);
                }
            }
            while let Some((_, dst)) = gens[i].poll(now) {
                st.demand += 1;
                queued[i][dst as usize] += 1;
                ep.handle(now, Input::Demand { dst, slots: 1 });
            }
            if ep.poll_timeout().is_some_and(|t| t <= now) {
                ep.handle_timeout(now);
            }
            while let Some(m) = ep.poll_transmit() {
                busy = true;
                let Ok(len) = m.encode(&mut out) else {
                    st.send_errors += 1;
                    continue;
                };
                for a in &cfg.arbiters {
                    st.fcp_sent += 1;
                    if socks[i].send_to(&out[..len], a).is_err() {
                        st.send_errors += 1;
                    }
                }
            }
            let src = first + i as u32;
            while let Some(g) = ep.poll_event() {
                st.granted += 1;
                let q = &mut queued[i][g.dst as usize];
                if *q == 0 {
                    st.surplus += 1;
                } else {
                    *q -= 1;
                }
                if seen.add(g.timeslot, src, g.dst) {
                    st.conflicts += 1;
                }
            }
        }
        if now >= next_prune {
            // Grants arrive `lead` ahead; a second back is long past.
            seen.forget_before(
                (now / cfg.timeslot).saturating_sub(1_000_000_000_000 / cfg.timeslot),
            );
            next_prune = now + 1_000_000_000_000;
        }
        if !busy {
            std::thread::sleep(Duration::from_micros(20));
        }
    }
    Ok(st)
}

#[cfg(test)]
mod tests {
    use super::Seen;

    #[test]
    fn a_sender_or_receiver_twice_in_a_timeslot_is_one_conflict() {
        let mut s = Seen::default();
        assert!(!s.add(5, 0, 1));
        assert!(!s.add(5, 2, 3));
        assert!(!s.add(6, 0, 1), "another timeslot");
        assert!(s.add(5, 0, 4), "sender 0 twice in 5");
        assert!(
            !s.add(5, 4, 3),
            "receiver 3 twice in 5: the same timeslot, counted once"
        );
        assert!(s.add(6, 7, 1), "receiver 1 twice in 6");
        s.forget_before(6);
        assert!(!s.add(5, 0, 1), "forgotten");
    }
}
