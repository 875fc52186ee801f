//! Forwarding: which of a switch's next hops toward a host (the fabric's routes: every
//! equal-cost shortest-path port, or a `switch.routes` override) a packet takes. ECMP
//! hashes the flow ([`ecmp`]); spraying draws per packet ([`spray`]); a weighted route
//! draws by weight ([`weighted`], CP §6.3's random-forwarding ToR); DeTail's adaptive
//! load balancing picks among the least loaded ([`alb`]).
//!
//! Where the choice is fixed by the flow (ECMP, or a single next hop), it is made when
//! the packet is sent toward the switch, so that the event before the packet's arrival
//! can prefetch the egress port; the draws are made as the packet arrives.

pub mod alb;
pub mod ecmp;
pub mod spray;
pub mod weighted;

use crate::engine::event::ROUTE_ON_ARRIVAL;
use crate::fabric::routes::RouteTable;
use crate::rng::Rng;

/// `switch.forwarding`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forwarding {
    Ecmp,
    Spray,
    /// DeTail's adaptive load balancing, by these drain-byte tiers.
    Alb(alb::Tiers),
}

/// The fabric's forwarding policy (every switch's).
#[derive(Debug, Clone, Copy)]
pub struct Forwarder {
    mode: Forwarding,
    /// Some route is weighted (`switch.routes` with `weights`): weights are looked up.
    weighted: bool,
}

impl Forwarder {
    pub fn new(mode: Forwarding, routes: &RouteTable) -> Forwarder {
        Forwarder {
            mode,
            weighted: routes.weighted(),
        }
    }

    /// The egress of a packet for `dst` at `switch`, if it is fixed (one next hop, or
    /// ECMP's hash of the flow): else [`ROUTE_ON_ARRIVAL`].
    #[inline(always)]
    pub fn fixed_egress(&self, routes: &RouteTable, switch: u32, dst: u32, hash: u32) -> u16 {
        if self.weighted || self.mode != Forwarding::Ecmp {
            return ROUTE_ON_ARRIVAL;
        }
        ecmp::pick(routes.next_hops(switch, dst), switch, hash)
    }

    /// The egress of a packet at `switch`, chosen as it arrives: spraying and weighted
    /// random forwarding draw from the switch's stream `rng`; adaptive load balancing
    /// reads `drain(port)`, the bytes queued at a port ahead of this packet's class.
    #[inline(never)]
    pub fn on_arrival(
        &self,
        routes: &RouteTable,
        switch: u32,
        dst: u32,
        hash: u32,
        rng: &mut Rng,
        drain: impl Fn(u16) -> u64,
    ) -> u16 {
        let hops = routes.next_hops(switch, dst);
        let weights = if self.weighted && hops.len() > 1 {
            routes.hop_weights(switch, dst)
        } else {
            None
        };
        if hops.len() == 1 {
            hops[0]
        } else if let Some(cum) = weights {
            weighted::pick(hops, cum, rng)
        } else {
            match self.mode {
                Forwarding::Ecmp => ecmp::pick(hops, switch, hash),
                Forwarding::Spray => spray::pick(hops, rng),
                Forwarding::Alb(tiers) => alb::pick(hops, &tiers, drain, rng),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Scenario;
    use crate::fabric::Fabric;

    /// The egress a packet carries from the hop before (fixed routes) is the one the
    /// switch would choose when the packet arrives, for every switch, destination and
    /// flow hash; spraying and weighted forwarding keep choosing on arrival.
    #[test]
    fn an_egress_chosen_at_send_is_the_one_chosen_on_arrival() {
        let text = "[topology]\nkind = \"fat_tree\"\nk = 8";
        for fwd in ["ecmp", "spray"] {
            let set = [format!("switch.forwarding={fwd}")];
            let sc = Scenario::parse(text, &set, None).unwrap();
            let fabric = Fabric::build(&sc.topology, &sc.routes, sc.switch.timing, 1).unwrap();
            let f = Forwarder::new(sc.switch.forwarding, fabric.routes());
            let mut rng = Rng::new(7, 0);
            let mut draws = Rng::new(8, 0);
            let hosts = fabric.hosts();
            let mut spread = std::collections::HashSet::new();
            for switch in hosts..fabric.node_count() as u32 {
                for dst in 0..hosts {
                    let hash = rng.below(1 << 32) as u32;
                    let at_send = f.fixed_egress(fabric.routes(), switch, dst, hash);
                    if fwd == "spray" {
                        assert_eq!(at_send, ROUTE_ON_ARRIVAL);
                        continue;
                    }
                    assert_ne!(at_send, ROUTE_ON_ARRIVAL);
                    let on_arrival =
                        f.on_arrival(fabric.routes(), switch, dst, hash, &mut draws, |_| 0);
                    assert_eq!(at_send, on_arrival);
                    spread.insert((switch, at_send));
                }
            }
            if fwd == "ecmp" {
                // Edge and aggregation switches use all their uplinks.
                assert!(spread.len() > 3 * (fabric.node_count() - hosts as usize));
            }
        }
    }
}
