//! Identity check for speed work: `cargo run --release -p spillway-core --example digest --
//! <scenario.toml> [key=value ...]` runs a scenario and writes every Rust-level result
//! (flow records, query records, port records, counters, stop reason, end time) as Debug
//! text to stdout, so two builds' outputs can be byte-compared.
use spillway_core::config::Scenario;
use spillway_core::engine::run::Run;
use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = Path::new(&args[0]);
    let text = std::fs::read_to_string(path).unwrap();
    let overrides: Vec<String> = args[1..].to_vec();
    let sc = Scenario::parse(&text, &overrides, path.parent()).unwrap();
    let mut sim = Run::new(&sc).unwrap();
    let mut out = String::new();
    loop {
        let done = sim.step(100_000);
        let f = sim.take_flows();
        out.push_str(&format!("{:?}\n", f));
        for q in sim.take_queries() {
            out.push_str(&format!("{:?}\n", q));
        }
        if done {
            break;
        }
    }
    let mut c = sim.counters();
    c.events = 0; // events may legitimately differ (fewer event types); report separately
    out.push_str(&format!(
        "{:?}\n{:?}\n{}\n{}\n",
        c,
        sim.port_records(),
        sim.now(),
        sim.stop_reason().as_str()
    ));
    print!("{out}");
    eprintln!(
        "events {} hops {}",
        sim.counters().events,
        sim.counters().packet_hops
    );
}
