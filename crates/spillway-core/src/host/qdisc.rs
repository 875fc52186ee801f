//! The hook between a host's transports and its NIC, where a host-level queue
//! discipline may hold packets. `Fifo` hands every packet to the NIC's queue as it comes
//! (the only discipline so far, so there is no key for it yet); Fastpass's
//! per-destination queues, released in the timeslots its arbiter grants, are the next,
//! and come with `host.qdisc`.

/// A host's queue discipline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Qdisc {
    /// Straight to the NIC.
    Fifo,
}

impl Qdisc {
    /// A packet the host's transports send: the one to hand to the NIC now, if any (a
    /// discipline that holds it releases it later, on its own event).
    #[inline(always)]
    pub fn offer(&mut self, pkt: u32) -> Option<u32> {
        match self {
            Qdisc::Fifo => Some(pkt),
        }
    }
}
