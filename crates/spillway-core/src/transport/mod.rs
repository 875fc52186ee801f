//! Transports. Each is a sans-IO state machine driven by the simulator.

pub mod cc;
pub mod tcp;
