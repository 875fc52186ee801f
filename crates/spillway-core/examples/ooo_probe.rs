//! Diagnostic for CP Fig. 14 (the two-path experiment): how the two long flows' senders
//! behave, averaged over the run after a 100 ms warm-up, sampled every 10 us of
//! simulated time: congestion window, pipe (RFC 6675: sent, not SACKed, not lost),
//! outstanding bytes (what the receive window limits), time in recovery, smoothed RTT;
//! and, counted after the warm-up, payload-cut packets (PACKs) and recoveries entered.
//! The figure's notes quote these counts.
//!
//! `cargo run --release -p spillway-core --example ooo_probe -- SCENARIO.toml [key=value ...]`
//! with a scenario like `examples/cp/ooo.toml` (flow 0 is S1, flow 1 is S2).
use spillway_core::config::Scenario;
use spillway_core::engine::Sim;

const SAMPLE_PS: u64 = 10_000_000; // 10 us
const WARMUP_PS: u64 = 100_000_000_000; // 100 ms

#[derive(Default, Clone, Copy)]
struct Probe {
    cwnd: f64,
    pipe: f64,
    outstanding: f64,
    recovery: f64,
    srtt: f64,
    /// (PACKs, una) at the end of the warm-up, and the latest seen.
    base: (u32, u64),
    last: (u32, u64),
    recoveries: u32,
    was_in_recovery: bool,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: ooo_probe SCENARIO.toml [key=value ...]");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(path).expect("scenario file readable");
    let sc = Scenario::parse(&text, &args[2..], None).expect("valid scenario");
    let mut sim = Sim::new(&sc).expect("scenario builds");
    let mut probes = [Probe::default(); 2];
    let (mut next, mut samples, mut warm) = (SAMPLE_PS, 0u64, false);
    loop {
        let done = sim.step(1);
        if sim.now() >= next {
            next += SAMPLE_PS;
            if sim.now() >= WARMUP_PS {
                samples += 1;
                for (id, p) in probes.iter_mut().enumerate() {
                    let Some(s) = sim.sender_of(id as u64) else {
                        continue;
                    };
                    p.last = (s.packs().0, s.una());
                    if !warm {
                        p.base = p.last;
                    }
                    p.cwnd += s.cwnd() as f64;
                    p.pipe += s.pipe() as f64;
                    p.outstanding += s.outstanding() as f64;
                    p.recovery += f64::from(u8::from(s.in_recovery()));
                    p.srtt += s.srtt().unwrap_or(0) as f64;
                    if s.in_recovery() && !p.was_in_recovery {
                        p.recoveries += 1;
                    }
                    p.was_in_recovery = s.in_recovery();
                }
                warm = true;
            }
        }
        if done {
            break;
        }
    }
    let n = samples.max(1) as f64;
    let secs = sim.now() as f64 * 1e-12;
    for (i, p) in probes.iter().enumerate() {
        println!(
            "flow {i}: cwnd {:.0} KB pipe {:.0} KB outstanding {:.0} KB in_recovery {:.2} srtt {:.0} us",
            p.cwnd / n / 1024.0,
            p.pipe / n / 1024.0,
            p.outstanding / n / 1024.0,
            p.recovery / n,
            p.srtt / n / 1e6,
        );
        println!(
            "  steady: cuts {} recoveries {} bytes {}",
            p.last.0 - p.base.0,
            p.recoveries,
            p.last.1 - p.base.1
        );
        println!("  goodput {:.0} Mbps", p.last.1 as f64 * 8.0 / secs / 1e6);
    }
}
