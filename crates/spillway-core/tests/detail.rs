//! DeTail's switch (DeTail §5-§7): forwarding and crossbar latency, against closed forms.

mod common;

use common::{refused, run};
use spillway_core::units::serialization_ps;

const LONE_FLOW: &str = r#"
[topology]
kind = "star"
hosts = 2
link_rate = "10Gbps"
link_delay = "1us"
[transport]
init_cwnd = 1000
[workload]
kind = "trace"
flows = [{ src = 0, dst = 1, size = "1MB" }]
"#;

/// Store-and-forward tandem stages (serialization of each packet, then a fixed delay):
/// when the last packet has passed them all. A direct recurrence, no closed form.
fn tandem(stages: &[(u64, u64)], packets: &[u64]) -> u64 {
    let mut free = vec![0u64; stages.len()];
    let mut done = 0;
    for &wire in packets {
        let mut t = 0;
        for (i, &(rate, delay)) in stages.iter().enumerate() {
            let start = t.max(free[i]);
            free[i] = start + serialization_ps(wire, rate);
            t = free[i] + delay;
        }
        done = t;
    }
    done
}

/// DeTail §7.1's switch delays: a forwarding engine's fixed delay, and a crossbar that
/// moves a packet in its serialization time at `speedup` times the line rate. A lone
/// flow through one switch takes what the tandem of link, forwarding delay, crossbar
/// and link gives, and the ideal FCT is that tandem.
#[test]
fn a_lone_flow_pays_the_forwarding_delay_and_the_crossbar_once_per_switch() {
    let size = 1u64 << 20;
    let mut packets = vec![1460 + 40 + 38; 718];
    packets.push(size - 718 * 1460 + 40 + 38);
    let g10 = 10_000_000_000;
    let fwd = 3_100_000;
    let base = run(LONE_FLOW, &[]);
    let plain = tandem(&[(g10, 1_000_000), (g10, 1_000_000)], &packets);
    assert_eq!(base.flows.ideal_fct_ps[0], plain);
    let r = run(
        LONE_FLOW,
        &["switch.forwarding_delay=3100ns", "switch.speedup=4"],
    );
    let with = tandem(
        &[(g10, 1_000_000 + fwd), (4 * g10, 0), (g10, 1_000_000)],
        &packets,
    );
    assert_eq!(r.flows.ideal_fct_ps[0], with);
    // The flow runs exactly as much later as the ideal says: every packet goes through
    // the same two delays (the window never limits this flow).
    assert_eq!(
        r.flows.fct_ps[0] - base.flows.fct_ps[0],
        with - plain,
        "fct {} vs {}",
        r.flows.fct_ps[0],
        base.flows.fct_ps[0]
    );
    // One full frame's crossing at 40G is 1538 B x 0.2 ns = 307.6 ns.
    assert_eq!(serialization_ps(1538, 4 * g10), 307_600);
    assert!(with - plain >= fwd + 307_600);
}

/// Rack 0's four hosts each send one long flow to rack 1 over four spines.
const FOUR_SPINES: &str = r#"
[topology]
kind = "leaf_spine"
racks = 2
hosts_per_rack = 4
spines = 4
link_rate = "1Gbps"
link_delay = "2us"
[workload]
kind = "trace"
flows = [{ src = 0, dst = 4, size = "4MB" }, { src = 1, dst = 5, size = "4MB" },
         { src = 2, dst = 6, size = "4MB" }, { src = 3, dst = 7, size = "4MB" }]
"#;

/// DeTail §5.3: adaptive load balancing spreads packets over the equal-cost uplinks by
/// their queues. Four line-rate flows through four uplinks: each uplink carries a
/// quarter of the packets (within 5%), every byte arrives once, no flow times out,
/// and reordering triggers no retransmission (fast retransmit is off with ALB).
#[test]
fn alb_spreads_packets_evenly_over_equal_cost_uplinks() {
    let r = run(FOUR_SPINES, &["switch.forwarding=alb"]);
    assert!(r.flows.finish_ps.iter().all(|&f| f != u64::MAX));
    assert_eq!(r.flows.delivered_bytes, r.flows.size_bytes);
    assert_eq!(r.flows.timeouts.iter().sum::<u32>(), 0);
    assert_eq!(r.flows.retransmits.iter().sum::<u32>(), 0);
    let hosts = 8;
    let leaf0 = hosts; // switches after hosts: leaf0, leaf1, spine0..3
    let uplinks: Vec<u64> = (0..r.ports.len())
        .filter(|&i| r.ports.node[i] == leaf0 && r.ports.peer[i] >= hosts + 2)
        .map(|i| r.ports.enqueued[i])
        .collect();
    assert_eq!(uplinks.len(), 4);
    let total: u64 = uplinks.iter().sum();
    for &u in &uplinks {
        let share = u as f64 / total as f64;
        assert!(
            (share - 0.25).abs() < 0.05 * 0.25,
            "uplink shares {uplinks:?}"
        );
    }
    // Every flow runs at line rate: no two share an uplink's queue for long. (ECMP
    // hashes two of these flows onto one spine with this seed: 2x the time.)
    for i in 0..4 {
        let slowdown = r.flows.slowdown[i];
        assert!(slowdown < 1.05, "flow {i}: slowdown {slowdown}");
    }
    let ecmp = run(FOUR_SPINES, &[]);
    let worst = ecmp.flows.slowdown.iter().cloned().fold(0.0, f64::max);
    assert!(worst > 1.5, "ECMP's collision: worst slowdown {worst}");
}

/// 100 senders of 9 racks (DeTail's 1 GbE leaf-spine, one rack more) to one receiver,
/// 64 KB each, at once.
const INCAST100: &str = r#"
[topology]
kind = "detail96"
racks = 9
[switch]
kind = "cioq"
forwarding_delay = "3100ns"
speedup = 4
[transport]
rto_min = "50ms"
[workload]
kind = "incast"
senders = 100
receiver = 107
size = "64KB"
"#;

fn drops(r: &common::Run) -> u64 {
    r.sim.counters().drops
}

/// DeTail §4.1: with flow control nothing is dropped anywhere, every byte arrives once,
/// and no ingress queue ever holds more than its buffer; without it, the same incast
/// loses packets.
#[test]
fn incast_of_100_is_lossless_with_pfc_and_pause() {
    let lossy = run(INCAST100, &[]);
    assert!(
        drops(&lossy) > 0,
        "the lossy switch drops under this incast"
    );
    // Priority+PFC (pfc, ECMP), DeTail (pfc, ALB) and FC (pause).
    for (fc, fwd) in [("pfc", "ecmp"), ("pfc", "alb"), ("pause", "ecmp")] {
        let r = run(
            INCAST100,
            &[
                &format!("switch.flow_control={fc}"),
                &format!("switch.forwarding={fwd}"),
            ],
        );
        let c = r.sim.counters();
        assert_eq!(c.drops, 0, "{fc}");
        assert_eq!(c.flows_finished, 100, "{fc}");
        assert_eq!(c.flows_unfinished, 0, "{fc}");
        assert_eq!(c.bytes_delivered, 100 * 65_536, "{fc}");
        assert_eq!(c.duplicate_bytes, 0, "{fc}");
        assert_eq!(c.retransmits, 0, "{fc}");
        assert!(c.pause_frames > 0, "{fc}: pauses were needed");
        let p = &r.ports;
        let sent: u64 = p.pause_frames_sent.iter().sum();
        let received: u64 = p.pause_frames_received.iter().sum();
        assert_eq!(sent, c.pause_frames, "{fc}");
        assert_eq!(received, sent, "{fc}: every pause frame arrived");
        assert!(p.paused_ps.iter().sum::<u64>() > 0, "{fc}");
        for k in 0..p.node.len() {
            let classes = p.paused_by_class(k);
            // Some class paused at least as long as any one class; 802.3x pauses all.
            assert!(classes.iter().all(|&c| c <= p.paused_ps[k]), "{fc}");
            if fc == "pause" {
                assert!(classes.iter().all(|&c| c == p.paused_ps[k]), "{fc}");
            }
            assert!(
                p.ingress_max_bytes[k] <= p.capacity_bytes[k],
                "{fc}: node {} port {}: ingress peak {} over {}",
                p.node[k],
                p.port[k],
                p.ingress_max_bytes[k],
                p.capacity_bytes[k]
            );
        }
    }
}

/// Three racks, three spines, and routes that send each rack's traffic two racks on
/// by way of the next rack: leaf0 -> spine0 -> leaf1 -> spine1 -> leaf2 -> spine2 ->
/// leaf0 is a ring every link of which carries a flow that goes on around it. Each
/// destination's routes are loop-free; together their buffers depend on each other in a
/// cycle (Hu et al., HotNets 2016).
const RING_NETWORK: &str = r#"
[topology]
kind = "leaf_spine"
racks = 3
hosts_per_rack = 2
spines = 3
link_rate = "1Gbps"
link_delay = "2us"
[switch]
kind = "cioq"
flow_control = "pfc"
deadlock_after = "1ms"
"#;

const RING_ROUTES: &str = r#"
[[switch.routes]]
at = "leaf0"
to = [4, 5]
via = ["spine0"]
[[switch.routes]]
at = "spine0"
to = [4, 5]
via = ["leaf1"]
[[switch.routes]]
at = "leaf1"
to = [4, 5]
via = ["spine1"]
[[switch.routes]]
at = "leaf1"
to = [0, 1]
via = ["spine1"]
[[switch.routes]]
at = "spine1"
to = [0, 1]
via = ["leaf2"]
[[switch.routes]]
at = "leaf2"
to = [0, 1]
via = ["spine2"]
[[switch.routes]]
at = "leaf2"
to = [2, 3]
via = ["spine2"]
[[switch.routes]]
at = "spine2"
to = [2, 3]
via = ["leaf0"]
[[switch.routes]]
at = "leaf0"
to = [2, 3]
via = ["spine0"]
"#;

const RING_TRAFFIC: &str = r#"
[transport]
rto_min = "50ms"
[workload]
kind = "trace"
flows = [{ src = 0, dst = 4, size = "20MB" }, { src = 1, dst = 5, size = "20MB" },
         { src = 2, dst = 0, size = "20MB" }, { src = 3, dst = 1, size = "20MB" },
         { src = 4, dst = 2, size = "20MB" }, { src = 5, dst = 3, size = "20MB" }]
"#;

/// A cyclic buffer dependency under PFC deadlocks: the run stops, saying so and naming
/// the ring's ports, instead of hanging until its timers give up. The same traffic on
/// shortest paths, or without flow control, finishes.
#[test]
fn a_pfc_deadlock_is_detected_and_named() {
    let ring = [RING_NETWORK, RING_ROUTES, RING_TRAFFIC].concat();
    let r = run(&ring, &[]);
    assert_eq!(r.sim.stop_reason().as_str(), "deadlock");
    let detail = r.sim.stop_detail();
    assert!(
        detail.contains(
            "leaf0 port 2 (to spine0) -> spine0 port 1 (to leaf1) -> leaf1 port 3 (to spine1) -> \
             spine1 port 2 (to leaf2) -> leaf2 port 4 (to spine2) -> spine2 port 0 (to leaf0) -> \
             leaf0 port 2"
        ),
        "{detail}"
    );
    assert!(r.sim.counters().flows_unfinished > 0);
    // Reported within two checks of the ports' pauses.
    assert!(r.sim.now() < 60_000_000_000, "at {} ps", r.sim.now());
    let lossy = run(&ring, &["switch.flow_control=none"]);
    assert_eq!(lossy.sim.stop_reason().as_str(), "all_flows_done");
    let ok = run(&[RING_NETWORK, RING_TRAFFIC].concat(), &[]);
    assert_eq!(ok.sim.stop_reason().as_str(), "all_flows_done");
    assert_eq!(ok.sim.counters().drops, 0);
}

/// The same ring cut into its racks (a parallel run, any thread count): the check looks
/// over every process's switches at once and finds and names the same cycle.
#[test]
fn a_pfc_deadlock_across_processes_is_found() {
    use spillway_core::config::Scenario;
    use spillway_core::engine::run::Run;
    let ring = [RING_NETWORK, RING_ROUTES, RING_TRAFFIC].concat();
    let mut seen = Vec::new();
    for threads in ["1", "2"] {
        let o = [
            "run.partitions=auto".to_string(),
            format!("run.threads={threads}"),
        ];
        let sc = Scenario::parse(&ring, &o, None).unwrap();
        let mut r = Run::new(&sc).unwrap();
        assert_eq!(r.partitions().0, 3);
        r.run_to_end();
        assert_eq!(r.stop_reason().as_str(), "deadlock");
        assert!(
            r.stop_detail()
                .contains("leaf0 port 2 (to spine0) -> spine0 port 1 (to leaf1)"),
            "{}",
            r.stop_detail()
        );
        assert!(r.now() < 60_000_000_000, "at {} ps", r.now());
        seen.push((
            r.now(),
            r.stop_detail().to_string(),
            r.counters().packet_hops,
        ));
    }
    assert_eq!(seen[0], seen[1]);
}

/// Host 0 sends to host 1, which four others also send to, and to host 2, which nothing
/// else sends to; the crossbar runs at line rate (speedup 1), so input 0 waits for output
/// 1 most of the time.
const HOL: &str = r#"
[topology]
kind = "star"
hosts = 6
link_rate = "1Gbps"
link_delay = "2us"
[switch]
kind = "cioq"
speedup = 1
[transport]
rto_min = "10ms"
[workload]
kind = "trace"
flows = [{ src = 0, dst = 1, size = "4MB" }, { src = 0, dst = 2, size = "4MB" },
         { src = 3, dst = 1, size = "4MB" }, { src = 4, dst = 1, size = "4MB" },
         { src = 5, dst = 1, size = "4MB" }, { src = 2, dst = 1, size = "4MB" }]
"#;

/// DeTail §5.1: virtual output queues keep a blocked output from stalling the others; a
/// FIFO ingress queue blocks its head's followers. Host 0's flow to the idle host 2 gets
/// the half of host 0's link it asks for with VOQs, and much less behind the FIFO's head.
#[test]
fn virtual_output_queues_avoid_head_of_line_blocking() {
    let fct = |ingress: &str| {
        let r = run(HOL, &[&format!("switch.ingress={ingress}")]);
        let f = &r.flows;
        let k = (0..f.flow_id.len())
            .find(|&k| f.src[k] == 0 && f.dst[k] == 2)
            .unwrap();
        assert_eq!(r.sim.counters().flows_unfinished, 0);
        f.fct_ps[k] as f64
    };
    let (voq, fifo) = (fct("voq"), fct("fifo"));
    assert!(fifo > 1.5 * voq, "voq {voq} ps, fifo {fifo} ps");
}

/// DeTail's network and Fig. 8's highest steady load: 2500 all-to-all queries/s per
/// server (2, 8 or 32 KB responses), in two classes, 40 ms.
const FIG8_TOP: &str = r#"
[topology]
kind = "detail96"
[switch]
kind = "cioq"
forwarding_delay = "3100ns"
speedup = 4
[transport]
rto_min = "50ms"
[workload]
kind = "request_response"
request_size = "1460B"
response_sizes = ["2KB", "8KB", "32KB"]
rate = 2500
priorities = 2
[run]
duration = "40ms"
"#;

/// DeTail §4.1 at load: in the Priority+PFC and DeTail environments nothing is dropped
/// at Fig. 8's highest rate, nothing arrives twice (no timeout, no retransmission), and
/// no input holds more than its buffer; pauses were needed. The lossy Priority
/// environment drops under the same load.
#[test]
fn priority_pfc_and_detail_are_lossless_at_the_highest_steady_load() {
    let lossy = run(FIG8_TOP, &["switch.flow_control=none"]);
    assert!(drops(&lossy) > 0);
    for env in [
        &["switch.flow_control=pfc"][..],
        &["switch.flow_control=pfc", "switch.forwarding=alb"][..],
    ] {
        let r = run(FIG8_TOP, env);
        let c = r.sim.counters();
        assert_eq!(c.drops, 0, "{env:?}");
        assert_eq!(c.duplicate_bytes, 0, "{env:?}");
        assert_eq!(c.retransmits, 0, "{env:?}");
        assert!(c.pause_frames > 0, "{env:?}");
        assert!(c.flows_finished > 5_000, "{env:?}");
        let p = &r.ports;
        for k in 0..p.node.len() {
            assert!(p.ingress_max_bytes[k] <= p.capacity_bytes[k], "{env:?}");
        }
        // Every flow that finished delivered its bytes exactly once.
        let f = &r.flows;
        for k in 0..f.flow_id.len() {
            if f.finish_ps[k] != u64::MAX {
                assert_eq!(f.delivered_bytes[k], f.size_bytes[k], "{env:?}");
            }
        }
    }
}

/// Fig. 5's heaviest burst: every server asks random others at 10,000 queries/s for
/// 12.5 ms (2, 8 or 32 KB responses).
const BURST: &str = r#"
[topology]
kind = "detail96"
[switch]
kind = "cioq"
forwarding_delay = "3100ns"
speedup = 4
[transport]
rto_min = "50ms"
[workload]
kind = "request_response"
request_size = "1460B"
response_sizes = ["2KB", "8KB", "32KB"]
burst_period = "50ms"
burst_length = "12.5ms"
burst_rate = 10000
queries = 11000
"#;

/// The default thresholds hold under DeTail's bursts for both kinds of flow control:
/// 802.3x pause, with one headroom for the whole buffer, is where a frame more or less
/// matters (§6.1's H leaves out the frame that crosses XOFF and the pause frame itself;
/// without them this burst overflowed inputs on some seeds).
#[test]
fn pause_and_pfc_hold_a_burst_without_loss() {
    for fc in ["pause", "pfc"] {
        for seed in 1..=3 {
            let r = run(
                BURST,
                &[
                    &format!("switch.flow_control={fc}"),
                    &format!("run.seed={seed}"),
                ],
            );
            let c = r.sim.counters();
            assert_eq!((c.drops, c.ingress_drops), (0, 0), "{fc}, seed {seed}");
            assert_eq!(c.flows_unfinished, 0);
            let p = &r.ports;
            let peak = (0..p.node.len())
                .map(|k| p.ingress_max_bytes[k])
                .max()
                .unwrap();
            assert!(peak <= 131_072, "{fc}: {peak}");
        }
    }
}

/// What the CIOQ switch and flow control do not take is refused, naming the key.
#[test]
fn unsupported_combinations_are_refused_with_their_key() {
    let star = "[topology]\nkind = \"star\"\nhosts = 4\n[workload]\nkind = \"incast\"\nsenders = 3";
    for (overrides, key) in [
        (&["switch.flow_control=pfc"][..], "switch.flow_control"),
        (
            &["switch.kind=cioq", "switch.queue=pfabric"][..],
            "switch.queue",
        ),
        (
            &["switch.kind=cioq", "switch.overflow=cut_payload"][..],
            "switch.overflow",
        ),
        (
            &["switch.kind=cioq", "switch.overflow=fastlane"][..],
            "switch.overflow",
        ),
        (&["switch.kind=cioq", "switch.ecn=codel"][..], "switch.ecn"),
        (
            &["switch.kind=cioq", "switch.pfc_xoff=20KB"][..],
            "switch.pfc_xoff",
        ),
        (
            &[
                "switch.kind=cioq",
                "switch.flow_control=pfc",
                "switch.pfc_xoff=10KB",
                "switch.pfc_xon=10KB",
            ][..],
            "switch.pfc_xon",
        ),
        (&["switch.ingress=fifo"][..], "switch.ingress"),
        (
            &["switch.kind=cioq", "switch.deadlock_after=0us"][..],
            "switch.deadlock_after",
        ),
    ] {
        assert_eq!(refused(star, overrides).0, key, "{overrides:?}");
    }
    // Known only when the network is built: a switch of more than 64 ports, and an
    // ingress buffer too small for eight classes' headroom.
    let build = |text: &str, o: &[&str]| {
        let sc = common::scenario(text, o).unwrap();
        match spillway_core::engine::Sim::new(&sc) {
            Ok(_) => panic!("built: {o:?}"),
            Err(e) => (e.key, e.message),
        }
    };
    let (key, msg) = build(
        "[topology]\nkind = \"star\"\nhosts = 65\n[workload]\nkind = \"incast\"",
        &["switch.kind=cioq"],
    );
    assert_eq!(key, "switch.kind");
    assert!(msg.contains("65 ports"), "{msg}");
    let (key, msg) = build(
        star,
        &[
            "switch.kind=cioq",
            "switch.flow_control=pfc",
            "switch.ingress_buffer=32KB",
        ],
    );
    assert_eq!(key, "switch.ingress_buffer");
    assert!(msg.contains("headroom"), "{msg}");
}
