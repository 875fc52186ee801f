//! Queue disciplines beyond the port's built-in 8-class strict-priority FIFO (tail drop,
//! in [`crate::switch::port::Port`]): who is served next and who is the victim on overflow.

pub mod pfabric;
