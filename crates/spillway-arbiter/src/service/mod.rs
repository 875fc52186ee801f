//! The Fastpass arbiter as a real service (issue 29): FCP over UDP on std sockets and
//! threads, driving the same sans-IO state machines as the simulator.
//!
//! - [`config`]: the fabric file (topology, addresses, timing), read by [`toml`], a
//!   std-only parser of the TOML subset it needs.
//! - [`runtime`]: the loop (a receive thread and a timer thread around one state machine).
//! - [`arbiter`]: `spillway-arbiterd`: [`crate::fcp::Comm`] + [`crate::Arbiter`] + path
//!   selection, batches allocated `lead` ahead, watchdogs and takeover, status queries.
//! - [`endpoint`]: `spillway-endpoint`: [`crate::fcp::Endpoint`], Poisson demand, one data
//!   datagram per granted timeslot, send and receive logs.
//! - [`faults`]: `spillway-fcp-proxy`: drops, duplicates and corrupts FCP between
//!   endpoints and arbiters, and floods the arbiters from an unregistered source.
//! - [`load`]: `spillway-fcp-load`: many endpoints in one process, to load an arbiter.
//! - [`demand`]: an endpoint's packets: Poisson arrivals or a trace.
//! - [`clock`], [`data`], [`log`], [`args`]: wall clock to picoseconds and SIGTERM, the
//!   non-FCP datagrams, JSON-lines logs, command lines.

pub mod arbiter;
pub mod args;
pub mod clock;
pub mod config;
pub mod data;
pub mod demand;
pub mod endpoint;
pub mod faults;
pub mod load;
pub mod log;
pub mod runtime;
pub mod toml;
