//! DeTail's workloads (DeTail §8.1): query rates, steady and on/off; response sizes and
//! fan-outs drawn per query; sequential web requests; per-flow priority classes; the
//! closed-loop background; and the scenario checks that come with them.

mod common;

use common::{refused, run, Run};
use spillway_core::units::{PS_PER_MS, PS_PER_S};
use spillway_core::workload::{
    QueryRecord, CLASS_BACKGROUND, CLASS_REQUEST, CLASS_RESPONSE, NO_QUERY,
};
use std::collections::{BTreeMap, BTreeSet};

const KB: u64 = 1024;

/// 16 hosts on one switch at 10 Gbps: queries finish in microseconds, so arrivals are
/// what the tests see.
const STAR: &str = "[topology]\nkind = \"star\"\nhosts = 16\n[switch]\nbuffer = \"1MB\"\n";

fn with(workload: &str) -> String {
    format!("{STAR}[workload]\n{workload}\n")
}

/// Rows of queries with no parent (queries, web requests), by start.
fn top(r: &Run) -> Vec<QueryRecord> {
    let mut q: Vec<QueryRecord> = r
        .queries
        .iter()
        .filter(|q| q.parent.is_none())
        .copied()
        .collect();
    q.sort_by_key(|q| q.start);
    q
}

/// `x` within `k` standard deviations `sd` of `mean`.
fn near(x: f64, mean: f64, sd: f64, k: f64, what: &str) {
    assert!(
        (x - mean).abs() <= k * sd,
        "{what}: {x}, expected {mean} ± {k}·{sd:.2}"
    );
}

/// Counts of `starts` in consecutive windows of `width` ps over [0, end), with
/// `keep(t)` deciding which of each window's times count.
fn counts(starts: &[u64], width: u64, end: u64) -> Vec<u64> {
    let mut c = vec![0u64; (end / width) as usize];
    for &t in starts {
        if let Some(x) = c.get_mut((t / width) as usize) {
            *x += 1;
        }
    }
    c
}

/// A Poisson count's mean and variance are both λ: the windows' total is within 5
/// standard deviations of n·λ, and their variance within 25% of λ.
fn poisson_counts(c: &[u64], lambda: f64, what: &str) {
    let n = c.len() as f64;
    let total: u64 = c.iter().sum();
    near(total as f64, n * lambda, (n * lambda).sqrt(), 5.0, what);
    let m = total as f64 / n;
    let var = c.iter().map(|&x| (x as f64 - m).powi(2)).sum::<f64>() / (n - 1.0);
    near(
        var / lambda,
        1.0,
        0.25 / 5.0,
        5.0,
        &format!("{what}: variance/mean"),
    );
}

#[test]
fn query_arrivals_have_the_rate_given() {
    // 16 clients at 2000 queries/s each: 32,000/s, 4,000 queries in about 125 ms.
    let r = run(
        &with("kind = \"request_response\"\nrate = 2000\nqueries = 4000\nresponse_size = \"2KB\""),
        &[],
    );
    let q = top(&r);
    assert_eq!(q.len(), 4000);
    let starts: Vec<u64> = q.iter().map(|q| q.start).collect();
    // The 4000th arrival of a Poisson process of rate λ is Gamma(4000, λ): mean n/λ,
    // standard deviation √n/λ.
    let lambda = 32_000.0 / PS_PER_S as f64;
    let n = 4000.0;
    near(
        *starts.last().unwrap() as f64,
        n / lambda,
        n.sqrt() / lambda,
        5.0,
        "last arrival",
    );
    // Counts in 1 ms windows: Poisson of mean 32.
    let end = starts.last().unwrap() / PS_PER_MS * PS_PER_MS;
    poisson_counts(&counts(&starts, PS_PER_MS, end), 32.0, "arrivals per ms");
    assert_eq!(r.sim.stop_reason().as_str(), "all_flows_done");
}

/// Query starts of an on/off workload, split into (in bursts, between bursts), each
/// counted per period.
fn phases(r: &Run, period: u64, length: u64, periods: u64) -> (Vec<u64>, Vec<u64>) {
    let mut on = vec![0u64; periods as usize];
    let mut off = vec![0u64; periods as usize];
    for q in top(r) {
        let p = (q.start / period) as usize;
        if p < periods as usize {
            if q.start % period < length {
                on[p] += 1;
            } else {
                off[p] += 1;
            }
        }
    }
    (on, off)
}

#[test]
fn bursts_and_the_steady_rate_between_them_have_their_rates() {
    // Mixed (DeTail §8.1): every 5 ms a 1 ms burst at 10,000 queries/s per client,
    // then 1000/s: 16 clients make 160 queries a burst, 64 in the rest of a period.
    let r = run(
        &with(
            "kind = \"request_response\"\nburst_period = \"5ms\"\nburst_length = \"1ms\"\n\
             burst_rate = 10000\nrate = 1000\nresponse_size = \"2KB\"",
        ),
        &["run.duration=200ms"],
    );
    let (on, off) = phases(&r, 5 * PS_PER_MS, PS_PER_MS, 39);
    poisson_counts(&on, 160.0, "queries a burst");
    poisson_counts(&off, 64.0, "queries between bursts");
    // Bursty: nothing between bursts.
    let r = run(
        &with(
            "kind = \"request_response\"\nburst_period = \"5ms\"\nburst_length = \"1ms\"\n\
             burst_rate = 10000\nresponse_size = \"2KB\"",
        ),
        &["run.duration=200ms"],
    );
    let (on, off) = phases(&r, 5 * PS_PER_MS, PS_PER_MS, 39);
    poisson_counts(&on, 160.0, "queries a burst, bursty");
    assert!(off.iter().all(|&c| c == 0), "{off:?}");
}

/// The flows of each query: (requests, responses), by query id.
fn query_flows(r: &Run) -> BTreeMap<u64, (Vec<usize>, Vec<usize>)> {
    let f = &r.flows;
    let mut m: BTreeMap<u64, (Vec<usize>, Vec<usize>)> = BTreeMap::new();
    for i in 0..f.flow_id.len() {
        if f.query_id[i] == NO_QUERY {
            continue;
        }
        let e = m.entry(f.query_id[i]).or_default();
        match f.class[i] {
            CLASS_REQUEST => e.0.push(i),
            CLASS_RESPONSE => e.1.push(i),
            c => panic!("class {c} in a query"),
        }
    }
    m
}

/// DeTail §8.1's all-to-all queries: each server asks a random other server, a request
/// of 1460 B and a response of 2, 8 or 32 KB with equal probability.
#[test]
fn all_to_all_queries_draw_response_sizes_uniformly() {
    let r = run(
        "[topology]\nkind = \"detail96\"\n[workload]\nkind = \"request_response\"\n\
         request_size = \"1460B\"\nresponse_sizes = [\"2KB\", \"8KB\", \"32KB\"]\nrate = 100\n\
         queries = 3000",
        &[],
    );
    let qf = query_flows(&r);
    assert_eq!(qf.len(), 3000);
    let f = &r.flows;
    let mut by_size: BTreeMap<u64, u64> = BTreeMap::new();
    for (req, resp) in qf.values() {
        assert_eq!((req.len(), resp.len()), (1, 1));
        let (a, b) = (req[0], resp[0]);
        assert_eq!(f.size_bytes[a], 1460);
        assert_ne!(f.src[a], f.dst[a]);
        assert_eq!((f.src[b], f.dst[b]), (f.dst[a], f.src[a]));
        *by_size.entry(f.size_bytes[b]).or_default() += 1;
    }
    assert_eq!(
        by_size.keys().copied().collect::<Vec<_>>(),
        [2 * KB, 8 * KB, 32 * KB]
    );
    // Each count is Binomial(3000, 1/3).
    let sd = (3000.0f64 * (1.0 / 3.0) * (2.0 / 3.0)).sqrt();
    for (&s, &c) in &by_size {
        near(c as f64, 1000.0, sd, 5.0, &format!("responses of {s} B"));
    }
    // Every client asks, and every host is asked.
    let srcs: BTreeSet<u32> = qf.values().map(|(q, _)| f.src[q[0]]).collect();
    let dsts: BTreeSet<u32> = qf.values().map(|(q, _)| f.dst[q[0]]).collect();
    assert_eq!((srcs.len(), dsts.len()), (96, 96));
}

#[test]
fn partition_aggregate_draws_fanouts_and_one_size_per_query() {
    let r = run(
        &with(
            "kind = \"partition_aggregate\"\nfanouts = [2, 5, 10]\n\
             response_sizes = [\"2KB\", \"4KB\"]\nrate = 500\nqueries = 1500\nclients = [0, 1, 2, 3]",
        ),
        &[],
    );
    let f = &r.flows;
    let mut by_fanout: BTreeMap<usize, u64> = BTreeMap::new();
    let rows: BTreeMap<u64, QueryRecord> = r.queries.iter().map(|q| (q.query_id, *q)).collect();
    for (id, (req, resp)) in query_flows(&r) {
        let client = f.src[req[0]];
        assert!(client < 4);
        let workers: BTreeSet<u32> = req.iter().map(|&i| f.dst[i]).collect();
        assert_eq!(workers.len(), req.len(), "distinct workers");
        assert!(!workers.contains(&client));
        assert_eq!(resp.len(), req.len());
        let sizes: BTreeSet<u64> = resp.iter().map(|&i| f.size_bytes[i]).collect();
        assert_eq!(sizes.len(), 1, "one response size per query");
        let row = rows[&id];
        assert_eq!(row.flows as usize, resp.len());
        assert_eq!(row.size_bytes, resp.len() as u64 * *sizes.first().unwrap());
        assert_eq!(row.parent, None);
        *by_fanout.entry(req.len()).or_default() += 1;
    }
    assert_eq!(by_fanout.keys().copied().collect::<Vec<_>>(), [2, 5, 10]);
    let sd = (1500.0f64 * (1.0 / 3.0) * (2.0 / 3.0)).sqrt();
    for (&k, &c) in &by_fanout {
        near(c as f64, 500.0, sd, 5.0, &format!("queries of fan-out {k}"));
    }
}

/// DeTail §8.1.2's sequential workload: front ends 0..8, back ends 8..16.
const SEQUENTIAL: &str = "kind = \"sequential\"\nclients = [0, 1, 2, 3, 4, 5, 6, 7]\n\
    workers = [8, 9, 10, 11, 12, 13, 14, 15]\nrate = 300\nqueries = 300";

#[test]
fn sequential_queries_run_in_series_and_the_web_request_spans_them() {
    let r = run(&with(SEQUENTIAL), &[]);
    let f = &r.flows;
    let qf = query_flows(&r);
    let web = top(&r);
    assert_eq!(web.len(), 300);
    let ids: BTreeSet<u64> = r.queries.iter().map(|q| q.query_id).collect();
    assert_eq!(ids.len(), r.queries.len(), "query ids are unique");
    assert_eq!(r.queries.len(), 300 * 11);
    let mut sizes: BTreeMap<u64, u64> = BTreeMap::new();
    for w in &web {
        assert!(
            !qf.contains_key(&w.query_id),
            "a web request has no flows of its own"
        );
        let mut parts: Vec<&QueryRecord> = r
            .queries
            .iter()
            .filter(|q| q.parent == Some(w.query_id))
            .collect();
        parts.sort_by_key(|q| q.start);
        assert_eq!(parts.len(), 10);
        assert_eq!(parts[0].start, w.start);
        assert_eq!(parts[9].finish, w.finish);
        for p in parts.windows(2) {
            // The next query starts when the previous one's response has arrived.
            assert_eq!(
                p[1].start, p[0].finish,
                "queries of a web request never overlap"
            );
        }
        assert_eq!(
            w.size_bytes,
            parts.iter().map(|p| p.size_bytes).sum::<u64>()
        );
        assert_eq!(w.flows, 10);
        let mut client = None;
        for p in &parts {
            let (req, resp) = &qf[&p.query_id];
            assert_eq!((req.len(), resp.len(), p.flows), (1, 1, 1));
            let (a, b) = (req[0], resp[0]);
            assert_eq!(f.start_ps[a], p.start);
            assert_eq!(f.finish_ps[b], p.finish);
            assert_eq!(f.size_bytes[a], 1460);
            assert_eq!(f.size_bytes[b], p.size_bytes);
            assert!(f.src[a] < 8 && f.dst[a] >= 8, "front end asks back end");
            assert_eq!(*client.get_or_insert(f.src[a]), f.src[a], "one front end");
            *sizes.entry(p.size_bytes).or_default() += 1;
        }
    }
    assert_eq!(
        sizes.keys().copied().collect::<Vec<_>>(),
        [4 * KB, 6 * KB, 8 * KB, 10 * KB, 12 * KB]
    );
    let sd = (3000.0f64 * 0.2 * 0.8).sqrt();
    for (&s, &c) in &sizes {
        near(c as f64, 600.0, sd, 5.0, &format!("queries of {s} B"));
    }
}

#[test]
fn a_query_draws_one_class_for_all_its_flows() {
    let r = run(
        &with("kind = \"partition_aggregate\"\nfanout = 4\npriorities = 2\nrate = 500\nqueries = 2000"),
        &[],
    );
    let f = &r.flows;
    let mut per_class = [0u64; 2];
    for (req, resp) in query_flows(&r).values() {
        let classes: BTreeSet<u8> = req.iter().chain(resp).map(|&i| f.priority[i]).collect();
        assert_eq!(classes.len(), 1, "{classes:?}");
        per_class[*classes.first().unwrap() as usize] += 1;
    }
    let sd = (2000.0f64 * 0.25).sqrt();
    near(per_class[0] as f64, 1000.0, sd, 5.0, "queries of class 0");
    // Sequential: one class per web request.
    let r = run(&with(&format!("{SEQUENTIAL}\npriorities = 8")), &[]);
    let f = &r.flows;
    let mut classes: BTreeMap<u64, BTreeSet<u8>> = BTreeMap::new();
    let parent: BTreeMap<u64, u64> = r
        .queries
        .iter()
        .filter_map(|q| Some((q.query_id, q.parent?)))
        .collect();
    for i in 0..f.flow_id.len() {
        classes
            .entry(parent[&f.query_id[i]])
            .or_default()
            .insert(f.priority[i]);
    }
    assert!(classes.values().all(|c| c.len() == 1));
    let used: BTreeSet<u8> = classes.values().flatten().copied().collect();
    assert_eq!(used, (0..8).collect());
    // One class: the transport's.
    let r = run(
        &with("kind = \"request_response\"\nrate = 500\nqueries = 100"),
        &["transport.data_class=3", "transport.ack_class=4"],
    );
    assert!(r.flows.priority.iter().all(|&p| p == 3));
}

/// Strict priority at every queue: a query's class decides how it fares when the
/// network is loaded. 15 clients ask host 15 at once (8 of them in class 0, 7 in
/// class 1 on average), so its switch port and NIC hold both classes.
#[test]
fn high_priority_queries_finish_first_under_load() {
    let means = |overrides: &[&str]| {
        let r = run(
            &with(
                "kind = \"partition_aggregate\"\nfanout = 1\nworkers = [15]\n\
                 clients = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]\n\
                 response_size = \"64KB\"\npriorities = 2\nrate = 1200\nqueries = 3000",
            ),
            overrides,
        );
        let f = &r.flows;
        let mut fct = [Vec::new(), Vec::new()];
        for i in 0..f.flow_id.len() {
            if f.class[i] == CLASS_RESPONSE {
                fct[f.priority[i] as usize].push(f.fct_ps[i] as f64);
            }
        }
        let mean = |v: &Vec<f64>| v.iter().sum::<f64>() / v.len() as f64;
        (mean(&fct[0]), mean(&fct[1]))
    };
    let (hi, lo) = means(&[]);
    assert!(hi * 2.0 < lo, "class 0: {hi} ps, class 1: {lo} ps");
    // A network that does not serve the classes (`switch.priorities = false`) records
    // them but treats both alike.
    let (hi, lo) = means(&["switch.priorities=false"]);
    assert!(
        (hi / lo - 1.0).abs() < 0.25,
        "class 0: {hi} ps, class 1: {lo} ps"
    );
}

/// DeTail §8.1.2: every host keeps one 1 MB flow running, in the background.
#[test]
fn closed_loop_background_keeps_one_flow_per_host_until_the_workload_ends() {
    let r = run(
        &with(
            "kind = \"request_response\"\nrate = 200\nqueries = 800\nresponse_size = \"8KB\"\n\
             background_flows = \"200KB\"",
        ),
        &[],
    );
    assert_eq!(r.sim.stop_reason().as_str(), "all_flows_done");
    let end = r.queries.iter().map(|q| q.finish).max().unwrap();
    let f = &r.flows;
    let mut chains: BTreeMap<u32, Vec<(u64, u64)>> = BTreeMap::new();
    for i in 0..f.flow_id.len() {
        if f.class[i] == CLASS_BACKGROUND {
            assert_eq!((f.size_bytes[i], f.priority[i]), (200 * KB, 7));
            assert_eq!(f.query_id[i], NO_QUERY);
            assert_ne!(f.src[i], f.dst[i]);
            chains
                .entry(f.src[i])
                .or_default()
                .push((f.start_ps[i], f.finish_ps[i]));
        } else {
            assert_eq!(f.priority[i], 0);
        }
    }
    assert_eq!(chains.len(), 16);
    for (h, c) in &mut chains {
        c.sort();
        // From time 0, each starting as the last arrived: one at a time, never none.
        assert_eq!(c[0].0, 0, "host {h}");
        for w in c.windows(2) {
            assert_eq!(w[1].0, w[0].1, "host {h}");
        }
        let last = c.last().unwrap();
        // The last started while the workload ran, and ended after it did.
        assert!(
            last.0 < end && last.1 >= end,
            "host {h}: {last:?}, workload until {end}"
        );
        assert!(c.len() > 10, "host {h}: {} flows", c.len());
    }
}

/// DeTail §8.2: "each front-end server is constantly engaged in a 1MB background flow to
/// a randomly selected back-end server": only the sources keep flows, each to one of the
/// destinations, all of which are drawn; a destination list holding only the source
/// itself is refused.
#[test]
fn closed_loop_background_from_front_ends_to_back_ends() {
    let r = run(
        &with(
            "kind = \"request_response\"\nrate = 200\nqueries = 400\nresponse_size = \"8KB\"\n\
             background_flows = \"100KB\"\nbackground_sources = [0, 2, 4, 6]\n\
             background_destinations = [1, 3, 5, 7, 4]",
        ),
        &[],
    );
    let f = &r.flows;
    let mut sources = BTreeSet::new();
    let mut destinations = BTreeSet::new();
    for i in 0..f.flow_id.len() {
        if f.class[i] == CLASS_BACKGROUND {
            assert!([0, 2, 4, 6].contains(&f.src[i]));
            assert!([1, 3, 5, 7, 4].contains(&f.dst[i]));
            assert_ne!(f.src[i], f.dst[i]);
            sources.insert(f.src[i]);
            destinations.insert(f.dst[i]);
        }
    }
    assert_eq!(sources, BTreeSet::from([0, 2, 4, 6]));
    assert_eq!(destinations, BTreeSet::from([1, 3, 4, 5, 7]));
    let (key, _) = refused(
        &with("kind = \"request_response\"\nrate = 200\nqueries = 10\nresponse_size = \"8KB\""),
        &[
            "workload.background_flows=1MB",
            "workload.background_sources=[3]",
            "workload.background_destinations=[3]",
        ],
    );
    assert_eq!(key, "workload.background_destinations");
    let (key, _) = refused(
        &with("kind = \"request_response\"\nrate = 200\nqueries = 10\nresponse_size = \"8KB\""),
        &["workload.background_sources=[3]"],
    );
    assert_eq!(key, "workload.background_sources");
}

#[test]
fn background_flows_alone_beside_a_trace_and_with_poisson_background() {
    // The trace generates until its last flow starts, at 1 ms: until then every host
    // keeps a background flow running.
    let trace = "kind = \"trace\"\nflows = [{src = 0, dst = 1, size = \"2MB\", start = \"0us\"}, \
                 {src = 2, dst = 3, size = \"10KB\", start = \"1ms\"}]";
    let r = run(
        &with(&format!(
            "{trace}\nbackground_flows = \"100KB\"\nbackground_class = 2"
        )),
        &[],
    );
    assert_eq!(r.sim.stop_reason().as_str(), "all_flows_done");
    let f = &r.flows;
    let bg: Vec<usize> = (0..f.flow_id.len())
        .filter(|&i| f.class[i] == CLASS_BACKGROUND)
        .collect();
    assert!(bg
        .iter()
        .all(|&i| f.priority[i] == 2 && f.size_bytes[i] == 100 * KB));
    for h in 0..16 {
        let mut c: Vec<(u64, u64)> = bg
            .iter()
            .filter(|&&i| f.src[i] == h)
            .map(|&i| (f.start_ps[i], f.finish_ps[i]))
            .collect();
        c.sort();
        assert_eq!(c[0].0, 0);
        assert!(c.windows(2).all(|w| w[1].0 == w[0].1), "host {h}");
        let last = c.last().unwrap();
        assert!(
            last.0 < PS_PER_MS && last.1 >= PS_PER_MS,
            "host {h}: {last:?}"
        );
    }
    // The Poisson background draws as it did without the closed loop.
    let poisson = |extra: &str| {
        let r = run(
            &with(&format!(
                "kind = \"request_response\"\nrate = 100\nqueries = 200\nbackground_load = 0.2\n{extra}"
            )),
            &[],
        );
        let f = &r.flows;
        (0..f.flow_id.len())
            .filter(|&i| f.class[i] == CLASS_BACKGROUND && f.priority[i] == 0)
            .map(|i| (f.start_ps[i], f.src[i], f.dst[i], f.size_bytes[i]))
            .collect::<BTreeSet<_>>()
    };
    let alone = poisson("");
    let both = poisson("background_flows = \"1MB\"");
    assert!(!alone.is_empty());
    let first: BTreeSet<_> = alone.iter().take(5).collect();
    assert!(
        first.iter().all(|x| both.contains(x)),
        "the first Poisson background flows match"
    );
}

#[test]
fn same_seed_same_records_other_seed_differs() {
    let text = with(&format!(
        "{SEQUENTIAL}\nburst_period = \"10ms\"\nburst_length = \"2ms\"\nburst_rate = 2000\n\
         priorities = 2\nbackground_flows = \"300KB\""
    ));
    let key = |r: &Run| (format!("{:?}", r.flows), format!("{:?}", r.queries));
    let a = run(&text, &[]);
    assert_eq!(key(&a), key(&run(&text, &[])));
    assert_ne!(key(&a), key(&run(&text, &["run.seed=2"])));
}

#[test]
fn workload_keys_are_checked() {
    let rr = with("kind = \"request_response\"\nqueries = 10");
    let pa = with("kind = \"partition_aggregate\"\nqueries = 10");
    let seq = with("kind = \"sequential\"\nqueries = 10");
    let cases: &[(&str, &[&str], &str, &str)] = &[
        (&rr, &["workload.rate=0"], "workload.rate", "workload.load"),
        (
            &rr,
            &["workload.rate=1e30"],
            "workload.rate",
            "queries per second",
        ),
        (
            &rr,
            &["workload.rate=nan"],
            "workload.rate",
            "queries per second",
        ),
        (
            &rr,
            &["workload.rate=-3"],
            "workload.rate",
            "queries per second",
        ),
        (
            &rr,
            &["workload.rate=100", "workload.load=0.3"],
            "workload.load",
            "workload.rate",
        ),
        (
            &rr,
            &["workload.burst_length=1ms"],
            "workload.burst_length",
            "burst_period",
        ),
        (
            &rr,
            &["workload.burst_rate=10"],
            "workload.burst_rate",
            "burst_period",
        ),
        (
            &rr,
            &["workload.burst_period=50ms", "workload.burst_rate=10"],
            "workload.burst_length",
            "missing",
        ),
        (
            &rr,
            &["workload.burst_period=50ms", "workload.burst_length=5ms"],
            "workload.burst_rate",
            "missing",
        ),
        (
            &rr,
            &[
                "workload.burst_period=5ms",
                "workload.burst_length=6ms",
                "workload.burst_rate=10",
            ],
            "workload.burst_length",
            "at most",
        ),
        (
            &rr,
            &[
                "workload.burst_period=0ms",
                "workload.burst_length=0ms",
                "workload.burst_rate=10",
            ],
            "workload.burst_period",
            "positive",
        ),
        (
            &rr,
            &[
                "workload.burst_period=5ms",
                "workload.burst_length=1ms",
                "workload.burst_rate=0",
            ],
            "workload.burst_rate",
            "queries per second",
        ),
        (
            &rr,
            &[
                "workload.burst_period=5ms",
                "workload.burst_length=1ms",
                "workload.burst_rate=9",
                "workload.load=0.5",
            ],
            "workload.load",
            "burst_period",
        ),
        (
            &rr,
            &["workload.response_sizes=[]"],
            "workload.response_sizes",
            "empty",
        ),
        (
            &rr,
            &["workload.response_sizes=[\"0B\"]"],
            "workload.response_sizes",
            "positive",
        ),
        (
            &rr,
            &["workload.response_sizes=[\"2KB\", true]"],
            "workload.response_sizes",
            "size",
        ),
        (
            &rr,
            &["workload.response_sizes=\"2KB\""],
            "workload.response_sizes",
            "list",
        ),
        (
            &rr,
            &[
                "workload.response_sizes=[\"2KB\"]",
                "workload.cdf=websearch",
            ],
            "workload.cdf",
            "not both",
        ),
        (
            &rr,
            &[
                "workload.response_sizes=[\"2KB\"]",
                "workload.response_size=2KB",
            ],
            "workload.response_size",
            "not both",
        ),
        (
            &rr,
            &["workload.fanouts=[2]"],
            "workload.fanouts",
            "does not apply",
        ),
        (
            &pa,
            &["workload.fanouts=[2, 4]", "workload.fanout=4"],
            "workload.fanouts",
            "not both",
        ),
        (
            &pa,
            &["workload.fanouts=[2, 16]"],
            "workload.fanouts",
            "15 workers",
        ),
        (&pa, &["workload.fanouts=[0]"], "workload.fanouts", "1..="),
        (&seq, &["workload.sequence=0"], "workload.sequence", "1..="),
        (
            &seq,
            &["workload.clients=[3]", "workload.workers=[3]"],
            "workload.workers",
            "0 workers",
        ),
        (
            &seq,
            &["workload.cdf=websearch"],
            "workload.cdf",
            "does not apply",
        ),
        (
            &rr,
            &["workload.priorities=0"],
            "workload.priorities",
            "1..=8",
        ),
        (
            &rr,
            &["workload.priorities=9"],
            "workload.priorities",
            "1..=8",
        ),
        (
            &rr,
            &["workload.background_class=3"],
            "workload.background_class",
            "off",
        ),
        (
            &rr,
            &[
                "workload.background_flows=1MB",
                "workload.background_class=8",
            ],
            "workload.background_class",
            "0..=7",
        ),
        (
            &rr,
            &["workload.background_flows=0B"],
            "workload.background_flows",
            "positive",
        ),
        (
            &seq,
            &["workload.queries=off"],
            "run.duration",
            "workload.queries",
        ),
    ];
    for (text, o, key, says) in cases {
        let (k, m) = refused(text, o);
        assert_eq!(&k, key, "{o:?}: {m}");
        assert!(m.contains(says), "{o:?}: {k}: {m}");
    }
    // A single-element list is the fixed value.
    for o in [
        &["workload.fanouts=[3]"][..],
        &["workload.response_sizes=[\"2KB\"]"],
    ] {
        common::scenario(&pa, o).unwrap();
    }
}

/// docs/workloads.md's DeTail scenarios are valid, with the variants their comments give.
#[test]
fn the_documented_detail_scenarios_are_valid() {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/workloads.md"
    ))
    .unwrap();
    let blocks: Vec<&str> = doc
        .split("```toml\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .collect();
    assert_eq!(blocks.len(), 2);
    let variants: [&[&str]; 5] = [
        &[],
        &[
            "workload.burst_period=50ms",
            "workload.burst_length=12.5ms",
            "workload.burst_rate=10000",
            "workload.rate=off",
        ],
        &[
            "workload.burst_period=50ms",
            "workload.burst_length=5ms",
            "workload.burst_rate=10000",
            "workload.rate=500",
        ],
        &["workload.priorities=2"],
        &["workload.response_sizes=[\"2KB\", \"8KB\"]"],
    ];
    for o in variants {
        common::scenario(blocks[0], o).unwrap_or_else(|e| panic!("{o:?}: {e}"));
    }
    common::scenario(blocks[1], &[]).unwrap();
    let pa = blocks[1].replace("kind = \"sequential\"", "kind = \"partition_aggregate\"");
    common::scenario(
        &pa,
        &[
            "workload.fanouts=[10, 20, 40]",
            "workload.response_sizes=[\"2KB\"]",
            "workload.burst_rate=1000",
        ],
    )
    .unwrap();
}
