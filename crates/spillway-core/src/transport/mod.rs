//! Transports. Each is a sans-IO state machine driven by the simulator.
//!
//! - [`tcp`]: the TCP sender and receiver (NewReno + SACK), which every transport here
//!   shares; what varies plugs in through [`cc`] (the window) and [`fastlane`] (drop
//!   notifications)
//! - [`cubic`]: CUBIC's window (RFC 8312, Linux 2.6.38's constants)
//! - [`dctcp`]: DCTCP's window (RFC 8257)
//! - [`pfabric`]: pFabric's minimal rate control
//! - [`fastlane`]: FastLane's transport half (notification table, max_sim)

pub mod cc;
pub mod cubic;
pub mod dctcp;
pub mod fastlane;
pub mod pfabric;
pub mod tcp;
