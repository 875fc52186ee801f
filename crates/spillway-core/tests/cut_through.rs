//! `switch.cut_through`: against the closed forms. A lone packet crossing n idle
//! switches of one rate takes one serialization, n header times and the propagation; a
//! lone flow's FCT is its packets' serialization at the source plus n header times of
//! its last packet; both are the ideal FCT (slowdown 1). A slow ingress into a faster
//! egress stores and forwards, a fast one into a slower egress cuts through; a packet
//! that finds its egress busy is stored and forwarded; CIOQ switches and a crossbar
//! speedup are refused.

mod common;

use common::{refused, run};
use spillway_core::units::serialization_ps;

const G10: u64 = 10_000_000_000;
/// 1 us per link.
const D: u64 = 1_000_000;
/// The cut-through header with Ethernet framing: 8 B preamble and 14 B MAC header ahead
/// of 40 B of TCP/IP.
const HEADER: u64 = 8 + 14 + 40;

/// `topology` with one flow of `size` bytes from host `src` to host `dst` at time 0,
/// its window never limiting it.
fn lone(topology: &str, src: u32, dst: u32, size: u64) -> String {
    format!(
        "[topology]\n{topology}\nlink_delay = \"1us\"\n[transport]\ninit_cwnd = 10000\n\
         rwnd = \"100MB\"\n[workload]\nkind = \"trace\"\n\
         flows = [{{ src = {src}, dst = {dst}, size = {size} }}]\n"
    )
}

/// (topology, src, dst, switches on the path): all links 10 Gbps, 1 us.
const PATHS: [(&str, u32, u32, u64); 4] = [
    ("kind = \"star\"\nhosts = 2", 0, 1, 1),
    (
        "kind = \"dumbbell\"\nhosts = 4\nfabric_rate = \"10Gbps\"\nfabric_delay = \"1us\"",
        0,
        3,
        2,
    ),
    (
        "kind = \"leaf_spine\"\nracks = 2\nhosts_per_rack = 2\nspines = 2\nfabric_rate = \"10Gbps\"\nfabric_delay = \"1us\"",
        0,
        3,
        3,
    ),
    (
        "kind = \"fat_tree\"\nk = 4\nfabric_rate = \"10Gbps\"\nfabric_delay = \"1us\"",
        0,
        15,
        5,
    ),
];

#[test]
fn a_lone_packet_pays_one_serialization_and_a_header_time_per_switch() {
    for (topo, src, dst, n) in PATHS {
        let text = lone(topo, src, dst, 1000);
        let wire = 1000 + 40 + 38;
        let ct = run(&text, &["switch.cut_through=true"]);
        let f = &ct.flows;
        let expect = serialization_ps(wire, G10) + n * serialization_ps(HEADER, G10) + (n + 1) * D;
        assert_eq!(f.fct_ps[0], expect, "{topo}: {n} switches");
        assert_eq!(f.ideal_fct_ps[0], expect, "{topo}: the ideal");
        assert_eq!(f.slowdown[0], 1.0);
        // Store-and-forward: a serialization per link.
        let sf = run(&text, &[]);
        assert_eq!(
            sf.flows.fct_ps[0],
            (n + 1) * serialization_ps(wire, G10) + (n + 1) * D,
            "{topo}"
        );
        // Without framing, the header is the TCP/IP header alone.
        let bare = run(
            &text,
            &["switch.cut_through=true", "topology.framing_bytes=0"],
        );
        assert_eq!(
            bare.flows.fct_ps[0],
            serialization_ps(1040, G10) + n * serialization_ps(40, G10) + (n + 1) * D,
            "{topo}, no framing"
        );
    }
}

/// 1 MB, 719 packets sent back to back: every one cuts through, so the flow ends a
/// header time per switch after its last byte left the source (plus propagation),
/// which is its ideal.
#[test]
fn a_lone_flow_takes_its_serialization_at_the_source_plus_header_times() {
    let size = 1u64 << 20;
    let full = 1460 + 40 + 38;
    let last = size - 718 * 1460 + 40 + 38;
    for (topo, src, dst, n) in PATHS {
        let r = run(&lone(topo, src, dst, size), &["switch.cut_through=true"]);
        let f = &r.flows;
        let expect = 718 * serialization_ps(full, G10)
            + serialization_ps(last, G10)
            + n * serialization_ps(HEADER, G10)
            + (n + 1) * D;
        assert_eq!(f.fct_ps[0], expect, "{topo}");
        assert_eq!(f.ideal_fct_ps[0], expect, "{topo}");
        assert_eq!(f.slowdown[0], 1.0, "{topo}");
    }
}

/// pFabric's fabric: 10 Gbps hosts, 40 Gbps leaf-spine links. Into the spine the 40G
/// egress is faster than the 10G ingress: the source's leaf stores and forwards (it
/// starts the packet once all of it is in); the spine (40 into 40) and the destination's
/// leaf (40 into 10) cut through, each a 40G header time after the header reaches them.
#[test]
fn a_slow_ingress_into_a_faster_egress_stores_and_forwards() {
    let g40 = 4 * G10;
    let topo = "kind = \"leaf_spine\"\nracks = 2\nhosts_per_rack = 2\nspines = 2\n\
                fabric_rate = \"40Gbps\"\nfabric_delay = \"1us\"";
    let text = lone(topo, 0, 3, 1000);
    let wire = 1078;
    let r = run(&text, &["switch.cut_through=true"]);
    let s10 = serialization_ps(wire, G10);
    let h40 = serialization_ps(HEADER, g40);
    // NIC at 10G, stored at the leaf; the spine and the last leaf cut through (the
    // last leaf's 10G egress ends after the packet's tail is in at 40G); 4 links.
    let expect = s10 + 2 * h40 + s10 + 4 * D;
    assert_eq!(r.flows.fct_ps[0], expect);
    assert_eq!(r.flows.ideal_fct_ps[0], expect);
    // Store-and-forward all the way: two more 40G serializations.
    let sf = run(&text, &[]);
    assert_eq!(
        sf.flows.fct_ps[0],
        2 * s10 + 2 * serialization_ps(wire, g40) + 4 * D
    );
    // A lone flow of many packets: slowdown 1 too (its ideal follows the same rule).
    let r = run(&lone(topo, 0, 3, 3 << 20), &["switch.cut_through=true"]);
    assert_eq!(r.flows.fct_ps[0], r.flows.ideal_fct_ps[0]);
    // And where hosts are faster than the fabric (40 into 10 at the first leaf, 10
    // into 40 at the last), the first leaf cuts through and the last stores.
    let topo = "kind = \"leaf_spine\"\nracks = 2\nhosts_per_rack = 2\nspines = 2\n\
                link_rate = \"40Gbps\"\nfabric_rate = \"10Gbps\"\nfabric_delay = \"1us\"";
    let r = run(&lone(topo, 0, 3, 1000), &["switch.cut_through=true"]);
    let s40 = serialization_ps(wire, g40);
    let h40 = serialization_ps(HEADER, g40);
    let h10 = serialization_ps(HEADER, G10);
    // Leaf 1 starts at h40 (40 in, 10 out); the spine cuts through (10 into 10); leaf
    // 2 stores (10 into 40): its 40G egress starts once the 10G tail is in.
    let expect = h40 + h10 + serialization_ps(wire, G10) + s40 + 4 * D;
    assert_eq!(r.flows.fct_ps[0], expect);
    assert_eq!(r.flows.ideal_fct_ps[0], expect);
}

/// Two single-packet flows into host 0 at once: both headers reach the switch at h + d;
/// one starts at once, the other finds the egress busy, is stored (all in at s + d),
/// and leaves when the first is out, at h + d + s.
#[test]
fn a_packet_that_finds_its_egress_busy_is_stored_and_forwarded() {
    let text = "[topology]\nkind = \"star\"\nhosts = 3\nlink_delay = \"1us\"\n[workload]\n\
                kind = \"trace\"\nflows = [{ src = 1, dst = 0, size = 1000 }, \
                { src = 2, dst = 0, size = 1000 }]\n";
    let r = run(text, &["switch.cut_through=true"]);
    let s = serialization_ps(1078, G10);
    let h = serialization_ps(HEADER, G10);
    let mut fct = r.flows.fct_ps.clone();
    fct.sort();
    assert_eq!(fct, vec![s + h + 2 * D, 2 * s + h + 2 * D]);
    // Store-and-forward: both all in at s + d, one after the other.
    let mut fct = run(text, &[]).flows.fct_ps;
    fct.sort();
    assert_eq!(fct, vec![2 * s + 2 * D, 3 * s + 2 * D]);
}

/// Per-node clocks (`topology.clock_ppm`) make links of one rate a few ppm apart: a
/// lone packet still cuts through every switch (the header time covers the difference),
/// within 1e-4 of the exact clocks' time. A lone flow meets, at a switch whose egress
/// clock is the slower, a backlog that grows by a few ppm a packet: from the first
/// packet that finds the egress busy on, its packets are stored; its ideal, on the same
/// clocks, follows (on the dumbbell's one path: where paths differ, the ideal takes the
/// first, and a flow's hash may take another, other clocks).
#[test]
fn links_a_few_ppm_apart_still_cut_through() {
    let (topo, src, dst, n) = PATHS[1];
    let ppm = ["switch.cut_through=true", "topology.clock_ppm=100"];
    let one = run(&lone(topo, src, dst, 1000), &ppm).flows.fct_ps[0];
    let expect = serialization_ps(1078, G10) + n * serialization_ps(HEADER, G10) + (n + 1) * D;
    assert!(
        (one as f64 / expect as f64 - 1.0).abs() < 1e-4,
        "{one} vs {expect}"
    );
    let text = lone(topo, src, dst, 1 << 20);
    let f = run(&text, &ppm).flows;
    assert_eq!(f.fct_ps[0], f.ideal_fct_ps[0]);
    let sf = run(&text, &["topology.clock_ppm=100"]).flows;
    assert!(
        f.fct_ps[0] <= sf.fct_ps[0],
        "{} vs {}",
        f.fct_ps[0],
        sf.fct_ps[0]
    );
}

#[test]
fn cut_through_is_refused_where_the_switch_stores_anyway() {
    let text = lone(PATHS[0].0, 0, 1, 1000);
    let (key, msg) = refused(&text, &["switch.cut_through=true", "switch.kind=cioq"]);
    assert_eq!(key, "switch.cut_through");
    assert!(msg.contains("cioq"), "{msg}");
    let (key, msg) = refused(&text, &["switch.cut_through=true", "switch.speedup=4"]);
    assert_eq!(key, "switch.cut_through");
    assert!(msg.contains("speedup"), "{msg}");
    let (key, _) = refused(&text, &["switch.cut_through=yes"]);
    assert_eq!(key, "switch.cut_through");
}
