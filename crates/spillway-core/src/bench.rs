//! Standard speed benchmarks (`spillway bench`): named scenarios, run to the end,
//! reported as events/s and packet-hops/s.

use crate::config::{Scenario, ScenarioError};
use crate::engine::run::Run;
use spillway_arbiter::cputime::process_cpu_seconds;
use std::time::Instant;

/// The benchmarks' scenarios, files a user can run as they are
/// (`spillway run crates/spillway-core/data/bench/incast64.toml`); k = 8 unless
/// overridden (see `overrides`).
const FAT_TREE_WEBSEARCH: &str = include_str!("../data/bench/fattree_websearch.toml");
const INCAST64: &str = include_str!("../data/bench/incast64.toml");
const DETAIL96_STEADY: &str = include_str!("../data/bench/detail96_steady.toml");
const PFABRIC144_WEBSEARCH: &str = include_str!("../data/bench/pfabric144_websearch.toml");
const FASTPASS144_WEBSEARCH: &str = include_str!("../data/bench/fastpass144_websearch.toml");
const FATTREE16_PERMUTATION: &str = include_str!("../data/bench/fattree16_permutation.toml");

/// Overrides of a benchmark's scenario text, by name.
fn overrides(name: &str) -> &'static [&'static str] {
    match name {
        "fattree_dctcp" => &[
            "transport.kind=dctcp",
            "switch.ecn=threshold",
            "switch.ecn_threshold=99970B",
        ],
        // The same simulated time as k = 8: per-hop cost grows with the state a run
        // accumulates (flows, packets in flight), so a shorter run flatters k = 16.
        "fattree16_websearch" => &["topology.k=16"],
        "detail96_steady_oq" => &[
            "switch.kind=oq",
            "switch.flow_control=none",
            "switch.forwarding=ecmp",
        ],
        _ => &[],
    }
}

/// (name, description, scenario text)
pub const BENCHMARKS: &[(&str, &str, &str)] = &[
    (
        "incast64",
        "star, 64 senders x 64 KB to one receiver, 10G, 128 KB buffers, 100 rounds",
        INCAST64,
    ),
    (
        "fattree_websearch",
        "fat_tree k=8 (128 hosts), 10G, Poisson web search at load 0.6, 20 ms simulated",
        FAT_TREE_WEBSEARCH,
    ),
    (
        "fattree_dctcp",
        "the same with DCTCP (K = 65 full-size packets), the setting htsim's speed is quoted for",
        FAT_TREE_WEBSEARCH,
    ),
    (
        "fattree16_websearch",
        "fat_tree k=16 (1024 hosts), 10G, Poisson web search at load 0.6, 20 ms simulated (per-hop cost at scale)",
        FAT_TREE_WEBSEARCH,
    ),
    (
        "fattree16_dctcp_permutation",
        "fat_tree k=16 (1024 hosts), 10G, DCTCP, a permutation of 1 GB flows (every host sends one and receives one), 10 ms simulated (steady full load)",
        FATTREE16_PERMUTATION,
    ),
    (
        "detail96_steady",
        "DeTail's 96 servers at 1G, steady all-to-all queries (2000/s per server, 2/8/32 KB), CIOQ switches with PFC and ALB, 100 ms simulated",
        DETAIL96_STEADY,
    ),
    (
        "detail96_steady_oq",
        "the same workload on output-queued switches (same forwarding delay and speedup), ECMP, no flow control",
        DETAIL96_STEADY,
    ),
    (
        "pfabric144_websearch",
        "pfabric144 (144 hosts, 10G edge, 40G core), pFabric queues (12000 B) and transport, Poisson web search at load 0.6, 40 ms simulated",
        PFABRIC144_WEBSEARCH,
    ),
    (
        "fastpass144_websearch",
        "pfabric144 with Fastpass (endpoint queues, arbiter on host 143 over in-band FCP) under TCP, Poisson web search at load 0.6, 20 ms simulated",
        FASTPASS144_WEBSEARCH,
    ),
];

#[derive(Debug, Clone)]
pub struct BenchResult {
    pub name: String,
    pub description: String,
    pub events: u64,
    pub packet_hops: u64,
    pub flows: u64,
    pub sim_time_ps: u64,
    pub wall_s: f64,
    /// CPU seconds of every thread of the run (wall time times the threads kept busy).
    pub cpu_s: f64,
    /// Logical processes and threads (`run.partitions`, `run.threads`).
    pub partitions: u32,
    pub threads: u32,
    pub events_per_s: f64,
    pub packet_hops_per_s: f64,
    /// A parallel run's windows, packets across cut links, and wall seconds its threads
    /// waited at barriers (summed over threads); zeros for a whole run.
    pub windows: u64,
    pub parcels: u64,
    pub barrier_wait_s: f64,
}

pub fn run_benchmark(name: &str) -> Option<BenchResult> {
    run_benchmark_with(name, &[]).map(|r| r.expect("benchmark scenarios are valid"))
}

/// Benchmark `name` with `extra` overrides (`key=value`) after its own, e.g. a shorter
/// `run.duration` for a profiler: None for an unknown name, the scenario's error for a
/// bad override.
pub fn run_benchmark_with(
    name: &str,
    extra: &[String],
) -> Option<Result<BenchResult, ScenarioError>> {
    let &(name, description, text) = BENCHMARKS.iter().find(|b| b.0 == name)?;
    let mut set: Vec<String> = overrides(name).iter().map(|s| s.to_string()).collect();
    set.extend(extra.iter().cloned());
    Some(measure(name, description, text, &set))
}

fn measure(
    name: &str,
    description: &str,
    text: &str,
    set: &[String],
) -> Result<BenchResult, ScenarioError> {
    let sc = Scenario::parse(text, set, None)?;
    let mut sim = Run::new(&sc)?;
    let (t0, cpu0) = (Instant::now(), process_cpu_seconds());
    sim.run_to_end();
    let wall = t0.elapsed().as_secs_f64();
    let cpu = process_cpu_seconds() - cpu0;
    let c = sim.counters();
    let (partitions, threads) = sim.partitions();
    let st = sim.parallel_stats().cloned().unwrap_or_default();
    Ok(BenchResult {
        name: name.to_string(),
        description: description.to_string(),
        events: c.events,
        packet_hops: c.packet_hops,
        flows: c.flows_started,
        sim_time_ps: sim.now(),
        wall_s: wall,
        cpu_s: cpu,
        partitions,
        threads,
        events_per_s: c.events as f64 / wall,
        packet_hops_per_s: c.packet_hops as f64 / wall,
        windows: st.windows,
        parcels: st.parcels,
        barrier_wait_s: st.barrier_wait_s,
    })
}

/// The pFabric queue micro-benchmark's queue lengths (`spillway bench pfabric_queue`),
/// and its ops per length and serve order.
pub const QUEUE_BENCH_LENGTHS: &[usize] = &[8, 64, 512, 4096];
pub const QUEUE_BENCH_OPS: u64 = 1_000_000;

/// One row of the pFabric queue micro-benchmark.
#[derive(Debug, Clone)]
pub struct QueueBenchRow {
    /// Packets queued (the buffer holds exactly this many full-size packets).
    pub packets: usize,
    /// `switch.serve_order`.
    pub order: &'static str,
    /// `queue`: the queue as it runs (a vector up to 32 packets, the indexed structure
    /// beyond); `linear`: the vector alone, the linear queue it replaced.
    pub form: &'static str,
    pub ops: u64,
    /// Arrivals that evicted a queued packet (the others were themselves the victim).
    pub evictions: u64,
    pub ns_per_op: f64,
}

/// The pFabric queue's cost against its length (issue 27): a queue kept full at each of
/// [`QUEUE_BENCH_LENGTHS`] packets (1538 B each, 64 flows, random priorities), and per
/// op an arrival at the full buffer (it evicts the least urgent packet, or is itself
/// the victim), a dequeue, and an arrival into the room it left. `ops` per length and
/// serve order, and for the linear queue it replaced (the vector alone) in arrival
/// order, at most 20,000 ops there (its ops are slow at 4096); reported as wall time per
/// op.
pub fn pfabric_queue_bench(ops: u64) -> Vec<QueueBenchRow> {
    use crate::rng::Rng;
    use crate::switch::discipline::pfabric::{Entry, PFabricQueue, ServeOrder};
    use std::hint::black_box;
    const WIRE: u32 = 1538;
    const FLOWS: usize = 64;
    let mut rows = Vec::new();
    for (order, name, form, small_max) in [
        (ServeOrder::Arrival, "arrival", "queue", None),
        (ServeOrder::Sequence, "sequence", "queue", None),
        (ServeOrder::Arrival, "arrival", "linear", Some(usize::MAX)),
    ] {
        for &n in QUEUE_BENCH_LENGTHS {
            let mut rng = Rng::new(27, n as u64);
            let mut seq = [0u64; FLOWS];
            // Arrivals drawn in advance: the timed loop runs only the queue. One flow in
            // eight sends a retransmission (a lower sequence number) now and then.
            let arrivals: Vec<Entry> = (0..4096u32)
                .map(|i| {
                    let flow = rng.below(FLOWS as u64) as usize;
                    let s = if rng.below(8) == 0 {
                        seq[flow] / 2
                    } else {
                        seq[flow] += 1460;
                        seq[flow]
                    };
                    Entry {
                        pkt: i,
                        class: 0,
                        prio: rng.below(1 << 20),
                        flow: flow as u64,
                        seq: s,
                        wire: WIRE,
                        in_port: 0,
                    }
                })
                .collect();
            let capacity = n as u64 * WIRE as u64;
            let mut q = match small_max {
                Some(m) => PFabricQueue::with_small(order, m),
                None => PFabricQueue::new(order),
            };
            let (mut bytes, mut evicted) = (0u64, Vec::with_capacity(4));
            let mut next = 0usize;
            let mut arrival = || {
                next = (next + 1) % arrivals.len();
                arrivals[next]
            };
            while q.len() < n {
                q.enqueue(arrival(), &mut bytes, capacity, &mut evicted);
            }
            let ops = if form == "linear" {
                ops.min(20_000)
            } else {
                ops
            };
            let mut evictions = 0u64;
            let t0 = std::time::Instant::now();
            for _ in 0..ops {
                evicted.clear();
                black_box(q.enqueue(arrival(), &mut bytes, capacity, &mut evicted));
                evictions += evicted.len() as u64;
                black_box(q.dequeue(&mut bytes, 0));
                black_box(q.enqueue(arrival(), &mut bytes, capacity, &mut evicted));
            }
            let wall = t0.elapsed().as_secs_f64();
            rows.push(QueueBenchRow {
                packets: n,
                order: name,
                form,
                ops,
                evictions,
                ns_per_op: wall * 1e9 / ops as f64,
            });
        }
    }
    rows
}
