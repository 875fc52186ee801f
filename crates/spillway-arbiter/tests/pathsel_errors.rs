//! Two-tier path selection colors with every path it has (not only the largest degree's
//! worth): a rack with more inter-rack packets than paths must still be an error, with
//! the degree that caused it, and unknown endpoints too (never a panic).

use spillway_arbiter::pathsel::{Coloring, PathError, TwoTier, VirtualCores};
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
            Err(PathError::BadVertex(99)),
            "{algo:?}"
        );
    }
}
