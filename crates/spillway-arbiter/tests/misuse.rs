//! The allocation loop indexes endpoints unchecked; what keeps it sound is that a pair
//! outside the allocator's fabric is refused up front (an error: a pair's endpoints may
//! come from outside), and a table of another size too (a panic: only a caller's bug
//! pairs them). Queries of the demand table by endpoint are checked the same way.

use spillway_arbiter::{
    Allocator, Arbiter, Batch, DemandError, DemandTable, Fabric, Flow, Mode, Policy,
};

/// A greedy max-min allocator of batches of 8 for one switch of `endpoints` endpoints.
fn allocator(endpoints: usize) -> Allocator {
    Allocator::new(
        &Fabric::full_bisection(endpoints),
        Policy::MaxMin,
        Mode::Greedy,
        8,
    )
    .unwrap()
}

#[test]
fn activate_refuses_a_pair_outside_the_fabric() {
    let d = DemandTable::new(4);
    let mut a = allocator(4);
    // Index 0 * 4 + 9 would still be inside the table's 16 records.
    assert_eq!(
        a.activate(&d, Flow { src: 0, dst: 9 }),
        Err(DemandError::UnknownEndpoint(9))
    );
    assert_eq!(
        a.activate(&d, Flow { src: 4, dst: 0 }),
        Err(DemandError::UnknownEndpoint(4))
    );
    assert_eq!(a.pending_len(), 0);
}

#[test]
#[should_panic(expected = "different fabrics")]
fn allocate_refuses_a_table_of_another_size() {
    let d = DemandTable::new(8);
    allocator(4).allocate(&d, 0, &mut Batch::new());
}

#[test]
#[should_panic(expected = "different fabrics")]
fn activate_refuses_a_table_of_another_size() {
    let d = DemandTable::new(4);
    let _ = allocator(8).activate(&d, Flow { src: 0, dst: 6 });
}

/// Queries naming an endpoint outside the table used to index its records unchecked:
/// (0, 9) of 4 endpoints read pair (2, 1)'s record, (9, 0) panicked.
#[test]
fn queries_outside_the_table_are_errors() {
    let mut arb =
        Arbiter::new(&Fabric::full_bisection(4), Policy::MaxMin, Mode::Greedy, 8).unwrap();
    arb.request(2, 1, 5).unwrap();
    let d = arb.demand();
    for (f, bad) in [
        (Flow { src: 0, dst: 9 }, 9),
        (Flow { src: 9, dst: 0 }, 9),
        (
            Flow {
                src: u32::MAX,
                dst: 4,
            },
            u32::MAX,
        ),
    ] {
        let e = Err(DemandError::UnknownEndpoint(bad));
        assert_eq!(d.remaining(f), e);
        assert_eq!(d.requested(f), e);
        assert_eq!(d.allocated(f), e);
        assert_eq!(d.last_allocated(f), Err(DemandError::UnknownEndpoint(bad)));
    }
    assert_eq!(d.present(4), Err(DemandError::UnknownEndpoint(4)));
    let f = Flow { src: 2, dst: 1 };
    assert_eq!((d.remaining(f), d.requested(f)), (Ok(5), Ok(5)));
    assert_eq!(d.present(3), Ok(true));
    // A slot outside the batch has no grants (slot 64 indexed past the per-slot counts).
    let mut b = Batch::new();
    arb.allocate(0, &mut b);
    assert_eq!(b.timeslot(0).len(), 1);
    for k in [8, 63, 64, u32::MAX] {
        assert_eq!(b.timeslot(k).len(), 0);
    }
    assert_eq!(Batch::new().timeslot(70).len(), 0);
}

/// Max-min keys are timeslot + 1: a batch ending past u64::MAX is refused with a clear
/// panic (it overflowed in debug, and wrapped keys in release), and the last batch that
/// fits is allocated.
#[test]
fn a_batch_ending_past_u64_max_is_refused() {
    let mut arb =
        Arbiter::new(&Fabric::full_bisection(4), Policy::MaxMin, Mode::Greedy, 8).unwrap();
    arb.request(0, 1, 3).unwrap();
    let mut b = Batch::new();
    arb.allocate(u64::MAX - 8, &mut b);
    assert_eq!(b.len(), 3);
    assert_eq!(
        arb.demand().last_allocated(Flow { src: 0, dst: 1 }),
        Ok(Some(u64::MAX - 6))
    );
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        arb.allocate(u64::MAX - 7, &mut b)
    }));
    let msg = r.unwrap_err();
    let msg = msg.downcast_ref::<String>().unwrap();
    assert!(msg.contains("ends past u64::MAX"), "{msg}");
    let mut pipe = spillway_arbiter::Pipeline::new(&Fabric::full_bisection(4), 2, 8).unwrap();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pipe.allocate(u64::MAX - 7)));
    assert!(r.is_err());
    assert_eq!(pipe.in_flight(), 0);
}
