//! The hook between a host's transports and its NIC, where a host-level queue
//! discipline may hold packets (`host.qdisc`). `Fifo` hands every packet to the NIC as it
//! comes; `Fastpass` keeps it in its destination's queue until a timeslot the arbiter
//! granted (Fastpass §6.1: the Fastpass qdisc, [`super::fastpass`]).

use super::fastpass::Fastpass;

/// The hosts' queue discipline.
pub enum Qdisc {
    /// Straight to the NIC.
    Fifo,
    /// Fastpass's endpoint queues, with the endpoints' and the arbiters' protocol state.
    Fastpass(Box<Fastpass>),
}
