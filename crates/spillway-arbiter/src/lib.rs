//! Fastpass arbiter algorithms (Perry et al., SIGCOMM 2014): timeslot allocation (§3)
//! and path selection (§4), independent of the simulator.
//!
//! Everything here is sans-IO and driven by the caller's clock: the caller reports
//! demand ([`Arbiter::request`], FCP aggregate counts) and asks for the allocation of a
//! batch of timeslots ([`Arbiter::allocate`]); path selection colors one timeslot's
//! matching ([`pathsel::TwoTier`]); [`fcp`] is the control protocol between endpoints
//! and the arbiter (§5.3) and arbiter failover (§5.1); [`voq`] runs the allocator in the
//! Appendix's queueing model and reports its queues against Theorem 1's bounds. No
//! allocation happens in steady state: buffers grow to the largest size they have needed
//! and are reused.

pub mod alloc;
pub mod bench;
pub mod cli;
pub mod cputime;
pub mod demand;
pub mod fabric;
pub mod fcp;
pub mod pathsel;
pub mod pipeline;
pub mod service;
pub mod slots;
pub mod voq;

pub use alloc::{Allocator, Arbiter, Batch, Mode, Policy};
pub use demand::{DemandError, DemandTable, Flow, MAX_OUTSTANDING};
pub use fabric::{ConfigError, Fabric};
pub use pathsel::{
    AlternatingPaths, Coloring, EdgeColoring, PathError, ThreeTier, TwoTier, VirtualCores,
};
pub use pipeline::Pipeline;
pub use slots::{Grant, MAX_WIDTH};
