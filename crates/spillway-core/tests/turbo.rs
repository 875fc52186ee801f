//! Turbo in the network (Turbo §4, §5): a lone flow at line rate, flows of one host
//! served by remaining size, and the byte accounting of dead and duplicate packets.

mod common;

use common::{refused, run, scenario};
use spillway_core::switch::discipline::pfabric::ServeOrder;
use spillway_core::transport::TransportConfig;

/// pFabric's topology as Turbo runs it (§5.1, §5.2): 1460 + 40 B packets, no framing,
/// 6,200 B buffers, Turbo's 9.5 us timeout by default.
const TURBO: &str = r#"
[topology]
kind = "pfabric144"
framing_bytes = 0
[switch]
queue = "pfabric"
buffer = "6200B"
[transport]
kind = "turbo"
"#;

fn with_flows(flows: &str) -> String {
    format!("{TURBO}[workload]\nkind = \"trace\"\nflows = [{flows}]\n")
}

#[test]
fn a_lone_flow_finishes_within_two_percent_of_its_ideal() {
    for variant in ["t1", "t2", "t3", "t4"] {
        // Across the core (host 0 in rack 0 to host 40 in rack 2), 1 MB and 3 packets.
        for size in ["1MB", "4000B"] {
            let r = run(
                &with_flows(&format!("{{ src = 0, dst = 40, size = \"{size}\" }}")),
                &[&format!("transport.turbo_variant={variant}")],
            );
            let f = &r.flows;
            let ratio = f.fct_ps[0] as f64 / f.ideal_fct_ps[0] as f64;
            assert!(ratio <= 1.02, "{variant} {size}: FCT / ideal = {ratio}");
            assert_eq!(f.timeouts[0], 0, "{variant} {size}");
            assert_eq!(r.sim.counters().drops, 0);
        }
    }
}

#[test]
fn two_flows_of_one_host_the_shorter_first_at_line_rate() {
    let r = run(
        &with_flows(
            "{ src = 0, dst = 40, size = \"2MB\" }, { src = 0, dst = 80, size = \"200KB\" }",
        ),
        &[],
    );
    let f = &r.flows;
    // Records are written as flows finish: the short one (flow 1) first.
    assert_eq!(f.flow_id, [1, 0]);
    let short = f.fct_ps[0] as f64 / f.ideal_fct_ps[0] as f64;
    assert!(short <= 1.02, "short flow: FCT / ideal = {short}");
    // The long flow waited for the short one's packets at the shared NIC, and no more:
    // its FCT is its ideal plus the short one's serialization at 10 Gb/s.
    let short_wire_ps = 137 * 1500 * 800 + (200_000 - 136 * 1460 + 40) * 800;
    let long = f.fct_ps[1] as f64 / (f.ideal_fct_ps[1] + short_wire_ps) as f64;
    assert!(
        long <= 1.02,
        "long flow: FCT / (ideal + short's bytes) = {long}"
    );
}

const LOADED: &str = r#"
[workload]
kind = "poisson"
cdf = "websearch"
load = 0.8
max_flows = 1500
"#;

/// Dead bytes (what hosts sent their switch and never received back from the network)
/// equal the data bytes the switches dropped, counted as they were dropped; every byte
/// arrives once in order; duplicates are the sum of the flows'.
#[test]
fn bytes_are_conserved_and_dead_bytes_are_the_bytes_dropped_in_the_network() {
    for variant in ["t1", "t2", "t3", "t4"] {
        let text = format!("{TURBO}{LOADED}");
        let r = run(&text, &[&format!("transport.turbo_variant={variant}")]);
        let c = r.sim.counters();
        let f = &r.flows;
        assert_eq!(c.flows_unfinished, 0, "{variant}");
        assert_eq!(c.flows_finished, 1500, "{variant}");
        assert_eq!(c.bytes_delivered, c.bytes_offered, "{variant}");
        assert!(
            c.drops > 1000,
            "{variant}: a loaded network drops ({})",
            c.drops
        );
        assert!(c.dead_bytes > 0, "{variant}");
        assert_eq!(c.dead_bytes, c.dropped_data_bytes, "{variant}");
        assert_eq!(c.dead_wire_bytes, c.dropped_data_wire_bytes, "{variant}");
        assert!(c.zombie_packets <= c.drops, "{variant}");
        // The flows' duplicates, and those that came after their flow had finished.
        assert!(f.duplicate_bytes.iter().sum::<u64>() <= c.duplicate_bytes);
        // What hosts sent is what arrived once, what arrived again, what died and what
        // was still on its way (duplicates of finished flows) when the last flow ended.
        assert_eq!(
            c.host_sent_data_bytes,
            c.bytes_offered + c.duplicate_bytes + c.dead_bytes + c.in_flight_data_bytes,
            "{variant}"
        );
        // Each flow's probes and inflations are its own; the run's probes are theirs.
        assert_eq!(f.probes.iter().map(|&p| p as u64).sum::<u64>(), c.probes);
        // Per port: sent + dropped + still queued = offered (nothing is left queued).
        let p = &r.ports;
        let dropped_bytes: u64 = p.dropped_bytes.iter().sum();
        assert!(dropped_bytes >= c.dropped_data_wire_bytes, "{variant}");
    }
}

#[test]
fn t1_inflates_and_t3_resends_more_than_it_must() {
    let text = format!("{TURBO}{LOADED}");
    let t1 = run(&text, &["transport.turbo_variant=t1"]);
    assert!(t1.flows.inflations.iter().any(|&n| n > 0));
    // T2 never inflates: it stops.
    let t2 = run(&text, &["transport.turbo_variant=t2"]);
    assert!(t2.flows.inflations.iter().all(|&n| n == 0));
    assert!(t2.flows.probes.iter().any(|&n| n > 0));
}

#[test]
fn same_seed_same_records() {
    let text = format!("{TURBO}{LOADED}");
    let a = run(
        &text,
        &["workload.max_flows=300", "transport.turbo_variant=t3"],
    );
    let b = run(
        &text,
        &["workload.max_flows=300", "transport.turbo_variant=t3"],
    );
    assert_eq!(a.flows.fct_ps, b.flows.fct_ps);
    assert_eq!(a.sim.counters().dead_bytes, b.sim.counters().dead_bytes);
    assert_eq!(a.sim.counters().events, b.sim.counters().events);
}

#[test]
fn the_timeseries_counts_active_flows_and_their_outstanding_bytes() {
    let text = with_flows("{ src = 0, dst = 40, size = \"1MB\" }");
    let r = {
        let sc = scenario(&text, &["run.timeseries_interval=100us"]).unwrap();
        let mut sim = spillway_core::engine::Sim::new(&sc).unwrap();
        sim.run_to_end();
        sim.take_timeseries()
    };
    // 1 MB at 10 Gb/s takes ~0.8 ms: samples at 100, 200, ... us, one active flow whose
    // unacknowledged bytes fall by about 100 us of line rate a sample.
    assert!(r.time_ps.len() >= 7, "{} samples", r.time_ps.len());
    assert_eq!(r.time_ps[0], 100_000_000);
    assert!(r.active_flows[..7].iter().all(|&n| n == 1));
    for w in r.outstanding_bytes[..7].windows(2) {
        let fell = w[0] - w[1];
        assert!((120_000..=125_000).contains(&fell), "fell by {fell}");
    }
}

#[test]
fn turbo_is_refused_where_it_cannot_work_and_defaults_to_the_papers_timeout() {
    let text = with_flows("{ src = 0, dst = 40, size = \"1MB\" }");
    let (key, msg) = refused(&text, &["switch.queue=droptail"]);
    assert_eq!(key, "switch.queue");
    assert!(msg.contains("FIFO"), "{msg}");
    let (key, _) = refused(&text, &["switch.overflow=fastlane"]);
    assert_eq!(key, "switch.overflow");
    let (key, msg) = refused(&text, &["transport.init_cwnd=4"]);
    assert_eq!(key, "transport.init_cwnd");
    assert!(msg.contains("does not apply"), "{msg}");
    let sc = scenario(&text, &["transport.turbo_variant=t4"]).unwrap();
    let TransportConfig::Turbo(t) = &sc.transport else {
        panic!("a Turbo transport")
    };
    assert_eq!(t.rto, 9_500_000);
    assert!(t.per_packet && t.probe_spacing);
    assert!(sc.resolved.contains("turbo_probe_spacing = \"rto\""));
    // A preset's choice can be overridden one key at a time.
    let sc = scenario(
        &text,
        &[
            "transport.turbo_variant=t4",
            "transport.turbo_probe_spacing=none",
        ],
    )
    .unwrap();
    let TransportConfig::Turbo(t) = &sc.transport else {
        panic!("a Turbo transport")
    };
    assert!(t.per_packet && !t.probe_spacing);
    // Turbo's queues serve the best flow's lowest sequence number (§4(3)) unless told.
    assert_eq!(sc.switch.serve_order, ServeOrder::Sequence);
    assert!(sc.resolved.contains("serve_order = \"sequence\""));
    let sc = scenario(&text, &["switch.serve_order=arrival"]).unwrap();
    assert_eq!(sc.switch.serve_order, ServeOrder::Arrival);
    let sc = scenario(&text, &["transport.kind=pfabric"]).unwrap();
    assert_eq!(sc.switch.serve_order, ServeOrder::Arrival);
    // The issue's minimal scenario: Turbo on pfabric144 with pFabric queues, nothing else.
    assert!(scenario(
        "[topology]\nkind = \"pfabric144\"\n[switch]\nqueue = \"pfabric\"\n[transport]\nkind = \"turbo\"",
        &[]
    )
    .is_ok());
}
