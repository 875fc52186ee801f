//! Congestion marking at a switch port: when to set ECN's CE bit (or, with Source
//! Quench, tell the source). Markers are sans-IO: [`threshold`] looks at the queue an
//! arrival finds (DCTCP's K), [`codel`] at a departure's sojourn time (RFC 8289).

pub mod codel;
pub mod threshold;
