"""CP Figs. 1 and 8: TCP incast on the testbed, goodput (Fig. 1/8a) and web-search query
completion time (Fig. 8b), TCP, CP, DCTCP and DCTCP+CP (CP §1, §2.1, §6.1). Fig. 1/8(a) is
reproduced here once, for the CP report and the incast report (`goodput`)."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import pandas as pd

from spillway import plots
from spillway.analysis import incast_goodput
from spillway.reproduce import Figure, Verdict
from spillway.reproduce.cp.testbed import BASE, CP_SCHEMES, CUT_WIRE, SCHEMES, STAR
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


@dataclass(frozen=True)
class _GoodputModel:
    """What Fig. 1/8(a) runs on one model of the testbed, and what its report says: axes
    as (quick, full)."""

    id: str
    base: str
    schemes: dict[str, dict[str, Any]] | None
    senders: tuple[list[int], list[int]]
    rounds: tuple[int, int]
    seeds: tuple[int, int]
    title: str
    source: str
    setup: str  # with {rounds}
    plot: dict[str, Any]
    paper: list[str]


_FIG1 = "'DCTCP avoids the throughput cliff where PTC=14 and postpones it from PTC=42 to PTC=50'"
_FIG8A = ("§6.1 (Fig. 8a, to 250 senders): 'both DCTCP and TCP with 10-ms-RTOmin maintain a "
          "throughput of about 600 Mbps'")
_GOODPUT_IS = "goodput = bytes of all rounds × 8 / summed round times"
_GOODPUT_MODELS = {
    "testbed": _GoodputModel(
        id="cp_fig8a_goodput", base=BASE, schemes=SCHEMES,
        senders=([4, 16, 32, 64, 100, 150],
                 [1, 2, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 56, 64, 80, 100, 128, 160,
                  200, 250]),
        rounds=(3, 10), seeds=(1, 1),
        title="CP Fig. 1 / 8(a): incast goodput vs senders, TCP, CP, DCTCP and DCTCP+CP",
        source="CP §1 (Fig. 1), §6.1 (Fig. 8a), footnote 7",
        setup="each sender sends 64 KB per round to host 0; a round starts when the previous "
              f"one has fully arrived; {_GOODPUT_IS}; {{rounds}} rounds per point; "
              "`cut_share` = cut packets' wire bits / (1 Gbps × the rounds' time).",
        plot={"title": "Incast goodput, 64 KB per sender (CP Fig. 1 / 8a)",
              "refs": [("CP §6.1: TCP/DCTCP(10ms) ≈ 600 Mbps", 600, "gray")]},
        paper=[f"Fig. 1: {_FIG1} (TCP with RTOmin 10 ms: cliffs at 14 and 42 senders).",
               f"{_FIG8A}; CP and DCTCP with CP 'achieve a high throughput and avoid "
               "throughput cliff'.",
               "Footnote 7: at 250 senders the CP receiver gets about 43 payload-cut packets "
               "per sender, 4.32% of the 1 Gbps link."]),
    "star": _GoodputModel(
        id="cp_fig1_goodput", base=STAR, schemes=None,
        senders=([4, 8, 16, 32, 64, 128],
                 [1, 2, 4, 6, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 56, 64, 80, 100, 128,
                  160, 200, 250]),
        rounds=(3, 20), seeds=(1, 3),
        title="CP Fig. 1 / 8(a): incast goodput vs senders (TCP, RTOmin 10 ms and 200 ms)",
        source="CP §2.1 (Fig. 1), §6.1 (Fig. 8a), footnote 2",
        setup="each sender sends 64 KB per round to one receiver; a round starts when the "
              f"last byte of the previous one arrived; {_GOODPUT_IS}; {{rounds}} rounds per "
              "point.",
        plot={"title": "Incast goodput, 64 KB per sender (CP Fig. 1/8a, TCP)",
              "refs": [("CP §6.1: TCP(10ms) ≈ 600 Mbps at many senders", 600, "C0")],
              "vrefs": [("CP Fig. 1: TCP(10ms) cliffs at 14 and 42", 14), ("_nolegend_", 42)]},
        paper=[f"Fig. 1 (caption, §1): {_FIG1}: TCP with RTOmin 10 ms has cliffs at 14 and 42 "
               "senders; at a cliff throughput 'will sharply decline ... and then slowly "
               "climb' (§2.1).",
               f"{_FIG8A}; only CP avoids incast collapse.",
               "Footnote 2: with 14 senders each growing its window to 7 packets "
               "(1.5 KB × 14 × 6 = 126 KB) all senders see a drop at once."]),
}


def goodput(quick: bool, model: str = "testbed") -> Figure:
    """CP Fig. 1 / 8(a), incast goodput against the number of senders: the one reproduction
    of it, on either model of the testbed. ``testbed`` (the CP report): its racks
    (`TESTBED`), TCP, CP, DCTCP and DCTCP+CP. ``star`` (the incast report): one switch
    (`STAR`), TCP alone, more rounds and seeds, and Fig. 1's points of throughput cliff.
    Both run 64 KB per sender and round with RTOmin 10 and 200 ms and measure goodput as
    `incast_goodput` defines it."""
    if model not in _GOODPUT_MODELS:
        raise ValueError(f"CP Fig. 1/8(a): unknown model {model!r}; known: "
                         f"{', '.join(_GOODPUT_MODELS)}")
    m = _GOODPUT_MODELS[model]
    pick = 0 if quick else 1
    senders, rounds = m.senders[pick], m.rounds[pick]

    def analyze(res: Results, out: Path) -> tuple[pd.DataFrame, list[Path], list[Verdict]]:
        if m.schemes is None:
            t = _goodput_by_rto(res)
            curve, v = "rto_min", _tcp_cliffs(t, res, senders)
        else:
            t = _goodput_by_scheme(res)
            t["curve"] = t["scheme"] + " (" + t["rto_min"] + ")"
            curve, v = "curve", _schemes_against_cliffs(t, senders)
        imgs = plots.lines(t, "senders", "goodput_mbps", curve, out / m.id,
                           ylabel="goodput (Mbps)", **m.plot)
        return t.drop(columns="curve", errors="ignore"), imgs, v

    sweep: dict[str, Any] = {"base_text": m.base, "seeds": m.seeds[pick]}
    if m.schemes is not None:
        sweep["schemes"] = m.schemes
    sweep |= {"set": {"workload.rounds": rounds},
              "grid": {"transport.rto_min": ["10ms", "200ms"], "workload.senders": senders}}
    return Figure(id=m.id, title=m.title, source=m.source, setup=m.setup.format(rounds=rounds),
                  sweep=sweep, analyze=analyze, paper=m.paper, metrics=[incast_goodput])


def _goodput_by_rto(res: Results) -> pd.DataFrame:
    """TCP's goodput per RTOmin and sender count, over all seeds' rounds."""
    q = res.sql("SELECT senders, rto_min, seed, size_bytes, qct_ps FROM queries")
    t = incast_goodput(q, by=["rto_min", "senders"])
    t["goodput_mbps"] = t["goodput_bps"] / 1e6
    return t[["rto_min", "senders", "goodput_mbps", "rounds"]].sort_values(["rto_min", "senders"])


def _goodput_by_scheme(res: Results) -> pd.DataFrame:
    """Each point's goodput, timeouts and what CP's cut packets cost."""
    r = _rounds(res, "senders")
    r["goodput_mbps"] = r["bytes"] * 8 / (r["time_ps"] / 1e12) / 1e6
    # CP's cost: bandwidth of the cut packets over the rounds' time (CP footnote 7).
    r["cut_share"] = r["cut"] * CUT_WIRE * 8 / (1e9 * r["time_ps"] / 1e12)
    r["cut_per_sender_round"] = r["cut"] / (r["senders"] * r["rounds"])
    return r[["scheme", "rto_min", "senders", "goodput_mbps", "timeouts", "cut_share",
              "cut_per_sender_round"]].copy()


def _tcp_cliffs(t: pd.DataFrame, res: Results, senders: list[int]) -> list[Verdict]:
    """The star model's claims: TCP's collapse with RTOmin 200 ms, its 600 Mbps with
    10 ms, and Fig. 1's points of throughput cliff."""
    g = {r: t[t.rto_min == r].set_index("senders")["goodput_mbps"] for r in ("10ms", "200ms")}
    few = min(senders, key=lambda n: abs(n - 4))
    many = max(senders)
    v = []
    ratio = g["200ms"][many] / g["200ms"][few]
    v.append(Verdict("with RTOmin 200 ms goodput collapses as senders grow", ratio < 0.5,
                     f"{g['200ms'][many]:.0f} Mbps at {many} senders vs "
                     f"{g['200ms'][few]:.0f} at {few} ({ratio:.0%})"))
    large = g["10ms"][g["10ms"].index >= min(64, many)].mean()
    v.append(Verdict("TCP(10ms) keeps roughly 600 Mbps with many senders (§6.1)",
                     360 <= large <= 840,
                     f"mean {large:.0f} Mbps over ≥{min(64, many)} senders (±40% band)"))
    # Where TCP(200ms) timed out (read from the runs, not inferred from goodput: below
    # 4 senders a round is slow-start bound, the same for both RTOmin).
    to = res.sql("SELECT senders, sum(timeouts) AS timeouts FROM points "
                 "WHERE rto_min = '200ms' GROUP BY ALL ORDER BY senders")
    hurt = [int(n) for n in to[to.timeouts > 0].senders]
    worse = [n for n in hurt if not g["10ms"][n] > g["200ms"][n]]
    v.append(Verdict("a smaller RTOmin is better wherever incast causes timeouts",
                     bool(hurt) and not worse,
                     f"TCP(200ms) timed out at {len(hurt)} sender counts ({hurt}); "
                     + (f"TCP(10ms) not above it at {worse}" if worse else
                        "TCP(10ms) above it at all of them")))
    # §2.1: at a point of throughput cliff (PTC) goodput "will sharply decline ... and
    # then slowly climb"; Fig. 1 puts TCP(10ms)'s at 14 (footnote 2's window
    # arithmetic) and 42. A sharp decline: 20% or more below the previous sender count.
    pts = [n for n in g["10ms"].index if n >= few]
    falls = [b for a, b in pairwise(pts) if g["10ms"][b] < 0.8 * g["10ms"][a]]
    near = {ptc: [n for n in falls if lo <= n <= hi]
            for ptc, lo, hi in ((14, 10, 20), (42, 32, 52))}
    v.append(Verdict("TCP(10ms)'s goodput falls sharply near 14 and near 42 senders, the "
                     "points of throughput cliff of Fig. 1",
                     all(near.values()),
                     f"falls of 20% or more from the previous sender count at {falls}; "
                     "near 14 (10-20): " + (str(near[14]) if near[14] else "none")
                     + ", near 42 (32-52): " + (str(near[42]) if near[42] else "none")))
    return v


def _schemes_against_cliffs(t: pd.DataFrame, senders: list[int]) -> list[Verdict]:
    """The testbed model's claims: CP and DCTCP+CP avoid the cliff, TCP and DCTCP keep
    600 Mbps with RTOmin 10 ms and collapse with 200 ms, and what CP's cuts cost."""
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
    return v


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
    return [goodput(quick), _query(quick)]
