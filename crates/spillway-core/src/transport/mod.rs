//! Transports. Each is a sans-IO state machine driven by the simulator.
//!
//! - [`tcp`]: the TCP sender and receiver (NewReno + SACK), which every transport here
//!   shares, with FastLane's transport half (drop notifications)
//! - [`cc`]: the congestion controls: NewReno, CUBIC, DCTCP, pFabric

pub mod cc;
pub mod tcp;
