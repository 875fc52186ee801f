"""CP Figs. 15-16: query completion time under realistic traffic, under 10x traffic and
with other buffer sizes (CP §6.4)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from spillway import plots
from spillway.analysis import percentile, qct_percentiles
from spillway.intervals import Estimate, ratio
from spillway.reproduce import Figure, claim
from spillway.reproduce.claim import Claim
from spillway.reproduce.cp.testbed import CP_SCHEMES, SCHEMES, TESTBED
from spillway.reproduce.estimates import resampled, seeds_of
from spillway.store import Results

# CP §6.4: 50,000 queries and 50,000 background flows in 10 minutes over 12 servers.
ARRIVALS_PER_S = 50_000 / 600
WEBSEARCH_MEAN_BYTES = 1_665_830  # mean of the built-in web-search CDF
QUERY_BYTES = 11 * 2048  # one query: 2 KB responses from the 11 other servers


def _realistic(quick: bool) -> list[Figure]:
    # The paper's 10 minutes (50,000 queries); the overloaded 10x runs, whose backlog and
    # so their cost per simulated second grow through the run, get 2 minutes.
    duration = 20 if quick else 600
    duration_10x = 20 if quick else 120
    rto_min_ps = 10e9  # transport.rto_min below
    hosts, link = 12, 1e9
    q_load = ARRIVALS_PER_S * 8 * QUERY_BYTES / (hosts * link)
    bg_load = ARRIVALS_PER_S * 8 * WEBSEARCH_MEAN_BYTES / (hosts * link)
    base = {"workload.kind": "partition_aggregate", "workload.fanout": 11,
            "workload.request_size": "2KB", "workload.response_size": "2KB",
            "workload.load": round(q_load, 8), "workload.background_load": round(bg_load, 6),
            "transport.rto_min": "10ms", "switch.buffer": "128KB",
            "run.duration": f"{duration}s"}

    def qct(res: Results, axis: str) -> tuple[pd.DataFrame, pd.DataFrame]:
        q = res.sql(f"""SELECT p.scheme, p.{axis}, q.qct_ps FROM points p JOIN queries q
                        USING (hash) WHERE p.status = 'done'""")
        t = qct_percentiles(q, by=["scheme", axis], qs=(50, 99, 99.9))
        for c in ("p50", "p99", "p99.9"):
            t[c + "_ms"] = t.pop(c) / 1e9
        # Taking RTOmin (10 ms) or more does not by itself mean a timeout: behind a full
        # 384 KB spine queue (3.1 ms at 1 Gbps) a response cut twice needs three trips
        # through it. A query waited for a timeout when one of its flows timed out
        # before it completed: such a flow's completion time is at least RTOmin (counted
        # here if it also timed out, so a late final-ACK timeout on a slow flow counts
        # too: this errs toward failing). A sender timing out after its receiver had
        # everything (its final ACK lost) does not delay the query; those are counted
        # apart.
        slow = (q.assign(slow=q.qct_ps >= rto_min_ps)
                .groupby(["scheme", axis], as_index=False)
                .agg(queries_over_rto=("slow", "sum")))
        f = res.sql(f"""SELECT p.scheme, p.{axis}, p.seed, f.query_id,
                               bool_or(f.timeouts > 0
                                       AND (f.fct_ps >= {rto_min_ps} OR f.fct_ps IS NULL))
                                   AS waited,
                               bool_or(f.timeouts > 0) AS any_timeout
                        FROM points p JOIN flows f USING (hash)
                        WHERE p.status = 'done' AND f.query_id IS NOT NULL GROUP BY ALL""")
        to = (f.groupby(["scheme", axis], as_index=False)
              .agg(queries_waiting_on_timeout=("waited", "sum"),
                   queries_with_sender_timeout=("any_timeout", "sum")))
        out = t.merge(slow, on=["scheme", axis]).merge(to, on=["scheme", axis], how="left")
        for c in ("queries_waiting_on_timeout", "queries_with_sender_timeout"):
            out[c] = out[c].fillna(0).astype(int)
        # Per run, what the claim of no timeouts judges: queries that waited for one.
        runs = res.sql(f"SELECT scheme, {axis}, seed FROM points WHERE status = 'done'").merge(
            f.groupby(["scheme", axis, "seed"], as_index=False).agg(waited=("waited", "sum")),
            on=["scheme", axis, "seed"], how="left").fillna({"waited": 0})
        return out, runs

    def tails(res: Results, axis: str, fig: str) -> dict[tuple[str, Any], list[Estimate]]:
        """Each (scheme, ``axis`` value)'s 99th and 99.9th percentile query completion
        time (ms), bootstrap over the seeds and the queries, keyed by the figure and the
        axis value (the schemes of a cell resampled alike)."""
        q = res.sql(f"""SELECT p.scheme, p.{axis} AS x, p.seed, q.qct_ps / 1e9 AS qct_ms
                        FROM points p JOIN queries q USING (hash) WHERE p.status = 'done'
                        ORDER BY p.hash, q.query_id""")
        seeds = seeds_of(res)
        return {(s, x): resampled(g, ["qct_ms"], seeds, f"{fig}/{axis}={x}").quantiles(
                    0, [0.99, 0.999]) for (s, x), g in q.groupby(["scheme", "x"])}

    def sooner(what: str, a: list[Estimate], b: list[Estimate]) -> list[Claim]:
        """``a``'s p99 and p99.9 each at most 0.99 of ``b``'s (sooner by 1% or more)."""
        return [claim.at_most(f"{what} {pct}", ratio(x, y), 0.99)
                for pct, x, y in zip(("p99", "p99.9"), a, b, strict=True)]

    def bars(t: pd.DataFrame, axis: str, out: Path, name: str, title: str) -> list[Path]:
        long = t.melt(id_vars=["scheme", axis], value_vars=["p99_ms", "p99.9_ms"],
                      var_name="percentile", value_name="ms")
        long["percentile"] = long["percentile"].str.replace("_ms", "")
        imgs = []
        for v, g in long.groupby(axis):
            imgs += plots.grouped_bars(g, "percentile", "scheme", "ms",
                                       out / f"{name}_{v}", title=f"{title}, {axis} {v}",
                                       ylabel="query completion time (ms)")
        return imgs

    def analyze15(res: Results, out: Path) -> tuple[pd.DataFrame, list[Path], list[Claim]]:
        t, runs = qct(res, "spine_buffer")
        imgs = bars(t, "spine_buffer", out, "cp_fig15_qct", "Realistic traffic (CP Fig. 15)")
        e = tails(res, "spine_buffer", "cp_fig15_realistic")
        v = []
        for buf, paper in (("128KB", paper15[0].rstrip(".")),
                           ("384KB", "§6.4, " + paper15[1].split(". ")[0])):
            for base, s in (("TCP", "CP"), ("DCTCP", "DCTCP+CP")):
                a, b = e[(s, buf)], e[(base, buf)]
                # Sooner by at least 1%: a tie to the fourth digit (DCTCP at 384 KB, whose
                # 99th-percentile queries see no loss here) is not the paper's 4.5 ms.
                v.append(claim.each(f"aggregation buffer {buf}: {s} completes queries sooner "
                                    f"(by 1% or more) than {base} at the 99th and 99.9th "
                                    "percentiles", sooner(s, a, b),
                                    paper=paper, paper_value="sooner at both",
                                    why=f"p99 {a[0].fmt('.2f')} vs {b[0].fmt('.2f')} ms "
                                        f"({a[0].value / b[0].value - 1:+.0%}), p99.9 "
                                        f"{a[1].fmt('.2f')} vs {b[1].fmt('.2f')} ms "
                                        f"({a[1].value / b[1].value - 1:+.0%})",
                                    label=["p99", "p99.9"]))
        cp = t[t.scheme.isin(CP_SCHEMES)]
        waited = int(cp["queries_waiting_on_timeout"].sum())
        slow = int(cp["queries_over_rto"].sum())
        late = int(cp["queries_with_sender_timeout"].sum())
        detail = f"{waited} such queries ({slow} took RTOmin or longer)"
        if waited == 0:
            detail = (f"0 such queries; {slow} took RTOmin or longer without one waiting on "
                      f"a timeout; in {late} a sender timed out after its receiver had "
                      "every byte (a lost final ACK: the query did not wait for it)")
        mine = runs[runs.scheme.isin(CP_SCHEMES)]
        v.append(claim.in_every_run(
            "no query of CP or DCTCP+CP waits for a timeout (no flow of a query times out "
            "before it completes)",
            {f"{r.scheme} {r.spine_buffer} seed {r.seed}": r.waited == 0
             for r in mine.itertuples()}, detail,
            paper="§6.4: \"No query traffic suffered timeouts during the experiments.\"",
            paper_value="no timeouts"))
        return t, imgs, v

    def analyze16(res: Results, out: Path) -> tuple[pd.DataFrame, list[Path], list[Claim]]:
        t, _ = qct(res, "buffer")
        imgs = plots.grouped_bars(
            t.melt(id_vars=["buffer"], value_vars=["p99_ms", "p99.9_ms"], var_name="pct",
                   value_name="ms"), "buffer", "pct", "ms", out / "cp_fig16b_buffers",
            title="CP under realistic traffic vs buffer size (CP Fig. 16b)",
            ylabel="query completion time (ms)")
        e = tails(res, "buffer", "cp_fig16b_buffers")
        p99 = [e[("CP", b)][0] for b in ("32KB", "128KB", "256KB")]
        paper = ("§6.4, Fig. 16(b): with CP, a 32 KB buffer cuts the 99th percentile QCT by "
                 "33.07% and 56.49% against 128 and 256 KB; its 99.9th percentile is 6.426 ms")
        v = [claim.each("with CP, a 32 KB buffer gives the shortest 99th percentile, 256 KB the "
                        "longest (paper: −33% and −56% vs 128 and 256 KB)",
                        [claim.below("32 KB below 128 KB", p99[0], p99[1]),
                         claim.below("128 KB below 256 KB", p99[1], p99[2])],
                        paper=paper, paper_value="−33% and −56%",
                        why="p99 " + ", ".join(x.fmt(".2f") for x in p99)
                            + " ms at 32/128/256 KB"),
             claim.at_most("with CP and 32 KB, the 99.9th percentile is a few ms (under 13 ms; "
                           "paper: 6.4 ms)", e[("CP", "32KB")][1], 13, paper=paper,
                           paper_value="6.426 ms")]
        return t, imgs, v

    def analyze10x(res: Results, out: Path) -> tuple[pd.DataFrame, list[Path], list[Claim]]:
        t, _ = qct(res, "traffic")
        # What the scaled background offers, and whether query times stay put: the
        # median QCT of the first and the last sixth of the run.
        bg = res.sql("""SELECT p.scheme, sum(f.size_bytes) AS bytes FROM points p
                        JOIN flows f USING (hash) WHERE f.class = 'background' GROUP BY ALL""")
        bg["bg_offered_load"] = bg["bytes"] * 8 / (duration_10x * hosts * link)
        d = duration_10x
        part = res.sql(f"""SELECT p.scheme, median(q.qct_ps) FILTER (q.start_ps < {d}e12/6)
                                   / 1e9 AS first_sixth_p50_ms,
                                  median(q.qct_ps) FILTER (q.start_ps >= {d}e12*5/6)
                                   / 1e9 AS last_sixth_p50_ms
                           FROM points p JOIN queries q USING (hash) GROUP BY ALL""")
        t = t.merge(bg[["scheme", "bg_offered_load"]], on="scheme").merge(part, on="scheme")
        imgs = bars(t, "traffic", out, "cp_fig16a_10x", "10x traffic (CP Fig. 16a)")
        e = {s: q for (s, _), q in tails(res, "traffic", "cp_fig16a_10x").items()}
        v = []
        for i, pct in enumerate(("p99", "p99.9")):
            c, tc, d, dd = (e[s][i] for s in ("CP", "TCP", "DCTCP+CP", "DCTCP"))
            v.append(claim.each(f"10x traffic, {pct}: CP below TCP, DCTCP+CP below DCTCP (by 1% "
                                "or more: at most 0.99 of it)",
                                [claim.at_most("CP/TCP", ratio(c, tc), 0.99),
                                 claim.at_most("DCTCP+CP/DCTCP", ratio(d, dd), 0.99)],
                                paper="§6.4, Fig. 16(a): CP reduces TCP's QCT by 35.71% (99th) "
                                      "and 76.55% (99.9th); DCTCP with CP reduces DCTCP's by "
                                      "18.5% and 26.2%",
                                paper_value=("−35.71%, −18.5%" if pct == "p99"
                                             else "−76.55%, −26.2%"),
                                why=f"CP {c.fmt('.2f')} vs TCP {tc.fmt('.2f')} ms "
                                    f"({c.value / tc.value - 1:+.0%}); DCTCP+CP {d.fmt('.2f')} "
                                    f"vs DCTCP {dd.fmt('.2f')} ms ({d.value / dd.value - 1:+.0%})"))
        return t, imgs, v

    setup = (f"all 12 hosts: each issues queries (Poisson) to the 11 others, 2 KB request "
             f"and 2 KB response each, and sends web-search background flows (the DCTCP "
             f"paper's distribution, Poisson) to random hosts; both at {ARRIVALS_PER_S:.1f} "
             f"arrivals/s in all (CP §6.4: 50,000 of each in 10 minutes), i.e. query load "
             f"{q_load:.5f} and background load {bg_load:.4f} of the host links; RTOmin "
             f"10 ms; 128 KB per switch port unless named.")
    per_run = f" {duration} s simulated per run."
    paper15 = ["§6.4, Fig. 15(a) (128 KB): CP reduces TCP's 99th percentile QCT by 34.06% "
               "and its 99.9th by 11.74%; DCTCP's is 0.56 ms (99th) and 1.41 ms (99.9th) "
               "above DCTCP with CP.",
               "Fig. 15(b) (384 KB at the aggregation switch): CP's QCT is 61.91% (99th) "
               "and 88.60% (99.9th) of TCP's; DCTCP with CP is 4.5 ms (99th) and 2.4 ms "
               "(99.9th) below DCTCP. \"No query traffic suffered timeouts during the "
               "experiments.\""]
    return [
        Figure(id="cp_fig15_realistic",
               title="CP Fig. 15: query completion time under realistic traffic",
               source="CP §6.4 (Fig. 15)", setup=setup + per_run,
               sweep={"base_text": TESTBED, "seeds": 1, "schemes": SCHEMES, "set": base,
                      "grid": {"switch.spine_buffer": ["128KB", "384KB"]}},
               analyze=analyze15, paper=paper15, metrics=[qct_percentiles, percentile],
               notes="Timeouts of query traffic are read from the flows, not inferred from "
                     "query times: `queries_waiting_on_timeout` counts queries with a flow "
                     "that timed out and took RTOmin or longer (a timeout before the last "
                     "byte arrived makes a flow take at least RTOmin); `queries_over_rto` "
                     "counts queries that took RTOmin or longer for any reason. With CP a "
                     "query can take that long without a timeout: a 2 KB response cut "
                     "twice at a full 384 KB spine queue (3.1 ms at 1 Gbps) crosses it "
                     "three times. `queries_with_sender_timeout` counts queries in which a "
                     "sender timed out after its receiver had every byte: its final ACK was "
                     "dropped (an ACK has no payload to cut), which the query does not wait "
                     "for. The paper's \"no query traffic suffered timeouts\" is checked as "
                     "the first; the last is a loss the paper's QCTs could not show. DCTCP's "
                     "99th percentile (2026-11-24 run: 1.60 ms with 128 KB, 1.70 ms with "
                     "384 KB) is that of queries that meet no loss, within 1% of "
                     "DCTCP+CP's (1.59 and 1.69 ms), where the paper's DCTCP was 0.56 and "
                     "4.5 ms above: here DCTCP keeps the queues short enough that losses "
                     "reach only its 99.9th percentile (12.00 and 11.83 ms against 3.69 "
                     "and 3.01). The runs are the paper's 10 minutes, ~50,000 queries "
                     "each; 2-minute runs gave the same within 0.02 ms at the 99th "
                     "percentile (1.61 and 1.68 ms against 1.59 and 1.68). "
                     "The claim asks for 1% or more at the interval's unfavourable end, "
                     "so that a tie is never reported as a gain: a tie within the "
                     "interval is INCONCLUSIVE, one whose interval lies above 0.99 of "
                     "DCTCP's a FAIL."),
        Figure(id="cp_fig16a_10x",
               title="CP Fig. 16(a): query completion time under 10x traffic",
               source="CP §6.4 (Fig. 16a), DCTCP §4.3",
               setup=setup + " 10x: responses are 20 KB and background flows larger than "
                             "1 MB are 10 times larger (arrival rates unchanged); "
                             f"{duration_10x} s simulated per run.",
               sweep={"base_text": TESTBED, "seeds": 1, "schemes": SCHEMES,
                      "set": base | {"workload.response_size": "20KB",
                                     "workload.background_scale": 10,
                                     "run.duration": f"{duration_10x}s"},
                      "grid": {"label.traffic": ["10x"]}},
               analyze=analyze10x,
               notes="At CP §6.4's arrival rates, scaling the background tenfold offers "
                     "`bg_offered_load` of every host link on average (heavy-tailed, so "
                     "some links get more than they carry): the network is overloaded, "
                     "unfinished flows pile up and query completion times grow through the "
                     "run (compare the first and last sixth). The ordering of the schemes "
                     "is the result here, not the absolute times; the paper gives only "
                     "relative reductions for this experiment.",
               paper=["§6.4, Fig. 16(a): CP reduces TCP's QCT by 35.71% (99th) and 76.55% "
                      "(99.9th); DCTCP with CP reduces DCTCP's by 18.5% and 26.2%."],
               metrics=[qct_percentiles]),
        Figure(id="cp_fig16b_buffers",
               title="CP Fig. 16(b): CP under realistic traffic with 32, 128 and 256 KB "
                     "buffers",
               source="CP §6.4 (Fig. 16b)", setup=setup + per_run
                                                          + " Every switch port has the "
                                                            "named buffer.",
               sweep={"base_text": TESTBED, "seeds": 1, "schemes": {"CP": SCHEMES["CP"]},
                      "set": base, "zip": {"switch.buffer": ["32KB", "128KB", "256KB"],
                                           "switch.spine_buffer": ["32KB", "128KB",
                                                                   "256KB"]}},
               analyze=analyze16,
               paper=["§6.4, Fig. 16(b): with CP, a 32 KB buffer cuts the 99th percentile "
                      "QCT by 33.07% and 56.49% against 128 and 256 KB; its 99.9th "
                      "percentile is 6.426 ms, 17.77% and 15.34% of theirs."],
               metrics=[qct_percentiles]),
    ]


def figures(quick: bool) -> list[Figure]:
    return _realistic(quick)
