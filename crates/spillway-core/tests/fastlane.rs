//! FastLane, pFabric, CoDel and Source Quench against invariants (every drop accounted
//! for, caps never exceeded, bytes conserved), closed forms (a lone pFabric flow runs at
//! line rate) and the FastLane paper's claims (§2.2.1, §5.1.1) at 40% load.

mod common;

use common::{run, scenario, Run};
use spillway_core::units::PS_PER_S;
use spillway_core::workload::CLASS_SHORT;

/// 32 senders x 64 KB into one 64 KB port: heavy synchronized loss.
const INCAST: &str = r#"
[topology]
kind = "star"
hosts = 33
link_rate = "10Gbps"
link_delay = "1us"
[switch]
buffer = "64KB"
overflow = "fastlane"
[transport]
rto_min = "1ms"
[workload]
kind = "incast"
receiver = 0
senders = 32
size = "64KB"
rounds = 5
"#;

#[test]
fn every_drop_yields_one_notification_out_the_input_port_and_buffers_hold() {
    let r = run(INCAST, &[]);
    let c = &r.sim.counters();
    assert!(c.drops > 100, "the scenario must drop: {}", c.drops);
    // One notification per drop, each either delivered or dropped at a buffer cap.
    assert_eq!(c.notifications_generated, c.drops);
    assert_eq!(
        c.notifications_delivered + c.notifications_dropped,
        c.notifications_generated
    );
    let mut generated = 0;
    for i in 0..r.ports.node.len() {
        assert!(r.ports.max_bytes[i] <= r.ports.capacity_bytes[i]);
        assert!(r.ports.notif_max_bytes[i] <= r.ports.notif_capacity_bytes[i]);
        if r.ports.is_switch[i] && r.ports.peer[i] == 0 {
            // Drops happen toward the receiver; notifications leave by the senders' ports.
            assert!(r.ports.dropped[i] > 0);
            assert_eq!(r.ports.notif_generated[i], 0);
            assert_eq!(r.ports.notif_sent[i], 0);
        }
        generated += r.ports.notif_generated[i];
    }
    assert_eq!(generated, c.notifications_generated);
    // Every flow finished with every byte, once.
    assert_eq!(c.flows_unfinished, 0);
    assert_eq!(c.bytes_delivered, c.bytes_offered);
    let notified: u64 = r.flows.notifications.iter().map(|&n| n as u64).sum();
    assert_eq!(notified, c.notifications_delivered);
}

#[test]
fn fastlane_repairs_incast_losses_without_timeouts() {
    let fl = run(INCAST, &[]);
    let drop = run(INCAST, &["switch.overflow=drop"]);
    assert!(drop.sim.counters().timeouts > 0, "plain TCP times out here");
    assert!(
        fl.sim.counters().timeouts * 10 <= drop.sim.counters().timeouts,
        "FastLane {} vs drop {} timeouts",
        fl.sim.counters().timeouts,
        drop.sim.counters().timeouts
    );
    let last = |r: &Run| r.flows.finish_ps.iter().max().copied().unwrap();
    assert!(last(&fl) < last(&drop));
}

#[test]
fn strict_cap_holds_on_every_link_and_work_conservation_uses_idle_capacity() {
    let r = run(
        INCAST,
        &["switch.fastlane_strict=true", "switch.fastlane_buffer=64B"],
    );
    let t = r.sim.now() as f64 / PS_PER_S as f64;
    let mut capped = 0;
    for i in 0..r.ports.node.len() {
        let bits = r.ports.notif_sent_bytes[i] as f64 * 8.0;
        // 1% of the link over the run, plus the one notification a cap period may start with.
        assert!(bits <= 0.01 * r.ports.rate_bps[i] as f64 * t + 64.0 * 8.0);
        assert_eq!(r.ports.notif_sent_idle[i], 0);
        assert!(r.ports.notif_max_bytes[i] <= 64);
        capped += r.ports.notif_dropped[i];
    }
    assert!(capped > 0, "a one-notification buffer overflows here");
    assert_eq!(r.sim.counters().flows_unfinished, 0);
    let wc = run(INCAST, &["switch.fastlane_buffer=64B"]);
    assert!(wc.ports.notif_sent_idle.iter().sum::<u64>() > 0);
}

#[test]
fn lone_pfabric_flow_starts_at_line_rate() {
    let text = r#"
[topology]
kind = "fat_tree"
k = 4
link_rate = "10Gbps"
link_delay = "1us"
[switch]
queue = "pfabric"
buffer = "64KB"
[transport]
kind = "pfabric"
[workload]
kind = "trace"
flows = [{ src = 0, dst = 15, size = "200KB" }]
"#;
    let r = run(text, &[]);
    let (fct, ideal) = (r.flows.fct_ps[0] as f64, r.flows.ideal_fct_ps[0] as f64);
    // One BDP from the start: no slow-start ramp, within a few percent of the ideal
    // (the ACK clock adds at most one window's slack).
    assert!(fct / ideal < 1.05, "fct {fct} ideal {ideal}");
    assert_eq!(r.flows.timeouts[0], 0);
}

const BOTTLENECK: &str = r#"
[topology]
kind = "dumbbell"
hosts = 4
link_rate = "10Gbps"
link_delay = "2us"
[switch]
buffer = "512KB"
ecn = "codel"
[transport]
init_cwnd = 10
[workload]
kind = "trace"
flows = [{ src = 0, dst = 2, size = "20MB" }, { src = 1, dst = 3, size = "20MB" }]
"#;

#[test]
fn codel_marking_keeps_the_queue_short_without_loss() {
    let marked = run(BOTTLENECK, &[]);
    let plain = run(BOTTLENECK, &["switch.ecn=off"]);
    let c = &marked.sim.counters();
    assert!(c.ecn_marks > 0 && c.ecn_reductions > 0);
    assert_eq!(c.drops, 0);
    let worst = |r: &Run| {
        (0..r.ports.node.len())
            .filter(|&i| r.ports.is_switch[i])
            .map(|i| r.ports.mean_bytes[i])
            .fold(0.0, f64::max)
    };
    assert!(
        worst(&marked) * 3.0 < worst(&plain),
        "CoDel {} B vs drop-tail {} B mean queue",
        worst(&marked),
        worst(&plain)
    );
    // Marking costs little throughput: both flows finish within 20% of line rate time.
    let t = marked.flows.finish_ps.iter().max().copied().unwrap() as f64 / PS_PER_S as f64;
    let ideal = 2.0 * 20.0 * 1048576.0 * 8.0 / 10e9;
    assert!(t < ideal * 1.2, "{t} s vs {ideal} s");
}

#[test]
fn source_quench_reduces_the_window_and_never_retransmits() {
    let r = run(BOTTLENECK, &["switch.overflow=source_quench"]);
    let c = &r.sim.counters();
    assert!(c.quenches_sent > 0);
    assert_eq!(
        c.quenches_sent, c.ecn_marks,
        "one quench per CoDel decision"
    );
    assert_eq!(c.quenches_delivered, c.quenches_sent);
    assert!(c.ecn_reductions > 0);
    assert_eq!((c.drops, c.retransmits), (0, 0));
}

fn short_tail(name: &str, text: &str) -> f64 {
    let r = run(text, &["workload.load=0.4", "run.duration=20ms"]);
    let mut fct: Vec<u64> = (0..r.flows.len())
        .filter(|&i| {
            r.flows.class[i] == CLASS_SHORT
                && r.flows.size_bytes[i] == 2048
                && r.flows.fct_ps[i] != u64::MAX
        })
        .map(|i| r.flows.fct_ps[i])
        .collect();
    fct.sort_unstable();
    assert!(fct.len() > 5_000, "{name}: {} samples", fct.len());
    // Notifications stay within their caps in every run (FastLane §3.3).
    let t = r.sim.now() as f64 / PS_PER_S as f64;
    for i in 0..r.ports.node.len() {
        let share = r.ports.notif_sent_bytes[i] as f64 * 8.0 / (r.ports.rate_bps[i] as f64 * t);
        assert!(
            share <= 0.01 + 1e-3,
            "{name}: port {i} notifications {share}"
        );
        assert!(r.ports.notif_max_bytes[i] <= r.ports.notif_capacity_bytes[i]);
    }
    fct[(fct.len() as f64 * 0.999).ceil() as usize - 1] as f64
}

/// FastLane §5.1.1 and §2.2.1 at 40% load, 10% short: the 2 KB p99.9 falls by ≥ 40%
/// for TCP (flow hashing and packet scatter) and ≥ 25% for pFabric; Source Quench is
/// not meaningfully better than TCP.
#[test]
fn fastlane_cuts_the_short_flow_tail_at_40_percent_load() {
    let ex = |f: &str| {
        std::fs::read_to_string(format!(
            "{}/../../examples/fastlane/{f}.toml",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    };
    let tcp = short_tail("tcp", &ex("tcp"));
    let fh = short_tail("tcp-fl-fh", &ex("tcp-fl-fh"));
    let ps = short_tail("tcp-fl-ps", &ex("tcp-fl-ps"));
    let sq = short_tail("tcp-sq", &ex("tcp-sq"));
    let pf = short_tail("pfabric", &ex("pfabric"));
    let pf_fl = short_tail("pfabric-fl", &ex("pfabric-fl"));
    assert!(fh <= 0.6 * tcp, "FL-FH {fh} vs TCP {tcp}");
    assert!(ps <= 0.6 * tcp, "FL-PS {ps} vs TCP {tcp}");
    assert!(pf_fl <= 0.75 * pf, "pFabric+FL {pf_fl} vs pFabric {pf}");
    assert!(sq >= 0.9 * tcp, "Source Quench {sq} vs TCP {tcp}");
}

#[test]
fn fastlane_runs_are_deterministic() {
    let text = r#"
[topology]
kind = "fat_tree"
k = 4
[switch]
queue = "pfabric"
overflow = "fastlane"
forwarding = "spray"
buffer = "32KB"
[transport]
kind = "pfabric"
[workload]
kind = "short_long"
load = 0.6
short_fraction = 0.5
workers = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
[run]
duration = "3ms"
"#;
    // k=4 has 16 hosts: too few workers for an 80-way query, so the scenario is refused.
    let Err(err) = scenario(text, &[]) else {
        panic!("refused")
    };
    assert_eq!(err.key, "workload.workers");
    let text = text.replace("short_fraction = 0.5", "short_fraction = 0.0");
    let a = run(&text, &[]);
    let b = run(&text, &[]);
    let c = run(&text, &["run.seed=2"]);
    assert!(a.sim.counters().notifications_generated > 0);
    assert_eq!(a.flows.fct_ps, b.flows.fct_ps);
    assert_eq!(a.sim.counters().events, b.sim.counters().events);
    assert_ne!(a.flows.fct_ps, c.flows.fct_ps);
}
