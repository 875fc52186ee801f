"""Turbo's reproduction: Fig. 1's claims from the built-in CDFs, and the whole reproduction
on a tiny mode (a few hundred flows a run), its report, figures and tables checked
against the runs' own files."""

import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from spillway.reproduce import turbo
from spillway.reproduce.claim import Verdict

TINY = turbo.Mode(loads=(0.5, 0.8), starvation_loads=(0.6, 0.7, 0.8),
                  flows={"websearch": 150, "aditya": 400, "datamining": 40})


def test_fig1_claims_from_the_cdfs():
    # Aditya (aditya.txt): 5 packets at 0.75, 7 at 0.80; linear between them.
    assert turbo.cdf_at("aditya", 6 * 1460) == pytest.approx(0.775)
    assert turbo.cdf_at("aditya", 7 * 1460) == pytest.approx(0.80)
    assert turbo.cdf_at("websearch", 5 * 1460) == 0.0
    assert turbo.cdf_at("websearch", 20000 * 1460) == 1.0
    # The byte shares of the longest 10%, by hand from the files' segments (in packets):
    # web search 3333-6667 (p 0.07) and 6667-20000 (0.03) over its mean of 1138.0...
    ws_top = 0.07 * (3333 + 6667) / 2 + 0.03 * (6667 + 20000) / 2
    v, c = turbo.read_cdf("websearch")
    ws_mean = (v[0] * c[0] + sum((v[i - 1] + v[i]) / 2 * (c[i] - c[i - 1])
                                 for i in range(1, len(v)))) / 1460
    assert ws_mean == pytest.approx(1_665_831 / 1460, rel=1e-6)  # SOURCES.md's mean
    assert turbo.byte_share_of_longest("websearch", 0.10) == pytest.approx(ws_top / ws_mean)
    assert 0.6 < ws_top / ws_mean < 0.7
    assert turbo.byte_share_of_longest("aditya", 0.10) == pytest.approx(0.887, abs=1e-3)
    assert turbo.byte_share_of_longest("datamining", 0.10) > 0.99
    # Everything in the longest 100%; the byte CDF ends at 1 and rises.
    for w in turbo.WORKLOADS:
        assert turbo.byte_share_of_longest(w, 1.0) == pytest.approx(1.0)
        b = [turbo.byte_cdf_at(w, p * 1460) for p in (1, 10, 100, 1000, 10**6)]
        assert b == sorted(b) and b[-1] == pytest.approx(1.0)
    # Half of a uniform piece: the top 5% of Aditya is the upper half of 1187-2107.
    assert turbo.byte_share_of_longest("aditya", 0.05) == pytest.approx(
        0.05 * (1187 + 2107) / 2 / (195_357 / 1460), rel=1e-4)


def test_outstanding_growth_tells_growth_from_a_level():
    t = np.arange(0, 100) * 100_000_000  # 100 us samples, 10 ms
    last = int(t[-1])
    rising = pd.DataFrame({"time_ps": t, "outstanding_bytes": 1000 * np.arange(100)})
    level = pd.DataFrame({"time_ps": t, "outstanding_bytes":
                          np.minimum(1000 * np.arange(100), 20_000)})
    g = turbo.outstanding_growth(rising, last, offered_bytes=1e6)
    assert g["grows"] and g["growth"] > 1.25
    # 1000 B per 100 us = 1e7 B/s against 1e6 B offered by the last arrival at 9.9 ms.
    assert g["backlog_share"] == pytest.approx(1e7 / (1e6 / 9.9e-3))
    flat = turbo.outstanding_growth(level, last, offered_bytes=1e6)
    assert not flat["grows"] and flat["growth"] == pytest.approx(1.0)
    assert turbo.halves_gap(pd.Series([1.0, 1.0, 3.0, 3.0])) == pytest.approx(1.0)


def _flows(drops_short: float, drops_long: float, noise: float, seed: int = 3) -> pd.DataFrame:
    """Hand-built pFabric flows at 0.8 load: 400 short flows (3 packets) and 40 long ones
    (6,000 packets) of each workload, drops drawn around the given per-packet rates."""
    rng = np.random.default_rng(seed)
    rows = []
    for w in ("websearch", "aditya"):
        for group, packets, n, rate in (("1–5", 3, 400, drops_short),
                                        (">5,000", 6000, 40, drops_long)):
            d = rng.poisson(packets * rate * rng.uniform(1 - noise, 1 + noise, n))
            rows += [{"scheme": "pFabric", "cdf": w, "load": 0.8, "seed": 1, "size_group": group,
                      "packets": float(packets), "drops": float(x)} for x in d]
    return pd.DataFrame(rows)


def test_drop_claims_follow_their_intervals():
    """Figs. 2-3's drop rates are bootstrapped over the flows: far apart they PASS or
    FAIL, with intervals that straddle the bound INCONCLUSIVE."""
    def verdicts(short, long, noise):
        return [c.verdict for c in turbo.drop_claims(_flows(short, long, noise), "2")]

    # No short-flow drops, 460 per long-flow packet: both hold at the interval's bad end.
    assert verdicts(0.0, 460.0, 0.05) == [Verdict.PASS] * 3
    # 10× the short flows' 5% is above the long flows' 10%: fails at either end; 0.1% is
    # far below 45,000%.
    assert verdicts(0.05, 0.10, 0.05) == [Verdict.FAIL] * 3
    # 450 drops per packet exactly, the long flows' drops spread widely: 45,000% inside
    # the interval.
    c = turbo.drop_claims(_flows(0.0, 450.0, 0.9), "2")[0]
    assert c.verdict is Verdict.INCONCLUSIVE and c.ours.lo < 45_000 < c.ours.hi
    assert "bootstrap over 40 samples of one run" in c.line()


@pytest.fixture(scope="module")
def tiny_report(tmp_path_factory, monkeypatch_module):
    from spillway.reproduce import reproduce
    monkeypatch_module.setattr(turbo, "QUICK", TINY)
    out = tmp_path_factory.mktemp("turbo")
    return out, reproduce("turbo", out, quick=True, workers=2)


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def _points(out):
    for d in sorted((out / "data" / "runs" / "points").iterdir()):
        if (d / "point.json").exists():
            yield d, json.loads((d / "point.json").read_text())["axes"]


def test_tiny_reproduction_writes_every_figure_and_claim(tiny_report):
    out, report = tiny_report
    text = report.read_text()
    for fig in ("Fig. 1", "Fig. 2", "Fig. 3", "Figs. 4-6", "Fig. 7", "Fig. 12", "Fig. 13"):
        assert f"Turbo {fig}" in text, fig
    # Every claim has a verdict, and the summary counts them.
    verdicts = [line for line in text.splitlines() if line.startswith("- **")]
    assert len(verdicts) >= 20
    v = pd.read_parquet(out / "verdicts.parquet")
    assert len(v) == len(verdicts) and set(v.verdict) <= {"PASS", "FAIL", "INCONCLUSIVE"}
    # Fig. 1's claims are closed forms of the CDFs: facts, never INCONCLUSIVE.
    fig1 = v[v.figure == "turbo_fig1_cdfs"]
    assert len(fig1) == 4 and set(fig1.verdict) <= {"PASS", "FAIL"}
    assert (fig1.interval == "exact").all()
    for png in ("turbo_fig1a_flows", "turbo_fig1b_bytes", "turbo_fig2_websearch",
                "turbo_fig3_aditya", "turbo_fig4_outstanding", "turbo_fig5_outstanding",
                "turbo_fig6_outstanding", "turbo_fig7_slowdown", "turbo_fig12_fct_websearch",
                "turbo_fig12_slowdown_aditya", "turbo_fig13a_dead_aditya",
                "turbo_fig13b_dup_websearch"):
        assert (out / f"{png}.png").stat().st_size > 5000, png
    # The table the closing note reads: five schemes x two workloads, 0.5 and 0.8.
    t = pd.read_csv(out / "turbo_table.csv")
    assert len(t) == 10 and set(t.scheme) == {"pFabric", "T1", "T2", "T3", "T4"}
    assert {"mean_fct_ms@0.5", "mean_fct_ms@0.8", "mean_slowdown@0.5",
            "mean_slowdown@0.8"} <= set(t.columns)
    assert (t.filter(like="mean_slowdown") >= 1).all().all()


def test_tiny_reproduction_tables_match_the_runs_files(tiny_report):
    out, _ = tiny_report
    perf = pd.read_csv(out / "turbo_fig12_fct.csv").set_index(["scheme", "cdf", "load"])
    waste = pd.read_csv(out / "turbo_fig13_waste.csv").set_index(["scheme", "cdf", "load"])
    drops = pd.read_csv(out / "turbo_fig2_drops.csv")
    seen = 0
    for d, axes in _points(out):
        s = json.loads((d / "summary.json").read_text())
        f = pq.read_table(d / "flows.parquet").to_pandas()
        # Every flow offered finished; the run ended because of it.
        assert len(f) == axes["max_flows"] == s["flows_finished"]
        assert f["fct_ps"].notna().all() and s["stop_reason"] == "all_flows_done"
        assert s["bytes_offered"] == f["size_bytes"].sum()
        # Dead bytes are what hosts sent and no host received (Turbo §5.2).
        assert s["dead_bytes"] == (s["host_sent_data_bytes"] - s["host_received_data_bytes"]
                                   - s["in_flight_data_bytes"])
        assert s["dead_bytes"] >= 0
        key = (axes["scheme"], axes["cdf"], axes["load"])
        if key in waste.index:
            seen += 1
            assert waste.loc[key, "dead_pct"] == pytest.approx(
                100 * s["dead_bytes"] / s["bytes_offered"])
            assert waste.loc[key, "dup_pct"] == pytest.approx(
                100 * s["duplicate_bytes"] / s["bytes_offered"])
            assert perf.loc[key, "mean_fct_ms"] == pytest.approx(f["fct_ps"].mean() / 1e9)
            assert perf.loc[key, "mean_slowdown"] == pytest.approx(f["slowdown"].mean())
            assert perf.loc[key, "flows"] == len(f)
        if axes["scheme"] == "pFabric" and axes["load"] == 0.8 and axes["cdf"] == "websearch":
            # Fig. 2's largest group: Σ drops / Σ packets of its flows, in percent.
            pk = np.ceil(f["size_bytes"] / 1460)
            big = pk > 5000
            if big.any():
                row = drops[(drops.workload == "Bing (web search)")
                            & (drops.size_group == ">5,000")].iloc[0]
                assert row["drop_rate_pct"] == pytest.approx(
                    100 * f["drops"][big].sum() / pk[big].sum())
                assert row["flows"] == big.sum()
            ts = pq.read_table(d / "timeseries.parquet").to_pandas()
            # Outstanding bytes never exceed what has been offered, and end at nothing.
            assert ts["outstanding_bytes"].max() <= s["bytes_offered"]
            assert ts["active_flows"].iloc[-1] <= 1
    assert seen == 2 * 5 * 2  # two workloads x five schemes x two loads


def test_tiny_reproduction_measures_cut_through_and_the_load_count(tiny_report):
    """The cut-through figure: every variant at every load, each bucket's flows the same
    across variants (the workload's draws do not depend on the network, and the wire
    count only stretches arrival times), and the table what the runs' flows give."""
    out, _ = tiny_report
    assert (out / "turbo_cut_through.png").stat().st_size > 5000
    t = pd.read_csv(out / "turbo_cut_through.csv")
    assert set(map(tuple, t[["cut_through", "load_on"]].drop_duplicates().to_numpy())) == {
        (False, "payload"), (False, "wire"), (True, "payload"), (True, "wire")}
    for (_, bucket), g in t.groupby(["load", "bucket"]):
        assert g["flows"].nunique() == 1, bucket
    rows = 0
    for d in sorted((out / "data" / "cut_through" / "points").iterdir()):
        if not (d / "point.json").exists():
            continue
        axes = json.loads((d / "point.json").read_text())["axes"]
        f = pq.read_table(d / "flows.parquet").to_pandas()
        r = t[(t.load == axes["load"]) & (t.cut_through == axes["cut_through"])
              & (t.load_on == axes["load_on"]) & (t.bucket == "all")].iloc[0]
        assert r["flows"] == len(f)
        assert r["mean_slowdown"] == pytest.approx(f["slowdown"].mean())
        assert r["mean_fct_us"] == pytest.approx(f["fct_ps"].mean() / 1e6)
        # Store-and-forward, the ideal bounds every flow; with cut-through a flow whose
        # last (short) packet leaves its host late can cut through where the ideal's,
        # catching up, is stored (docs/outputs.md, `slowdown`): by well under 5%.
        low = 1 - 1e-9 if not axes["cut_through"] else 0.95
        assert (f["slowdown"] >= low).all()
        rows += 1
    assert rows == 8
