"""The showdown (spillway reproduce showdown / spillway compare) on a tiny mode: every
scheme appears in every table or says why not, the verdicts are computed, the figures and
their Parquet data exist, and the same seed gives the same Parquet."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from spillway.cli import main
from spillway.errors import UsageError
from spillway.reproduce.showdown import mode_for, report
from spillway.reproduce.showdown.claims import beats_tcp, incast_timeouts
from spillway.reproduce.showdown.figures import pareto_front
from spillway.reproduce.showdown.report import ranking
from spillway.reproduce.showdown.setup import FABRICS, QUICK, SCHEMES, Fabric, Mode, sweeps

# One switch with 66 ports: every scheme runs on it but DeTail's, whose combined
# input/output-queued switch has at most 64 (refused at validation).
STAR = Fabric("star-66", '[topology]\nkind = "star"\nhosts = 66\n[switch]\nbuffer = "128KB"\n',
              66, "6200B", "9.5us", "a test star", arbiter_link="10Gbps")
TINY = Mode(fabrics=("star-66",), loads=(0.5,), flows={"websearch": 24, "datamining": 8},
            fanins=(8,), incast_rounds=1, pa_queries=12, duration="100ms", seeds=(1, 2))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory):
    mp = pytest.MonkeyPatch()
    mp.setitem(FABRICS, "star-66", STAR)
    out = tmp_path_factory.mktemp("showdown")
    path = report(out, quick=True, workers=2, mode=TINY)
    yield out, path
    mp.undo()


def test_every_scheme_is_in_every_table_or_says_why(tiny):
    out, path = tiny
    cells = pd.read_parquet(out / "cells.parquet")
    cells = cells.astype({"load": float, "fanin": float})
    # 4 workloads, one load or fan-in each, every scheme of the showdown.
    assert len(cells) == 4 * len(SCHEMES)
    for (w, _, _), g in cells.groupby(["workload", "load", "fanin"], dropna=False):
        assert list(g.scheme) == list(SCHEMES), w
    refused = cells[cells.status != "ok"]
    assert set(refused.scheme) == {"detail", "priority_pfc", "detail-1class",
                                   "priority_pfc-1class", "DCQCN", "HPCC", "DCTCP-RoCE"}
    assert refused.status.str.startswith("refused at validation").all()
    assert refused.status.str.contains("64").all()  # the reason, from the validator
    ok = cells[cells.status == "ok"]
    assert ok.short_fct_p99_ms.notna().all() and (ok.short_fct_p99_ms > 0).all()
    inc = ok[ok.workload == "incast"]
    assert inc.qct_p99_ms.notna().all() and (inc.goodput_gbps > 0).all()
    text = path.read_text()
    for s in SCHEMES:
        assert f"| {s} |" in text
    # Each ranking table lists DeTail with its reason.
    assert text.count("refused at validation") >= 4 * 2
    assert (out / "cost.parquet").exists() and "wall_s" not in cells.columns


def test_verdicts_are_computed_and_printed_with_numbers(tiny):
    out, path = tiny
    v = pd.read_parquet(out / "verdicts.parquet")
    assert v.kind.tolist() == ["sanity"] * 9 + ["headline"] * 6
    assert v.detail.str.len().min() > 20
    assert set(v.verdict) <= {"PASS", "FAIL", "INCONCLUSIVE"}
    assert (v.holds == (v.verdict == "PASS")).all()
    # DeTail could not run on the star: its verdict is no pass and says why.
    lossless = v[v.claim.str.startswith("DeTail drops nothing")].iloc[0]
    assert lossless.verdict == "INCONCLUSIVE" and "refused" in lossless.detail
    text = path.read_text()
    # Every claim twice: in the summary and in its section.
    assert sum(text.count(f"**{x}**") for x in ("PASS", "FAIL", "INCONCLUSIVE")) == 2 * len(v)
    assert "## Each paper's headline, off its home turf" in text
    assert "### How the intervals are made" in text


def test_every_ranked_metric_has_its_interval(tiny):
    """cells.parquet has `<metric>_lo` and `<metric>_hi` beside each ranked metric, the
    interval holds the value, and the ranking tables print them."""
    out, path = tiny
    cells = pd.read_parquet(out / "cells.parquet")
    ok = cells[cells.status == "ok"]
    for m in ("short_fct_p99_ms", "short_fct_p999_ms", "qct_p99_ms", "long_fct_mean_ms",
              "goodput_gbps", "drops", "timeouts", "queue_mean_bytes"):
        assert {f"{m}_lo", f"{m}_hi"} <= set(cells.columns), m
        d = ok[ok[m].notna()]
        assert len(d), m
        assert (d[f"{m}_lo"] <= d[m] + 1e-12).all() and (d[m] <= d[f"{m}_hi"] + 1e-12).all(), m
    poisson = ok[ok.workload == "websearch"]
    assert (poisson.short_fct_p99_ms_hi > poisson.short_fct_p99_ms_lo).any()
    assert (ok.seeds == len(TINY.seeds)).all()
    assert "short p99 ms" in path.read_text() and " [" in path.read_text()
    runs = pd.read_parquet(out / "runs.parquet")
    assert len(runs) == len(cells) * len(TINY.seeds)


def test_figures_render_with_their_data_in_parquet(tiny):
    out, path = tiny
    figs = out / "figures"
    for name in ("pareto_websearch", "pareto_datamining", "heatmap_websearch", "incast",
                 "heatmap_incast", "pareto_partition-aggregate", "slowdown_websearch"):
        for ext in (".png", ".svg"):
            assert (figs / name).with_suffix(ext).stat().st_size > 1000, name
        data = pd.read_parquet((figs / name).with_suffix(".parquet"))
        assert len(data), name
        assert f"figures/{name}.png" in path.read_text()


def test_same_seed_same_parquet(tmp_path, monkeypatch):
    monkeypatch.setitem(FABRICS, "star-66", STAR)
    mode = dataclasses.replace(TINY, schemes=("TCP", "pFabric", "Fastpass"),
                               workloads=("websearch", "incast"))
    a = report(tmp_path / "a", quick=True, workers=1, mode=mode)
    b = report(tmp_path / "b", quick=True, workers=1, mode=mode)
    for f in ("cells.parquet", "runs.parquet", "verdicts.parquet",
              "figures/pareto_websearch.parquet"):
        assert (a.parent / f).read_bytes() == (b.parent / f).read_bytes(), f


def test_the_same_scheme_twice_is_tied_and_a_clearly_better_one_ranks_alone(tmp_path,
                                                                           monkeypatch):
    """TCP under a second name behaves exactly as TCP: the two share a rank in every
    table. pFabric's short flows at load 0.8 are far ahead of TCP's: it ranks alone, and
    the winners table names it alone."""
    from spillway import schemes
    from spillway.reproduce.showdown.report import with_ranks

    monkeypatch.setitem(FABRICS, "star-66", STAR)
    twin = schemes.scheme("TCP").with_({}, name="TCP-twin", description="TCP, renamed")
    monkeypatch.setattr(schemes, "SCHEMES", {**schemes.SCHEMES, "TCP-twin": twin})
    mode = dataclasses.replace(TINY, loads=(0.8,), flows={"websearch": 150, "datamining": 8},
                               schemes=("TCP", "TCP-twin", "pFabric"),
                               workloads=("websearch",))
    path = report(tmp_path, quick=True, workers=2, mode=mode)
    cells = pd.read_parquet(tmp_path / "cells.parquet")
    t = with_ranks(cells, "short_fct_p99_ms").set_index("scheme")
    assert t.loc["pFabric", "rank"] == "1"
    assert t.loc["TCP", "rank"] == t.loc["TCP-twin", "rank"] == "2="
    tcp, twin_row = t.loc["TCP"], t.loc["TCP-twin"]
    assert tcp.short_fct_p99_ms == twin_row.short_fct_p99_ms
    assert tcp.short_fct_p99_ms_hi > tcp.short_fct_p99_ms_lo  # a real interval, shared
    assert t.loc["pFabric", "short_fct_p99_ms_hi"] < tcp.short_fct_p99_ms_lo
    text = path.read_text()
    assert "| star-66 | websearch | 0.8 | pFabric |" in text


def test_pareto_front_and_ranking_order():
    x = np.array([1.0, 2.0, 3.0, 1.5, np.nan])
    y = np.array([3.0, 1.0, 0.5, 3.5, 0.1])
    assert pareto_front(x, y).tolist() == [True, True, True, False, False]
    cells = pd.DataFrame({"scheme": ["A", "B", "C"], "status": ["ok", "ok", "failed: boom"],
                          "short_fct_p99_ms": [2.0, 1.0, np.nan], "unfinished": [0, 3, np.nan]})
    t = ranking(cells, "short_fct_p99_ms")
    assert t.scheme.tolist() == ["B", "A", "C"] and t["rank"].tolist() == ["1", "2", "—"]
    assert t.note.tolist() == ["3 flows unfinished at the limit", "", "failed: boom"]
    # A scheme that ran without a value for the key (no round finished) ranks "—",
    # after the schemes with numbers and before those that did not run.
    cells = pd.DataFrame({"scheme": ["A", "B", "C", "D"], "status": ["ok", "ok", "ok", "failed"],
                          "short_fct_p99_ms": [2.0, np.nan, 1.0, np.nan],
                          "unfinished": [0, 256, 0, np.nan]})
    t = ranking(cells, "short_fct_p99_ms")
    assert t.scheme.tolist() == ["C", "A", "B", "D"]
    assert t["rank"].tolist() == ["1", "2", "—", "—"]


def test_verdict_functions_on_known_numbers():
    rows = []
    for load, tcp, pf in ((0.2, 1.0, 0.1), (0.8, 2.0, 3.0)):
        rows += [{"fabric": "f", "workload": "websearch", "load": load, "fanin": np.nan,
                  "scheme": s, "status": "ok", "short_fct_p99_ms": v}
                 for s, v in (("TCP", tcp), ("pFabric", pf))]
    v = beats_tcp(pd.DataFrame(rows), "pFabric")
    assert v.verdict.value == "FAIL" and "f websearch 0.8: fail (3 [3, 3] vs 2 [2, 2])" in v.why
    inc = pd.DataFrame([{"fabric": "f", "workload": "incast", "load": np.nan, "fanin": n,
                         "scheme": s, "status": "ok", "timeouts": t}
                        for n, s, t in ((8, "TCP", 0), (8, "CP", 0), (64, "TCP", 9),
                                        (64, "CP", 2))])
    v = incast_timeouts(inc, "CP")
    assert v.holds and "f: 2 (one run) vs TCP's 9 (one run)" in v.why


def test_modes_and_options():
    assert QUICK.loads == (0.2, 0.5, 0.8) and QUICK.fanins[-1] == 64
    # Intervals need seeds: quick has a few, full at least five.
    assert len(QUICK.seeds) >= 2 and len(mode_for(False).seeds) >= 5
    m = mode_for(True, schemes=["TCP", "TCP+SQ"], workloads=["incast"], seeds_from=3)
    assert m.schemes == ("TCP", "TCP+SQ") and m.workloads == ("incast",)
    assert m.seeds == tuple(range(3, 3 + len(QUICK.seeds)))
    sw = sweeps(FABRICS["fat-tree-128"], m, m.schemes)
    assert list(sw) == ["incast"]
    # The arbiter's host is in no scheme's workload.
    assert 127 not in sw["incast"]["set"]["workload.sources"]
    with pytest.raises(UsageError, match="unknown scheme 'XCP'"):
        mode_for(True, schemes=["XCP"])
    with pytest.raises(UsageError, match="unknown workload"):
        mode_for(True, workloads=["trace"])


def test_compare_command_refuses_an_unknown_fabric(capsys):
    assert main(["compare", "--out", "x", "--fabrics", "torus"]) == 2
    assert "unknown fabric(s) ['torus']" in capsys.readouterr().err


def test_cp_limit_judges_its_counts_run_by_run():
    """"No header dropped, no timeout" with the large allowance is a count that must be
    zero in every run: one seed that drops three headers fails it (an interval over the
    seeds, floored at zero, would have left it inconclusive)."""
    from spillway.reproduce.showdown.limits import CP_BIG_ALLOWANCE, cp_claims

    big = f"CP ({CP_BIG_ALLOWANCE} allowance)"

    def runs(big_drops: list[int]) -> pd.DataFrame:
        rows = []
        for scheme, drops, timeouts, qct in (("TCP", [0, 0], [9, 8], 19.0),
                                             ("CP", [40, 50], [2, 3], 20.0),
                                             (big, big_drops, [0, 0], 40.0)):
            for seed, (d, t) in enumerate(zip(drops, timeouts, strict=True), 1):
                rows.append({"scheme": scheme, "seed": seed, "senders": 256, "drops": d,
                             "timeouts": t, "qct_p99_ms": qct + seed / 10, "cut_bytes": 1e5,
                             "delivered": 1e7, "retransmits": 100})
        return pd.DataFrame(rows)

    def verdict(c: list) -> str:
        return next(x for x in c if "no header is dropped" in x.claim).verdict.value

    assert verdict(cp_claims(runs([0, 0]))[1]) == "PASS"
    assert verdict(cp_claims(runs([0, 3]))[1]) == "FAIL"
