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
from spillway.reproduce import Verdict, markdown_table
from spillway.reproduce.showdown import claims, figures
from spillway.reproduce.showdown.metrics import COLUMNS, COST, collect
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
    "long_fct_mean_ms": "long mean ms", "qct_p99_ms": "QCT p99 ms", "goodput_gbps": "Gbit/s",
    "drops": "drops", "retransmits": "retx", "timeouts": "RTOs", "pauses": "pauses",
    "notifications": "notifs", "packs": "PACKs", "fcp_pct": "FCP %", "dead_pct": "dead %",
    "dup_pct": "dup %", "queue_mean_bytes": "queue B", "wall_s": "wall s",
    "mhops_per_s": "Mhop/s",
}


READING = """## Reading the results

- **DeTail and Priority+PFC on Poisson traffic.** Every Poisson flow is in one priority
  class, and a lossless fabric never tells TCP to slow down: windows grow to the receive
  window (1 MB), pauses spread the queues upstream, and short flows wait behind long ones
  in the same class. DeTail's own workloads (§8) put queries above background traffic;
  partition/aggregate here does too (background in class 7), and that is where DeTail
  does best.
- **Fastpass's control traffic is in band.** Every endpoint reports to the arbiter every
  10 µs and the arbiter answers every 16 timeslots, through the same switches as the data,
  at the highest priority, with 1% of each link's time set aside for it. All of it crosses
  the arbiter's own rack, whose ports are Fastpass's only busy queues (`queue_max_kb`,
  the busiest port in the verdict's detail); the rest of the fabric stays near empty.
- **Ties at the floor.** At a low load most short flows meet no queue at all: their p99
  is the ideal FCT, the same for every scheme (a data-mining short flow is usually one
  packet). The verdicts count such ties as ties.
- **Small samples.** A quick run has a few hundred short flows a cell; its p99.9 is
  about the largest of them.
"""


def expected_cells(mode: Mode) -> pd.DataFrame:
    """Every (fabric, workload, load or fan-in, scheme) the mode runs: the rows every table
    must have."""
    rows = []
    for f in mode.fabrics:
        for w in mode.workloads:
            xs: list[tuple[float, float]]
            if w in POISSON:
                xs = [(x, np.nan) for x in mode.loads_for(FABRICS[f])]
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
    keys = ["fabric", "workload", "load", "fanin", "scheme"]
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


def ranking(cells: pd.DataFrame, key: str) -> pd.DataFrame:
    """One cell's schemes ranked by ``key`` (lower is better); schemes without numbers
    last, with the reason in `note`."""
    ok = cells[cells.status == "ok"].sort_values(key, kind="stable")
    t = pd.concat([ok, cells[cells.status != "ok"]])
    t.insert(0, "rank", [str(i + 1) for i in range(len(ok))] + ["—"] * (len(t) - len(ok)))
    notes = []
    for r in t.itertuples():
        n = [] if r.status == "ok" else [r.status]
        if r.status == "ok" and r.unfinished > 0:
            n.append(f"{int(r.unfinished)} flows unfinished at the limit")
        notes.append("; ".join(n))
    t["note"] = notes
    cols = ["rank", "scheme", *[c for c in SHOW if c in t.columns], "note"]
    t = t[cols].rename(columns=SHOW)
    return pd.DataFrame({c: [_fmt(v) for v in t[c]] for c in t.columns})


def _tables(cells: pd.DataFrame, mode: Mode) -> list[str]:
    parts = []
    for w in mode.workloads:
        parts.append(f"### {w}\n")
        key = "qct_p99_ms" if w in ("incast", "partition-aggregate") else "short_fct_p99_ms"
        d = cells[cells.workload == w]
        for f in mode.fabrics:
            for (x, n), g in d[d.fabric == f].groupby(["load", "fanin"], dropna=False):
                where = f"fan-in {n:g}" if w == "incast" else f"load {x:g}"
                parts.append(f"**{f}, {where}** (ranked by {SHOW[key]})\n\n"
                             + markdown_table(ranking(g, key)) + "\n")
    return parts


def _verdict_lines(vs: list[Verdict]) -> str:
    return "\n".join(f"- **{'PASS' if v.holds else 'FAIL'}**: {v.claim} — {v.detail}"
                     for v in vs)


def _winners(cells: pd.DataFrame, mode: Mode) -> pd.DataFrame:
    rows = []
    for (f, w, x), g in cells[cells.workload.isin(POISSON) & (cells.status == "ok")].groupby(
            ["fabric", "workload", "load"], sort=False):
        g = g.sort_values("short_fct_p99_ms")
        tcp = g.set_index("scheme")["short_fct_p99_ms"].get("TCP", np.nan)
        rows.append({"fabric": f, "workload": w, "load": x, "winner (short p99)": g.scheme.iloc[0],
                     "p99 ms": g.short_fct_p99_ms.iloc[0], "runner-up": g.scheme.iloc[1]
                     if len(g) > 1 else "—", "TCP p99 ms": tcp})
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
            "statistics.\n\n## Schemes and their parameters\n\n" + markdown_table(rows)
            + ("\n\nRegistry schemes not in this run (`spillway compare --schemes` adds "
               "them):\n\n" + left if left else "") + "\n")


def _cost(cells: pd.DataFrame) -> pd.DataFrame:
    ok = cells[cells.status == "ok"]
    t = ok.groupby("scheme", sort=False).agg(runs=("wall_s", "size"), wall_s=("wall_s", "sum"),
                                             median_mhops_per_s=("mhops_per_s", "median"))
    return t.reset_index()


def quick_leaves_out() -> str:
    """What quick mode leaves out compared with full mode."""
    q, f = QUICK, FULL
    return (f"Quick mode runs {len(q.fabrics)} fabrics ({', '.join(q.fabrics)}; full adds "
            f"{', '.join(x for x in f.fabrics if x not in q.fabrics)}), loads "
            f"{', '.join(map(str, q.loads))} (full: {', '.join(map(str, f.loads))}; "
            f"{', '.join(map(str, f.big_loads))} on fat-tree-1024), "
            f"{q.flows['websearch']:,} web-search and {q.flows['datamining']:,} data-mining "
            f"flows a run (full: {f.flows['websearch']:,} and {f.flows['datamining']:,}), "
            f"fan-ins {', '.join(map(str, q.fanins))} (full: {', '.join(map(str, f.fanins))}), "
            f"{q.incast_rounds} incast rounds (full: {f.incast_rounds}) and "
            f"{q.pa_queries:,} partition/aggregate queries (full: {f.pa_queries:,}), one seed "
            "as full. With a few hundred short flows a cell, p99.9 is close to the largest "
            "sample and p99 to the few largest: rankings between close schemes can swap.")


def write_report(out: Path, mode: Mode, quick: bool, sim_s: float, t0: float,
                 runs: tuple[int, int] = (0, 0)) -> Path:
    """Analyses the sweeps under ``out/data`` and writes ``out/report.md``; ``runs``: how
    many runs this invocation simulated and how many it found done already."""
    print("[report] tables, figures, verdicts", file=sys.stderr, flush=True)
    cells = complete(collect(out / "data", list(mode.fabrics), list(FAMILIES)), mode)
    det = [c for c in cells.columns if c not in COST]
    cells[det].to_parquet(out / "cells.parquet", index=False)
    cells[["fabric", "workload", "load", "fanin", "scheme", *COST]].to_parquet(
        out / "cost.parquet", index=False)
    cells.to_csv(out / "cells.csv", index=False)
    sanity = claims.sanity(cells)
    heads = claims.headline_claims(cells)
    pd.DataFrame([{"claim": v.claim, "holds": v.holds, "detail": v.detail} for v in sanity]
                 ).to_parquet(out / "verdicts.parquet", index=False)
    figs = _figures(cells, mode, out) + _slowdown_figs(out, mode)
    from spillway.reproduce import showdown

    missing = cells[cells.status != "ok"]
    parts = [f"# {showdown.TITLE}\n"]
    if quick:
        parts.append("> **Quick run** (`--quick`). " + quick_leaves_out() + "\n")
    parts.append(inspect.cleandoc(showdown.__doc__ or "") + "\n")
    parts.append("## Summary\n\n" + "\n".join(
        f"- **{'PASS' if v.holds else 'FAIL'}** {v.claim}" for v in sanity)
        + f"\n\n{len(cells)} cells ({len(mode.schemes)} schemes), {len(cells) - len(missing)} "
        f"with numbers" + (f", {len(missing)} without (each says why in its table)"
                           if len(missing) else "") + ".\n\n**Short-flow p99 winners** "
        "(Poisson workloads):\n\n" + markdown_table(_winners(cells, mode)) + "\n")
    parts.append(_setup_section(mode))
    parts.append("## Sanity verdicts\n\nComputed from the data (`verdicts.parquet`).\n\n"
                 + _verdict_lines(sanity) + "\n")
    parts.append("## Each paper's headline, off its home turf\n\n" + "\n".join(
        f"- **{p}** claims {c}. On the common setup: **{'holds' if v.holds else 'does not hold'}"
        f"** ({v.claim}): {v.detail}." for p, c, v in heads) + "\n")
    parts.append(READING)
    parts.append("## Rankings\n\nEvery scheme in every table; a scheme without numbers in a "
                 "cell says why in `note`. Columns (all in `cells.parquet`, cost in "
                 "`cost.parquet`):\n\n" + "\n".join(
                     f"- `{SHOW[c]}` (`{c}`): {COLUMNS[c]}" for c in SHOW) + "\n")
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
