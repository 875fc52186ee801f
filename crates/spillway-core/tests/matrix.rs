//! `workload.matrix` and `workload.max_link_load`: flows between racks by weight, and
//! the rate that loads the busiest link so much, checked against shares worked out by
//! hand and against a run's measured utilization.

use spillway_core::config::Scenario;
use spillway_core::engine::Sim;
use spillway_core::rng::Rng;
use spillway_core::workload::matrix::RackMatrix;
use std::path::PathBuf;

/// 2 pods of 2 racks of 4 hosts, 2 planes of 2 spines; hosts at 10 Gbit/s, the fabric at
/// 40. Racks 0-1 are pod 0, 2-3 pod 1.
const CLOS: &str = r#"
[topology]
kind = "clos"
pods = 2
racks_per_pod = 2
hosts_per_rack = 4
planes = 2
spines_per_plane = 2
link_rate = "10Gbps"
fabric_rate = "40Gbps"
"#;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("spillway-matrix-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn racks() -> Vec<Vec<u32>> {
    (0..4).map(|r| (r * 4..r * 4 + 4).collect()).collect()
}

#[test]
fn one_pair_of_racks_spreads_over_the_planes_and_spines_as_ecmp_does() {
    let m = RackMatrix::parse("0 0 0 1\n0 0 0 0\n0 0 0 0\n0 0 0 0\n", racks()).unwrap();
    let sc = Scenario::parse(CLOS, &[], None).unwrap();
    let f = Sim::fabric(&sc).unwrap();
    let share = m.port_shares(&f);
    let port = |node: u32, peer: u32| {
        f.first_port(node) + f.ports(node).iter().position(|e| e.peer == peer).unwrap()
    };
    // Nodes: hosts 0-15, racks 16-19, fabric switches 20-23 (pod-major, a plane each),
    // spines 24-27 (plane-major).
    for h in 0..4 {
        assert!((share[port(h, 16)] - 0.25).abs() < 1e-12, "host {h} up");
        assert!(
            (share[port(19, 12 + h)] - 0.25).abs() < 1e-12,
            "down to host {}",
            12 + h
        );
    }
    for plane in 0..2 {
        assert!(
            (share[port(16, 20 + plane)] - 0.5).abs() < 1e-12,
            "rack 0 up, plane {plane}"
        );
        assert!(
            (share[port(22 + plane, 19)] - 0.5).abs() < 1e-12,
            "down to rack 3"
        );
        for s in 0..2 {
            let spine = 24 + plane * 2 + s;
            assert!((share[port(20 + plane, spine)] - 0.25).abs() < 1e-12);
            assert!((share[port(spine, 22 + plane)] - 0.25).abs() < 1e-12);
        }
    }
    let total: f64 = share.iter().sum();
    // Every flow crosses 6 links: host, rack, fabric, spine, fabric, rack.
    assert!((total - 6.0).abs() < 1e-9, "{total}");
    // The host links are the busiest (a quarter at 10 Gbit/s against a half at 40):
    // 0.5 of 10 Gbit/s over a quarter of flows of 10 KB is 250,000 flows/s.
    let rate = m.rate_for_max_load(&f, 0.5, 10_000.0);
    assert!((rate - 250_000.0).abs() < 1e-6, "{rate}");
}

#[test]
fn flows_pick_racks_by_weight_and_hosts_uniformly() {
    let m = RackMatrix::parse("0 1 0 2\n0 0 0 0\n3 0 0 0\n0 0 0 4\n", racks()).unwrap();
    let mut rng = Rng::new(3, 1);
    let n = 200_000;
    let mut pairs = std::collections::HashMap::new();
    let mut hosts = [0u32; 16];
    for _ in 0..n {
        let (s, d) = m.sample(&mut rng);
        assert_ne!(s, d);
        *pairs.entry((s / 4, d / 4)).or_insert(0u32) += 1;
        hosts[s as usize] += 1;
    }
    for ((a, b), w) in [((0, 1), 1.0), ((0, 3), 2.0), ((2, 0), 3.0), ((3, 3), 4.0)] {
        let p = w / 10.0;
        let got = pairs[&(a, b)] as f64 / n as f64;
        let se = (p * (1.0 - p) / n as f64).sqrt();
        assert!((got - p).abs() < 5.0 * se, "racks {a}->{b}: {got} vs {p}");
    }
    assert_eq!(pairs.len(), 4);
    // Rack 0's hosts alike (0.3 of flows, a quarter each).
    for (h, &count) in hosts.iter().enumerate().take(4) {
        let got = count as f64 / n as f64;
        assert!(
            (got - 0.075).abs() < 5.0 * (0.075f64 * 0.925 / n as f64).sqrt(),
            "host {h}: {got}"
        );
    }
}

#[test]
fn the_busiest_link_runs_at_max_link_load() {
    let d = dir("load");
    // Rack 0 to rack 3 and rack 1 to rack 2 (between pods), 3:1, and some within rack 2:
    // rack 0's host uplinks are the busiest (3/4 of flows over 4 hosts).
    std::fs::write(
        d.join("m.txt"),
        "# src rack by row\n0 0 0 3\n0 0 1 0\n0 0 0.2 0\n0 0 0 0\n",
    )
    .unwrap();
    // Every flow 10 KB of payload, so the count of flows sets the load.
    std::fs::write(d.join("size.txt"), "10000 0\n10000 100\n").unwrap();
    let text = format!(
        "{CLOS}[switch]\nbuffer = \"1MB\"\n[workload]\nkind = \"poisson\"\nmatrix = \"m.txt\"\nmax_link_load = 0.5\ncdf = \"size.txt\"\nload_on = \"wire\"\n[run]\nduration = \"60ms\"\n"
    );
    let sc = Scenario::parse(&text, &[], Some(&d)).unwrap();
    let mut sim = Sim::new(&sc).unwrap();
    sim.run_to_end();
    let ports = sim.port_records();
    let util = |node: u32| {
        let i = (0..ports.node.len())
            .find(|&i| ports.node[i] == node && !ports.is_switch[i])
            .unwrap();
        ports.sent_bytes[i] as f64 * 8.0 / (10e9 * 0.060)
    };
    let busiest: Vec<f64> = (0..4).map(util).collect();
    eprintln!("rack 0 uplinks {busiest:?}");
    let mean = busiest.iter().sum::<f64>() / 4.0;
    assert!(
        (mean / 0.5 - 1.0).abs() < 0.05,
        "rack 0's uplinks: {busiest:?}"
    );
    for u in &busiest {
        assert!((u / 0.5 - 1.0).abs() < 0.1, "{busiest:?}");
    }
    // Rack 1's (a quarter as busy) a third of it.
    let next: f64 = (4..8).map(util).sum::<f64>() / 4.0;
    assert!(
        (next / (0.5 / 3.0) - 1.0).abs() < 0.1,
        "rack 1's uplinks: {next}"
    );
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn bad_matrices_are_refused_with_their_line() {
    let cases = [
        ("0 1 0\n0 0 0 0\n0 0 0 0\n0 0 0 0\n", "line 1: 3 weights"),
        ("0 1 0 0\n0 0 0 0\n0 0 0 0\n", "3 rows"),
        ("0 1 0 0\n0 -1 0 0\n0 0 0 0\n0 0 0 0\n", "line 2: '-1'"),
        ("0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0\n", "every weight is 0"),
    ];
    for (text, want) in cases {
        let e = RackMatrix::parse(text, racks()).unwrap_err();
        assert!(e.contains(want), "{text:?}: {e}");
    }
    let one = vec![vec![0], vec![1]];
    assert!(RackMatrix::parse("1 0\n0 0\n", one)
        .unwrap_err()
        .contains("one host"));
    let e = Scenario::parse(
        &format!("{CLOS}[workload]\nkind = \"poisson\"\nmax_link_load = 0.5\n"),
        &[],
        None,
    )
    .unwrap_err();
    assert_eq!(e.key, "workload.max_link_load");
}
