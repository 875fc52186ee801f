//! FCP end to end: endpoints and the arbiter's protocol side driven through a channel
//! model that loses, duplicates, reorders, delays and corrupts packets (every packet is
//! encoded and decoded). Nothing is ever granted beyond what the host asked for, and
//! once the channel delivers again everything asked for is granted. Resets
//! resynchronize in one round trip; lost and late allocations are re-requested.

use proptest::prelude::*;
use spillway_arbiter::fcp::wire::{self, Alloc, Body, Msg, SlotGrant, Totals, MAX_MSG_LEN};
use spillway_arbiter::fcp::*;
use spillway_arbiter::{Arbiter, Batch, Fabric, Mode, Policy};

const US: u64 = 1_000_000;
const WIDTH: u32 = 8;
/// Timeslots allocated this far ahead (the paper's 65 us lead, in 1 us timeslots).
const LEAD: u64 = 65;

#[derive(Clone, Copy, Debug)]
struct Channel {
    loss: f64,
    dup: f64,
    corrupt: f64,
    max_delay: u64,
}

const PERFECT: Channel = Channel {
    loss: 0.0,
    dup: 0.0,
    corrupt: 0.0,
    max_delay: 1,
};

#[derive(Clone, Copy)]
enum To {
    Arbiter,
    Endpoint(u32),
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 > 1.0 - p
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

struct World {
    arb: Arbiter,
    comm: Comm,
    eps: Vec<Endpoint>,
    batch: Batch,
    /// In flight: (deliver at, order, destination, bytes).
    net: Vec<(u64, u64, To, Vec<u8>)>,
    order: u64,
    rng: Rng,
    chan: Channel,
    next_first: u64,
    /// Timeslots asked for and granted, per (src, dst).
    asked: Vec<Vec<u64>>,
    granted: Vec<Vec<u64>>,
}

impl World {
    fn new(n: u32, seed: u64) -> World {
        Self::with_config(n, seed, CommConfig::new(FailoverConfig::new(0, 1), seed))
    }

    fn with_config(n: u32, seed: u64, cfg: CommConfig) -> World {
        let fabric = Fabric::full_bisection(n as usize);
        let mut arb = Arbiter::new(&fabric, Policy::MaxMin, Mode::Greedy, WIDTH).unwrap();
        let comm = Comm::new(cfg, n, &mut arb, 0);
        let eps = (0..n)
            .map(|e| {
                let mut c = EndpointConfig::new(e);
                c.timeslot = US;
                Endpoint::new(c)
            })
            .collect();
        World {
            arb,
            comm,
            eps,
            batch: Batch::new(),
            net: Vec::new(),
            order: 0,
            rng: Rng(seed),
            chan: PERFECT,
            next_first: LEAD,
            asked: vec![vec![0; n as usize]; n as usize],
            granted: vec![vec![0; n as usize]; n as usize],
        }
    }

    fn send(&mut self, now: u64, to: To, m: &Msg) {
        let mut buf = vec![0; MAX_MSG_LEN];
        let len = m.encode(&mut buf).unwrap();
        buf.truncate(len);
        if self.rng.chance(self.chan.loss) {
            return;
        }
        let copies = if self.rng.chance(self.chan.dup) { 2 } else { 1 };
        for _ in 0..copies {
            let mut b = buf.clone();
            if self.rng.chance(self.chan.corrupt) {
                let i = self.rng.below(b.len() as u64) as usize;
                b[i] ^= 1 << self.rng.below(8);
            }
            let at = now + 1 + self.rng.below(self.chan.max_delay);
            self.order += 1;
            self.net.push((at, self.order, to, b));
        }
    }

    /// One microsecond of the world.
    fn step(&mut self, now: u64) {
        // Deliver.
        self.net.sort_by_key(|p| (p.0, p.1));
        let due = self.net.iter().take_while(|p| p.0 <= now).count();
        for (_, _, to, b) in self.net.drain(..due).collect::<Vec<_>>() {
            match to {
                To::Arbiter => self.comm.handle_bytes(now, &b, &mut self.arb),
                To::Endpoint(e) => self.eps[e as usize].handle_bytes(now, &b),
            }
        }
        // Timers and the arbiter's batches (one batch per WIDTH timeslots).
        if self.comm.poll_timeout() <= now {
            self.comm.handle_timeout(now, &mut self.arb);
        }
        if now.is_multiple_of(WIDTH as u64 * US) {
            let first = self.next_first;
            self.next_first += WIDTH as u64;
            self.comm
                .allocate(first, &mut self.arb, &mut self.batch, |g| {
                    (g.slot % 3) as u16
                });
        }
        for e in 0..self.eps.len() {
            if self.eps[e].poll_timeout().is_some_and(|t| t <= now) {
                self.eps[e].handle_timeout(now);
            }
        }
        // Transmit.
        while let Some(t) = self.comm.poll_transmit() {
            if let Dest::Endpoint(e) = t.dest {
                self.send(now, To::Endpoint(e), &t.msg);
            }
        }
        for e in 0..self.eps.len() {
            while let Some(m) = self.eps[e].poll_transmit() {
                self.send(now, To::Arbiter, &m);
            }
            while let Some(g) = self.eps[e].poll_event() {
                self.granted[e][g.dst as usize] += 1;
                assert!(
                    g.timeslot * US + 10 * US >= now,
                    "a late slot was handed to the host"
                );
            }
        }
    }

    fn ask(&mut self, now: u64, src: u32, dst: u32, slots: u64) {
        self.asked[src as usize][dst as usize] += slots;
        self.eps[src as usize].handle(now, Input::Demand { dst, slots });
    }

    fn never_over(&self) -> Result<(), TestCaseError> {
        for (s, row) in self.granted.iter().enumerate() {
            for (d, &g) in row.iter().enumerate() {
                prop_assert!(
                    g <= self.asked[s][d],
                    "{s}->{d}: granted {g} > asked {}",
                    self.asked[s][d]
                );
            }
        }
        Ok(())
    }
}

/// Demand events: (time in us, src, dst, slots).
fn schedule(n: u32) -> impl Strategy<Value = Vec<(u64, u32, u32, u64)>> {
    prop::collection::vec((0..1500u64, 0..n, 1..n, 1..40u64), 1..30).prop_map(move |v| {
        v.into_iter()
            .map(|(t, s, off, k)| (t, s, (s + off) % n, k))
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Lossy, duplicating, reordering, corrupting channel for 2 ms, then a perfect one:
    /// never more granted than asked, and in the end everything asked is granted.
    #[test]
    fn lossy_channel_never_over_allocates_and_recovers(
        seed in any::<u64>(),
        sched in schedule(4),
        loss in 0.0..0.4f64,
        dup in 0.0..0.3f64,
        corrupt in 0.0..0.05f64,
        max_delay in 1..30u64,
    ) {
        let mut w = World::new(4, seed);
        w.chan = Channel { loss, dup, corrupt, max_delay };
        let mut sched = sched;
        sched.sort();
        let mut next = 0;
        let end = 6000;
        for t in 0..end {
            if t == 2000 {
                w.chan = PERFECT;
            }
            let now = t * US;
            while next < sched.len() && sched[next].0 <= t {
                let (_, s, d, k) = sched[next];
                w.ask(now, s, d, k);
                next += 1;
            }
            w.step(now);
            w.never_over()?;
        }
        for s in 0..4 {
            for d in 0..4 {
                prop_assert_eq!(w.granted[s][d], w.asked[s][d], "{}->{} after recovery", s, d);
            }
            prop_assert_eq!(w.eps[s].synced(), true);
        }
    }
}

#[test]
fn perfect_channel_grants_exactly() {
    let mut w = World::new(3, 7);
    w.ask(0, 0, 1, 30);
    w.ask(0, 2, 1, 30);
    w.ask(0, 1, 0, 5);
    for t in 0..400 {
        w.step(t * US);
    }
    assert_eq!(w.granted[0][1], 30);
    assert_eq!(w.granted[2][1], 30);
    assert_eq!(w.granted[1][0], 5);
    for e in &w.eps {
        assert_eq!(e.stats().slots_lost, 0);
        assert_eq!(e.stats().resets, 1);
    }
}

/// A destination whose demand was all granted and acknowledged, asked again later, is
/// granted again, with nothing counted lost: the endpoint keeps the running totals the
/// arbiter keeps (a bug once dropped them when settled, and every later report then
/// fell behind the arbiter's totals and asked for nothing, for good).
#[test]
fn a_settled_destination_asked_again_is_granted_again() {
    let mut w = World::new(3, 11);
    w.ask(0, 0, 1, 10);
    for t in 0..300 {
        w.step(t * US);
    }
    assert_eq!(w.granted[0][1], 10);
    for round in 1..=3u64 {
        // A report about another destination first, while 0 -> 1 is settled.
        let start = 300 * round;
        w.ask(start * US, 0, 2, 1);
        for t in start..start + 50 {
            w.step(t * US);
        }
        w.ask((start + 50) * US, 0, 1, 7);
        for t in start + 50..start + 300 {
            w.step(t * US);
        }
        assert_eq!(w.granted[0][1], 10 + 7 * round, "round {round}");
        assert_eq!(w.granted[0][2], round, "round {round}");
    }
    assert_eq!(w.eps[0].stats().slots_lost, 0);
}

/// With answers deferred to the next batch (`defer_acks`), every report is still
/// answered (nothing is retransmitted on a perfect channel), everything asked for is
/// granted exactly, and the arbiter sends one message per endpoint per batch at most.
#[test]
fn deferred_answers_grant_exactly_with_fewer_messages() {
    let run = |defer: bool| {
        let mut cfg = CommConfig::new(FailoverConfig::new(0, 1), 5);
        cfg.defer_acks = defer;
        let mut w = World::with_config(3, 5, cfg);
        for k in 0..20u64 {
            // A report every 10 us, as a busy endpoint makes them.
            w.ask(k * 10 * US, 0, 1, 3);
            w.ask(k * 10 * US, 2, 1, 2);
            for t in k * 10..(k + 1) * 10 {
                w.step(t * US);
            }
        }
        for t in 200..800 {
            w.step(t * US);
        }
        assert_eq!(w.granted[0][1], 60);
        assert_eq!(w.granted[2][1], 40);
        for e in &w.eps {
            assert_eq!(e.stats().slots_lost, 0);
            assert_eq!(e.stats().retransmits, 0);
        }
        let s = *w.comm.stats();
        s.allocs_sent + s.acks_sent
    };
    let (at_once, deferred) = (run(false), run(true));
    // 800 us of 8 us batches: at most 100 answers per endpoint when deferred.
    assert!(deferred <= 2 * 100, "{deferred}");
    assert!(deferred < at_once, "{deferred} vs {at_once}");
}

/// An endpoint and a comm wired directly (Msg values, no channel).
struct Pair {
    arb: Arbiter,
    comm: Comm,
    ep: Endpoint,
}

impl Pair {
    fn new() -> Pair {
        let mut arb =
            Arbiter::new(&Fabric::full_bisection(2), Policy::MaxMin, Mode::Greedy, 4).unwrap();
        let comm = Comm::new(
            CommConfig::new(FailoverConfig::new(0, 1), 1),
            2,
            &mut arb,
            0,
        );
        let mut c = EndpointConfig::new(0);
        c.timeslot = US;
        let ep = Endpoint::new(c);
        Pair { arb, comm, ep }
    }
    /// Messages from the arbiter to endpoint 0.
    fn arbiter_out(&mut self) -> Vec<Msg> {
        let mut v = Vec::new();
        while let Some(t) = self.comm.poll_transmit() {
            if t.dest == Dest::Endpoint(0) {
                v.push(t.msg);
            }
        }
        v
    }
    fn endpoint_out(&mut self) -> Vec<Msg> {
        std::iter::from_fn(|| self.ep.poll_transmit()).collect()
    }
    fn deliver_endpoint(&mut self, now: u64, ms: Vec<Msg>) {
        for m in ms {
            self.ep.handle(now, Input::Msg(m));
        }
    }
    fn deliver_arbiter(&mut self, now: u64, ms: Vec<Msg>) {
        for m in ms {
            self.comm.handle(now, m, &mut self.arb);
        }
    }
    /// One round trip at `now`: arbiter -> endpoint (timers fired) -> arbiter.
    fn round_trip(&mut self, now: u64) {
        let a = self.arbiter_out();
        self.deliver_endpoint(now, a);
        self.ep.handle_timeout(now);
        let e = self.endpoint_out();
        self.deliver_arbiter(now, e);
    }
}

#[test]
fn reset_resynchronizes_in_one_round_trip() {
    let mut p = Pair::new();
    // Demand queued before the endpoint ever heard the arbiter.
    p.ep.handle(0, Input::Demand { dst: 1, slots: 10 });
    p.round_trip(0);
    assert!(p.ep.synced());
    assert_eq!(p.arb.demand().remaining((0, 1).into_flow()).unwrap(), 10);
    let mut b = Batch::new();
    p.comm.allocate(100, &mut p.arb, &mut b, |_| 0);
    let a = p.arbiter_out();
    p.deliver_endpoint(0, a);
    let got = std::iter::from_fn(|| p.ep.poll_event()).count();
    assert_eq!(got, 4);
    assert_eq!(p.ep.outstanding(1), 6);

    // The endpoint's nonce goes wrong (as after a failover): a burst of bad checksums
    // makes the arbiter reset it; one round trip later its queue (6 slots) is requested
    // again from zero.
    let bad_nonce = p.comm.nonce(0) ^ 1;
    for i in 0..4 {
        let m = Msg {
            epoch: p.comm.epoch(),
            seq: 100 + i,
            endpoint: 0,
            nonce: bad_nonce,
            body: Body::Report(vec![wire::Demand { dst: 1, total: 99 }]),
        };
        p.comm.handle(1000 * US, m, &mut p.arb);
    }
    assert_eq!(p.comm.stats().bad_checksums, 4);
    assert_eq!(p.comm.stats().resets, 3); // two at start (endpoints 0, 1), one now
    assert_eq!(p.arb.demand().remaining((0, 1).into_flow()).unwrap(), 0);
    p.round_trip(1000 * US);
    assert_eq!(p.ep.stats().resets, 2);
    assert_eq!(p.arb.demand().requested((0, 1).into_flow()).unwrap(), 6);
    assert_eq!(p.arb.demand().remaining((0, 1).into_flow()).unwrap(), 6);
    // And the session works: the rest is allocated and received.
    for k in 0..2 {
        p.comm.allocate(2000 + 4 * k, &mut p.arb, &mut b, |_| 0);
    }
    let a = p.arbiter_out();
    p.deliver_endpoint(1000 * US, a);
    assert_eq!(std::iter::from_fn(|| p.ep.poll_event()).count(), 6);
    assert_eq!(p.ep.outstanding(1), 0);
}

#[test]
fn lost_allocation_is_detected_and_requested_again() {
    let mut p = Pair::new();
    p.ep.handle(0, Input::Demand { dst: 1, slots: 3 });
    p.round_trip(0);
    let _ = p.arbiter_out(); // the ack
    let mut b = Batch::new();
    p.comm.allocate(100, &mut p.arb, &mut b, |_| 0);
    let lost = p.arbiter_out();
    assert_eq!(lost.len(), 1);
    drop(lost);
    // The retransmit timer re-sends the current totals as a query; the answer's allocated
    // total shows three slots the endpoint never saw.
    let rto = p.ep.poll_timeout().unwrap();
    p.ep.handle_timeout(rto);
    let r = p.endpoint_out();
    assert!(matches!(&r[..], [Msg { body: Body::Query(d), .. }] if d[0].total == 3));
    p.deliver_arbiter(rto, r);
    let ack = p.arbiter_out();
    p.deliver_endpoint(rto, ack);
    assert_eq!(p.ep.stats().slots_lost, 3);
    assert_eq!(p.ep.requested(1), 6);
    p.ep.handle_timeout(rto + EndpointConfig::new(0).report_interval);
    let r = p.endpoint_out();
    p.deliver_arbiter(rto, r);
    assert_eq!(p.arb.demand().remaining((0, 1).into_flow()).unwrap(), 3);
}

/// §5.3: while the arbiter's allocation messages keep arriving in sequence, an endpoint
/// waiting for a long backlog resends nothing: no message was lost, and the arbiter
/// already holds its total. Before, every endpoint with demand not yet all allocated
/// resent the totals of every waiting destination every `retransmit` (200 us), however
/// many allocations came meanwhile: control traffic that grew with the backlog, and
/// more of it the slower the arbiter allocated.
#[test]
fn a_busy_endpoint_resends_nothing_while_its_allocations_come_in_sequence() {
    let mut p = Pair::new();
    p.ep.handle(0, Input::Demand { dst: 1, slots: 400 });
    p.round_trip(0);
    let ack = p.arbiter_out();
    // The answer acknowledges the report by its sequence number, with no counts.
    assert!(
        matches!(&ack[..], [Msg { body: Body::Alloc(a), .. }] if a.totals.is_empty() && a.grants.is_empty()),
        "{ack:?}"
    );
    p.deliver_endpoint(0, ack);
    let mut b = Batch::new();
    // A batch of 4 timeslots every 10 us for 1 ms: 5 retransmit timeouts' worth.
    for k in 0..100 {
        let now = k * 10 * US;
        p.comm.allocate(1000 + 4 * k, &mut p.arb, &mut b, |_| 0);
        let a = p.arbiter_out();
        p.deliver_endpoint(now, a);
        if p.ep.poll_timeout().is_some_and(|t| t <= now) {
            p.ep.handle_timeout(now);
        }
        let e = p.endpoint_out();
        p.deliver_arbiter(now, e);
    }
    assert_eq!(std::iter::from_fn(|| p.ep.poll_event()).count(), 400);
    assert_eq!(p.ep.stats().retransmits, 0);
    assert_eq!(p.ep.stats().reports_sent, 1);
    assert_eq!(p.ep.outstanding(1), 0);
    assert_eq!(p.ep.poll_timeout(), None, "settled: no timer left");
}

/// §5.3: the arbiter's messages to an endpoint are numbered; one missing (its grants
/// lost) is noticed when the next arrives, and the endpoint's current totals go out at
/// once: the answer's counts show the lost timeslots, which are asked for again. The
/// allocation messages themselves carry no totals (only answers to reports do).
#[test]
fn a_gap_in_the_arbiters_numbers_sends_the_totals_at_once() {
    let mut p = Pair::new();
    p.ep.handle(0, Input::Demand { dst: 1, slots: 8 });
    p.round_trip(0);
    let ack = p.arbiter_out();
    p.deliver_endpoint(0, ack);
    let mut b = Batch::new();
    p.comm.allocate(100, &mut p.arb, &mut b, |_| 0);
    p.comm.allocate(104, &mut p.arb, &mut b, |_| 0);
    let mut a = p.arbiter_out();
    assert_eq!(a.len(), 2);
    for m in &a {
        let Body::Alloc(al) = &m.body else {
            panic!("{m:?}")
        };
        assert_eq!(al.grants.len(), 4);
        assert!(al.totals.is_empty(), "a grant needs no totals: {m:?}");
        assert_eq!(m.wire_len(), wire::alloc_len(4, 0));
    }
    let second = a.pop().unwrap();
    // The first is lost; the second arrives.
    let t = 50 * US;
    p.deliver_endpoint(t, vec![second]);
    assert_eq!(std::iter::from_fn(|| p.ep.poll_event()).count(), 4);
    assert_eq!(p.ep.stats().gaps, 1);
    assert_eq!(p.ep.poll_timeout(), Some(t), "a query is due at once");
    p.ep.handle_timeout(t);
    let r = p.endpoint_out();
    assert!(matches!(&r[..], [Msg { body: Body::Query(d), .. }] if d[0].total == 8));
    p.deliver_arbiter(t, r);
    let answer = p.arbiter_out();
    p.deliver_endpoint(t, answer);
    assert_eq!(p.ep.stats().slots_lost, 4);
    assert_eq!(p.ep.stats().retransmits, 0);
    assert_eq!(p.ep.requested(1), 12);
    p.ep.handle_timeout(t + EndpointConfig::new(0).report_interval);
    let r = p.endpoint_out();
    p.deliver_arbiter(t, r);
    assert_eq!(p.arb.demand().remaining((0, 1).into_flow()).unwrap(), 4);
}

#[test]
fn late_allocation_is_counted_and_requested_again() {
    let mut p = Pair::new();
    p.ep.handle(0, Input::Demand { dst: 1, slots: 2 });
    p.round_trip(0);
    let _ = p.arbiter_out();
    let nonce = p.ep.nonce();
    let epoch = p.ep.epoch();
    // Slot 5 started at 5 us; at 100 us it is far past the 10 us threshold. Slot 95
    // (95 us) is 5 us late: within it.
    let m = Msg {
        epoch,
        seq: 1000,
        endpoint: 0,
        nonce,
        body: Body::Alloc(Alloc {
            base: 5,
            ack: 0,
            ack_vec: 0,
            grants: vec![
                SlotGrant {
                    offset: 0,
                    path: 0,
                    dst: 1,
                },
                SlotGrant {
                    offset: 90,
                    path: 1,
                    dst: 1,
                },
            ],
            totals: vec![Totals {
                dst: 1,
                requested: 2,
                allocated: 2,
            }],
        }),
    };
    p.ep.handle(100 * US, Input::Msg(m));
    assert_eq!(p.ep.stats().slots_late, 1);
    assert_eq!(p.ep.stats().slots_lost, 0);
    assert_eq!(
        p.ep.poll_event(),
        Some(Granted {
            timeslot: 95,
            dst: 1,
            path: 1
        })
    );
    assert_eq!(p.ep.poll_event(), None);
    assert_eq!(p.ep.requested(1), 3);
    assert_eq!(p.ep.outstanding(1), 1);
}

#[test]
fn duplicated_and_reordered_reports_allocate_once() {
    let mut p = Pair::new();
    p.round_trip(0);
    let _ = p.arbiter_out();
    p.ep.handle(0, Input::Demand { dst: 1, slots: 5 });
    p.ep.handle_timeout(10 * US);
    let r1 = p.endpoint_out();
    p.ep.handle(10 * US, Input::Demand { dst: 1, slots: 5 });
    p.ep.handle_timeout(20 * US);
    let r2 = p.endpoint_out();
    // Newer first, then the older one twice, then the newer again.
    p.deliver_arbiter(20 * US, r2.clone());
    p.deliver_arbiter(20 * US, r1.clone());
    p.deliver_arbiter(20 * US, r1);
    p.deliver_arbiter(20 * US, r2);
    assert_eq!(p.arb.demand().remaining((0, 1).into_flow()).unwrap(), 10);
}

trait IntoFlow {
    fn into_flow(self) -> spillway_arbiter::Flow;
}
impl IntoFlow for (u32, u32) {
    fn into_flow(self) -> spillway_arbiter::Flow {
        spillway_arbiter::Flow {
            src: self.0,
            dst: self.1,
        }
    }
}

/// Outside input never panics either machine: random bytes, and random messages (some
/// keyed with the right nonce, naming real endpoints and destinations, huge totals,
/// offsets and epochs), interleaved with timers.
#[derive(Clone, Debug)]
enum Junk {
    Bytes(Vec<u8>),
    Report(u32, u32, Vec<(u32, u64)>, bool),
    Alloc(u32, u32, u64, Vec<(u16, u16, u32)>, Vec<(u32, u64, u64)>),
    Reset(u32, u32, u64),
    Control(u32, u32, u8),
}

fn junk() -> impl Strategy<Value = Junk> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..200).prop_map(Junk::Bytes),
        (
            0..5u32,
            0..6u32,
            prop::collection::vec((0..5u32, any::<u64>()), 0..4),
            any::<bool>()
        )
            .prop_map(|(e, ep, v, q)| Junk::Report(e, ep, v, q)),
        (
            0..5u32,
            0..6u32,
            any::<u64>(),
            prop::collection::vec((any::<u16>(), any::<u16>(), 0..5u32), 0..4),
            prop::collection::vec((0..5u32, any::<u64>(), any::<u64>()), 0..4)
        )
            .prop_map(|(e, ep, b, g, t)| Junk::Alloc(e, ep, b, g, t)),
        (0..5u32, 0..6u32, any::<u64>()).prop_map(|(e, ep, n)| Junk::Reset(e, ep, n)),
        (0..5u32, 0..6u32, 0..3u8).prop_map(|(e, ep, k)| Junk::Control(e, ep, k)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn outside_input_never_panics(inputs in prop::collection::vec((junk(), any::<bool>(), 0..50u64), 1..60)) {
        let mut p = Pair::new();
        p.round_trip(0);
        let mut now = 0;
        for (j, right_nonce, dt) in inputs {
            now += dt * US;
            let nonce = if right_nonce { p.ep.nonce() } else { 7 };
            let m = |endpoint: u32, epoch: u32, body: Body| Msg { epoch, seq: (now / US) as u32, endpoint, nonce, body };
            let msg = match j {
                Junk::Bytes(b) => {
                    p.ep.handle_bytes(now, &b);
                    p.comm.handle_bytes(now, &b, &mut p.arb);
                    None
                }
                Junk::Report(e, ep, v, q) => {
                    let d = v.into_iter().map(|(dst, total)| wire::Demand { dst, total }).collect();
                    Some(m(e, ep, if q { Body::Query(d) } else { Body::Report(d) }))
                }
                Junk::Alloc(e, ep, base, g, t) => Some(m(e, ep, Body::Alloc(Alloc {
                    base,
                    ack: (now / US) as u32,
                    ack_vec: base as u32,
                    grants: g.into_iter().map(|(offset, path, dst)| SlotGrant { offset, path, dst }).collect(),
                    totals: t.into_iter().map(|(dst, requested, allocated)| Totals { dst, requested, allocated }).collect(),
                }))),
                Junk::Reset(e, ep, n) => Some(m(e, ep, Body::Reset { nonce: n })),
                Junk::Control(e, ep, k) => Some(m(e, ep, match k {
                    0 => Body::ResetRequest,
                    1 => Body::ResetAck { nonce },
                    _ => Body::Watchdog,
                })),
            };
            if let Some(msg) = msg {
                p.ep.handle(now, Input::Msg(msg.clone()));
                p.comm.handle(now, msg, &mut p.arb);
            }
            p.ep.handle(now, Input::Demand { dst: 1, slots: dt });
            p.ep.handle_timeout(now);
            p.comm.handle_timeout(now, &mut p.arb);
            let mut b = Batch::new();
            p.comm.allocate(now / US + 65, &mut p.arb, &mut b, |_| 0);
            let a = p.arbiter_out();
            p.deliver_endpoint(now, a);
            let e = p.endpoint_out();
            p.deliver_arbiter(now, e);
            while p.ep.poll_event().is_some() {}
            while p.comm.poll_event().is_some() {}
        }
    }
}
