"""The showdown's report: ranking tables, figures, verdicts, claims and notes, written as
``report.md`` with every figure's PNG, SVG and Parquet data beside it."""

from __future__ import annotations

import inspect
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from spillway import schemes as registry
from spillway.intervals import RESAMPLES, tiers
from spillway.reproduce import claim, markdown_table
from spillway.reproduce.showdown import claims, figures, limits
from spillway.reproduce.showdown.metrics import COLUMNS, COST, ESTIMATED, KEYS, collect, estimate
from spillway.reproduce.showdown.setup import (
    FABRICS,
    FULL,
    LEFT_OUT,
    PARAMETERS,
    POISSON,
    QUICK,
    Mode,
    scheme_overrides,
    workload_about,
)
from spillway.store import Results
from spillway.sweep import toml_literal

FAMILIES = ("poisson", "incast", "partition-aggregate")
# The columns of a ranking table, short names for the report (data: cells.parquet).
SHOW = {
    "short_fct_p99_ms": "short p99 ms", "short_fct_p999_ms": "short p99.9 ms",
    "short_slowdown_p99": "short sd p99", "short_slowdown_p999": "short sd p99.9",
    "long_fct_mean_ms": "long mean ms", "mean_slowdown": "mean sd", "qct_p99_ms": "QCT p99 ms",
    "goodput_gbps": "Gbit/s", "drops": "drops", "retransmits": "retx", "timeouts": "RTOs",
    "pauses": "pauses", "notifications": "notifs", "packs": "PACKs", "fcp_pct": "FCP %",
    "dead_pct": "dead %", "dup_pct": "dup %", "queue_mean_bytes": "queue B",
}
# Each workload's table shows what its workload has (the rest are in cells.parquet).
_COUNTERS = ["drops", "retransmits", "timeouts", "pauses", "notifications", "packs",
             "fcp_pct", "dead_pct", "dup_pct", "queue_mean_bytes"]
TABLE_COLUMNS = {
    "poisson": ["short_fct_p99_ms", "short_fct_p999_ms", "short_slowdown_p99",
                "short_slowdown_p999", "long_fct_mean_ms", "mean_slowdown", "goodput_gbps",
                *_COUNTERS],
    "incast": ["qct_p99_ms", "goodput_gbps", *_COUNTERS],
    "partition-aggregate": ["qct_p99_ms", "short_fct_p99_ms", "short_fct_p999_ms",
                            "long_fct_mean_ms", *_COUNTERS],
}


READING = """## Reading the results

- **Intervals.** Every number in a ranking table is `value [lo, hi]`, a 95% confidence
  interval over the cell's seeds (§ How the intervals are made). A scheme whose interval
  overlaps its tier leader's shares the leader's rank (`1=`): the data do not tell them
  apart. A verdict is
  PASS only where it holds at the unfavourable end of its intervals, FAIL only where it
  fails even at the favourable end, and INCONCLUSIVE otherwise.
- **DeTail and Priority+PFC.** Their main rows (`detail`, `priority_pfc`) run with the
  flows marked by size, as an application that knows its request sizes would mark them
  (`workload.classes_by_size`: flows up to 100 KB in class 0, the rest in class 1;
  partition/aggregate's queries above its background, as DeTail §8.1.2 runs them); the
  `-1class` rows are the same switches serving one class (`switch.priorities = false`).
  In one class a lossless fabric never tells TCP to slow down: windows grow to the
  receive window (1 MB), pauses spread the queues upstream, and short flows wait behind
  long ones. The other schemes run as their papers define them: TCP, CUBIC, DCTCP,
  FastLane and CP with one class for their Poisson flows (their papers' switches serve
  no priorities); pFabric and Turbo order every packet by its flow's remaining bytes, a
  finer size classification of their own; Fastpass's arbiter allocates timeslots max-min
  fairly, whatever a flow's class. In partition/aggregate every scheme's switches see the
  background flows in class 7, the queries in class 0.
- **What came after the papers.** DCQCN, HPCC and DCTCP-RoCE are RDMA hosts (RoCE: line-rate
  start, the NIC's rate limiter, go-back-N) on DeTail's lossless fabric (CIOQ switches with
  PFC, the common 128 KB a port, ECMP, one class), with the congestion controls deployed
  after the five papers (DCQCN with RED marking; HPCC with in-band telemetry from every
  switch port) and DCTCP's reaction on the same hosts. 1,000 B payloads: their FCTs count
  their own headers (docs/mechanisms.md § RoCE hosts).
- **Fastpass's control traffic is in band.** Every endpoint reports to the arbiter every
  10 µs and the arbiter answers every 16 timeslots, through the same switches as the data,
  at the highest priority, with 1% of each link's time set aside for it. All of it crosses
  the arbiter's own rack, whose ports are Fastpass's only busy queues (`queue_max_kb`,
  the busiest port in the verdict's detail); the rest of the fabric stays near empty.
- **Ties at the floor.** At a low load most short flows meet no queue at all: their p99
  is the ideal FCT, the same for every scheme (a data-mining short flow is usually one
  packet). The claims count such ties as ties ("no higher than").
- **p99.9 of small samples.** With a few hundred short flows a cell, p99.9 is close to
  the largest of them and its interval runs to it; read p99.9 from full mode.
"""


def expected_cells(mode: Mode) -> pd.DataFrame:
    """Every (fabric, workload, load or fan-in, scheme) the mode runs: the rows every table
    must have."""
    rows = []
    for f in mode.fabrics:
        for w in mode.workloads:
            xs: list[tuple[float, float]]
            if w in POISSON:
                xs = [(x, np.nan) for x in mode.loads]
            elif w == "incast":
                xs = [(np.nan, float(n)) for n in mode.fanins]
            else:
                xs = [(0.2, np.nan)]
            rows += [{"fabric": f, "workload": w, "load": x, "fanin": n, "scheme": s}
                     for x, n in xs for s in mode.schemes]
    return pd.DataFrame(rows)


def complete(cells: pd.DataFrame, mode: Mode) -> pd.DataFrame:
    """``cells`` with a row for every expected cell (status `not run: ...` where no sweep
    wrote one), in table order, restricted to the mode's schemes and workloads."""
    want = expected_cells(mode)
    keys = KEYS
    if cells.empty:
        cells = pd.DataFrame(columns=[*keys, "status", *COLUMNS])
    t = want.merge(cells, on=keys, how="left")
    t["status"] = t["status"].fillna("not run: no sweep wrote this cell (run the showdown "
                                     "again to fill it)")
    order = {s: i for i, s in enumerate(mode.schemes)}
    wl = {w: i for i, w in enumerate(mode.workloads)}
    fab = {f: i for i, f in enumerate(mode.fabrics)}
    t = t.assign(_f=t.fabric.map(fab), _w=t.workload.map(wl), _s=t.scheme.map(order))
    return (t.sort_values(["_f", "_w", "load", "fanin", "_s"]).drop(columns=["_f", "_w", "_s"])
            .reset_index(drop=True))


def _fmt(v: object) -> str:
    if isinstance(v, float | np.floating):
        if np.isnan(v):
            return "—"
        if v == int(v) and abs(v) < 1e6:
            return f"{int(v):,}"
        return f"{v:.3g}"
    return str(v)


def _family(workload: str) -> str:
    return workload if workload in ("incast", "partition-aggregate") else "poisson"


def rank_key(workload: str) -> str:
    """The metric a workload's table is ranked by."""
    return "qct_p99_ms" if _family(workload) != "poisson" else "short_fct_p99_ms"


def with_ranks(cells: pd.DataFrame, key: str) -> pd.DataFrame:
    """One cell's schemes ordered by ``key`` (lower is better) with their `rank`: the best
    and every scheme whose interval overlaps its share one, then the next tier
    (`spillway.intervals.tiers`); schemes without numbers last, ranked "—"."""
    ok = cells[cells.status == "ok"].sort_values(key, kind="stable")
    ok.insert(0, "rank", tiers([estimate(r, key) for _, r in ok.iterrows()]))
    # A tier's members together (one may trail a scheme of the next tier in value).
    # A scheme that ran but has no value for ``key`` (no round finished) is ranked "—",
    # after every tier.
    last = len(ok) + 1
    ok = ok.iloc[np.argsort([last if r == "—" else int(r.rstrip("=")) for r in ok["rank"]],
                            kind="stable")]
    rest = cells[cells.status != "ok"].copy()
    rest.insert(0, "rank", "—")
    return pd.concat([ok, rest])


def ranking(cells: pd.DataFrame, key: str, columns: list[str] | None = None) -> pd.DataFrame:
    """One cell's ranking table: rank, scheme, every metric of ``columns`` (default: the
    workload's) as `value [lo, hi]`, and a note for a scheme without numbers or with
    flows unfinished at the limit."""
    t = with_ranks(cells, key)
    if columns is None:
        columns = TABLE_COLUMNS[_family(str(t.workload.iloc[0]))] if "workload" in t else [key]
    notes = []
    for r in t.itertuples():
        n = [] if r.status == "ok" else [r.status]
        if r.status == "ok" and getattr(r, "unfinished", 0) > 0:
            stopped = getattr(r, "stopped", "")
            n.append(f"{int(r.unfinished)} flows unfinished"
                     + (f" ({stopped})" if isinstance(stopped, str) and stopped
                        else " at the limit"))
        notes.append("; ".join(n))
    out = pd.DataFrame({"rank": t["rank"].tolist(), "scheme": t.scheme.tolist()})
    for c in columns:
        if c not in t.columns:
            continue
        out[SHOW.get(c, c)] = [estimate(r, c).fmt() if c in ESTIMATED else _fmt(r.get(c))
                               for _, r in t.iterrows()]
    out["note"] = notes
    return out


def _tables(cells: pd.DataFrame, mode: Mode) -> list[str]:
    parts = []
    for w in mode.workloads:
        parts.append(f"### {w}\n")
        key = rank_key(w)
        d = cells[cells.workload == w]
        for f in mode.fabrics:
            for (x, n), g in d[d.fabric == f].groupby(["load", "fanin"], dropna=False):
                where = f"fan-in {n:g}" if w == "incast" else f"load {x:g}"
                samples = _samples_note(g, key)
                parts.append(f"**{f}, {where}** (ranked by {SHOW[key]}; {samples})\n\n"
                             + markdown_table(ranking(g, key)) + "\n")
    return parts


def _samples_note(g: pd.DataFrame, key: str) -> str:
    """How many seeds and samples stand behind a table's ranked metric."""
    ok = g[g.status == "ok"]
    if ok.empty:
        return "no scheme has numbers"
    what = "queries" if key.startswith("qct") else "short_flows"
    n = ok[what].astype(float)
    noun = "rounds" if what == "queries" and (ok.workload == "incast").all() else (
        "queries" if what == "queries" else "short flows")
    return (f"{int(ok.seeds.max())} seeds, {int(n.min()):,}-{int(n.max()):,} {noun} a scheme"
            if n.min() != n.max() else f"{int(ok.seeds.max())} seeds, {int(n.min()):,} "
            f"{noun} a scheme")


def _winners(cells: pd.DataFrame) -> pd.DataFrame:
    """Every Poisson cell's schemes tied for first on short-flow p99 (rank 1, alone or
    with the schemes whose intervals overlap its), the best value and TCP's."""
    rows = []
    for (f, w, x), g in cells[cells.workload.isin(POISSON) & (cells.status == "ok")].groupby(
            ["fabric", "workload", "load"], sort=False):
        t = with_ranks(g, "short_fct_p99_ms")
        first = t[t["rank"].isin(["1", "1="])]
        tcp = g[g.scheme == "TCP"]
        rows.append({"fabric": f, "workload": w, "load": x,
                     "tied for first (short p99)": ", ".join(first.scheme),
                     "best p99 ms": estimate(first.iloc[0], "short_fct_p99_ms").fmt(),
                     "next": (t[~t["rank"].isin(["1", "1="])].scheme.iloc[0]
                              if len(t) > len(first) else "—"),
                     "TCP p99 ms": (estimate(tcp.iloc[0], "short_fct_p99_ms").fmt()
                                    if len(tcp) else "—")})
    return pd.DataFrame(rows)


def _figures(cells: pd.DataFrame, mode: Mode, out: Path) -> list[str]:
    names = list(mode.schemes)
    fig_dir = out / "figures"
    fig_dir.mkdir(exist_ok=True)
    parts = []

    def show(title: str, paths: list[Path], what: str) -> None:
        png = [p for p in paths if p.suffix == ".png"]
        data = [p for p in paths if p.suffix == ".parquet"]
        parts.append(f"### {title}\n\n{what}\n\n" + "".join(
            f"![{title}]({p.relative_to(out)})\n" for p in png)
            + f"\nData: {', '.join(f'`{p.relative_to(out)}`' for p in data)}; SVG beside "
            "the PNG.\n")

    for w in mode.workloads:
        if w == "incast":
            show("Incast: round completion and timeouts against fan-in",
                 figures.incast_lines(cells, names, fig_dir / "incast"),
                 "99th percentile round completion time and retransmission timeouts (+0.5, "
                 "for the log scale) per fan-in.")
            show("Incast heat map", figures.heatmap(cells, "incast", names,
                                                    fig_dir / "heatmap_incast",
                                                    value="qct_p99_ms", x="fanin"),
                 "p99 round completion (ms) per scheme and fan-in; color: times the best.")
            continue
        show(f"Pareto: {w}", figures.pareto(cells, w, names, fig_dir / f"pareto_{w}"),
             "Each scheme's short-flow p99 FCT against its long-flow mean FCT; the edged "
             "points are the Pareto front (no scheme better on both).")
        if w in POISSON:
            show(f"Heat map: {w}", figures.heatmap(cells, w, names, fig_dir / f"heatmap_{w}"),
                 "Short-flow p99 FCT (ms) per scheme and load; color: times the best scheme "
                 "at that load (green 1×, red 100×).")
    return parts


def _slowdown_figs(out: Path, mode: Mode) -> list[str]:
    parts = []
    load = 0.5 if 0.5 in mode.loads else mode.loads[len(mode.loads) // 2]
    for w in [w for w in mode.workloads if w in POISSON]:
        frames = []
        for f in mode.fabrics:
            d = out / "data" / f / "poisson"
            if not (d / "catalog.duckdb").exists():
                continue
            with Results(d) as res:
                frames.append(res.sql(
                    f"SELECT '{f}' AS fabric, scheme, size_bytes, slowdown FROM flows "
                    f"WHERE cdf = '{w}' AND load = {load} ORDER BY scheme, flow_id"))
        if not frames:
            continue
        flows = pd.concat(frames, ignore_index=True)
        flows = flows[flows.scheme.isin(mode.schemes)]
        paths = figures.slowdown_by_size(flows, w, load, list(mode.schemes),
                                         out / "figures" / f"slowdown_{w}")
        parts.append(f"### Slowdown against flow size: {w}, load {load:g}\n\n"
                     + "".join(f"![slowdown {w}]({p.relative_to(out)})\n" for p in paths
                               if p.suffix == ".png")
                     + "\nData: " + ", ".join(f"`{p.relative_to(out)}`" for p in paths
                                             if p.suffix == ".parquet") + "\n")
    return parts


def _setup_section(mode: Mode) -> str:
    fab = "\n".join(f"- **{f}**: {FABRICS[f].about}." for f in mode.fabrics)
    wl = "\n".join(f"- **{w}**: {a}." for w, a in workload_about(mode).items()
                   if w in mode.workloads)
    f0 = FABRICS[mode.fabrics[0]]
    rows = pd.DataFrame([{
        "scheme": s,
        "overrides (on " + f0.name + ")": ", ".join(
            f"`{k}={toml_literal(v)}`" for k, v in scheme_overrides(s, f0).items()),
        "parameters and why": PARAMETERS.get(s, registry.scheme(s).description)}
        for s in mode.schemes])
    left = "\n".join(f"- `{s}`: {why}." for s, why in LEFT_OUT.items() if s not in mode.schemes)
    return ("## Setup\n\n**Fabrics.** Every switch port has 128 KB (KiB) of buffer (FastLane's and "
            "DeTail's size; Turbo aside, below), no forwarding delay, no ECN marking unless a "
            "scheme sets it; hosts as the simulator's defaults (1460 B segments, TCP Small "
            "Queues).\n\n" + fab + "\n\n**Workloads** (the same flows for every scheme: the "
            "generator's draws depend on the seed and the workload alone).\n\n" + wl
            + "\n\nShort flows: at most 100 KB; long flows: over 10 MB (and partition/"
            "aggregate's background flows). Percentiles interpolate linearly between order "
            "statistics.\n\n" + _statistics_section(mode) + "\n## Schemes and their "
            "parameters\n\n" + markdown_table(rows)
            + ("\n\nRegistry schemes not in this run (`spillway compare --schemes` adds "
               "them):\n\n" + left if left else "") + "\n")


def _statistics_section(mode: Mode) -> str:
    seeds = ", ".join(map(str, mode.seeds))
    return (f"### How the intervals are made\n\nEvery cell runs {len(mode.seeds)} seeds "
            f"({seeds}); a seed draws the workload (which flows, when, between which hosts) "
            "and every random stream of its run, and the same seed gives every scheme the "
            "same flows. Each number is a 95% confidence interval:\n\n"
            "- **Percentiles and means of flows and queries** (`short p99`, `long mean`, "
            "`QCT p99`, incast's `Gbit/s`) pool the cell's seeds and take a two-stage "
            f"bootstrap ({RESAMPLES:,} resamples): the seeds are drawn with replacement, then "
            "the flows (or queries, or rounds) within each drawn seed, and the interval is "
            "the 2.5th to 97.5th percentile of the statistic over the resamples. It carries "
            "both the spread between seeds and the sampling of flows within a run.\n"
            "- **Per-run quantities** (drops, retransmissions, timeouts, pauses, "
            "notifications, PACKs, FCP, dead and duplicate bytes, queues, Poisson goodput) "
            "are means over the seeds with a Student-t interval (counts cut at 0).\n"
            "- **Ranks**: the best scheme (by value) and every scheme whose interval overlaps "
            "its interval share its rank (`1=`): the data cannot tell them apart. Of the "
            "rest, the best leads the next tier in the same way; a tier's rank is one more "
            "than the schemes ranked above it.\n"
            "- **Verdicts** are PASS only where the claim holds at the interval's "
            "unfavourable end, FAIL only where it fails at the favourable end, otherwise "
            "INCONCLUSIVE; a claim over cells passes only if every cell passes "
            "(`spillway.reproduce.claim`). Ratios and reductions take the interval ends that "
            "bound them.\n\n"
            "The sample behind each table is in its heading; `cells.parquet` has every "
            "metric's `_lo` and `_hi`, the seeds and the short flows, long flows and queries "
            "behind them, and `runs.parquet` every seed's own numbers.\n")


def _cost(cells: pd.DataFrame) -> pd.DataFrame:
    ok = cells[cells.status == "ok"]
    t = ok.groupby("scheme", sort=False).agg(runs=("seeds", "sum"), wall_s=("wall_s", "sum"),
                                             median_mhops_per_s=("mhops_per_s", "median"))
    return t.reset_index()


def quick_leaves_out() -> str:
    """What quick mode leaves out compared with full mode."""
    q, f = QUICK, FULL
    return (f"Quick mode runs {len(q.seeds)} seeds a cell (full: {len(f.seeds)}), so its "
            "intervals are wider and more schemes share a rank; "
            f"{len(q.fabrics)} fabrics ({', '.join(q.fabrics)}; full adds "
            f"{', '.join(x for x in f.fabrics if x not in q.fabrics)}), loads "
            f"{', '.join(map(str, q.loads))}"
            + ("" if q.loads == f.loads else f" (full: {', '.join(map(str, f.loads))})")
            + ", "
            f"{q.flows['websearch']:,} web-search and {q.flows['datamining']:,} data-mining "
            f"flows a run (full: {f.flows['websearch']:,} and {f.flows['datamining']:,}), "
            f"fan-ins {', '.join(map(str, q.fanins))} (full: {', '.join(map(str, f.fanins))}), "
            f"{q.incast_rounds} incast rounds (full: {f.incast_rounds}) and "
            f"{q.pa_queries:,} partition/aggregate queries (full: {f.pa_queries:,}). With a "
            "few hundred short flows a cell, p99.9 is close to the largest sample.")


def write_report(out: Path, mode: Mode, quick: bool, sim_s: float, t0: float,
                 runs: tuple[int, int] = (0, 0)) -> Path:
    """Analyses the sweeps under ``out/data`` and writes ``out/report.md``; ``runs``: how
    many runs this invocation simulated and how many it found done already."""
    print("[report] intervals, tables, figures, verdicts", file=sys.stderr, flush=True)
    found, per_run = collect(out / "data", list(mode.fabrics), list(FAMILIES))
    cells = complete(found, mode)
    per_run = per_run[per_run.scheme.isin(mode.schemes)] if len(per_run) else per_run
    keys = KEYS
    det = [c for c in cells.columns if c not in COST]
    cells[det].to_parquet(out / "cells.parquet", index=False)
    cells[[*keys, *COST]].to_parquet(out / "cost.parquet", index=False)
    cells.to_csv(out / "cells.csv", index=False)
    if len(per_run):
        (per_run.drop(columns=[*COST, "hash"]).sort_values([*keys, "seed"], kind="stable")
         .to_parquet(out / "runs.parquet", index=False))
    sanity = claims.sanity(cells, per_run)
    heads = claims.headline_claims(cells, per_run)
    classes_table, classed = claims.size_classes(cells)
    limits_text, at_scale = limits.section(out / "data") if mode.limits else ("", [])
    claim.table([*sanity, *heads, *classed, *at_scale],
                kind=["sanity"] * len(sanity) + ["headline"] * len(heads)
                + ["classes"] * len(classed) + ["limits"] * len(at_scale)
                ).to_parquet(out / "verdicts.parquet", index=False)
    figs = _figures(cells, mode, out) + _slowdown_figs(out, mode)
    from spillway.reproduce import showdown

    missing = cells[cells.status != "ok"]
    parts = [f"# {showdown.TITLE}\n"]
    banner = (f"> **Intervals from {len(mode.seeds)} seeds a cell** (95%; § How the intervals "
              "are made).")
    if quick:
        banner = "> **Quick run** (`--quick`). " + quick_leaves_out()
    parts.append(banner + "\n")
    parts.append(inspect.cleandoc(showdown.__doc__ or "") + "\n")
    every = [*sanity, *heads, *classed, *at_scale]
    parts.append("## Summary\n\n" + "\n".join(
        f"- **{v.verdict.value}** {v.claim}" for v in every)
        + f"\n\n{claim.tally(every)}. {len(cells)} cells ({len(mode.schemes)} schemes × "
        f"{len(cells) // max(len(mode.schemes), 1)} settings, {len(mode.seeds)} seeds "
        f"each), {len(cells) - len(missing)} with numbers"
        + (f", {len(missing)} without (each says why in its table)" if len(missing) else "")
        + ".\n\n**Short-flow p99: the schemes tied for first in each cell** (Poisson "
        "workloads; tied: its interval overlaps the leader's):\n\n"
        + markdown_table(_winners(cells)) + "\n")
    parts.append(_setup_section(mode))
    parts.append("## Sanity verdicts\n\nComputed from the data, judged on the intervals "
                 "(`verdicts.parquet`).\n\n" + claim.markdown(sanity) + "\n")
    parts.append("## Each paper's headline, off its home turf\n\n" + claim.markdown(heads)
                 + "\n")
    if len(classes_table):
        parts.append("## DeTail and Priority+PFC with size classes, and with one class\n\n"
                     "Their main rows mark flows by size (`workload.classes_by_size`: up to "
                     "100 KB in class 0, the rest in class 1), as an application that knows its "
                     "request sizes would; the `-1class` rows are the same switches serving one "
                     "class. Short-flow p99 FCT (ms) in every Poisson cell:\n\n"
                     + markdown_table(classes_table) + "\n\n" + claim.markdown(classed) + "\n")
    if limits_text:
        parts.append(limits_text)
    parts.append(READING)
    parts.append("## Rankings\n\nEvery scheme in every table, ranked by its interval; a "
                 "scheme without numbers in a cell says why in `note`. Columns (all in "
                 "`cells.parquet`, with `_lo` and `_hi`; cost in `cost.parquet`):\n\n"
                 + "\n".join(f"- `{SHOW[c]}` (`{c}`): {COLUMNS[c]}" for c in SHOW) + "\n")
    parts += _tables(cells, mode)
    parts.append("## Figures\n")
    parts += figs
    total = time.perf_counter() - t0
    parts.append("## Simulation cost\n\n" + markdown_table(_cost(cells)) + f"\n\n`wall_s` "
                 "sums each run's own time. This invocation simulated "
                 f"{runs[0]} runs ({runs[1]} were done already, from an earlier invocation "
                 f"into the same directory) in {sim_s:.0f} s; with the report, {total:.0f} s of "
                 f"wall time on "
                 f"{_cores()} (`--workers` sets the parallel runs; `spillway compare --backend "
                 "dask --scheduler ADDR` runs them on a cluster).\n")
    report = out / "report.md"
    report.write_text("\n".join(parts))
    return report


def _cores() -> str:
    import os

    return f"{os.cpu_count()} cores"
