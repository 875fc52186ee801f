//! FCP totals are modular u64 counts (`DemandTable::request`, docs/arbiter.md): a
//! report's demand is its wrapping difference from the last total accepted, read as a
//! signed distance. A duplicate or older report allocates nothing, a report across 2^64
//! allocates exactly its difference, and a report beyond `MAX_OUTSTANDING` either way is
//! refused with an error, never dropped silently. The single-threaded arbiter and the
//! pipeline share the arithmetic (the demand table's).

use spillway_arbiter::{
    Arbiter, Batch, DemandError, Fabric, Flow, Mode, Pipeline, Policy, MAX_OUTSTANDING,
};

const F: Flow = Flow { src: 0, dst: 1 };

/// Grants to `F` in `batches` batches of the arbiter from `*first`.
fn grants(arb: &mut Arbiter, first: &mut u64, batches: u32) -> u64 {
    let mut b = Batch::new();
    let mut got = 0;
    for _ in 0..batches {
        arb.allocate(*first, &mut b);
        *first += b.width() as u64;
        got += b.grants().filter(|g| g.flow() == F).count() as u64;
    }
    got
}

/// Grants to `F` in `batches` batches of the pipeline from `*first`.
fn pipe_grants(pipe: &mut Pipeline, first: &mut u64, batches: u32) -> u64 {
    let mut got = 0;
    for _ in 0..batches {
        pipe.allocate(*first);
        *first += pipe.width() as u64;
        let b = pipe.recv();
        got += b.grants().filter(|g| g.flow() == F).count() as u64;
        pipe.recycle(b);
    }
    got
}

fn arbiters() -> Vec<Arbiter> {
    let mut v = Vec::new();
    for policy in [Policy::MaxMin, Policy::MinFct] {
        for mode in [Mode::Greedy, Mode::Iterative] {
            v.push(Arbiter::new(&Fabric::full_bisection(4), policy, mode, 8).unwrap());
        }
    }
    v
}

#[test]
fn a_report_across_u64_max_allocates_exactly_its_demand() {
    for mut arb in arbiters() {
        let first = &mut 0;
        arb.reset_to(0, u64::MAX - 5).unwrap();
        let d = arb.demand();
        assert_eq!(
            (d.requested(F), d.allocated(F)),
            (Ok(u64::MAX - 5), Ok(u64::MAX - 5))
        );
        arb.request(0, 1, u64::MAX - 2).unwrap();
        // 7 more, across 2^64: 10 in all.
        arb.request(0, 1, 4).unwrap();
        assert_eq!(arb.demand().remaining(F), Ok(10));
        assert_eq!(grants(&mut arb, first, 3), 10);
        let d = arb.demand();
        assert_eq!(
            (d.requested(F), d.allocated(F), d.remaining(F)),
            (Ok(4), Ok(4), Ok(0))
        );
        // A report from before the wrap is older: nothing.
        arb.request(0, 1, u64::MAX).unwrap();
        assert_eq!(grants(&mut arb, first, 1), 0);
        arb.request(0, 1, 9).unwrap();
        assert_eq!(grants(&mut arb, first, 2), 5);
        assert_eq!(arb.demand().allocated(F), Ok(9));
    }
}

#[test]
fn duplicate_and_older_reports_allocate_nothing() {
    for mut arb in arbiters() {
        let first = &mut 0;
        arb.request(0, 1, 10).unwrap();
        arb.request(0, 1, 10).unwrap();
        arb.request(0, 1, 7).unwrap();
        assert_eq!(arb.demand().remaining(F), Ok(10));
        assert_eq!(grants(&mut arb, first, 3), 10);
        for total in [10, 3, 0, 10u64.wrapping_sub(MAX_OUTSTANDING)] {
            arb.request(0, 1, total).unwrap();
            assert_eq!(arb.demand().remaining(F), Ok(0), "total {total}");
        }
        assert_eq!(grants(&mut arb, first, 2), 0);
        let d = arb.demand();
        assert_eq!((d.requested(F), d.allocated(F)), (Ok(10), Ok(10)));
    }
}

#[test]
fn a_reset_then_reports_near_u64_max() {
    for mut arb in arbiters() {
        let first = &mut 0;
        arb.request(0, 1, 5).unwrap();
        assert_eq!(grants(&mut arb, first, 1), 5);
        arb.reset(0).unwrap();
        // Totals count from 0 again: a total just below 2^64 is older than 0 (say, sent
        // before the reset), not a demand of 2^64 - 2 (nor, as before, an overflow).
        assert_eq!(arb.request(0, 1, u64::MAX - 1), Ok(()));
        assert_eq!(arb.demand().remaining(F), Ok(0));
        arb.request(0, 1, 3).unwrap();
        assert_eq!(grants(&mut arb, first, 1), 3);
        // Re-synchronised just below 2^64: reports near it and across it allocate.
        arb.reset_to(0, u64::MAX - 1).unwrap();
        arb.request(0, 1, u64::MAX).unwrap();
        arb.request(0, 1, 1).unwrap();
        assert_eq!(grants(&mut arb, first, 1), 3);
        let d = arb.demand();
        assert_eq!((d.requested(F), d.allocated(F)), (Ok(1), Ok(1)));
    }
}

#[test]
fn a_report_implying_absurd_demand_is_refused() {
    for mut arb in arbiters() {
        let first = &mut 0;
        assert_eq!(
            arb.request(0, 1, 1 << 40),
            Err(DemandError::TooMuchDemand {
                src: 0,
                dst: 1,
                demand: 1 << 40,
                outstanding: 0
            })
        );
        // Refused whole: nothing requested, nothing allocated.
        assert_eq!(arb.demand().requested(F), Ok(0));
        assert_eq!(grants(&mut arb, first, 1), 0);
        // At most MAX_OUTSTANDING outstanding; more is accepted once some is allocated.
        arb.request(0, 1, MAX_OUTSTANDING).unwrap();
        let over = Err(DemandError::TooMuchDemand {
            src: 0,
            dst: 1,
            demand: 1,
            outstanding: MAX_OUTSTANDING,
        });
        assert_eq!(arb.request(0, 1, MAX_OUTSTANDING + 1), over);
        assert_eq!(grants(&mut arb, first, 1), 8);
        arb.request(0, 1, MAX_OUTSTANDING + 8).unwrap();
        assert_eq!(arb.request(0, 1, MAX_OUTSTANDING + 9), over);
        // Totals too far behind the last one (half the circle away counts as behind).
        let last = MAX_OUTSTANDING + 8;
        for total in [5, last - MAX_OUTSTANDING - 1, last + (1 << 63)] {
            assert_eq!(
                arb.request(0, 1, total),
                Err(DemandError::TooFarBehind {
                    src: 0,
                    dst: 1,
                    total,
                    last
                })
            );
        }
        let d = arb.demand();
        assert_eq!(d.requested(F), Ok(MAX_OUTSTANDING + 8));
        assert_eq!(d.remaining(F), Ok(MAX_OUTSTANDING));
    }
}

/// The pipeline takes reports through the same table: the same cases, fewer words.
#[test]
fn the_pipeline_counts_the_same_way() {
    let mut pipe = Pipeline::new(&Fabric::full_bisection(4), 2, 8).unwrap();
    let first = &mut 0;
    pipe.reset_to(0, u64::MAX - 5).unwrap();
    pipe.request(0, 1, u64::MAX - 2).unwrap();
    pipe.request(0, 1, 4).unwrap();
    pipe.request(0, 1, u64::MAX).unwrap();
    assert_eq!(pipe_grants(&mut pipe, first, 3), 10);
    assert_eq!(pipe.demand().allocated(F), Ok(4));
    assert!(matches!(
        pipe.request(0, 1, 4 + (1 << 40)),
        Err(DemandError::TooMuchDemand { .. })
    ));
    assert!(matches!(
        pipe.request(0, 1, 4u64.wrapping_sub(MAX_OUTSTANDING + 1)),
        Err(DemandError::TooFarBehind { .. })
    ));
    pipe.request(0, 1, 4).unwrap();
    pipe.request(0, 1, 6).unwrap();
    assert_eq!(pipe_grants(&mut pipe, first, 2), 2);
    pipe.reset(0).unwrap();
    pipe.request(0, 1, u64::MAX - 1).unwrap();
    assert_eq!(pipe_grants(&mut pipe, first, 1), 0);
}
