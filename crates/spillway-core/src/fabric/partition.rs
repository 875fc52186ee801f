//! How a fabric is cut into logical processes for a parallel run (`run.partitions`):
//! which process owns each node, and the lookahead the cut links give.
//!
//! The cut follows the tree: a unit is a pod of a fat tree (its hosts, edge and
//! aggregation switches) or a rack of a leaf-spine (its hosts and leaf); the top tier's
//! switches (cores, spines) are dealt round-robin over the units, so every cut link is a
//! link into or out of the top tier. A packet crosses at most two cut links, and the
//! links inside a unit, where most hops of rack- and pod-local traffic happen, are never
//! cut. `run.partitions = N` groups consecutive units into N processes; the result
//! depends only on the fabric, N and the switches' kind, never on `run.threads`, which
//! only says how many processes run at once: that is what makes a run's output the same
//! for every thread count (docs/architecture.md § Parallel runs).
//!
//! Where a top-tier switch keeps no state across its ports ([`Partition::plan`]'s
//! `split_top`: output-queued, no flow control, nothing sent back toward a source), it
//! is not dealt to one process but split by its egress: the port down to a unit belongs
//! to that unit's process, and so does a packet arriving for it. The packet's way down
//! from the top is fixed by its destination, so the process that sends a packet up a cut
//! link knows which process it arrives in, and it crosses once (none if its destination
//! is back in the sender's process), not twice.

use super::topology::Shape;
use super::Fabric;
use crate::units::{serialization_ps, Ps};

/// The least a frame adds to a link's propagation before it arrives: one byte's
/// serialization. (A header-only frame is shorter than 64 bytes with
/// `topology.framing_bytes = 0`; 64 let a pFabric probe's arrival into a window already
/// run.)
const MIN_FRAME: u64 = 1;

/// [`Partition::auto`]: processes enough for four threads at any size...
pub const AUTO_LEAST: u32 = 4;
/// ...and more where the fabric is large enough to keep each busy.
pub const AUTO_HOSTS_EACH: u32 = 256;

/// [`Partition::lp_of`] of a top-tier switch split by its egress ports.
pub const SPLIT: u32 = u32::MAX;

#[derive(Debug, Clone)]
pub struct Partition {
    /// Per node, the logical process that owns it, or [`SPLIT`].
    pub lp_of: Vec<u32>,
    /// Logical processes.
    pub count: u32,
    /// No event one process sends another arrives sooner than this after it was sent:
    /// the least, over cut links, of propagation plus one byte's serialization.
    pub lookahead: Ps,
}

impl Partition {
    /// One process owning the whole fabric.
    pub fn whole(fabric: &Fabric) -> Partition {
        Partition {
            lp_of: vec![0; fabric.node_count()],
            count: 1,
            lookahead: Ps::MAX,
        }
    }

    /// The units this shape cuts into (pods, racks), or 1 where it has none.
    pub fn units(shape: &Shape) -> u32 {
        match *shape {
            Shape::FatTree { k } => k,
            Shape::LeafSpine { racks, .. } => racks,
            Shape::Clos { pods, .. } => pods,
            Shape::Graph(_) => 1,
            Shape::Star { .. } | Shape::Dumbbell { .. } => 1,
        }
    }

    /// `run.partitions = "auto"`: at least [`AUTO_LEAST`] processes and one per
    /// [`AUTO_HOSTS_EACH`] hosts, at most one per unit. Fewer, larger processes than
    /// units: a process per pod doubles the packets that cross a cut and adds a queue,
    /// a post and a window's bookkeeping per process, which at 128-1,024 hosts cost more
    /// than the threads gain (docs/performance.md § Parallel runs: on two threads 4
    /// processes ran k=16 1.70-1.80x the whole run, 16 ran it 1.47x). Depends on the
    /// fabric alone, so the result is the same on every machine and thread count.
    pub fn auto(shape: &Shape, hosts: u32) -> u32 {
        Self::units(shape).min(AUTO_LEAST.max(hosts / AUTO_HOSTS_EACH))
    }

    /// `fabric` cut into `n` processes (at most [`Partition::units`]; `n` = 1: whole),
    /// its top tier split by egress when `split_top` (the switches allow it: the
    /// module's comment). Err: why it cannot be cut so.
    pub fn plan(fabric: &Fabric, n: u32, split_top: bool) -> Result<Partition, String> {
        let units = Self::units(fabric.shape());
        if n == 1 {
            return Ok(Self::whole(fabric));
        }
        if units == 1 {
            return Err(format!(
                "a {} has no pods or racks to cut between (only fat_tree, clos and leaf_spine fabrics are partitioned)",
                shape_name(fabric.shape())
            ));
        }
        if n > units {
            return Err(format!(
                "this fabric has {units} units (pods or racks) to give processes; at most {units}"
            ));
        }
        let hosts = fabric.hosts();
        // Unit of each node, then units grouped: unit u goes to process u * n / units.
        let unit_of = |node: u32| -> u32 {
            match *fabric.shape() {
                Shape::FatTree { k } => {
                    let half = k / 2;
                    if node < hosts {
                        node / (half * half)
                    } else if node < hosts + k * k {
                        (node - hosts) / k
                    } else if split_top {
                        SPLIT
                    } else {
                        (node - hosts - k * k) % k
                    }
                }
                Shape::LeafSpine {
                    racks,
                    hosts_per_rack,
                    ..
                } => {
                    if node < hosts {
                        node / hosts_per_rack
                    } else if node < hosts + racks {
                        node - hosts
                    } else if split_top {
                        SPLIT
                    } else {
                        (node - hosts - racks) % racks
                    }
                }
                Shape::Clos {
                    pods,
                    racks_per_pod,
                    hosts_per_rack,
                    planes,
                    ..
                } => {
                    let racks = pods * racks_per_pod;
                    if node < hosts {
                        node / (racks_per_pod * hosts_per_rack)
                    } else if node < hosts + racks {
                        (node - hosts) / racks_per_pod
                    } else if node < hosts + racks + pods * planes {
                        (node - hosts - racks) / planes
                    } else if split_top {
                        SPLIT
                    } else {
                        (node - hosts - racks - pods * planes) % pods
                    }
                }
                Shape::Star { .. } | Shape::Dumbbell { .. } | Shape::Graph(_) => 0,
            }
        };
        let lp_of: Vec<u32> = (0..fabric.node_count() as u32)
            .map(|node| match unit_of(node) {
                SPLIT => SPLIT,
                u => u * n / units,
            })
            .collect();
        let mut lookahead = Ps::MAX;
        for node in 0..fabric.node_count() as u32 {
            for end in fabric.ports(node) {
                // A link into a split switch is cut (for every packet bound elsewhere);
                // one out of it never is (its port is the peer's process's).
                let (a, b) = (lp_of[node as usize], lp_of[end.peer as usize]);
                if a != b && a != SPLIT {
                    let soonest = end.delay + serialization_ps(MIN_FRAME, end.rate);
                    lookahead = lookahead.min(soonest);
                }
            }
        }
        if lookahead == 0 {
            return Err("a cut link has no propagation delay: no lookahead".into());
        }
        Ok(Partition {
            lp_of,
            count: n,
            lookahead,
        })
    }

    /// The process that owns `node` ([`SPLIT`]: each of its ports' peers' own that
    /// port).
    #[inline(always)]
    pub fn lp(&self, node: u32) -> u32 {
        self.lp_of[node as usize]
    }

    /// The process in which a packet for host `dst` arrives at `node`: `node`'s, or, at
    /// a split switch, the one of the unit it goes down to, `dst`'s.
    #[inline(always)]
    pub fn lp_for(&self, node: u32, dst: u32) -> u32 {
        match self.lp_of[node as usize] {
            SPLIT => self.lp_of[dst as usize],
            lp => lp,
        }
    }

    /// The process that owns port `port` of `node` in `fabric`: the node's, or at a
    /// split switch, its peer's.
    pub fn port_owner(&self, fabric: &Fabric, node: u32, port: usize) -> u32 {
        match self.lp(node) {
            SPLIT => self.lp(fabric.ports(node)[port].peer),
            lp => lp,
        }
    }

    /// Whether process `lp` builds switch `node` (its own, or split).
    #[inline]
    pub fn builds(&self, node: u32, lp: u32) -> bool {
        let at = self.lp(node);
        at == lp || at == SPLIT
    }

    /// Some switch is split by its egress.
    pub fn has_split(&self) -> bool {
        self.lp_of.contains(&SPLIT)
    }
}

fn shape_name(s: &Shape) -> &'static str {
    match s {
        Shape::Star { .. } => "star",
        Shape::Dumbbell { .. } => "dumbbell",
        Shape::LeafSpine { .. } => "leaf_spine",
        Shape::FatTree { .. } => "fat_tree",
        Shape::Clos { .. } => "clos",
        Shape::Graph(_) => "graph",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Scenario;

    fn fabric(topology: &str) -> Fabric {
        let text = format!(
            "[topology]\n{topology}\n[workload]\nkind = \"trace\"\nflows = [{{ src = 0, dst = 1, size = \"1KB\" }}]\n"
        );
        let sc = Scenario::parse(&text, &[], None).unwrap();
        Fabric::build(&sc.topology, &sc.routes, sc.switch.timing, 1).unwrap()
    }

    /// A fat tree's pods are its units: a pod's hosts, edges and aggregations share a
    /// process, every cut link touches a core, and every process gets cores.
    #[test]
    fn a_fat_tree_is_cut_between_pods_and_cores() {
        let f = fabric("kind = \"fat_tree\"\nk = 8\nlink_delay = \"1us\"");
        let p = Partition::plan(&f, 8, false).unwrap();
        assert_eq!(p.count, 8);
        let hosts = f.hosts();
        for node in 0..f.node_count() as u32 {
            for end in f.ports(node) {
                let cut = p.lp(node) != p.lp(end.peer);
                let core = |n: u32| n >= hosts + 64;
                if cut {
                    assert!(core(node) || core(end.peer), "{node} - {}", end.peer);
                }
                if node < hosts {
                    assert!(!cut, "a host shares its switch's process");
                }
            }
        }
        for lp in 0..8 {
            assert_eq!(
                (hosts + 64..f.node_count() as u32)
                    .filter(|&c| p.lp(c) == lp)
                    .count(),
                2
            );
        }
        // 1 us of propagation plus a byte at 10 Gbit/s.
        assert_eq!(p.lookahead, 1_000_000 + 800);
        let two = Partition::plan(&f, 2, false).unwrap();
        assert_eq!(two.lp(0), 0);
        assert_eq!(two.lp(hosts - 1), 1);
    }

    /// Split by egress, a core belongs to no process: a packet arriving at it is the
    /// process's of its destination's pod, each of its ports the process's of the pod it
    /// goes down to, and the lookahead is still the links into the top tier's.
    #[test]
    fn a_split_core_arrives_where_its_packet_goes_down() {
        let f = fabric("kind = \"fat_tree\"\nk = 8\nlink_delay = \"1us\"");
        let p = Partition::plan(&f, 4, true).unwrap();
        let hosts = f.hosts();
        assert!(p.has_split());
        for core in hosts + 64..f.node_count() as u32 {
            assert_eq!(p.lp(core), SPLIT);
            assert!((0..4).all(|lp| p.builds(core, lp)));
            for (i, end) in f.ports(core).iter().enumerate() {
                assert_eq!(p.port_owner(&f, core, i), p.lp(end.peer));
            }
            for dst in 0..hosts {
                // 16 hosts a pod, two pods a process.
                assert_eq!(p.lp_for(core, dst), dst / 32);
            }
        }
        // Everything below the cores is cut as before.
        let whole_cores = Partition::plan(&f, 4, false).unwrap();
        for n in 0..hosts + 64 {
            assert_eq!(p.lp(n), whole_cores.lp(n));
            assert_eq!(p.lp_for(n, 0), p.lp(n));
            assert!(!p.builds(n, (p.lp(n) + 1) % 4));
        }
        assert_eq!(p.lookahead, 1_000_000 + 800);
    }

    #[test]
    fn auto_takes_four_processes_or_one_per_256_hosts_within_the_units() {
        let auto = |shape: Shape| Partition::auto(&shape, shape.host_count());
        assert_eq!(auto(Shape::FatTree { k: 4 }), 4); // 16 hosts: a pod each
        assert_eq!(auto(Shape::FatTree { k: 8 }), 4); // 128 hosts
        assert_eq!(auto(Shape::FatTree { k: 16 }), 4); // 1,024 hosts
        assert_eq!(auto(Shape::FatTree { k: 24 }), 13); // 3,456 hosts
        assert_eq!(auto(Shape::FatTree { k: 32 }), 32); // 8,192 hosts: a pod each
        let racks = |racks| Shape::LeafSpine {
            racks,
            hosts_per_rack: 16,
            spines: 4,
        };
        assert_eq!(auto(racks(3)), 3);
        assert_eq!(auto(racks(64)), 4);
        assert_eq!(auto(Shape::Star { hosts: 4096 }), 1);
        assert_eq!(auto(Shape::Dumbbell { hosts: 8 }), 1);
    }

    #[test]
    fn shapes_without_units_and_too_many_processes_are_refused() {
        let star = fabric("kind = \"star\"\nhosts = 4");
        assert!(Partition::plan(&star, 2, true)
            .unwrap_err()
            .contains("star"));
        assert_eq!(Partition::plan(&star, 1, true).unwrap().count, 1);
        let ls = fabric("kind = \"leaf_spine\"\nracks = 3\nhosts_per_rack = 4\nspines = 2");
        assert!(Partition::plan(&ls, 4, true)
            .unwrap_err()
            .contains("at most 3"));
        assert_eq!(Partition::plan(&ls, 3, true).unwrap().count, 3);
    }
}
