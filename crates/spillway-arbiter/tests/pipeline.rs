//! The pipeline (Fastpass §3.1, Fig. 3) computes exactly what the single-threaded greedy
//! max-min allocator computes (resets included), and stays a valid allocation when run
//! ahead concurrently.

use proptest::prelude::*;
use spillway_arbiter::{Arbiter, Batch, Fabric, Flow, Mode, Pipeline, Policy};
use std::collections::HashMap;

fn fabric_strategy() -> impl Strategy<Value = Fabric> {
    prop_oneof![
        (2usize..40).prop_map(Fabric::full_bisection),
        (2usize..6, 2usize..8, 1u32..5).prop_map(|(r, per, cap)| Fabric::racks(r, per, cap, cap)),
    ]
}

/// Per batch, a list of (src, dst, more timeslots), and an endpoint to reset before the
/// requests (FCP re-synchronisation), sometimes.
type Work = Vec<(Vec<(u32, u32, u64)>, Option<u32>)>;

fn workload(n: u32) -> impl Strategy<Value = Work> {
    let req = (0..n, 0..n, 1u64..20).prop_filter("distinct", |(s, d, _)| s != d);
    let batch = (
        proptest::collection::vec(req, 0..30),
        proptest::option::weighted(0.15, 0..n),
    );
    proptest::collection::vec(batch, 1..25)
}

fn sorted(b: &Batch) -> Vec<(u32, u32, u32)> {
    let mut v: Vec<_> = b.grants().map(|g| (g.slot, g.src, g.dst)).collect();
    v.sort_unstable();
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn pipeline_equals_single_threaded_greedy(
        (fabric, work) in fabric_strategy().prop_flat_map(|f| {
            let n = f.endpoints() as u32;
            (Just(f), workload(n))
        }),
        stages in 2usize..4,
        width in prop_oneof![Just(1u32), Just(7), Just(64)],
        // Pairs per message between stages: 1 and 3 stream round 1 and the drained
        // slots in many pieces.
        chunk in prop_oneof![Just(1usize), Just(3), Just(256)],
    ) {
        let n = fabric.endpoints();
        let mut arb = Arbiter::new(&fabric, Policy::MaxMin, Mode::Greedy, width).unwrap();
        let mut pipe = Pipeline::with_chunk(&fabric, stages, width, chunk).unwrap();
        let mut totals = vec![0u64; n * n];
        let mut b = Batch::new();
        for (i, (reqs, reset)) in work.iter().enumerate() {
            if let Some(e) = *reset {
                // The endpoint's totals count from zero again; demand still waiting in
                // tokens (in either allocator) is dropped.
                arb.reset(e).unwrap();
                pipe.reset(e).unwrap();
                for d in 0..n {
                    totals[e as usize * n + d] = 0;
                }
            }
            for &(s, d, add) in reqs {
                let k = s as usize * n + d as usize;
                totals[k] += add;
                arb.request(s, d, totals[k]).unwrap();
                pipe.request(s, d, totals[k]).unwrap();
            }
            let first = i as u64 * width as u64;
            arb.allocate(first, &mut b);
            pipe.allocate(first);
            let pb = pipe.recv();
            prop_assert_eq!(pb.first_timeslot(), first);
            prop_assert_eq!(sorted(&pb), sorted(&b), "batch {} differs", i);
            pipe.recycle(pb);
        }
    }
}

/// Run ahead with several batches in flight while demand keeps arriving: every batch is
/// a matching within rack limits, and in the end every requested timeslot is allocated
/// exactly once.
#[test]
fn pipeline_runs_ahead_and_conserves_demand() {
    for (fabric, stages, chunk) in [
        (Fabric::full_bisection(64), 2, 256),
        (Fabric::full_bisection(64), 3, 2),
        (Fabric::racks(4, 16, 6, 6), 3, 5),
    ] {
        let n = fabric.endpoints();
        let width = 16u32;
        let mut pipe = Pipeline::with_chunk(&fabric, stages, width, chunk).unwrap();
        let mut totals = vec![0u64; n * n];
        let mut got: HashMap<(u32, u32), u64> = HashMap::new();
        let mut x = 0x9e3779b97f4a7c15u64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let check = |b: &Batch, got: &mut HashMap<(u32, u32), u64>| {
            let mut seen = std::collections::HashSet::new();
            let mut up = HashMap::new();
            let mut down = HashMap::new();
            for g in b.grants() {
                assert!(seen.insert((g.slot, 's', g.src)), "source twice in a slot");
                assert!(
                    seen.insert((g.slot, 'd', g.dst)),
                    "destination twice in a slot"
                );
                let (rs, rd) = (
                    fabric.rack_of(g.src).unwrap(),
                    fabric.rack_of(g.dst).unwrap(),
                );
                if rs != rd {
                    *up.entry((g.slot, rs)).or_insert(0) += 1;
                    *down.entry((g.slot, rd)).or_insert(0) += 1;
                    assert!(up[&(g.slot, rs)] <= fabric.up_cap(rs).unwrap());
                    assert!(down[&(g.slot, rd)] <= fabric.down_cap(rd).unwrap());
                }
                *got.entry((g.src, g.dst)).or_insert(0) += 1;
            }
        };
        let batches = 400u64;
        for i in 0..batches + 200 {
            if i < batches {
                for _ in 0..(rnd() % 12) {
                    let (s, d) = ((rnd() % n as u64) as u32, (rnd() % n as u64) as u32);
                    if s != d {
                        let k = s as usize * n + d as usize;
                        totals[k] += 1 + rnd() % 10;
                        pipe.request(s, d, totals[k]).unwrap();
                    }
                }
            }
            pipe.allocate(i * width as u64);
            if pipe.in_flight() > stages {
                let b = pipe.recv();
                check(&b, &mut got);
                pipe.recycle(b);
            }
        }
        while pipe.in_flight() > 0 {
            let b = pipe.recv();
            check(&b, &mut got);
        }
        for s in 0..n {
            for d in 0..n {
                let want = totals[s * n + d];
                assert_eq!(got.get(&(s as u32, d as u32)).copied().unwrap_or(0), want);
            }
        }
    }
}

/// A reset made on the shared table (as a failover handler holding only the table would)
/// drops the demand the pipeline's tokens still carry: nothing more is granted to the
/// pair, and it is never allocated more than it requested.
#[test]
fn a_reset_drops_the_demand_tokens_carry() {
    let mut pipe = Pipeline::new(&Fabric::full_bisection(4), 2, 8).unwrap();
    let f = Flow { src: 0, dst: 3 };
    // Two senders to one receiver: each gets half of every batch, so both keep demand.
    pipe.request(0, 3, 1000).unwrap();
    pipe.request(1, 3, 1000).unwrap();
    let mut first = 0;
    for _ in 0..2 {
        pipe.allocate(first);
        first += 8;
        pipe.recv();
    }
    assert_eq!(pipe.demand().allocated(f).unwrap(), 8);
    pipe.demand().reset(0).unwrap();
    assert_eq!(pipe.demand().remaining(f).unwrap(), 0);
    let mut got = 0;
    for _ in 0..3 {
        pipe.allocate(first);
        first += 8;
        got += pipe.recv().grants().filter(|g| g.flow() == f).count();
    }
    assert_eq!(got, 0, "granted demand the reset dropped");
    assert!(pipe.demand().allocated(f).unwrap() <= pipe.demand().requested(f).unwrap());
    // The other sender now has the receiver to itself.
    assert_eq!(
        pipe.demand().allocated(Flow { src: 1, dst: 3 }).unwrap(),
        8 + 24
    );
}

#[test]
#[should_panic(expected = "no batch in flight")]
fn recv_with_nothing_in_flight_is_refused() {
    Pipeline::new(&Fabric::full_bisection(4), 2, 8)
        .unwrap()
        .recv();
}

#[test]
#[should_panic(expected = "recv() finished batches")]
fn starting_more_batches_than_the_pipeline_holds_is_refused() {
    let mut pipe = Pipeline::new(&Fabric::full_bisection(4), 2, 8).unwrap();
    for b in 0..9 {
        pipe.allocate(b * 8);
    }
}
