//! Parallel runs (`run.partitions`, `run.threads`; docs/architecture.md § Parallel runs):
//! the same output for every thread count, the same results as a whole run where the
//! cut cannot matter (flows that never meet), the run's truths kept (workloads that
//! react to completions, lossless fabrics, the samplers), and refusals that name the
//! key.

use spillway_core::config::Scenario;
use spillway_core::engine::run::Run;
use spillway_core::output::flows::FlowRecords;
use spillway_core::workload::QueryRecord;
use std::path::Path;

/// Everything a run writes, as text (the `digest` example's content and the samplers'
/// and pinger's rows): records streamed as the run goes, the counters, every port's
/// record (with its queue samples), the end.
fn digest(sc: &Scenario) -> String {
    let mut r = Run::new(sc).unwrap();
    let mut out = String::new();
    loop {
        // A small budget: records stream out over many calls, as from Python.
        let done = r.step(20_000);
        out.push_str(&format!("{:?}\n", r.take_flows()));
        for q in r.take_queries() {
            out.push_str(&format!("{q:?}\n"));
        }
        out.push_str(&format!(
            "{:?}\n{:?}\n{:?}\n",
            r.take_timeseries(),
            r.take_flow_throughput(),
            r.take_pings()
        ));
        if done {
            break;
        }
    }
    out.push_str(&format!(
        "{:?}\n{:?}\n{}\n{}\n{}\n",
        r.counters(),
        r.port_records(),
        r.now(),
        r.stop_reason().as_str(),
        r.stop_detail()
    ));
    out
}

fn parse(text: &str, base: Option<&Path>, overrides: &[String]) -> Option<Scenario> {
    Scenario::parse(text, overrides, base).ok()
}

const THREADS: [u32; 5] = [1, 2, 3, 4, 8];

/// Must-show 1: every example scenario gives byte-identical output for 1, 2, 3, 4 and 8
/// threads (4 ms of each, its samplers on), cut into its pods or racks; a star or a
/// dumbbell stays whole, and only Fastpass is refused (naming the key).
#[test]
fn every_example_gives_the_same_output_for_any_thread_count() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut files: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .flat_map(|e| {
            let p = e.path();
            if p.is_dir() {
                std::fs::read_dir(&p)
                    .unwrap()
                    .flatten()
                    .map(|e| e.path())
                    .collect()
            } else {
                vec![p]
            }
        })
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let (mut ran, mut refused) = (Vec::new(), Vec::new());
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        // 4 ms, or 10 for a scenario whose pings start later.
        let set = |t: u32, ms: u32| {
            vec![
                format!("run.duration={ms}ms"),
                "run.partitions=auto".to_string(),
                format!("run.threads={t}"),
            ]
        };
        let ms = if parse(&text, f.parent(), &set(1, 4)).is_some() {
            4
        } else {
            10
        };
        let Some(sc) = parse(&text, f.parent(), &set(1, ms)) else {
            panic!("{f:?} does not parse");
        };
        match Run::new(&sc) {
            Err(e) => {
                assert!(e.key.contains('.'), "{f:?}: refused without a key: {e}");
                refused.push(f.clone());
                continue;
            }
            Ok(r) if r.partitions().0 == 1 => continue, // a star or dumbbell: whole
            Ok(_) => {}
        }
        let one = digest(&sc);
        assert!(one.contains("flow_id: ["), "{f:?}");
        for t in &THREADS[1..] {
            let sc = parse(&text, f.parent(), &set(*t, ms)).unwrap();
            assert!(digest(&sc) == one, "{f:?}: {t} threads differ from 1");
        }
        ran.push(f.clone());
    }
    // Every example on a fat tree or a leaf-spine (those on a star or a dumbbell are
    // whole; Fastpass's are on a star).
    assert!(refused.is_empty(), "refused {refused:?}");
    assert!(ran.len() >= 24, "ran {ran:?}");
}

/// Runs on a k = 4 fat tree cut into its 4 pods against the whole fabric.
const FAT4: &str = r#"
[topology]
kind = "fat_tree"
k = 4
link_rate = "10Gbps"
link_delay = "1us"
[switch]
buffer = "64KB"
"#;

/// Flows that never share a link or a moment: nothing the cut reorders can touch them,
/// so every record is the whole run's, to the picosecond, pod-local or across cores.
#[test]
fn flows_that_never_meet_are_the_same_cut_or_whole() {
    let text = format!(
        "{FAT4}[workload]\nkind = \"trace\"\nflows = [\
         {{ src = 0, dst = 15, size = \"300KB\" }},\
         {{ src = 1, dst = 2, size = \"40KB\", start = \"5ms\" }},\
         {{ src = 9, dst = 4, size = \"1MB\", start = \"10ms\" }},\
         {{ src = 14, dst = 6, size = \"1460B\", start = \"20ms\" }}]\n"
    );
    let whole = Scenario::parse(&text, &[], None).unwrap();
    let cut = Scenario::parse(&text, &["run.partitions=4".into()], None).unwrap();
    let (mut a, mut b) = (Run::new(&whole).unwrap(), Run::new(&cut).unwrap());
    assert_eq!(b.partitions().0, 4);
    a.run_to_end();
    b.run_to_end();
    let (fa, fb) = (a.take_flows(), b.take_flows());
    assert_eq!(fa.flow_id.len(), 4);
    let mut ids: Vec<usize> = (0..4).collect();
    ids.sort_by_key(|&i| fb.flow_id[i]);
    for (i, &j) in ids.iter().enumerate() {
        let k = fa.flow_id.iter().position(|&x| x == fb.flow_id[j]).unwrap();
        assert_eq!(fa.finish_ps[k], fb.finish_ps[j], "flow {i}");
        assert_eq!(fa.delivered_bytes[k], fb.delivered_bytes[j]);
        assert_eq!(fa.retransmits[k], fb.retransmits[j]);
    }
    let (ca, cb) = (a.counters(), b.counters());
    assert_eq!(ca.packet_hops, cb.packet_hops);
    assert_eq!(ca.bytes_delivered, cb.bytes_delivered);
    assert_eq!(ca.flows_finished, 4);
    assert_eq!(cb.flows_finished, 4);
}

/// A mark decided as a packet leaves (CoDel's, at dequeue) goes with it over a cut link:
/// a lone DCTCP flow queued at its leaf's uplink (10G hosts, a 1G fabric), whose spine
/// is another process's, is marked, slows down, and finishes at the whole run's
/// picosecond. (The packet left the arena when it started on the link, so the mark was
/// lost: no ECN reduction, a different finish.)
#[test]
fn a_mark_made_as_a_packet_leaves_crosses_the_cut() {
    let text = r#"
[topology]
kind = "leaf_spine"
racks = 2
hosts_per_rack = 2
spines = 1
link_rate = "10Gbps"
fabric_rate = "1Gbps"
link_delay = "1us"
[switch]
buffer = "512KB"
ecn = "codel"
[transport]
kind = "dctcp"
[workload]
kind = "trace"
flows = [{ src = 2, dst = 0, size = "2MB" }]
"#;
    let (whole, fw, _) = run_all(text, &[]);
    let (cut, fc, _) = run_all(text, &["run.partitions=auto"]);
    assert_eq!(cut.partitions().0, 2);
    let (cw, cc) = (whole.counters(), cut.counters());
    assert!(cw.ecn_reductions > 10, "{}", cw.ecn_reductions);
    assert_eq!(cc.ecn_reductions, cw.ecn_reductions);
    assert_eq!(fc.finish_ps, fw.finish_ps);
    assert_eq!(cc.packet_hops, cw.packet_hops);
}

/// Load on a cut fabric, many flows meeting at every queue: each finishes, no sooner
/// than it could alone (slowdown >= 1), each byte offered arrives once, and the
/// counters add up as in a whole run.
#[test]
fn a_loaded_cut_fabric_keeps_the_truths() {
    for (topo, parts) in [
        (FAT4.to_string(), "4"),
        (FAT4.to_string(), "2"),
        (
            "[topology]\nkind = \"leaf_spine\"\nracks = 4\nhosts_per_rack = 4\nspines = 2\nlink_delay = \"500ns\"\n[switch]\nbuffer = \"32KB\"\n".to_string(),
            "auto",
        ),
    ] {
        for transport in [
            &[][..],
            &["transport.kind=dctcp", "switch.ecn=threshold"][..],
            &["transport.kind=pfabric", "switch.queue=pfabric"][..],
        ] {
            let text = format!(
                "{topo}[workload]\nkind = \"poisson\"\nload = 0.7\nmax_flows = 400\n"
            );
            let mut o = vec![format!("run.partitions={parts}"), "run.threads=2".to_string()];
            o.extend(transport.iter().map(|s| s.to_string()));
            let sc = Scenario::parse(&text, &o, None).unwrap();
            let mut r = Run::new(&sc).unwrap();
            let mut f = Vec::new();
            while !r.step(50_000) {
                f.push(r.take_flows());
            }
            f.push(r.take_flows());
            let what = format!("{transport:?} on {parts} partitions of {topo}");
            assert_eq!(r.stop_reason().as_str(), "all_flows_done", "{what}");
            let c = r.counters();
            let n: usize = f.iter().map(|x| x.flow_id.len()).sum();
            assert_eq!(n, 400, "{what}");
            assert_eq!(c.flows_finished, 400, "{what}");
            assert_eq!(c.flows_unfinished, 0, "{what}");
            assert_eq!(c.bytes_delivered, c.bytes_offered, "{what}");
            let mut ids: Vec<u64> = f.iter().flat_map(|x| x.flow_id.clone()).collect();
            ids.sort();
            assert_eq!(ids, (0..400).collect::<Vec<u64>>(), "{what}: each once");
            for x in &f {
                for i in 0..x.flow_id.len() {
                    assert!(x.slowdown[i] >= 1.0, "{what}: flow {}", x.flow_id[i]);
                    assert_eq!(x.delivered_bytes[i], x.size_bytes[i], "{what}");
                    assert!(x.finish_ps[i] <= r.now(), "{what}");
                }
            }
            assert_eq!(c.dead_bytes + c.host_received_data_bytes + c.in_flight_data_bytes, c.host_sent_data_bytes, "{what}");
        }
    }
}

#[test]
fn what_a_parallel_run_cannot_do_is_refused_with_its_key() {
    let refused = |text: &str, o: &[&str]| {
        let o: Vec<String> = o.iter().map(|s| s.to_string()).collect();
        let sc = Scenario::parse(text, &o, None).unwrap();
        Run::new(&sc).err().expect("refused")
    };
    let poisson = format!("{FAT4}[workload]\nkind = \"poisson\"\nload = 0.3\nmax_flows = 5\n");
    let e = refused(
        &poisson,
        &[
            "run.partitions=4",
            "host.qdisc=fastpass",
            "fastpass.arbiter=0",
        ],
    );
    assert_eq!(e.key, "host.qdisc", "{e}");
    assert!(e.message.contains("parallel run"), "{e}");
    let e = refused(&poisson, &["run.partitions=5"]);
    assert_eq!(e.key, "run.partitions", "{e}");
    let star = "[topology]\nkind = \"star\"\nhosts = 4\n[workload]\nkind = \"poisson\"\nload = 0.3\nmax_flows = 5\n";
    let e = refused(star, &["run.partitions=2"]);
    assert_eq!(e.key, "run.partitions");
    assert!(e.message.contains("star"), "{e}");
    // `auto` leaves a star whole.
    let sc = Scenario::parse(star, &["run.partitions=auto".into()], None).unwrap();
    assert_eq!(Run::new(&sc).unwrap().partitions(), (1, 1));
}

/// Runs `text` with overrides `o` to its end; its flow and query records.
fn run_all(text: &str, o: &[&str]) -> (Run, FlowRecords, Vec<QueryRecord>) {
    let o: Vec<String> = o.iter().map(|s| s.to_string()).collect();
    let sc = Scenario::parse(text, &o, None).unwrap();
    let mut r = Run::new(&sc).unwrap();
    let (mut f, mut q) = (FlowRecords::default(), Vec::new());
    loop {
        let done = r.step(30_000);
        let x = r.take_flows();
        for i in 0..x.len() {
            f.push_row(&x, i);
        }
        q.extend(r.take_queries());
        if done {
            return (r, f, q);
        }
    }
}

/// Incast rounds across the cut (senders in every pod, the receiver in one): every
/// round is one query, finished when its last flow's last byte arrived, and the next
/// round starts one lookahead later (the workload, in every process, hears of a
/// completion that late: docs/architecture.md § Parallel runs). Each flow finishes
/// once, no sooner than alone.
#[test]
fn incast_rounds_follow_completions_across_the_cut() {
    let text = format!(
        "{FAT4}[workload]\nkind = \"incast\"\nsenders = 12\nsources = [0, 1, 4, 5, 6, 8, 9, 10, 12, 13, 14, 15]\nreceiver = 2\nsize = \"20480B\"\nrounds = 6\n"
    );
    let (r, f, q) = run_all(&text, &["run.partitions=4", "run.threads=2"]);
    let lookahead = r.parallel_stats().unwrap().lookahead_ps;
    assert_eq!(r.stop_reason().as_str(), "all_flows_done");
    assert_eq!(f.len(), 72);
    assert_eq!(q.len(), 6);
    let mut q = q.clone();
    q.sort_by_key(|x| x.query_id);
    for (k, x) in q.iter().enumerate() {
        let flows: Vec<usize> = (0..f.len())
            .filter(|&i| f.query_id[i] == x.query_id)
            .collect();
        assert_eq!(flows.len(), 12, "round {k}");
        let last = flows.iter().map(|&i| f.finish_ps[i]).max().unwrap();
        let first = flows.iter().map(|&i| f.start_ps[i]).min().unwrap();
        assert_eq!(x.finish, last, "round {k} ends with its last byte");
        assert_eq!(x.start, first, "round {k}: no jitter, every sender at once");
        if k > 0 {
            assert_eq!(x.start, q[k - 1].finish + lookahead, "round {k}");
        }
        for &i in &flows {
            assert!(f.slowdown[i] >= 1.0);
            assert_eq!(f.delivered_bytes[i], 20_480);
        }
    }
}

/// Partition-aggregate queries and DeTail's lossless fabric cut into racks: PFC drops
/// nothing (its pause frames cross the cut like any packet), every request is answered
/// and every query ends with its last response; the same for any thread count.
#[test]
fn queries_on_a_lossless_cut_fabric() {
    let text = r#"
[topology]
kind = "leaf_spine"
racks = 4
hosts_per_rack = 4
spines = 2
link_rate = "1Gbps"
link_delay = "2us"
[switch]
kind = "cioq"
flow_control = "pfc"
[workload]
kind = "partition_aggregate"
fanout = 15
response_size = "32KB"
load = 0.5
background_flows = "100KB"
queries = 150
"#;
    let (r, f, q) = run_all(text, &["run.partitions=auto", "run.threads=2"]);
    assert_eq!(r.partitions().0, 4);
    let c = r.counters();
    assert_eq!(r.stop_reason().as_str(), "all_flows_done");
    assert_eq!(c.drops, 0);
    assert!(c.pause_frames > 0, "the fabric paused");
    assert_eq!(c.flows_unfinished, 0);
    assert_eq!(q.len(), 150);
    for x in &q {
        let last = (0..f.len())
            .filter(|&i| f.query_id[i] == x.query_id)
            .map(|i| f.finish_ps[i])
            .max()
            .unwrap();
        assert_eq!(x.finish, last);
    }
    let sc = |t: &str| {
        Scenario::parse(
            text,
            &["run.partitions=auto".into(), format!("run.threads={t}")],
            None,
        )
        .unwrap()
    };
    assert_eq!(digest(&sc("1")), digest(&sc("3")));
}

/// The samplers in a cut run: every process samples at the same times and the rows add
/// up to the run's (the timeseries' flows started reach the count started); a flow's
/// goodput rows sum to its size; the pinger's source answers every request; a queue
/// sample reads every port of every process.
#[test]
fn samplers_and_pings_read_every_process() {
    let text = format!(
        "{FAT4}[workload]\nkind = \"poisson\"\nload = 0.5\nmax_flows = 300\n\
         [ping]\ninterval = \"50us\"\nsrc = 0\ndst = 13\n\
         [run]\ntimeseries_interval = \"100us\"\nqueue_sample_interval = \"20us\"\nflow_throughput_interval = \"200us\"\n"
    );
    let o: Vec<String> = ["run.partitions=4", "run.threads=2"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let sc = Scenario::parse(&text, &o, None).unwrap();
    let mut r = Run::new(&sc).unwrap();
    r.run_to_end();
    let c = r.counters();
    assert_eq!(c.flows_finished, 300);
    let ts = r.take_timeseries();
    assert!(ts.len() > 10);
    assert!(ts.time_ps.windows(2).all(|w| w[1] == w[0] + 100_000_000));
    assert!(ts.flows_started.windows(2).all(|w| w[1] >= w[0]));
    assert!(*ts.flows_started.last().unwrap() <= 300);
    assert!(ts.active_flows.iter().any(|&a| a > 0));
    let tp = r.take_flow_throughput();
    let flows = r.take_flows();
    for i in 0..flows.len() {
        let id = flows.flow_id[i];
        let sum: u64 = (0..tp.len())
            .filter(|&k| tp.flow_id[k] == id)
            .map(|k| tp.bytes[k])
            .sum();
        assert_eq!(sum, flows.size_bytes[i], "flow {id}'s goodput rows");
    }
    assert!(tp.time_ps.windows(2).all(|w| w[1] >= w[0]), "rows by time");
    let pings = r.take_pings();
    assert!(pings.len() > 10);
    assert!(
        pings.rtt_ps.iter().filter(|&&x| x != u64::MAX).count() > 10,
        "replies came back"
    );
    let ports = r.port_records();
    assert!(ports.len() > 16);
    let sampled: Vec<bool> = (0..ports.len())
        .map(|k| ports.queue_samples[k] > 0)
        .collect();
    assert!(sampled.iter().all(|&s| s), "every port sampled");
    assert!(
        (0..ports.len()).any(|k| ports.queue_p99_bytes[k] > 0),
        "some queue seen holding packets"
    );
}
