//! A logical process's share of the hosts in a parallel run (docs/architecture.md
//! § Parallel runs): which hosts are its own, and, for every flow with an end here,
//! which slot holds this end, by flow id (a flow with both ends here too: its packets
//! may cross another process's core on the way).
//!
//! Every process runs the whole workload (the same generators from the same seeds, so
//! every flow gets the same id everywhere) and keeps the flows with an end among its
//! hosts. A flow whose ends are in two processes has a slot in each: the sender's end
//! sends and takes ACKs, the receiver's takes data and acknowledges it. Packets cross
//! with the sender's slot numbers of the process they left; where they land the slot is
//! looked up again by id ([`Share::slot_of`]).

use crate::engine::mailbox::Done;
use crate::fabric::partition::Partition;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

/// Flow ids are a counter: a multiply spreads them over the table (SipHash, the
/// default, cost ~30 instructions a packet that crosses a cut, for no attacker here).
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u64 flow ids are hashed")
    }
    fn write_u64(&mut self, id: u64) {
        self.0 = id.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// A slot number no flow has: a packet whose flow has no end here.
pub const NO_SLOT: u32 = u32::MAX;

pub struct Share {
    pub part: Arc<Partition>,
    pub lp: u32,
    /// Every live flow with an end here: this end's slot.
    by_id: HashMap<u64, u32, BuildHasherDefault<IdHasher>>,
    /// Completions here this window, for every process's workload; and those heard
    /// (these and the others'), for this one's, at the window's end.
    pub mine: Vec<Done>,
    pub heard: Vec<Done>,
}

impl Share {
    pub fn new(part: Arc<Partition>, lp: u32) -> Share {
        Share {
            part,
            lp,
            by_id: HashMap::default(),
            mine: Vec::new(),
            heard: Vec::new(),
        }
    }

    /// Host (or switch) `node` is this process's.
    #[inline(always)]
    pub fn owns(&self, node: u32) -> bool {
        self.part.lp(node) == self.lp
    }

    pub fn insert(&mut self, id: u64, slot: u32) {
        self.by_id.insert(id, slot);
    }

    pub fn remove(&mut self, id: u64) -> Option<u32> {
        self.by_id.remove(&id)
    }

    /// This end's slot of flow `id`, or [`NO_SLOT`] (the flow has no end here, or it has
    /// gone: the packet is stale).
    #[inline]
    pub fn slot_of(&self, id: u64) -> u32 {
        self.by_id.get(&id).copied().unwrap_or(NO_SLOT)
    }

    /// This end's slot of flow `id` if it has one here.
    pub fn find(&self, id: u64) -> Option<u32> {
        self.by_id.get(&id).copied()
    }
}
