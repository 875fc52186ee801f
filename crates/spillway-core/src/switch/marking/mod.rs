//! Congestion marking at a switch port: when to set ECN's CE bit (or, with Source
//! Quench, tell the source). Markers are sans-IO: they see a dequeue's time and sojourn.

pub mod codel;
