"""DeTail Figs. 5-10: the all-to-all query microbenchmarks (DeTail §8.1.1).

Every server asks random other servers queries: a 1460 B request and a response of 2, 8
or 32 KB (drawn uniformly per query). Arrivals are Poisson per server, at a steady rate,
in bursts (every 50 ms a burst at 10,000 queries/s, nothing between) or mixed (a 5 ms
burst, then a steady rate). The figures compare the environments of §8.1 on the network
of §7.1 (`spillway.reproduce.detail.network`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from spillway import plots
from spillway.analysis import percentile, qct_percentiles
from spillway.intervals import Estimate, Resamples, ratio, reduction
from spillway.reproduce import Figure, claim
from spillway.reproduce.claim import Claim
from spillway.reproduce.detail.estimates import p99s, qct_quantiles
from spillway.reproduce.detail.network import NETWORK, RTO_MIN, environments
from spillway.store import Results

HOSTS = 96  # topology.kind = "detail96"
PERIOD_MS = 50.0  # §8.1.1: "every 50ms interval"
BURST_RATE = 10_000  # queries/s per server during a burst
MIXED_BURST_MS = 5.0  # §8.1.1, mixed workload: "a 5ms burst"
SIZES_KB = (2, 8, 32)

# The environments under their names in the paper.
NAMES = {"baseline": "Baseline", "priority": "Priority", "fc": "FC",
         "priority_pfc": "Priority+PFC", "detail": "DeTail"}

# §8.1.1's query: a full-sized request and one response of 2, 8 or 32 KB. The run has no
# time limit: `workload.queries` (set per point) stops the arrivals, and the run goes on
# until every query has completed, so that no slow query is cut off by the end of the run.
BASE = NETWORK + """
[workload]
kind = "request_response"
request_size = "1460B"
response_sizes = ["2KB", "8KB", "32KB"]
[run]
duration = "off"
"""

QCT_DEFINITION = (
    "Query completion time is queries.parquet's `qct_ps`: from the moment the client "
    "issues the 1460 B request until it holds the last byte of the response (the paper's "
    "query is the request and its response over one TCP connection; here they are two "
    "flows, a request flow and a response flow, and no handshake is modelled). The query "
    "size is the response's size "
    "(`size_bytes`). Percentiles pool the queries of all seeds of a point (linear "
    "interpolation, `percentile`); `p99_seed_min_ms` and `p99_seed_max_ms` show how far "
    "the 99th percentile of single seeds spreads. `drops` and `timeouts` are totals over "
    "the point's runs (all seeds), from the runs' summaries.")

RUN_END = (
    "Each run stops issuing queries after `workload.queries` of them, the expected number "
    "in the stated simulated time (96 servers x the rate, integrated over the periods), "
    "and then runs until every query has completed: a slow query at the end is counted, "
    "not cut off. Arrivals being Poisson, they stop a little before or after the stated "
    "time (by a few milliseconds of steady arrivals or a few percent of a burst); the "
    "network starts empty.")

SETTINGS = (
    "Environments as in §8.1 (`spillway.reproduce.detail.network`): CIOQ switches with "
    "128 KB ingress and egress queues per port, a 3.1 us forwarding engine, crossbar "
    "speedup 4, 1 GbE, 6.6 us per link, 8 racks of 12 servers under 4 spines; TCP "
    "(NewReno with SACK) without ECN; minimum RTO "
    + ", ".join(f"{NAMES[k]} {v}" for k, v in RTO_MIN.items()) + ".")


FC_DROPS = (
    "FC (802.3x pause) is lossless here, as Priority+PFC and DeTail are. It was not at "
    "first: with §6.1's headroom H alone, the single paused class's XOFF (ingress buffer "
    "minus H) left no room for the frame whose arrival crosses XOFF, nor for the pause "
    "frame's own time on the wire, and FC lost 189 packets at switch inputs over this "
    "sweep's full run (188 at ToR inputs from servers). The default headroom now counts "
    "both (6,864 B per class on this network; docs/mechanisms.md), and every environment "
    "with flow control reports no drops (the `drops` column).")


def _env_schemes(names: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    return {NAMES[k]: v for k, v in environments(names).items()}


def _ms(s: str) -> float:
    return float(s.removesuffix("ms"))


def _queries(res: Results, x: str) -> pd.DataFrame:
    """Every completed query of the sweep: its point's axis ``x``, environment, seed,
    response size (KB) and completion time (ps)."""
    q = res.sql(f"SELECT {x} AS x, scheme AS env, seed, size_bytes, qct_ps FROM queries")
    q["size_kb"] = (q.pop("size_bytes") // 1024).astype(int)
    return q


def _counters(res: Results, x: str) -> pd.DataFrame:
    """Per point (all seeds): packets dropped (`ingress_drops` of them at a switch's
    ingress queues) and retransmission timeouts."""
    c = res.sql(f"""SELECT {x} AS x, scheme AS env, sum(drops)::BIGINT AS drops,
                           sum(timeouts)::BIGINT AS timeouts FROM points
                    WHERE status = 'done' GROUP BY ALL""")
    i = res.sql(f"""SELECT {x} AS x, scheme AS env,
                           sum(dropped_ingress)::BIGINT AS ingress_drops
                    FROM ports GROUP BY ALL""")
    return c.merge(i, on=["x", "env"])


def p99_relative(queries: pd.DataFrame, by: list[str], baseline: str = "Baseline",
                 match: list[str] | None = None) -> pd.DataFrame:
    """99th-percentile query completion time of each group of ``by`` (which includes
    ``env``) and its ratio to the Baseline environment's at the same values of ``match``
    (default: ``by`` without ``env``), as DeTail Figs. 6 and 8-10 plot it; the median
    and the spread of the single seeds' 99th percentiles beside it. Times in ms."""
    match = [c for c in by if c != "env"] if match is None else match
    t = qct_percentiles(queries, by=by, qs=(50, 99))
    per_seed = qct_percentiles(queries, by=[*by, "seed"], qs=(99,))
    spread = (per_seed.groupby(by, as_index=False)
              .agg(p99_seed_min=("p99", "min"), p99_seed_max=("p99", "max")))
    t = t.merge(spread, on=by)
    base_q = queries[queries.env == baseline]
    base = {k if isinstance(k, tuple) else (k,): percentile(g["qct_ps"], 99)
            for k, g in base_q.groupby(match)}
    t["p99_vs_baseline"] = [t.p99[i] / base[tuple(t.loc[i, c] for c in match)]
                            for i in t.index]
    for c in ("p50", "p99", "p99_seed_min", "p99_seed_max"):
        t[c + "_ms"] = t.pop(c) / 1e9
    return t


def _pct(x: float) -> str:
    return f"{x:+.0%}"


def _red(e: Estimate) -> str:
    """A reduction with its interval, in percent."""
    if not e.known:
        return "—"
    return f"{e.value:.0%} [{e.lo:.0%}, {e.hi:.0%}]"


class Cells:
    """The 99th percentiles of a sweep's cells (axis ``x``, query size, environment) with
    their bootstrap intervals, and what the claims read from them."""

    def __init__(self, queries: pd.DataFrame, key: str, xfmt: str) -> None:
        self.p99 = p99s(queries, ["x", "size_kb", "env"], key)
        self.cells = sorted({(x, s) for x, s, _ in self.p99}, key=lambda c: (c[1], c[0]))
        self.xfmt = xfmt

    def label(self, cell: tuple[float, int]) -> str:
        return f"{cell[1]} KB @ {self.xfmt.format(cell[0])}"

    def of(self, env: str, cell: tuple[float, int]) -> Estimate:
        return self.p99.get((*cell, env), Estimate.missing())

    def reduction(self, env: str, cell: tuple[float, int], base: str = "Baseline") -> Estimate:
        """1 − the environment's p99 over ``base``'s in the cell."""
        return reduction(self.of(env, cell), self.of(base, cell))

    def relative(self, env: str, cell: tuple[float, int]) -> Estimate:
        """The environment's p99 over Baseline's in the cell (`p99_vs_baseline`)."""
        return ratio(self.of(env, cell), self.of("Baseline", cell))

    def below(self, env: str, base: str) -> list[Claim]:
        """Per cell: the environment's p99 below ``base``'s."""
        return [claim.below(self.label(c), self.of(env, c), self.of(base, c))
                for c in self.cells]

    def reductions(self, env: str, base: str = "Baseline") -> str:
        return "; ".join(f"{self.label(c)}: {_red(self.reduction(env, c, base))}"
                         for c in self.cells)

    def band(self, text: str, env: str, lo: float, hi: float, paper: str,
             paper_value: str) -> Claim:
        """The environment's reduction against Baseline in the band [lo, hi] in every
        cell."""
        return claim.each(text, [claim.within(self.label(c), self.reduction(env, c), lo, hi)
                                 for c in self.cells], paper=paper, paper_value=paper_value,
                          why=f"{env}'s reductions: " + self.reductions(env),
                          label=[self.label(c) for c in self.cells])

    def detail_beats_baseline(self, where: str, lo: float, hi: float,
                              paper: str) -> list[Claim]:
        """The figure's two claims on DeTail against Baseline: below it in every cell
        (``where``), and its reductions in the paper's range [lo, hi] widened by
        `SLACK`."""
        def pct(x: float) -> str:
            return f"{x:.0%}".replace("-", "−")
        return [
            claim.each(f"DeTail's 99th percentile is below Baseline's {where}",
                       self.below("DeTail", "Baseline"), paper=paper,
                       paper_value=f"{pct(lo)} to {pct(hi)} less",
                       why="DeTail's reductions: " + self.reductions("DeTail"),
                       label=[self.label(x) for x in self.cells]),
            self.band(f"DeTail's reductions lie in the paper's {lo * 100:.0f}–{hi * 100:.0f}% "
                      f"{WIDENED} ({pct(lo - SLACK)} to {pct(hi + SLACK)}), every cell",
                      "DeTail", lo - SLACK, hi + SLACK, paper, f"{pct(lo)} to {pct(hi)}"),
        ]

    def grows(self, text: str, env: str, paper: str, paper_value: str) -> Claim:
        """Within each query size, the environment's p99 relative to Baseline's smaller
        (a larger reduction) at the largest ``x`` than at the smallest."""
        cases, labels = [], []
        for size in sorted({c[1] for c in self.cells}):
            xs = sorted(c[0] for c in self.cells if c[1] == size)
            lo, hi = (xs[0], size), (xs[-1], size)
            cases.append(claim.below(f"{size} KB", self.relative(env, hi),
                                     self.relative(env, lo)))
            labels.append(f"{size} KB")
        return claim.each(text, cases, paper=paper, paper_value=paper_value, label=labels,
                          why=f"{env}'s reductions: " + self.reductions(env))


def _runs(res: Results, x: str) -> pd.DataFrame:
    """One row per run (point and seed): its axis ``x``, environment, drops and
    timeouts."""
    return res.sql(f"""SELECT {x} AS x, scheme AS env, seed, drops, timeouts FROM points
                       WHERE status = 'done' ORDER BY ALL""")


def _relative_bars(t: pd.DataFrame, xlabel: str, out: Path, name: str,
                   title: str) -> list[Path]:
    imgs: list[Path] = []
    for size in SIZES_KB:
        g = t[t.size_kb == size].rename(columns={"x": xlabel})
        imgs += plots.normalized_bars(g, xlabel, "env", "p99_ms", "Baseline",
                                      out / f"{name}_{size}kb",
                                      title=f"{title}: {size} KB queries",
                                      ylabel="99th pct QCT / Baseline's")
    return imgs


# A "rough magnitude" of a range the paper gives: the range widened by this much either
# way.
SLACK = 0.15
WIDENED = f"widened by {SLACK * 100:.0f} points either way"


# --- Bursty workload: Figs. 5 and 6 ------------------------------------------------------

def _bursty_sweep(quick: bool) -> dict[str, Any]:
    lengths = [2.5, 7.5, 12.5] if quick else [2.5, 5.0, 7.5, 10.0, 12.5]
    periods = 2 if quick else 6
    return {"base_text": BASE, "seeds": 1 if quick else 3,
            "schemes": _env_schemes(("baseline", "fc", "detail")),
            "set": {"workload.burst_period": f"{PERIOD_MS:g}ms",
                    "workload.burst_rate": BURST_RATE},
            "zip": {"workload.burst_length": [f"{b:g}ms" for b in lengths],
                    "workload.queries": [round(HOSTS * BURST_RATE * b / 1e3 * periods)
                                         for b in lengths]}}


def _bursty_setup(quick: bool) -> str:
    sw = _bursty_sweep(quick)
    periods = 2 if quick else 6
    return ("all-to-all queries (1460 B request, 2/8/32 KB response) in bursts: every "
            "50 ms each of the 96 servers issues queries to random other servers at "
            "10,000/s (Poisson) for the burst, none between; bursts of "
            + ", ".join(sw["zip"]["workload.burst_length"])
            + f"; {periods} periods ({periods * PERIOD_MS:g} ms of arrivals) per run, "
            f"{sw['seeds']} seed(s). " + SETTINGS)


def _bursty_table(res: Results) -> pd.DataFrame:
    q = _queries(res, "burst_length")
    q["x"] = q["x"].map(_ms)
    t = p99_relative(q, by=["x", "size_kb", "env"])
    c = _counters(res, "burst_length")
    c["x"] = c["x"].map(_ms)
    t = t.merge(c, on=["x", "env"])
    order = {n: i for i, n in enumerate(NAMES.values())}
    t = t.sort_values(["size_kb", "x", "env"], key=lambda s: s.map(order) if s.name == "env"
                      else s).reset_index(drop=True)
    return t


FIG5_PAPER = ("§8.1.1: under 12.5 ms bursts Baseline's 99th percentile is 85 ms, 'more than "
              "4.5 times the 50th percentile of 18ms'; DeTail's is 40 ms; FC achieves 40% of "
              "the reduction (49 ms) 'by completely avoid[ing] packet drops', 'at the cost of "
              "the median performance'; DeTail keeps the median high as well")


def fig5_claims(q: pd.DataFrame, runs: pd.DataFrame, by: pd.DataFrame) -> list[Claim]:
    """Fig. 5's claims: ``q`` the 8 KB queries of the 12.5 ms bursts (with `env`, `seed`,
    `qct_ps`), ``runs`` one row per run of that burst length (`env`, `seed`, `drops`),
    ``by`` the figure's table by environment (its counts, for the text)."""
    e = qct_quantiles(q, ["env"], [0.5, 0.99], "detail_fig5_bursty_cdf/12.5ms/8KB")
    (b50, b99), (f50, f99), (d50, d99) = (e.get((n,), [Estimate.missing()] * 2)
                                          for n in ("Baseline", "FC", "DeTail"))
    return [
        claim.each("DeTail's 99th percentile is at least 40% below Baseline's, and FC's lies "
                   "between them",
                   [claim.at_least("DeTail at least 40% below Baseline", reduction(d99, b99),
                                   0.4),
                    claim.no_more("DeTail's no higher than FC's", d99, f99),
                    claim.no_more("FC's no higher than Baseline's", f99, b99)],
                   paper=FIG5_PAPER, paper_value="85, 49, 40 ms (FC −42%, DeTail −53%)",
                   why=f"p99 Baseline {b99.fmt('.3g')} ms, FC {f99.fmt('.3g')} ms, DeTail "
                       f"{d99.fmt('.3g')} ms; DeTail's reduction {_red(reduction(d99, b99))}",
                   label=["DeTail at least 40% below Baseline", "DeTail's no higher than FC's",
                          "FC's no higher than Baseline's"]),
        claim.each("Baseline's 99th percentile and median are near the paper's 85 ms and 18 "
                   "ms (within ±50%)",
                   [claim.within("p99", b99, 0.5 * 85, 1.5 * 85),
                    claim.within("p50", b50, 0.5 * 18, 1.5 * 18)],
                   paper=FIG5_PAPER, paper_value="p99 85 ms, p50 18 ms",
                   why=f"p99 {b99.fmt('.3g')} ms, p50 {b50.fmt('.3g')} ms (p99/p50 "
                       f"{b99.value / b50.value:.1f}; paper 4.7)", label=["p99", "p50"]),
        claim.below("FC's tail gain costs median performance: FC's median above Baseline's "
                    "(Baseline's below FC's)", b50, f50, paper=FIG5_PAPER,
                    paper_value="'at the cost of the median performance'",
                    why=f"p50 Baseline {b50.fmt('.3g')}, FC {f50.fmt('.3g')} ms"),
        claim.below("DeTail keeps the median high: DeTail's median below FC's", d50, f50,
                    paper=FIG5_PAPER, paper_value="(no number)",
                    why=f"p50 FC {f50.fmt('.3g')}, DeTail {d50.fmt('.3g')} ms"),
        claim.in_every_run(
            "FC and DeTail lose no packets (lossless fabrics)",
            {f"{r.env} seed {r.seed}": r.drops == 0 for r in runs.itertuples()
             if r.env in ("FC", "DeTail")},
            f"drops: FC {by.loc['FC', 'drops']}, DeTail {by.loc['DeTail', 'drops']} (Baseline "
            f"{by.loc['Baseline', 'drops']}); timeouts: FC {by.loc['FC', 'timeouts']}, DeTail "
            f"{by.loc['DeTail', 'timeouts']}, over all seeds", paper=FIG5_PAPER,
            paper_value="FC avoids packet drops completely")]


def _fig5(quick: bool) -> Figure:
    def analyze(res: Results, out: Path) -> tuple[pd.DataFrame, list[Path], list[Claim]]:
        q = _queries(res, "burst_length")
        q = q[(q["x"].map(_ms) == 12.5) & (q.size_kb == 8)]
        rows = []
        envs = ["Baseline", "FC", "DeTail"]
        c = _counters(res, "burst_length")
        c = c[c["x"].map(_ms) == 12.5].set_index("env")
        for env in envs:
            v = q[q.env == env]["qct_ps"] / 1e9
            rows.append({"env": env, "p50_ms": percentile(v, 50), "p90_ms": percentile(v, 90),
                         "p99_ms": percentile(v, 99), "p99.9_ms": percentile(v, 99.9),
                         "mean_ms": float(v.mean()), "queries": len(v),
                         "drops": int(c.loc[env, "drops"]),
                         "ingress_drops": int(c.loc[env, "ingress_drops"]),
                         "timeouts": int(c.loc[env, "timeouts"])})
        t = pd.DataFrame(rows)
        imgs = plots.cdf({env: q[q.env == env]["qct_ps"].to_numpy() / 1e9 for env in envs},
                         out / "detail_fig5_bursty_cdf",
                         title="8 KB queries, 12.5 ms bursts (DeTail Fig. 5)",
                         xlabel="query completion time (ms)")
        runs = _runs(res, "burst_length")
        runs = runs[runs["x"].map(_ms) == 12.5]
        return t, imgs, fig5_claims(q, runs, t.set_index("env"))

    return Figure(
        id="detail_fig5_bursty_cdf",
        title="DeTail Fig. 5: completion times of 8 KB queries under 12.5 ms bursts",
        source="DeTail §8.1.1 (Fig. 5)",
        setup=_bursty_setup(quick) + " This figure: the 12.5 ms bursts, 8 KB queries.",
        sweep=_bursty_sweep(quick), data="detail_bursty", analyze=analyze,
        paper=["§8.1.1: under 12.5 ms bursts Baseline's 99th percentile is 85 ms, 'more than "
               "4.5 times the 50th percentile of 18ms'; DeTail's is 40 ms (a reduction of "
               "more than 50%); FC achieves 40% of the reduction (49 ms) 'by completely "
               "avoid[ing] packet drops', 'at the cost of the median performance'; DeTail "
               "keeps the median high as well."],
        notes=QCT_DEFINITION + " " + RUN_END + " The paper's numbers are read from its "
              "text; its CDF is not reproduced point by point. 'At the cost of the "
              "median' is checked as FC's median above Baseline's. " + FC_DROPS,
        metrics=[percentile])


FIG6_PAPER = ("§8.1.1, Fig. 6: 'DeTail reduces the 99th percentile by 7% to 65% across burst "
              "durations and all three query sizes'; flow control gives most of the benefit "
              "(more than 40% in some cases); adaptive load balancing up to 20% more than FC "
              "in many cases; the longer the burst, the larger the improvement")


def fig6_claims(c: Cells) -> list[Claim]:
    """Fig. 6's claims on the bursty sweep's cells (burst length, query size)."""
    fc_below = c.below("FC", "Baseline")
    return [
        *c.detail_beats_baseline("for every burst length and query size", 0.07, 0.65,
                                 FIG6_PAPER),
        claim.each("FC brings most of the gain: FC below Baseline in most cells, by more "
                   "than 40% in some",
                   [claim.most("below Baseline in most cells", fc_below),
                    claim.some("by 40% or more in some", [
                        claim.at_least(c.label(x), c.reduction("FC", x), 0.4)
                        for x in c.cells], label=[c.label(x) for x in c.cells])],
                   paper=FIG6_PAPER, paper_value="more than 40% in some cases",
                   why="FC's reductions: " + c.reductions("FC"),
                   label=["below Baseline in most cells", "by 40% or more in some"]),
        claim.most("adaptive load balancing adds to FC: DeTail below FC in most cells",
                   c.below("DeTail", "FC"), paper=FIG6_PAPER,
                   paper_value="up to 20% more in many cases",
                   why="DeTail against FC: " + c.reductions("DeTail", "FC")),
        c.grows("within each query size, the longer the burst the larger DeTail's reduction "
                "(longest burst against shortest: DeTail's p99 over Baseline's lower)",
                "DeTail", FIG6_PAPER, "the longer the burst, the larger the improvement")]


def _fig6(quick: bool) -> Figure:
    def analyze(res: Results, out: Path) -> tuple[pd.DataFrame, list[Path], list[Claim]]:
        t = _bursty_table(res)
        imgs = _relative_bars(t, "burst_ms", out, "detail_fig6_bursty",
                              "Bursty workload (DeTail Fig. 6)")
        q = _queries(res, "burst_length")
        q["x"] = q["x"].map(_ms)
        return t.rename(columns={"x": "burst_ms"}), imgs, fig6_claims(
            Cells(q, "detail_fig6_bursty", "{:g} ms"))

    return Figure(
        id="detail_fig6_bursty",
        title="DeTail Fig. 6: 99th percentile completion time vs burst length, relative to "
              "Baseline",
        source="DeTail §8.1.1 (Fig. 6)", setup=_bursty_setup(quick),
        sweep=_bursty_sweep(quick), data="detail_bursty", analyze=analyze,
        paper=["§8.1.1, Fig. 6: DeTail reduces the 99th percentile by 7% to 65% across burst "
               "durations and all three query sizes; flow control gives most of the benefit "
               "(more than 40% in some cases); adaptive load balancing up to 20% more than "
               "FC in many cases; the longer the burst, the larger the improvement. FC is "
               "worse than Baseline in a few cases (e.g. 2 KB queries, 5 ms bursts), "
               "attributed to head-of-line blocking."],
        notes=QCT_DEFINITION + " " + RUN_END + " `p99_vs_baseline` is the environment's "
              "99th percentile over Baseline's at the same burst length and query size "
              "(the paper's bars); a reduction is 1 minus it. The paper gives no per-cell "
              "numbers in its text, only the range; 'rough magnitude' is checked as the "
              "paper's range widened by 15 percentage points either way. " + FC_DROPS,
        metrics=[p99_relative, percentile])


# --- Steady workload: Figs. 7 and 8 ------------------------------------------------------

def _steady_sweep(quick: bool) -> dict[str, Any]:
    rates = [500, 2000, 2500] if quick else [500, 1000, 1500, 2000, 2500]
    ms = 100 if quick else 300
    return {"base_text": BASE, "seeds": 1 if quick else 3,
            "schemes": _env_schemes(("baseline", "fc", "detail")),
            "zip": {"workload.rate": rates,
                    "workload.queries": [round(HOSTS * r * ms / 1e3) for r in rates]}}


def _steady_setup(quick: bool) -> str:
    sw = _steady_sweep(quick)
    ms = 100 if quick else 300
    return ("all-to-all queries (1460 B request, 2/8/32 KB response), Poisson at a steady "
            "rate per server of " + ", ".join(map(str, sw["zip"]["workload.rate"]))
            + f" queries/s; {ms} ms of arrivals per run, {sw['seeds']} seed(s). " + SETTINGS)


def _steady_table(res: Results) -> pd.DataFrame:
    q = _queries(res, "rate")
    t = p99_relative(q, by=["x", "size_kb", "env"])
    t = t.merge(_counters(res, "rate"), on=["x", "env"])
    order = {n: i for i, n in enumerate(NAMES.values())}
    return t.sort_values(["size_kb", "x", "env"], key=lambda s: s.map(order)
                         if s.name == "env" else s).reset_index(drop=True)


FIG7_PAPER = ("§8.1.1: at 2000 queries/s (load factor 0.68) there were relatively few packet "
              "drops, so flow control gives no improvement ('FC and Baseline coincide with "
              "each other'); adaptive load balancing gives more consistent completion times")


def fig7_claims(q: pd.DataFrame, hit: pd.DataFrame, by: pd.DataFrame) -> list[Claim]:
    """Fig. 7's claims: ``q`` the 8 KB queries at 2000/s, ``hit`` one row per query (of
    every size) at 2000/s with `timed_out` (1 if one of its flows timed out), ``by`` the
    figure's table by environment (its counts, for the text)."""
    e = qct_quantiles(q, ["env"], [0.5, 0.99], "detail_fig7_steady_cdf/2000/8KB")
    (b50, b99), (f50, f99), (d50, d99) = (e.get((n,), [Estimate.missing()] * 2)
                                          for n in ("Baseline", "FC", "DeTail"))
    r50, r99 = ratio(f50, b50), ratio(f99, b99)
    base = hit[hit.env == "Baseline"]
    share = Resamples([base.loc[base.seed == s, "timed_out"].to_numpy(dtype=float)
                       for s in sorted(hit.seed.unique())],
                      key="detail_fig7_steady_cdf/2000/timeouts").mean(0).scaled(100)
    spread = {n: ratio(p99, p50) for n, p50, p99 in (("Baseline", b50, b99),
                                                      ("FC", f50, f99), ("DeTail", d50, d99))}
    return [
        claim.each("FC and Baseline coincide (FC's median and 99th percentile within 10% of "
                   "Baseline's)", [claim.within("p50", r50, 0.9, 1.1),
                                   claim.within("p99", r99, 0.9, 1.1)],
                   paper=FIG7_PAPER, paper_value="'coincide' (no number)",
                   why=f"FC vs Baseline: p50 {f50.fmt('.3g')} vs {b50.fmt('.3g')} ms (×"
                       f"{r50.fmt('.3g')}), p99 {f99.fmt('.3g')} vs {b99.fmt('.3g')} ms "
                       f"(×{r99.fmt('.3g')})", label=["p50", "p99"]),
        claim.at_most("Baseline sees relatively few drops: a timeout in fewer than 1% of the "
                      "queries (%)", share, 1.0, paper=FIG7_PAPER,
                      paper_value="'relatively few packet drops'",
                      why=f"Baseline: {by.loc['Baseline', 'drops']} drops, "
                          f"{by.loc['Baseline', 'timeouts']} timeouts over all seeds"),
        claim.each("DeTail's completion times are more consistent: a lower 99th percentile "
                   "and a smaller 99th-to-median ratio than Baseline's",
                   [claim.below("lower p99", d99, b99),
                    claim.below("smaller p99/p50", spread["DeTail"], spread["Baseline"])],
                   paper=FIG7_PAPER, paper_value="(no number)",
                   why=f"p99 DeTail {d99.fmt('.3g')} vs Baseline {b99.fmt('.3g')} ms; p99/p50 "
                       + ", ".join(f"{n} {x.fmt('.3g')}" for n, x in spread.items()),
                   label=["lower p99", "smaller p99/p50"])]


def _fig7(quick: bool) -> Figure:
    def analyze(res: Results, out: Path) -> tuple[pd.DataFrame, list[Path], list[Claim]]:
        q = _queries(res, "rate")
        q = q[(q["x"] == 2000) & (q.size_kb == 8)]
        c = _counters(res, "rate")
        c = c[c["x"] == 2000].set_index("env")
        n_queries = _queries(res, "rate").query("x == 2000").groupby("env").size()
        # Queries (of every size) one of whose flows (request or response) timed out.
        hit = res.sql("""SELECT env, count(*) AS n FROM (
                             SELECT DISTINCT scheme AS env, hash, query_id FROM flows
                             WHERE rate = 2000 AND timeouts > 0) GROUP BY env""")
        hit = hit.set_index("env")["n"].reindex(n_queries.index, fill_value=0)
        envs = ["Baseline", "FC", "DeTail"]
        rows = []
        for env in envs:
            v = q[q.env == env]["qct_ps"] / 1e9
            rows.append({"env": env, "p50_ms": percentile(v, 50), "p90_ms": percentile(v, 90),
                         "p99_ms": percentile(v, 99), "p99.9_ms": percentile(v, 99.9),
                         "mean_ms": float(v.mean()), "queries": len(v),
                         "drops": int(c.loc[env, "drops"]),
                         "timeouts": int(c.loc[env, "timeouts"]),
                         "queries_with_timeout_pct":
                             100 * int(hit[env]) / int(n_queries[env])})
        t = pd.DataFrame(rows)
        imgs = plots.cdf({env: q[q.env == env]["qct_ps"].to_numpy() / 1e9 for env in envs},
                         out / "detail_fig7_steady_cdf",
                         title="8 KB queries, steady 2000 queries/s (DeTail Fig. 7)",
                         xlabel="query completion time (ms)")
        # Per query of every size at 2000/s: whether one of its flows timed out.
        hit = res.sql("""SELECT q.scheme AS env, q.seed,
                                CAST(count(f.flow_id) FILTER (f.timeouts > 0) > 0 AS DOUBLE)
                                    AS timed_out
                         FROM queries q LEFT JOIN flows f
                              ON f.hash = q.hash AND f.query_id = q.query_id
                         WHERE q.rate = 2000 GROUP BY q.scheme, q.seed, q.hash, q.query_id
                         ORDER BY ALL""")
        return t, imgs, fig7_claims(q, hit, t.set_index("env"))

    return Figure(
        id="detail_fig7_steady_cdf",
        title="DeTail Fig. 7: completion times of 8 KB queries at a steady 2000 queries/s",
        source="DeTail §8.1.1 (Fig. 7)",
        setup=_steady_setup(quick) + " This figure: 2000 queries/s, 8 KB queries.",
        sweep=_steady_sweep(quick), data="detail_steady", analyze=analyze,
        paper=["§8.1.1: at 2000 queries/s (load factor 0.68) there were relatively few "
               "packet drops, so flow control gives no improvement ('FC and Baseline "
               "coincide with each other'); adaptive load balancing gives more consistent "
               "completion times. The text gives no numbers for this figure."],
        notes=QCT_DEFINITION + " " + RUN_END + " 'Coincide' is checked as FC's median and "
              "99th percentile within 10% of Baseline's; 'more consistent' as a lower 99th "
              "percentile and a smaller ratio of the 99th percentile to the median. "
              "'Relatively few drops' is checked as fewer than 1% of the queries having a "
              "flow that timed out (`queries_with_timeout_pct`, over the queries of every "
              "size, an upper bound on those a timeout delayed): below 1%, timeouts alone "
              "cannot reach the 99th percentile of a size that gets its share of them.",
        metrics=[percentile])


FIG8_PAPER = ("§8.1.1, Fig. 8: DeTail improves the 99th percentile by about 10% to 81% across "
              "rates and sizes, more at higher rates; at 2500 queries/s FC gives 20% to 25% "
              "over Baseline, and DeTail's 2 KB queries have a 99th percentile of about 5.3 ms "
              "against Baseline's 28.7 ms")


def fig8_claims(c: Cells) -> list[Claim]:
    """Fig. 8's claims on the steady sweep's cells (rate, query size)."""
    top = max(x for x, _ in c.cells)
    two = (top, 2)
    sizes = sorted({s for _, s in c.cells})
    return [
        *c.detail_beats_baseline("at every rate, for every query size", 0.10, 0.81,
                                 FIG8_PAPER),
        claim.at_least(f"2 KB queries at {top:g} queries/s: DeTail's 99th percentile at least "
                       "50% below Baseline's", c.reduction("DeTail", two), 0.5,
                       paper=FIG8_PAPER, paper_value="5.3 vs 28.7 ms (−81%)",
                       why=f"DeTail {c.of('DeTail', two).fmt('.3g')} ms vs Baseline "
                           f"{c.of('Baseline', two).fmt('.3g')} ms"),
        claim.each(f"at {top:g} queries/s FC improves on Baseline by roughly 20–25% (checked: "
                   "a reduction of 5–40% for every size)",
                   [claim.within(f"{s} KB", c.reduction("FC", (top, s)), 0.05, 0.40)
                    for s in sizes], paper=FIG8_PAPER, paper_value="20% to 25%",
                   why="FC's reductions: " + ", ".join(
                       f"{s} KB {_red(c.reduction('FC', (top, s)))}" for s in sizes),
                   label=[f"{s} KB" for s in sizes]),
        c.grows("the higher the rate, the larger DeTail's reduction (highest rate against "
                "lowest, every size: DeTail's p99 over Baseline's lower)", "DeTail",
                FIG8_PAPER, "more at higher rates")]


def _fig8(quick: bool) -> Figure:
    def analyze(res: Results, out: Path) -> tuple[pd.DataFrame, list[Path], list[Claim]]:
        t = _steady_table(res)
        imgs = _relative_bars(t, "rate", out, "detail_fig8_steady",
                              "Steady workload (DeTail Fig. 8)")
        return t.rename(columns={"x": "rate"}), imgs, fig8_claims(
            Cells(_queries(res, "rate"), "detail_fig8_steady", "{:g}/s"))

    return Figure(
        id="detail_fig8_steady",
        title="DeTail Fig. 8: 99th percentile completion time vs steady query rate, "
              "relative to Baseline",
        source="DeTail §8.1.1 (Fig. 8)", setup=_steady_setup(quick),
        sweep=_steady_sweep(quick), data="detail_steady", analyze=analyze,
        paper=["§8.1.1, Fig. 8: 500 to 2500 queries/s (load factors 0.17 to 0.85); DeTail "
               "improves the 99th percentile by about 10% to 81% across rates and sizes, "
               "more at higher rates. At 2500 queries/s drops are significant and FC gives "
               "20% to 25% over Baseline; DeTail's 2 KB queries have a 99th percentile of "
               "about 5.3 ms against Baseline's 28.7 ms (over 81% less)."],
        notes=QCT_DEFINITION + " " + RUN_END + " `p99_vs_baseline` as in Fig. 6. The "
              "paper's load factors (0.17 at 500/s, 0.85 at 2500/s) match the load on the "
              "oversubscribed rack uplinks: a query is 16,680 B on the wire on average "
              "(request and response with headers), 84 of 95 destinations are in other "
              "racks, and 12 servers share 4 Gbps of uplinks, so 0.18 at 500/s and 0.88 at "
              "2500/s; the servers' own links carry 0.07 to 0.33.",
        metrics=[p99_relative, percentile])


# --- Mixed workload: Fig. 9 --------------------------------------------------------------

def _mixed_queries(rate: float, periods: int) -> int:
    per_server = (BURST_RATE * MIXED_BURST_MS + rate * (PERIOD_MS - MIXED_BURST_MS)) / 1e3
    return round(HOSTS * per_server * periods)


def _mixed_set() -> dict[str, Any]:
    return {"workload.burst_period": f"{PERIOD_MS:g}ms",
            "workload.burst_length": f"{MIXED_BURST_MS:g}ms",
            "workload.burst_rate": BURST_RATE}


FIG9_PAPER = ("§8.1.1, Fig. 9: DeTail reduces the 99th percentile by 25% to 60%, 'with "
              "significant contributions from both flow control and load balancing "
              "mechanisms'")


def _fig9(quick: bool) -> Figure:
    rates = [250, 1000] if quick else [250, 500, 750, 1000]
    periods = 2 if quick else 6
    seeds = 1 if quick else 3

    def analyze(res: Results, out: Path) -> tuple[pd.DataFrame, list[Path], list[Claim]]:
        q = _queries(res, "rate")
        t = p99_relative(q, by=["x", "size_kb", "env"])
        t = t.merge(_counters(res, "rate"), on=["x", "env"])
        order = {n: i for i, n in enumerate(NAMES.values())}
        t = t.sort_values(["size_kb", "x", "env"], key=lambda s: s.map(order)
                          if s.name == "env" else s).reset_index(drop=True)
        imgs = _relative_bars(t, "steady_rate", out, "detail_fig9_mixed",
                              "Mixed workload (DeTail Fig. 9)")
        c = Cells(q, "detail_fig9_mixed", "{:g}/s")
        v = [claim.each("DeTail's 99th percentile is below Baseline's at every steady rate, "
                        "for every query size", c.below("DeTail", "Baseline"),
                        paper=FIG9_PAPER, paper_value="25% to 60% less",
                        why="DeTail's reductions: " + c.reductions("DeTail"),
                        label=[c.label(x) for x in c.cells]),
             c.band(f"DeTail's reductions lie in the paper's 25–60% {WIDENED} (10% to 75%), "
                    "every cell", "DeTail", 0.25 - SLACK,
                    0.60 + SLACK, FIG9_PAPER, "25% to 60%"),
             claim.each("both flow control and load balancing contribute: FC below Baseline, "
                        "and DeTail below FC, in most cells",
                        [claim.most("FC below Baseline in most cells", c.below("FC", "Baseline")),
                         claim.most("DeTail below FC in most cells", c.below("DeTail", "FC"))],
                        paper=FIG9_PAPER, paper_value="(no number)",
                        why="FC's reductions: " + c.reductions("FC") + "; DeTail against FC: "
                            + c.reductions("DeTail", "FC"),
                        label=["FC below Baseline", "DeTail below FC"])]
        return t.rename(columns={"x": "steady_rate"}), imgs, v

    return Figure(
        id="detail_fig9_mixed",
        title="DeTail Fig. 9: mixed workload, 99th percentile completion time relative to "
              "Baseline",
        source="DeTail §8.1.1 (Fig. 9)",
        setup="all-to-all queries (1460 B request, 2/8/32 KB response): every 50 ms a 5 ms "
              "burst at 10,000 queries/s per server, then a steady "
              + ", ".join(map(str, rates)) + " queries/s per server for the remaining 45 "
              f"ms (Poisson in each phase); {periods} periods ({periods * PERIOD_MS:g} ms of "
              f"arrivals) per run, {seeds} seed(s). " + SETTINGS,
        sweep={"base_text": BASE, "seeds": seeds,
               "schemes": _env_schemes(("baseline", "fc", "detail")),
               "set": _mixed_set(),
               "zip": {"workload.rate": rates,
                       "workload.queries": [_mixed_queries(r, periods) for r in rates]}},
        analyze=analyze,
        paper=["§8.1.1, Fig. 9: steady rates of 250 to 1000 queries/s between the bursts; "
               "DeTail reduces the 99th percentile by 25% to 60%, 'with significant "
               "contributions from both flow control and load balancing mechanisms'."],
        notes=QCT_DEFINITION + " " + RUN_END + " `p99_vs_baseline` as in Fig. 6.",
        metrics=[p99_relative, percentile])


# --- Prioritized mixed workload: Fig. 10 -------------------------------------------------

PRIORITIZED_RATE = 1000  # the mixed workload Fig. 10 reruns (the paper does not say which)


FIG10_PAPER = ("§8.1.1, Fig. 10: 'Priority reduces high-priority completion times as "
               "expected'; DeTail achieves 'an additional 12% to 22% reduction over "
               "Priority', and improves low-priority flows by 7% to 35%")


def fig10_claims(q: pd.DataFrame, by: pd.DataFrame) -> list[Claim]:
    """Fig. 10's claims: ``q`` every query with its `class` (high, low), `env`, `seed`,
    `size_kb` and `qct_ps`; ``by`` the figure's table (class, env, size), for the text.
    Each class's 99th percentile is compared with all of Baseline's queries of its size
    (Baseline's switches do not see the classes)."""
    key = "detail_fig10_prioritized"
    base = p99s(q[q.env == "Baseline"], ["size_kb", "env"], f"{key}/all")
    cls = p99s(q[q.env != "Baseline"], ["class", "size_kb", "env"], key)
    miss = Estimate.missing()

    def of(c: str, env: str, s: int) -> Estimate:
        return cls.get((c, s, env), miss)

    sizes = list(SIZES_KB)
    labels = [f"{s} KB" for s in sizes]
    red_hi = {s: reduction(of("high", "DeTail", s), of("high", "Priority", s)) for s in sizes}
    red_lo = {s: reduction(of("low", "DeTail", s), base.get((s, "Baseline"), miss))
              for s in sizes}

    def points(s: int) -> str:
        # The two bars' difference, in points of Baseline's p99.
        gap = (by.loc[("high", "DeTail", s), "p99_vs_baseline"]
               - by.loc[("high", "Priority", s), "p99_vs_baseline"])
        return f"{100 * gap:+.0f} points"

    return [
        claim.each("Priority reduces the high-priority 99th percentile below Baseline's (for "
                   "every size)",
                   [claim.below(f"{s} KB", of("high", "Priority", s),
                                base.get((s, "Baseline"), miss)) for s in sizes],
                   paper=FIG10_PAPER, paper_value="(no number)",
                   why="p99 Priority (high) vs Baseline: " + ", ".join(
                       f"{s} KB {of('high', 'Priority', s).fmt('.3g')} vs "
                       f"{base.get((s, 'Baseline'), miss).fmt('.3g')} ms" for s in sizes),
                   label=labels),
        claim.each("DeTail's high-priority 99th percentile is below Priority's, for every size",
                   [claim.below(f"{s} KB", of("high", "DeTail", s), of("high", "Priority", s))
                    for s in sizes], paper=FIG10_PAPER, paper_value="12% to 22% less",
                   why="; ".join(f"{s} KB: {_red(red_hi[s])} less ({points(s)} of Baseline)"
                                 for s in sizes), label=labels),
        claim.each(f"DeTail's reduction against Priority for high priority is in the paper's "
                   f"12–22% {WIDENED} (−3% to 37%), every size",
                   [claim.within(f"{s} KB", red_hi[s], 0.12 - SLACK, 0.22 + SLACK)
                    for s in sizes], paper=FIG10_PAPER, paper_value="12% to 22%",
                   why=", ".join(f"{s} KB {_red(red_hi[s])}" for s in sizes), label=labels),
        claim.each("DeTail improves low-priority queries against Baseline, for every size",
                   [claim.below(f"{s} KB", of("low", "DeTail", s),
                                base.get((s, "Baseline"), miss)) for s in sizes],
                   paper=FIG10_PAPER, paper_value="7% to 35%",
                   why=", ".join(f"{s} KB {_red(red_lo[s])}" for s in sizes), label=labels),
        claim.each(f"DeTail's low-priority reductions are in the paper's 7–35% {WIDENED} "
                   "(−8% to 50%), every size",
                   [claim.within(f"{s} KB", red_lo[s], 0.07 - SLACK, 0.35 + SLACK)
                    for s in sizes], paper=FIG10_PAPER, paper_value="7% to 35%",
                   why=", ".join(f"{s} KB {_red(red_lo[s])}" for s in sizes), label=labels)]


def _fig10(quick: bool) -> Figure:
    periods = 2 if quick else 6
    seeds = 1 if quick else 3
    envs = ("baseline", "priority", "priority_pfc", "detail")

    def analyze(res: Results, out: Path) -> tuple[pd.DataFrame, list[Path], list[Claim]]:
        q = res.sql("""SELECT q.scheme AS env, q.seed, q.size_bytes, q.qct_ps, f.priority
                       FROM queries q JOIN flows f ON f.hash = q.hash
                            AND f.query_id = q.query_id AND f.class = 'response'""")
        q["size_kb"] = (q.pop("size_bytes") // 1024).astype(int)
        q["class"] = q.pop("priority").map({0: "high", 1: "low"})
        # Baseline's switches do not see the classes: each class is compared with all
        # of Baseline's queries of its size.
        t = p99_relative(q, by=["class", "size_kb", "env"], match=["size_kb"])
        # Each class's losses: its flows' (requests' and responses') data packets
        # dropped and their timer expiries.
        c = res.sql("""SELECT scheme AS env, priority, sum(drops)::BIGINT AS class_drops,
                              sum(timeouts)::BIGINT AS class_timeouts FROM flows
                       GROUP BY ALL""")
        c["class"] = c.pop("priority").map({0: "high", 1: "low"})
        t = t.merge(c, on=["env", "class"])
        order = {n: i for i, n in enumerate(NAMES.values())}
        t = t.sort_values(["class", "size_kb", "env"], key=lambda s: s.map(order)
                          if s.name == "env" else s).reset_index(drop=True)
        imgs: list[Path] = []
        for cls in ("high", "low"):
            g = t[t["class"] == cls].rename(columns={"size_kb": "query_kb"})
            imgs += plots.normalized_bars(g, "query_kb", "env", "p99_ms", "Baseline",
                                          out / f"detail_fig10_prioritized_{cls}",
                                          title=f"{cls.capitalize()}-priority queries "
                                                "(DeTail Fig. 10)",
                                          ylabel="99th pct QCT / Baseline's")
        return t, imgs, fig10_claims(q, t.set_index(["class", "env", "size_kb"]))

    return Figure(
        id="detail_fig10_prioritized",
        title="DeTail Fig. 10: prioritized mixed workload, 99th percentile completion time "
              "relative to Baseline",
        source="DeTail §8.1.1 (Fig. 10)",
        setup="the mixed workload of Fig. 9 with a steady "
              f"{PRIORITIZED_RATE} queries/s between the 5 ms bursts, each query (request, "
              "response and their ACKs) in one of two priority classes drawn uniformly "
              f"(`workload.priorities = 2`); {periods} periods per run, {seeds} seed(s). "
              + SETTINGS,
        sweep={"base_text": BASE, "seeds": seeds, "schemes": _env_schemes(envs),
               "set": _mixed_set() | {
                   "workload.priorities": 2, "workload.rate": PRIORITIZED_RATE,
                   "workload.queries": _mixed_queries(PRIORITIZED_RATE, periods)}},
        analyze=analyze,
        paper=["§8.1.1, Fig. 10: one of the mixed workloads rerun with each flow randomly in "
               "one of two priority levels. Priority reduces high-priority completion times "
               "as expected; DeTail achieves an additional 12% to 22% reduction over "
               "Priority, and improves low-priority flows by 7% to 35%."],
        notes=QCT_DEFINITION + " A query's class is its response flow's `priority` in "
              "flows.parquet (0 high, 1 low; request and response share it). Which mixed "
              f"rate the paper reran is not said; this uses {PRIORITIZED_RATE} queries/s, "
              "the heaviest of Fig. 9, chosen before running it. Baseline's switches do not "
              "see the classes (`switch.priorities = false`), so each class's 99th "
              "percentile is compared with that of all of Baseline's queries of its size. "
              "'An additional 12% to 22% reduction over Priority' is read as DeTail's 99th "
              "percentile relative to Priority's (1 − DeTail/Priority); the difference of "
              "the two bars, in points of Baseline, is given beside it. 'Improves the low "
              "priority flows by 7% to 35%' is read against Baseline. `class_drops` and "
              "`class_timeouts` are the class's flows' (requests' and responses') data "
              "packets dropped and timer expiries, over all seeds. In this model a switch "
              "port's buffer (`switch.buffer`, 128 KB) is shared by its strict-priority "
              "classes with tail drop, and so is each input's: a full port drops a "
              "high-priority packet as readily as a low-priority one (nothing is pushed out "
              "to make room), so under Priority alone the high class is served first but "
              "loses packets, and waits for 10 ms timeouts, about as often as the low "
              "class (compare their `class_drops`). The paper does not say how its "
              "priority queues shared their buffer. " + RUN_END,
        metrics=[p99_relative, percentile])


def figures(quick: bool) -> list[Figure]:
    return [_fig5(quick), _fig6(quick), _fig7(quick), _fig8(quick), _fig9(quick),
            _fig10(quick)]

