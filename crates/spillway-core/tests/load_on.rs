//! `workload.load_on`: a load counts the flows' payload (`payload`) or their data's
//! bytes on the wire (`wire`), wherever a load sets a rate: Poisson flows, queries,
//! short_long, the Poisson background. The generated flows offer what the load says,
//! within Poisson statistics; at a fixed flow size, `wire` slows arrivals by exactly the
//! ratio of payload to wire bytes.

mod common;

use common::{refused, scenario};
use spillway_core::rng::{component, Rng};
use spillway_core::units::{Ps, PS_PER_MS, PS_PER_S};
use spillway_core::workload::{NewFlow, Traffic, CLASS_BACKGROUND, CLASS_REQUEST};

/// The flows a scenario's traffic starts before `until` (no flow completes: queries
/// show only their requests), with their start times.
fn arrivals(text: &str, overrides: &[&str], until: Ps) -> Vec<(Ps, NewFlow)> {
    let mut o = vec!["run.duration=1000s"];
    o.extend_from_slice(overrides);
    let sc = scenario(text, &o).unwrap_or_else(|e| panic!("{e}"));
    let seed = sc.run.seed;
    let mut t = Traffic::new(
        &sc.workload,
        &sc.classes,
        sc.background.as_ref(),
        sc.host_count(),
        sc.topology.link_rate,
        Rng::new(seed, component::WORKLOAD),
        Rng::new(seed, component::BACKGROUND),
    );
    let mut out = Vec::new();
    let mut buf = Vec::new();
    while let Some(now) = t.next_time() {
        if now >= until {
            break;
        }
        t.generate(now, &mut buf);
        out.extend(buf.drain(..).map(|f| (now, f)));
    }
    out
}

/// Bytes on the wire of a flow of `size`, counted here from the frame layout (1460 B
/// segments, 40 B of TCP/IP each, `framing` bytes, frames padded to 64 B plus preamble
/// and gap when there is Ethernet framing), not through the simulator's code.
fn wire(size: u64, framing: u64) -> u64 {
    let full = size / 1460;
    let rest = size % 1460;
    let frame = |payload: u64| {
        let ip = payload + 40;
        if framing >= 18 {
            ip.max(46) + framing
        } else {
            ip + framing
        }
    };
    full * frame(1460) + if rest > 0 { frame(rest) } else { 0 }
}

/// The offered bytes (by `weigh`) of `flows` over `span` against the load's bytes:
/// their difference in standard deviations of a compound Poisson sum (variance
/// estimated as Σ w²).
fn deviation(flows: &[(Ps, NewFlow)], weigh: impl Fn(u64) -> u64, target: f64) -> f64 {
    let (sum, sq) = flows.iter().fold((0.0, 0.0), |(s, q), (_, f)| {
        let w = weigh(f.size) as f64;
        (s + w, q + w * w)
    });
    (sum - target) / f64::sqrt(sq)
}

const STAR: &str = "[topology]\nkind = \"star\"\nhosts = 16\n[workload]\n";

/// Web search from 16 hosts at load 0.5 for 400 s: 2.4 M flows, so the offered bytes
/// are known to 0.17% (1σ, measured from the flows' own Σw²), and wire and payload
/// (5.3% apart with Ethernet framing, 2.7% with 1500 B frames) are told apart by more
/// than 10σ (measured: 32σ and 17σ).
#[test]
fn poisson_flows_offer_the_load_in_the_bytes_it_counts() {
    let text = format!("{STAR}kind = \"poisson\"\nload = 0.5");
    let span = 400 * PS_PER_S;
    let target = 0.5 * 16.0 * 10e9 / 8.0 * (span as f64 / PS_PER_S as f64);
    for framing in [38u64, 0] {
        let fr = format!("topology.framing_bytes={framing}");
        let payload = arrivals(&text, &[&fr], span);
        let on_wire = arrivals(&text, &[&fr, "workload.load_on=wire"], span);
        assert!(payload.len() > 2_000_000, "{} flows", payload.len());
        let d = deviation(&payload, |s| s, target);
        assert!(d.abs() < 4.0, "payload: {d:.2} sd off");
        let d = deviation(&on_wire, |s| wire(s, framing), target);
        assert!(d.abs() < 4.0, "wire, framing {framing}: {d:.2} sd off");
        // Each is wrong in the other's terms.
        let d = deviation(&payload, |s| wire(s, framing), target);
        assert!(d > 10.0, "payload's flows on the wire: {d:.2} sd above");
        let d = deviation(&on_wire, |s| s, target);
        assert!(d < -10.0, "wire's flows' payload: {d:.2} sd below");
    }
}

/// The k-th arrival time of `flows` over the k-th of `base`: the same draws (sizes and
/// hosts from the same stream) at a rate scaled by a constant, so every ratio is it.
fn time_ratio(flows: &[(Ps, NewFlow)], base: &[(Ps, NewFlow)]) -> f64 {
    let n = flows.len().min(base.len());
    assert!(n > 1000);
    let r = flows[n - 1].0 as f64 / base[n - 1].0 as f64;
    for k in (n / 10..n).step_by(97) {
        assert_eq!(flows[k].1.size, base[k].1.size);
        let x = flows[k].0 as f64 / base[k].0 as f64;
        assert!((x / r - 1.0).abs() < 1e-9, "arrival {k}: {x} vs {r}");
    }
    r
}

/// One flow size, every kind of load: `wire` stretches arrival times by exactly
/// wire(size) / size.
#[test]
fn at_one_size_wire_slows_arrivals_by_exactly_the_wire_ratio() {
    let dir = std::env::temp_dir().join(format!("spillway-load-on-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cdf = dir.join("one-size.txt");
    std::fs::write(&cdf, "20000 1\n").unwrap();
    let cases = [
        (
            format!("kind = \"poisson\"\ncdf = \"{}\"", cdf.display()),
            20_000u64,
        ),
        (
            "kind = \"request_response\"\nresponse_size = 20000".to_string(),
            20_000,
        ),
        (
            "kind = \"partition_aggregate\"\nfanout = 4\nresponse_sizes = [\"7KB\"]".to_string(),
            7 * 1024,
        ),
        (
            "kind = \"sequential\"\nresponse_sizes = [\"3KB\"]".to_string(),
            3 * 1024,
        ),
        // Long queries only: one response of long_size each.
        (
            "kind = \"short_long\"\nshort_fraction = 0\nlong_size = \"1MB\"".to_string(),
            1 << 20,
        ),
    ];
    for (kind, size) in &cases {
        for framing in [38u64, 0] {
            let text = format!("{STAR}{kind}\nload = 0.4");
            let fr = format!("topology.framing_bytes={framing}");
            let base = arrivals(&text, &[&fr], 200 * PS_PER_MS);
            let on_wire = arrivals(&text, &[&fr, "workload.load_on=wire"], 400 * PS_PER_MS);
            let expect = wire(*size, framing) as f64 / *size as f64;
            let r = time_ratio(&on_wire, &base);
            assert!(
                (r / expect - 1.0).abs() < 1e-9,
                "{kind}, framing {framing}: {r} vs {expect}"
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The Poisson background counts as `load` does, beside any workload (here an incast,
/// which has no load of its own).
#[test]
fn the_background_load_counts_as_the_load_does() {
    let text = format!(
        "{STAR}kind = \"incast\"\nrounds = 1000000\nperiod = \"1s\"\nbackground_load = 0.3"
    );
    let span = 100 * PS_PER_S;
    let target = 0.3 * 16.0 * 10e9 / 8.0 * (span as f64 / PS_PER_S as f64);
    let bg = |o: &[&str]| {
        arrivals(&text, o, span)
            .into_iter()
            .filter(|(_, f)| f.class == CLASS_BACKGROUND)
            .collect::<Vec<_>>()
    };
    let d = deviation(&bg(&[]), |s| s, target);
    assert!(d.abs() < 4.0, "payload: {d:.2} sd");
    let w = bg(&["workload.load_on=wire"]);
    let d = deviation(&w, |s| wire(s, 38), target);
    assert!(d.abs() < 4.0, "wire: {d:.2} sd");
    assert!(deviation(&w, |s| s, target) < -8.0);
}

/// A query workload's requests are not load (only responses are), under either count:
/// the query rate follows the response size alone.
#[test]
fn requests_do_not_count() {
    let text = format!("{STAR}kind = \"request_response\"\nresponse_size = 20000\nload = 0.4");
    let span = 200 * PS_PER_MS;
    for o in [vec![], vec!["workload.load_on=wire"]] {
        let small = arrivals(&text, &o, span);
        let mut o = o.clone();
        o.push("workload.request_size=5000");
        let big = arrivals(&text, &o, span);
        assert!(small.iter().all(|(_, f)| f.class == CLASS_REQUEST));
        assert_eq!(
            small.iter().map(|x| x.0).collect::<Vec<_>>(),
            big.iter().map(|x| x.0).collect::<Vec<_>>()
        );
    }
}

#[test]
fn load_on_is_refused_where_no_load_sets_a_rate() {
    for (text, o) in [
        (format!("{STAR}kind = \"incast\""), vec![]),
        (
            format!("{STAR}kind = \"request_response\"\nrate = 1000\nqueries = 10"),
            vec![],
        ),
        (
            format!("{STAR}kind = \"trace\"\nflows = [{{src = 0, dst = 1, size = 100}}]"),
            vec![],
        ),
        (
            format!("{STAR}kind = \"poisson\"\nmax_flows = 10"),
            vec!["workload.load_on=bytes"],
        ),
    ] {
        let mut o = o.clone();
        if o.is_empty() {
            o.push("workload.load_on=wire");
        }
        let (key, _) = refused(&text, &o);
        assert_eq!(key, "workload.load_on", "{text}");
    }
    // The default says nothing wrong anywhere (every resolved scenario has it).
    scenario(
        &format!("{STAR}kind = \"incast\""),
        &["workload.load_on=payload"],
    )
    .unwrap();
    // Beside a background load it has something to count.
    scenario(
        &format!("{STAR}kind = \"incast\"\nbackground_load = 0.2"),
        &["workload.load_on=wire"],
    )
    .unwrap();
}
