//! Two-tier path selection colors with every path it has (not only the largest degree's
//! worth): a rack with more inter-rack packets than paths must still be an error, with
//! the degree that caused it, and unknown endpoints too (never a panic), in two tiers
//! and three.

use spillway_arbiter::pathsel::{
    AlternatingPaths, Coloring, EdgeColoring, PathError, ThreeTier, TwoTier, VirtualCores,
    EULER_MAX_COLORS, MAX_VERTICES,
};
use spillway_arbiter::Flow;

#[test]
fn more_packets_than_paths_is_an_error() {
    // 3 racks of 4; 2 paths. Rack 0 sends 3 packets to rack 1: degree 3 > 2 colors.
    let rack_of: Vec<u32> = (0..12).map(|e| e / 4).collect();
    for algo in [Coloring::AlternatingPaths, Coloring::EulerSplit] {
        let mut sel = TwoTier::new(rack_of.clone(), VirtualCores::uniform(2)).unwrap();
        sel.set_coloring(algo);
        let flows: Vec<Flow> = (0..3).map(|i| Flow { src: i, dst: 4 + i }).collect();
        let mut out = Vec::new();
        assert_eq!(
            sel.select(&flows, &mut out),
            Err(PathError::DegreeExceedsColors {
                degree: 3,
                colors: 2
            }),
            "{algo:?}"
        );
        // Two of them fit, on different paths.
        sel.select(&flows[..2], &mut out).unwrap();
        assert!(out[0].is_some() && out[1].is_some() && out[0] != out[1]);
        // An endpoint outside the fabric.
        let bad = [Flow { src: 0, dst: 99 }];
        assert_eq!(
            sel.select(&bad, &mut out),
            Err(PathError::UnknownEndpoint {
                endpoint: 99,
                endpoints: 12
            }),
            "{algo:?}"
        );
    }
}

/// Three tiers refuse an endpoint outside the fabric as two tiers do (it used to index
/// the rack table out of bounds), and stay usable afterwards.
#[test]
fn three_tier_unknown_endpoint_is_an_error() {
    // 2 pods of 2 racks of 2 endpoints.
    let rack_of: Vec<u32> = (0..8).map(|e| e / 2).collect();
    let mut sel = ThreeTier::new(
        rack_of,
        2,
        VirtualCores::uniform(2),
        VirtualCores::uniform(2),
    )
    .unwrap();
    let mut out = Vec::new();
    let ok = Flow { src: 0, dst: 4 };
    for (bad, endpoint) in [
        (Flow { src: 1, dst: 8 }, 8),
        (Flow { src: 99, dst: 2 }, 99),
        (
            Flow {
                src: u32::MAX,
                dst: 9,
            },
            u32::MAX,
        ),
    ] {
        assert_eq!(
            sel.select(&[ok, bad], &mut out),
            Err(PathError::UnknownEndpoint {
                endpoint,
                endpoints: 8
            })
        );
    }
    sel.select(&[ok], &mut out).unwrap();
    assert!(out[0].is_some_and(|p| p.core.is_some()));
    // An empty fabric: every endpoint is unknown.
    let mut empty = ThreeTier::new(
        Vec::new(),
        1,
        VirtualCores::uniform(1),
        VirtualCores::uniform(1),
    )
    .unwrap();
    assert_eq!(
        empty.select(&[Flow { src: 0, dst: 1 }], &mut out),
        Err(PathError::UnknownEndpoint {
            endpoint: 0,
            endpoints: 0
        })
    );
    empty.select(&[], &mut out).unwrap();
}

/// Degrees past what a colorer can count are errors, not overflows: the Euler splits
/// keep u16 multiplicities (70,000 parallel edges overflowed the count matrix), and the
/// alternating-path colorer named a vertex for a long edge list.
#[test]
fn degrees_past_a_colorers_limits_are_errors() {
    let edges = vec![(0u32, 1u32); 70_000];
    let mut out = Vec::new();
    assert_eq!(
        EdgeColoring::new().color(2, &edges, 100_000, &mut out),
        Err(PathError::DegreeExceedsColors {
            degree: 70_000,
            colors: EULER_MAX_COLORS
        })
    );
    // The largest degree it counts still colors.
    let edges = vec![(0u32, 1u32); EULER_MAX_COLORS as usize];
    let mut c = EdgeColoring::new();
    assert_eq!(c.color(2, &edges, u32::MAX, &mut out), Ok(EULER_MAX_COLORS));
    let mut seen = out.clone();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), edges.len(), "parallel edges share a color");
    let edges = vec![(0u32, 0u32); 65_535];
    assert_eq!(
        AlternatingPaths::new().color(1, &edges, 64, &mut out),
        Err(PathError::DegreeExceedsColors {
            degree: 65_535,
            colors: 64
        })
    );
    // Two tiers fall back to Euler splits past 64 paths (past 65,535 packets, to the
    // alternating-path colorer's wide tables: `pathsel_large`).
    let mut sel = TwoTier::new(vec![0, 1], VirtualCores::uniform(70_000)).unwrap();
    let flows = vec![Flow { src: 0, dst: 1 }; 70_000];
    assert_eq!(
        sel.select(&flows, &mut Vec::new()),
        Err(PathError::DegreeExceedsColors {
            degree: 70_000,
            colors: EULER_MAX_COLORS
        })
    );
}

/// Pods of no racks were taken as pods of one.
#[test]
fn three_tier_pods_of_no_racks_are_refused() {
    let r = ThreeTier::new(
        vec![0, 1],
        0,
        VirtualCores::uniform(1),
        VirtualCores::uniform(1),
    );
    assert_eq!(r.err(), Some(PathError::ZeroRacksPerPod));
}

/// A virtual core's physical core is looked up, not indexed: past the virtual cores it
/// is `None` (it panicked).
#[test]
fn physical_core_of_an_unknown_color_is_none() {
    let v = VirtualCores::new(&[2, 0, 1]);
    assert_eq!(v.colors(), 3);
    assert_eq!(
        (0..5).map(|c| v.physical(c)).collect::<Vec<_>>(),
        [Some(0), Some(0), Some(2), None, None]
    );
    assert_eq!(VirtualCores::uniform(0).physical(0), None);
}

/// Past one word of racks: more than `MAX_VERTICES` racks or vertices, vertices outside
/// the graph, a rack with more packets than paths and unknown endpoints are errors in
/// two tiers and three and in both colorers, on the wide tables as on the inline ones.
#[test]
fn wide_fabrics_refuse_bad_input() {
    let too_many: Vec<u32> = (0..=MAX_VERTICES as u32).collect();
    let bad = Err(PathError::BadVertex(MAX_VERTICES as u32 + 1));
    assert_eq!(
        TwoTier::new(too_many.clone(), VirtualCores::uniform(1)).err(),
        bad.err()
    );
    assert_eq!(
        ThreeTier::new(
            too_many,
            8,
            VirtualCores::uniform(1),
            VirtualCores::uniform(1)
        )
        .err(),
        bad.err()
    );
    assert!(TwoTier::new((0..MAX_VERTICES as u32).collect(), VirtualCores::uniform(1)).is_ok());
    let mut out = Vec::new();
    assert_eq!(
        AlternatingPaths::new().color(MAX_VERTICES + 1, &[], 1, &mut out),
        bad
    );
    assert_eq!(
        EdgeColoring::new().color(MAX_VERTICES + 1, &[], 1, &mut out),
        bad
    );
    for n in [100usize, 64, 65] {
        let outside = [(0u32, 1u32), (n as u32, 3)];
        let err = Err(PathError::BadVertex(n as u32));
        assert_eq!(AlternatingPaths::new().color(n, &outside, 8, &mut out), err);
        assert_eq!(EdgeColoring::new().color(n, &outside, 8, &mut out), err);
    }

    // 128 racks of 8 under 8 cores: rack 100 sends 9 packets.
    let rack_of: Vec<u32> = (0..1024).map(|e| e / 8).collect();
    let nine: Vec<Flow> = (0..9)
        .map(|i| Flow {
            src: 800 + i % 8,
            dst: 8 * i,
        })
        .collect();
    for algo in [Coloring::AlternatingPaths, Coloring::EulerSplit] {
        let mut sel = TwoTier::new(rack_of.clone(), VirtualCores::uniform(8)).unwrap();
        sel.set_coloring(algo);
        let mut paths = Vec::new();
        assert_eq!(
            sel.select(&nine, &mut paths),
            Err(PathError::DegreeExceedsColors {
                degree: 9,
                colors: 8
            }),
            "{algo:?}"
        );
        sel.select(&nine[..8], &mut paths).unwrap();
        assert_eq!(
            sel.select(&[Flow { src: 5, dst: 1024 }], &mut paths),
            Err(PathError::UnknownEndpoint {
                endpoint: 1024,
                endpoints: 1024
            }),
            "{algo:?}"
        );
    }

    // Three tiers, pods of 8 racks, 8 planes: the same nine packets overflow the ToR
    // graph; with 2 cores per plane, the eight racks of pod 0 each sending one packet to
    // pod 1 overflow plane 0's pod graph (each rack's only packet takes plane 0).
    let to_pod1: Vec<Flow> = (0..8)
        .map(|r| Flow {
            src: 8 * r,
            dst: 64 + 8 * r,
        })
        .collect();
    for algo in [Coloring::AlternatingPaths, Coloring::EulerSplit] {
        let mut sel = ThreeTier::new(
            rack_of.clone(),
            8,
            VirtualCores::uniform(8),
            VirtualCores::uniform(2),
        )
        .unwrap();
        sel.set_coloring(algo);
        let mut paths = Vec::new();
        assert_eq!(
            sel.select(&nine, &mut paths),
            Err(PathError::DegreeExceedsColors {
                degree: 9,
                colors: 8
            }),
            "{algo:?}"
        );
        assert_eq!(
            sel.select(&to_pod1, &mut paths),
            Err(PathError::DegreeExceedsColors {
                degree: 8,
                colors: 2
            }),
            "{algo:?}"
        );
        sel.select(&to_pod1[..2], &mut paths).unwrap();
        assert!(paths.iter().all(|p| p.is_some_and(|p| p.core.is_some())));
        assert_eq!(
            sel.select(&[Flow { src: 2000, dst: 1 }], &mut paths),
            Err(PathError::UnknownEndpoint {
                endpoint: 2000,
                endpoints: 1024
            }),
            "{algo:?}"
        );
    }
}
