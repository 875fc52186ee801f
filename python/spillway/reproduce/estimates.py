"""Estimates for the reproductions' claims, from their sweeps' tables: the samples of a
cell split by seed (the runs of `spillway.intervals.Resamples`), for one cell or for every
group of a table at once, and per-run values carried over the seeds. The arithmetic on
estimates (ratios, means of several, differences) is `spillway.intervals`'; what the
claims say of the estimates, `spillway.reproduce.claim`'s to judge."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from spillway.intervals import Estimate, Resamples, over_seeds
from spillway.store import Results


def seeds_of(res: Results) -> list[int]:
    """The seeds of a sweep's finished points, in order."""
    pts = res.sql("SELECT DISTINCT seed FROM points WHERE status = 'done' ORDER BY seed")
    return [int(s) for s in pts["seed"]]


def by_seed(frame: pd.DataFrame, cols: Sequence[str], seeds: Iterable[int]) -> list[np.ndarray]:
    """``frame``'s ``cols`` as one array per seed of ``seeds`` (its `seed` column), in that
    order; a seed without rows is an empty run, which still counts as a run (a cell whose
    seed finished no flow of this kind)."""
    parts = {int(s): g[list(cols)].to_numpy(float) for s, g in frame.groupby("seed", sort=False)}
    return [parts.get(int(s), np.empty((0, len(cols)))) for s in seeds]


def resampled(frame: pd.DataFrame, cols: Sequence[str], seeds: Iterable[int],
              key: str) -> Resamples:
    """The two-stage bootstrap of ``frame``'s rows split by seed, its draws seeded by
    ``key`` (a figure's id and cell: schemes of a cell are resampled alike)."""
    return Resamples(by_seed(frame, cols, seeds), key)


def per_run(frame: pd.DataFrame, col: str, floor: float | None = None) -> Estimate:
    """The mean over the runs (one row per seed) of a per-run quantity ``col``, with a
    Student-t interval (one run: `one run`, no interval)."""
    return over_seeds(frame.sort_values("seed")[col].astype(float).tolist(), floor=floor)


def resampled_groups(samples: pd.DataFrame, by: Sequence[str], cols: Sequence[str], key: str,
                     alike: str = "scheme") -> dict[tuple, Resamples]:
    """For every group of ``by`` in ``samples`` (one row per flow, query or round, with a
    `seed` column): the two-stage bootstrap of its ``cols``, one array per seed of the
    table (a seed without rows of the group an empty one). ``key`` (the figure's id) and
    the group's values but its ``alike`` column's (the scheme, the environment) seed the
    draws, so that the schemes of a cell are resampled alike."""
    seeds = sorted(samples["seed"].unique())
    out: dict[tuple, Resamples] = {}
    for k, g in samples.groupby(list(by), sort=False):
        k = k if isinstance(k, tuple) else (k,)
        cell = "/".join(str(v) for c, v in zip(by, k, strict=True) if c != alike)
        out[k] = Resamples(by_seed(g, cols, seeds), key=f"{key}/{cell}")
    return out


def per_run_groups(runs: pd.DataFrame, by: Sequence[str], col: str,
                   floor: float | None = None) -> dict[tuple, Estimate]:
    """A per-run quantity (one row per run in ``runs``) as the mean over the seeds of each
    group of ``by``, with its Student-t interval (`one run` with one seed)."""
    return {k if isinstance(k, tuple) else (k,): per_run(g, col, floor)
            for k, g in runs.groupby(list(by), sort=False)}
