//! The wired network: nodes with ports, and the routes between them.

use crate::config::RouteSpec;
use crate::fabric::routes::{Adjacency, RouteTable};
use crate::fabric::topology::Topology;
use crate::packet::prefetch;
use crate::switch::port::Port;
use crate::units::Ps;

pub mod routes;
pub mod topology;

/// Why a network could not be built, and the scenario key responsible: `topology`
/// for its shape, `switch.routes[...]` for route overrides that fail only together.
#[derive(Debug)]
pub struct NetworkError {
    pub key: String,
    pub message: String,
}

impl NetworkError {
    fn topology(message: String) -> Self {
        NetworkError {
            key: "topology".into(),
            message,
        }
    }
}

struct Node {
    ports: Vec<Port>,
}

/// The wired network: nodes with ports, and routes.
pub struct Network {
    pub hosts: u32,
    /// Every node's ports, node by node: node n's are `ports[first_port[n]..first_port[n + 1]]`
    /// (one array, so that reaching a port is one load, not two).
    ports: Vec<Port>,
    first_port: Vec<u32>,
    routes: RouteTable,
    /// Whether any route is weighted (`switch.routes` with `weights`): the hot path
    /// looks up weights only then.
    pub weighted: bool,
}

impl Network {
    /// Builds ports from the topology and routes by shortest paths (all equal-cost next
    /// hops kept). Errors when some host cannot reach another.
    pub fn new(
        topo: &Topology,
        switch_buffer: u64,
        edge_buffer: u64,
        spine_buffer: u64,
        nic_buffer: Option<u64>,
        routes: &[RouteSpec],
        name: &dyn Fn(u32) -> String,
    ) -> Result<Network, NetworkError> {
        let n = topo.nodes() as usize;
        let mut nodes: Vec<Node> = (0..n).map(|_| Node { ports: Vec::new() }).collect();
        // Buffer of `node`'s port toward `peer`.
        let cap = |node: u32, peer: u32| {
            if node < topo.hosts {
                nic_buffer.unwrap_or(u64::MAX)
            } else if peer < topo.hosts {
                edge_buffer
            } else if topo.top_tier.is_some_and(|t| node >= t) {
                spine_buffer
            } else {
                switch_buffer
            }
        };
        for l in &topo.links {
            let ia = nodes[l.a as usize].ports.len() as u16;
            let ib = nodes[l.b as usize].ports.len() as u16;
            nodes[l.a as usize]
                .ports
                .push(Port::new(l.b, ib, l.rate, l.delay, cap(l.a, l.b)));
            nodes[l.b as usize]
                .ports
                .push(Port::new(l.a, ia, l.rate, l.delay, cap(l.b, l.a)));
        }
        for (h, node) in nodes.iter().enumerate().take(topo.hosts as usize) {
            if node.ports.len() != 1 {
                return Err(NetworkError::topology(format!(
                    "host {h} has {} links; hosts have exactly one NIC",
                    node.ports.len()
                )));
            }
        }
        let peers: Vec<Vec<u32>> = nodes
            .iter()
            .map(|n| n.ports.iter().map(|p| p.peer).collect())
            .collect();
        let adj = Adjacency {
            peers: &peers,
            hosts: topo.hosts,
        };
        let routes = RouteTable::build(&adj, routes, name).map_err(|e| NetworkError {
            key: e.key,
            message: e.message,
        })?;
        let mut first_port = Vec::with_capacity(n + 1);
        let mut ports = Vec::new();
        for node in nodes {
            first_port.push(ports.len() as u32);
            ports.extend(node.ports);
        }
        first_port.push(ports.len() as u32);
        Ok(Network {
            hosts: topo.hosts,
            ports,
            first_port,
            weighted: routes.weighted,
            routes,
        })
    }

    /// Cumulative weights of the port set at `switch` toward `dst`, when that choice is
    /// weighted; look only when [`Network::weighted`].
    pub fn hop_weights(&self, switch: u32, dst: u32) -> Option<&[f64]> {
        self.routes.hop_weights(switch, dst)
    }

    /// Equal-cost egress ports at `switch` toward host `dst`.
    #[inline(always)]
    pub fn next_hops(&self, switch: u32, dst: u32) -> &[u16] {
        self.routes.next_hops(switch, dst)
    }

    /// (rate, delay) of each hop on one shortest path from `src` to `dst`
    /// (the first equal-cost choice at each switch; all are alike in our topologies).
    pub fn path(&self, src: u32, dst: u32) -> Vec<(u64, Ps)> {
        let mut hops = Vec::with_capacity(8);
        let p = self.port(src, 0);
        hops.push((p.rate, p.delay));
        let mut at = p.peer;
        while at != dst {
            let port = self.next_hops(at, dst)[0];
            let p = self.port(at, port as u32);
            hops.push((p.rate, p.delay));
            at = p.peer;
        }
        hops
    }

    pub fn switch_ports(&self) -> impl Iterator<Item = &Port> {
        self.ports[self.first_port[self.hosts as usize] as usize..].iter()
    }

    pub fn node_count(&self) -> usize {
        self.first_port.len() - 1
    }

    /// Where port `port` of `node` is in the flat array of ports, for
    /// [`Network::port_at_mut`]: a caller that reaches the same port twice looks it up once.
    #[inline(always)]
    pub fn port_index(&self, node: u32, port: u32) -> usize {
        (self.first_port[node as usize] + port) as usize
    }

    /// The port at [`Network::port_index`] `i`.
    #[inline(always)]
    pub fn port_at_mut(&mut self, i: usize) -> &mut Port {
        &mut self.ports[i]
    }

    /// Start loading the first line of the port at [`Network::port_index`] `i`.
    #[inline(always)]
    pub fn prefetch_port(&self, i: usize) {
        if let Some(p) = self.ports.get(i) {
            prefetch(p as *const Port as *const u8);
        }
    }

    /// Port `port` of `node`.
    #[inline(always)]
    pub fn port(&self, node: u32, port: u32) -> &Port {
        &self.ports[(self.first_port[node as usize] + port) as usize]
    }

    // Always inlined: with only `#[inline]`, `Sim::send` called it (and `Port::is_idle`)
    // out of line once per packet hop, ~14 instructions a hop with the call.
    #[inline(always)]
    pub fn port_mut(&mut self, node: u32, port: u32) -> &mut Port {
        &mut self.ports[(self.first_port[node as usize] + port) as usize]
    }

    /// The ports of `node`, by index.
    pub fn node_ports(&self, node: u32) -> &[Port] {
        let n = node as usize;
        &self.ports[self.first_port[n] as usize..self.first_port[n + 1] as usize]
    }

    pub fn node_ports_mut(&mut self, node: u32) -> &mut [Port] {
        let n = node as usize;
        &mut self.ports[self.first_port[n] as usize..self.first_port[n + 1] as usize]
    }

    /// Every port, node by node.
    pub fn all_ports(&self) -> &[Port] {
        &self.ports
    }
}
