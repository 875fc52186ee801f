"""Fastpass's reproduction: its pure helpers (Exp C's fair-share sizes and per-interval
spread, convergence, goodput windows, failover recovery, FCP shares) on synthetic data,
the examples against the reproduction's scenarios, and the whole reproduction on a tiny
mode, its report, figures and tables checked against the runs' own files."""

import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from spillway import _core
from spillway.errors import ScenarioError
from spillway.intervals import Estimate, ratio
from spillway.reproduce import fastpass
from spillway.reproduce.claim import Verdict
from spillway.reproduce.fastpass import control, queues
from spillway.reproduce.fastpass.common import one_run
from spillway.sweep import build_sweep

MS = 10**9  # ps

TINY = fastpass.Mode(duration_ms=40, warmup_ms=5, phase_ms=10, overhead_ms=20,
                     loss_phase_ms=2, loss_flows=40, failover_ms=30,
                     appendix_endpoints=(8,), appendix_timeslots=5_000)


# ------------------------------------------------------------------ pure helpers

def test_phase_counts_and_fair_share_bytes():
    assert fastpass.phase_counts(5) == [1, 2, 3, 4, 5, 4, 3, 2, 1]
    assert fastpass.phase_counts(1) == [1]
    assert fastpass.phase_counts(2) == [1, 2, 1]
    p, c = 20 * MS, 9.4e9
    per_phase = c / 8 * 0.020  # bytes one phase carries at rate c
    # Flow 0: phases 0-4, alone then with 2, 3, 4, 5 flows.
    assert fastpass.fair_share_bytes(0, p, c) == int(per_phase * (1 + 1 / 2 + 1 / 3 + 1 / 4
                                                                  + 1 / 5))
    # Flow 2: phases 2-6, 3, 4, 5, 4, 3 flows.
    assert fastpass.fair_share_bytes(2, p, c) == int(per_phase * (1 / 3 + 1 / 4 + 1 / 5
                                                                  + 1 / 4 + 1 / 3))
    # Symmetric, and the nine phases carry nine phases' worth in all (rounding down).
    sizes = [fastpass.fair_share_bytes(i, p, c) for i in range(5)]
    assert sizes == sizes[::-1]
    assert 9 * per_phase - 5 <= sum(sizes) <= 9 * per_phase
    flows = fastpass.exp_c_flows(20, c)
    assert [f["size"] for f in flows] == sizes
    assert [f["start"] for f in flows] == ["0us", "20000us", "40000us", "60000us", "80000us"]
    # The single-flow goodputs: a segment per 1,538 B frame, and per 1.01 frame times.
    assert fastpass.C_BASELINE == pytest.approx(10e9 * 1460 / 1538)
    assert fastpass.C_FASTPASS == pytest.approx(10e9 * 1460 / 1538 / 1.01)


@pytest.mark.parametrize(("call", "text"), [
    (lambda: fastpass.fair_share_bytes(5, MS, 1e9), "flow = 5"),
    (lambda: fastpass.fair_share_bytes(-1, MS, 1e9), "flow = -1"),
    (lambda: fastpass.fair_share_bytes(0, 0, 1e9), "phase_ps = 0"),
    (lambda: fastpass.fair_share_bytes(0, MS, -1.0), "rate_bps = -1.0"),
    (lambda: fastpass.phase_counts(0), "senders = 0"),
    (lambda: fastpass.window_goodput(pd.DataFrame({"time_ps": [], "bytes": []}), 5, 5),
     "end_ps = 5"),
    (lambda: fastpass.fcp_shares({"host_sent_data_wire_bytes": 0}),
     "host_sent_data_wire_bytes = 0"),
])
def test_helpers_refuse_bad_input_naming_it(call, text):
    with pytest.raises(ScenarioError, match=text):
        call()


def _rows(rows):
    return pd.DataFrame(rows, columns=["time_ps", "flow_id", "bytes"])


def test_interval_spread_counts_only_stable_intervals():
    # Flow 0 from 0 to 5 ms, flow 1 from 1 ms, flow 2 joins at 2.5 ms (mid-interval): the
    # interval (2, 3] has a flow joining and counts for nothing.
    spans = pd.DataFrame({"flow_id": [0, 1, 2], "start_ps": [0, 1 * MS, 2500 * 10**6],
                          "end_ps": [5 * MS, 5 * MS, 5 * MS]})
    kb = 125_000  # 1 Gbit/s for 1 ms = 1000 Mbit/s
    ft = _rows([(1 * MS, 0, 8 * kb), (1 * MS, 1, 0),
                (2 * MS, 0, 6 * kb), (2 * MS, 1, 2 * kb),
                (3 * MS, 0, 3 * kb), (3 * MS, 1, 3 * kb), (3 * MS, 2, kb),
                (4 * MS, 0, 3 * kb), (4 * MS, 1, 3 * kb), (4 * MS, 2, 3 * kb),
                (5 * MS, 0, 2 * kb), (5 * MS, 1, 3 * kb), (5 * MS, 2, 4 * kb)])
    s = fastpass.interval_spread(ft, spans, MS)
    assert s["time_ps"].tolist() == [1 * MS, 2 * MS, 4 * MS, 5 * MS]
    assert s["n"].tolist() == [1, 2, 3, 3]
    # Population standard deviations in Mbit/s: 0; |6000 - 2000| / 2; 0; sqrt(2/3) x 1000.
    assert s["std_mbps"].tolist() == pytest.approx([0, 2000, 0, 1000 * np.sqrt(2 / 3)])
    assert s["mean_mbps"].tolist() == pytest.approx([8000, 4000, 3000, 3000])
    assert fastpass.median_spread(s, 3) == (pytest.approx(500 * np.sqrt(2 / 3)), 2)
    assert fastpass.median_spread(s, 2) == (pytest.approx(2000), 1)
    med, n = fastpass.median_spread(s, 5)
    assert np.isnan(med) and n == 0
    # Two 1 ms intervals into one of 2 ms: (0, 2] has flow 1 joining, (2, 4] flow 2's
    # join at 2.5 ms; (4, 6] holds the three flows' last 1 ms (5 ms is the end of the run).
    c = fastpass.coarsen(ft, MS, 2)
    assert c[c.time_ps == 4 * MS].set_index("flow_id").bytes.tolist() == [6 * kb, 6 * kb,
                                                                          4 * kb]
    assert fastpass.interval_spread(c, spans, 2 * MS).empty
    spans_late = spans.assign(end_ps=[6 * MS] * 3)
    s6 = fastpass.interval_spread(c, spans_late, 2 * MS)
    assert s6["time_ps"].tolist() == [6 * MS] and s6["n"].tolist() == [3]
    with pytest.raises(ScenarioError, match="factor = 0"):
        fastpass.coarsen(ft, MS, 0)
    # A flow that ends inside an interval makes it unstable too.
    spans2 = spans.assign(end_ps=[5 * MS, 4500 * 10**6, 5 * MS])
    s2 = fastpass.interval_spread(ft, spans2, MS)
    assert 5 * MS not in s2["time_ps"].tolist()


def test_join_convergence_and_flow_spans():
    flows = pd.DataFrame({"flow_id": [0, 1], "start_ps": [0, 2 * MS]})
    kb = 125_000
    rows = [(t * MS, 0, 8 * kb) for t in (1, 2)]
    # Flow 1 joins at 2 ms: 2 of 8 in its first interval, then within 10% of an even split
    # except at 5 ms.
    for t, (a, b) in zip(range(3, 8), [(6, 2), (4, 4), (5, 3), (4, 4), (4, 4)], strict=True):
        rows += [(t * MS, 0, a * kb), (t * MS, 1, b * kb)]
    ft = _rows(rows)
    spans = fastpass.flow_spans(ft, flows)
    assert spans["end_ps"].tolist() == [7 * MS, 7 * MS]
    c = fastpass.join_convergence(ft, spans, MS).iloc[0]
    assert c.flow_id == 1 and c.n == 2 and c.intervals == 5
    assert c.first_share == pytest.approx(0.5)
    assert c.first_within == 1
    assert c.share_within == pytest.approx(3 / 5)
    assert c.share_after == pytest.approx(3 / 4)


def test_window_goodput_and_recovery():
    ft = _rows([(t * MS, 0, 1_250_000) for t in range(1, 11)])  # 10 Gbit/s per 1 ms
    assert fastpass.window_goodput(ft, 2 * MS, 10 * MS) == pytest.approx(10e9)
    assert fastpass.window_goodput(ft, 0, 20 * MS) == pytest.approx(5e9)
    step = 100 * 10**6  # 100 us bins: 9 Gbit/s, nothing from 50 to 51 ms, 9 again
    t = np.arange(400, 601) * step
    g = pd.Series(np.where((t > 50 * MS) & (t <= 51 * MS), 0.0, 9e9), index=t)
    # The first 1 ms window averaging frac x 9: wholly after the gap for 0.95; with two
    # empty bins of ten for 0.8, five for 0.45.
    assert fastpass.recovery_ms(g, 50 * MS, MS, 9e9, frac=0.95) == pytest.approx(1.0)
    assert fastpass.recovery_ms(g, 50 * MS, MS, 9e9, frac=0.8) == pytest.approx(0.8)
    assert fastpass.recovery_ms(g, 50 * MS, MS, 9e9, frac=0.45) == pytest.approx(0.5)
    assert np.isnan(fastpass.recovery_ms(g * 0, 50 * MS, MS, 9e9))


def test_fcp_shares():
    s = {"host_sent_data_wire_bytes": 1_000_000, "fastpass_fcp_to_arbiter_bytes": 2_000,
         "fastpass_fcp_to_endpoint_bytes": 3_333, "fastpass_watchdog_bytes": 10}
    assert fastpass.fcp_shares(s) == pytest.approx(
        {"to_arbiter_pct": 0.2, "to_endpoint_pct": 0.3333, "watchdog_pct": 0.001})


def test_examples_are_the_reproductions_exp_a_scenarios(root):
    sweep = build_sweep({"base_text": fastpass.exp_a_text(fastpass.QUICK.duration_ms),
                         "schemes": fastpass.AB_RUNS})
    points = {p.axes["scheme"]: p for p in sweep.points}
    for name, run in (("baseline", "baseline"), ("fastpass", "Fastpass")):
        path = root / "examples" / "fastpass" / f"{name}.toml"
        ours = _core.validate(path.read_text(), ["run.seed=1"], str(path.parent))
        theirs = _core.validate(sweep.base_text, points[run].overrides, None)
        assert ours == theirs, name


# ------------------------------------------------------------------ claims

def test_a_ratio_is_unbounded_over_nothing_and_one_run_over_one_run():
    # An empty median queue: infinitely shorter, at either end.
    r = ratio(Estimate(10, 8, 12), Estimate(0, 0, 0))
    assert r.value == r.lo == r.hi == float("inf")
    # Where the denominator's interval reaches 0, only the top is unbounded.
    r = ratio(Estimate(10, 8, 12), Estimate(1, 0, 2))
    assert (r.value, r.lo, r.hi, r.method) == (10, 4, float("inf"), "derived")
    o = ratio(one_run(6.0), one_run(2.0))
    assert (o.value, o.lo, o.hi, o.method) == (3.0, 3.0, 3.0, "one run")
    assert not ratio(Estimate.missing(), one_run(1.0)).known


def _exp_a_table(fp_p50_kb: float) -> pd.DataFrame:
    rows = []
    for run in fastpass.AB_RUNS:
        fp = run.startswith("Fastpass")
        rows.append({"run": run, "p50_kb": fp_p50_kb if fp else 5000.0, "p90_kb": 5300.0,
                     "p99_kb": 5340.0, "p999_kb": 2.0 if fp else 5344.0,
                     "steady_goodput_gbps": 9.39 if fp else 9.54, "goodput_gbps": 9.4,
                     "timeouts": 1, "drops": 10})
    return pd.DataFrame(rows).set_index("run")


def test_exp_a_b_claims_follow_their_numbers():
    """Exp A's numbers are one run's: a plain comparison, PASS or FAIL, never
    INCONCLUSIVE. Exp B's medians are bootstrapped over the pings: a ratio whose interval
    straddles the paper's 5× is INCONCLUSIVE, one clearly above PASS, below FAIL."""
    ok = queues.queue_claims(_exp_a_table(100.0), 50)
    assert ok[0].claim.startswith("Fastpass: median queue") and ok[0].verdict is Verdict.PASS
    assert "(one run)" in ok[0].line()
    bad = queues.queue_claims(_exp_a_table(300.0), 50)  # 16.7×, under 20×
    assert bad[0].verdict is Verdict.FAIL
    assert {c.verdict for c in ok + bad} <= {Verdict.PASS, Verdict.FAIL}
    rng = np.random.default_rng(1)
    base = rng.uniform(3.5, 4.5, 400)

    def verdict(fp_ms: float) -> Verdict:
        samples = {run: (rng.uniform(0.9, 1.1, 400) * fp_ms if run.startswith("Fastpass")
                         else base) for run in fastpass.AB_RUNS}
        t = pd.DataFrame([{"run": run} | {f"{p}_ms": float(np.median(x)) for p in
                                          fastpass.PCTS} for run, x in samples.items()])
        return queues.ping_claims(t, samples)[0].verdict

    assert verdict(0.4) is Verdict.PASS  # 10×
    assert verdict(0.8) is Verdict.INCONCLUSIVE  # 5×, the bound inside the interval
    assert verdict(1.6) is Verdict.FAIL  # 2.5×


def test_appendix_claims_use_the_batch_means_interval():
    row = {"endpoints": 16, "speedup": 2, "after_service": 0.0, "lindley_mean": 0.0,
           "eq3_lower": 1.0, "throughput": 0.3}
    t = pd.DataFrame([row | {"load": 0.3, "mean_queue": 4.6, "stderr": 0.1, "eq4_upper": 4.53},
                      row | {"load": 0.9, "mean_queue": 19.0, "stderr": 0.5, "eq4_upper": 141.0},
                      row | {"load": 0.3, "speedup": 1, "mean_queue": 7.0, "stderr": 0.1,
                             "eq4_upper": 4.53, "eq3_lower": 3.4}])
    e = control.mean_queue(t.iloc[0])
    assert e.lo == pytest.approx(4.6 - 2.093 * 0.1) and e.hi == pytest.approx(4.6 + 2.093 * 0.1)
    v = {c.claim.split(":")[0]: c.verdict for c in control.appendix_claims(t)}
    assert v["speedup 2 meets eq. (4) at ρ ≥ 0.6"] is Verdict.PASS
    # 4.6 ± 0.21 straddles 4.53: the theorem at ρ = 0.3 is neither kept nor broken.
    assert v["Theorem 1 as stated"] is Verdict.INCONCLUSIVE
    t.loc[0, "mean_queue"] = 5.0
    v = {c.claim.split(":")[0]: c.verdict for c in control.appendix_claims(t)}
    assert v["Theorem 1 as stated"] is Verdict.FAIL


# ------------------------------------------------------------ tiny reproduction

@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


@pytest.fixture(scope="module")
def tiny_report(tmp_path_factory, monkeypatch_module):
    from spillway.reproduce import reproduce
    # The figures read the mode where it is defined (the package's `common`).
    monkeypatch_module.setattr(fastpass.common, "QUICK", TINY)
    out = tmp_path_factory.mktemp("fastpass")
    return out, reproduce("fastpass", out, quick=True, workers=2)


def _points(out, data):
    for d in sorted((out / "data" / data / "points").iterdir()):
        if (d / "point.json").exists():
            yield d, json.loads((d / "point.json").read_text())["axes"]


def test_tiny_reproduction_writes_every_figure_and_claim(tiny_report):
    out, report = tiny_report
    text = report.read_text()
    for title in ("Exp A", "Exp B", "Exp C: fairness", "Exp C: convergence",
                  "Exp E: control traffic", "Exp E: all demand", "arbiter failover",
                  "Appendix"):
        assert f"Fastpass {title}" in text or f"Fastpass §5.1: {title}" in text, title
    assert "Exp D" in text and "Exp H" in text and "spillway bench arbiter" in text
    verdicts = [line for line in text.splitlines() if line.startswith("- **")]
    assert len(verdicts) >= 30
    v = pd.read_parquet(out / "verdicts.parquet")
    assert set(v.verdict) <= {"PASS", "FAIL", "INCONCLUSIVE"} and len(v) == len(verdicts)
    for png in ("fastpass_expA_queues", "fastpass_expB_ping", "fastpass_expC_fairness",
                "fastpass_expE_overhead", "fastpass_expE_loss", "fastpass_failover",
                "fastpass_appendix_n8"):
        assert (out / f"{png}.png").stat().st_size > 5000, png
    # Claims that hold at any length: the queue, the RTT, FCP loss, the failover, the
    # Appendix's bounds at speedup 1.
    for claim in ("Fastpass: median queue at least 20×", "Fastpass: median ping RTT",
                  "10% of FCP messages lost", "30% of FCP messages lost",
                  "the secondary takes over once", "speedup 1 stays above eq. (3)"):
        assert any(claim in v and v.startswith("- **PASS**") for v in verdicts), claim


def test_tiny_exp_a_b_tables_match_the_runs_files(tiny_report):
    out, _ = tiny_report
    qa = pd.read_csv(out / "fastpass_expA_queues.csv").set_index("run")
    pb = pd.read_csv(out / "fastpass_expB_ping.csv").set_index("run")
    seen = set()
    for d, axes in _points(out, "ab"):
        run = axes["scheme"]
        seen.add(run)
        ports = pq.read_table(d / "ports.parquet").to_pandas()
        port = ports[ports.is_switch & (ports.peer == fastpass.RECEIVER_A)].iloc[0]
        for p in fastpass.PCTS:
            assert qa.loc[run, f"{p}_kb"] == pytest.approx(port[f"queue_{p}_bytes"] / 1024)
        assert qa.loc[run, "samples"] == port.queue_samples == TINY.duration_ms * 10
        flows = pq.read_table(d / "flows.parquet").to_pandas()
        assert len(flows) == 80 and set(flows.src) == {0, 1, 2, 3} and set(flows.dst) == {4}
        assert qa.loc[run, "goodput_gbps"] == pytest.approx(
            flows.delivered_bytes.sum() * 8 / (TINY.duration_ms / 1e3) / 1e9)
        ft = pq.read_table(d / "flow_throughput.parquet").to_pandas()
        late = ft[ft.time_ps > TINY.warmup_ms * MS]
        assert qa.loc[run, "steady_goodput_gbps"] == pytest.approx(
            late.bytes.sum() * 8 / ((TINY.duration_ms - TINY.warmup_ms) / 1e3) / 1e9)
        s = json.loads((d / "summary.json").read_text())
        if run.startswith("Fastpass"):
            assert s["drops"] == 0 and s["fastpass_slot_conflicts"] == 0
            assert s["fastpass_slots_used"] > 0
        rtt = pq.read_table(d / "pings.parquet").to_pandas()["rtt_ps"].dropna() / 1e9
        assert pb.loc[run, "answered"] == len(rtt)
        assert pb.loc[run, "p50_ms"] == pytest.approx(np.sort(rtt)[int(np.ceil(0.5 * len(rtt)))
                                                                  - 1])
        assert pb.loc[run, "p999_ms"] == pytest.approx(rtt.max())
    assert seen == set(fastpass.AB_RUNS)
    assert qa.loc["baseline", "paper_p50_kb"] == 4351
    assert pb.loc["Fastpass", "paper_p50_ms"] == 0.23


def test_tiny_exp_c_tables_match_the_runs_files(tiny_report):
    out, _ = tiny_report
    t = pd.read_csv(out / "fastpass_expC_fairness.csv").set_index("flows")
    conv = pd.read_csv(out / "fastpass_expC_convergence.csv")
    p = TINY.phase_ms * MS
    for d, axes in _points(out, "c"):
        run = axes["scheme"]
        flows = pq.read_table(d / "flows.parquet").to_pandas().sort_values("flow_id")
        rate = fastpass.C_FASTPASS if run == "Fastpass" else fastpass.C_BASELINE
        assert flows.size_bytes.tolist() == [fastpass.fair_share_bytes(i, p, rate)
                                             for i in range(5)]
        assert flows.start_ps.tolist() == [i * p for i in range(5)]
        assert flows.finish_ps.notna().all()
        ft = pq.read_table(d / "flow_throughput.parquet").to_pandas()
        # Every flow's rows add up to its size (all acknowledged).
        assert ft.groupby("flow_id").bytes.sum().tolist() == flows.size_bytes.tolist()
        # The spread by brute force: per whole interval whose set of active flows does not
        # change, the population std of the flows' Mbit/s.
        end = ft.groupby("flow_id").time_ps.max()
        by_n: dict[int, list[float]] = {}
        for tt in sorted(set(ft.time_ps[ft.time_ps % MS == 0])):
            live = [f for f in flows.flow_id if flows.start_ps[f] < tt and end[f] > tt - MS]
            full = [f for f in live if flows.start_ps[f] <= tt - MS and end[f] >= tt]
            if live != full or not full:
                continue
            rows = ft[(ft.time_ps == tt)].set_index("flow_id").bytes
            mbps = [rows.get(f, 0) * 8 / 1e-3 / 1e6 for f in full]
            by_n.setdefault(len(full), []).append(float(np.std(mbps)))
        col = "fastpass_mbps" if run == "Fastpass" else "baseline_mbps"
        count = "intervals_fastpass" if run == "Fastpass" else "intervals_baseline"
        for n in (3, 4, 5):
            v = by_n.get(n, [])
            assert t.loc[n, count] == len(v)
            if v:
                assert t.loc[n, col] == pytest.approx(np.median(v), abs=1e-9)
        c = conv[conv.run == run]
        assert c.flow_id.tolist() == [1, 2, 3, 4]
    assert t.loc[5, "paper_fastpass_mbps"] == 0.087


def test_tiny_exp_e_and_failover_tables_match_the_runs_files(tiny_report):
    out, _ = tiny_report
    over = pd.read_csv(out / "fastpass_expE_overhead.csv")
    seen = 0
    for d, axes in _points(out, "e_overhead"):
        s = json.loads((d / "summary.json").read_text())
        r = over[(over.report_interval == axes["report_interval"])
                 & (over.batch == axes["batch"])].iloc[0]
        assert r.fcp_to_arbiter_pct == pytest.approx(
            100 * s["fastpass_fcp_to_arbiter_bytes"] / s["host_sent_data_wire_bytes"])
        assert r.fcp_to_endpoint_pct == pytest.approx(
            100 * s["fastpass_fcp_to_endpoint_bytes"] / s["host_sent_data_wire_bytes"])
        assert r.queue_delay_p50_us == pytest.approx(s["fastpass_queue_delay_p50_ps"] / 1e6)
        seen += 1
    assert seen == len(over) == 6
    loss = pd.read_csv(out / "fastpass_expE_loss.csv")
    for d, axes in _points(out, "e_loss"):
        s = json.loads((d / "summary.json").read_text())
        flows = pq.read_table(d / "flows.parquet").to_pandas()
        r = loss[(loss.workload == axes["scheme"])
                 & (loss.control_loss == axes["control_loss"])].iloc[0]
        assert r.flows == len(flows) and r.finished == flows.finish_ps.notna().sum()
        assert r.delivered_bytes == flows.delivered_bytes.sum() == s["bytes_delivered"]
        assert r.offered_bytes == flows.size_bytes.sum()
        assert r.fcp_lost == s["fastpass_fcp_lost"]
        assert (r.fcp_lost > 0) == (axes["control_loss"] > 0)
        assert s["stop_reason"] == "all_flows_done"
    assert len(loss) == 6
    fo = pd.read_csv(out / "fastpass_failover.csv").iloc[0]
    (d, _), = list(_points(out, "failover"))
    s = json.loads((d / "summary.json").read_text())
    assert fo.takeovers == s["fastpass_takeovers"] == 1
    assert fo.failover_gap_ms == pytest.approx(s["fastpass_failover_gap_ps"] / 1e9)
    assert fo.slot_conflicts == s["fastpass_slot_conflicts"] == 0
    assert fo.fail_at_ms == TINY.failover_ms // 2
    app = pd.read_csv(out / "fastpass_appendix.csv")
    assert len(app) == 8
    r = app[(app.speedup == 2) & (app.load == 0.9)].iloc[0]
    d2 = _core.appendix_queue(8, 0.9, 2, timeslots=5_000)
    assert r.mean_queue == pytest.approx(d2["mean_queue"])
    assert r.eq4_upper == pytest.approx(8 * 0.9 * (0.9 + d2["v"]) / (2 * 0.1))
