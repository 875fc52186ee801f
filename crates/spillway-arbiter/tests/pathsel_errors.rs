//! Two-tier path selection colors with every path it has (not only the largest degree's
//! worth): a rack with more inter-rack packets than paths must still be an error, with
//! the degree that caused it, and unknown endpoints too (never a panic), in two tiers
//! and three.

use spillway_arbiter::pathsel::{Coloring, PathError, ThreeTier, TwoTier, VirtualCores};
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
