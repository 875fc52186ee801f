//! RoCE hosts (`transport.kind = "roce"`) with `transport.cc` none, DCQCN, HPCC and DCTCP
//! on the lossless fabric (CIOQ switches with PFC) and a lossy one: the mechanism tests
//! of docs/mechanisms.md § RoCE against closed forms and invariants. The congestion
//! controls' own laws on scripted inputs are in `transport::roce::tests`.

mod common;

use common::{refused, run};
use spillway_core::engine::run::Run;
use spillway_core::output::flows::FlowRecords;

/// Senders 1..=3 and receiver 0 at 10 Gbit/s, a leaf-spine of two racks, 1 us links.
const FABRIC: &str = r#"
[topology]
kind = "leaf_spine"
racks = 2
hosts_per_rack = 2
spines = 1
link_rate = "10Gbps"
link_delay = "1us"
[switch]
kind = "cioq"
flow_control = "pfc"
buffer = "1MB"
[transport]
kind = "roce"
"#;

/// A k = 4 fat tree of lossless CIOQ switches at 10 Gbit/s with RoCE hosts (its
/// `[transport]` section open).
const FAT4: &str = "[topology]\nkind = \"fat_tree\"\nk = 4\nlink_rate = \"10Gbps\"\n\
    link_delay = \"1us\"\n[switch]\nkind = \"cioq\"\nflow_control = \"pfc\"\n\
    buffer = \"256KB\"\n[transport]\nkind = \"roce\"\n";

/// `text` with `overrides` run to its end as a parallel-capable run (`run.partitions`),
/// its flow records taken as they stream out, then its counters.
fn run_all(text: &str, overrides: &[String]) -> (Vec<FlowRecords>, Run) {
    let sc = spillway_core::config::Scenario::parse(text, overrides, None).unwrap();
    let mut r = Run::new(&sc).unwrap();
    let mut flows = Vec::new();
    loop {
        let done = r.step(20_000);
        flows.push(r.take_flows());
        if done {
            return (flows, r);
        }
    }
}

fn with(extra: &str) -> String {
    format!("{FABRIC}{extra}")
}

/// One flow of `size` from host 3 (across the spine) to host 0.
fn lone(size: &str) -> String {
    format!("[workload]\nkind = \"trace\"\nflows = [{{ src = 3, dst = 0, size = \"{size}\" }}]\n")
}

const CCS: [(&str, &str); 4] = [
    ("none", "switch.ecn=off"),
    ("dcqcn", "switch.ecn=red"),
    ("hpcc", "switch.ecn=off"),
    ("dctcp", "switch.ecn=red"),
];

/// Must-show 1: a lone flow is at line rate from its first packet (no slow start) under
/// every control but HPCC, so it finishes in exactly its ideal time; HPCC settles its rate
/// where U = η, R = η·B + W_AI (HPCC §3.3's fixed point; on an idle path u = R/B), within
/// the few round trips its FCT shows.
#[test]
fn a_lone_flow_runs_at_line_rate() {
    for (cc, ecn) in CCS {
        let r = run(&with(&lone("2MB")), &[&format!("transport.cc={cc}"), ecn]);
        let f = &r.flows;
        assert_eq!(f.fct_ps.len(), 1);
        let (fct, ideal) = (f.fct_ps[0], f.ideal_fct_ps[0]);
        if cc == "hpcc" {
            let expect = 10e9 / (0.95 * 10e9 + 50e6);
            let ratio = fct as f64 / ideal as f64;
            assert!((ratio - expect).abs() < 0.002, "{ratio} vs {expect}");
            // Its data and ACKs carry 42 B of telemetry: the ideal counts them.
            let plain = run(&with(&lone("2MB")), &["transport.cc=none"]);
            assert!(ideal > plain.flows.ideal_fct_ps[0]);
        } else {
            assert_eq!(fct, ideal, "{cc}");
        }
        assert_eq!(r.sim.counters().drops, 0);
    }
}

/// Jain's fairness index of the bytes each flow had acknowledged in (a, b] ps.
fn jain(r: &mut common::Run, flows: usize, a: u64, b: u64) -> f64 {
    let ft = r.sim.take_flow_throughput();
    let mut x = vec![0f64; flows];
    for i in 0..ft.time_ps.len() {
        if ft.time_ps[i] > a && ft.time_ps[i] <= b {
            x[ft.flow_id[i] as usize] += ft.bytes[i] as f64;
        }
    }
    let (s, q): (f64, f64) = (x.iter().sum(), x.iter().map(|v| v * v).sum());
    assert!(s > 0.0);
    s * s / (flows as f64 * q)
}

/// Must-show 1: two flows on one bottleneck (hosts 2 and 3, same path, to host 0), the
/// second joining 1 ms after the first, share it fairly once converged: Jain's index of
/// their goodput over 8..14 ms. DCQCN converges with the HPCC simulator's notification
/// point (a CNP on every marked packet's ACK) or with the DCQCN paper's timers; with the
/// simulator's timers and one CNP per 50 us (the defaults) both flows get one CNP a period
/// whatever their rates, so their ratio holds (docs/mechanisms.md § RoCE): that is
/// asserted too.
#[test]
fn two_flows_converge_to_fair_shares() {
    let text = with(
        "[workload]\nkind = \"trace\"\nflows = [{ src = 2, dst = 0, size = \"20MB\" }, \
         { src = 3, dst = 0, size = \"20MB\", start = \"1ms\" }]\n",
    );
    let cases: [(&str, &[&str]); 6] = [
        ("none", &["switch.ecn=off"]),
        ("hpcc", &["switch.ecn=off"]),
        ("dctcp", &["switch.ecn=red"]),
        (
            "dcqcn",
            &["switch.ecn=red", "transport.dcqcn_cnp_interval=0us"],
        ),
        (
            "dcqcn",
            &[
                "switch.ecn=red",
                "transport.dcqcn_rate_ai=40Mbps",
                "transport.dcqcn_increase_interval=55us",
                "transport.dcqcn_alpha_interval=55us",
                "transport.dcqcn_fast_recovery=5",
            ],
        ),
        ("dcqcn", &["switch.ecn=red"]),
    ];
    for (k, (cc, extra)) in cases.iter().enumerate() {
        let mut o = vec![
            format!("transport.cc={cc}"),
            "run.flow_throughput_interval=100us".into(),
        ];
        o.extend(extra.iter().map(|s| s.to_string()));
        let o: Vec<&str> = o.iter().map(|s| s.as_str()).collect();
        let mut r = run(&text, &o);
        let j = jain(&mut r, 2, 8_000_000_000, 14_000_000_000);
        if k < 5 {
            assert!(j > 0.99, "{cc} {extra:?}: Jain {j}");
        } else {
            assert!(j < 0.99, "{cc} at the defaults: Jain {j}");
        }
        assert_eq!(r.sim.counters().drops, 0);
    }
}

/// Hosts 1, 2, 3 each send `size` to host 0 at once.
fn incast(size: &str) -> String {
    format!(
        "[workload]\nkind = \"trace\"\nflows = [{{ src = 1, dst = 0, size = \"{size}\" }}, \
         {{ src = 2, dst = 0, size = \"{size}\" }}, {{ src = 3, dst = 0, size = \"{size}\" }}]\n"
    )
}

/// The port of the receiver's rack switch that faces host 0: the incast's bottleneck.
fn bottleneck(p: &spillway_core::output::ports::PortRecords) -> usize {
    (0..p.node.len())
        .find(|&i| p.is_switch[i] && p.peer[i] == 0)
        .unwrap()
}

/// Must-show 1: HPCC keeps the bottleneck's queue near zero (HPCC §3: "near-zero queue")
/// while the link runs near η, where PFC alone fills the buffer and pauses, and DCQCN
/// holds a queue past its RED thresholds.
#[test]
fn hpcc_keeps_the_queue_near_zero_at_eta() {
    let o = ["run.queue_sample_interval=1us"];
    let go = |cc: &str, ecn: &str| {
        let mut v = vec![format!("transport.cc={cc}"), ecn.to_string()];
        v.extend(o.iter().map(|s| s.to_string()));
        let v: Vec<&str> = v.iter().map(|s| s.as_str()).collect();
        run(&with(&incast("4MB")), &v)
    };
    let h = go("hpcc", "switch.ecn=off");
    let k = bottleneck(&h.ports);
    let p = &h.ports;
    let bdp = 10e9 / 8.0 * 12e-6; // 15 KB: 10 Gbit/s over the ~12 us round trip
    assert!(
        p.queue_p99_bytes[k] as f64 <= 0.2 * bdp,
        "{}",
        p.queue_p99_bytes[k]
    );
    assert!(p.mean_bytes[k] < 0.1 * bdp, "{}", p.mean_bytes[k]);
    assert_eq!(p.pause_frames_sent.iter().sum::<u64>(), 0);
    // The link ran near η: its bytes over the time it had work.
    let end = *h.flows.finish_ps.iter().max().unwrap();
    let util = p.sent_bytes[k] as f64 * 8.0 / (end as f64 * 1e-12) / 10e9;
    assert!(util > 0.9 && util < 0.97, "{util}");
    assert!(h.sim.counters().ecn_reductions > 10);
    // PFC alone: the buffer fills, pauses go upstream.
    let n = go("none", "switch.ecn=off");
    let p = &n.ports;
    assert!(p.mean_bytes[k] > 0.5 * 1e6, "{}", p.mean_bytes[k]);
    assert!(p.pause_frames_sent.iter().sum::<u64>() > 10);
    // DCQCN: a standing queue past kmin (40 KB at 10 Gbit/s), no pauses.
    let d = go("dcqcn", "switch.ecn=red");
    let p = &d.ports;
    assert!(p.queue_p50_bytes[k] > 40_000, "{}", p.queue_p50_bytes[k]);
    assert_eq!(p.pause_frames_sent.iter().sum::<u64>(), 0);
    assert!(d.sim.counters().ecn_marks > 100);
    for r in [&h, &n, &d] {
        assert_eq!(r.flows.finish_ps.len(), 3);
        assert!(r.flows.finish_ps.iter().all(|&t| t != u64::MAX));
        assert_eq!(r.sim.counters().drops, 0);
    }
}

/// Go-back-N on a lossy fabric: output-queued switches with a small buffer drop, the
/// receivers NACK, the senders resend from the hole; every byte arrives once, in order.
#[test]
fn go_back_n_recovers_every_loss_on_a_lossy_fabric() {
    let text = format!(
        "{}{}",
        FABRIC.replace(
            "kind = \"cioq\"\nflow_control = \"pfc\"\nbuffer = \"1MB\"",
            "buffer = \"30KB\""
        ),
        incast("1MB")
    );
    let r = run(&text, &["transport.cc=none"]);
    let c = r.sim.counters();
    assert!(c.drops > 10, "{}", c.drops);
    assert!(
        c.retransmits > c.drops,
        "go-back-N resends more than it lost: {} drops, {} retransmits, {} timeouts",
        c.drops,
        c.retransmits,
        c.timeouts
    );
    assert!(r.flows.finish_ps.iter().all(|&t| t != u64::MAX));
    assert_eq!(r.flows.finish_ps.len(), 3);
    // Every byte reached its receiver once, in order (the receiver takes nothing else).
    assert_eq!(c.bytes_offered, 3 << 20);
    assert_eq!(c.bytes_delivered, c.bytes_offered);
    assert_eq!(r.flows.delivered_bytes, r.flows.size_bytes);
    assert!(
        c.host_received_data_bytes > c.bytes_offered,
        "duplicates arrived too"
    );
}

/// The same scenario and seed give identical records, and a run cut into processes gives
/// the same records on any number of threads, for each congestion control.
#[test]
fn roce_runs_are_deterministic_for_any_thread_count() {
    let text = format!(
        "{FAT4}[workload]\nkind = \"poisson\"\nload = 0.6\ncdf = \"websearch\"\nmax_flows = 120\n"
    );
    let text = text.as_str();
    for (cc, ecn) in CCS {
        let go = |extra: &[&str]| {
            let mut o = vec![format!("transport.cc={cc}"), ecn.to_string()];
            o.extend(extra.iter().map(|s| s.to_string()));
            let (flows, r) = run_all(text, &o);
            let mut out: String = flows.iter().map(|f| format!("{f:?}\n")).collect();
            out.push_str(&format!("{:?}\n{:?}\n", r.counters(), r.port_records()));
            let n = flows.iter().map(|f| f.flow_id.len()).sum::<usize>();
            let open = flows
                .iter()
                .flat_map(|f| f.finish_ps.iter())
                .filter(|&&t| t == u64::MAX)
                .count();
            (out, n, open)
        };
        let one = go(&[]);
        assert_eq!((one.1, one.2), (120, 0), "{cc}: every flow finishes");
        assert!(one == go(&[]), "{cc}: the same seed differs");
        let cut1 = go(&["run.partitions=4", "run.threads=1"]);
        let cut2 = go(&["run.partitions=4", "run.threads=2"]);
        assert_eq!(cut1.1, 120);
        assert!(cut1 == cut2, "{cc}: 2 threads differ from 1");
        let other = go(&["run.seed=7"]);
        assert!(other.0 != one.0, "{cc}: the seed changes nothing");
    }
}

#[test]
fn roce_refuses_what_it_cannot_run() {
    let t = with(&lone("1MB"));
    let (k, m) = refused(&t, &["transport.cc=dcqcn"]);
    assert_eq!(k, "transport.cc");
    assert!(m.contains("switch.ecn"), "{m}");
    let (k, _) = refused(&t, &["transport.cc=hpcc", "switch.ecn=red"]);
    assert_eq!(k, "switch.ecn");
    let (k, _) = refused(&t, &["transport.cc=none", "switch.ecn=red"]);
    assert_eq!(k, "transport.ecn");
    let (k, _) = refused(&t, &["transport.cc=none", "switch.overflow=fastlane"]);
    assert_eq!(k, "switch.overflow");
    let (k, _) = refused(&t, &["transport.cc=none", "switch.forwarding=spray"]);
    assert_eq!(k, "switch.forwarding");
    let (k, _) = refused(&t, &["transport.cc=none", "host.nic_drop=local"]);
    assert_eq!(k, "host.nic_drop");
    let (k, _) = refused(&t, &["transport.cc=none", "host.gro=true"]);
    assert_eq!(k, "host.gro");
    let (k, _) = refused(&t, &["transport.cc=hpcc", "transport.hpcc_eta=0"]);
    assert_eq!(k, "transport.hpcc_eta");
    let (k, _) = refused(&t, &["transport.cc=none", "transport.roce_min_rate=20Gbps"]);
    assert_eq!(k, "transport.roce_min_rate");
    let (k, _) = refused(&t, &["transport.cc=bbr"]);
    assert_eq!(k, "transport.cc");
    // A fixed timeout within the base round trip (about 17 us here) would fire for every
    // packet: refused, naming the round trip.
    let (k, m) = refused(&t, &["transport.cc=none", "transport.rto_min=10us"]);
    assert_eq!(k, "transport.rto_min");
    assert!(m.contains("base round trip"), "{m}");
}

/// HPCC's telemetry crosses a cut link with its packet (engine/mailbox.rs): a lone flow
/// across the pods of a fat tree cut into them finishes exactly as in the whole fabric,
/// its rate set from the same records.
#[test]
fn hpcc_telemetry_crosses_processes_with_its_packets() {
    let text = format!(
        "{FAT4}cc = \"hpcc\"\n[workload]\nkind = \"trace\"\nflows = [{{ src = 0, dst = 15, size = \"3MB\" }}, \
         {{ src = 5, dst = 14, size = \"1MB\", start = \"1ms\" }}]\n"
    );
    let go = |o: &[&str]| {
        let o: Vec<String> = o.iter().map(|s| s.to_string()).collect();
        let (flows, r) = run_all(&text, &o);
        let mut v: Vec<(u64, u64)> = flows
            .iter()
            .flat_map(|f| f.flow_id.iter().copied().zip(f.fct_ps.iter().copied()))
            .collect();
        v.sort();
        (v, r.counters().ecn_reductions)
    };
    let whole = go(&[]);
    assert_eq!(whole.0.len(), 2);
    assert!(whole.1 > 0, "HPCC reacted to its records");
    assert_eq!(go(&["run.partitions=4", "run.threads=2"]), whole);
}
