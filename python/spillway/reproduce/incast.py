"""TCP incast, as the CP paper (§2.1, §6.1) and DeTail (§6.3) measure it.

Model of the CP testbed (§6.1): 1 Gbps links, a 128 KB buffer at the bottleneck port
toward the receiver, ~100 µs RTT without queueing (4 × 25 µs propagation), TCP SACK with
delayed ACK off, initial window 3 segments (the testbed's Linux 2.6.38; RFC 3390), RTOmin
10 ms or 200 ms. As in the testbed, nine sender hosts emulate all senders (several per
host), and senders start within 10 µs of each other. The switch is a single output-queued
switch (a star): the CP testbed's ToR/aggregation tiers are not modeled.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from spillway import plots
from spillway.analysis import percentile, qct_percentiles
from spillway.reproduce import Figure, Verdict
from spillway.reproduce.cp.incast import goodput
from spillway.reproduce.cp.testbed import STAR
from spillway.store import Results

TITLE = "TCP incast (CP §2.1/§6.1, DeTail §6.3)"

# DeTail §6.3: n servers on one switch, each receives 1 MB in total from all the others,
# 1 GbE and 128 KB buffers (DeTail §6.1/§7); 25 iterations.
DETAIL_BASE = """
[topology]
kind = "star"
link_rate = "1Gbps"
link_delay = "1us"
[switch]
buffer = "128KB"
[transport]
init_cwnd = 3
[workload]
kind = "incast"
pattern = "all_to_all"
size = "1MB"
jitter = "10us"
"""


def _cp_websearch(quick: bool) -> Figure:
    senders = [4, 8, 16, 32, 64, 100] if quick else [
        1, 2, 4, 8, 12, 16, 20, 24, 28, 32, 40, 48, 56, 64, 72, 80, 90, 100]
    sizes = [(1 << 20) // n for n in senders]

    def analyze(res: Results, out: Path) -> tuple[pd.DataFrame, list[Path], list[Verdict]]:
        q = res.sql("SELECT senders, rto_min, qct_ps FROM queries")
        t = qct_percentiles(q, by=["rto_min", "senders"], qs=(50, 99))
        t["mean_qct_ms"] = q.groupby(["rto_min", "senders"])["qct_ps"].mean().values / 1e9
        t["p99_qct_ms"] = t["p99"] / 1e9
        t = t[["rto_min", "senders", "mean_qct_ms", "p99_qct_ms", "queries"]]
        imgs = plots.lines(t, "senders", "mean_qct_ms", "rto_min", out / "cp_fig8b_qct",
                           title="Web-search query: 1 MB over n senders (CP Fig. 8b, TCP)",
                           ylabel="mean query completion time (ms)", logy=True,
                           refs=[("CP: TCP(10ms) converges to 16.1 ms", 16.1, "C0"),
                                 ("CP: TCP(200ms) converges to 201.6 ms", 201.6, "C1")])
        v = []
        big = [n for n in senders if n >= 50] or [max(senders)]
        for rto, paper in (("10ms", 16.1), ("200ms", 201.6)):
            m = t[(t.rto_min == rto) & t.senders.isin(big)]["mean_qct_ms"].mean()
            v.append(Verdict(f"TCP({rto}) QCT converges near {paper} ms for many senders",
                             0.5 * paper <= m <= 1.5 * paper,
                             f"mean {m:.1f} ms over {big} senders (±50% band)"))
        few = t[(t.rto_min == "10ms") & (t.senders <= 8)]["mean_qct_ms"].mean()
        v.append(Verdict("with few senders the query takes close to its transfer time (~9 ms)",
                         few < 12, f"{few:.1f} ms mean at ≤8 senders, RTOmin 10 ms"))
        return t, imgs, v

    return Figure(
        id="cp_fig8b_qct",
        title="CP Fig. 8(b): web-search query completion time vs senders (TCP)",
        source="CP §6.1 (Fig. 8b), footnotes 3 and 8",
        setup="each of n senders sends 1024/n KB to the receiver per query; "
              f"{'3' if quick else '20'} queries per point, back to back.",
        sweep={"base_text": STAR, "seeds": 1 if quick else 3,
               "set": {"workload.rounds": 3 if quick else 20},
               "grid": {"transport.rto_min": ["10ms", "200ms"]},
               "zip": {"workload.senders": senders, "workload.size": sizes}},
        analyze=analyze,
        paper=["§6.1: TCP and DCTCP query completion times 'converge at 16.1 ms and 201.6 ms' "
               "for RTOmin 10 ms and 200 ms; CP stays near 9 ms below 50 senders.",
               "Footnote 3: with TCP(10ms) the delay is twice the expected value beyond 26 "
               "senders. Footnote 8: TCP suffers incast from 23 senders."],
        metrics=[qct_percentiles])


def _detail_rto(quick: bool) -> Figure:
    servers = [8, 16] if quick else [4, 8, 16, 24, 32]
    rtos = ["1ms", "5ms", "10ms", "50ms"] if quick else [
        "1ms", "2ms", "5ms", "10ms", "20ms", "50ms", "100ms", "200ms"]

    def analyze(res: Results, out: Path) -> tuple[pd.DataFrame, list[Path], list[Verdict]]:
        q = res.sql("SELECT hosts, rto_min, qct_ps FROM queries")
        rows = []
        for (h, r), g in q.groupby(["hosts", "rto_min"]):
            rows.append({"servers": h, "rto_min": r,
                         "rto_ms": float(r.removesuffix("ms")),
                         "p99_ms": percentile(g["qct_ps"], 99) / 1e9, "incasts": len(g)})
        t = pd.DataFrame(rows).sort_values(["servers", "rto_ms"])
        imgs = plots.lines(t, "rto_ms", "p99_ms", "servers", out / "detail_fig3_rto",
                           title="All-to-all incast: 99th pct completion vs RTO (DeTail Fig. 3)",
                           xlabel="RTOmin (ms)", ylabel="99th percentile completion (ms)",
                           logx=True, logy=True)
        best = {h: g.loc[g.p99_ms.idxmin(), "rto_ms"] for h, g in t.groupby("servers")}
        v = [Verdict("completion is best with timeouts of 10 ms or more",
                     all(b >= 10 for b in best.values()),
                     "best RTOmin per server count: "
                     + ", ".join(f"{h} servers → {b:g} ms" for h, b in best.items()))]
        return t, imgs, v

    return Figure(
        id="detail_fig3_rto",
        title="DeTail Fig. 3: all-to-all incast, 99th percentile completion time vs RTO",
        source="DeTail §6.3 (Fig. 3)",
        setup="n servers on one 1 GbE switch with 128 KB buffers; in every iteration each "
              "server receives 1 MB in total from all the others at once; "
              f"{'5' if quick else '25'} iterations; completion time per receiver.",
        sweep={"base_text": DETAIL_BASE, "seeds": 1,
               "set": {"workload.rounds": 5 if quick else 25},
               "grid": {"topology.hosts": servers, "transport.rto_min": rtos}},
        analyze=analyze,
        paper=["§6.3: 'RTOs less than 10 ms cause spurious retransmissions'; 'timeouts 10 ms "
               "and larger are optimal for avoiding spurious retransmissions'. DeTail then "
               "uses 50 ms for multi-hop topologies."],
        notes="DeTail ran this with its lossless fabric (PFC), where the only timeouts are "
              "spurious, so a larger RTO can only help. This run uses the plain drop-tail "
              "switch of the simulation core: packets are dropped, and then a smaller RTO "
              "recovers sooner, so the paper's direction is not expected to hold here. It "
              "is rerun with PFC when DeTail's switch lands.",
        metrics=[percentile])


def figures(quick: bool) -> list[Figure]:
    # CP Fig. 1/8(a) is reproduced once, with the CP report's figures, on this report's model.
    return [goodput(quick, model="star"), _cp_websearch(quick), _detail_rto(quick)]
