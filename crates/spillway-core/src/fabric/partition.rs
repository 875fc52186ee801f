//! How a fabric is cut into logical processes for a parallel run (`run.partitions`):
//! which process owns each node, and the lookahead the cut links give.
//!
//! The cut follows the tree: a unit is a pod of a fat tree (its hosts, edge and
//! aggregation switches) or a rack of a leaf-spine (its hosts and leaf); the top tier's
//! switches (cores, spines) are dealt round-robin over the units, so every cut link is a
//! link into or out of the top tier. A packet crosses at most two cut links, and the
//! links inside a unit, where most hops of rack- and pod-local traffic happen, are never
//! cut. `run.partitions = N` groups consecutive units into N processes; the result
//! depends only on the fabric and N, never on `run.threads`, which only says how many
//! processes run at once: that is what makes a run's output the same for every thread
//! count (docs/architecture.md § Parallel runs).

use super::topology::Shape;
use super::Fabric;
use crate::units::{serialization_ps, Ps};

/// The least a frame adds to a link's propagation before it arrives: one byte's
/// serialization. (A header-only frame is shorter than 64 bytes with
/// `topology.framing_bytes = 0`; 64 let a pFabric probe's arrival into a window already
/// run.)
const MIN_FRAME: u64 = 1;

#[derive(Debug, Clone)]
pub struct Partition {
    /// Per node, the logical process that owns it.
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
            Shape::Star { .. } | Shape::Dumbbell { .. } => 1,
        }
    }

    /// `fabric` cut into `n` processes (at most [`Partition::units`]; `n` = 1: whole).
    /// Err: why it cannot be cut so.
    pub fn plan(fabric: &Fabric, n: u32) -> Result<Partition, String> {
        let units = Self::units(fabric.shape());
        if n == 1 {
            return Ok(Self::whole(fabric));
        }
        if units == 1 {
            return Err(format!(
                "a {} has no pods or racks to cut between (only fat_tree and leaf_spine fabrics are partitioned)",
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
                    } else {
                        (node - hosts - racks) % racks
                    }
                }
                Shape::Star { .. } | Shape::Dumbbell { .. } => 0,
            }
        };
        let lp_of: Vec<u32> = (0..fabric.node_count() as u32)
            .map(|node| unit_of(node) * n / units)
            .collect();
        let mut lookahead = Ps::MAX;
        for node in 0..fabric.node_count() as u32 {
            for end in fabric.ports(node) {
                if lp_of[end.peer as usize] != lp_of[node as usize] {
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

    /// The process that owns `node`.
    #[inline(always)]
    pub fn lp(&self, node: u32) -> u32 {
        self.lp_of[node as usize]
    }
}

fn shape_name(s: &Shape) -> &'static str {
    match s {
        Shape::Star { .. } => "star",
        Shape::Dumbbell { .. } => "dumbbell",
        Shape::LeafSpine { .. } => "leaf_spine",
        Shape::FatTree { .. } => "fat_tree",
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
        let p = Partition::plan(&f, 8).unwrap();
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
        let two = Partition::plan(&f, 2).unwrap();
        assert_eq!(two.lp(0), 0);
        assert_eq!(two.lp(hosts - 1), 1);
    }

    #[test]
    fn shapes_without_units_and_too_many_processes_are_refused() {
        let star = fabric("kind = \"star\"\nhosts = 4");
        assert!(Partition::plan(&star, 2).unwrap_err().contains("star"));
        assert_eq!(Partition::plan(&star, 1).unwrap().count, 1);
        let ls = fabric("kind = \"leaf_spine\"\nracks = 3\nhosts_per_rack = 4\nspines = 2");
        assert!(Partition::plan(&ls, 4).unwrap_err().contains("at most 3"));
        assert_eq!(Partition::plan(&ls, 3).unwrap().count, 3);
    }
}
