"""CP Figs. 1 and 8: TCP incast on the testbed, goodput (Fig. 1/8a) and web-search query
completion time (Fig. 8b), TCP, CP, DCTCP and DCTCP+CP (CP §1, §2.1, §6.1)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from spillway import plots
from spillway.analysis import incast_goodput
from spillway.reproduce import Figure, Verdict
from spillway.reproduce.cp.testbed import BASE, CP_SCHEMES, CUT_WIRE, SCHEMES
from spillway.store import Results


def _rounds(res: Results, axis: str) -> pd.DataFrame:
    """Per point: bytes, summed round time, timeouts and cut packets."""
    return res.sql(f"""
        WITH q AS (SELECT hash, sum(size_bytes) AS bytes, sum(qct_ps) AS time_ps,
                          avg(qct_ps) AS mean_qct_ps, count(*) AS rounds
                   FROM queries GROUP BY hash),
             c AS (SELECT hash, sum(ports.cut) AS cuts FROM ports GROUP BY hash)
        SELECT p.scheme, p.rto_min, p.{axis}, q.bytes, q.time_ps, q.mean_qct_ps, q.rounds,
               p.timeouts, c.cuts AS cut
        FROM points p JOIN q USING (hash) JOIN c USING (hash)
        WHERE p.status = 'done' ORDER BY ALL""")


def _goodput(quick: bool) -> Figure:
    senders = [4, 16, 32, 64, 100, 150] if quick else [
        1, 2, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 56, 64, 80, 100, 128, 160, 200, 250]
    rounds = 3 if quick else 10

    def analyze(res: Results, out: Path) -> tuple[pd.DataFrame, list[Path], list[Verdict]]:
        r = _rounds(res, "senders")
        r["goodput_mbps"] = r["bytes"] * 8 / (r["time_ps"] / 1e12) / 1e6
        # CP's cost: bandwidth of the cut packets over the rounds' time (CP footnote 7).
        r["cut_share"] = r["cut"] * CUT_WIRE * 8 / (1e9 * r["time_ps"] / 1e12)
        r["cut_per_sender_round"] = r["cut"] / (r["senders"] * r["rounds"])
        t = r[["scheme", "rto_min", "senders", "goodput_mbps", "timeouts", "cut_share",
               "cut_per_sender_round"]].copy()
        t["curve"] = t["scheme"] + " (" + t["rto_min"] + ")"
        imgs = plots.lines(t, "senders", "goodput_mbps", "curve", out / "cp_fig8a_goodput",
                           title="Incast goodput, 64 KB per sender (CP Fig. 1 / 8a)",
                           ylabel="goodput (Mbps)",
                           refs=[("CP §6.1: TCP/DCTCP(10ms) ≈ 600 Mbps", 600, "gray")])
        g = t.set_index(["scheme", "rto_min", "senders"])["goodput_mbps"]
        many = [n for n in senders if n >= 64]
        v = []
        # Below 4 senders a round is bounded by slow start (one 64 KB flow from an initial
        # window of 3 needs several round trips), the same for every scheme: no cliff.
        fill = [n for n in senders if n >= 4]
        for s in CP_SCHEMES:
            worst = min(g[(s, rto, n)] for rto in ("10ms", "200ms") for n in fill)
            to = int(t[t.scheme == s]["timeouts"].sum())
            few = ", ".join(f"{n}: {g[(s, '10ms', n)]:.0f}" for n in senders if n < 4)
            v.append(Verdict(f"{s} avoids the throughput cliff at every sender count from 4 "
                             "and both RTOmin (§6.1)", worst >= 700 and to == 0,
                             f"lowest goodput {worst:.0f} Mbps; {to} timeouts in all runs"
                             + (f"; slow-start bound below 4 senders (Mbps) {few}"
                                if few else "")))
        for s in ("TCP", "DCTCP"):
            m = sum(g[(s, "10ms", n)] for n in many) / len(many)
            v.append(Verdict(f"{s}(10ms) keeps about 600 Mbps with many senders (§6.1)",
                             360 <= m <= 840, f"mean {m:.0f} Mbps over {many} senders "
                                              "(±40% band)"))
            w = max(g[(s, "200ms", n)] for n in many)
            v.append(Verdict(f"{s}(200ms) collapses with many senders (Fig. 8a): below 300 "
                             "Mbps at every count from 64", w < 300,
                             f"highest {w:.0f} Mbps over {many} senders"))
        top = max(senders)
        share = t[(t.scheme == "CP") & (t.senders == top) & (t.rto_min == "10ms")]
        v.append(Verdict(f"CP's cut packets cost a few percent of the link at {top} senders "
                         "(paper: 4.32%, ~43 cut packets per sender, at 250)",
                         bool((share.cut_share < 0.10).all()),
                         f"{share.cut_share.iloc[0]:.2%} of the link, "
                         f"{share.cut_per_sender_round.iloc[0]:.0f} cut packets per sender "
                         "and round"))
        return t.drop(columns="curve"), imgs, v

    return Figure(
        id="cp_fig8a_goodput",
        title="CP Fig. 1 / 8(a): incast goodput vs senders, TCP, CP, DCTCP and DCTCP+CP",
        source="CP §1 (Fig. 1), §6.1 (Fig. 8a), footnote 7",
        setup="each sender sends 64 KB per round to host 0; a round starts when the previous "
              "one has fully arrived; goodput = bytes of all rounds × 8 / summed round times; "
              f"{rounds} rounds per point; `cut_share` = cut packets' wire bits / (1 Gbps × "
              "the rounds' time).",
        sweep={"base_text": BASE, "seeds": 1, "schemes": SCHEMES,
               "set": {"workload.rounds": rounds},
               "grid": {"transport.rto_min": ["10ms", "200ms"], "workload.senders": senders}},
        analyze=analyze,
        paper=["Fig. 1: 'DCTCP avoids the throughput cliff where PTC=14 and postpones it from "
               "PTC=42 to PTC=50' (TCP with RTOmin 10 ms: cliffs at 14 and 42 senders).",
               "§6.1 (Fig. 8a, to 250 senders): 'both DCTCP and TCP with 10-ms-RTOmin "
               "maintain a throughput of about 600 Mbps'; CP and DCTCP with CP 'achieve a "
               "high throughput and avoid throughput cliff'.",
               "Footnote 7: at 250 senders the CP receiver gets about 43 payload-cut packets "
               "per sender, 4.32% of the 1 Gbps link."],
        metrics=[incast_goodput])


def _query(quick: bool) -> Figure:
    senders = [4, 16, 32, 64, 100] if quick else [
        1, 2, 4, 8, 12, 16, 20, 24, 28, 32, 40, 48, 56, 64, 72, 80, 90, 100]
    rounds = 3 if quick else 10

    def analyze(res: Results, out: Path) -> tuple[pd.DataFrame, list[Path], list[Verdict]]:
        r = _rounds(res, "senders")
        r["mean_qct_ms"] = r["mean_qct_ps"] / 1e9
        r["cut_per_query"] = r["cut"] / r["rounds"]
        r["cut_share"] = r["cut"] * CUT_WIRE * 8 / (1e9 * r["time_ps"] / 1e12)
        t = r[["scheme", "rto_min", "senders", "mean_qct_ms", "timeouts", "cut_per_query",
               "cut_share"]].copy()
        t["curve"] = t["scheme"] + " (" + t["rto_min"] + ")"
        imgs = plots.lines(t, "senders", "mean_qct_ms", "curve", out / "cp_fig8b_qct",
                           title="1 MB query over n senders (CP Fig. 8b)", logy=True,
                           ylabel="query completion time (ms)",
                           refs=[("CP ≈ 9 ms", 9, "C1"), ("TCP(10ms) → 16.1 ms", 16.1, "C0"),
                                 ("TCP(200ms) → 201.6 ms", 201.6, "C3")])
        q = t.set_index(["scheme", "rto_min", "senders"])["mean_qct_ms"]
        few = [n for n in senders if n <= 50]
        big = [n for n in senders if n >= 64]
        v = []
        for s in CP_SCHEMES:
            m = max(q[(s, rto, n)] for rto in ("10ms", "200ms") for n in few)
            v.append(Verdict(f"{s}: about 9 ms below 50 senders (§6.1)", 7 <= m <= 12,
                             f"at most {m:.2f} ms over {few} senders"))
        for rto, paper in (("10ms", 16.1), ("200ms", 201.6)):
            m = sum(q[("TCP", rto, n)] for n in big) / len(big)
            v.append(Verdict(f"TCP({rto}) converges near {paper} ms with many senders",
                             0.5 * paper <= m <= 1.5 * paper,
                             f"mean {m:.1f} ms over {big} senders (±50% band)"))
        top = t[(t.scheme == "CP") & (t.senders == max(senders)) & (t.rto_min == "10ms")]
        v.append(Verdict(f"CP spends a few percent of the link on cut packets at "
                         f"{max(senders)} senders (paper: 3.49%, 554 per query, at 100)",
                         bool((top.cut_share < 0.10).all()),
                         f"{top.cut_share.iloc[0]:.2%}, {top.cut_per_query.iloc[0]:.0f} cut "
                         "packets per query"))
        d = [q[("CP", "10ms", n)] - q[("DCTCP+CP", "10ms", n)] for n in senders]
        v.append(Verdict("DCTCP with CP is a little faster than CP (paper: by 91.3 µs)",
                         sum(d) / len(d) > 0,
                         f"mean difference {1000 * sum(d) / len(d):+.0f} µs over all n"))
        return t.drop(columns="curve"), imgs, v

    return Figure(
        id="cp_fig8b_query",
        title="CP Fig. 8(b): web-search query completion time vs senders",
        source="CP §6.1 (Fig. 8b), footnotes 3 and 8",
        setup="each of n senders sends 1024/n KB to host 0 per query; "
              f"{rounds} queries per point, back to back; mean query completion time.",
        sweep={"base_text": BASE, "seeds": 1, "schemes": SCHEMES,
               "set": {"workload.rounds": rounds},
               "grid": {"transport.rto_min": ["10ms", "200ms"]},
               "zip": {"workload.senders": senders,
                       "workload.size": [(1 << 20) // n for n in senders]}},
        analyze=analyze,
        paper=["§6.1: CP and DCTCP with CP complete the query in about 9 ms below 50 senders, "
               "0.4 ms more from 1 to 100; TCP and DCTCP converge at 16.1 ms (RTOmin 10 ms) "
               "and 201.6 ms (200 ms); CP eliminates timeouts and spends 3.49% of the link "
               "on 554 cut packets per query at 100 senders; DCTCP with CP is 91.3 µs "
               "faster than CP."],
        metrics=[incast_goodput])



def figures(quick: bool) -> list[Figure]:
    return [_goodput(quick), _query(quick)]
