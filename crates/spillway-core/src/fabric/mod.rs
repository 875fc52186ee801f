//! The fabric: how nodes are wired (every port's peer, rate and delay, each node's clock
//! applied) and the routes between hosts. Read-only once built; the switches and hosts
//! own their ports' queues, the fabric only says where each link goes.

use crate::rng::{component, Rng};
use crate::units::{serialization_ps, Ps};
use routes::{Adjacency, RouteSpec, RouteTable};
use topology::{Topology, TopologySpec};

pub mod routes;
pub mod topology;

/// Why a fabric could not be built, and the scenario key responsible: `topology` for its
/// shape, `switch.routes[...]` for route overrides that fail only together.
#[derive(Debug)]
pub struct FabricError {
    pub key: String,
    pub message: String,
}

/// One end of a link: the port at a node, where the link leads and how fast.
#[derive(Debug, Clone, Copy)]
pub struct LinkEnd {
    /// The node at the other end, and this link's port index there.
    pub peer: u32,
    pub peer_port: u16,
    /// Bits per second, as this node's clock makes it.
    pub rate: u64,
    pub delay: Ps,
}

pub struct Fabric {
    hosts: u32,
    /// First node of the top switch tier (leaf_spine spines, fat_tree cores), if any.
    top_tier: Option<u32>,
    /// Every node's ports, node by node: node n's are
    /// `ends[first_port[n]..first_port[n + 1]]`.
    ends: Vec<LinkEnd>,
    first_port: Vec<u32>,
    routes: RouteTable,
}

impl Fabric {
    /// Wires the topology (ports in link order), gives each node its clock
    /// (`topology.clock_ppm`), and routes by shortest paths with `routes` overriding.
    /// Errors when a host has other than one link or some host cannot reach another.
    pub fn build(
        spec: &TopologySpec,
        routes: &[RouteSpec],
        seed: u64,
    ) -> Result<Fabric, FabricError> {
        let topo = Topology::build(spec);
        let n = topo.nodes() as usize;
        let mut ports: Vec<Vec<LinkEnd>> = vec![Vec::new(); n];
        for l in &topo.links {
            let ia = ports[l.a as usize].len() as u16;
            let ib = ports[l.b as usize].len() as u16;
            ports[l.a as usize].push(LinkEnd {
                peer: l.b,
                peer_port: ib,
                rate: l.rate,
                delay: l.delay,
            });
            ports[l.b as usize].push(LinkEnd {
                peer: l.a,
                peer_port: ia,
                rate: l.rate,
                delay: l.delay,
            });
        }
        for (h, node) in ports.iter().enumerate().take(topo.hosts as usize) {
            if node.len() != 1 {
                return Err(FabricError {
                    key: "topology".into(),
                    message: format!(
                        "host {h} has {} links; hosts have exactly one NIC",
                        node.len()
                    ),
                });
            }
        }
        // `topology.clock_ppm`: one clock per node (a switch's ports share its
        // oscillator), each drawn from the node's own stream (hosts and switches
        // numbered apart), so that adding a host leaves every other clock as it was.
        let ppm = spec.clock_ppm * 1e-6;
        if ppm > 0.0 {
            for (i, node) in ports.iter_mut().enumerate() {
                let i = i as u32;
                let id = if i >= topo.hosts {
                    component::SWITCH_CLOCK_BASE + (i - topo.hosts) as u64
                } else {
                    component::HOST_CLOCK_BASE + i as u64
                };
                let mut r = Rng::new(seed, id);
                let x = 1.0 + (2.0 * r.next_f64() - 1.0) * ppm;
                for p in node {
                    p.rate = (p.rate as f64 * x).round() as u64;
                }
            }
        }
        let peers: Vec<Vec<u32>> = ports
            .iter()
            .map(|n| n.iter().map(|p| p.peer).collect())
            .collect();
        let adj = Adjacency {
            peers: &peers,
            hosts: topo.hosts,
        };
        let name = |i| spec.shape.node_name(i);
        let routes = RouteTable::build(&adj, routes, &name).map_err(|e| FabricError {
            key: e.key,
            message: e.message,
        })?;
        let mut first_port = Vec::with_capacity(n + 1);
        let mut ends = Vec::new();
        for node in ports {
            first_port.push(ends.len() as u32);
            ends.extend(node);
        }
        first_port.push(ends.len() as u32);
        Ok(Fabric {
            hosts: topo.hosts,
            top_tier: topo.top_tier,
            ends,
            first_port,
            routes,
        })
    }

    /// Hosts: nodes `0..hosts`.
    #[inline(always)]
    pub fn hosts(&self) -> u32 {
        self.hosts
    }

    /// First node of the top switch tier (leaf_spine spines, fat_tree cores), if any.
    pub fn top_tier(&self) -> Option<u32> {
        self.top_tier
    }

    #[inline(always)]
    pub fn routes(&self) -> &RouteTable {
        &self.routes
    }

    pub fn node_count(&self) -> usize {
        self.first_port.len() - 1
    }

    /// Switches: nodes `hosts..node_count()`.
    pub fn switches(&self) -> u32 {
        self.node_count() as u32 - self.hosts
    }

    /// The ports of `node`, by index.
    pub fn ports(&self, node: u32) -> &[LinkEnd] {
        let n = node as usize;
        &self.ends[self.first_port[n] as usize..self.first_port[n + 1] as usize]
    }

    /// Every port, node by node.
    pub fn all_ports(&self) -> &[LinkEnd] {
        &self.ends
    }

    /// (rate, delay) of each hop on one shortest path from `src` to `dst`
    /// (the first equal-cost choice at each switch; all are alike in our topologies).
    pub fn path(&self, src: u32, dst: u32) -> Vec<(u64, Ps)> {
        let mut hops = Vec::with_capacity(8);
        let p = self.ports(src)[0];
        hops.push((p.rate, p.delay));
        let mut at = p.peer;
        while at != dst {
            let port = self.routes.next_hops(at, dst)[0];
            let p = self.ports(at)[port as usize];
            hops.push((p.rate, p.delay));
            at = p.peer;
        }
        hops
    }

    /// The longest time a frame of `bytes` takes to cross one link (serialization and
    /// propagation), for the event calendar's span.
    pub fn longest_hop(&self, bytes: u64) -> Ps {
        self.ends
            .iter()
            .map(|p| p.delay + serialization_ps(bytes, p.rate))
            .max()
            .unwrap_or(0)
    }
}
