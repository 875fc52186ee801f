//! Cut-through forwarding (`switch.cut_through`): a switch forwards a packet as soon as
//! its header is in, instead of once all of it is (store-and-forward), where that is
//! possible: its egress is idle, and would not send a byte before it has arrived. Turbo
//! §2.1.2 counts cut-through switching among what brings datacenter latency down, and
//! the pFabric group's simulator (Turbo §5.1.2) forwards that way: a flow's short
//! packets then wait one header time per hop instead of one serialization.
//!
//! A packet bound for a cut-through switch reaches it first as `Ev::Header`, when its
//! header has arrived (the sending port times that: `Port::push_timed`); the switch
//! picks the egress then, as a real one does from the header, and asks
//! [`CutThrough::decide`]. If the packet may go, it starts at once, `serialization -
//! header time` sooner than it would have stored and forwarded; if not, its `Arrive`
//! comes when its last byte is in, and it is offered to that egress as any stored packet
//! is. A packet queued behind a cut-through one was stored: only packets that find
//! their egress idle cut through. Everything else (`Arrive`, the ports, the pipeline) is
//! as without it, so a switch that does not cut through pays nothing for it.
//!
//! The condition on the rates is the physical one: started when the header is in, the
//! egress must not finish before the last byte arrives, i.e. its serialization of the
//! packet must be at least the ingress's less the header's. For a whole frame that is an
//! egress no faster than the ingress (a 10 Gbps ingress into a 40 Gbps egress stores
//! every data frame; 40 into 10, or equal rates, cut through), and it keeps links of one
//! nominal rate whose clocks differ by a few ppm (`topology.clock_ppm`) cutting through,
//! as a real switch's rate-matching FIFO does.

use super::port::Port;
use crate::fabric::Fabric;
use crate::units::{serialization_ps, Ps};

/// What a cut-through switch does with a packet whose header is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// It starts on its egress now.
    Start,
    /// It waits until its last byte is in, at this time, and is then stored and
    /// forwarded.
    StoreUntil(Ps),
}

/// A cut-through switch's view of its inputs: the rate each is sent at (the sender's
/// clock) and the header it waits for.
#[derive(Debug, Clone)]
pub struct CutThrough {
    /// Per input port, the rate its packets arrive at.
    ingress_rate: Vec<u64>,
    header: u32,
}

impl CutThrough {
    /// Switch `node` of `fabric`, taking packets once `header` bytes are in.
    pub fn new(fabric: &Fabric, node: u32, header: u32) -> CutThrough {
        let ingress_rate = fabric
            .ports(node)
            .iter()
            .map(|end| fabric.ports(end.peer)[end.peer_port as usize].rate)
            .collect();
        CutThrough {
            ingress_rate,
            header,
        }
    }

    /// The header of a packet of `wire` bytes that came in by `in_port` is in at
    /// `now`: whether it goes out of `egress` at once, or when all of it is in.
    #[inline]
    pub fn decide(&self, now: Ps, in_port: u16, wire: u64, egress: &Port) -> Decision {
        let rate = self.ingress_rate[in_port as usize];
        // Exactly the sender's arithmetic (`Port::serialization` is this at any rate).
        let rest =
            serialization_ps(wire, rate) - serialization_ps(wire.min(self.header as u64), rate);
        if egress.idle_for_cut_through(now) && egress.serialization(wire) >= rest {
            Decision::Start
        } else {
            Decision::StoreUntil(now + rest)
        }
    }
}
