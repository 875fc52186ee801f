//! Path selection past 64 racks (Fastpass §4): a k = 16 fat tree (128 racks of 8
//! endpoints in 16 pods, 8 aggregation planes, 8 cores per plane, 1024 endpoints) and
//! two-tier fabrics of 128 and 200 racks. For random matchings, every inter-rack packet
//! gets a path, no link carries two packets in one timeslot (rack-agg, agg-rack,
//! agg-core, core-agg; rack-core and core-rack in two tiers, up to a core's rate), intra-
//! rack packets get none and intra-pod packets an aggregation switch but no core. Both
//! colorers, on graphs across and past the one-word boundary, stay proper and optimal.

use proptest::prelude::*;
use spillway_arbiter::pathsel::{
    AlternatingPaths, Coloring, EdgeColoring, Path3, ThreeTier, TwoTier, VirtualCores,
};
use spillway_arbiter::Flow;
use std::collections::HashMap;

/// The k-ary fat tree's shape for k = 16.
const K: usize = 16;
const HOSTS_PER_RACK: usize = K / 2;
const RACKS_PER_POD: usize = K / 2;
const PODS: usize = K;
const RACKS: usize = PODS * RACKS_PER_POD;
const ENDPOINTS: usize = RACKS * HOSTS_PER_RACK;

/// xorshift64: the tests' own shuffles, seeded by proptest.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (((self.0 >> 32) * n as u64) >> 32) as usize
    }
}

/// A random matching of `n` endpoints with locality: a permutation shuffled within blocks
/// of `block` endpoints (a pod, say), then a `global` fraction (per mille) of the
/// endpoints' destinations shuffled among themselves across the whole fabric; each pair is
/// kept with probability `keep` per mille, and endpoints sending to themselves are dropped.
fn matching(n: usize, block: usize, global: u32, keep: u32, seed: u64) -> Vec<Flow> {
    let mut rng = Rng(seed | 1);
    let mut dst: Vec<u32> = (0..n as u32).collect();
    for b in (0..n).step_by(block) {
        let end = (b + block).min(n);
        for i in (b + 1..end).rev() {
            dst.swap(i, b + rng.below(i - b + 1));
        }
    }
    let picked: Vec<usize> = (0..n)
        .filter(|_| rng.below(1000) < global as usize)
        .collect();
    for i in (1..picked.len()).rev() {
        dst.swap(picked[i], picked[rng.below(i + 1)]);
    }
    (0..n)
        .filter(|&s| dst[s] as usize != s && rng.below(1000) < keep as usize)
        .map(|s| Flow {
            src: s as u32,
            dst: dst[s],
        })
        .collect()
}

fn matchings(n: usize, block: usize) -> impl Strategy<Value = Vec<Flow>> {
    (0u32..=1000, 1u32..=1000, any::<u64>())
        .prop_map(move |(global, keep, seed)| matching(n, block, global, keep, seed))
}

/// Each link used at most `cap(link)` times.
fn check_links<K: std::hash::Hash + Eq + std::fmt::Debug>(
    uses: impl IntoIterator<Item = K>,
    cap: impl Fn(&K) -> u32,
) -> Result<(), TestCaseError> {
    let mut m: HashMap<K, u32> = HashMap::new();
    for u in uses {
        *m.entry(u).or_default() += 1;
    }
    for (k, v) in m {
        prop_assert!(
            v <= cap(&k),
            "link {:?} carries {} packets, capacity {}",
            k,
            v,
            cap(&k)
        );
    }
    Ok(())
}

/// Links of the fat tree, by direction: `(tier, from, to)` with switches named by index
/// (aggregation switch = pod * planes + plane, core = plane * cores + index).
fn check_fat_tree(
    flows: &[Flow],
    out: &[Option<Path3>],
    hosts: usize,
    rpp: usize,
    planes: u32,
    cores: u32,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(out.len(), flows.len());
    let rack = |e: u32| e as usize / hosts;
    let pod = |e: u32| rack(e) / rpp;
    let p = planes as usize;
    let mut links = Vec::new();
    for (f, path) in flows.iter().zip(out) {
        let (rs, rd) = (rack(f.src), rack(f.dst));
        let Some(path) = path else {
            prop_assert_eq!(rs, rd, "inter-rack packet {:?} without a path", f);
            continue;
        };
        prop_assert!(rs != rd, "intra-rack packet {:?} given a path", f);
        prop_assert!(path.agg < planes);
        let a = path.agg as usize;
        links.push(("tor-agg", rs, pod(f.src) * p + a));
        links.push(("agg-tor", pod(f.dst) * p + a, rd));
        match path.core {
            None => prop_assert_eq!(pod(f.src), pod(f.dst), "inter-pod {:?} without core", f),
            Some(c) => {
                prop_assert!(pod(f.src) != pod(f.dst), "intra-pod {:?} given a core", f);
                prop_assert!(c < cores);
                let core = a * cores as usize + c as usize;
                links.push(("agg-core", pod(f.src) * p + a, core));
                links.push(("core-agg", core, pod(f.dst) * p + a));
            }
        }
    }
    check_links(links, |_| 1)
}

/// Two tiers: every inter-rack packet has a core, intra-rack ones none, and no rack-core
/// or core-rack link carries more than its core's rate multiple.
fn check_two_tier(
    flows: &[Flow],
    out: &[Option<u32>],
    hosts: usize,
    mults: &[u32],
) -> Result<(), TestCaseError> {
    prop_assert_eq!(out.len(), flows.len());
    let rack = |e: u32| e as usize / hosts;
    let mut up = Vec::new();
    let mut down = Vec::new();
    for (f, p) in flows.iter().zip(out) {
        prop_assert_eq!(
            p.is_some(),
            rack(f.src) != rack(f.dst),
            "{:?} -> {:?}",
            f,
            p
        );
        if let Some(c) = *p {
            prop_assert!((c as usize) < mults.len());
            up.push((rack(f.src), c));
            down.push((c, rack(f.dst)));
        }
    }
    check_links(up, |&(_, c)| mults[c as usize])?;
    check_links(down, |&(c, _)| mults[c as usize])
}

fn k16() -> Vec<u32> {
    (0..ENDPOINTS as u32)
        .map(|e| e / HOSTS_PER_RACK as u32)
        .collect()
}

/// Random bipartite multigraph with `n` vertices a side in `sizes` and degree at most `k`.
fn multigraph(
    sizes: std::ops::Range<usize>,
    degrees: std::ops::Range<u32>,
) -> impl Strategy<Value = (usize, u32, Vec<(u32, u32)>)> {
    (sizes, degrees).prop_flat_map(|(n, k)| {
        let e = proptest::collection::vec((0..n as u32, 0..n as u32), 0..(n * k as usize + 1));
        (Just(n), Just(k), e).prop_map(|(n, k, raw)| {
            let (mut dl, mut dr) = (vec![0; n], vec![0; n]);
            let edges = raw
                .into_iter()
                .filter(|&(l, r)| {
                    let ok = dl[l as usize] < k && dr[r as usize] < k;
                    if ok {
                        dl[l as usize] += 1;
                        dr[r as usize] += 1;
                    }
                    ok
                })
                .collect();
            (n, k, edges)
        })
    })
}

/// Proper, exactly the largest degree's colors (at most `k`).
fn check_optimal_coloring(
    n: usize,
    k: u32,
    edges: &[(u32, u32)],
    out: &[u32],
    used: u32,
) -> Result<(), TestCaseError> {
    let (mut dl, mut dr) = (vec![0u32; n], vec![0u32; n]);
    for &(l, r) in edges {
        dl[l as usize] += 1;
        dr[r as usize] += 1;
    }
    let d = dl.into_iter().chain(dr).max().unwrap_or(0);
    prop_assert_eq!(used, d);
    prop_assert!(used <= k);
    prop_assert_eq!(out.len(), edges.len());
    let mut seen = std::collections::HashSet::new();
    for (&(l, r), &col) in edges.iter().zip(out) {
        prop_assert!(col < used);
        prop_assert!(seen.insert((0, l, col)), "left {} twice color {}", l, col);
        prop_assert!(seen.insert((1, r, col)), "right {} twice color {}", r, col);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// k = 16 fat tree, both colorers, random matchings from pod-local to global.
    #[test]
    fn fat_tree_k16_paths_are_proper(
        euler in any::<bool>(),
        flows in matchings(ENDPOINTS, RACKS_PER_POD * HOSTS_PER_RACK),
    ) {
        let mut sel = ThreeTier::new(
            k16(),
            RACKS_PER_POD as u32,
            VirtualCores::uniform((K / 2) as u32),
            VirtualCores::uniform((K / 2) as u32),
        ).unwrap();
        if euler {
            sel.set_coloring(Coloring::EulerSplit);
        }
        let mut out = Vec::new();
        sel.select(&flows, &mut out).unwrap();
        check_fat_tree(&flows, &out, HOSTS_PER_RACK, RACKS_PER_POD, 8, 8)?;
        // The same selector again (tables reused, not cleared), on another matching.
        let again = matching(ENDPOINTS, 8, 500, 1000, flows.len() as u64 + 7);
        sel.select(&again, &mut out).unwrap();
        check_fat_tree(&again, &out, HOSTS_PER_RACK, RACKS_PER_POD, 8, 8)?;
    }

    /// Heterogeneous aggregation and core rates on a fat tree of 160 racks (20 pods of
    /// 8): physical switches of several virtual planes or cores, whose links then carry
    /// up to their multiple. Virtual planes sum to the hosts per rack, virtual cores per
    /// plane to the racks per pod.
    #[test]
    fn fat_tree_virtual_switches_respect_rates(
        flows in matchings(160 * 4, 8 * 4),
    ) {
        let (hosts, rpp) = (4usize, 8usize);
        let rack_of: Vec<u32> = (0..160 * hosts as u32).map(|e| e / hosts as u32).collect();
        let (agg_m, core_m) = ([2u32, 1, 1], [4u32, 2, 1, 1]);
        let mut sel = ThreeTier::new(
            rack_of,
            rpp as u32,
            VirtualCores::new(&agg_m),
            VirtualCores::new(&core_m),
        ).unwrap();
        let mut out = Vec::new();
        sel.select(&flows, &mut out).unwrap();
        let rack = |e: u32| e as usize / hosts;
        let pod = |e: u32| rack(e) / rpp;
        let mut links = Vec::new();
        for (f, p) in flows.iter().zip(&out) {
            prop_assert_eq!(p.is_some(), rack(f.src) != rack(f.dst));
            let Some(p) = p else { continue };
            let a = p.agg as usize;
            links.push(("tor-agg", rack(f.src), a, 0));
            links.push(("agg-tor", rack(f.dst), a, 0));
            prop_assert_eq!(p.core.is_some(), pod(f.src) != pod(f.dst));
            if let Some(c) = p.core {
                links.push(("agg-core", pod(f.src), a, c as usize));
                links.push(("core-agg", pod(f.dst), a, c as usize));
            }
        }
        // A rack-agg link runs at the agg's multiple; an agg-core link, in the virtual
        // network, at the core's multiple within each of the agg's virtual planes.
        check_links(links, |&(tier, _, a, c)| match tier {
            "tor-agg" | "agg-tor" => agg_m[a],
            _ => core_m[c] * agg_m[a],
        })?;
    }

    /// Two tiers, 128 racks of 8 under 8 cores, and 200 racks of 4 under cores of rates
    /// 2, 1, 1 (virtual switches): both colorers.
    #[test]
    fn two_tier_past_64_racks_paths_are_proper(
        euler in any::<bool>(),
        flows in matchings(1024, 64),
        flows200 in matchings(800, 32),
    ) {
        for (racks, hosts, mults, flows) in [
            (128usize, 8usize, vec![1u32; 8], &flows),
            (200, 4, vec![2, 1, 1], &flows200),
        ] {
            let rack_of: Vec<u32> = (0..(racks * hosts) as u32).map(|e| e / hosts as u32).collect();
            let mut sel = TwoTier::new(rack_of, VirtualCores::new(&mults)).unwrap();
            if euler {
                sel.set_coloring(Coloring::EulerSplit);
            }
            let mut out = Vec::new();
            sel.select(flows, &mut out).unwrap();
            check_two_tier(flows, &out, hosts, &mults)?;
        }
    }

    /// Both colorers on graphs from just under one word to several: proper, and exactly
    /// the largest degree's colors.
    #[test]
    fn wide_colorings_are_proper_and_optimal(
        (n, k, edges) in multigraph(60..300, 1..40),
    ) {
        let mut out = Vec::new();
        let used = EdgeColoring::new().color(n, &edges, k, &mut out).unwrap();
        check_optimal_coloring(n, k, &edges, &out, used)?;
        let mut alt = AlternatingPaths::new();
        let used = alt.color(n, &edges, k, &mut out).unwrap();
        check_optimal_coloring(n, k, &edges, &out, used)?;
        // Reused on a smaller graph after a larger one (tables sized for the larger).
        let small: Vec<(u32, u32)> = edges.iter().copied().filter(|&(l, r)| l < 50 && r < 50).collect();
        let used = alt.color(50, &small, k, &mut out).unwrap();
        check_optimal_coloring(50, k, &small, &out, used)?;
    }
}

/// A fat tree's full 1024-endpoint permutations, many of them on one selector: the
/// alternating paths are exercised at full rack degree (8 of 8 planes) on the 128-rack
/// ToR graph; every inter-rack packet gets a path.
#[test]
fn fat_tree_k16_full_permutations() {
    let mut sel = ThreeTier::new(
        k16(),
        RACKS_PER_POD as u32,
        VirtualCores::uniform(8),
        VirtualCores::uniform(8),
    )
    .unwrap();
    let mut out = Vec::new();
    let (mut intra_rack, mut intra_pod, mut inter_pod) = (0, 0, 0);
    for seed in 0..200u64 {
        let flows = matching(ENDPOINTS, ENDPOINTS, 0, 1000, seed * 0x9E37_79B9 + 1);
        assert!(flows.len() > 1000);
        sel.select(&flows, &mut out).unwrap();
        check_fat_tree(&flows, &out, HOSTS_PER_RACK, RACKS_PER_POD, 8, 8).unwrap();
        for p in &out {
            match p {
                None => intra_rack += 1,
                Some(Path3 { core: None, .. }) => intra_pod += 1,
                Some(_) => inter_pod += 1,
            }
        }
    }
    // A global permutation: 7/1023 of packets stay in their rack, 56/1023 in their pod.
    assert!(intra_rack > 0 && intra_pod > 0 && inter_pod > 150_000);
}

/// Past 65,535 packets in one call the inline tables' u16 entries cannot name a packet:
/// the wide tables take over (it was Euler splits), even with few racks.
#[test]
fn more_packets_than_u16_entries() {
    // 4 racks of 20,000 endpoints, 2 cores; mostly intra-rack packets.
    let rack_of: Vec<u32> = (0..80_000u32).map(|e| e / 20_000).collect();
    let mut flows: Vec<Flow> = (0..70_000u32)
        .map(|e| Flow { src: e, dst: e ^ 1 })
        .collect();
    flows.push(Flow {
        src: 70_000,
        dst: 1,
    });
    flows.push(Flow {
        src: 70_001,
        dst: 2,
    });
    flows.push(Flow {
        src: 3,
        dst: 70_002,
    });
    let mut sel = TwoTier::new(rack_of, VirtualCores::uniform(2)).unwrap();
    let mut out = Vec::new();
    sel.select(&flows, &mut out).unwrap();
    assert!(out[..70_000].iter().all(Option::is_none));
    let tail = &out[70_000..];
    assert!(tail.iter().all(Option::is_some));
    // Rack 3 sends two packets to rack 0: on different cores.
    assert_ne!(tail[0], tail[1]);
}
