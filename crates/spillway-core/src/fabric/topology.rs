//! Datacenter topologies as graphs: nodes `0..hosts` are hosts (one NIC each), the rest
//! are switches; links are full duplex.

use crate::units::Ps;

#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    Star {
        hosts: u32,
    },
    Dumbbell {
        hosts: u32,
    },
    LeafSpine {
        racks: u32,
        hosts_per_rack: u32,
        spines: u32,
    },
    FatTree {
        k: u32,
    },
    /// A folded Clos of pods and planes, as Meta's data center fabric (and Parsimon's
    /// `cluster_b`) lays it out: every rack switch links to its pod's fabric switch of
    /// each plane, every fabric switch of plane p to each spine of plane p.
    Clos {
        pods: u32,
        racks_per_pod: u32,
        hosts_per_rack: u32,
        planes: u32,
        spines_per_plane: u32,
    },
    /// Any fabric, link by link (`topology.kind = "graph"`, fabric/graph.rs).
    Graph(std::sync::Arc<super::graph::Graph>),
}

impl Shape {
    pub fn host_count(&self) -> u32 {
        match *self {
            Shape::Star { hosts } | Shape::Dumbbell { hosts } => hosts,
            Shape::LeafSpine {
                racks,
                hosts_per_rack,
                ..
            } => racks * hosts_per_rack,
            Shape::FatTree { k } => k * k * k / 4,
            Shape::Clos {
                pods,
                racks_per_pod,
                hosts_per_rack,
                ..
            } => pods * racks_per_pod * hosts_per_rack,
            Shape::Graph(ref g) => g.hosts,
        }
    }
}

#[derive(Debug, Clone)]
pub struct TopologySpec {
    pub kind: String,
    pub shape: Shape,
    pub link_rate: u64,
    pub link_delay: Ps,
    pub fabric_rate: u64,
    pub fabric_delay: Ps,
    pub framing_bytes: u32,
    pub clock_ppm: f64,
    /// Hosts whose link runs at another rate than `link_rate` (a Fastpass arbiter's).
    pub host_link_rates: Vec<(u32, u64)>,
    /// Hosts whose switch's links up to the next tier run at least this fast (a Fastpass
    /// arbiter's: its high-speed port must reach past its own rack, §2). Only tiered
    /// shapes have them (a dumbbell's one link between its switches is its bottleneck).
    pub uplink_rates: Vec<(u32, u64)>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Link {
    pub a: u32,
    pub b: u32,
    pub rate: u64,
    pub delay: Ps,
}

#[derive(Debug, Clone)]
pub struct Topology {
    pub hosts: u32,
    pub switches: u32,
    pub links: Vec<Link>,
    /// First node of the top switch tier (leaf_spine spines, fat_tree cores), if the
    /// shape has tiers.
    pub top_tier: Option<u32>,
}

impl Topology {
    pub fn nodes(&self) -> u32 {
        self.hosts + self.switches
    }

    pub fn build(spec: &TopologySpec) -> Topology {
        let host_link = |a: u32, b| Link {
            a,
            b,
            rate: spec
                .host_link_rates
                .iter()
                .find(|&&(h, _)| h == a)
                .map_or(spec.link_rate, |&(_, r)| r),
            delay: spec.link_delay,
        };
        let fabric_link = |a, b| Link {
            a,
            b,
            rate: spec.fabric_rate,
            delay: spec.fabric_delay,
        };
        let mut links = Vec::new();
        let hosts = spec.shape.host_count();
        let mut top_tier = None;
        let switches = match spec.shape {
            Shape::Star { hosts } => {
                for h in 0..hosts {
                    links.push(host_link(h, hosts));
                }
                1
            }
            Shape::Dumbbell { hosts } => {
                let (left, right) = (hosts, hosts + 1);
                for h in 0..hosts {
                    links.push(host_link(h, if h < hosts / 2 { left } else { right }));
                }
                links.push(fabric_link(left, right));
                2
            }
            Shape::LeafSpine {
                racks,
                hosts_per_rack,
                spines,
            } => {
                let leaf = |r: u32| hosts + r;
                let spine = |s: u32| hosts + racks + s;
                top_tier = Some(spine(0));
                for h in 0..hosts {
                    links.push(host_link(h, leaf(h / hosts_per_rack)));
                }
                for r in 0..racks {
                    for s in 0..spines {
                        links.push(fabric_link(leaf(r), spine(s)));
                    }
                }
                racks + spines
            }
            Shape::FatTree { k } => {
                // k pods of k/2 edge and k/2 aggregation switches; (k/2)² cores.
                let half = k / 2;
                let edge = |p: u32, i: u32| hosts + p * k + i;
                let agg = |p: u32, j: u32| hosts + p * k + half + j;
                let core = |c: u32| hosts + k * k + c;
                top_tier = Some(core(0));
                for h in 0..hosts {
                    let (p, rest) = (h / (half * half), h % (half * half));
                    links.push(host_link(h, edge(p, rest / half)));
                }
                for p in 0..k {
                    for i in 0..half {
                        for j in 0..half {
                            links.push(fabric_link(edge(p, i), agg(p, j)));
                        }
                    }
                    for j in 0..half {
                        for c in 0..half {
                            links.push(fabric_link(agg(p, j), core(j * half + c)));
                        }
                    }
                }
                k * k + half * half
            }
            Shape::Clos {
                pods,
                racks_per_pod,
                hosts_per_rack,
                planes,
                spines_per_plane,
            } => {
                let racks = pods * racks_per_pod;
                let rack = |r: u32| hosts + r;
                let fabric_sw = |p: u32, plane: u32| hosts + racks + p * planes + plane;
                let spine = |plane: u32, s: u32| {
                    hosts + racks + pods * planes + plane * spines_per_plane + s
                };
                top_tier = Some(spine(0, 0));
                for h in 0..hosts {
                    links.push(host_link(h, rack(h / hosts_per_rack)));
                }
                for r in 0..racks {
                    for plane in 0..planes {
                        links.push(fabric_link(rack(r), fabric_sw(r / racks_per_pod, plane)));
                    }
                }
                for p in 0..pods {
                    for plane in 0..planes {
                        for s in 0..spines_per_plane {
                            links.push(fabric_link(fabric_sw(p, plane), spine(plane, s)));
                        }
                    }
                }
                racks + pods * planes + planes * spines_per_plane
            }
            Shape::Graph(ref g) => {
                // Every link at its own rate and delay (no per-host rates: those
                // are Fastpass's, which is not beside a graph).
                links.extend(g.links.iter().map(|l| Link {
                    a: l.a,
                    b: l.b,
                    rate: l.rate,
                    delay: l.delay,
                }));
                g.switches
            }
        };
        let tiered = spec.shape.tiered();
        for &(h, rate) in spec.uplink_rates.iter().filter(|_| tiered) {
            let Some(sw) = links.iter().find(|l| l.a == h).map(|l| l.b) else {
                continue;
            };
            for l in links.iter_mut() {
                let other = if l.a == sw {
                    l.b
                } else if l.b == sw {
                    l.a
                } else {
                    continue;
                };
                if other >= hosts {
                    l.rate = l.rate.max(rate);
                }
            }
        }
        Topology {
            hosts,
            switches,
            links,
            top_tier,
        }
    }
}

impl Shape {
    /// Every linked pair of nodes, both ways round (for checking a scenario's routes).
    pub fn neighbours(&self) -> std::collections::HashSet<(u32, u32)> {
        let spec = TopologySpec {
            kind: String::new(),
            shape: self.clone(),
            link_rate: 0,
            link_delay: 0,
            fabric_rate: 0,
            fabric_delay: 0,
            framing_bytes: 0,
            clock_ppm: 0.0,
            host_link_rates: Vec::new(),
            uplink_rates: Vec::new(),
        };
        Topology::build(&spec)
            .links
            .iter()
            .flat_map(|l| [(l.a, l.b), (l.b, l.a)])
            .collect()
    }

    /// Hosts and switches this shape builds.
    pub fn node_count(&self) -> u32 {
        let switches = match *self {
            Shape::Star { .. } => 1,
            Shape::Dumbbell { .. } => 2,
            Shape::LeafSpine { racks, spines, .. } => racks + spines,
            Shape::FatTree { k } => k * k + k * k / 4,
            Shape::Clos {
                pods,
                racks_per_pod,
                planes,
                spines_per_plane,
                ..
            } => pods * racks_per_pod + pods * planes + planes * spines_per_plane,
            Shape::Graph(ref g) => g.switches,
        };
        self.host_count() + switches
    }

    /// The shape has tiers of switches (a top tier above the hosts' switches).
    pub fn tiered(&self) -> bool {
        matches!(
            self,
            Shape::LeafSpine { .. } | Shape::FatTree { .. } | Shape::Clos { .. }
        )
    }

    /// The name scenarios use for node `i` (numbering as [`Topology::build`] lays it out):
    /// `host3`; `switch` (star); `left`, `right` (dumbbell); `leaf2`, `spine0`
    /// (leaf_spine); `edge1.0`, `agg1.1`, `core3` (fat_tree: pod.index); `rack5`,
    /// `fabric1.2`, `spine2.7` (clos: pod.plane, plane.index); `switch320` (graph: the
    /// file's id).
    pub fn node_name(&self, i: u32) -> String {
        let hosts = self.host_count();
        if i < hosts {
            return format!("host{i}");
        }
        let s = i - hosts;
        match *self {
            Shape::Star { .. } => "switch".into(),
            Shape::Dumbbell { .. } => ["left", "right"][s as usize].into(),
            Shape::LeafSpine { racks, .. } if s < racks => format!("leaf{s}"),
            Shape::LeafSpine { racks, .. } => format!("spine{}", s - racks),
            Shape::FatTree { k } if s < k * k => {
                let (pod, j) = (s / k, s % k);
                if j < k / 2 {
                    format!("edge{pod}.{j}")
                } else {
                    format!("agg{pod}.{}", j - k / 2)
                }
            }
            Shape::FatTree { k } => format!("core{}", s - k * k),
            Shape::Clos {
                pods,
                racks_per_pod,
                planes,
                spines_per_plane,
                ..
            } => {
                let racks = pods * racks_per_pod;
                if s < racks {
                    format!("rack{s}")
                } else if s < racks + pods * planes {
                    let f = s - racks;
                    format!("fabric{}.{}", f / planes, f % planes)
                } else {
                    let t = s - racks - pods * planes;
                    format!("spine{}.{}", t / spines_per_plane, t % spines_per_plane)
                }
            }
            // The file's id: a switch is named as its topology names it.
            Shape::Graph(ref g) => format!("switch{}", g.ids[i as usize]),
        }
    }

    /// The node a scenario names, by [`Shape::node_name`].
    pub fn node_named(&self, name: &str) -> Option<u32> {
        (0..self.node_count()).find(|&i| self.node_name(i) == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Scenario;

    fn topo(text: &str) -> Topology {
        Topology::build(&Scenario::parse(text, &[], None).unwrap().topology)
    }

    #[test]
    fn fat_tree_k8_has_the_textbook_counts() {
        let t = topo("[topology]\nkind = \"fat_tree\"\nk = 8");
        assert_eq!(t.hosts, 128);
        assert_eq!(t.switches, 80);
        // hosts + edge-agg (8 pods x 16) + agg-core (8 pods x 16)
        assert_eq!(t.links.len(), 128 + 128 + 128);
        // Every switch has exactly k ports.
        let mut deg = vec![0; t.nodes() as usize];
        for l in &t.links {
            deg[l.a as usize] += 1;
            deg[l.b as usize] += 1;
        }
        assert!(deg[..128].iter().all(|&d| d == 1));
        assert!(deg[128..].iter().all(|&d| d == 8));
    }

    #[test]
    fn leaf_spine_presets() {
        let t = topo("[topology]\nkind = \"pfabric144\"");
        assert_eq!((t.hosts, t.switches, t.links.len()), (144, 13, 144 + 36));
        let t = topo("[topology]\nkind = \"detail96\"");
        assert_eq!((t.hosts, t.switches), (96, 12));
    }

    #[test]
    fn node_names_follow_the_build_layout() {
        let sc = Scenario::parse("[topology]\nkind = \"fat_tree\"\nk = 4", &[], None).unwrap();
        let shape = &sc.topology.shape;
        let t = Topology::build(&sc.topology);
        assert_eq!(shape.node_count(), t.nodes());
        // Host 0's only link goes to edge0.0; edge0.0 links to agg0.0 and agg0.1.
        let edge = shape.node_named("edge0.0").unwrap();
        assert!(t.links.iter().any(|l| l.a == 0 && l.b == edge));
        let agg = shape.node_named("agg0.1").unwrap();
        assert!(t.links.iter().any(|l| l.a == edge && l.b == agg));
        let core = shape.node_named("core3").unwrap();
        assert_eq!(core, t.nodes() - 1);
        assert_eq!(shape.node_named("core4"), None);
        for i in 0..t.nodes() {
            assert_eq!(shape.node_named(&shape.node_name(i)), Some(i));
        }
    }
}
