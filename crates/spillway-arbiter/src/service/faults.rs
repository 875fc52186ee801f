//! `spillway-fcp-proxy`: a fault-injecting UDP proxy between endpoints and arbiters, and a
//! flood from an unregistered source (issue 29, must-shows 2 and 5).
//!
//! The arbiters are given a fabric file whose endpoint addresses are the proxy's (so the
//! proxy's sockets are the registered endpoints, as the arbiters see them); the endpoints
//! are given one whose arbiter addresses are the proxy's. Every FCP datagram passes the
//! proxy, which drops, duplicates or corrupts it at the configured rates; data between
//! endpoints does not. The daemons are unchanged: what they do under faults is what
//! they would do on a lossy network.
//!
//! Corruption comes in kinds that exercise different checks: a flipped bit, a cut or
//! lengthened datagram, random bytes, and a wrong nonce (the checksum recomputed with
//! another nonce: well formed, but not from the session, §5.3).

use super::config::ServiceConfig;
use crate::fcp::splitmix;
use crate::fcp::wire::{self, HEADER_LEN};
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Fault rates, each a probability per datagram.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Faults {
    pub drop: f64,
    pub dup: f64,
    pub corrupt: f64,
}

/// A small deterministic generator (splitmix64 steps), one per thread.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(splitmix(seed ^ 0xfa17))
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        splitmix(self.0)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

/// The kinds of corruption, chosen uniformly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Corruption {
    BitFlip,
    Truncate,
    Extend,
    Random,
    WrongNonce,
}

/// Corrupt `bytes` in place (it may change length); the kind applied.
pub fn corrupt(rng: &mut Rng, bytes: &mut Vec<u8>) -> Corruption {
    let kind = match rng.below(5) {
        0 => Corruption::BitFlip,
        1 => Corruption::Truncate,
        2 => Corruption::Extend,
        3 => Corruption::Random,
        _ => Corruption::WrongNonce,
    };
    match kind {
        Corruption::BitFlip if !bytes.is_empty() => {
            let bit = rng.below(bytes.len() * 8);
            bytes[bit / 8] ^= 1 << (bit % 8);
        }
        Corruption::Truncate => {
            let n = rng.below(bytes.len());
            bytes.truncate(n);
        }
        Corruption::Extend => {
            let n = 1 + rng.below(64);
            bytes.extend((0..n).map(|_| rng.next_u64() as u8));
        }
        Corruption::Random => {
            let n = rng.below(1500);
            bytes.clear();
            bytes.extend((0..n).map(|_| rng.next_u64() as u8));
        }
        Corruption::WrongNonce if bytes.len() >= HEADER_LEN => {
            // Well formed, keyed with a nonce nobody agreed on.
            let sum = wire::checksum(bytes, rng.next_u64() | 1);
            bytes[16..24].copy_from_slice(&sum.to_be_bytes());
        }
        _ => {}
    }
    kind
}

/// Counters of one direction.
#[derive(Debug, Default)]
pub struct DirStats {
    pub received: AtomicU64,
    pub forwarded: AtomicU64,
    pub dropped: AtomicU64,
    pub duplicated: AtomicU64,
    pub corrupted: AtomicU64,
    /// From an address the proxy does not know: not forwarded.
    pub stray: AtomicU64,
}

impl DirStats {
    fn json(&self) -> String {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        format!(
            "{{\"received\": {}, \"forwarded\": {}, \"dropped\": {}, \"duplicated\": {}, \"corrupted\": {}, \"stray\": {}}}",
            g(&self.received),
            g(&self.forwarded),
            g(&self.dropped),
            g(&self.duplicated),
            g(&self.corrupted),
            g(&self.stray)
        )
    }
}

#[derive(Debug, Default)]
pub struct ProxyStats {
    /// Endpoints to arbiters.
    pub up: DirStats,
    /// Arbiters to endpoints.
    pub down: DirStats,
    pub flood_sent: AtomicU64,
}

impl ProxyStats {
    pub fn json(&self) -> String {
        format!(
            "{{\"to_arbiters\": {}, \"to_endpoints\": {}, \"flood_sent\": {}}}",
            self.up.json(),
            self.down.json(),
            self.flood_sent.load(Ordering::Relaxed)
        )
    }
}

/// The proxy's wiring, from the two fabric files.
pub struct Wiring {
    /// Per endpoint: the proxy's socket the arbiters know as that endpoint.
    pub as_endpoint: Vec<SocketAddr>,
    /// Per endpoint: its real address.
    pub endpoint: Vec<SocketAddr>,
    /// Per arbiter: the proxy's socket the endpoints know as that arbiter.
    pub as_arbiter: Vec<SocketAddr>,
    /// Per arbiter: its real address.
    pub arbiter: Vec<SocketAddr>,
}

impl Wiring {
    /// From the arbiters' fabric file and the endpoints': same sizes, else an error.
    pub fn new(arbiters: &ServiceConfig, endpoints: &ServiceConfig) -> Result<Self, String> {
        if arbiters.endpoints.len() != endpoints.endpoints.len()
            || arbiters.arbiters.len() != endpoints.arbiters.len()
        {
            return Err(
                "the two fabric files name different numbers of endpoints or arbiters".into(),
            );
        }
        Ok(Wiring {
            as_endpoint: arbiters.endpoints.clone(),
            endpoint: endpoints.endpoints.clone(),
            as_arbiter: endpoints.arbiters.clone(),
            arbiter: arbiters.arbiters.clone(),
        })
    }
}

/// Forward what `sock` receives: `route(from)` gives the socket to send it from and
/// where to; a source it does not know is counted and dropped.
fn pump<'a, F>(
    sock: &UdpSocket,
    faults: Faults,
    seed: u64,
    stats: &DirStats,
    stop: &dyn Fn() -> bool,
    route: F,
) where
    F: Fn(SocketAddr) -> Option<(&'a UdpSocket, SocketAddr)>,
{
    let mut rng = Rng::new(seed);
    let mut buf = vec![0u8; 65536];
    let mut msg = Vec::with_capacity(2048);
    while !stop() {
        let Ok((n, from)) = sock.recv_from(&mut buf) else {
            continue;
        };
        stats.received.fetch_add(1, Ordering::Relaxed);
        let Some((out, to)) = route(from) else {
            stats.stray.fetch_add(1, Ordering::Relaxed);
            continue;
        };
        if rng.unit() < faults.drop {
            stats.dropped.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        msg.clear();
        msg.extend_from_slice(&buf[..n]);
        if rng.unit() < faults.corrupt {
            corrupt(&mut rng, &mut msg);
            stats.corrupted.fetch_add(1, Ordering::Relaxed);
        }
        let copies = if rng.unit() < faults.dup { 2 } else { 1 };
        if copies == 2 {
            stats.duplicated.fetch_add(1, Ordering::Relaxed);
        }
        for _ in 0..copies {
            if out.send_to(&msg, to).is_ok() {
                stats.forwarded.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// How long a receive blocks before the stop flag is looked at again.
const POLL: Duration = Duration::from_millis(20);

/// Run the proxy (and the flood, at `flood_per_s` datagrams/s if non-zero) until `stop()`.
pub fn run(
    w: &Wiring,
    faults: Faults,
    seed: u64,
    flood_per_s: u64,
    stats: &ProxyStats,
    stop: &(dyn Fn() -> bool + Sync),
) -> std::io::Result<()> {
    let bind = |a: &SocketAddr| -> std::io::Result<UdpSocket> {
        let s = UdpSocket::bind(a)?;
        s.set_read_timeout(Some(POLL))?;
        Ok(s)
    };
    let ep_side: Vec<UdpSocket> = w.as_endpoint.iter().map(bind).collect::<Result<_, _>>()?;
    let arb_side: Vec<UdpSocket> = w.as_arbiter.iter().map(bind).collect::<Result<_, _>>()?;
    std::thread::scope(|s| -> std::io::Result<()> {
        // Each way: the proxy's sockets that listen, the real address each stands for,
        // the real senders they take datagrams from, and the proxy's sockets those
        // senders are known by (which forward the datagram). Arbiter r -> proxy's
        // endpoint-e socket -> out of its arbiter-r socket -> endpoint e, and back.
        let ways = [
            (&ep_side, &w.endpoint, &w.arbiter, &arb_side, &stats.down, 0),
            (
                &arb_side,
                &w.arbiter,
                &w.endpoint,
                &ep_side,
                &stats.up,
                1 << 40,
            ),
        ];
        for (listen, stands_for, senders, known_as, st, stream) in ways {
            for (i, sock) in listen.iter().enumerate() {
                let to = stands_for[i];
                s.spawn(move || {
                    pump(
                        sock,
                        faults,
                        seed ^ stream ^ (i as u64) << 20,
                        st,
                        stop,
                        |from| {
                            let j = senders.iter().position(|a| *a == from)?;
                            Some((&known_as[j], to))
                        },
                    )
                });
            }
        }
        if flood_per_s > 0 {
            let flood = UdpSocket::bind("127.0.0.1:0")?;
            let n = w.endpoint.len();
            s.spawn(move || flood_loop(&flood, &w.arbiter, n, flood_per_s, seed, stats, stop));
        }
        Ok(())
    })
}

/// One flood datagram: random bytes, an FCP-shaped one (right version, a registered
/// endpoint's id, a random nonce), or a status query.
pub fn flood_datagram(rng: &mut Rng, endpoints: usize, out: &mut Vec<u8>) {
    out.clear();
    match rng.below(3) {
        0 => {
            let n = rng.below(1500);
            out.extend((0..n).map(|_| rng.next_u64() as u8));
        }
        1 => {
            let m = wire::Msg {
                epoch: rng.next_u64() as u32 & 7,
                seq: rng.next_u64() as u32,
                endpoint: rng.below(endpoints) as u32,
                nonce: rng.next_u64(),
                body: wire::Body::Report(vec![wire::Demand {
                    dst: rng.below(endpoints) as u32,
                    total: rng.next_u64() >> 40,
                }]),
            };
            out.resize(wire::MAX_MSG_LEN, 0);
            let len = m.encode(out).unwrap_or(0);
            out.truncate(len);
        }
        _ => out.extend_from_slice(super::data::STATUS_QUERY),
    }
}

fn flood_loop(
    sock: &UdpSocket,
    targets: &[SocketAddr],
    endpoints: usize,
    per_s: u64,
    seed: u64,
    stats: &ProxyStats,
    stop: &dyn Fn() -> bool,
) {
    let mut rng = Rng::new(seed ^ 0xf100d);
    let mut msg = Vec::with_capacity(2048);
    let start = Instant::now();
    let mut sent = 0u64;
    while !stop() {
        // Paced in 1 ms steps: as many as are due by now.
        let due = (start.elapsed().as_secs_f64() * per_s as f64) as u64;
        while sent < due {
            flood_datagram(&mut rng, endpoints, &mut msg);
            let to = targets[rng.below(targets.len())];
            let _ = sock.send_to(&msg, to);
            sent += 1;
            stats.flood_sent.fetch_add(1, Ordering::Relaxed);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fcp::wire::{Body, Msg};

    fn report(nonce: u64) -> Vec<u8> {
        let m = Msg {
            epoch: 2,
            seq: 7,
            endpoint: 3,
            nonce,
            body: Body::Report(vec![wire::Demand { dst: 1, total: 5 }]),
        };
        let mut b = vec![0; wire::MAX_MSG_LEN];
        let n = m.encode(&mut b).unwrap();
        b.truncate(n);
        b
    }

    #[test]
    fn every_corruption_is_refused_by_the_session_check() {
        // Whatever the kind, the message no longer decodes under the session nonce
        // (FNV steps are bijections: one flipped bit or another nonce changes the sum).
        let nonce = 0x1234_5678_9abc_def0;
        let good = report(nonce);
        assert!(wire::decode(&good, nonce).is_ok());
        let mut rng = Rng::new(9);
        let mut kinds = std::collections::HashSet::new();
        for _ in 0..2000 {
            let mut b = good.clone();
            let k = corrupt(&mut rng, &mut b);
            kinds.insert(format!("{k:?}"));
            assert!(
                wire::decode(&b, nonce).is_err(),
                "{k:?} slipped through: {b:?}"
            );
        }
        assert_eq!(kinds.len(), 5, "{kinds:?}");
    }

    #[test]
    fn flood_datagrams_are_never_valid_for_a_session() {
        let mut rng = Rng::new(3);
        let mut out = Vec::new();
        let mut fcp = 0;
        for _ in 0..3000 {
            flood_datagram(&mut rng, 8, &mut out);
            if wire::peek(&out).is_ok() {
                fcp += 1;
                // Well formed, but keyed with a random nonce.
                assert!(wire::decode(&out, 42).is_err());
            }
        }
        assert!(fcp > 500, "{fcp}");
    }

    #[test]
    fn rates_are_probabilities() {
        let mut rng = Rng::new(1);
        let n = 100_000;
        let hits = (0..n).filter(|_| rng.unit() < 0.1).count();
        assert!((9_400..10_600).contains(&hits), "{hits}");
    }
}
