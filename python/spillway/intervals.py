"""95% confidence intervals for what the reproductions measure, and the arithmetic that
carries them into claims (`spillway.reproduce.claim`) and rankings.

Two kinds of uncertainty stand behind a number such as a scheme's short-flow p99:

- **Between runs.** The seed draws the workload (which flows, when, between which
  hosts) and every random stream of the run; a p99 moves with it.
- **Within a run.** A percentile of a few hundred flows is itself a sample.

`bootstrap` covers both for statistics of pooled samples (percentiles and means of flows,
queries, rounds): a two-stage bootstrap that draws the runs (seeds) with replacement, then
the samples within each drawn run with replacement, and computes the statistic on what it
drew, `RESAMPLES` times; the interval is the 2.5th to 97.5th percentile of those values
(the percentile bootstrap). With one run only the second stage varies. `over_seeds` gives
a Student-t interval for the mean over runs of a per-run quantity (a count, a goodput, a
time-averaged queue). Draws are seeded from a key (a cell's name), so the same data give
the same interval in any process and any order.

Derived quantities (a ratio, a reduction) take the interval ends that bound them
(`ratio`, `reduction`): conservative, never narrower than the pair's own.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

LEVEL = 0.95
RESAMPLES = 1000

# Student's t, 97.5th percentile, for 1..30 degrees of freedom; beyond, the Cornish-Fisher
# expansion about the normal's 1.95996 (within 1e-4 of the exact value from 30 on).
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
         2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
         2.060, 2.056, 2.052, 2.048, 2.045, 2.042)
_Z975 = 1.959964


def t975(df: int) -> float:
    """The 97.5th percentile of Student's t with ``df`` degrees of freedom (df >= 1)."""
    if df < 1:
        raise ValueError(f"t975: {df} degrees of freedom; need at least 1")
    if df <= len(_T975):
        return _T975[df - 1]
    z = _Z975
    return (z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3))


@dataclass(frozen=True)
class Estimate:
    """A measured number with its 95% interval: ``value`` (the statistic on all the data),
    ``lo`` and ``hi``, the ``n`` samples (flows, queries, rounds, runs) and ``seeds`` runs
    behind it, and ``method``: `bootstrap`, `seeds` (Student t over runs), `one run` (a
    per-run quantity from a single run: no interval can be had), `derived` (from other
    estimates' ends), `exact` (no sampling: a closed form, a configuration) or `given`
    (an interval from elsewhere, e.g. a test's)."""

    value: float
    lo: float
    hi: float
    n: int = 0
    seeds: int = 0
    method: str = "given"

    @staticmethod
    def exact(value: float, method: str = "exact", n: int = 0, seeds: int = 0) -> Estimate:
        """A number with no sampling uncertainty (or none that can be estimated: a single
        run's count, say ``method="one run"``): its interval is the number itself."""
        return Estimate(float(value), float(value), float(value), n, seeds, method)

    @staticmethod
    def missing() -> Estimate:
        return Estimate(math.nan, math.nan, math.nan, 0, 0, "none")

    @property
    def known(self) -> bool:
        return not math.isnan(self.value)

    @property
    def width(self) -> float:
        return self.hi - self.lo

    def overlaps(self, other: Estimate) -> bool:
        """Whether the two intervals share a point (an unknown estimate overlaps nothing)."""
        if not (self.known and other.known):
            return False
        return self.lo <= other.hi and other.lo <= self.hi

    def scaled(self, k: float) -> Estimate:
        """The estimate times a positive constant (a unit change)."""
        return Estimate(self.value * k, self.lo * k, self.hi * k, self.n, self.seeds,
                        self.method)

    def fmt(self, spec: str = "") -> str:
        """``value [lo, hi]``; a number without an interval is shown with why. Numbers
        take ``spec`` (default: three significant digits, thousands written out)."""
        if not self.known:
            return "—"
        v = _number(self.value, spec)
        if self.method in ("exact", "one run"):
            return v if self.method == "exact" else f"{v} (one run)"
        return f"{v} [{_number(self.lo, spec)}, {_number(self.hi, spec)}]"

    def about(self) -> str:
        """Where the interval comes from, for a report: 'bootstrap over 1,200 flows of 5
        seeds'."""
        if self.method == "bootstrap":
            runs = f" of {self.seeds} seeds" if self.seeds > 1 else " of one run"
            return f"95% CI, bootstrap over {self.n:,} samples{runs}"
        if self.method == "seeds":
            return f"95% CI, Student t over {self.seeds} seeds"
        if self.method == "derived":
            return "95% CI from the ends of the intervals it is computed from"
        if self.method == "one run":
            return "one run: no interval"
        if self.method == "exact":
            return "exact"
        return "95% CI"

    def __str__(self) -> str:
        return self.fmt()


def _number(x: float, spec: str) -> str:
    if spec:
        return format(x, spec)
    if math.isinf(x) or math.isnan(x) or abs(x) < 1000:
        return format(x, ".3g")
    return f"{x:,.0f}"


def _rng(key: str) -> np.random.Generator:
    digest = hashlib.sha256(key.encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


# A mean's second stage is drawn exactly (a count per sample and resample) while that is
# at most this many counts; past it (tens of thousands of flows a cell), from the normal
# law of a sum of that many draws, which is exact in the limit and within the
# bootstrap's own noise long before.
EXACT_MEAN_COUNTS = 4_000_000


class Resamples:
    """The two-stage bootstrap of one set of runs (module docstring), whose first stage
    (how many times each resample draws each run) is drawn once and shared by every
    statistic of those samples. ``runs``: one array per run (seed), its samples as rows
    (several columns where several quantities are measured on each sample: a flow's FCT
    and slowdown). ``key`` seeds the draws.

    The second stage (each drawn run's samples drawn anew, with replacement) is not
    written out sample by sample, which would cost resamples × samples: a quantile is
    found by descending a binary tree over the pooled samples sorted, splitting each run's
    draws between a node's two halves binomially (the counts of a multinomial draw in
    disjoint ranges are binomial splits of one another, so this is the same law as
    drawing every sample); a mean by counting draws per sample, or by the normal law of
    a run's resampled sum where that would be too many counts."""

    def __init__(self, runs: Sequence[np.ndarray], key: str, resamples: int = RESAMPLES):
        arrays = [np.asarray(r, dtype=float) for r in runs]
        arrays = [a[:, None] if a.ndim == 1 else a for a in arrays]
        width = max((a.shape[1] for a in arrays if len(a)), default=1)
        self.runs = [a if len(a) else np.empty((0, width)) for a in arrays]
        self.seeds = len(self.runs)
        self.sizes = np.array([len(a) for a in self.runs], dtype=np.int64)
        self.n = int(self.sizes.sum())
        self.pooled = np.concatenate(self.runs) if self.runs else np.empty((0, width))
        self.resamples = resamples
        self.key = key
        s = max(self.seeds, 1)
        rng = _rng(key)
        # Stage 1: how many times each resample draws each run; then how many samples
        # it draws from each (the run's own size, each time it is drawn).
        times = (rng.multinomial(s, np.full(s, 1 / s), size=resamples) if s > 1
                 else np.ones((resamples, s), dtype=np.int64))
        self.draws = times * self.sizes[None, :len(times[0])] if self.seeds else times * 0

    def _rng(self, what: str) -> np.random.Generator:
        return _rng(f"{self.key}/{what}")

    def _interval(self, point: float, draws: np.ndarray) -> Estimate:
        draws = draws[~np.isnan(draws)]
        if math.isnan(point) or len(draws) == 0:
            return Estimate(point, math.nan, math.nan, self.n, self.seeds, "bootstrap")
        alpha = (1 - LEVEL) / 2
        lo, hi = np.quantile(draws, [alpha, 1 - alpha])
        # The percentile interval holds the statistic itself, but for rounding.
        return Estimate(float(point), float(min(lo, point)), float(max(hi, point)), self.n,
                        self.seeds, "bootstrap")

    def quantiles(self, col: int, qs: Sequence[float]) -> list[Estimate]:
        """The ``qs`` quantiles (0..1) of column ``col``, by linear interpolation between
        order statistics (numpy's default, DuckDB's quantile_cont)."""
        if self.n == 0:
            return [Estimate.missing() for _ in qs]
        x = self.pooled[:, col]
        return [self._interval(float(np.quantile(x, q)), d)
                for q, d in zip(qs, self.quantile_draws(col, qs), strict=True)]

    def quantile_draws(self, col: int, qs: Sequence[float]) -> list[np.ndarray]:
        """Each resample's ``qs`` quantiles of column ``col`` (NaN for a resample that
        drew no sample)."""
        if self.n == 0:
            return [np.full(self.resamples, np.nan) for _ in qs]
        x = self.pooled[:, col]
        run_of = np.repeat(np.arange(self.seeds), self.sizes)
        order = np.argsort(x, kind="stable")
        xs, runs_sorted = x[order], run_of[order]
        # below[c, r]: how many of run c's samples are among the r smallest pooled ones.
        below = np.zeros((self.seeds, self.n + 1), dtype=np.int64)
        for c in range(self.seeds):
            below[c, 1:] = np.cumsum(runs_sorted == c)
        total = self.draws.sum(axis=1)
        out = []
        for q in qs:
            rng = self._rng(f"quantile/{col}/{float(q)!r}")
            h = (total - 1) * q
            k = np.floor(h).astype(np.int64)
            frac = h - k
            first, second = _descend(below, self.draws, k, np.minimum(k + 1, total - 1), rng)
            v = xs[first] + frac * (xs[second] - xs[first])
            out.append(np.where(total > 0, v, np.nan))
        return out

    def mean(self, col: int) -> Estimate:
        """The mean of column ``col``."""
        return self.ratio_of_sums(col, None)

    def ratio_of_sums(self, num: int, den: int | None, scale: float = 1.0) -> Estimate:
        """``scale`` × the sum of column ``num`` over the sum of column ``den`` (None: the
        number of samples): a mean, or a rate such as bytes over time."""
        if self.n == 0:
            return Estimate.missing()
        b = self.n if den is None else self.pooled[:, den].sum()
        point = scale * self.pooled[:, num].sum() / b if b > 0 else math.nan
        rng = self._rng(f"sum/{num}/{den}")
        top = np.zeros(self.resamples)
        bottom = np.zeros(self.resamples)
        exact = self.resamples * self.n <= EXACT_MEAN_COUNTS
        for c, run in enumerate(self.runs):
            t = self.draws[:, c]
            if len(run) == 0:
                continue
            y = np.ones(len(run)) if den is None else run[:, den]
            if exact:
                idx = np.repeat(np.arange(self.resamples), t) * len(run) + rng.integers(
                    0, len(run), int(t.sum()))
                w = np.bincount(idx, minlength=self.resamples * len(run)).reshape(
                    self.resamples, len(run))
                top += w @ run[:, num]
                bottom += w @ y
            else:
                # The sum of t draws: mean t·mu, covariance t·Sigma (per sample's pair).
                pair = np.column_stack([run[:, num], y])
                mu = pair.mean(axis=0)
                cov = np.atleast_2d(np.cov(pair, rowvar=False, bias=True))
                z = rng.multivariate_normal(np.zeros(2), cov, size=self.resamples,
                                            method="eigh")
                top += t * mu[0] + np.sqrt(t) * z[:, 0]
                bottom += t * mu[1] + np.sqrt(t) * z[:, 1]
        with np.errstate(invalid="ignore", divide="ignore"):
            draws = np.where(bottom > 0, scale * top / bottom, np.nan)
        return self._interval(point, draws)


def _descend(below: np.ndarray, draws: np.ndarray, k1: np.ndarray, k2: np.ndarray,
             rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The pooled sorted positions of each resample's k1-th and k2-th smallest draw
    (0-based; k1 <= k2), found together: from the whole range down, a node's draws of
    each run split between its halves binomially, by that run's share of samples in
    each. Where both searches are at the same node they share its split (one resample);
    once apart they are in disjoint ranges, whose splits are independent."""
    b = len(draws)
    n = below.shape[1] - 1
    lo = np.zeros((2, b), dtype=np.int64)
    hi = np.full((2, b), n, dtype=np.int64)
    cnt = np.stack([draws, draws]).astype(np.int64)  # (path, resample, run)
    k = np.stack([k1, k2]).astype(np.int64)
    for _ in range(max(1, int(n - 1).bit_length())):
        active = hi - lo > 1
        if not active.any():
            break
        mid = (lo + hi) // 2
        # Each run's samples in the node and in its lower half.
        in_node = below[:, hi] - below[:, lo]  # (run, path, resample)
        in_low = below[:, mid] - below[:, lo]
        with np.errstate(invalid="ignore", divide="ignore"):
            p = np.where(in_node > 0, in_low / np.maximum(in_node, 1), 0.0)
        p = np.moveaxis(p, 0, -1)  # (path, resample, run)
        left = rng.binomial(cnt, p)
        same = (lo[0] == lo[1]) & (hi[0] == hi[1])
        left[1] = np.where(same[:, None], left[0], left[1])
        n_left = left.sum(axis=2)
        go_low = k < n_left
        lo = np.where(active & ~go_low, mid, lo)
        hi = np.where(active & go_low, mid, hi)
        k = np.where(active & ~go_low, k - n_left, k)
        cnt = np.where((active & go_low)[..., None], left,
                       np.where(active[..., None], cnt - left, cnt))
    return lo[0], lo[1]


def percentiles(runs: Sequence[np.ndarray], qs: Sequence[float], key: str,
                resamples: int = RESAMPLES) -> list[Estimate]:
    """The ``qs`` quantiles (0..1) of the pooled samples of ``runs``, with two-stage
    bootstrap intervals."""
    return Resamples(runs, key, resamples).quantiles(0, qs)


def mean(runs: Sequence[np.ndarray], key: str, resamples: int = RESAMPLES) -> Estimate:
    """The mean of the pooled samples of ``runs``, with a two-stage bootstrap interval."""
    return Resamples(runs, key, resamples).mean(0)


def over_seeds(values: Sequence[float], floor: float | None = None) -> Estimate:
    """The mean over runs (one value per seed) of a per-run quantity, with a Student-t
    interval; NaN values (runs without it) are left out. ``floor``: the least the quantity
    can be (0 for a count), where the interval is cut."""
    v = np.asarray([x for x in values if not math.isnan(x)], dtype=float)
    if len(v) == 0:
        return Estimate.missing()
    m = float(v.mean())
    if len(v) == 1:
        return Estimate(m, m, m, 1, 1, "one run")
    half = t975(len(v) - 1) * float(v.std(ddof=1)) / math.sqrt(len(v))
    lo, hi = m - half, m + half
    if floor is not None:
        lo = max(lo, floor)
    return Estimate(m, lo, hi, len(v), len(v), "seeds")


def _derived(value: float, lo: float, hi: float, parts: Sequence[Estimate]) -> Estimate:
    """An estimate computed from ``parts``: exact from exact numbers, one run's from
    numbers of one run (no interval can be had either way), otherwise `derived`."""
    kinds = {e.method for e in parts}
    method = ("exact" if kinds == {"exact"} else
              "one run" if kinds <= {"one run", "exact"} else "derived")
    return Estimate(value, lo, hi, min(e.n for e in parts), min(e.seeds for e in parts),
                    method)


def _div(x: float, y: float) -> float:
    # A positive number over zero is unbounded; nothing over nothing is taken as 0, the
    # end a ratio's interval cannot go below.
    if y > 0:
        return x / y
    return math.inf if x > 0 else 0.0


def ratio(a: Estimate, b: Estimate) -> Estimate:
    """``a / b`` of two quantities that are never negative, its interval from the ends
    that bound it; unbounded above where ``b`` can be 0 (a queue that can be empty:
    infinitely shorter)."""
    if not (a.known and b.known):
        return Estimate.missing()
    # Neither can be negative: an interval over seeds that reaches below 0 ends at 0.
    a_lo, b_lo = max(a.lo, 0.0), max(b.lo, 0.0)
    return _derived(_div(a.value, b.value), _div(a_lo, b.hi), _div(a.hi, b_lo), [a, b])


def reduction(a: Estimate, base: Estimate) -> Estimate:
    """``1 - a / base``: how much smaller ``a`` is than ``base`` (0.75: 75% smaller)."""
    r = ratio(a, base)
    if not r.known:
        return r
    return Estimate(1 - r.value, 1 - r.hi, 1 - r.lo, r.n, r.seeds, r.method)


def difference(a: Estimate, b: Estimate) -> Estimate:
    """``a - b``, its interval from the ends that bound it."""
    if not (a.known and b.known):
        return Estimate.missing()
    return _derived(a.value - b.value, a.lo - b.hi, a.hi - b.lo, [a, b])


def minus(e: Estimate, x: float) -> Estimate:
    """``e - x`` for a constant ``x`` (a ratio as a change: ratio - 1)."""
    if not e.known:
        return e
    return Estimate(e.value - x, e.lo - x, e.hi - x, e.n, e.seeds, e.method)


def distance(e: Estimate, x: float) -> Estimate:
    """``|e - x|``: how far an estimate is from a value (a share from the fair one), its
    interval every distance the interval's values could have (from 0 when it holds x)."""
    if not e.known:
        return Estimate.missing()
    ends = (abs(e.lo - x), abs(e.hi - x))
    lo = 0.0 if e.lo <= x <= e.hi else min(ends)
    return Estimate(abs(e.value - x), lo, max(ends), e.n, e.seeds,
                    e.method if e.method in ("exact", "one run") else "derived")


def total(es: Sequence[Estimate]) -> Estimate:
    """The sum of several estimates (timeouts over fan-ins), its interval the sum of
    their ends: every value the sum could take lies in it."""
    es = list(es)
    if not es or not all(e.known for e in es):
        return Estimate.missing()
    if len(es) == 1:
        return es[0]
    return _derived(sum(e.value for e in es), sum(e.lo for e in es), sum(e.hi for e in es),
                    es)


def mean_of(es: Sequence[Estimate]) -> Estimate:
    """The mean of several estimates (a reduction averaged over sizes or loads), its
    interval the mean of their ends: every value the mean could take lies in it."""
    t = total(es)
    if not t.known or len(es) == 1:
        return t
    k = len(es)
    return Estimate(t.value / k, t.lo / k, t.hi / k, t.n, t.seeds, t.method)


def tiers(estimates: Sequence[Estimate], lower_is_better: bool = True) -> list[str]:
    """Ranks for ``estimates`` (one per scheme), best first by value, in tiers: the best
    scheme and every scheme whose interval overlaps its interval share its rank (the data
    cannot tell them apart); of the rest, the best leads the next tier, and so on. A
    tier's rank is 1 + the schemes in better tiers, shown with `=` when it holds more
    than one ("1=", "1=", "3"); an unknown estimate ranks "—". Overlapping the leader is
    what counts, not a chain of overlaps: a scheme clearly behind the leader is never
    tied with it through a third, wide interval."""
    sign = 1 if lower_is_better else -1
    left = sorted((i for i, e in enumerate(estimates) if e.known),
                  key=lambda i: (sign * estimates[i].value, i))
    ranks = ["—"] * len(estimates)
    placed = 0
    while left:
        lo, hi = _ends(estimates[left[0]])
        tier = [i for i in left if _ends(estimates[i])[0] <= hi and _ends(estimates[i])[1] >= lo]
        label = f"{placed + 1}=" if len(tier) > 1 else f"{placed + 1}"
        for i in tier:
            ranks[i] = label
        placed += len(tier)
        left = [i for i in left if i not in tier]
    return ranks


def _ends(e: Estimate) -> tuple[float, float]:
    lo = e.value if math.isnan(e.lo) else e.lo
    hi = e.value if math.isnan(e.hi) else e.hi
    return lo, hi
