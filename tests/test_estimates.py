"""The reproductions' estimate arithmetic (spillway.reproduce.estimates): every interval
bounds every value its inputs' intervals allow, samples split by seed keep a seed that
finished nothing as an empty run, and a per-run number from one run says so."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from spillway.intervals import Estimate
from spillway.reproduce.estimates import (
    by_seed,
    difference,
    distance,
    mean_of,
    minus,
    per_run,
    resampled,
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
