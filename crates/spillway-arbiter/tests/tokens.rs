//! The single-threaded allocator keeps a backlogged pair's remaining demand in its token
//! between batches (no table read while it waits). These cases check that the token
//! never hands out more than the table holds: after a reset (pending demand dropped),
//! and that demand reported while a pair is backlogged is still served in full.

use spillway_arbiter::{Arbiter, Batch, Fabric, Flow, Mode, Policy};

fn total(arb: &mut Arbiter, first: &mut u64, batches: u32, b: &mut Batch, f: Flow) -> u64 {
    let mut got = 0;
    for _ in 0..batches {
        arb.allocate(*first, b);
        *first += arb.allocator().width() as u64;
        got += b.grants().filter(|g| g.flow() == f).count() as u64;
    }
    got
}

#[test]
fn reset_drops_demand_held_in_tokens() {
    for mode in [Mode::Greedy, Mode::Iterative] {
        let mut arb = Arbiter::new(&Fabric::full_bisection(4), Policy::MaxMin, mode, 8).unwrap();
        let (mut b, mut first) = (Batch::new(), 0);
        // Two senders to one receiver: each is backlogged, holding demand in its token.
        let (f, g) = (Flow { src: 0, dst: 3 }, Flow { src: 1, dst: 3 });
        arb.request(0, 3, 1000).unwrap();
        arb.request(1, 3, 1000).unwrap();
        let before = total(&mut arb, &mut first, 2, &mut b, f);
        assert_eq!(before, 8, "{mode:?}: half of 16 slots");
        arb.reset(0).unwrap();
        assert_eq!(arb.demand().remaining(f).unwrap(), 0);
        assert_eq!(total(&mut arb, &mut first, 3, &mut b, f), 0, "{mode:?}");
        assert_eq!(total(&mut arb, &mut first, 1, &mut b, g), 8, "{mode:?}");
        // Fresh totals after the reset count from zero again.
        arb.request(0, 3, 5).unwrap();
        let again = total(&mut arb, &mut first, 4, &mut b, f);
        assert_eq!(again, 5, "{mode:?}");
        assert_eq!(arb.demand().allocated(f).unwrap(), 5);
        assert_eq!(arb.demand().remaining(f).unwrap(), 0);
    }
}

#[test]
fn demand_reported_while_backlogged_is_served() {
    let mut arb =
        Arbiter::new(&Fabric::full_bisection(4), Policy::MaxMin, Mode::Greedy, 8).unwrap();
    let (mut b, mut first) = (Batch::new(), 0);
    let f = Flow { src: 0, dst: 1 };
    arb.request(0, 1, 3).unwrap();
    arb.request(2, 1, 100).unwrap();
    assert_eq!(total(&mut arb, &mut first, 1, &mut b, f), 3);
    // The pair ran dry and retired; the token of (2, 1) is still backlogged.
    arb.request(0, 1, 10).unwrap();
    let got = total(&mut arb, &mut first, 3, &mut b, f);
    assert_eq!(got, 7);
    assert_eq!(arb.demand().allocated(f).unwrap(), 10);
    // Within one batch, a token that runs dry picks up demand reported before the
    // batch: 4 + 6 more, all in the next batch of 8 slots shared with (2, 1).
    arb.request(0, 1, 14).unwrap();
    arb.request(0, 1, 20).unwrap();
    let got = total(&mut arb, &mut first, 4, &mut b, f);
    assert_eq!(got, 10);
    assert_eq!(arb.demand().remaining(f).unwrap(), 0);
}
