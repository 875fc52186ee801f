//! Fastpass's paths (§3, §4): the fabric as the arbiter's allocator sees it (each
//! rearrangeably non-blocking tier one switch; racks with uplink limits where the
//! network is oversubscribed), the path selection that colors each timeslot's matching
//! onto the physical topology, and the pinning of each packet to its path: the arbiter's
//! path becomes the 5-tuple hash whose ECMP choices at the source's switches are that
//! path's (the switches stay unmodified, §2).

use crate::fabric::topology::Shape;
use crate::fabric::Fabric;
use crate::rng::mix64;
use crate::switch::forwarding::ecmp;
use spillway_arbiter::{Fabric as ArbFabric, Flow, PathError, ThreeTier, TwoTier, VirtualCores};
use std::collections::HashMap;

/// A grant's path: no choice to make (same rack, or one path only).
pub const ANY_PATH: u16 = u16::MAX;
/// In a fat tree's path id, "no core" (the aggregation switch turns down, same pod).
const NO_CORE: u16 = 0xFF;

/// Path selection for one timeslot's matching.
pub enum PathSelection {
    /// Star and dumbbell: one path between any two hosts.
    None,
    /// Leaf-spine: the spine (a physical core; faster spine links are several colors),
    /// of `spines`.
    TwoTier(Box<TwoTier>, u32),
    /// Fat tree: the aggregation plane, then the core within it, of `half` each.
    ThreeTier(Box<ThreeTier>, u32),
}

/// The arbiter's view of the fabric: allocation constraints and path selection.
pub fn build(
    shape: &Shape,
    link_rate: u64,
    fabric_rate: u64,
) -> Result<(ArbFabric, PathSelection), String> {
    let hosts = shape.host_count() as usize;
    // Fabric links in host-link timeslots (§4's virtual cores).
    let multiple = (fabric_rate / link_rate.max(1)).min(u32::MAX as u64) as u32;
    let err = |e: PathError| format!("Fastpass path selection: {e}");
    Ok(match *shape {
        Shape::Star { .. } => (ArbFabric::full_bisection(hosts), PathSelection::None),
        Shape::Dumbbell { hosts } => {
            let rack_of = (0..hosts).map(|h| (h >= hosts / 2) as u32).collect();
            let f = ArbFabric::with_racks(rack_of, vec![multiple; 2], vec![multiple; 2])
                .map_err(|e| e.to_string())?;
            (f, PathSelection::None)
        }
        Shape::LeafSpine {
            racks,
            hosts_per_rack,
            spines,
        } => {
            let cap = spines.saturating_mul(multiple);
            let f = ArbFabric::racks(racks as usize, hosts_per_rack as usize, cap, cap);
            let rack_of = (0..hosts as u32).map(|h| h / hosts_per_rack).collect();
            let cores = VirtualCores::new(&vec![multiple; spines as usize]);
            (
                f,
                PathSelection::TwoTier(
                    Box::new(TwoTier::new(rack_of, cores).map_err(err)?),
                    spines,
                ),
            )
        }
        Shape::FatTree { k } => {
            let half = k / 2;
            // Racks are edge switches, numbered pod by pod (k/2 hosts each).
            let rack_of = (0..hosts as u32).map(|h| h / half).collect();
            let t = ThreeTier::new(
                rack_of,
                half,
                VirtualCores::uniform(half),
                VirtualCores::uniform(half),
            )
            .map_err(err)?;
            (
                ArbFabric::full_bisection(hosts),
                PathSelection::ThreeTier(Box::new(t), half),
            )
        }
        Shape::Clos { .. } | Shape::Graph(_) => {
            return Err(
                "the arbiter's path selection knows star, dumbbell, leaf-spine and fat-tree \
                 fabrics only, not a Clos of planes or a graph"
                    .into(),
            )
        }
    })
}

impl PathSelection {
    /// The path of every packet of timeslot `ts`: `out[i]` for `flows[i]`.
    ///
    /// §4: "path selection must balance packet load across all available links". The
    /// edge coloring keeps every link to one packet within a timeslot, but which spine,
    /// aggregation switch or core a color names is free, and the colorer uses the same
    /// colors first: with few flows, the first spine's (or aggregation switch's and
    /// core's) links carried a packet in almost every timeslot and the others almost
    /// none. Such a link has only the 1% control reserve to spare for the FCP messages
    /// crossing it, and where the arbiter's messages concentrate (its rack, its pod's
    /// first aggregation switch) they filled its queue until it dropped (issue 37). So
    /// each timeslot relabels the colors, the same way at every rack: spine `c` becomes
    /// `c + ts` (mod spines); in a fat tree, plane `a` becomes `a + ts` and core `c`
    /// within it `c + ts / half` (mod half), so a flow's timeslots visit every core in
    /// turn. Every spine, plane and core being alike, a relabeled coloring is as valid.
    pub fn select(
        &mut self,
        ts: u64,
        flows: &[Flow],
        two: &mut Vec<Option<u32>>,
        three: &mut Vec<Option<spillway_arbiter::pathsel::Path3>>,
        out: &mut Vec<u16>,
    ) -> Result<(), PathError> {
        out.clear();
        match self {
            PathSelection::None => out.resize(flows.len(), ANY_PATH),
            PathSelection::TwoTier(t, spines) => {
                t.select(flows, two)?;
                let shift = (ts % *spines as u64) as u32;
                out.extend(
                    two.iter()
                        .map(|c| c.map_or(ANY_PATH, |c| ((c + shift) % *spines) as u16)),
                );
            }
            PathSelection::ThreeTier(t, half) => {
                t.select(flows, three)?;
                let h = *half as u64;
                let (da, dc) = ((ts % h) as u32, (ts / h % h) as u32);
                out.extend(three.iter().map(|p| {
                    p.map_or(ANY_PATH, |p| {
                        let agg = (p.agg + da) % *half;
                        let core = p.core.map_or(NO_CORE, |c| ((c + dc) % *half) as u16 & 0xFF);
                        (agg as u16) << 8 | core
                    })
                }));
            }
        }
        Ok(())
    }
}

/// Packets pinned to paths by their ECMP hash, the hash per (source switch, path) found
/// once and kept.
pub struct Pins {
    seed: u64,
    cache: HashMap<(u32, u16), u32>,
    /// Packets whose path no hash could select (counted; they keep their own hash).
    pub unpinned: u64,
}

impl Pins {
    pub fn new(seed: u64) -> Pins {
        Pins {
            seed,
            cache: HashMap::new(),
            unpinned: 0,
        }
    }

    /// The switches path `path` crosses going up from `edge`, the switch of the source
    /// host: the spine (leaf-spine), or the aggregation switch and the core (fat tree).
    fn targets(fabric: &Fabric, edge: u32, path: u16) -> [Option<u32>; 2] {
        let hosts = fabric.hosts();
        match fabric.shape() {
            Shape::LeafSpine { .. } => [fabric.top_tier().map(|s| s + path as u32), None],
            Shape::FatTree { k } => {
                let (k, half) = (*k, *k / 2);
                let (agg, core) = ((path >> 8) as u32, path & 0xFF);
                let pod = (edge - hosts) / k;
                let agg_node = hosts + pod * k + half + agg;
                let core_node = (core != NO_CORE).then(|| hosts + k * k + agg * half + core as u32);
                [Some(agg_node), core_node]
            }
            _ => [None, None],
        }
    }

    /// Whether ECMP with `hash` takes a packet for `dst` from `edge` through `targets`.
    fn follows(fabric: &Fabric, edge: u32, dst: u32, hash: u32, targets: [Option<u32>; 2]) -> bool {
        let mut at = edge;
        for t in targets.into_iter().flatten() {
            let hops = fabric.routes().next_hops(at, dst);
            if hops.is_empty() {
                return false;
            }
            let port = ecmp::pick(hops, at, hash);
            let next = fabric.ports(at)[port as usize].peer;
            if next != t {
                return false;
            }
            at = next;
        }
        true
    }

    /// The hash that takes a packet from `src` to `dst` along `path`, if any does.
    pub fn hash(&mut self, fabric: &Fabric, src: u32, dst: u32, path: u16) -> Option<u32> {
        if path == ANY_PATH {
            return None;
        }
        let edge = fabric.ports(src)[0].peer;
        let targets = Self::targets(fabric, edge, path);
        if let Some(&h) = self.cache.get(&(edge, path)) {
            if Self::follows(fabric, edge, dst, h, targets) {
                return Some(h);
            }
        }
        // ECMP spreads hashes evenly over a switch's uplinks: a path of a k = 16 fat
        // tree (1 in 64) takes about 64 tries.
        for i in 0..100_000u64 {
            let h = mix64(self.seed ^ (edge as u64) << 40 ^ (path as u64) << 24 ^ i) as u32;
            if Self::follows(fabric, edge, dst, h, targets) {
                self.cache.insert((edge, path), h);
                return Some(h);
            }
        }
        self.unpinned += 1;
        None
    }
}
