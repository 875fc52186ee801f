//! What a run reports: flow, query and port records and the run's counters, and the
//! metrics they are built on (the ideal FCT).

pub mod counters;
pub mod flows;
pub mod ideal;
pub mod ports;
