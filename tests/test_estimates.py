"""The reproductions' estimates: the arithmetic on them (spillway.intervals) bounds every
value its inputs' intervals allow; samples split by seed (spillway.reproduce.estimates)
keep a seed that finished nothing as an empty run; a per-run number from one run says so."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from spillway.intervals import Estimate, difference, distance, mean_of, minus, ratio, total
from spillway.reproduce.estimates import (
    by_seed,
    per_run,
    per_run_groups,
    resampled,
    resampled_groups,
)


def test_mean_difference_and_distance_bound_every_value_they_could_take():
    rng = np.random.default_rng(1)
    a, b, c = Estimate(2.0, 1.5, 3.0), Estimate(4.0, 3.0, 6.0), Estimate(0.9, 0.7, 1.4)
    m, d, far = mean_of([a, b, c]), difference(a, b), distance(c, 1.0)
    for _ in range(2000):
        x, y, z = rng.uniform(a.lo, a.hi), rng.uniform(b.lo, b.hi), rng.uniform(c.lo, c.hi)
        assert m.lo <= (x + y + z) / 3 <= m.hi
        assert d.lo <= x - y <= d.hi
        assert far.lo <= abs(z - 1.0) <= far.hi
    assert (m.value, d.value) == (pytest.approx(2.3), -2.0) and m.method == "derived"
    assert far.value == pytest.approx(0.1) and far.lo == 0.0  # 1.0 lies in c's interval
    assert distance(Estimate(0.5, 0.4, 0.6), 1.0).lo == pytest.approx(0.4)
    assert minus(Estimate(1.2, 1.1, 1.3), 1.0).hi == pytest.approx(0.3)
    assert mean_of([a]) == a and not mean_of([a, Estimate.missing()]).known
    # Exact inputs stay exact.
    assert mean_of([Estimate.exact(1), Estimate.exact(3)]) == Estimate.exact(2)


def test_samples_by_seed_keep_a_seed_without_samples_and_per_run_of_one_run():
    f = pd.DataFrame({"seed": [1, 1, 3], "x": [1.0, 2.0, 5.0]})
    runs = by_seed(f, ["x"], [1, 2, 3])
    assert [len(r) for r in runs] == [2, 0, 1]
    r = resampled(f, ["x"], [1, 2, 3], "k")
    assert r.seeds == 3 and r.n == 3
    assert per_run(pd.DataFrame({"seed": [1], "v": [4.0]}), "v").method == "one run"
    two = per_run(pd.DataFrame({"seed": [2, 1], "v": [4.0, 2.0]}), "v", floor=0.0)
    assert two.value == 3.0 and two.lo == 0.0 and two.method == "seeds"
    assert math.isnan(per_run(pd.DataFrame({"seed": [1], "v": [math.nan]}), "v").value)


def test_ratio_total_and_one_run():
    """A ratio over a quantity that can be 0 is unbounded, not unknown; numbers of one run
    combine into one run's (no interval), not into a 'derived' zero-width one."""
    a, zero = Estimate(2.0, 1.0, 3.0), Estimate(0.5, 0.0, 1.0)
    assert ratio(a, zero).hi == math.inf and ratio(a, zero).lo == 1.0
    assert ratio(Estimate.exact(0.0), Estimate.exact(0.0)).value == 0.0
    one = ratio(Estimate.exact(4.0, "one run"), Estimate.exact(2.0, "one run"))
    assert (one.value, one.method) == (2.0, "one run")
    t = total([Estimate(1, 0.5, 2), Estimate(2, 1.5, 3)])
    assert (t.value, t.lo, t.hi) == (3, 2.0, 5)


def test_groups_are_resampled_alike_across_schemes():
    """Two schemes of one cell draw the same resamples (the draws are keyed by the cell
    without the scheme): identical samples give identical intervals."""
    f = pd.DataFrame({"scheme": ["a"] * 40 + ["b"] * 40, "load": 0.5,
                      "seed": ([1] * 20 + [2] * 20) * 2, "x": list(np.arange(40.0)) * 2})
    g = resampled_groups(f, ["scheme", "load"], ["x"], "fig")
    qa, qb = g[("a", 0.5)].quantiles(0, [0.9])[0], g[("b", 0.5)].quantiles(0, [0.9])[0]
    assert qa == qb and qa.seeds == 2 and qa.hi > qa.lo
    runs = pd.DataFrame({"scheme": ["a", "a", "b"], "seed": [1, 2, 1], "v": [1.0, 3.0, 5.0]})
    e = per_run_groups(runs, ["scheme"], "v")
    assert e[("a",)].value == 2.0 and e[("b",)].method == "one run"
