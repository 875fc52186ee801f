//! `topology.kind = "clos"`: Meta's data center fabric as Parsimon's `cluster_b` lays it
//! out (8 pods of 48 racks of 16 hosts, 4 planes, 48 or 24 spines a plane), checked
//! against counts worked out by hand from that description, not from the builder.

mod common;

use common::{refused, run, Run};
use spillway_core::config::Scenario;
use spillway_core::engine::run::Run as AnyRun;
use spillway_core::engine::Sim;
use spillway_core::fabric::topology::Topology;
use spillway_core::fabric::Fabric;

fn cluster_b(spines_per_plane: u32) -> String {
    format!(
        r#"
[topology]
kind = "clos"
pods = 8
racks_per_pod = 48
hosts_per_rack = 16
planes = 4
spines_per_plane = {spines_per_plane}
link_rate = "10Gbps"
fabric_rate = "40Gbps"
link_delay = "1us"
"#
    )
}

fn scenario(text: &str) -> Scenario {
    Scenario::parse(text, &[], None).unwrap()
}

#[test]
fn cluster_b_has_metas_switch_and_link_counts() {
    // (spines a plane, spines, links): hosts 6,144 + rack-fabric 384 x 4 + fabric-spine
    // 32 x spines a plane.
    for (spp, spines, links) in [(48, 192, 9_216), (24, 96, 8_448)] {
        let sc = scenario(&cluster_b(spp));
        let t = Topology::build(&sc.topology);
        assert_eq!(t.hosts, 6_144);
        assert_eq!(t.switches, 384 + 32 + spines, "{spp} spines a plane");
        assert_eq!(t.links.len(), links);
        let mut degree = vec![0u32; t.nodes() as usize];
        for l in &t.links {
            degree[l.a as usize] += 1;
            degree[l.b as usize] += 1;
        }
        let (h, racks, fabric) = (6_144, 384, 32);
        assert!(degree[..h].iter().all(|&d| d == 1), "a host has one link");
        // A rack switch: 16 hosts and one link a plane.
        assert!(degree[h..h + racks].iter().all(|&d| d == 16 + 4));
        // A fabric switch: its pod's 48 racks and its plane's spines.
        assert!(degree[h + racks..h + racks + fabric]
            .iter()
            .all(|&d| d == 48 + spp));
        // A spine: one fabric switch of its plane in each of the 8 pods.
        assert!(degree[h + racks + fabric..].iter().all(|&d| d == 8));
        // Host links at 10 Gbit/s, every other link at 40.
        for l in &t.links {
            let rate = if l.a < 6_144 {
                10_000_000_000
            } else {
                40_000_000_000
            };
            assert_eq!(l.rate, rate);
        }
    }
}

/// Equal-cost paths from host `src` to host `dst` by the route table: at each switch,
/// the sum over its next hops of the paths from there.
fn paths(f: &Fabric, src: u32, dst: u32) -> u64 {
    fn from(f: &Fabric, node: u32, dst: u32) -> u64 {
        if node == dst {
            return 1;
        }
        let ports = f.ports(node);
        f.routes()
            .next_hops(node, dst)
            .iter()
            .map(|&p| from(f, ports[p as usize].peer, dst))
            .sum()
    }
    from(f, f.ports(src)[0].peer, dst)
}

#[test]
fn every_host_pair_has_the_clos_count_of_equal_cost_paths() {
    // 1 in a rack, a plane's fabric switch each (4) within a pod, and a fabric switch and
    // a spine of its plane (4 x spines a plane) between pods; every path as short as
    // the others (2, 4 or 6 links).
    for spp in [48, 24] {
        let sc = scenario(&cluster_b(spp));
        let f = Sim::fabric(&sc).unwrap();
        let host = |pod: u32, rack: u32, i: u32| (pod * 48 + rack) * 16 + i;
        let pairs = [
            (host(0, 0, 0), host(0, 0, 15), 1),
            (host(0, 0, 3), host(0, 47, 3), 4),
            (host(2, 5, 1), host(2, 6, 9), 4),
            (host(0, 0, 0), host(7, 47, 15), 4 * spp as u64),
            (host(3, 10, 2), host(5, 20, 7), 4 * spp as u64),
            (host(7, 47, 15), host(0, 0, 0), 4 * spp as u64),
        ];
        for (src, dst, want) in pairs {
            assert_eq!(
                paths(&f, src, dst),
                want,
                "{src} -> {dst}, {spp} spines a plane"
            );
        }
        let hops = |src, dst| f.path(src, dst).len();
        assert_eq!(hops(host(0, 0, 0), host(0, 0, 1)), 2);
        assert_eq!(hops(host(0, 0, 0), host(0, 1, 0)), 4);
        assert_eq!(hops(host(0, 0, 0), host(1, 0, 0)), 6);
    }
}

#[test]
fn clos_nodes_are_named_by_pod_and_plane() {
    let sc = scenario(&cluster_b(24));
    let shape = &sc.topology.shape;
    assert_eq!(shape.node_name(6_144), "rack0");
    assert_eq!(shape.node_name(6_144 + 383), "rack383");
    assert_eq!(shape.node_name(6_144 + 384), "fabric0.0");
    assert_eq!(shape.node_name(6_144 + 384 + 4 * 7 + 3), "fabric7.3");
    assert_eq!(shape.node_name(6_144 + 384 + 32), "spine0.0");
    assert_eq!(shape.node_name(6_144 + 384 + 32 + 24 * 3 + 23), "spine3.23");
    assert_eq!(shape.node_count(), 6_144 + 384 + 32 + 96);
}

#[test]
fn a_lone_flow_across_pods_finishes_and_a_cut_run_agrees_on_every_thread_count() {
    let text = r#"
[topology]
kind = "clos"
pods = 3
racks_per_pod = 2
hosts_per_rack = 2
planes = 2
spines_per_plane = 2
[switch]
ecn = "threshold"
[transport]
kind = "dctcp"
[workload]
kind = "trace"
flows = [{ src = 0, dst = 11, size = "200KB" }, { src = 5, dst = 2, size = "1MB", start = "10us" }]
"#;
    let Run { flows, .. } = run(text, &[]);
    assert_eq!(flows.finish_ps.len(), 2);
    assert!(
        flows.finish_ps.iter().all(|&t| t != u64::MAX),
        "both finish"
    );
    // Cut into its 3 pods: every thread count gives the same records.
    let cut = |threads: u32| {
        let o = [
            "run.partitions=auto".to_string(),
            format!("run.threads={threads}"),
        ];
        let sc = Scenario::parse(text, &o, None).unwrap();
        let mut r = AnyRun::new(&sc).unwrap();
        assert_eq!(r.partitions().0, 3);
        r.run_to_end();
        let f = r.take_flows();
        (f.finish_ps.clone(), f.start_ps.clone(), f.flow_id.clone())
    };
    let one = cut(1);
    assert_eq!(one.0.len(), 2);
    assert!(one.0.iter().all(|&t| t != u64::MAX));
    for t in [2, 3] {
        assert_eq!(cut(t), one, "{t} threads");
    }
}

#[test]
fn bad_clos_shapes_are_refused_naming_the_key() {
    let e = Scenario::parse(
        "[topology]\nkind = \"clos\"\nracks_per_pod = 70000",
        &[],
        None,
    )
    .unwrap_err();
    assert_eq!(e.key, "topology.racks_per_pod", "{e}");
    let e = Scenario::parse("[topology]\nkind = \"clos\"\nplanes = 0", &[], None).unwrap_err();
    assert_eq!(e.key, "topology.planes", "{e}");
    let e = Scenario::parse("[topology]\nkind = \"fat_tree\"\nplanes = 2", &[], None).unwrap_err();
    assert_eq!(e.key, "topology.planes", "{e}");
}

/// `switch.ecn_threshold_by_rate`: each port marks at its rate's K (HPCC's KMAX_MAP).
/// Hosts at 40 Gbit/s behind 10 Gbit/s rack uplinks: two long flows between the racks
/// queue only at the uplink, so marks there follow the 10 Gbit/s entry alone.
#[test]
fn ecn_threshold_by_rate_marks_each_port_at_its_rates_k() {
    let text = r#"
[topology]
kind = "clos"
pods = 1
racks_per_pod = 2
hosts_per_rack = 2
planes = 1
spines_per_plane = 1
link_rate = "40Gbps"
fabric_rate = "10Gbps"
[switch]
ecn = "threshold"
[transport]
kind = "dctcp"
[workload]
kind = "trace"
flows = [{ src = 0, dst = 2, size = "2MB" }, { src = 1, dst = 3, size = "2MB" }]
"#;
    let marks = |over: &[&str]| {
        let Run { ports, flows, .. } = run(text, over);
        assert!(flows.finish_ps.iter().all(|&t| t != u64::MAX), "{over:?}");
        let at = |bps: u64| -> u64 {
            (0..ports.rate_bps.len())
                .filter(|&i| ports.rate_bps[i] == bps)
                .map(|i| ports.ecn_marked[i])
                .sum()
        };
        (at(10_000_000_000), at(40_000_000_000))
    };
    // The 10 Gbit/s ports' K above their buffer: nothing marks anywhere.
    assert_eq!(
        marks(&["switch.ecn_threshold_by_rate={ \"10Gbps\" = \"10MB\" }"]),
        (0, 0)
    );
    // Only the 40 Gbit/s ports exempt: the uplink marks at the default K.
    let (slow, fast) = marks(&["switch.ecn_threshold_by_rate={ \"40Gbps\" = \"10MB\" }"]);
    assert!(slow > 0 && fast == 0, "{slow} {fast}");
    // The one K off everywhere but the listed rate.
    let (slow, fast) = marks(&[
        "switch.ecn_threshold=10MB",
        "switch.ecn_threshold_by_rate={ \"10Gbps\" = \"30KB\" }",
    ]);
    assert!(slow > 0 && fast == 0, "{slow} {fast}");
}

#[test]
fn ecn_threshold_by_rate_is_refused_naming_the_entry() {
    let base = "[switch]\necn = \"threshold\"\n";
    for (table, key) in [
        ("{ fast = \"30KB\" }", "switch.ecn_threshold_by_rate.fast"),
        (
            "{ \"10Gbps\" = \"lots\" }",
            "switch.ecn_threshold_by_rate.10Gbps",
        ),
    ] {
        let (k, m) = refused(&format!("{base}ecn_threshold_by_rate = {table}"), &[]);
        assert_eq!(k, key, "{m}");
    }
    // One rate spelled twice.
    let (k, m) = refused(
        &format!("{base}ecn_threshold_by_rate = {{ \"10Gbps\" = \"30KB\", \"10000000000bps\" = \"40KB\" }}"),
        &[],
    );
    assert!(
        k.starts_with("switch.ecn_threshold_by_rate.") && m.contains("twice"),
        "{k}: {m}"
    );
    // Without threshold marking there is no K to give by rate.
    let (k, m) = refused(
        "[switch]\necn_threshold_by_rate = { \"10Gbps\" = \"30KB\" }",
        &[],
    );
    assert_eq!(k, "switch.ecn_threshold_by_rate", "{m}");
}
