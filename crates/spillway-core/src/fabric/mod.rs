//! The fabric: how nodes are wired (every port's peer, rate and delay, each node's clock
//! applied) and the routes between hosts. Read-only once built; the switches and hosts
//! own their ports' queues, the fabric only says where each link goes.

use crate::rng::{component, Rng};
use crate::units::{serialization_ps, Ps};
use routes::{Adjacency, RouteSpec, RouteTable};
use topology::{Topology, TopologySpec};

pub mod graph;
pub mod partition;
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
    /// Propagation delay.
    pub delay: Ps,
    /// From the end of a packet's serialization here to its arrival at the peer's
    /// forwarding decision: `delay`, plus the peer's forwarding-engine delay when the
    /// peer is a switch (control frames, which no forwarding engine handles, take
    /// `delay` alone).
    pub latency: Ps,
    /// The rate at which a packet sent here crosses the peer switch's crossbar, when
    /// that is a fixed delay added on the way (an output-queued switch with a speedup;
    /// a combined input/output-queued switch schedules its crossbar itself): 0 if none.
    pub crossbar_rate: u64,
    /// The peer is a switch that forwards cut-through (`switch.cut_through`): it takes
    /// a packet once this many of its bytes have arrived. 0: store-and-forward.
    pub cut_header: u32,
}

/// What a switch adds to a packet's time besides queueing (DeTail §7.1): the forwarding
/// engine's delay, and the crossbar's transfer at `speedup` times the line rate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SwitchTiming {
    pub forwarding_delay: Ps,
    /// `switch.speedup`: a frame crosses the crossbar in its serialization time at
    /// this many times its input link's rate; `None`: instantly.
    pub speedup: Option<u32>,
    /// The switches schedule their crossbars (CIOQ): the crossbar is not a fixed delay
    /// on the links.
    pub scheduled_crossbar: bool,
    /// `switch.cut_through`: the switches start forwarding a packet once this many of
    /// its bytes (its header) have arrived; `None`: store-and-forward.
    pub cut_through: Option<u32>,
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
    timing: SwitchTiming,
    /// For naming nodes in reports.
    shape: topology::Shape,
}

impl Fabric {
    /// Wires the topology (ports in link order), gives each node its clock
    /// (`topology.clock_ppm`), and routes by shortest paths with `routes` overriding.
    /// Errors when a host has other than one link or some host cannot reach another.
    pub fn build(
        spec: &TopologySpec,
        routes: &[RouteSpec],
        timing: SwitchTiming,
        seed: u64,
    ) -> Result<Fabric, FabricError> {
        let topo = Topology::build(spec);
        let n = topo.nodes() as usize;
        let mut ports: Vec<Vec<LinkEnd>> = vec![Vec::new(); n];
        for l in &topo.links {
            let ia = ports[l.a as usize].len() as u16;
            let ib = ports[l.b as usize].len() as u16;
            let end = |peer: u32, peer_port: u16| {
                let switch = peer >= topo.hosts;
                LinkEnd {
                    peer,
                    peer_port,
                    rate: l.rate,
                    delay: l.delay,
                    latency: l.delay + if switch { timing.forwarding_delay } else { 0 },
                    crossbar_rate: 0,
                    cut_header: timing.cut_through.filter(|_| switch).unwrap_or(0),
                }
            };
            ports[l.a as usize].push(end(l.b, ib));
            ports[l.b as usize].push(end(l.a, ia));
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
        if let (Some(s), false) = (timing.speedup, timing.scheduled_crossbar) {
            for node in ports.iter_mut() {
                for p in node.iter_mut().filter(|p| p.peer >= topo.hosts) {
                    p.crossbar_rate = p.rate.saturating_mul(s as u64);
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
            timing,
            shape: spec.shape.clone(),
        })
    }

    /// Node `i`'s name (`host3`, `leaf1`, `spine0`, `core2`), as `switch.routes` takes it.
    pub fn node_name(&self, i: u32) -> String {
        self.shape.node_name(i)
    }

    /// Hosts: nodes `0..hosts`.
    #[inline(always)]
    pub fn hosts(&self) -> u32 {
        self.hosts
    }

    /// The shape the fabric was built from.
    pub fn shape(&self) -> &topology::Shape {
        &self.shape
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

    /// The place of `node`'s first port among all ports, node by node.
    pub fn first_port(&self, node: u32) -> usize {
        self.first_port[node as usize] as usize
    }

    /// Every port, node by node.
    pub fn all_ports(&self) -> &[LinkEnd] {
        &self.ends
    }

    /// (rate, delay) of each stage on one shortest path from `src` to `dst` (the first
    /// equal-cost choice at each switch; all are alike in our topologies), for the ideal
    /// FCT: each link with its latency, and after each link into a switch with a
    /// crossbar speedup, the crossbar as a stage of that many times the link's rate.
    pub fn path(&self, src: u32, dst: u32) -> Vec<(u64, Ps)> {
        let mut hops = Vec::with_capacity(8);
        let mut p = self.ports(src)[0];
        loop {
            hops.push((p.rate, p.latency));
            let at = p.peer;
            if at == dst {
                return hops;
            }
            if let Some(s) = self.timing.speedup {
                hops.push((self.crossbar_rate(&p, s), 0));
            }
            let port = self.routes.next_hops(at, dst)[0];
            p = self.ports(at)[port as usize];
        }
    }

    /// The links from host `src` to host `dst` along the first equal-cost choice at
    /// each switch: (rate, propagation delay) each, as the HPCC simulator's pairs
    /// (`output/hpcc.rs`) count them: no forwarding delay, no crossbar.
    pub fn links_between(&self, src: u32, dst: u32) -> Vec<(u64, Ps)> {
        let mut hops = Vec::with_capacity(8);
        self.links_between_into(src, dst, &mut hops);
        hops
    }

    /// `links_between` into `hops` (cleared first): no allocation once it has grown.
    pub fn links_between_into(&self, src: u32, dst: u32, hops: &mut Vec<(u64, Ps)>) {
        hops.clear();
        let mut p = self.ports(src)[0];
        loop {
            hops.push((p.rate, p.delay));
            if p.peer == dst {
                return;
            }
            let port = self.routes.next_hops(p.peer, dst)[0];
            p = self.ports(p.peer)[port as usize];
        }
    }

    /// The switches' forwarding delay, crossbar speedup and cut-through header.
    pub fn timing(&self) -> SwitchTiming {
        self.timing
    }

    /// The rate at which a packet that came over `link` (the sending end) crosses the
    /// next switch's crossbar, at speedup `s`.
    pub fn crossbar_rate(&self, link: &LinkEnd, s: u32) -> u64 {
        link.rate.saturating_mul(s as u64)
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
