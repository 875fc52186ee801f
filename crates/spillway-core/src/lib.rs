//! Spillway's simulator core: a fast, deterministic packet-level simulator for
//! datacenter transports and switches. No Python here; `spillway-py` wraps it.
//!
//! Layout, one concept per module:
//! - [`units`]: integer picoseconds, sizes and rates as the papers write them
//! - [`scenario`]: every scenario key, parsed and validated from one table
//! - [`topology`], [`network`]: graphs, ports with priority queues, routes
//! - [`transport`]: sans-IO TCP (NewReno + SACK) with a congestion-control hook
//! - [`workload`]: flow generators (incast, Poisson, queries, traces) and CDFs
//! - [`discipline`], [`marking`], [`overflow`]: switch-port mechanisms (pFabric queue,
//!   CoDel marking, FastLane notifications, Source Quench)
//! - [`queue`]: the event queue (a calendar queue)
//! - [`sim`]: the event loop that moves packets between them
//! - [`metrics`]: ideal FCT and the records we emit
//! - [`bench`]: the standard benchmark scenarios

pub mod bench;
pub mod discipline;
pub mod marking;
pub mod metrics;
pub mod network;
pub mod overflow;
pub mod queue;
pub mod rng;
pub mod routes;
pub mod scenario;
pub mod sim;
pub mod topology;
pub mod transport;
pub mod units;
pub mod workload;

pub use scenario::{Scenario, ScenarioError};
pub use sim::Sim;
