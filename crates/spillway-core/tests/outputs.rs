//! The outputs every scheme can ask for: queue occupancy sampled over time (percentiles
//! per port), per-flow goodput per interval, and a periodic ping's RTTs. Checked against
//! closed forms (a NIC draining a window, an idle path's RTT, a lone flow at line rate),
//! against the samples taken by hand, and against the rest of the run, which sampling
//! must not change.

mod common;

use common::{refused, run, scenario};
use spillway_core::engine::Sim;
use spillway_core::output::flow_throughput::FlowThroughputRecords;
use spillway_core::output::pings::PingRecords;
use spillway_core::output::ports::PortRecords;
use spillway_core::output::ColumnRef;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const NONE: u64 = u64::MAX;

/// A run to its end, with every table (flows, queries, ports, flow throughput, pings),
/// as text to compare.
struct Everything {
    flows: String,
    queries: String,
    ports: PortRecords,
    counters: String,
    end: (u64, &'static str),
    throughput: FlowThroughputRecords,
    pings: PingRecords,
}

fn everything(text: &str, base: Option<&Path>, overrides: &[String]) -> Everything {
    let sc = spillway_core::config::Scenario::parse(text, overrides, base)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Sim::new(&sc).unwrap();
    let (mut flows, mut queries) = (String::new(), String::new());
    let mut throughput = FlowThroughputRecords::default();
    let mut pings = PingRecords::default();
    loop {
        // Small steps, so that rows handed out along the way are gathered too.
        let done = sim.step(50_000);
        let f = sim.take_flows();
        for i in 0..f.len() {
            flows.push_str(&format!(
                "{} {} {} {} {} {} {}\n",
                f.flow_id[i],
                f.finish_ps[i],
                f.retransmits[i],
                f.timeouts[i],
                f.drops[i],
                f.delivered_bytes[i],
                f.duplicate_bytes[i]
            ));
        }
        for q in sim.take_queries() {
            queries.push_str(&format!("{q:?}\n"));
        }
        let t = sim.take_flow_throughput();
        throughput.time_ps.extend(t.time_ps);
        throughput.flow_id.extend(t.flow_id);
        throughput.bytes.extend(t.bytes);
        let p = sim.take_pings();
        pings.src.extend(p.src);
        pings.dst.extend(p.dst);
        pings.sent_ps.extend(p.sent_ps);
        pings.rtt_ps.extend(p.rtt_ps);
        if done {
            break;
        }
    }
    let mut c = sim.counters().clone();
    c.events = 0; // the samples are events
    Everything {
        flows,
        queries,
        ports: sim.port_records(),
        counters: format!("{c:?}"),
        end: (sim.now(), sim.stop_reason().as_str()),
        throughput,
        pings,
    }
}

/// Every column of ports.parquet but the sampled queue's, as text.
fn port_columns_but_queue(p: &PortRecords) -> String {
    let mut out = String::new();
    for (name, c) in p.columns() {
        if name.starts_with("queue_") {
            continue;
        }
        let v = match c {
            ColumnRef::U64(v) => format!("{v:?}"),
            ColumnRef::U32(v) => format!("{v:?}"),
            ColumnRef::U8(v) => format!("{v:?}"),
            ColumnRef::F64(v) => format!("{:?}", v.iter().map(|x| x.to_bits()).collect::<Vec<_>>()),
            ColumnRef::Bool(v) => format!("{v:?}"),
        };
        out.push_str(&format!("{name} {v}\n"));
    }
    out
}

fn examples() -> Vec<PathBuf> {
    fn walk(d: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "toml") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples"),
        &mut out,
    );
    out.sort();
    out
}

/// Sampling reads the network and changes nothing in it: every example (FIFO and
/// pFabric queues, CIOQ switches with flow control, FastLane, CP, Turbo...) gives the
/// same flows, queries, counters (the events aside), ports and end with every sampler on,
/// at intervals that fall between and on top of other events, as with none.
#[test]
fn sampling_changes_no_result() {
    let examples = examples();
    assert!(examples.len() > 20);
    for path in examples {
        let text = std::fs::read_to_string(&path).unwrap();
        // Samplers off in the reference run, whatever the example asks for; its pings
        // (if any) start within the 3 ms.
        let mut base: Vec<String> = [
            "run.duration=3ms",
            "run.queue_sample_interval=off",
            "run.flow_throughput_interval=off",
            "run.timeseries_interval=off",
        ]
        .map(String::from)
        .to_vec();
        if text.contains("[ping]") {
            base.push("ping.start=0us".into());
        }
        let mut sampled = base.clone();
        sampled.extend(
            [
                "run.queue_sample_interval=1us",
                "run.flow_throughput_interval=7777ns",
                "run.timeseries_interval=13us",
            ]
            .map(String::from),
        );
        let a = everything(&text, path.parent(), &base);
        let b = everything(&text, path.parent(), &sampled);
        let name = path.display();
        assert!(a.flows == b.flows, "{name}: flows differ");
        assert!(a.queries == b.queries, "{name}: queries differ");
        assert_eq!(a.counters, b.counters, "{name}");
        assert_eq!(a.end, b.end, "{name}");
        assert!(
            port_columns_but_queue(&a.ports) == port_columns_but_queue(&b.ports),
            "{name}: ports differ"
        );
        // Off, the columns say "none"; on, every port was sampled every microsecond.
        assert!(a.ports.queue_samples.iter().all(|&n| n == NONE));
        assert!(a.ports.queue_p50_bytes.iter().all(|&n| n == NONE));
        assert!(a.throughput.is_empty());
        let n = b.ports.queue_samples[0];
        assert!(
            n > 0 && b.ports.queue_samples.iter().all(|&m| m == n),
            "{name}"
        );
        assert!(n <= b.end.0 / 1_000_000, "{name}");
        for k in 0..b.ports.len() {
            let p = &b.ports;
            let q = [
                p.queue_p50_bytes[k],
                p.queue_p90_bytes[k],
                p.queue_p99_bytes[k],
                p.queue_p999_bytes[k],
            ];
            assert!(q.windows(2).all(|w| w[0] <= w[1]), "{name}: {q:?}");
            // A sample is never above the port's highest occupancy (within the
            // histogram's 1/128).
            assert!(q[3] <= p.max_bytes[k] + p.max_bytes[k] / 128, "{name}");
        }
        assert!(!b.throughput.is_empty(), "{name}");
    }
}

/// Host 0 hands its NIC a whole window at time 0 (100 full segments, TCP Small Queues
/// off), which it then drains at line rate while nothing else is sent through it: at time
/// t, 100 - (⌊t / T⌋ + 1) frames of 1538 B wait, T = 1538 B at 10 Gb/s. Samples every
/// 1.000003 us (never on a frame boundary) have that value, and their percentiles come out
/// of ports.parquet: zeros exactly, others within 1/128. The switch port the frames cross
/// at the same rate never holds one (they pass straight through).
#[test]
fn a_nic_draining_a_window_has_the_percentiles_of_its_closed_form() {
    let text = r#"
[topology]
kind = "star"
hosts = 2
link_rate = "10Gbps"
link_delay = "1us"
[host]
nic_flow_limit = "off"
[transport]
init_cwnd = 100
[workload]
kind = "trace"
flows = [{ src = 0, dst = 1, size = "146000B" }]
[run]
queue_sample_interval = "1000003ps"
"#;
    let r = run(text, &[]);
    assert_eq!(r.flows.timeouts[0], 0);
    let p = &r.ports;
    let t_frame = 1538 * 800u64;
    let n = p.queue_samples[0];
    let end = r.sim.now();
    // One sample every interval while the flow lasts.
    assert!(
        n.abs_diff(end / 1_000_003) <= 1,
        "{n} samples over {end} ps"
    );
    let truth: Vec<u64> = (1..=n)
        .map(|k| {
            let started = (k * 1_000_003 / t_frame + 1).min(100);
            (100 - started) * 1538
        })
        .collect();
    assert_eq!(p.max_bytes[0], 99 * 1538, "the same bytes as max_bytes");
    let mut sorted = truth.clone();
    sorted.sort_unstable();
    let expect = |permille: u64| sorted[((n * permille).div_ceil(1000) - 1) as usize];
    let got = [
        p.queue_p50_bytes[0],
        p.queue_p90_bytes[0],
        p.queue_p99_bytes[0],
        p.queue_p999_bytes[0],
    ];
    for (g, k) in got.into_iter().zip([500, 900, 990, 999]) {
        let e = expect(k);
        assert!(e > 0, "the window lasts past p{k}: pick a shorter interval");
        assert!(g.abs_diff(e) * 128 <= e, "p{k}: {g} against {e}");
    }
    // The NIC's percentiles span the ramp: the median near half the window.
    assert!((got[0] as f64 / (99.0 * 1538.0) - 0.5).abs() < 0.06);
    // Host 1's NIC (ACKs only, one at a time) and the switch ports: always empty.
    for k in 1..p.len() {
        assert_eq!(p.queue_samples[k], n);
        assert_eq!(p.queue_p999_bytes[k], 0, "port row {k}");
    }
}

/// On a loaded network, the percentiles ports.parquet reports are those of the samples
/// taken by hand: the run stepped one event at a time, every port's queued bytes read
/// between events, the value at each sample time kept (the state after every event up to
/// it), and the exact nearest-rank percentiles of those compared with the file's.
#[test]
fn percentiles_are_those_of_the_queues_sampled_by_hand() {
    let text = r#"
[topology]
kind = "leaf_spine"
racks = 2
hosts_per_rack = 4
spines = 2
[switch]
buffer = "200KB"
[workload]
kind = "poisson"
cdf = "websearch"
load = 0.7
[run]
duration = "3ms"
"#;
    let every = 3_141_593u64;
    // By hand: with no sampler, so that every step is one of the run's own events.
    let sc = scenario(text, &[]).unwrap();
    let mut sim = Sim::new(&sc).unwrap();
    let mut by_port: Vec<Vec<u64>> = Vec::new();
    let mut state = sim.queued_bytes();
    by_port.resize(state.len(), Vec::new());
    let mut next = every;
    loop {
        let done = sim.step(1);
        // Samples due before this event see the state before it.
        while next < sim.now() || (done && next <= sim.now()) {
            for (k, &b) in state.iter().enumerate() {
                by_port[k].push(b);
            }
            next += every;
        }
        assert_ne!(
            next,
            sim.now(),
            "an event at a sample time: pick another interval"
        );
        if done {
            break;
        }
        state = sim.queued_bytes();
    }
    let r = run(text, &[&format!("run.queue_sample_interval={every}ps")]);
    let p = &r.ports;
    let n = by_port[0].len() as u64;
    assert_eq!(p.queue_samples[0], n);
    let mut busy = 0;
    for (k, samples) in by_port.iter_mut().enumerate() {
        samples.sort_unstable();
        let got = [
            p.queue_p50_bytes[k],
            p.queue_p90_bytes[k],
            p.queue_p99_bytes[k],
            p.queue_p999_bytes[k],
        ];
        for (g, q) in got.into_iter().zip([500u64, 900, 990, 999]) {
            let e = samples[((n * q).div_ceil(1000) - 1) as usize];
            if e < 128 {
                assert_eq!(g, e, "port row {k}, p{q}");
            } else {
                assert!(g.abs_diff(e) * 128 <= e, "port row {k}, p{q}: {g} vs {e}");
            }
        }
        busy += (got[2] > 20_000) as u32;
    }
    assert!(busy > 0, "some port's queue was long 1% of the time");
}

/// A lone flow on an idle star moves at line rate: every whole interval but the first
/// (slow start) and the last carries 100 us of 10 Gb/s in payload (1460 of every 1538
/// wire bytes), within a segment either way; its rows sum to its size.
#[test]
fn a_lone_flow_s_goodput_is_the_line_rate_and_sums_to_its_size() {
    let text = r#"
[topology]
kind = "star"
hosts = 2
[workload]
kind = "trace"
flows = [{ src = 0, dst = 1, size = "10MB" }]
[run]
flow_throughput_interval = "100us"
"#;
    let e = everything(text, None, &[]);
    let t = &e.throughput;
    let size = 10 * 1024 * 1024;
    assert_eq!(t.bytes.iter().sum::<u64>(), size);
    assert!(t.flow_id.iter().all(|&id| id == 0));
    let n = t.len();
    // ~8.8 ms: 88 whole intervals and a last, partial one at the flow's end.
    assert!((85..=92).contains(&n), "{n} rows");
    for (i, &ts) in t.time_ps[..n - 1].iter().enumerate() {
        assert_eq!(ts, (i as u64 + 1) * 100_000_000);
    }
    assert_eq!(
        t.time_ps[n - 1],
        e.end.0,
        "the last row when the record is written"
    );
    let line = 10e9 / 8.0 * 100e-6 * 1460.0 / 1538.0;
    for (i, &b) in t.bytes[1..n - 1].iter().enumerate() {
        assert!(
            (b as f64 - line).abs() <= 2.0 * 1460.0,
            "interval {}: {b} B, line rate {line:.0}",
            i + 1
        );
    }
}

/// Many flows, some cut by drops and timeouts: each finished flow's rows sum to its
/// size, an active flow has a row at every sample from its start to its end (a stalled
/// one with 0 bytes), rows come in time order, and the same scenario gives the same rows.
#[test]
fn every_flow_s_rows_sum_to_its_size_and_cover_its_life() {
    let text = r#"
[topology]
kind = "leaf_spine"
racks = 2
hosts_per_rack = 4
[switch]
buffer = "64KB"
[workload]
kind = "poisson"
cdf = "websearch"
load = 0.8
max_flows = 300
[run]
flow_throughput_interval = "20us"
"#;
    let every = 20_000_000u64;
    let r = run(text, &[]);
    assert_eq!(r.sim.counters().flows_unfinished, 0);
    assert!(r.sim.counters().timeouts > 0, "some flows stall");
    let e = everything(text, None, &[]);
    let again = everything(text, None, &[]);
    assert_eq!(
        format!("{:?}", e.throughput),
        format!("{:?}", again.throughput)
    );
    let t = &e.throughput;
    assert!(t.time_ps.windows(2).all(|w| w[0] <= w[1]));
    let mut per: BTreeMap<u64, Vec<(u64, u64)>> = BTreeMap::new();
    for i in 0..t.len() {
        per.entry(t.flow_id[i])
            .or_default()
            .push((t.time_ps[i], t.bytes[i]));
    }
    let f = &r.flows;
    assert_eq!(per.len(), f.len());
    let mut zeros = 0;
    for i in 0..f.len() {
        let rows = &per[&f.flow_id[i]];
        assert_eq!(
            rows.iter().map(|r| r.1).sum::<u64>(),
            f.size_bytes[i],
            "flow {}",
            f.flow_id[i]
        );
        // A row at each sample after its start, then its last at its end (after the
        // receiver had every byte).
        let (start, finish) = (f.start_ps[i], f.finish_ps[i]);
        let (last, _) = *rows.last().unwrap();
        assert!(last >= finish);
        let samples: Vec<u64> = (start / every + 1..)
            .map(|k| k * every)
            .take_while(|&s| s <= last)
            .collect();
        let times: Vec<u64> = rows[..rows.len() - 1].iter().map(|r| r.0).collect();
        // (A sample at the very time of its end may come before or after its record.)
        let samples = if samples.last() == Some(&last) && times.last() != Some(&last) {
            &samples[..samples.len() - 1]
        } else {
            &samples[..]
        };
        assert_eq!(times, samples, "flow {}", f.flow_id[i]);
        zeros += rows[..rows.len() - 1].iter().filter(|r| r.1 == 0).count();
    }
    assert!(zeros > 0, "a stalled flow shows as 0 bytes");
}

const IDLE_LEAF_SPINE: &str = r#"
[topology]
kind = "leaf_spine"
racks = 2
hosts_per_rack = 2
spines = 2
link_rate = "10Gbps"
link_delay = "1us"
fabric_rate = "40Gbps"
fabric_delay = "500ns"
[workload]
kind = "trace"
flows = [{ src = 0, dst = 1, size = "1KB", start = "50ms" }]
[ping]
interval = "1ms"
start = "500us"
bytes = "64B"
[run]
duration = "10ms"
"#;

/// On an idle network a ping's RTT is twice the path's sum of serialization and
/// propagation: a 64 B IP packet is a 102 B frame (64 + 14 + 4 FCS + 8 preamble + 12
/// gap), 81.6 ns at 10 Gb/s and 20.4 ns at 40 Gb/s. Within a rack: 2 host links; across
/// the spines: 2 host links and 2 fabric links.
#[test]
fn an_idle_ping_takes_twice_the_path_s_serialization_and_propagation() {
    let host_hop = 102 * 800 + 1_000_000u64;
    let fabric_hop = 102 * 200 + 500_000u64;
    for (dst, one_way) in [(1, 2 * host_hop), (3, 2 * host_hop + 2 * fabric_hop)] {
        let e = everything(
            IDLE_LEAF_SPINE,
            None,
            &["ping.src=0".to_string(), format!("ping.dst={dst}")],
        );
        let p = &e.pings;
        assert_eq!(e.end, (10_000_000_000, "duration"));
        assert_eq!(p.len(), 10);
        for i in 0..p.len() {
            assert_eq!((p.src[i], p.dst[i]), (0, dst));
            assert_eq!(p.sent_ps[i], 500_000_000 + i as u64 * 1_000_000_000);
            assert_eq!(p.rtt_ps[i], 2 * one_way, "to host {dst}");
        }
        // Pings are no flows.
        assert!(e.flows.is_empty());
        assert!(e.counters.contains("flows_started: 0"));
    }
    // A full-size ping: 1500 B IP, 1538 B on the wire.
    let e = everything(
        IDLE_LEAF_SPINE,
        None,
        &["ping.src=0", "ping.dst=1", "ping.bytes=1500B"].map(String::from),
    );
    assert_eq!(e.pings.rtt_ps[0], 4 * (1538 * 800 + 1_000_000));
}

/// Pings are ordinary traffic: they wait behind data in a FIFO queue (Fastpass §7.1,
/// Experiment B: 3.56 ms behind a 4 MB TCP queue). Two senders overload host 2's port;
/// host 2 pings host 0, whose replies join that queue. Their RTTs are the idle RTT plus
/// that queue's drain time, which the port's sampled queue bounds; the same holds with
/// the data in class 2 and the ACKs in class 0 (the pings go with the data).
#[test]
fn pings_wait_behind_data_in_a_fifo_queue() {
    let text = r#"
[topology]
kind = "star"
hosts = 3
[switch]
buffer = "1MB"
[workload]
kind = "trace"
flows = [{ src = 0, dst = 2, size = "100MB" }, { src = 1, dst = 2, size = "100MB" }]
[ping]
src = 2
dst = 0
interval = "100us"
start = "5ms"
[run]
duration = "30ms"
queue_sample_interval = "10us"
"#;
    let idle = 4 * (102 * 800 + 1_000_000u64);
    for classes in [
        &[][..],
        &["transport.data_class=2", "transport.ack_class=0"][..],
    ] {
        let o: Vec<String> = classes.iter().map(|s| s.to_string()).collect();
        let e = everything(text, None, &o);
        let p = &e.pings;
        // At 5 ms, 5.1 ms, ... 30 ms (the last one unanswered).
        assert_eq!(p.len(), 251, "{classes:?}");
        let mut rtts: Vec<u64> = p.rtt_ps.iter().copied().filter(|&r| r != NONE).collect();
        assert!(
            rtts.len() >= 245 && p.rtt_ps[250] == NONE,
            "{classes:?}: few losses"
        );
        assert!(rtts.iter().all(|&r| r >= idle));
        rtts.sort_unstable();
        let median_wait = (rtts[rtts.len() / 2] - idle) as f64;
        // Switch port 2 (the star's port to host 2) is row 3 + 2.
        let q = &e.ports;
        let row = 5;
        assert_eq!((q.node[row], q.port[row], q.peer[row]), (3, 2, 2));
        let drain = |b: u64| b as f64 * 800.0;
        // The median wait lies within the queue's sampled spread, and is long: most of a
        // megabyte at 10 Gb/s.
        assert!(
            median_wait >= drain(q.queue_p50_bytes[row]) * 0.7
                && median_wait <= drain(q.queue_p99_bytes[row]) * 1.1,
            "{classes:?}: median wait {median_wait} ps, queue p50 {} B p99 {} B",
            q.queue_p50_bytes[row],
            q.queue_p99_bytes[row]
        );
        assert!(median_wait > 300e6, "{classes:?}: {median_wait} ps");
    }
}

/// The run ends when the flows are done, however many pings are on their way, and a
/// request unanswered then has no RTT; pings never count as flows.
#[test]
fn pings_never_keep_the_run_going() {
    let text = r#"
[topology]
kind = "star"
hosts = 4
[workload]
kind = "trace"
flows = [{ src = 0, dst = 1, size = "1MB" }]
"#;
    let without = everything(text, None, &[]);
    let with = everything(
        text,
        None,
        &["ping.interval=1us", "ping.src=2", "ping.dst=3"].map(String::from),
    );
    // The flow's path is not the pings': the same flow, the same end.
    assert_eq!(with.flows, without.flows);
    assert_eq!(with.end, without.end);
    assert_eq!(with.end.1, "all_flows_done");
    let p = &with.pings;
    let n = p.len() as u64;
    assert_eq!(
        n,
        with.end.0 / 1_000_000 + 1,
        "a ping every microsecond from 0"
    );
    // Each takes 4.33 us: the last few were still out.
    let pending = p.rtt_ps.iter().filter(|&&r| r == NONE).count();
    assert!((4..=5).contains(&pending), "{pending} unanswered");
    assert!(p.rtt_ps[..p.len() - 5].iter().all(|&r| r == 4_326_400));
    assert!(with.counters.contains("flows_started: 1,"));
}

#[test]
fn pings_and_samples_are_deterministic() {
    let text = format!(
        "{}\n[run]\nduration = \"4ms\"\nqueue_sample_interval = \"3us\"\nflow_throughput_interval = \"50us\"\n[ping]\nsrc = 0\ndst = 9\ninterval = \"20us\"\n",
        r#"
[topology]
kind = "leaf_spine"
racks = 2
hosts_per_rack = 8
[workload]
kind = "poisson"
load = 0.8
"#
    );
    let a = everything(&text, None, &[]);
    let b = everything(&text, None, &[]);
    assert_eq!(format!("{:?}", a.ports), format!("{:?}", b.ports));
    assert_eq!(format!("{:?}", a.throughput), format!("{:?}", b.throughput));
    assert_eq!(format!("{:?}", a.pings), format!("{:?}", b.pings));
    assert_eq!(a.flows, b.flows);
    // At 0, 20 us, ... 4 ms.
    assert!(a.pings.len() == 201 && !a.throughput.is_empty());
    let c = everything(&text, None, &["run.seed=2".to_string()]);
    assert_ne!(format!("{:?}", a.pings), format!("{:?}", c.pings));
}

#[test]
fn bad_ping_and_sampling_keys_are_refused_by_name() {
    let text = r#"
[topology]
kind = "star"
hosts = 4
[workload]
kind = "trace"
flows = [{ src = 0, dst = 1, size = "1MB" }]
"#;
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &["ping.interval=1ms", "ping.src=1", "ping.dst=1"],
            "ping.dst",
            "ping.src",
        ),
        (
            &["ping.interval=1ms", "ping.src=4", "ping.dst=1"],
            "ping.src",
            "no such host",
        ),
        (
            &["ping.interval=1ms", "ping.src=0", "ping.dst=-1"],
            "ping.dst",
            "integer",
        ),
        (&["ping.interval=1ms", "ping.dst=1"], "ping.src", "required"),
        (&["ping.interval=1ms", "ping.src=1"], "ping.dst", "required"),
        (
            &["ping.interval=0ms", "ping.src=0", "ping.dst=1"],
            "ping.interval",
            "positive",
        ),
        (
            &[
                "ping.interval=1ms",
                "ping.src=0",
                "ping.dst=1",
                "ping.bytes=27B",
            ],
            "ping.bytes",
            "28..=1500",
        ),
        (
            &[
                "ping.interval=1ms",
                "ping.src=0",
                "ping.dst=1",
                "ping.bytes=1501B",
            ],
            "ping.bytes",
            "28..=1500",
        ),
        (&["ping.src=0"], "ping.src", "ping.interval, which is off"),
        (
            &["ping.bytes=100B"],
            "ping.bytes",
            "ping.interval, which is off",
        ),
        (
            &[
                "ping.interval=1ms",
                "ping.src=0",
                "ping.dst=1",
                "ping.start=2s",
                "run.duration=1s",
            ],
            "ping.start",
            "after run.duration",
        ),
        (&["ping.interval=fast"], "ping.interval", ""),
        (&["ping.srcs=0"], "ping.srcs", "ping.src"),
        (
            &["run.queue_sample_interval=0ms"],
            "run.queue_sample_interval",
            "positive",
        ),
        (
            &["run.flow_throughput_interval=0us"],
            "run.flow_throughput_interval",
            "positive",
        ),
        (
            &["run.queue_sample_interval=10"],
            "run.queue_sample_interval",
            "unit",
        ),
    ];
    for (o, key, fragment) in cases {
        let (k, msg) = refused(text, o);
        assert_eq!(&k, key, "{o:?}: {msg}");
        assert!(msg.contains(fragment), "{o:?}: {msg}");
    }
    // The error names the value too.
    let e = scenario(text, &["ping.interval=1ms", "ping.src=0", "ping.dst=7"]).unwrap_err();
    assert_eq!(e.value, "7");
    // An unknown section lists the known ones, [ping] among them.
    let e = scenario(&format!("{text}[pings]\nsrc = 1\n"), &[]).unwrap_err();
    assert!(e.message.contains(", ping"), "{}", e.message);
    // Off, nothing of [ping] is in the resolved scenario; on, all of it is.
    let off = scenario(text, &[]).unwrap();
    assert!(off.ping.is_none() && off.resolved.ends_with("[ping]\ninterval = \"off\"\n"));
    let on = scenario(text, &["ping.interval=1ms", "ping.src=0", "ping.dst=3"]).unwrap();
    assert!(on.resolved.contains(
        "[ping]\ninterval = \"1ms\"\nsrc = 0\ndst = 3\nstart = \"0us\"\nbytes = \"64B\"\n"
    ));
}
