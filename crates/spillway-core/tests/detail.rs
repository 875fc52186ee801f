//! DeTail's switch (DeTail §5-§7): forwarding and crossbar latency, against closed forms.

mod common;

use common::run;
use spillway_core::units::serialization_ps;

const LONE_FLOW: &str = r#"
[topology]
kind = "star"
hosts = 2
link_rate = "10Gbps"
link_delay = "1us"
[transport]
init_cwnd = 1000
[workload]
kind = "trace"
flows = [{ src = 0, dst = 1, size = "1MB" }]
"#;

/// Store-and-forward tandem stages (serialization of each packet, then a fixed delay):
/// when the last packet has passed them all. A direct recurrence, no closed form.
fn tandem(stages: &[(u64, u64)], packets: &[u64]) -> u64 {
    let mut free = vec![0u64; stages.len()];
    let mut done = 0;
    for &wire in packets {
        let mut t = 0;
        for (i, &(rate, delay)) in stages.iter().enumerate() {
            let start = t.max(free[i]);
            free[i] = start + serialization_ps(wire, rate);
            t = free[i] + delay;
        }
        done = t;
    }
    done
}

/// DeTail §7.1's switch delays: a forwarding engine's fixed delay, and a crossbar that
/// moves a packet in its serialization time at `speedup` times the line rate. A lone
/// flow through one switch takes what the tandem of link, forwarding delay, crossbar
/// and link gives, and the ideal FCT is that tandem.
#[test]
fn a_lone_flow_pays_the_forwarding_delay_and_the_crossbar_once_per_switch() {
    let size = 1u64 << 20;
    let mut packets = vec![1460 + 40 + 38; 718];
    packets.push(size - 718 * 1460 + 40 + 38);
    let g10 = 10_000_000_000;
    let fwd = 3_100_000;
    let base = run(LONE_FLOW, &[]);
    let plain = tandem(&[(g10, 1_000_000), (g10, 1_000_000)], &packets);
    assert_eq!(base.flows.ideal_fct_ps[0], plain);
    let r = run(
        LONE_FLOW,
        &["switch.forwarding_delay=3100ns", "switch.speedup=4"],
    );
    let with = tandem(
        &[(g10, 1_000_000 + fwd), (4 * g10, 0), (g10, 1_000_000)],
        &packets,
    );
    assert_eq!(r.flows.ideal_fct_ps[0], with);
    // The flow runs exactly as much later as the ideal says: every packet goes through
    // the same two delays (the window never limits this flow).
    assert_eq!(
        r.flows.fct_ps[0] - base.flows.fct_ps[0],
        with - plain,
        "fct {} vs {}",
        r.flows.fct_ps[0],
        base.flows.fct_ps[0]
    );
    // One full frame's crossing at 40G is 1538 B x 0.2 ns = 307.6 ns.
    assert_eq!(serialization_ps(1538, 4 * g10), 307_600);
    assert!(with - plain >= fwd + 307_600);
}

/// Rack 0's four hosts each send one long flow to rack 1 over four spines.
const FOUR_SPINES: &str = r#"
[topology]
kind = "leaf_spine"
racks = 2
hosts_per_rack = 4
spines = 4
link_rate = "1Gbps"
link_delay = "2us"
[workload]
kind = "trace"
flows = [{ src = 0, dst = 4, size = "4MB" }, { src = 1, dst = 5, size = "4MB" },
         { src = 2, dst = 6, size = "4MB" }, { src = 3, dst = 7, size = "4MB" }]
"#;

/// DeTail §5.3: adaptive load balancing spreads packets over the equal-cost uplinks by
/// their queues. Four line-rate flows through four uplinks: each uplink carries a
/// quarter of the packets (within 5%), every byte arrives once, no flow times out,
/// and reordering triggers no retransmission (fast retransmit is off with ALB).
#[test]
fn alb_spreads_packets_evenly_over_equal_cost_uplinks() {
    let r = run(FOUR_SPINES, &["switch.forwarding=alb"]);
    assert!(r.flows.finish_ps.iter().all(|&f| f != u64::MAX));
    assert_eq!(r.flows.delivered_bytes, r.flows.size_bytes);
    assert_eq!(r.flows.timeouts.iter().sum::<u32>(), 0);
    assert_eq!(r.flows.retransmits.iter().sum::<u32>(), 0);
    let hosts = 8;
    let leaf0 = hosts; // switches after hosts: leaf0, leaf1, spine0..3
    let uplinks: Vec<u64> = (0..r.ports.len())
        .filter(|&i| r.ports.node[i] == leaf0 && r.ports.peer[i] >= hosts + 2)
        .map(|i| r.ports.enqueued[i])
        .collect();
    assert_eq!(uplinks.len(), 4);
    let total: u64 = uplinks.iter().sum();
    for &u in &uplinks {
        let share = u as f64 / total as f64;
        assert!(
            (share - 0.25).abs() < 0.05 * 0.25,
            "uplink shares {uplinks:?}"
        );
    }
    // Every flow runs at line rate: no two share an uplink's queue for long. (ECMP
    // hashes two of these flows onto one spine with this seed: 2x the time.)
    for i in 0..4 {
        let slowdown = r.flows.slowdown[i];
        assert!(slowdown < 1.05, "flow {i}: slowdown {slowdown}");
    }
    let ecmp = run(FOUR_SPINES, &[]);
    let worst = ecmp.flows.slowdown.iter().cloned().fold(0.0, f64::max);
    assert!(worst > 1.5, "ECMP's collision: worst slowdown {worst}");
}
