//! Arbiter failover (Fastpass §5.1) and epochs: a secondary takes over after 1 ms
//! without watchdogs and not before; endpoints follow the higher epoch and ignore a stale
//! primary, which stands down when it hears the higher epoch; demand is granted exactly
//! once across the change.

use spillway_arbiter::fcp::wire::{Body, Msg};
use spillway_arbiter::fcp::*;
use spillway_arbiter::{Arbiter, Batch, Fabric, Mode, Policy};

const US: u64 = 1_000_000;
const MS: u64 = 1000 * US;

#[test]
fn secondary_takes_over_after_one_ms_of_silence_and_not_before() {
    let mut primary = Failover::new(FailoverConfig::new(0, 3), 0);
    let mut second = Failover::new(FailoverConfig::new(1, 3), 0);
    let mut third = Failover::new(FailoverConfig::new(2, 3), 0);
    assert_eq!(primary.role(), Role::Primary);
    let mut last = 0;
    // 5 ms of watchdogs every 100 us: nobody takes over.
    for t in (0..5 * MS).step_by(US as usize) {
        if primary.watchdog_due(t) {
            last = t;
            for s in [&mut second, &mut third] {
                assert_eq!(s.on_watchdog(t, primary.epoch()), None);
            }
        }
        assert_eq!(second.handle_timeout(t), None);
        assert_eq!(third.handle_timeout(t), None);
    }
    assert_eq!(last, 5 * MS - 100 * US);
    // The primary dies: rank 1 takes over exactly 1 ms after the last watchdog.
    assert_eq!(second.poll_timeout(), last + MS);
    assert_eq!(second.handle_timeout(last + MS - 1), None);
    let ev = second.handle_timeout(last + MS);
    let epoch = second.epoch();
    assert_eq!(ev, Some(FailoverEvent::TookOver { epoch }));
    assert!(epoch > primary.epoch());
    assert_eq!(epoch % 3, 1, "an epoch belongs to one rank");
    assert!(second.watchdog_due(last + MS));
    // Rank 2 hears the new primary and stays a secondary.
    assert_eq!(third.on_watchdog(last + MS, epoch), None);
    assert_eq!(third.handle_timeout(last + 2 * MS - 1), None);
    // The old primary comes back and hears the new one: it stands down.
    assert_eq!(
        primary.on_watchdog(last + MS, epoch),
        Some(FailoverEvent::StoodDown { epoch })
    );
    assert_eq!(primary.role(), Role::Secondary);
    // A stale watchdog (lower epoch) neither refreshes a secondary nor demotes a primary.
    assert_eq!(second.on_watchdog(last + MS, 3), None);
    assert_eq!(second.role(), Role::Primary);
}

#[test]
fn ranks_take_over_in_order() {
    let mut second = Failover::new(FailoverConfig::new(1, 3), 0);
    let mut third = Failover::new(FailoverConfig::new(2, 3), 0);
    second.on_watchdog(0, 3);
    third.on_watchdog(0, 3);
    // Rank 1 is dead too: rank 2 waits 2 ms.
    assert_eq!(third.handle_timeout(2 * MS - 1), None);
    let ev = third.handle_timeout(2 * MS);
    assert_eq!(ev, Some(FailoverEvent::TookOver { epoch: 5 }));
    // Were rank 1 alive and taking over at 1 ms, rank 2 would have heard it in time.
    assert_eq!(
        second.handle_timeout(MS),
        Some(FailoverEvent::TookOver { epoch: 4 })
    );
}

/// Two arbiters (rank 0 primary, rank 1 secondary) and endpoints; every message takes
/// 5 us; endpoint messages go to both arbiters (the paper's multicast).
struct World {
    arbs: Vec<(Arbiter, Comm)>,
    eps: Vec<Endpoint>,
    /// (deliver at, to arbiter i or endpoint e, message)
    net: Vec<(u64, Node, Msg)>,
    /// Links cut: arbiter i is unreachable to and from everything.
    down: [bool; 2],
    /// Watchdogs between the arbiters are lost (a partition between them only).
    watchdogs_lost: bool,
    batch: Batch,
    next_first: u64,
    asked: Vec<Vec<u64>>,
    granted: Vec<Vec<u64>>,
    /// Messages from arbiter 0 to endpoints, kept to replay later.
    captured: Vec<(u32, Msg)>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Node {
    Arb(usize),
    Ep(u32),
}

impl World {
    fn new(n: u32) -> World {
        let fabric = Fabric::full_bisection(n as usize);
        let arbs = (0..2)
            .map(|rank| {
                let mut a = Arbiter::new(&fabric, Policy::MaxMin, Mode::Greedy, 8).unwrap();
                let c = Comm::new(
                    CommConfig::new(FailoverConfig::new(rank, 2), 11 + rank as u64),
                    n,
                    &mut a,
                    0,
                );
                (a, c)
            })
            .collect();
        let eps = (0..n)
            .map(|e| {
                let mut c = EndpointConfig::new(e);
                c.timeslot = US;
                Endpoint::new(c)
            })
            .collect();
        World {
            arbs,
            eps,
            net: Vec::new(),
            down: [false; 2],
            watchdogs_lost: false,
            batch: Batch::new(),
            next_first: 65,
            asked: vec![vec![0; n as usize]; n as usize],
            granted: vec![vec![0; n as usize]; n as usize],
            captured: Vec::new(),
        }
    }

    fn step(&mut self, now: u64) {
        self.net.sort_by_key(|p| p.0);
        let due = self.net.iter().take_while(|p| p.0 <= now).count();
        for (_, to, m) in self.net.drain(..due).collect::<Vec<_>>() {
            match to {
                Node::Arb(i) => {
                    let (a, c) = &mut self.arbs[i];
                    c.handle(now, m, a);
                }
                Node::Ep(e) => self.eps[e as usize].handle(now, Input::Msg(m)),
            }
        }
        for i in 0..2 {
            let (a, c) = &mut self.arbs[i];
            if self.down[i] {
                continue;
            }
            if c.poll_timeout() <= now {
                c.handle_timeout(now, a);
            }
            // Both allocate on the same clock; only a primary produces anything.
            if now.is_multiple_of(8 * US) {
                c.allocate(self.next_first, a, &mut self.batch, |_| 0);
            }
            while let Some(t) = c.poll_transmit() {
                match t.dest {
                    Dest::Endpoint(e) => {
                        if i == 0 {
                            self.captured.push((e, t.msg.clone()));
                        }
                        self.net.push((now + 5 * US, Node::Ep(e), t.msg));
                    }
                    Dest::Arbiters if !self.watchdogs_lost => {
                        self.net.push((now + 5 * US, Node::Arb(1 - i), t.msg))
                    }
                    Dest::Arbiters => {}
                }
            }
        }
        if now.is_multiple_of(8 * US) {
            self.next_first += 8;
        }
        for e in 0..self.eps.len() {
            if self.eps[e].poll_timeout().is_some_and(|t| t <= now) {
                self.eps[e].handle_timeout(now);
            }
            while let Some(m) = self.eps[e].poll_transmit() {
                for i in 0..2 {
                    if !self.down[i] {
                        self.net.push((now + 5 * US, Node::Arb(i), m.clone()));
                    }
                }
            }
            while let Some(g) = self.eps[e].poll_event() {
                self.granted[e][g.dst as usize] += 1;
            }
        }
        // A dead arbiter's packets in flight are lost with it.
        let down = self.down;
        self.net.retain(|p| !matches!(p.1, Node::Arb(i) if down[i]));
        for (s, row) in self.granted.iter().enumerate() {
            for (d, &g) in row.iter().enumerate() {
                assert!(
                    g <= self.asked[s][d],
                    "{s}->{d}: {g} granted, asked {}",
                    self.asked[s][d]
                );
            }
        }
    }

    fn ask(&mut self, now: u64, src: u32, dst: u32, slots: u64) {
        self.asked[src as usize][dst as usize] += slots;
        self.eps[src as usize].handle(now, Input::Demand { dst, slots });
    }
}

#[test]
fn crash_failover_endpoints_follow_and_ignore_the_stale_primary() {
    let mut w = World::new(3);
    let mut t = 0;
    while t < 500 * US {
        w.step(t);
        t += US;
    }
    let e0 = w.arbs[0].1.epoch();
    assert!(w.eps.iter().all(|e| e.synced() && e.epoch() == e0));
    w.ask(t, 0, 1, 300);
    w.ask(t, 2, 1, 300);
    while t < 700 * US {
        w.step(t);
        t += US;
    }
    assert!(w.granted[0][1] > 0);
    // The primary crashes at 700 us with demand outstanding.
    w.down[0] = true;
    let crash = t;
    let mut took = None;
    while t < crash + 3 * MS {
        w.step(t);
        while let Some(ev) = w.arbs[1].1.poll_event() {
            if let CommEvent::Failover(FailoverEvent::TookOver { epoch }) = ev {
                took = Some((t, epoch));
            }
        }
        t += US;
    }
    let (at, e1) = took.expect("the secondary took over");
    assert!(
        at >= crash + MS - 100 * US && at <= crash + MS + 10 * US,
        "took over at {at}"
    );
    assert!(e1 > e0);
    assert_eq!(w.arbs[1].1.role(), Role::Primary);
    for e in &w.eps {
        assert!(e.synced());
        assert_eq!(e.epoch(), e1);
    }
    assert_eq!(w.granted[0][1], 300);
    assert_eq!(w.granted[2][1], 300);

    // A stale primary's allocation replayed now: ignored, nothing granted.
    let (e, m) = w
        .captured
        .iter()
        .rev()
        .find(|(_, m)| matches!(m.body, Body::Alloc(ref a) if !a.grants.is_empty()))
        .cloned()
        .unwrap();
    let before = w.eps[e as usize].stats().stale_epoch;
    w.eps[e as usize].handle(t, Input::Msg(m));
    assert_eq!(w.eps[e as usize].stats().stale_epoch, before + 1);
    assert_eq!(w.eps[e as usize].poll_event(), None);
    // So is a stale reset.
    let reset = Msg {
        epoch: e0,
        seq: 9999,
        endpoint: e,
        nonce: 0,
        body: Body::Reset { nonce: 42 },
    };
    w.eps[e as usize].handle(t, Input::Msg(reset));
    assert_eq!(w.eps[e as usize].epoch(), e1);
    assert_ne!(w.eps[e as usize].nonce(), 42);
}

#[test]
fn partitioned_primary_stands_down_when_it_hears_the_higher_epoch() {
    let mut w = World::new(3);
    let mut t = 0;
    while t < 300 * US {
        w.step(t);
        t += US;
    }
    // Watchdogs between the arbiters are lost; both still reach the endpoints.
    w.watchdogs_lost = true;
    w.ask(t, 0, 2, 2000);
    w.ask(t, 1, 2, 2000);
    let mut took = None;
    let mut stood_down = None;
    let start = t;
    while stood_down.is_none() && t < start + 4 * MS {
        w.step(t);
        while let Some(ev) = w.arbs[1].1.poll_event() {
            if let CommEvent::Failover(FailoverEvent::TookOver { epoch }) = ev {
                took = took.or(Some((t, epoch)));
            }
        }
        while let Some(ev) = w.arbs[0].1.poll_event() {
            if let CommEvent::Failover(FailoverEvent::StoodDown { epoch }) = ev {
                stood_down = Some((t, epoch));
            }
        }
        t += US;
    }
    let (took_at, e1) = took.expect("the secondary took over");
    let (at, epoch) = stood_down.expect("the old primary stood down");
    assert!(took_at <= start + MS, "took over at {took_at}");
    // It hears the endpoints' messages of the new epoch one round trip after takeover.
    assert_eq!(epoch, e1);
    assert!(
        at - took_at <= 20 * US,
        "took over at {took_at}, stood down at {at}"
    );
    assert_eq!(w.arbs[0].1.role(), Role::Secondary);
    assert_eq!(w.arbs[1].1.role(), Role::Primary);
    // The partition heals. (While it lasts, the roles alternate every 1 ms: the
    // stood-down arbiter hears no watchdog and takes over again; each switch resyncs the
    // endpoints and grants never exceed demand, checked every step.) In the end
    // everything is granted.
    w.watchdogs_lost = false;
    while t < start + 12 * MS {
        w.step(t);
        t += US;
    }
    assert_eq!(w.granted[0][2], 2000);
    assert_eq!(w.granted[1][2], 2000);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// The primary crashes at a random time while random demand is being served: no pair
    /// is ever granted more than asked (checked every step) and the new primary grants
    /// the rest.
    #[test]
    fn random_crash_grants_exactly_once(
        crash in 200..2000u64,
        sched in proptest::collection::vec((0..2000u64, 0..4u32, 1..4u32, 1..200u64), 1..12),
    ) {
        let mut w = World::new(4);
        let mut sched: Vec<_> = sched.into_iter().map(|(t, s, o, k)| (t, s, (s + o) % 4, k)).collect();
        sched.sort();
        let mut next = 0;
        for t in 0..8000u64 {
            if t == crash {
                w.down[0] = true;
            }
            while next < sched.len() && sched[next].0 <= t {
                let (_, s, d, k) = sched[next];
                w.ask(t * US, s, d, k);
                next += 1;
            }
            w.step(t * US);
        }
        proptest::prop_assert_eq!(w.arbs[1].1.role(), Role::Primary);
        proptest::prop_assert_eq!(&w.granted, &w.asked);
    }
}
