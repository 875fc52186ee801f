"""The DeTail figures' numbers with their 95% intervals (`spillway.intervals`), from which
their claims are judged (`spillway.reproduce.claim`).

A percentile of queries is bootstrapped over the queries and the seeds of its cell (two
stages: `Resamples`), the draws keyed by the figure and the cell, not by the environment,
so that the environments of a cell are resampled alike. A run's own number (a background
flow's throughput, a count) is averaged over the seeds with a Student-t interval, and
says `one run` with one seed. A reduction or a ratio takes the ends of the intervals it is
computed from (`intervals.reduction`, `ratio`)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from spillway.intervals import Estimate
from spillway.reproduce.estimates import resampled_groups


def qct_quantiles(samples: pd.DataFrame, by: Sequence[str], qs: Sequence[float], key: str,
                  env: str = "env") -> dict[tuple, list[Estimate]]:
    """The ``qs`` quantiles (0..1) of `qct_ps`, in ms, of every group of ``by``, with
    their bootstrap intervals (`estimates.resampled_groups`)."""
    s = samples.assign(qct_ms=samples["qct_ps"].astype(float) / 1e9)
    groups = resampled_groups(s, by, ["qct_ms"], key, alike=env)
    return {k: r.quantiles(0, qs) for k, r in groups.items()}


def p99s(samples: pd.DataFrame, by: Sequence[str], key: str,
         env: str = "env") -> dict[tuple, Estimate]:
    """The 99th percentile of `qct_ps` (ms) of every group of ``by``."""
    return {k: v[0] for k, v in qct_quantiles(samples, by, [0.99], key, env).items()}
