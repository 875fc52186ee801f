"""Head to head: every scheme of the five papers on the same fabrics and the same
workloads (issue 30). None of the papers compared itself with the other four; each picked
its own topology, workload and baseline. Here they all run on the 128-host fat tree and the
144-host leaf-spine at 10 Gbit/s (and a 1024-host fat tree in full mode), offered the very
same flows: web-search and data-mining Poisson traffic at loads from 0.2 to 0.8, incast
at fan-ins from 8 to 256, and partition/aggregate queries beside background flows.

Every scheme gets the same fabric, the same 128 KB switch buffers and the same flows (the
workload generator's draws do not depend on the scheme; the fabric's last host runs
Fastpass's arbiter and is left out of every scheme's workload); what each scheme's own
design asks beyond that (Turbo's small buffers and short timeout, DeTail's and
Fastpass's timeouts, Fastpass's arbiter link) is listed with the reason in § Schemes and
their parameters.

`spillway reproduce showdown [--quick] --out DIR` runs it all; `spillway compare --out DIR
[--schemes ...] [--workloads ...] [--fabrics ...] [--backend dask --scheduler ADDR]` runs a
chosen part (docs/sweeps.md § Showdown).
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

from spillway import schemes as registry
from spillway.errors import UsageError
from spillway.reproduce.showdown import limits
from spillway.reproduce.showdown.report import write_report
from spillway.reproduce.showdown.setup import FABRICS, FULL, QUICK, Mode, sweeps
from spillway.sweep import build_sweep, run_sweep

TITLE = "Showdown: every scheme of the five papers on the same fabrics and workloads"
FAMILIES = ("poisson", "incast", "partition-aggregate")


def mode_for(quick: bool, schemes: list[str] | None = None, workloads: list[str] | None = None,
             fabrics: list[str] | None = None, seeds_from: int = 1) -> Mode:
    """The quick or full mode, restricted to the schemes, workloads and fabrics given
    (each checked against what exists; UsageError names an unknown one)."""
    m = QUICK if quick else FULL
    if schemes:
        for s in schemes:
            try:
                registry.scheme(s)
            except registry.UnknownSchemeError as e:
                raise UsageError(f"compare: {e}") from None
        m = dataclasses.replace(m, schemes=tuple(schemes))
    if workloads:
        unknown = set(workloads) - set(m.workloads)
        if unknown:
            raise UsageError(f"compare: unknown workload(s) {sorted(unknown)}; known: "
                             f"{', '.join(m.workloads)}")
        m = dataclasses.replace(m, workloads=tuple(w for w in m.workloads if w in workloads))
    if fabrics:
        unknown = set(fabrics) - set(FABRICS)
        if unknown:
            raise UsageError(f"compare: unknown fabric(s) {sorted(unknown)}; known: "
                             f"{', '.join(FABRICS)}")
        m = dataclasses.replace(m, fabrics=tuple(f for f in FABRICS if f in fabrics))
    if seeds_from < 0:
        raise UsageError(f"reproduce: --seeds-from {seeds_from}: expected a seed of 0 or more")
    return dataclasses.replace(m, seeds=tuple(s + seeds_from - 1 for s in m.seeds))


def report(out: str | Path, quick: bool = False, workers: int | None = None,
           only: list[str] | None = None, seeds_from: int = 1,
           schemes: list[str] | None = None, fabrics: list[str] | None = None,
           backend: str = "local", scheduler: str | None = None,
           mode: Mode | None = None) -> Path:
    """Runs the showdown into ``out`` (sweeps under ``out/data/<fabric>/<family>``, cached
    as every sweep is) and writes ``out/report.md`` with its figures and Parquet data;
    returns the report's path. ``only``: the workloads to run (default all); ``mode``: a
    mode of one's own instead of quick or full (the tests' tiny one)."""
    if str(out) == "":
        raise UsageError("reproduce: --out is empty: name the report's directory")
    mode = mode or mode_for(quick, schemes, only, fabrics, seeds_from)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    ran = cached = 0
    runs = [(f, fam, sw) for f in mode.fabrics
            for fam, sw in sweeps(FABRICS[f], mode, mode.schemes).items()]
    if mode.limits and limits.FABRIC.name in mode.fabrics:
        runs += [(limits.FABRIC.name, name, sw) for name, sw in limits.sweeps(mode).items()]
    for f, fam, sw in runs:
        s = build_sweep(sw)
        print(f"[{f}/{fam}] {len(s.points)} runs", file=sys.stderr, flush=True)
        r = run_sweep(s, out / "data" / f / fam, workers=workers, backend=backend,
                      scheduler=scheduler, quiet=True, progress=sys.stderr.isatty())
        ran, cached = ran + r.ran, cached + r.skipped
    sim_s = time.perf_counter() - t0
    return write_report(out, mode, quick, sim_s, t0, (ran, cached))
