//! Spillway's simulator core: a fast, deterministic packet-level simulator for
//! datacenter transports and switches. No Python here; `spillway-py` wraps it.
//! docs/architecture.md is the map.

pub mod bench;
pub mod config;
pub mod engine;
pub mod fabric;
pub mod host;
pub mod output;
pub mod packet;
pub mod rng;
pub mod switch;
pub mod transport;
pub mod units;
pub mod workload;

pub use config::{Scenario, ScenarioError};
pub use engine::Sim;
