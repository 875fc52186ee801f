//! Switches and their ports' mechanisms.

pub mod discipline;
pub mod marking;
pub mod overflow;
pub mod port;
