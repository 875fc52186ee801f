"""`spillway reproduce NAME`: a paper's figures as sweeps + analysis + plots, with the
paper's own numbers (typed in from the paper, section cited) beside ours in a report.

Each reproduction module defines ``figures(quick) -> list[Figure]``, or (the showdown,
which compares schemes rather than reproducing a paper) ``report(out, quick, workers,
only, seeds_from) -> Path`` that writes its own report. A figure names its
sweep (the points), its analysis (a table from the sweep's results), its plot, what the
paper reports, and its claims: each the paper's words and number beside ours with its
95% interval, judged PASS, FAIL or INCONCLUSIVE by `spillway.reproduce.claim`, the one
module every reproduction states its claims with.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from spillway.errors import UsageError
from spillway.reproduce import claim as claims_
from spillway.reproduce.claim import Claim
from spillway.store import Results
from spillway.sweep import build_sweep, run_sweep

REPRODUCTIONS = {
    "incast": "spillway.reproduce.incast",
    "fastlane": "spillway.reproduce.fastlane",
    "cp": "spillway.reproduce.cp",
    "detail": "spillway.reproduce.detail",
    "turbo": "spillway.reproduce.turbo",
    "fastpass": "spillway.reproduce.fastpass",
    "hpcc": "spillway.reproduce.hpcc",
    "showdown": "spillway.reproduce.showdown",
}


@dataclass
class Figure:
    id: str
    title: str
    source: str
    setup: str
    # None: a figure drawn from no simulation (its analysis gets no results).
    sweep: dict[str, Any] | None
    # (results, figure dir) -> (table, image paths, claims)
    analyze: Callable[[Results | None, Path],
                      tuple[pd.DataFrame, list[Path], list[Claim]]]
    paper: list[str] = field(default_factory=list)
    metrics: list[Callable[..., Any]] = field(default_factory=list)
    notes: str = ""
    # Figures drawn from the same sweep name the same data directory; the sweep runs
    # once and later figures find every point cached.
    data: str | None = None


def markdown_table(df: pd.DataFrame, floatfmt: str = "{:.4g}") -> str:
    def cell(v: Any) -> str:
        if isinstance(v, float):
            return floatfmt.format(v)
        return str(v)

    head = "| " + " | ".join(map(str, df.columns)) + " |"
    sep = "|" + "---|" * len(df.columns)
    rows = ["| " + " | ".join(cell(v) for v in r) + " |" for r in df.itertuples(index=False)]
    return "\n".join([head, sep, *rows])


def shift_seeds(sweep: dict[str, Any], seeds_from: int) -> dict[str, Any]:
    """The sweep with its seeds renumbered from ``seeds_from`` (seeds 1..n become
    seeds_from..seeds_from+n-1; a list is shifted by seeds_from - 1): the same figure on
    other random draws."""
    if seeds_from < 0:
        raise UsageError(f"reproduce: --seeds-from {seeds_from}: expected a seed of 0 or more")
    seeds = sweep.get("seeds", [1])
    if isinstance(seeds, int):
        seeds = list(range(1, seeds + 1))
    return sweep | {"seeds": [s + seeds_from - 1 for s in seeds]}


def reproduce(name: str, out: str | Path, quick: bool = False, workers: int | None = None,
              only: list[str] | None = None, seeds_from: int = 1) -> Path:
    """Runs reproduction ``name`` into ``out``; returns the path of report.md. ``only``
    restricts it to the figures with these ids; ``seeds_from`` renumbers every figure's
    seeds from that seed (1: the reproduction's own)."""
    if name not in REPRODUCTIONS:
        raise UsageError(f"reproduce: unknown reproduction {name!r}; "
                         f"known: {', '.join(REPRODUCTIONS)}")
    if str(out) == "":
        raise UsageError("reproduce: --out is empty: name the report's directory")
    shift_seeds({}, seeds_from)  # refuses a negative seed before anything is written
    mod = importlib.import_module(REPRODUCTIONS[name])
    if hasattr(mod, "report"):
        # A report of its own shape (the showdown: rankings, not a paper's figures); `only`
        # names its workloads.
        return mod.report(out, quick=quick, workers=workers, only=only, seeds_from=seeds_from)
    figs = mod.figures(quick)
    if only:
        unknown = set(only) - {f.id for f in figs}
        if unknown:
            raise UsageError(f"reproduce: unknown figure(s) {sorted(unknown)}; "
                             f"{name} has: {', '.join(f.id for f in figs)}")
        figs = [f for f in figs if f.id in only]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    parts = [f"# Reproduction: {mod.TITLE}\n"]
    if quick:
        parts.append("> **Quick run** (`--quick`): fewer points, fewer rounds and fewer seeds, "
                     "so that it finishes in minutes. Curves are coarse and intervals wide; "
                     "run without `--quick` for the faithful reproduction.\n")
    parts.append(f"> **Claims** are judged on 95% intervals (`{CLAIMS_DOC}`): PASS only "
                 "where a claim holds at its interval's unfavourable end, FAIL only where it "
                 "fails even at the favourable end, INCONCLUSIVE otherwise. Percentiles and "
                 "means of flows, queries and rounds carry a bootstrap interval over them and "
                 "over the seeds; a per-run number from one run carries none, and says so "
                 "(`one run`).\n")
    if seeds_from != 1:
        parts.append(f"> **Other draws** (`--seeds-from {seeds_from}`): every figure's seeds "
                     f"are numbered from {seeds_from} instead of 1; the notes' figures were "
                     "measured on the reproduction's own seeds.\n")
    parts.append(inspect.cleandoc(mod.__doc__ or "") + "\n")
    summary_rows = []
    every: list[Claim] = []
    figure_of: list[str] = []
    if seeds_from != 1:
        for f in figs:
            if f.sweep is not None:
                f.sweep = shift_seeds(f.sweep, seeds_from)
    for fig in figs:
        print(f"[{fig.id}] {fig.title}", file=sys.stderr, flush=True)
        if fig.sweep is None:
            table, images, stated = fig.analyze(None, out)
        else:
            data = out / "data" / (fig.data or fig.id)
            # A progress bar on a terminal (points done, ETA), nothing else.
            sw = run_sweep(build_sweep(fig.sweep), data, workers=workers, quiet=True,
                           progress=sys.stderr.isatty())
            if sw.failed:
                with Results(data) as res:
                    errors = res.sql("SELECT DISTINCT error FROM points "
                                     "WHERE status = 'failed'")
                raise SystemExit(f"spillway reproduce: {sw.failed} point(s) of {fig.id} "
                                 "failed: " + "; ".join(errors["error"]))
            with Results(data) as res:
                table, images, stated = fig.analyze(res, out)
        if not all(isinstance(c, Claim) for c in stated):
            raise TypeError(f"{fig.id}: a figure's claims are spillway.reproduce.claim Claims")
        every += stated
        figure_of += [fig.id] * len(stated)
        table.to_csv(out / f"{fig.id}.csv", index=False)
        parts.append(f"## {fig.title}\n\n*Source: {fig.source}*\n\n**Setup.** {fig.setup}\n")
        for img in images:
            if img.suffix == ".png":
                parts.append(f"![{fig.id}]({img.relative_to(out)})\n")
        sweep_note = (f", sweep: `data/{fig.data or fig.id}/`" if fig.sweep is not None
                      else ", no simulation")
        parts.append(f"**Spillway** (data: `{fig.id}.csv`{sweep_note})"
                     "\n\n" + markdown_table(table) + "\n")
        if fig.paper:
            parts.append("**The paper reports**\n\n" + "\n".join(f"- {p}" for p in fig.paper)
                         + "\n")
        parts.append("**Claims**\n\n" + claims_.markdown(stated) + "\n")
        if fig.notes:
            parts.append(f"**Notes.** {fig.notes}\n")
        if fig.metrics:
            parts.append("**Metric definitions**\n\n" + "\n".join(
                f"- `{m.__name__}`: {' '.join(inspect.getdoc(m).split())}" for m in fig.metrics)
                + "\n")
        summary_rows.append({"figure": fig.title, "claims": claims_.tally(stated)})
    claims_.table(every, figure=figure_of).to_parquet(out / "verdicts.parquet", index=False)
    summary = ("## Summary\n\n" + markdown_table(pd.DataFrame(summary_rows))
               + f"\n\n{claims_.tally(every)} (every claim with its figure: "
               "`verdicts.parquet`). Wall time: "
               f"{time.perf_counter() - t0:.0f} s.\n")
    parts.insert(2 + quick + (seeds_from != 1), summary)
    report = out / "report.md"
    report.write_text("\n".join(parts))
    return report


CLAIMS_DOC = "spillway.reproduce.claim"
