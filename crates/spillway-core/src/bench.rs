//! Standard speed benchmarks (`spillway bench`): named scenarios, run to the end,
//! reported as events/s and packet-hops/s.

use crate::config::Scenario;
use crate::engine::Sim;
use std::time::Instant;

/// The benchmarks' scenarios, files a user can run as they are
/// (`spillway run crates/spillway-core/data/bench/incast64.toml`); k = 8 unless
/// overridden (see `overrides`).
const FAT_TREE_WEBSEARCH: &str = include_str!("../data/bench/fattree_websearch.toml");
const INCAST64: &str = include_str!("../data/bench/incast64.toml");
const DETAIL96_STEADY: &str = include_str!("../data/bench/detail96_steady.toml");

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
        "detail96_steady",
        "DeTail's 96 servers at 1G, steady all-to-all queries (2000/s per server, 2/8/32 KB), CIOQ switches with PFC and ALB, 100 ms simulated",
        DETAIL96_STEADY,
    ),
    (
        "detail96_steady_oq",
        "the same workload on output-queued switches (same forwarding delay and speedup), ECMP, no flow control",
        DETAIL96_STEADY,
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
    pub events_per_s: f64,
    pub packet_hops_per_s: f64,
}

pub fn run_benchmark(name: &str) -> Option<BenchResult> {
    let &(name, description, text) = BENCHMARKS.iter().find(|b| b.0 == name)?;
    let set: Vec<String> = overrides(name).iter().map(|s| s.to_string()).collect();
    let sc = Scenario::parse(text, &set, None).expect("benchmark scenarios are valid");
    let mut sim = Sim::new(&sc).expect("benchmark scenarios build");
    let t0 = Instant::now();
    sim.run_to_end();
    let wall = t0.elapsed().as_secs_f64();
    let c = sim.counters();
    Some(BenchResult {
        name: name.to_string(),
        description: description.to_string(),
        events: c.events,
        packet_hops: c.packet_hops,
        flows: c.flows_started,
        sim_time_ps: sim.now(),
        wall_s: wall,
        events_per_s: c.events as f64 / wall,
        packet_hops_per_s: c.packet_hops as f64 / wall,
    })
}
