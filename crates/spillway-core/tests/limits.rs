//! Time never wraps: every time, rate and size a scenario gives is bounded so that a
//! run's arithmetic fits in 64-bit picoseconds, the clock stops at its horizon, and
//! scenarios that could only run forever (or never send a packet) are refused with the
//! key named. Each case here was accepted before the limits, and went wrong.

mod common;

use common::{refused, scenario};
use spillway_core::engine::{Sim, StopReason};
use spillway_core::units::{HORIZON, MAX_TIME};

const TRACE: &str = r#"
[topology]
kind = "star"
hosts = 3
[workload]
kind = "trace"
flows = [{ src = 1, dst = 0, size = "10KB" }]
"#;

#[test]
fn times_beyond_a_day_are_refused_with_their_key() {
    // A trace flow starting at 18,446,744,073,709 us finished before it started; a
    // 1e6 s link made a slowdown of 0.000008; rto_min = rto_max = 18446744 s livelocked
    // with the clock running backwards.
    let late =
        r#"workload.flows=[{ src = 1, dst = 0, size = "10KB", start = "18446744073709us" }]"#;
    assert_eq!(refused(TRACE, &[late]).0, "workload.flows[0].start");
    assert_eq!(
        refused(TRACE, &["topology.link_delay=1e6s"]).0,
        "topology.link_delay"
    );
    let (key, msg) = refused(
        TRACE,
        &["transport.rto_min=18446744s", "transport.rto_max=18446744s"],
    );
    assert_eq!(key, "transport.rto_min");
    assert!(msg.contains("1 day"), "{msg}");
    for (key, bad) in [
        ("run.duration", "86401s"),
        ("host.rx_jitter", "100000s"),
        ("transport.delayed_ack", "1000000s"),
    ] {
        assert_eq!(refused(TRACE, &[&format!("{key}={bad}")]).0, key);
    }
    // One day itself is fine.
    assert_eq!(
        scenario(TRACE, &["run.duration=86400s"])
            .unwrap()
            .run
            .duration,
        Some(MAX_TIME)
    );
}

#[test]
fn a_trace_file_start_beyond_a_day_is_refused() {
    let csv = "src,dst,size_bytes,start_us\n1,0,1000,18446744073709\n";
    let e = spillway_core::config::parse_trace_csv(csv, 3).unwrap_err();
    assert!(e.contains("1 day"), "{e}");
    let csv = "src,dst,size_bytes,start_us\n1,0,18446744073709551615,0\n";
    assert!(spillway_core::config::parse_trace_csv(csv, 3).is_err());
}

#[test]
fn rates_and_sizes_outside_the_limits_are_refused() {
    assert_eq!(
        refused(TRACE, &["topology.link_rate=1bps"]).0,
        "topology.link_rate"
    );
    assert_eq!(
        refused(TRACE, &["topology.link_rate=1000Tbps"]).0,
        "topology.link_rate"
    );
    assert_eq!(
        refused(TRACE, &["switch.cut_payload_extra=18446744073709551615"]).0,
        "switch.cut_payload_extra"
    );
    assert_eq!(
        refused(TRACE, &["switch.buffer=2GB", "switch.buffer=2000GB"]).0,
        "switch.buffer"
    );
}

#[test]
fn buffers_smaller_than_a_frame_are_refused() {
    // A 100 B NIC refused every data frame, and the sender resent it forever.
    let (key, msg) = refused(TRACE, &["host.nic_buffer=100B"]);
    assert_eq!(key, "host.nic_buffer");
    assert!(msg.contains("1538 B"), "{msg}");
    let fat = "[topology]\nkind = \"fat_tree\"\nk = 4\n[workload]\nkind = \"trace\"\n\
               flows = [{ src = 1, dst = 0, size = \"10KB\" }]";
    assert_eq!(
        refused(fat, &["switch.edge_buffer=1KB"]).0,
        "switch.edge_buffer"
    );
    assert_eq!(
        refused(fat, &["switch.spine_buffer=1KB"]).0,
        "switch.spine_buffer"
    );
    // Jumbo frames need jumbo buffers.
    assert_eq!(
        refused(TRACE, &["transport.mss=9000", "switch.buffer=8KB"]).0,
        "switch.buffer"
    );
}

#[test]
fn workloads_that_never_end_are_refused() {
    // All rounds at one instant (memory without bound); open-loop arrivals with no end.
    let incast = "[topology]\nkind = \"star\"\nhosts = 4\n[workload]\nkind = \"incast\"\n";
    assert_eq!(
        refused(incast, &["workload.period=0us", "workload.rounds=3"]).0,
        "workload.period"
    );
    let one = ["workload.period=0us", "workload.rounds=1"];
    assert!(scenario(incast, &one).is_ok(), "one round is harmless");
    let open = "[topology]\nkind = \"star\"\nhosts = 4\n[workload]\nfanout = 2\n";
    for (kind, limit) in [
        ("poisson", "max_flows"),
        ("request_response", "queries"),
        ("partition_aggregate", "queries"),
    ] {
        let k = format!("workload.kind={kind}");
        let text = if kind == "partition_aggregate" {
            open.to_string()
        } else {
            open.replace("fanout = 2\n", "")
        };
        let (key, msg) = refused(&text, &[&k]);
        assert_eq!(key, "run.duration", "{kind}");
        assert!(msg.contains(limit), "{msg}");
        for end in [format!("workload.{limit}=10"), "run.duration=1ms".into()] {
            let o = [k.as_str(), end.as_str()];
            assert!(scenario(&text, &o).is_ok(), "{kind} {o:?}");
        }
    }
}

#[test]
fn codel_target_zero_is_named_under_its_own_key() {
    let (key, _) = refused(TRACE, &["switch.ecn=codel", "switch.codel_target=0us"]);
    assert_eq!(key, "switch.codel_target");
    let (key, _) = refused(TRACE, &["switch.ecn=codel", "switch.codel_interval=0us"]);
    assert_eq!(key, "switch.codel_interval");
}

/// Rounds a day apart forever: the clock reaches its horizon and the run stops there,
/// with every flow that finished finishing after it started.
#[test]
fn a_run_stops_at_the_clock_horizon() {
    let text = r#"
[topology]
kind = "star"
hosts = 3
[workload]
kind = "incast"
senders = 2
size = "10KB"
rounds = 1000
period = "86400s"
[run]
duration = "off"
max_events = 10000000
"#;
    let sc = scenario(text, &[]).unwrap();
    let mut sim = Sim::new(&sc).unwrap();
    sim.run_to_end();
    assert_eq!(sim.stop_reason(), StopReason::Horizon);
    assert_eq!(sim.now(), HORIZON);
    let f = sim.take_flows();
    let rounds = HORIZON / MAX_TIME + 1;
    assert_eq!(f.flow_id.len() as u64, 2 * rounds);
    for i in 0..f.flow_id.len() {
        assert!(f.finish_ps[i] >= f.start_ps[i] && f.finish_ps[i] <= HORIZON);
        assert!(f.slowdown[i] >= 1.0, "{}", f.slowdown[i]);
    }
}

/// A flow too long to finish before the horizon (1024 GB at 1 Kbps) has an ideal FCT
/// that saturates instead of overflowing (a panic in a debug build).
#[test]
fn an_ideal_fct_beyond_the_horizon_saturates() {
    let text = r#"
[topology]
kind = "star"
hosts = 2
link_rate = "1Kbps"
[switch]
buffer = "1MB"
[workload]
kind = "trace"
flows = [{ src = 1, dst = 0, size = "1024GB" }]
[run]
duration = "1s"
"#;
    let sc = scenario(text, &[]).unwrap();
    let mut sim = Sim::new(&sc).unwrap();
    sim.run_to_end();
    assert_eq!(sim.stop_reason(), StopReason::Duration);
    let f = sim.take_flows();
    assert_eq!(f.ideal_fct_ps[0], u64::MAX);
    assert_eq!(f.finish_ps[0], u64::MAX, "unfinished");
}
