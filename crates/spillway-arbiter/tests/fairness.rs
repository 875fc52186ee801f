//! Fairness (Fastpass §7.2, issue 6): N long-lived senders to one receiver get
//! allocations that differ by at most one timeslot over every window, and a new sender is
//! served in its first timeslot with demand.

use proptest::prelude::*;
use spillway_arbiter::{Arbiter, Batch, Fabric, Flow, Mode, Policy, MAX_OUTSTANDING};

/// The receiver's sender in each timeslot, over `batches` batches.
fn receiver_schedule(
    arb: &mut Arbiter,
    recv: u32,
    first: u64,
    batches: u64,
    b: &mut Batch,
) -> Vec<Option<u32>> {
    let w = arb.allocator().width() as u64;
    let mut sched = Vec::new();
    for i in 0..batches {
        arb.allocate(first + i * w, b);
        let mut slot = vec![None; w as usize];
        for g in b.grants().filter(|g| g.dst == recv) {
            assert!(
                slot[g.slot as usize].is_none(),
                "receiver allocated twice in a slot"
            );
            slot[g.slot as usize] = Some(g.src);
        }
        sched.extend(slot);
    }
    sched
}

/// Max over all windows of (max - min) allocations among `senders`. For two senders the
/// window count difference is D(b) - D(a) with D the prefix difference, so the largest
/// spread over all windows is max D - min D: no need to enumerate windows.
fn worst_window_spread(sched: &[Option<u32>], senders: &[u32]) -> i64 {
    let mut worst = 0;
    for &i in senders {
        for &j in senders {
            let (mut d, mut lo, mut hi) = (0i64, 0i64, 0i64);
            for s in sched {
                if *s == Some(i) {
                    d += 1;
                }
                if *s == Some(j) {
                    d -= 1;
                }
                lo = lo.min(d);
                hi = hi.max(d);
            }
            worst = worst.max(hi - lo);
        }
    }
    worst
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Senders join one by one (Experiment C); each is served in the first timeslot of the
    /// first batch after its demand arrives, the receiver is never idle, and once all have
    /// joined every window is fair to within one timeslot.
    #[test]
    fn senders_to_one_receiver_are_fair(
        n in 2u32..24,
        width in prop_oneof![Just(1u32), Just(5), Just(8), Just(16), Just(64)],
        mode in prop_oneof![Just(Mode::Greedy), Just(Mode::Iterative)],
        gap in 1u64..4,
    ) {
        let fabric = Fabric::full_bisection(n as usize + 1);
        let recv = n;
        let mut arb = Arbiter::new(&fabric, Policy::MaxMin, mode, width).unwrap();
        let mut b = Batch::new();
        let w = width as u64;
        let mut t = 0;
        for s in 0..n {
            // As much as a pair may have outstanding: more than the test allocates.
            arb.request(s, recv, MAX_OUTSTANDING).unwrap();
            let sched = receiver_schedule(&mut arb, recv, t, gap, &mut b);
            prop_assert_eq!(sched[0], Some(s), "new sender {} not served first", s);
            prop_assert!(sched.iter().all(|x| x.is_some()), "receiver idle with demand");
            t += gap * w;
        }
        let batches = (4 * n as u64).div_ceil(w) + 2;
        let sched = receiver_schedule(&mut arb, recv, t, batches, &mut b);
        prop_assert!(sched.iter().all(|x| x.is_some()));
        let senders: Vec<u32> = (0..n).collect();
        prop_assert!(worst_window_spread(&sched, &senders) <= 1);
    }
}

/// A pair that was idle rejoins in "least recently allocated" order, not ahead of pairs
/// that have waited longer (§3.1).
#[test]
fn idle_pair_rejoins_in_key_order() {
    let fabric = Fabric::full_bisection(4);
    let mut arb = Arbiter::new(&fabric, Policy::MaxMin, Mode::Greedy, 1).unwrap();
    let mut b = Batch::new();
    arb.request(0, 2, 1).unwrap();
    arb.request(3, 2, 5).unwrap();
    arb.allocate(0, &mut b);
    let first: Vec<Flow> = b.timeslot(0).collect();
    assert_eq!(first.len(), 1);
    // Whoever won slot 0 asks again; the one that never got a slot must go first now.
    let (winner, waiting) = if first[0].src == 0 { (0, 3) } else { (3, 0) };
    arb.request(winner, 2, 10).unwrap();
    arb.allocate(1, &mut b);
    assert_eq!(
        b.timeslot(0).collect::<Vec<_>>(),
        vec![Flow {
            src: waiting,
            dst: 2
        }]
    );
}

/// Min-FCT: the flow with the fewest remaining MTUs goes first (§3.1).
#[test]
fn min_fct_serves_shortest_first() {
    let fabric = Fabric::full_bisection(4);
    let mut arb = Arbiter::new(&fabric, Policy::MinFct, Mode::Greedy, 8).unwrap();
    let mut b = Batch::new();
    arb.request(0, 3, 6).unwrap();
    arb.request(1, 3, 2).unwrap();
    arb.request(2, 3, 4).unwrap();
    arb.allocate(0, &mut b);
    let order: Vec<u32> = (0..8)
        .map(|k| b.timeslot(k).next().expect("receiver busy").src)
        .collect();
    assert_eq!(order, vec![1, 1, 2, 2, 2, 2, 0, 0]);
}
