//! Configuration comes from outside (a topology, a batch width, a thread count): what the
//! arbiter cannot run with is refused with an error when it is built, before any thread
//! starts, never with a panic. Empty fabrics are valid and allocate nothing.

use spillway_arbiter::{
    Allocator, Arbiter, Batch, ConfigError, DemandError, Fabric, Mode, Pipeline, Policy,
};

#[test]
fn batch_widths_outside_1_to_64_are_refused() {
    let fabric = Fabric::full_bisection(4);
    for w in [0, 65, u32::MAX] {
        let want = Some(ConfigError::Width(w));
        assert_eq!(
            Arbiter::new(&fabric, Policy::MaxMin, Mode::Greedy, w).err(),
            want
        );
        assert_eq!(
            Allocator::new(&fabric, Policy::MinFct, Mode::Iterative, w).err(),
            want
        );
        assert_eq!(Pipeline::new(&fabric, 2, w).err(), want);
    }
    for w in [1, 64] {
        assert!(Arbiter::new(&fabric, Policy::MaxMin, Mode::Greedy, w).is_ok());
        assert!(Pipeline::new(&fabric, 2, w).is_ok());
    }
}

#[test]
fn pipelines_of_fewer_than_two_stages_are_refused() {
    let fabric = Fabric::full_bisection(4);
    for s in [0, 1] {
        assert_eq!(
            Pipeline::new(&fabric, s, 8).err(),
            Some(ConfigError::Stages(s))
        );
    }
    assert_eq!(
        Pipeline::with_chunk(&fabric, 2, 8, 0).err(),
        Some(ConfigError::Chunk)
    );
}

#[test]
fn racks_without_capacities_are_refused() {
    assert_eq!(
        Fabric::with_racks(vec![0, 3], vec![1], vec![1]).err(),
        Some(ConfigError::UnknownRack {
            endpoint: 1,
            rack: 3,
            racks: 1
        })
    );
    assert_eq!(
        Fabric::with_racks(vec![0], vec![1, 1], vec![1]).err(),
        Some(ConfigError::CapacityLengths { up: 2, down: 1 })
    );
    let f = Fabric::racks(2, 3, 1, 2);
    assert_eq!(f.rack_of(5), Some(1));
    assert_eq!((f.up_cap(1), f.down_cap(1)), (Some(1), Some(2)));
    // Lookups outside the fabric are answered, not panicked on.
    assert_eq!(f.rack_of(6), None);
    assert_eq!((f.up_cap(2), f.down_cap(u32::MAX)), (None, None));
}

#[test]
fn empty_fabrics_allocate_nothing() {
    for fabric in [
        Fabric::full_bisection(0),
        Fabric::racks(3, 0, 1, 1),
        Fabric::racks(0, 5, 1, 1),
    ] {
        let mut arb = Arbiter::new(&fabric, Policy::MaxMin, Mode::Iterative, 8).unwrap();
        assert_eq!(arb.request(0, 1, 5), Err(DemandError::UnknownEndpoint(0)));
        let mut b = Batch::new();
        arb.allocate(0, &mut b);
        assert!(b.is_empty());
        let mut pipe = Pipeline::new(&fabric, 2, 8).unwrap();
        pipe.allocate(0);
        assert!(pipe.recv().is_empty());
    }
}
