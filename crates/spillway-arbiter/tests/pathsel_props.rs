//! Property tests of path selection (Fastpass §4, issue 6): every coloring is proper and
//! uses at most the number of cores (exactly the largest degree), and the paths chosen
//! for a timeslot put at most one packet on every link, in two and three tiers, with
//! heterogeneous core rates through virtual switches.

use proptest::prelude::*;
use spillway_arbiter::pathsel::{
    AlternatingPaths, Coloring, EdgeColoring, PathError, ThreeTier, TwoTier, VirtualCores,
};
use spillway_arbiter::Flow;
use std::collections::HashMap;

/// Random bipartite multigraph with `n` vertices a side and degree at most `k`.
fn multigraph() -> impl Strategy<Value = (usize, u32, Vec<(u32, u32)>)> {
    (1usize..24, 1u32..40).prop_flat_map(|(n, k)| {
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

fn max_degree(n: usize, edges: &[(u32, u32)]) -> u32 {
    let (mut dl, mut dr) = (vec![0u32; n], vec![0u32; n]);
    for &(l, r) in edges {
        dl[l as usize] += 1;
        dr[r as usize] += 1;
    }
    dl.into_iter().chain(dr).max().unwrap_or(0)
}

/// What both colorers promise for a multigraph of degree at most `k` on `n` vertices a
/// side: `used` colors, exactly its largest degree, and `out` a proper coloring of
/// `edges` with them (one color per edge, no vertex with two edges of the same color).
fn check_optimal_coloring(
    n: usize,
    k: u32,
    edges: &[(u32, u32)],
    out: &[u32],
    used: u32,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(used, max_degree(n, edges));
    prop_assert!(used <= k);
    prop_assert_eq!(out.len(), edges.len());
    let mut seen = std::collections::HashSet::new();
    for (&(l, r), &col) in edges.iter().zip(out) {
        prop_assert!(col < used);
        prop_assert!(
            seen.insert((0, l, col)),
            "left {} has two edges of color {}",
            l,
            col
        );
        prop_assert!(
            seen.insert((1, r, col)),
            "right {} has two edges of color {}",
            r,
            col
        );
    }
    Ok(())
}

/// A random permutation of `n` endpoints (a full matching), as flows.
fn permutation(n: usize) -> impl Strategy<Value = Vec<Flow>> {
    Just((0..n as u32).collect::<Vec<_>>())
        .prop_shuffle()
        .prop_map(|p| {
            p.into_iter()
                .enumerate()
                .filter(|&(s, d)| s as u32 != d)
                .map(|(s, d)| Flow {
                    src: s as u32,
                    dst: d,
                })
                .collect()
        })
}

/// Each (a, b) link used at most `cap(a, b)` times.
fn check_links<K: std::hash::Hash + Eq + std::fmt::Debug>(
    uses: impl Iterator<Item = K>,
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

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn coloring_is_proper_and_optimal((n, k, edges) in multigraph()) {
        let mut c = EdgeColoring::new();
        let mut out = Vec::new();
        let used = c.color(n, &edges, k, &mut out).unwrap();
        check_optimal_coloring(n, k, &edges, &out, used)?;
        // The buffers are reused: a second call on the same colorer agrees on validity.
        let again = c.color(n, &edges, k, &mut out).unwrap();
        prop_assert_eq!(again, used);
    }

    /// The alternating-path colorer: proper, exactly the largest degree, up to 64 colors.
    #[test]
    fn alternating_paths_coloring_is_proper_and_optimal((n, k, edges) in multigraph()) {
        let mut c = AlternatingPaths::new();
        let mut out = Vec::new();
        let used = c.color(n, &edges, k, &mut out).unwrap();
        check_optimal_coloring(n, k, &edges, &out, used)?;
    }

    #[test]
    fn too_few_colors_is_an_error((n, k, edges) in multigraph()) {
        let d = max_degree(n, &edges);
        prop_assume!(d >= 2);
        let r = EdgeColoring::new().color(n, &edges, d - 1, &mut Vec::new());
        prop_assert_eq!(r, Err(PathError::DegreeExceedsColors { degree: d, colors: d - 1 }));
        let _ = k;
    }

    /// Two tiers, racks of `per` endpoints, cores with rate multiples summing to at
    /// least `per` (virtual switches): no rack-core link over its rate.
    #[test]
    fn two_tier_paths_never_overload_a_link(
        euler in any::<bool>(),
        (racks, per, mults, flows) in (1usize..17, 1usize..33).prop_flat_map(|(racks, per)| {
            // Top up the first core so that the cores carry a whole rack.
            let mults = proptest::collection::vec(1u32..5, 1..9).prop_map(move |mut m| {
                let sum: u32 = m.iter().sum();
                m[0] += (per as u32).saturating_sub(sum);
                m
            });
            (Just(racks), Just(per), mults, permutation(racks * per))
        })
    ) {
        let rack_of: Vec<u32> = (0..racks * per).map(|e| (e / per) as u32).collect();
        let cores = VirtualCores::new(&mults);
        let mut sel = TwoTier::new(rack_of.clone(), cores).unwrap();
        if euler {
            sel.set_coloring(Coloring::EulerSplit);
        }
        let mut out = Vec::new();
        sel.select(&flows, &mut out).unwrap();
        for (f, p) in flows.iter().zip(&out) {
            prop_assert_eq!(p.is_some(), rack_of[f.src as usize] != rack_of[f.dst as usize]);
        }
        let up = flows.iter().zip(&out).filter_map(|(f, p)| p.map(|c| (rack_of[f.src as usize], c)));
        check_links(up, |&(_, c)| mults[c as usize])?;
        let down = flows.iter().zip(&out).filter_map(|(f, p)| p.map(|c| (c, rack_of[f.dst as usize])));
        check_links(down, |&(c, _)| mults[c as usize])?;
    }

    /// Three tiers (pods of racks, aggregation planes, core groups): every ToR-agg,
    /// agg-ToR, agg-core and core-agg link carries at most one packet.
    #[test]
    fn three_tier_paths_never_overload_a_link(
        (pods, rpp, per, flows) in (1usize..5, 1usize..5, 1usize..5).prop_flat_map(|(p, r, h)| {
            (Just(p), Just(r), Just(h), permutation(p * r * h))
        })
    ) {
        let racks = pods * rpp;
        let rack_of: Vec<u32> = (0..racks * per).map(|e| (e / per) as u32).collect();
        // Non-blocking: as many agg planes as hosts per rack, as many cores per plane as
        // racks per pod.
        let mut sel = ThreeTier::new(
            rack_of.clone(),
            rpp as u32,
            VirtualCores::uniform(per as u32),
            VirtualCores::uniform(rpp as u32),
        ).unwrap();
        let mut out = Vec::new();
        sel.select(&flows, &mut out).unwrap();
        let pod = |e: u32| rack_of[e as usize] as usize / rpp;
        let mut links = Vec::new();
        for (f, p) in flows.iter().zip(&out) {
            let (rs, rd) = (rack_of[f.src as usize], rack_of[f.dst as usize]);
            let Some(p) = p else {
                prop_assert_eq!(rs, rd);
                continue;
            };
            prop_assert!(rs != rd);
            links.push(("tor-agg", rs as usize, p.agg as usize));
            links.push(("agg-tor", p.agg as usize, rd as usize));
            prop_assert_eq!(p.core.is_some(), pod(f.src) != pod(f.dst));
            if let Some(c) = p.core {
                // Agg switch = (pod, plane); core = (plane, index).
                links.push(("agg-core", pod(f.src) * 64 + p.agg as usize, p.agg as usize * 64 + c as usize));
                links.push(("core-agg", p.agg as usize * 64 + c as usize, pod(f.dst) * 64 + p.agg as usize));
            }
        }
        check_links(links.into_iter(), |_| 1)?;
    }
}

/// The paper's Experiment G shape: 16 racks x 32 endpoints, 4 cores at 8x the endpoint
/// rate, a full 512-endpoint permutation.
#[test]
fn full_permutation_of_512_endpoints() {
    let rack_of: Vec<u32> = (0..512).map(|e| e / 32).collect();
    let mut sel = TwoTier::new(rack_of.clone(), VirtualCores::new(&[8; 4])).unwrap();
    // A deterministic derangement that crosses racks: e -> e * 97 + 31 mod 512.
    let flows: Vec<Flow> = (0..512u32)
        .map(|e| Flow {
            src: e,
            dst: (e * 97 + 31) % 512,
        })
        .filter(|f| f.src != f.dst)
        .collect();
    let mut out = Vec::new();
    sel.select(&flows, &mut out).unwrap();
    let mut up = HashMap::new();
    for (f, p) in flows.iter().zip(&out) {
        if let Some(c) = p {
            *up.entry((rack_of[f.src as usize], *c)).or_insert(0) += 1;
        }
    }
    assert!(up.values().all(|&v| v <= 8));
    assert!(out.iter().filter(|p| p.is_some()).count() > 400);
}

/// Many full 512-endpoint permutations (Experiment G's shape): rack degrees of ~31 of
/// 32 colors make every call swap colors along several alternating paths, so the
/// one-pass path flip is exercised hundreds of times; no link may carry more than its
/// core's eight virtual paths, and every inter-rack packet gets a core.
#[test]
fn many_full_permutations_never_overload_a_link() {
    let rack_of: Vec<u32> = (0..512).map(|e| e / 32).collect();
    let mut sel = TwoTier::new(rack_of.clone(), VirtualCores::new(&[8; 4])).unwrap();
    let mut perm: Vec<u32> = (0..512).collect();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut out = Vec::new();
    for _ in 0..300 {
        for i in (1..512).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            perm.swap(i, (x % (i as u64 + 1)) as usize);
        }
        let flows: Vec<Flow> = (0..512u32)
            .map(|s| Flow {
                src: s,
                dst: perm[s as usize],
            })
            .collect();
        sel.select(&flows, &mut out).unwrap();
        let (mut up, mut down) = (HashMap::new(), HashMap::new());
        for (f, p) in flows.iter().zip(&out) {
            let (rs, rd) = (rack_of[f.src as usize], rack_of[f.dst as usize]);
            assert_eq!(p.is_some(), rs != rd);
            if let Some(c) = *p {
                *up.entry((rs, c)).or_insert(0) += 1;
                *down.entry((c, rd)).or_insert(0) += 1;
            }
        }
        assert!(up.values().chain(down.values()).all(|&v| v <= 8));
    }
}
