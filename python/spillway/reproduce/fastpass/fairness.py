"""Fastpass Exp C (§7.2, Fig. 9): per-flow goodput as flows join and leave, its spread
and convergence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from spillway.intervals import Estimate, Resamples, ratio
from spillway.reproduce import Figure, claim
from spillway.reproduce.claim import Claim
from spillway.reproduce.fastpass.common import (
    ARBITER,
    C_BASELINE,
    C_FASTPASS,
    PAPER_SPREAD_MBPS,
    RECEIVER_C,
    _mode,
    _throughput_panels,
    coarsen,
    exp_c_runs,
    exp_c_text,
    fair_share_bytes,
    flow_spans,
    interval_spread,
    join_convergence,
    median_spread,
    one_run,
)
from spillway.store import Results

SPREAD_PAPER = ("§7.2's table: the median standard deviation of per-connection throughput over "
                "1 s intervals, baseline vs Fastpass")
CONVERGENCE_PAPER = ("§7.2: 'when a new flow starts, it is immediately allocated a timeslot. "
                     "From that point on, all flows contending for the bottleneck will be "
                     "allocated timeslots in sequence, yielding immediate convergence'")


def _median_spread(spread: pd.DataFrame, n: int, key: str) -> Estimate:
    """`median_spread` with its interval: the intervals with n flows are the samples (one
    run), bootstrapped; unknown when there is none."""
    s = spread.loc[spread["n"] == n, "std_mbps"].to_numpy(dtype=float)
    return Resamples([s], key=key).quantiles(0, [0.5])[0]


def spread_claims(t: pd.DataFrame, spreads: dict[str, pd.DataFrame],
                  coarse: dict[str, pd.DataFrame], factor: int) -> list[Claim]:
    """Exp C's claims on the spread: each median over the intervals of one run with its
    bootstrap interval (the intervals drawn alike for both runs: keyed by the figure and
    the number of flows)."""
    out = []
    fine: dict[int, tuple[Estimate, Estimate]] = {}
    for r in t.itertuples():
        key = f"fastpass_expC_fairness/{r.flows}"
        b = _median_spread(spreads["baseline"], r.flows, key)
        f = _median_spread(spreads["Fastpass"], r.flows, key)
        fine[r.flows] = (b, f)
        out.append(claim.at_least(
            f"{r.flows} flows: Fastpass's median spread at least 10× below the baseline's",
            ratio(b, f), 10, paper=SPREAD_PAPER,
            paper_value=f"{r.paper_improvement:,.1f}× ({r.paper_baseline_mbps} vs "
                        f"{r.paper_fastpass_mbps} Mbit/s)",
            why=f"median std {b.fmt('.4g')} vs {f.fmt('.3g')} Mbit/s over "
                f"{r.intervals_baseline} and {r.intervals_fastpass} 1 ms intervals"
                + ("" if r.intervals_baseline else "; the baseline never had "
                   f"{r.flows} flows at once: its flows left before or after their plan")))
    cases, said = [], []
    for r in t.itertuples():
        key = f"fastpass_expC_fairness/{r.flows}/{factor}ms"
        b = _median_spread(coarse["baseline"], r.flows, key)
        f = _median_spread(coarse["Fastpass"], r.flows, key)
        cases.append(claim.at_least(f"{r.flows} flows", ratio(b, f), 10))
        said.append(f"{r.flows} flows: {b.fmt('.4g')} vs {f.fmt('.3g')} Mbit/s (paper "
                    f"{r.paper_baseline_mbps} vs {r.paper_fastpass_mbps})")
    out.append(claim.each(
        f"at the paper's grain too (intervals of P/30 = {factor} ms), Fastpass's median "
        "spread at least 10× below the baseline's at 3, 4 and 5 flows", cases,
        paper=SPREAD_PAPER, paper_value="34.2×, 4,304.7×, 5,284.5×", why="; ".join(said),
        label=[f"{n} flows" for n in t.flows]))
    share = {n: C_FASTPASS / 1e6 / n for n in (4, 5)}
    out.append(claim.each(
        "Fastpass's median spread at 4 and 5 flows under 5% of a fair share",
        [claim.at_most(f"{n} flows", fine[n][1], 0.05 * share[n]) for n in (4, 5)],
        paper="§7.2's table: Fastpass 0.146 and 0.087 Mbit/s at 4 and 5 flows",
        paper_value="0.006% and 0.005% of a fair share",
        why=", ".join(f"{n} flows: {fine[n][1].fmt('.3g')} Mbit/s of {share[n]:,.0f}"
                      for n in (4, 5)), label=["4 flows", "5 flows"]))
    return out


def convergence_claims(t: pd.DataFrame) -> list[Claim]:
    """Exp C's convergence claims: a property of every joining flow of one run (each
    flow's interval counts are that run's numbers: no interval)."""
    fp = t[t.run == "Fastpass"]
    base = t[t.run == "baseline"]

    def when(x: float) -> str:
        return "never" if np.isnan(x) else str(int(x))

    first = [claim.fact(f"flow {r.flow_id}", bool(r.first_within <= 1),
                        f"n = {r.n}: interval {when(r.first_within)}, the first at "
                        f"{r.first_share:.0%} of its share", ours=one_run(r.first_within))
             for r in fp.itertuples()]
    stays = [claim.fact(f"flow {r.flow_id}", bool(r.share_after >= 0.9),
                        f"{r.share_after:.0%} of "
                        f"{r.intervals - (r.first_within if r.first_within >= 0 else 0):.0f}",
                        ours=one_run(r.share_after)) for r in fp.itertuples()]
    b, f = base.set_index("flow_id"), fp.set_index("flow_id")
    worse = [claim.fact(f"flow {i}", bool(
                 np.nan_to_num(b.loc[i, "first_within"], nan=np.inf)
                 > np.nan_to_num(f.loc[i, "first_within"], nan=np.inf)
                 or np.nan_to_num(b.loc[i, "share_within"]) < np.nan_to_num(
                     f.loc[i, "share_within"])),
                 f"first within at {when(b.loc[i, 'first_within'])} (Fastpass "
                 f"{when(f.loc[i, 'first_within'])}), {b.loc[i, 'share_within']:.0%} of "
                 f"{b.loc[i, 'intervals']} within (Fastpass {f.loc[i, 'share_within']:.0%})")
             for i in b.index if i in f.index]
    return [
        claim.each("Fastpass: every joining flow within 10% of the fair share by its second "
                   "whole 1 ms interval (the first holds the new flow's slow start)", first,
                   paper=CONVERGENCE_PAPER, paper_value="immediately (over 1 s intervals)",
                   why="; ".join(f"{c.claim}: {c.why}" for c in first)),
        claim.each("Fastpass stays there: from then on every joining flow within 10% in at "
                   "least 90% of its phase's intervals", stays, paper=CONVERGENCE_PAPER,
                   paper_value="perfect fairness",
                   why="; ".join(f"{c.claim}: {c.why}" for c in stays)),
        claim.some("the baseline converges worse: some joining flow within 10% later than "
                   "Fastpass's (or never), or within 10% in fewer of its phase's intervals",
                   worse, paper=CONVERGENCE_PAPER, paper_value="(baseline: slower)",
                   why="; ".join(f"{c.claim}: {c.why}" for c in worse))]


def _exp_c(quick: bool) -> list[Figure]:
    mode = _mode(quick)
    p_ms = mode.phase_ms
    interval_ps = 10**9
    sweep = {"base_text": exp_c_text(), "schemes": exp_c_runs(p_ms)}
    # The paper's grain: 30 intervals a phase (1 s in 30 s).
    coarse_factor = max(1, round(p_ms / 30))
    setup = (f"Five senders (hosts 0-4) to host {RECEIVER_C} on the star of 7, the arbiter "
             f"on host {ARBITER}; one CUBIC flow per sender. Flow i starts at i·P and carries "
             "the bytes a fair share would carry until (5 + i)·P: C·P·Σ 1/n over its five "
             "phases, n = 1, 2, 3, 4, 5, 4, 3, 2, 1 flows in phases 0-8, C = one saturated "
             f"flow's goodput ({C_BASELINE / 1e9:.3f} Gbit/s: 1,460 B per 1,538 B frame; "
             f"under Fastpass {C_FASTPASS / 1e9:.3f}, a segment per timeslot). P = {p_ms} ms "
             "and goodput per 1 ms interval (the paper: 30 s and 1 s; "
             f"{30_000 // p_ms:,}× and 1,000× shorter). A flow that is not served fairly "
             "leaves earlier or later than planned; only intervals in which the same n "
             "flows were active throughout count.")

    def load(res: Results) -> dict[str, tuple[pd.DataFrame, pd.DataFrame]]:
        ft = res.sql("SELECT scheme, time_ps, flow_id, bytes FROM flow_throughput")
        fl = res.sql("SELECT scheme, flow_id, start_ps FROM flows")
        return {s: (ft[ft.scheme == s], flow_spans(ft[ft.scheme == s], fl[fl.scheme == s]))
                for s in ("baseline", "Fastpass")}

    def fig_c(res: Results | None, out: Path) -> tuple[pd.DataFrame, list[Path],
                                                       list[Claim]]:
        assert res is not None
        runs = load(res)
        spreads = {s: interval_spread(ft, sp, interval_ps) for s, (ft, sp) in runs.items()}
        coarse = {s: interval_spread(coarsen(ft, interval_ps, coarse_factor), sp,
                                     coarse_factor * interval_ps)
                  for s, (ft, sp) in runs.items()}
        rows = []
        for n, (pb, pf) in PAPER_SPREAD_MBPS.items():
            mb, cb = median_spread(spreads["baseline"], n)
            mf, cf = median_spread(spreads["Fastpass"], n)
            rows.append({"flows": n, "baseline_mbps": mb, "fastpass_mbps": mf,
                         "improvement": mb / mf if mf > 0 else float("inf"),
                         "intervals_baseline": cb, "intervals_fastpass": cf,
                         f"baseline_mbps_{coarse_factor}ms":
                         median_spread(coarse["baseline"], n)[0],
                         f"fastpass_mbps_{coarse_factor}ms":
                         median_spread(coarse["Fastpass"], n)[0],
                         "paper_baseline_mbps": pb, "paper_fastpass_mbps": pf,
                         "paper_improvement": pb / pf})
        t = pd.DataFrame(rows)
        # Plotted as the paper plots its 30 s phases: about 30 points a phase.
        panels = {}
        for s, (ft, _) in runs.items():
            d = coarsen(ft, interval_ps, coarse_factor)
            d["gbps"] = d["bytes"] * 8e12 / (coarse_factor * interval_ps) / 1e9
            panels[f"{s} (P = {p_ms} ms)"] = d
        imgs = _throughput_panels(panels, out / "fastpass_expC_fairness",
                                  vlines=[k * p_ms for k in range(1, 9)],
                                  title=f"Per-flow goodput per {coarse_factor} ms, "
                                        "flows joining and leaving every P "
                                        "(Fastpass Exp C, Fig. 9)")
        return t, imgs, spread_claims(t, spreads, coarse, coarse_factor)

    def fig_conv(res: Results | None, out: Path) -> tuple[pd.DataFrame, list[Path],
                                                          list[Claim]]:
        assert res is not None
        runs = load(res)
        t = pd.concat([join_convergence(ft, sp, interval_ps).assign(run=s)
                       for s, (ft, sp) in runs.items()])
        t = t[["run", "flow_id", "n", "intervals", "first_share", "first_within",
               "share_within", "share_after"]].reset_index(drop=True)
        return t, [], convergence_claims(t)

    return [
        Figure(id="fastpass_expC_fairness", data="c",
               title="Fastpass Exp C: fairness, per-flow goodput as flows join and leave",
               source="Fastpass §7.2 (Experiment C, Fig. 9 and its table)",
               setup=setup + " Per interval, the standard deviation (population) of the "
               "active flows' goodputs in Mbit/s; the median over the intervals with n "
               f"flows. Columns `*_{coarse_factor}ms`: the same over intervals of "
               f"{coarse_factor} ms, P/30 as in the paper (30 intervals of 1 s a phase).",
               sweep=sweep, analyze=fig_c,
               metrics=[interval_spread, median_spread, coarsen, fair_share_bytes],
               paper=["§7.2: median standard deviation of per-connection throughput over 1 s "
                      "intervals, baseline vs Fastpass: 3 flows 543.86 vs 15.89 Mbit/s "
                      "(34.2×), 4 flows 628.49 vs 0.146 (4,304.7×), 5 flows 459.75 vs 0.087 "
                      "(5,284.5×).",
                      "Fig. 9: 'for Fastpass (bottom), with 3, 4, or 5 connections, the "
                      "throughput curves are on top of one another.'"],
               notes="Under Fastpass the flows' goodputs per 1 ms are equal to the segment "
                     "in most intervals (median spread 0): the arbiter serves the pairs in "
                     "turn, and the receiver's ACKs, scheduled too, return in the same "
                     "rhythm. The baseline's spread per 1 ms is larger than the paper's per "
                     "1 s because the intervals are 1,000 times shorter while TCP's dynamics "
                     "are not: a round trip through the full 5.25 MB queue takes 4.4 ms, so "
                     "a 1 ms interval sees the bursts of a flow's window that longer "
                     "intervals average away (the P/30 columns), and a phase lasts tens or "
                     "hundreds of round trips instead of thousands. Flows are "
                     "sized, not timed (the paper's iperf ran for a time), so a baseline "
                     "flow served above its fair share leaves early."),
        Figure(id="fastpass_expC_convergence", data="c",
               title="Fastpass Exp C: convergence of a joining flow to its fair share",
               source="Fastpass §7.2 (Experiment C)",
               setup=setup + " For each joining flow, the first whole 1 ms interval after its "
               "start (0 = the first) in which its goodput is within 10% of the fair share "
               "(the interval's total goodput over the number of active flows), and the "
               "share of its phase's stable intervals within 10%.",
               sweep=sweep, analyze=fig_conv, metrics=[join_convergence],
               paper=["§7.2: 'when a new flow starts, it is immediately allocated a "
                      "timeslot. From that point on, all flows contending for the bottleneck "
                      "will be allocated timeslots in sequence, yielding immediate "
                      "convergence and perfect fairness over intervals as small as 1 MTU per "
                      "flow'."]),
    ]


# -------------------------------------------------------------------- Exp E
