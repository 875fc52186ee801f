//! What the integration tests share: a scenario read with overrides, and run to its end
//! with every table it writes.
#![allow(dead_code)] // each test file uses its own part

use spillway_core::config::Scenario;
use spillway_core::engine::Sim;
use spillway_core::output::flows::FlowRecords;
use spillway_core::output::ports::PortRecords;
use spillway_core::workload::QueryRecord;

/// A finished run: the simulator (its counters, its clock) and its tables.
pub struct Run {
    pub sim: Sim,
    pub flows: FlowRecords,
    pub queries: Vec<QueryRecord>,
    pub ports: PortRecords,
}

/// `text` with `key=value` overrides, as `spillway run --set` gives them.
pub fn scenario(
    text: &str,
    overrides: &[&str],
) -> Result<Scenario, spillway_core::config::ScenarioError> {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Scenario::parse(text, &o, None)
}

/// Runs `text` with `overrides` to its end.
pub fn run(text: &str, overrides: &[&str]) -> Run {
    let sc = scenario(text, overrides).unwrap_or_else(|e| panic!("scenario: {e}"));
    let mut sim = Sim::new(&sc).unwrap();
    sim.run_to_end();
    let flows = sim.take_flows();
    let queries = sim.take_queries();
    let ports = sim.port_records();
    Run {
        sim,
        flows,
        queries,
        ports,
    }
}

/// The key and message a scenario is refused with (it must be).
pub fn refused(text: &str, overrides: &[&str]) -> (String, String) {
    match scenario(text, overrides) {
        Ok(_) => panic!("accepted: {overrides:?}"),
        Err(e) => (e.key, e.message),
    }
}
