"""The DeTail figures' numbers with their 95% intervals (`spillway.intervals`), from which
their claims are judged (`spillway.reproduce.claim`).

A percentile of queries is bootstrapped over the queries and the seeds of its cell (two
stages: `Resamples`), the draws keyed by the figure and the cell, not by the environment,
so that the environments of a cell are resampled alike. A run's own number (a background
flow's throughput, a count) is averaged over the seeds with a Student-t interval, and
says `one run` with one seed. A reduction or a ratio takes the ends of the intervals it is
computed from (`intervals.reduction`, `ratio`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from spillway.intervals import Estimate, Resamples


def resampled(samples: pd.DataFrame, by: Sequence[str], cols: Sequence[str], key: str,
              env: str = "env") -> dict[tuple, Resamples]:
    """For every group of ``by`` in ``samples`` (one row per query, with a `seed`
    column): the two-stage bootstrap of its ``cols``, one array per seed of the sweep
    (a seed without such queries an empty one). ``key`` (the figure's id) and the group's
    values but its environment's (column ``env``) seed the draws."""
    seeds = sorted(samples["seed"].unique())
    out: dict[tuple, Resamples] = {}
    for k, g in samples.groupby(list(by), sort=False):
        k = k if isinstance(k, tuple) else (k,)
        cell = "/".join(str(v) for c, v in zip(by, k, strict=True) if c != env)
        out[k] = Resamples([g.loc[g["seed"] == s, list(cols)].to_numpy(dtype=float)
                            for s in seeds], key=f"{key}/{cell}")
    return out


def qct_quantiles(samples: pd.DataFrame, by: Sequence[str], qs: Sequence[float], key: str,
                  env: str = "env") -> dict[tuple, list[Estimate]]:
    """The ``qs`` quantiles (0..1) of `qct_ps`, in ms, of every group of ``by``, with
    their bootstrap intervals (`resampled`)."""
    s = samples.assign(qct_ms=samples["qct_ps"].astype(float) / 1e9)
    return {k: r.quantiles(0, qs) for k, r in resampled(s, by, ["qct_ms"], key, env).items()}


def p99s(samples: pd.DataFrame, by: Sequence[str], key: str,
         env: str = "env") -> dict[tuple, Estimate]:
    """The 99th percentile of `qct_ps` (ms) of every group of ``by``."""
    return {k: v[0] for k, v in qct_quantiles(samples, by, [0.99], key, env).items()}


def mean_of(es: Sequence[Estimate]) -> Estimate:
    """The mean of several estimates (a reduction averaged over query sizes), its interval
    the mean of their ends: conservative, as the ends bound every value the mean could
    take."""
    if not es or not all(e.known for e in es):
        return Estimate.missing()
    return Estimate(float(np.mean([e.value for e in es])), float(np.mean([e.lo for e in es])),
                    float(np.mean([e.hi for e in es])), min(e.n for e in es),
                    min(e.seeds for e in es), "derived")


def _div(x: float, y: float) -> float:
    if y > 0:
        return x / y
    return math.inf if x > 0 else 0.0


def times(a: Estimate, b: Estimate) -> Estimate:
    """``a / b`` (how many times ``b`` ``a`` is), its interval from the ends that bound it
    as `intervals.ratio` gives it; unbounded where ``b`` can be 0; a number of one run
    (no interval) when both are."""
    if not (a.known and b.known):
        return Estimate.missing()
    kinds = {a.method, b.method}
    method = ("one run" if kinds <= {"one run", "exact"} and "one run" in kinds
              else "exact" if kinds == {"exact"} else "derived")
    return Estimate(_div(a.value, b.value), _div(a.lo, b.hi), _div(a.hi, b.lo),
                    min(a.n, b.n), min(a.seeds, b.seeds), method)
