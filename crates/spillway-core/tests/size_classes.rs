//! `workload.classes_by_size`: every flow of the workload takes the class its size
//! gives, whatever the kind; background flows keep theirs; strict priority then serves
//! short flows ahead of long ones; bad thresholds are refused with the key.

mod common;

use common::{refused, run, Run};
use spillway_core::workload::{CLASS_BACKGROUND, CLASS_REQUEST, CLASS_RESPONSE};
use std::collections::BTreeSet;

const KB: u64 = 1024;

/// 16 hosts on one 10 Gbps switch.
const STAR: &str = "[topology]\nkind = \"star\"\nhosts = 16\n[switch]\nbuffer = \"1MB\"\n";

fn with(workload: &str) -> String {
    format!("{STAR}[workload]\n{workload}\n")
}

/// The class of a flow of `size` under thresholds `t`, counted here from the key's
/// definition (size ≤ t[k] → class k), not through the simulator's code.
fn expected(t: &[u64], size: u64) -> u8 {
    let mut class = t.len() as u8;
    for (k, &x) in t.iter().enumerate().rev() {
        if size <= x {
            class = k as u8;
        }
    }
    class
}

/// Every flow not in the background has the class its size gives; returns the classes
/// seen.
fn follows_size(r: &Run, t: &[u64]) -> BTreeSet<u8> {
    let f = &r.flows;
    assert!(!f.flow_id.is_empty());
    let mut seen = BTreeSet::new();
    for i in 0..f.flow_id.len() {
        if f.class[i] == CLASS_BACKGROUND {
            continue;
        }
        assert_eq!(
            f.priority[i],
            expected(t, f.size_bytes[i]),
            "flow {} of {} B",
            f.flow_id[i],
            f.size_bytes[i]
        );
        seen.insert(f.priority[i]);
    }
    seen
}

#[test]
fn every_kind_of_workload_marks_each_flow_by_its_size() {
    let t = [10 * KB, 100 * KB, 1024 * KB];
    let key = "classes_by_size = [\"10KB\", \"100KB\", \"1MB\"]";
    // Poisson web search: sizes from 1 packet to 30 MB, all four classes.
    let r = run(
        &with(&format!(
            "kind = \"poisson\"\nload = 0.3\nmax_flows = 600\n{key}"
        )),
        &[],
    );
    assert_eq!(follows_size(&r, &t), BTreeSet::from([0, 1, 2, 3]));
    // A query's request and its responses, each by its own size.
    let r = run(
        &with(&format!(
            "kind = \"partition_aggregate\"\nfanout = 3\nrate = 500\nqueries = 300\n\
             request_size = \"20KB\"\nresponse_sizes = [\"2KB\", \"50KB\", \"2MB\"]\n{key}"
        )),
        &[],
    );
    assert_eq!(follows_size(&r, &t), BTreeSet::from([0, 1, 3]));
    let f = &r.flows;
    assert!((0..f.flow_id.len())
        .filter(|&i| f.class[i] == CLASS_REQUEST)
        .all(|i| f.priority[i] == 1));
    assert!((0..f.flow_id.len())
        .filter(|&i| f.class[i] == CLASS_RESPONSE)
        .any(|i| f.priority[i] == 3));
    // Responses drawn from a CDF, and sequential web requests.
    let r = run(
        &with(&format!(
            "kind = \"request_response\"\ncdf = \"websearch\"\nload = 0.2\nqueries = 300\n{key}"
        )),
        &[],
    );
    assert_eq!(follows_size(&r, &t).len(), 4);
    let r = run(
        &with(&format!(
            "kind = \"sequential\"\nrate = 300\nqueries = 100\nresponse_sizes = [\"4KB\", \"12KB\"]\n{key}"
        )),
        &[],
    );
    assert_eq!(follows_size(&r, &t), BTreeSet::from([0, 1]));
    // FastLane's short and long queries, an incast, a trace.
    let r = run(
        &with(&format!(
            "kind = \"short_long\"\nload = 0.2\nqueries = 200\n{key}"
        )),
        &["topology.hosts=96"],
    );
    // Requests (10 B) and short responses of 2-8 KB in class 0, of 16 and 32 KB in 1,
    // 1 MB responses in 2.
    assert_eq!(follows_size(&r, &t), BTreeSet::from([0, 1, 2]));
    let r = run(
        &with(&format!(
            "kind = \"incast\"\nsenders = 8\nsize = \"64KB\"\nrounds = 3\n{key}"
        )),
        &[],
    );
    assert_eq!(follows_size(&r, &t), BTreeSet::from([1]));
    let r = run(
        &with(&format!(
            "kind = \"trace\"\nflows = [{{src = 0, dst = 1, size = 10240, start = \"0us\"}}, \
             {{src = 2, dst = 3, size = 10241, start = \"0us\"}}, \
             {{src = 4, dst = 5, size = \"5MB\", start = \"10us\"}}]\n{key}"
        )),
        &[],
    );
    assert_eq!(
        follows_size(&r, &t),
        BTreeSet::from([0, 1, 3]),
        "10 KB is class 0, one byte more class 1"
    );
}

/// Background flows are no application's requests: the Poisson background keeps the
/// transport's class, the closed loop `background_class`.
#[test]
fn background_flows_keep_their_classes() {
    let r = run(
        &with(
            "kind = \"poisson\"\nload = 0.1\nmax_flows = 300\nclasses_by_size = [\"100KB\"]\n\
             background_load = 0.1\nbackground_flows = \"50KB\"\nbackground_class = 5",
        ),
        &[],
    );
    follows_size(&r, &[100 * KB]);
    let f = &r.flows;
    let bg: BTreeSet<(u64, u8)> = (0..f.flow_id.len())
        .filter(|&i| f.class[i] == CLASS_BACKGROUND)
        .map(|i| (f.size_bytes[i], f.priority[i]))
        .collect();
    assert!(bg.contains(&(50 * KB, 5)), "closed loop: {bg:?}");
    assert!(
        bg.iter().any(|&(s, p)| s != 50 * KB && p == 0),
        "Poisson background, transport's class: {bg:?}"
    );
    assert!(bg
        .iter()
        .all(|&(s, p)| p == if s == 50 * KB { 5 } else { 0 }));
}

/// Off (absent or empty) is today's run; with `switch.priorities = false` the classes
/// are recorded and the network ignores them: the same run but for the column.
#[test]
fn off_changes_nothing_and_an_ignoring_network_only_records_the_classes() {
    let text = with("kind = \"poisson\"\nload = 0.5\nmax_flows = 400");
    let dump = |r: &Run| format!("{:?} {:?}", r.flows, r.sim.counters());
    let base = run(&text, &[]);
    assert_eq!(
        dump(&base),
        dump(&run(&text, &["workload.classes_by_size=[]"]))
    );
    let ignored = run(
        &text,
        &[
            "workload.classes_by_size=[\"100KB\"]",
            "switch.priorities=false",
        ],
    );
    follows_size(&ignored, &[100 * KB]);
    let mut f = ignored.flows;
    assert!(f.priority.contains(&1));
    f.priority.iter_mut().for_each(|p| *p = 0);
    assert_eq!(
        format!("{:?} {:?}", f, ignored.sim.counters()),
        dump(&base),
        "everything but the recorded class is as without classes"
    );
}

/// Strict priority, two classes: web-search flows from 15 hosts to one (its switch
/// port 75% loaded, with a 1 MB buffer a long flow's window can fill). Short flows
/// (≤ 100 KB) in class 0 no longer wait behind the long ones' backlog at that port (nor
/// at their senders' NICs): their mean FCT falls to under a third (measured: 837 µs to
/// 158 µs). Long flows pay a little for it (13.4 ms to 13.6 ms).
#[test]
fn short_flows_finish_sooner_in_the_higher_class() {
    let text = with(
        "kind = \"poisson\"\ncdf = \"websearch\"\nload = 0.05\nmax_flows = 1500\n\
         destinations = [0]\nsources = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]",
    );
    let means = |overrides: &[&str]| {
        let r = run(&text, overrides);
        let f = &r.flows;
        let (mut short, mut long) = (Vec::new(), Vec::new());
        for i in 0..f.flow_id.len() {
            let fct = f.fct_ps[i] as f64;
            if f.size_bytes[i] <= 100 * KB {
                short.push(fct)
            } else {
                long.push(fct)
            }
        }
        let mean = |v: &Vec<f64>| v.iter().sum::<f64>() / v.len() as f64;
        assert!(short.len() > 500 && long.len() > 100);
        (mean(&short), mean(&long))
    };
    let (short_one, long_one) = means(&[]);
    let (short_two, long_two) = means(&["workload.classes_by_size=[\"100KB\"]"]);
    assert!(
        short_two * 3.0 < short_one,
        "short flows: {short_two:.0} ps in class 0, {short_one:.0} ps in one class"
    );
    // Work is conserved: the long flows lose some, not much.
    assert!(
        long_two < long_one * 1.5,
        "long flows: {long_two:.0} ps in class 1, {long_one:.0} ps in one class"
    );
}

#[test]
fn bad_thresholds_are_refused_with_the_key() {
    let text = with("kind = \"poisson\"\nmax_flows = 10");
    let cases: &[(&str, &str)] = &[
        ("workload.classes_by_size=[\"100KB\", \"10KB\"]", "ascend"),
        ("workload.classes_by_size=[\"10KB\", \"10KB\"]", "ascend"),
        ("workload.classes_by_size=[0]", "positive"),
        ("workload.classes_by_size=[\"0KB\"]", "positive"),
        (
            "workload.classes_by_size=[1, 2, 3, 4, 5, 6, 7, 8]",
            "at most 7",
        ),
        ("workload.classes_by_size=\"100KB\"", "list"),
        ("workload.classes_by_size=[\"ten\"]", ""),
        ("workload.classes_by_size=[-5]", ""),
    ];
    for (o, why) in cases {
        let (key, msg) = refused(&text, &[o]);
        assert_eq!(key, "workload.classes_by_size", "{o}");
        assert!(msg.contains(why), "{o}: {msg}");
    }
    let (key, msg) = refused(
        &with("kind = \"request_response\"\nrate = 100\nqueries = 10\npriorities = 2"),
        &["workload.classes_by_size=[\"100KB\"]"],
    );
    assert_eq!(key, "workload.classes_by_size");
    assert!(msg.contains("workload.priorities"), "{msg}");
    // Seven thresholds, eight classes: accepted.
    run(&text, &["workload.classes_by_size=[1, 2, 3, 4, 5, 6, 7]"]);
}
