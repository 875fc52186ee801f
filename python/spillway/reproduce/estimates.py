"""Estimates for the paper reproductions' claims, from their sweeps' tables: the samples
of a cell split by seed (the runs of `spillway.intervals.Resamples`), per-run values
carried over the seeds, and the arithmetic on estimates that `spillway.intervals` leaves
out (means of several, differences, distances from a value), each with the interval
from the ends that bound it (conservative, like `intervals.ratio`).

What the claims then say of these estimates is `spillway.reproduce.claim`'s to judge."""

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


def _derived(value: float, lo: float, hi: float, es: Sequence[Estimate]) -> Estimate:
    exact = all(e.method == "exact" for e in es)
    return Estimate(value, lo, hi, min(e.n for e in es), min(e.seeds for e in es),
                    "exact" if exact else "derived")


def mean_of(es: Sequence[Estimate]) -> Estimate:
    """The mean of several estimates (a mean over sizes, loads or sender counts), its
    interval the mean of their ends: every value the mean could take lies in it."""
    es = list(es)
    if not es or not all(e.known for e in es):
        return Estimate.missing()
    if len(es) == 1:
        return es[0]
    k = len(es)
    return _derived(sum(e.value for e in es) / k, sum(e.lo for e in es) / k,
                    sum(e.hi for e in es) / k, es)


def difference(a: Estimate, b: Estimate) -> Estimate:
    """``a - b``, its interval from the ends that bound it."""
    if not (a.known and b.known):
        return Estimate.missing()
    return _derived(a.value - b.value, a.lo - b.hi, a.hi - b.lo, [a, b])


def distance(e: Estimate, x: float) -> Estimate:
    """``|e - x|``: how far an estimate is from a value (a share from the fair one), its
    interval every distance the interval's values could have (from 0 when it holds x)."""
    if not e.known:
        return Estimate.missing()
    ends = (abs(e.lo - x), abs(e.hi - x))
    lo = 0.0 if e.lo <= x <= e.hi else min(ends)
    return Estimate(abs(e.value - x), lo, max(ends), e.n, e.seeds,
                    e.method if e.method in ("exact", "one run") else "derived")


def minus(e: Estimate, x: float) -> Estimate:
    """``e - x`` for a constant ``x`` (a ratio as a change: ratio - 1)."""
    if not e.known:
        return e
    return Estimate(e.value - x, e.lo - x, e.hi - x, e.n, e.seeds, e.method)
