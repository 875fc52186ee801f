//! The service's state machines under bad input (issue 29, must-show 5), without the
//! processes: random and mutated datagrams from registered endpoints, other arbiters and
//! strangers, interleaved with timers. Nothing may panic, every datagram is counted as
//! what it was, and a stranger's datagrams never reach FCP. (The demo does the same over
//! real sockets through `spillway-fcp-proxy`: tests/test_arbiter_service.py.)

use spillway_arbiter::fcp::wire::{self, Body, Demand, Msg};
use spillway_arbiter::service::arbiter::ArbiterService;
use spillway_arbiter::service::clock::Clock;
use spillway_arbiter::service::config::ServiceConfig;
use spillway_arbiter::service::demand::{self, Poisson};
use spillway_arbiter::service::endpoint::EndpointService;
use spillway_arbiter::service::faults::{corrupt, flood_datagram, Rng};
use spillway_arbiter::service::log::EventLog;
use spillway_arbiter::service::runtime::Service;
use std::net::{SocketAddr, UdpSocket};

const SLOT: u64 = 100_000_000;

fn config(sock: &UdpSocket) -> (ServiceConfig, Vec<SocketAddr>) {
    // Addresses nobody listens on but the test's one socket (sends to them are harmless).
    let me = sock.local_addr().unwrap();
    let eps: Vec<String> = (0..4)
        .map(|i| format!("\"127.0.0.1:{}\"", 40_000 + i))
        .collect();
    let text = format!(
        "[topology]\nkind = \"star\"\nhosts = 4\n[arbiter]\naddrs = [\"{me}\", \"127.0.0.1:39999\"]\n\
         timeslot = \"100us\"\n[endpoints]\naddrs = [{}]\n",
        eps.join(", ")
    );
    let cfg = ServiceConfig::parse(&text).unwrap();
    let addrs = cfg.endpoints.clone();
    (cfg, addrs)
}

fn report(endpoint: u32, nonce: u64, epoch: u32) -> Vec<u8> {
    let m = Msg {
        epoch,
        seq: 1,
        endpoint,
        nonce,
        body: Body::Report(vec![Demand {
            dst: (endpoint + 1) % 4,
            total: 3,
        }]),
    };
    let mut b = vec![0; wire::MAX_MSG_LEN];
    let n = m.encode(&mut b).unwrap();
    b.truncate(n);
    b
}

#[test]
fn arbiter_counts_and_survives_junk_from_everyone() {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let (cfg, eps) = config(&sock);
    let clock = Clock { origin_unix_ns: 1 };
    let mut arb = ArbiterService::new(cfg, 0, clock, 0, 7, EventLog::open(None).unwrap());
    let stranger: SocketAddr = "127.0.0.1:1".parse().unwrap();
    let other_arbiter: SocketAddr = "127.0.0.1:39999".parse().unwrap();
    let mut rng = Rng::new(11);
    let mut buf = Vec::new();
    let mut now = 0;
    let n = 60_000;
    for i in 0..n {
        let from = match i % 3 {
            0 => stranger,
            1 => eps[rng.below(eps.len())],
            _ => other_arbiter,
        };
        match rng.below(3) {
            0 => flood_datagram(&mut rng, 4, &mut buf),
            1 => {
                buf = report(rng.below(4) as u32, rng.next_u64(), 2);
                corrupt(&mut rng, &mut buf);
            }
            _ => {
                let len = rng.below(64);
                buf = (0..len).map(|_| rng.next_u64() as u8).collect();
            }
        }
        arb.on_datagram(now, &buf, from, &sock);
        if i % 50 == 0 {
            now += SLOT;
            arb.on_timer(now, &sock);
        }
    }
    let s = &arb.stats;
    // Every datagram was looked at and put somewhere; the status queries among them
    // were answered or rate-limited, never more than the limit per second.
    assert_eq!(s.datagrams, n);
    let status = arb.status_json(now);
    assert!(status.contains("\"role\": \"primary\""), "{status}");
    assert!(s.unknown_source > 10_000, "{s:?}");
    assert!(s.malformed > 10_000, "{s:?}");
    assert!(s.status_queries > 0 && s.status_limited > 0, "{s:?}");
    let secs = now / 1_000_000_000_000 + 1;
    assert!(s.status_queries <= secs * spillway_arbiter::service::arbiter::STATUS_PER_S as u64);
    // Nothing junk asked for was granted: no verified report ever arrived.
    assert_eq!(s.granted, 0, "{s:?}");
    assert_eq!(
        arb.role(),
        spillway_arbiter::fcp::Role::Primary,
        "junk never deposes it"
    );
}

#[test]
fn endpoint_counts_and_survives_junk() {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let (cfg, eps) = config(&sock);
    let arbiter = cfg.arbiters[0];
    let gen = demand::Demand::Poisson(Poisson::new(1, 0, 4, 0.5, SLOT, 0, 1_000 * SLOT));
    let mut ep = EndpointService::new(cfg, 0, gen, EventLog::open(None).unwrap());
    let stranger: SocketAddr = "127.0.0.1:2".parse().unwrap();
    let mut rng = Rng::new(5);
    let mut buf = Vec::new();
    let mut now = 0;
    for i in 0..30_000u32 {
        let from = [arbiter, eps[1], stranger][i as usize % 3];
        if rng.below(2) == 0 {
            flood_datagram(&mut rng, 4, &mut buf);
        } else {
            buf = report(0, rng.next_u64(), 2);
            corrupt(&mut rng, &mut buf);
        }
        ep.on_datagram(now, &buf, from, &sock);
        if i % 30 == 0 {
            now += SLOT;
            ep.on_timer(now, &sock);
        }
    }
    let c = &ep.counters;
    assert_eq!(c.received, 0, "no junk passes for data: {c:?}");
    assert!(c.unknown_source > 5_000 && c.malformed > 5_000, "{c:?}");
    assert!(c.demand > 0, "the endpoint kept making demand");
    let s = ep.summary_json();
    assert!(
        s.contains("\"slots_granted\": 0"),
        "no junk became a grant: {s}"
    );
}
