//! The allocation loop indexes endpoints unchecked; what keeps it sound is that a pair
//! outside the allocator's fabric, or a table of another size, is refused up front.

use spillway_arbiter::{Allocator, Batch, DemandTable, Fabric, Flow, Mode, Policy};

#[test]
#[should_panic(expected = "is not a pair of the fabric")]
fn activate_refuses_a_pair_outside_the_fabric() {
    let fabric = Fabric::full_bisection(4);
    let d = DemandTable::new(4);
    let mut a = Allocator::new(&fabric, Policy::MaxMin, Mode::Greedy, 8).unwrap();
    // Index 0 * 4 + 9 would still be inside the table's 16 records.
    a.activate(&d, Flow { src: 0, dst: 9 });
}

#[test]
#[should_panic(expected = "different fabrics")]
fn allocate_refuses_a_table_of_another_size() {
    let fabric = Fabric::full_bisection(4);
    let d = DemandTable::new(8);
    let mut a = Allocator::new(&fabric, Policy::MaxMin, Mode::Greedy, 8).unwrap();
    a.allocate(&d, 0, &mut Batch::new());
}
