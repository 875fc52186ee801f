"""Intervals and claims (spillway.intervals, spillway.reproduce.claim) against truths
they did not write: coverage of known distributions' parameters, Student's t, interval
arithmetic that bounds every value it could take, and the three verdict states."""

from __future__ import annotations

import math

import numpy as np
import pytest
from spillway import intervals
from spillway.intervals import (
    Estimate,
    Resamples,
    over_seeds,
    percentiles,
    ratio,
    reduction,
    tiers,
)
from spillway.reproduce import claim
from spillway.reproduce.claim import Verdict


def test_student_t_gives_95_percent_coverage():
    """The t interval over 3 normal samples covers the mean in 95% of trials (a wrong
    table entry, or the normal's 1.96 in its place, gives 87%)."""
    rng = np.random.default_rng(7)
    trials = 4000
    hits = sum(over_seeds(rng.normal(5.0, 2.0, 3)).overlaps(Estimate.exact(5.0))
               for _ in range(trials))
    assert 0.935 <= hits / trials <= 0.965
    # Past the table the expansion joins it smoothly and tends to the normal's quantile.
    assert intervals.t975(30) == pytest.approx(2.042, abs=2e-3)
    assert intervals.t975(31) == pytest.approx(2.040, abs=2e-3)
    assert intervals.t975(10_000) == pytest.approx(1.960, abs=1e-3)
    with pytest.raises(ValueError):
        intervals.t975(0)


def test_bootstrap_of_a_p99_covers_the_true_p99():
    """Exponential samples of rate 1: the true 99th percentile is ln 100. The percentile
    bootstrap of 2,000 samples' p99 covers it in about 95% of trials."""
    rng = np.random.default_rng(11)
    truth = Estimate.exact(math.log(100))
    trials = 150
    hits = 0
    for t in range(trials):
        e = percentiles([rng.exponential(1.0, 2000)], [0.99], key=f"t{t}", resamples=300)[0]
        assert e.lo <= e.value <= e.hi and e.n == 2000 and e.seeds == 1
        hits += e.overlaps(truth)
    assert 0.86 <= hits / trials <= 0.995


def test_two_stage_bootstrap_carries_the_variation_between_runs():
    """Five runs whose means differ (each run's mean drawn N(0, 1), its samples N(mean,
    1)): the grand mean is 0. Resampling the runs as well as the samples covers it far
    more often than treating the pooled samples as one sample, which forgets that the
    runs differ (a seed's p99 of 1.26, 0.36 or 0.56 ms)."""
    rng = np.random.default_rng(3)
    truth = Estimate.exact(0.0)
    two_stage = pooled = 0
    trials = 120
    for t in range(trials):
        runs = [rng.normal(rng.normal(0, 1), 1, 200) for _ in range(5)]
        two_stage += intervals.mean(runs, key=f"a{t}", resamples=300).overlaps(truth)
        pooled += intervals.mean([np.concatenate(runs)], key=f"b{t}",
                                 resamples=300).overlaps(truth)
    assert two_stage / trials >= 0.78
    assert pooled / trials <= 0.45


def test_bootstrap_is_deterministic_by_key_and_handles_empty_runs():
    x = [np.arange(100.0), np.arange(50.0) * 2]
    a = percentiles(x, [0.5, 0.99], key="cell")
    assert a == percentiles(x, [0.5, 0.99], key="cell")
    assert a != percentiles(x, [0.5, 0.99], key="other cell")
    # A run without samples of this kind (no short flows) is a run all the same.
    b = percentiles([*x, np.array([])], [0.5], key="cell")[0]
    assert b.known and b.seeds == 3 and b.n == 150
    assert not percentiles([np.array([]), np.array([])], [0.5], key="k")[0].known
    # Several columns at once: each statistic its own estimate.
    two = np.column_stack([np.arange(10.0), 10 * np.arange(10.0)])
    r = Resamples([two], key="k")
    assert (r.mean(0).value, r.mean(1).value) == (4.5, 45.0)
    assert r.mean(0).lo < 4.5 < r.mean(0).hi
    assert r.ratio_of_sums(1, 0, scale=2).value == 20.0


def _brute_force(runs: list[np.ndarray], q: float, resamples: int, seed: int) -> np.ndarray:
    """The two-stage bootstrap written out: draw the runs, then each drawn run's own
    number of samples, pool them, take the quantile."""
    rng = np.random.default_rng(seed)
    out = np.full(resamples, np.nan)
    for b in range(resamples):
        chosen = rng.integers(0, len(runs), len(runs))
        sample = np.concatenate([rng.choice(runs[c], len(runs[c])) if len(runs[c]) else
                                 np.empty(0) for c in chosen])
        if len(sample):
            out[b] = np.quantile(sample, q)
    return out


@pytest.mark.parametrize("q", [0.5, 0.9, 0.99])
def test_the_tree_descent_draws_what_the_written_out_bootstrap_draws(q):
    """Resamples never writes a resample out (that costs resamples × samples): it finds
    a resample's quantile by splitting draws binomially down a tree. Its draws must have
    the law of the written-out two-stage bootstrap: the two empirical distributions of
    20,000 resamples each agree within sampling noise (Kolmogorov-Smirnov distance under
    0.025; 0.0136 is the 5% critical value)."""
    rng = np.random.default_rng(2)
    runs = [rng.exponential(s, n) for s, n in ((1.0, 30), (3.0, 12), (1.0, 0), (0.5, 20))]
    b = 20_000
    tree = Resamples(runs, key="law", resamples=b).quantile_draws(0, [q])[0]
    brute = _brute_force(runs, q, b, 9)
    tree, brute = tree[~np.isnan(tree)], brute[~np.isnan(brute)]
    grid = np.unique(np.concatenate([tree, brute]))
    ks = np.abs(np.searchsorted(np.sort(tree), grid, side="right") / len(tree)
                - np.searchsorted(np.sort(brute), grid, side="right") / len(brute)).max()
    assert ks < 0.025
    # Every draw is one of the samples or between two of them.
    pooled = np.concatenate(runs)
    assert tree.min() >= pooled.min() and tree.max() <= pooled.max()


def test_a_single_run_of_equal_samples_has_no_width_and_one_sample_is_itself():
    r = Resamples([np.full(50, 3.0)], key="k")
    e = r.quantiles(0, [0.99])[0]
    assert (e.value, e.lo, e.hi) == (3.0, 3.0, 3.0)
    one = Resamples([np.array([7.0])], key="k").quantiles(0, [0.5, 0.99])
    assert all((x.value, x.lo, x.hi) == (7.0, 7.0, 7.0) for x in one)


def test_a_mean_drawn_exactly_and_from_the_normal_law_agree(monkeypatch):
    """Past EXACT_MEAN_COUNTS a run's resampled sum is drawn from its normal law: on a
    large sample both ways give the same interval (within the bootstrap's own noise)."""
    rng = np.random.default_rng(4)
    runs = [np.column_stack([rng.exponential(m, 3000), rng.uniform(1, 2, 3000)])
            for m in (1.0, 1.3, 0.8)]
    exact = Resamples(runs, key="m", resamples=2000)
    a, ra = exact.mean(0), exact.ratio_of_sums(0, 1)
    monkeypatch.setattr(intervals, "EXACT_MEAN_COUNTS", 0)
    normal = Resamples(runs, key="m", resamples=2000)
    b, rb = normal.mean(0), normal.ratio_of_sums(0, 1)
    assert a.value == b.value and ra.value == rb.value
    for x, y in ((a, b), (ra, rb)):
        assert y.lo == pytest.approx(x.lo, rel=0.04) and y.hi == pytest.approx(x.hi, rel=0.04)
        assert x.width > 0.05 * x.value  # the runs differ: the interval is not the within-run one


def test_over_seeds_one_run_equal_runs_and_floor():
    one = over_seeds([3.0])
    assert one.value == one.lo == one.hi == 3.0 and one.method == "one run"
    assert "one run" in one.fmt()
    same = over_seeds([2.0, 2.0, 2.0])
    assert same.lo == same.hi == 2.0 and same.method == "seeds"
    counts = over_seeds([0, 0, 30], floor=0)
    assert counts.lo == 0 and counts.hi > 30 and counts.value == 10
    assert not over_seeds([math.nan]).known


def test_ratio_and_reduction_bound_every_value_they_could_take():
    rng = np.random.default_rng(5)
    a, b = Estimate(2.0, 1.5, 3.0), Estimate(4.0, 3.0, 6.0)
    r, d = ratio(a, b), reduction(a, b)
    for _ in range(2000):
        x, y = rng.uniform(a.lo, a.hi), rng.uniform(b.lo, b.hi)
        assert r.lo <= x / y <= r.hi
        assert d.lo <= 1 - x / y <= d.hi
    assert r.value == 0.5 and d.value == 0.5 and r.method == "derived"
    assert ratio(a, Estimate(1.0, 0.0, 2.0)).hi == math.inf
    assert not ratio(a, Estimate.missing()).known


def test_the_same_scheme_twice_ties_and_a_clearly_better_one_ranks_alone():
    same = Estimate(1.0, 0.8, 1.3)
    assert tiers([same, same]) == ["1=", "1="]
    better = Estimate(0.2, 0.15, 0.25)
    assert tiers([same, better, same]) == ["2=", "1", "2="]
    # A tier is the leader and whatever overlaps the leader: not a chain through others.
    chain = [Estimate(1.0, 0.9, 1.1), Estimate(1.2, 1.05, 1.3), Estimate(1.4, 1.25, 1.5),
             Estimate(5.0, 4.0, 6.0), Estimate.missing()]
    assert tiers(chain) == ["1=", "1=", "3", "4", "—"]
    # A wide interval overlapping the leader ties with it, and does not drag in a scheme
    # that is clearly behind the leader.
    wide = [Estimate(1.0, 0.9, 1.1), Estimate(2.7, 2.5, 3.0), Estimate(2.8, 1.0, 10.0)]
    assert tiers(wide) == ["1=", "3", "1="]
    assert tiers([Estimate(3.0, 2.9, 3.1), Estimate(1.0, 0.9, 1.1)],
                 lower_is_better=False) == ["1", "2"]


def test_claims_are_judged_at_the_interval_ends():
    e = Estimate(0.5, 0.4, 0.6)
    assert claim.at_most("x", e, 0.7).verdict is Verdict.PASS
    assert claim.at_most("x", e, 0.3).verdict is Verdict.FAIL
    assert claim.at_most("x", e, 0.55).verdict is Verdict.INCONCLUSIVE
    assert claim.at_least("x", e, 0.3).verdict is Verdict.PASS
    assert claim.at_least("x", e, 0.7).verdict is Verdict.FAIL
    assert claim.at_least("x", e, 0.45).verdict is Verdict.INCONCLUSIVE
    assert claim.within("x", e, 0.3, 0.7).verdict is Verdict.PASS
    assert claim.within("x", e, 0.45, 0.9).verdict is Verdict.INCONCLUSIVE
    assert claim.within("x", e, 0.7, 0.9).verdict is Verdict.FAIL
    lower = Estimate(0.2, 0.1, 0.3)
    assert claim.below("x", lower, e).verdict is Verdict.PASS
    assert claim.below("x", e, lower).verdict is Verdict.FAIL
    assert claim.below("x", e, Estimate(0.55, 0.5, 0.7)).verdict is Verdict.INCONCLUSIVE
    assert claim.at_most("x", Estimate.missing(), 1).verdict is Verdict.INCONCLUSIVE
    # A value without its interval's ends cannot be judged either way (a comparison with
    # an unknown end is false, and would read as FAIL).
    bare = Estimate(0.5, math.nan, math.nan, method="bootstrap")
    for c in (claim.at_most("x", bare, 0.7), claim.at_least("x", bare, 0.3),
              claim.within("x", bare, 0.3, 0.7), claim.below("x", bare, Estimate(1, 0.9, 1.1)),
              claim.no_more("x", lower, bare)):
        assert c.verdict is Verdict.INCONCLUSIVE and c.why.startswith("no interval"), c
    # One run: no interval, so a plain comparison, and the report says it is one run.
    one = claim.at_most("x", Estimate.exact(0.5, "one run"), 0.6)
    assert one.holds and "one run" in one.line()


def test_claims_over_cases_and_runs():
    p, f, i = (claim.fact("p", True, ""), claim.fact("f", False, ""),
               claim.at_most("i", Estimate(1, 0, 2), 1.5))
    assert claim.each("all", [p, p]).verdict is Verdict.PASS
    assert claim.each("all", [p, i]).verdict is Verdict.INCONCLUSIVE
    assert claim.each("all", [p, i, f]).verdict is Verdict.FAIL
    assert claim.each("all", []).verdict is Verdict.INCONCLUSIVE
    assert claim.most("most", [p, p, f]).verdict is Verdict.PASS
    assert claim.most("most", [p, i, i, f]).verdict is Verdict.INCONCLUSIVE
    assert claim.most("most", [p, f, f, i]).verdict is Verdict.FAIL
    # A claim that flips between seeds is no PASS: one run breaking it fails it.
    runs = claim.in_every_run("no drops", {"seed 1": True, "seed 2": False}, "drops 0, 4")
    assert runs.verdict is Verdict.FAIL and "seed 2" in runs.why
    t = claim.table([p, f, i], reproduction=["A", "B", "C"])
    assert t.columns[0] == "reproduction" and t.verdict.tolist() == ["PASS", "FAIL", "INCONCLUSIVE"]
    assert t.holds.tolist() == [True, False, False]
    assert claim.tally([p, f, i]) == "1 PASS, 1 FAIL, 1 INCONCLUSIVE of 3"


def test_no_more_and_some():
    e = Estimate(0.0, 0.0, 0.0)
    assert claim.no_more("x", e, e).verdict is Verdict.PASS  # a tie at zero is no more
    assert claim.below("x", e, e).verdict is Verdict.FAIL  # but not below
    assert claim.no_more("x", Estimate(2, 1.5, 3), Estimate(1, 0.5, 1.2)).verdict is Verdict.FAIL
    assert claim.no_more("x", Estimate(1, 0.5, 2), Estimate(1, 0.8, 1.2)).verdict is \
        Verdict.INCONCLUSIVE
    p, f, i = (claim.fact("p", True, ""), claim.fact("f", False, ""),
               claim.at_most("i", Estimate(1, 0, 2), 1.5))
    assert claim.some("any", [f, p]).verdict is Verdict.PASS
    assert claim.some("any", [f, i]).verdict is Verdict.INCONCLUSIVE
    assert claim.some("any", [f, f]).verdict is Verdict.FAIL


def test_a_comparison_names_both_sides_in_a_claim_over_cases():
    a, b = Estimate(3.0, 2.5, 3.5), Estimate(1.0, 0.8, 1.2)
    c = claim.each("all", [claim.below("cell x", a, b)])
    assert c.verdict is Verdict.FAIL and "cell x: fail (3 [2.5, 3.5] vs 1 [0.8, 1.2])" in c.why
