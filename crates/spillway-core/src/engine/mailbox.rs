//! What one logical process of a parallel run sends another (docs/architecture.md
//! § Parallel runs): packets that cross a cut link, with the event that delivers them,
//! and notes about flows whose two ends live in different processes.
//!
//! A process posts during a window and the receiver takes its post at the window's end,
//! in the order of the senders' indices and, from each, in the order posted: so what a
//! process sees never depends on which thread ran whom, or when.

use super::event::Ev;
use crate::fabric::partition::Partition;
use crate::packet::int::IntStack;
use crate::packet::{Hot, Packet};
use crate::units::Ps;
use std::sync::Arc;

/// A packet on its way over a cut link: the event that delivers it (its `pkt` is
/// renumbered in the receiver's arena) at `time`, and the packet itself.
pub struct Parcel {
    pub time: Ps,
    pub ev: Ev,
    pub hot: Hot,
    pub pkt: Packet,
}

/// A note between the two ends of a flow that live in different processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Note {
    /// The sender's end has written its half of the record: the receiver's end writes
    /// its half and is gone.
    Closed { id: u64 },
    /// One of the flow's data packets or probes was dropped in the network: counted
    /// against it at its sender.
    Dropped { id: u64 },
}

/// A flow's receiver got its last byte at `time`, in process `lp`: every process's
/// copy of the workload hears of it (docs/architecture.md § Parallel runs), so that
/// each makes the same flows of it, one lookahead later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Done {
    pub time: Ps,
    pub lp: u32,
    pub dst: u32,
    pub tag: u64,
}

/// One window's post from one process to every process.
#[derive(Default)]
pub struct Post {
    pub parcels: Vec<Parcel>,
    /// HPCC's telemetry of the parcels that carry it (`packet/int.rs`): (parcel index,
    /// its records), in parcel order.
    pub ints: Vec<(u32, IntStack)>,
    pub notes: Vec<Note>,
    pub dones: Vec<Done>,
}

impl Post {
    pub fn is_empty(&self) -> bool {
        self.parcels.is_empty() && self.notes.is_empty() && self.dones.is_empty()
    }
}

/// A process's outgoing post, by destination.
pub struct Outbox {
    pub part: Arc<Partition>,
    /// The process this is.
    pub lp: u32,
    pub to: Vec<Post>,
    /// This window's packets over cut links, not yet taken from the arena: (when they
    /// arrive, the event that delivers them, the process it arrives in).
    pub away: Vec<(Ps, Ev, u32)>,
}

impl Outbox {
    pub fn new(part: Arc<Partition>, lp: u32) -> Outbox {
        let to = (0..part.count).map(|_| Post::default()).collect();
        Outbox {
            part,
            lp,
            to,
            away: Vec::new(),
        }
    }
}
