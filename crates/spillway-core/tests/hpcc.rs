//! The HPCC simulator's files: a topology.txt and flow.txt written here by a small
//! generator run through the engine, and the fct.txt it writes read back with the
//! fields HPCC's readers take; a lone flow's FCT against the standalone formula.

use spillway_core::config::Scenario;
use spillway_core::engine::run::Run;
use std::path::{Path, PathBuf};

/// A two-tier fabric in HPCC's format: `racks` racks of `per` hosts at 10 Gbit/s under
/// their switches, every rack switch linked to each of `spines` spines at 40 Gbit/s, 1 us
/// links. Switch ids come after the hosts, as HPCC's generators number them; with
/// `switches_first`, before (the file's ids are then not the engine's).
fn topology_txt(racks: u32, per: u32, spines: u32, switches_first: bool) -> String {
    let hosts = racks * per;
    let switches = racks + spines;
    let (host, switch) = if switches_first {
        (switches, 0)
    } else {
        (0, hosts)
    };
    let mut links = Vec::new();
    for h in 0..hosts {
        links.push(format!(
            "{} {} 10000000000bps 1000ns 0",
            host + h,
            switch + h / per
        ));
    }
    for r in 0..racks {
        for s in 0..spines {
            links.push(format!(
                "{} {} 40Gbps 1000ns 0.000000",
                switch + r,
                switch + racks + s
            ));
        }
    }
    let ids: Vec<String> = (0..switches).map(|s| (switch + s).to_string()).collect();
    format!(
        "{} {} {}\n{}\n{}\n",
        hosts + switches,
        switches,
        links.len(),
        ids.join(" "),
        links.join("\n")
    )
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("spillway-hpcc-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn scenario(topology: &str) -> String {
    format!(
        r#"
[topology]
kind = "graph"
{topology}
[switch]
ecn = "threshold"
[transport]
kind = "dctcp"
[workload]
kind = "trace"
format = "hpcc"
file = "flow.txt"
"#
    )
}

const FILE: &str = "file = \"topology.txt\"";

fn run(dir: &Path, text: &str, overrides: &[&str]) -> (Run, Scenario) {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let sc = Scenario::parse(text, &o, Some(dir)).unwrap_or_else(|e| panic!("{e}"));
    let mut r = Run::new(&sc).unwrap();
    r.run_to_end();
    (r, sc)
}

/// fct.txt as HPCC's readers split it: whitespace, fields by position.
fn fct_lines(r: &mut Run, sc: &Scenario) -> Vec<Vec<String>> {
    let mut w = r.fct_writer(sc).expect("run.fct_txt is on");
    w.add(&r.take_flows());
    w.render(r.fabric())
        .lines()
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect()
}

#[test]
fn a_generated_topology_and_flow_file_run_and_fct_txt_reads_back() {
    let d = dir("roundtrip");
    std::fs::write(d.join("topology.txt"), topology_txt(4, 4, 2, true)).unwrap();
    // File ids: switches 0-5, hosts 6-21. Flows between hosts of different racks, one
    // pair twice (source ports 10000, 10001), starts in seconds as HPCC writes them.
    let flows = [
        (6, 21, 3, 100, 200_000, "2.000000000"),
        (7, 12, 3, 100, 5_000, "2.000001000"),
        (6, 21, 3, 100, 30_000, "2.000002500"),
        (15, 8, 3, 100, 1_000_000, "2.000003000"),
    ];
    let mut text = format!("{}\n", flows.len());
    for (s, t, pg, dport, size, start) in flows {
        text.push_str(&format!("{s} {t} {pg} {dport} {size} {start}\n"));
    }
    std::fs::write(d.join("flow.txt"), text).unwrap();
    for variant in ["hpcc", "hpcc9"] {
        let (mut r, sc) = run(&d, &scenario(FILE), &[&format!("run.fct_txt={variant}")]);
        let lines = fct_lines(&mut r, &sc);
        assert_eq!(
            lines.len(),
            4,
            "{variant}: every flow finished and has a line"
        );
        let off = (variant == "hpcc9") as usize;
        let mut sports = Vec::new();
        for l in &lines {
            assert_eq!(l.len(), 8 + off);
            let ip = |s: &str| (u32::from_str_radix(s, 16).unwrap() >> 8) & 0xffff;
            let (src, dst) = (ip(&l[off]), ip(&l[off + 1]));
            let size: u64 = l[off + 4].parse().unwrap();
            let start: u64 = l[off + 5].parse().unwrap();
            let f = flows
                .iter()
                .find(|f| f.4 == size)
                .expect("a flow of the file");
            assert_eq!(
                (src, dst),
                (f.0, f.1),
                "the file's node ids, HPCC's IP encoding"
            );
            let want_start = (f.5.parse::<f64>().unwrap() * 1e9).round() as u64;
            assert_eq!(start, want_start);
            assert_eq!(l[off + 3], "100");
            let (fct, standalone): (u64, u64) =
                (l[off + 6].parse().unwrap(), l[off + 7].parse().unwrap());
            assert!(fct > 0 && standalone > 0 && fct as f64 >= 0.9 * standalone as f64);
            if (src, dst) == (6, 21) {
                sports.push((size, l[off + 2].clone()));
            }
        }
        sports.sort();
        assert_eq!(
            sports,
            [
                (30_000, "10001".to_string()),
                (200_000, "10000".to_string())
            ]
        );
    }
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn a_lone_flow_in_its_first_window_takes_its_standalone_time() {
    let d = dir("lone");
    std::fs::write(d.join("topology.txt"), topology_txt(2, 2, 2, false)).unwrap();
    // Host 0 to host 3 (another rack): 4 hops; 10 full packets, the first window.
    std::fs::write(d.join("flow.txt"), "1\n0 3 3 100 14600 0.000001\n").unwrap();
    for variant in ["hpcc", "hpcc9"] {
        let (mut r, sc) = run(&d, &scenario(FILE), &[&format!("run.fct_txt={variant}")]);
        let l = &fct_lines(&mut r, &sc)[0];
        let off = (variant == "hpcc9") as usize;
        let (fct, standalone): (f64, f64) =
            (l[off + 6].parse().unwrap(), l[off + 7].parse().unwrap());
        let err = (fct - standalone).abs() / standalone;
        // HPCC's own formula counts a packet's serialization at every hop and all the
        // bytes again at the bottleneck, and no ACK's: 4% over the true time here.
        // Parsimon's pipelines the first packet: within rounding.
        let bound = if variant == "hpcc" { 0.05 } else { 0.005 };
        eprintln!(
            "{variant}: fct {fct} ns, standalone {standalone} ns ({:.2}%)",
            100.0 * err
        );
        assert!(
            err < bound,
            "{variant}: fct {fct} ns against standalone {standalone} ns"
        );
    }
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn the_toml_graph_is_the_file_graph() {
    let d = dir("toml");
    let topo = topology_txt(2, 2, 2, false);
    std::fs::write(d.join("topology.txt"), &topo).unwrap();
    std::fs::write(
        d.join("flow.txt"),
        "2\n0 3 3 100 70000 0\n2 1 3 100 9000 0.00001\n",
    )
    .unwrap();
    let mut links = String::new();
    for l in topo.lines().skip(2) {
        let f: Vec<&str> = l.split_whitespace().collect();
        let rate = f[2].replace("10000000000bps", "10Gbps");
        links.push_str(&format!(
            "[[topology.links]]\na = {}\nb = {}\nrate = \"{rate}\"\ndelay = \"{}\"\n",
            f[0], f[1], f[3]
        ));
    }
    let toml = scenario(&format!("switches = [4, 5, 6, 7]\n{links}"));
    let (mut a, _) = run(&d, &scenario(FILE), &[]);
    let (mut b, _) = run(&d, &toml, &[]);
    let (fa, fb) = (a.take_flows(), b.take_flows());
    assert_eq!(fa.finish_ps.len(), 2);
    assert_eq!(fa.finish_ps, fb.finish_ps);
    assert_eq!(fa.acked_ps, fb.acked_ps);
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn malformed_files_are_refused_with_their_line() {
    let d = dir("bad");
    std::fs::write(d.join("topology.txt"), topology_txt(2, 2, 2, false)).unwrap();
    let cases = [
        (
            "2\n0 3 3 100 7300 0\n",
            "flow.txt: 1 flows after the count line",
        ),
        ("1\n0 3 3 100 7300\n", "line 2: 5 fields"),
        ("1\n0 5 3 100 7300 0\n", "line 2: dst 5 is not a host"),
        ("1\n0 3 9 100 7300 0\n", "line 2: pg '9'"),
        ("1\n0 3 3 100 -5 0\n", "line 2: size"),
        ("1\n0 3 3 100 10 soon\n", "line 2: start"),
        ("x\n", "line 1: expected the flow count"),
    ];
    for (text, want) in cases {
        std::fs::write(d.join("flow.txt"), text).unwrap();
        let e = Scenario::parse(&scenario(FILE), &[], Some(&d)).unwrap_err();
        assert_eq!(e.key, "workload.file");
        assert!(e.message.contains(want), "{text:?}: {}", e.message);
    }
    std::fs::write(d.join("flow.txt"), "1\n0 3 3 100 7300 0\n").unwrap();
    std::fs::write(
        d.join("topology.txt"),
        "8 4 3\n4 5 6 7\n0 4 10Gbps 1us 0\n1 4 10Gbps 1us 0\n2 5 10Gbps 1us\n",
    )
    .unwrap();
    let e = Scenario::parse(&scenario(FILE), &[], Some(&d)).unwrap_err();
    assert_eq!(e.key, "topology.file");
    assert!(e.message.contains("line 5"), "{}", e.message);
    std::fs::remove_dir_all(&d).ok();
}
