//! Route overrides (`switch.routes`), host receive jitter and background traffic:
//! what each promises, checked against counts the simulator did not choose.

mod common;

use common::{run, scenario, Run};
use spillway_core::engine::Sim;
use spillway_core::output::ports::PortRecords;
use spillway_core::workload::{CLASS_BACKGROUND, CLASS_LABELS};

/// Two racks of two hosts under two spines; host 2 (rack 1) sends 1 MB to host 0.
const TWO_PATHS: &str = r#"
[topology]
kind = "leaf_spine"
racks = 2
hosts_per_rack = 2
spines = 2
link_rate = "1Gbps"
[workload]
kind = "trace"
flows = [{ src = 2, dst = 0, size = "1MB", start = "0us" }]
"#;

/// Data packets each spine forwarded toward leaf0 (node 4 = leaf0; spines are 6, 7).
fn spine_down(ports: &PortRecords) -> [u64; 2] {
    let mut out = [0; 2];
    for i in 0..ports.node.len() {
        if ports.peer[i] == 4 && (6..=7).contains(&ports.node[i]) {
            out[(ports.node[i] - 6) as usize] += ports.enqueued[i];
        }
    }
    out
}

#[test]
fn a_pinned_route_carries_every_packet() {
    let routes = r#"switch.routes=[{at = "leaf1", to = [0], via = ["spine1"]}]"#;
    let Run { flows, ports, .. } = run(TWO_PATHS, &[routes]);
    assert_eq!(flows.finish_ps.len(), 1);
    let [s0, s1] = spine_down(&ports);
    assert_eq!(s0, 0, "nothing may cross spine0");
    // 1 MB in 1460 B segments.
    assert_eq!(s1, 1_048_576u64.div_ceil(1460));
}

#[test]
fn weighted_routes_split_packets_by_weight() {
    let routes =
        r#"switch.routes=[{at = "leaf1", to = [0], via = ["spine0", "spine1"], weights = [1, 3]}]"#;
    let Run { flows, ports, .. } = run(TWO_PATHS, &[routes, "transport.dupack_threshold=off"]);
    assert!(
        flows.finish_ps[0] != u64::MAX,
        "the flow finishes despite reordering"
    );
    let [s0, s1] = spine_down(&ports);
    let n = (s0 + s1) as f64;
    let share = s0 as f64 / n;
    // Binomial(n, 1/4): five standard deviations.
    let sd = (0.25 * 0.75 / n).sqrt();
    assert!(
        (share - 0.25).abs() < 5.0 * sd,
        "spine0 carried {share:.3} of {n} packets (weight 1/4)"
    );
}

#[test]
fn bad_routes_are_refused_with_the_key_named() {
    let cases = [
        (
            r#"switch.routes=[{at = "leaf7", via = ["spine0"]}]"#,
            "not a node",
        ),
        (
            r#"switch.routes=[{at = "host1", via = ["leaf0"]}]"#,
            "must be a switch",
        ),
        (
            r#"switch.routes=[{at = "leaf1", via = ["spine0", "spine1"], weights = [1]}]"#,
            "one weight per",
        ),
        // Refused where the scenario is read, with the nodes named.
        (
            r#"switch.routes=[{at = "leaf1", via = ["leaf0"]}]"#,
            "leaf0 is not linked to leaf1",
        ),
        (
            r#"switch.routes=[{at = "leaf0", to = [2], via = ["host1"]}]"#,
            "hosts do not forward",
        ),
        (
            r#"switch.routes=[{at = "leaf1", via = ["spine0", "spine1"], weights = [1e308, 1e308]}]"#,
            "sum finite",
        ),
    ];
    for (o, msg) in cases {
        let e = scenario(TWO_PATHS, &[o]).unwrap_err().to_string();
        assert!(
            e.contains("switch.routes[0]") && e.contains(msg),
            "{o}: {e}"
        );
    }
    // A loop between leaf0 and spine0 toward host 2: found when the tables are built.
    let o = r#"switch.routes=[{at = "leaf0", to = [2], via = ["spine0"]}, {at = "spine0", to = [2], via = ["leaf0"]}]"#;
    let sc = scenario(TWO_PATHS, &[o]).unwrap();
    let e = Sim::new(&sc).err().expect("refused").to_string();
    assert!(
        e.contains("switch.routes") && e.contains("loop"),
        "{o}: {e}"
    );
}

#[test]
fn receive_jitter_delays_but_never_reorders() {
    let Run {
        sim: base,
        flows: f0,
        ..
    } = run(TWO_PATHS, &[]);
    let Run {
        sim: jit,
        flows: f1,
        ..
    } = run(TWO_PATHS, &["host.rx_jitter=10us"]);
    assert_eq!(base.counters().retransmits + jit.counters().retransmits, 0);
    // Segments keep their order inside the host: no duplicate ACKs, no retransmission,
    // and the flow ends later by less than the jitter per round trip it waited.
    let (a, b) = (f0.fct_ps[0], f1.fct_ps[0]);
    assert!(b > a, "jitter adds latency: {a} -> {b}");
    assert!(b - a < 200 * 10_000_000, "{a} -> {b}");
}

#[test]
fn background_traffic_runs_beside_queries_and_stops_with_them() {
    let text = r#"
[topology]
kind = "leaf_spine"
racks = 4
hosts_per_rack = 3
spines = 1
link_rate = "1Gbps"
link_delay = "20us"
[workload]
kind = "partition_aggregate"
fanout = 11
request_size = "2KB"
response_size = "2KB"
load = 0.01
queries = 200
background_load = 0.1
background_scale = 10
"#;
    let Run { flows, queries, .. } = run(text, &[]);
    assert_eq!(CLASS_LABELS[CLASS_BACKGROUND as usize], "background");
    let bg: Vec<usize> = (0..flows.len())
        .filter(|&i| flows.class[i] == CLASS_BACKGROUND)
        .collect();
    assert!(bg.len() > 10, "{} background flows", bg.len());
    // Every flow finishes: background stops once the last query is generated.
    assert!(flows.finish_ps.iter().all(|&f| f != u64::MAX));
    assert_eq!(queries.len(), 200);
    // Sizes above 1 MB were scaled by 10: the web-search CDF's largest flows are
    // 30 MB before scaling, and nothing between 1 MB and 10 MB survives scaling.
    for &i in &bg {
        let s = flows.size_bytes[i];
        assert!(s <= 1 << 20 || s > 10 << 20, "background flow of {s} B");
    }
}
