//! `switch.ecn = "red"`: DCQCN's RED-style marking at dequeue (the HPCC simulator's
//! `ShouldSendCN`), on output-queued and lossless CIOQ switches, and its thresholds'
//! refusals. The marker's own law (none at or below kmin, all above kmax, the linear
//! probability between, the per-rate defaults) is tested in `switch::marking::red`.

mod common;

use common::{refused, run};
use spillway_core::config::Scenario;
use spillway_core::engine::run::Run;
use spillway_core::switch::config::RedSpec;

/// Three DCTCP senders into host 0 (one in its rack, two across the spine).
const INCAST: &str = r#"
[topology]
kind = "leaf_spine"
racks = 2
hosts_per_rack = 2
spines = 1
link_rate = "10Gbps"
link_delay = "1us"
[switch]
buffer = "1MB"
ecn = "red"
[transport]
kind = "dctcp"
[workload]
kind = "trace"
flows = [{ src = 1, dst = 0, size = "3MB" }, { src = 2, dst = 0, size = "3MB" }, { src = 3, dst = 0, size = "3MB" }]
"#;

fn all_finish(r: &common::Run) -> bool {
    r.flows.finish_ps.len() == 3 && r.flows.finish_ps.iter().all(|&t| t != u64::MAX)
}

#[test]
fn red_marks_only_queues_past_kmin_and_dctcp_follows() {
    // Defaults at 10 Gbit/s: 40 KB and 160 KB. Three senders at line rate overrun the
    // host port at once: it marks, the senders cut, and nothing is lost in 1 MB.
    let r = run(INCAST, &[]);
    let c = r.sim.counters();
    assert!(all_finish(&r));
    assert!(c.ecn_marks > 100, "{}", c.ecn_marks);
    assert!(c.ecn_reductions > 10, "{}", c.ecn_reductions);
    assert_eq!(c.drops, 0);
    // Every mark was counted at a port, and only data packets were marked.
    assert_eq!(r.ports.ecn_marked.iter().sum::<u64>(), c.ecn_marks);
    // Thresholds above the buffer: a queue never leaves more than kmin behind.
    let r = run(INCAST, &["switch.ecn_kmin=2MB", "switch.ecn_kmax=3MB"]);
    assert!(all_finish(&r));
    assert_eq!(r.sim.counters().ecn_marks, 0);
    assert_eq!(r.sim.counters().ecn_reductions, 0);
    // kmax of one byte marks every departure that leaves anything behind: more marks
    // than at the defaults, and no fewer cuts.
    let step = run(INCAST, &["switch.ecn_kmin=0B", "switch.ecn_kmax=1B"]);
    assert!(all_finish(&step));
    let s = step.sim.counters();
    assert!(
        s.ecn_marks > c.ecn_marks,
        "{} vs {}",
        s.ecn_marks,
        c.ecn_marks
    );
    assert!(s.ecn_reductions >= c.ecn_reductions);
}

#[test]
fn red_marks_on_the_lossless_fabric() {
    let over = ["switch.kind=cioq", "switch.flow_control=pfc"];
    let r = run(INCAST, &over);
    let c = r.sim.counters();
    assert!(all_finish(&r));
    assert!(c.ecn_marks > 100, "{}", c.ecn_marks);
    assert!(c.ecn_reductions > 10, "{}", c.ecn_reductions);
    assert_eq!(c.drops, 0);
    // Off, the same run marks nothing (the CIOQ's departures are where RED decides).
    let r = run(
        INCAST,
        &[
            over[0],
            over[1],
            "switch.ecn_kmin=2MB",
            "switch.ecn_kmax=3MB",
        ],
    );
    assert!(all_finish(&r));
    assert_eq!(r.sim.counters().ecn_marks, 0);
}

/// Each port draws from a stream of its own: the same run twice, and cut into its racks
/// (another process holds the spine), marks the same packets.
#[test]
fn red_is_the_same_run_after_run_and_cut_or_whole() {
    let finish = |over: &[&str]| {
        let o: Vec<String> = over.iter().map(|s| s.to_string()).collect();
        let sc = Scenario::parse(INCAST, &o, None).unwrap();
        let mut r = Run::new(&sc).unwrap();
        r.run_to_end();
        let f = r.take_flows();
        (r.partitions().0, f.finish_ps, r.counters().ecn_marks)
    };
    let (p1, a, ma) = finish(&[]);
    let (_, b, mb) = finish(&[]);
    let (p2, cut, mc) = finish(&["run.partitions=auto"]);
    assert_eq!((p1, p2), (1, 2));
    assert_eq!((&a, ma), (&b, mb));
    assert_eq!((&a, ma), (&cut, mc));
    // A different seed draws differently (the marks are random, not a threshold).
    let (_, d, md) = finish(&["run.seed=2"]);
    assert!(d != a || md != ma);
}

#[test]
fn red_defaults_are_the_hpcc_simulators() {
    // Thresholds by each port's rate (tested in switch::marking::red), pmax 0.2.
    let sc = Scenario::parse("[switch]\necn = \"red\"\n", &[], None).unwrap();
    let spec = RedSpec {
        kmin: None,
        kmax: None,
        pmax: 0.2,
    };
    assert_eq!(sc.switch.red, Some(spec));
}

#[test]
fn red_thresholds_are_refused_with_their_key() {
    let base = "[switch]\necn = \"red\"\n";
    let (k, m) = refused(base, &["switch.ecn_kmin=10KB"]);
    assert_eq!(k, "switch.ecn_kmin", "{m}");
    assert!(m.contains("switch.ecn_kmax"), "{m}");
    let (k, m) = refused(base, &["switch.ecn_kmin=100KB", "switch.ecn_kmax=100KB"]);
    assert_eq!(k, "switch.ecn_kmax", "{m}");
    let (k, _) = refused(base, &["switch.ecn_pmax=1.5"]);
    assert_eq!(k, "switch.ecn_pmax");
    let (k, _) = refused(base, &["switch.ecn_pmax=0"]);
    assert_eq!(k, "switch.ecn_pmax");
    let (k, m) = refused("[switch]\necn = \"threshold\"\n", &["switch.ecn_kmax=1MB"]);
    assert_eq!(k, "switch.ecn_kmax", "{m}");
    assert!(m.contains("red"), "{m}");
}
