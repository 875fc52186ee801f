"""FastLane's simulation results (FastLane §2.2.1 and §5.1), on the paper's setup (§4.2, §5).

A 128-server fat-tree (k = 8) of 10 Gbps links, 1 µs each; 128 KB per port for TCP and
64 KB for pFabric; every server processes up to 16 received packets at once, 5 µs each
(§4.2.1). TCP is NewReno with SACK and CoDel ECN marking, RTO 1 ms, flow hashing (FL-FH)
or packet scatter with the out-of-order option and no duplicate-ACK recovery (FL-PS);
pFabric uses pFabric queues, packet scatter, 250 µs timeouts and the response's size as
priority (§4.2.2). FastLane caps notifications at 1% of each link and 3.2 KB of buffer.
Source Quench quenches the source whenever CoDel marks (§5).

The workload is §5's request/response mix: 10 B requests; a short query picks a response
size of 2–32 KB and a total of 32–160 KB and fans out total/size parallel responses; a
long request gets 1 MB from one random server. Load is the fraction of the servers' link
capacity; `short_fraction` of it is short. FCTs are those of the response flows, by size.
Percentiles are the 99.9th where a cell has at least 1000 flows, else the 99th (the table
says which).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from spillway import plots, schemes
from spillway.analysis import (
    NOTIFICATION_FRAME,
    notification_shares,
    tail_percentile,
    tail_reduction,
)
from spillway.reproduce import Figure, Verdict
from spillway.store import Results

TITLE = "FastLane: agile drop notification (FastLane §2.2.1, §5.1)"

BASE = """
[topology]
kind = "fat_tree"
k = 8
link_rate = "10Gbps"
link_delay = "1us"
[switch]
buffer = "128KB"
ecn = "codel"
[host]
proc_parallel = 16
proc_time = "5us"
[transport]
rto_min = "1ms"
[workload]
kind = "short_long"
"""

# The paper's parameters on top of the schemes (spillway.schemes). pFabric (§4.2.2): 64 KB
# ports, packet scatter, 250 µs timeouts (the base's 1 ms RTO is TCP's), the response's
# size as priority. FastLane: a 3.2 KB notification buffer on every port (§3.3.2), the
# 64 KB pFabric ports included.
PFABRIC = {"switch.buffer": "64KB", "switch.forwarding": "spray",
           "transport.rto_min": "250us", "transport.priority": "flow_size"}
FL = {"switch.fastlane_buffer": "3276B"}
SCHEMES: dict[str, dict[str, Any]] = {
    "TCP": schemes.scheme("TCP").overrides(),
    "TCP+SQ": schemes.scheme("TCP+SQ").overrides(),
    "FL-FH": schemes.scheme("FL-FH").overrides(FL),
    "FL-PS": schemes.scheme("FL-PS").overrides(FL),
    "pFabric": schemes.scheme("pFabric").overrides(PFABRIC),
    "pFabric+FL": schemes.scheme("pFabric+FL").overrides(PFABRIC | FL),
}
BASELINE = {"FL-FH": "TCP", "FL-PS": "TCP", "TCP+SQ": "TCP", "pFabric+FL": "pFabric"}
SIZES_KB = [2, 4, 8, 16, 32]


def _schemes(*names: str) -> dict[str, dict[str, Any]]:
    return {n: SCHEMES[n] for n in names}


def _duration(quick: bool) -> tuple[str, float]:
    return ("10ms", 0.010) if quick else ("40ms", 0.040)


def _tails(res: Results, axis: str) -> pd.DataFrame:
    """Tail FCT (ms) of short responses per (scheme, axis value, size). Within one
    (axis value, size) cell every scheme uses the same percentile: the 99.9th when the
    scheme with the fewest flows there has at least 1000."""
    f = res.sql(f"SELECT scheme, {axis} AS x, size_bytes, fct_ps FROM flows "
                "WHERE class = 'short' AND fct_ps IS NOT NULL")
    f["size_kb"] = f["size_bytes"] // 1024
    rows = []
    for (x, kb), cell in f.groupby(["x", "size_kb"]):
        fewest = cell.groupby("scheme").size().min()
        for scheme, g in cell.groupby("scheme"):
            v, name = tail_percentile(g["fct_ps"], 1000 if fewest >= 1000 else 10**12)
            rows.append({"scheme": scheme, axis: x, "size_kb": kb, "pct": name,
                         "fct_ms": v / 1e9, "flows": len(g)})
    return pd.DataFrame(rows)


def _reductions(tails: pd.DataFrame, axis: str) -> pd.DataFrame:
    """Each FastLane (or Source Quench) scheme's tail reduction against its baseline."""
    rows = []
    key = tails.set_index(["scheme", axis, "size_kb"])["fct_ms"]
    for (scheme, x, kb), v in key.items():
        base = BASELINE.get(scheme)
        if base and (base, x, kb) in key.index:
            rows.append({"scheme": scheme, axis: x, "size_kb": kb,
                         "reduction": tail_reduction(v, key[(base, x, kb)])})
    return pd.DataFrame(rows)


def _long_mean(res: Results, axis: str) -> pd.DataFrame:
    """Mean FCT (ms) of finished long (1 MB) responses, and how many did not finish."""
    return res.sql(f"""
        SELECT scheme, {axis} AS x,
               avg(fct_ps) FILTER (WHERE fct_ps IS NOT NULL) / 1e9 AS long_mean_ms,
               count(*) FILTER (WHERE fct_ps IS NULL) AS long_unfinished
        FROM flows WHERE class = 'long' GROUP BY ALL ORDER BY ALL""").rename(columns={"x": axis})


def _long_change(res: Results, axis: str) -> Callable[[str, Any, str, Any], tuple[float, int]]:
    """Change of the mean FCT of the long (1 MB) responses, run (a, xa) against run (b, xb),
    over the responses that finished in both, matched by query (one seed draws the same
    queries in every run). A fifth of the long responses are still running when a 40 ms
    run stops, and which ones depends on the scheme, so means over the finished ones alone
    compare different sets of flows."""
    lf = res.sql(f"""SELECT scheme, {axis} AS x, seed, query_id, fct_ps FROM flows
                     WHERE class = 'long' AND fct_ps IS NOT NULL""")
    by = {k: g.set_index(["seed", "query_id"])["fct_ps"]
          for k, g in lf.groupby(["scheme", "x"])}

    def change(a: str, xa: Any, b: str, xb: Any) -> tuple[float, int]:
        j = pd.concat([by[(a, xa)], by[(b, xb)]], axis=1, keys=["a", "b"], join="inner")
        return float(j["a"].mean() / j["b"].mean() - 1), len(j)
    return change


def _caps_verdict(res: Results, duration_s: float,
                  strict: bool = False) -> tuple[Verdict, dict[str, float]]:
    """FastLane §3.3: within the bandwidth cap on every link, within the notification
    buffer on every port. Each run against its own cap (`fastlane_bandwidth` where the
    figure varies it, else the default 1%); with `strict` (§5.1.3), counting the
    notifications sent on idle links too, which then must be none. A figure whose
    FastLane runs sent no notification at all fails: FastLane did nothing there."""
    ports = res.sql("SELECT * FROM ports")
    fl = ports[ports["scheme"].isin([n for n, c in SCHEMES.items()
                                     if c.get("switch.overflow") == "fastlane"])]
    gen = int(fl["notif_generated"].sum())
    if gen == 0:
        return Verdict("notifications stay within their caps", False,
                       "the FastLane runs sent no notification"), {}
    s = notification_shares(fl, duration_s)
    cap = s["fastlane_bandwidth"] if "fastlane_bandwidth" in s else 0.01
    # Plus one notification of slack per link and run.
    limit = cap + NOTIFICATION_FRAME * 8 / (s["rate_bps"] * duration_s)
    share = s["bandwidth_share"] if strict else s["capped_share"]
    worst = float((share / limit).max())
    idle = int(s["notif_sent_idle"].sum())
    bw, capped = float(s["bandwidth_share"].max()), float(s["capped_share"].max())
    peak = int(s["notif_max_bytes"].max())
    over = int((s["notif_max_bytes"] > s["notif_capacity_bytes"]).sum())
    dropped = int(fl["notif_dropped"].sum())
    ok = worst <= 1 and over == 0 and (idle == 0 or not strict)
    what = ("their cap, sent on idle links or not (strict)" if strict
            else "the 1% cap" if "fastlane_bandwidth" not in s else "their cap")
    return (Verdict(f"notifications stay within {what} on every link and within their "
                    "buffer on every port (§3.3; every run of this figure)", ok,
                    f"max {capped:.3%} of a link within the cap ({bw:.3%} counting "
                    f"notifications sent on idle links; {idle:,} sends on idle links in all); "
                    "the fullest link "
                    f"at {worst:.0%} of its run's limit; peak notification buffer {peak} B "
                    f"(= {peak / 131072:.2%} of 128 KB, {s['buffer_share'].max():.2%} of the "
                    f"smallest port buffer here), {over} ports over their notification "
                    f"buffer; {gen:,} notifications, {dropped:,} dropped at a full "
                    "notification buffer"),
            {"max_link_share": capped, "max_buffer_bytes": peak})


def _pivot(t: pd.DataFrame, axis: str, value: str) -> pd.DataFrame:
    p = t.pivot_table(index=["scheme", axis], columns="size_kb", values=value).reset_index()
    p.columns = [c if isinstance(c, str) else f"{c}KB" for c in p.columns]
    return p


def _normalize(t: pd.DataFrame, at_base: pd.Series) -> None:
    """Adds `normalized`: each tail divided by the same scheme's and size's tail at the
    reference point (the rows where ``at_base`` holds)."""
    base = t[at_base].set_index(["scheme", "size_kb"])["fct_ms"]
    t["normalized"] = [r.fct_ms / base[(r.scheme, r.size_kb)] for r in t.itertuples()]


def _util_sweep(quick: bool) -> dict[str, Any]:
    d, _ = _duration(quick)
    return {"base_text": BASE, "seeds": 1, "schemes": SCHEMES,
            "set": {"run.duration": d, "workload.short_fraction": 0.1},
            "grid": {"workload.load": [0.2, 0.4, 0.8] if quick else [0.2, 0.4, 0.6, 0.8]}}


def _fig2(quick: bool) -> Figure:
    _, secs = _duration(quick)

    def analyze(res: Results, out: Path) -> tuple[pd.DataFrame, list[Path], list[Verdict]]:
        t = _tails(res, "load")
        t = t[t.scheme.isin(["TCP", "TCP+SQ", "FL-FH"])]
        table = _pivot(t, "load", "fct_ms")
        mid = 0.4
        imgs = plots.grouped_bars(t[t.load == mid], "size_kb", "scheme", "fct_ms",
                                  out / "fl_fig2_sq",
                                  title=f"Short-flow tail FCT at {mid:.0%} load (FastLane Fig. 2)",
                                  xlabel="response size (KB)", ylabel="tail FCT (ms)")
        r = _reductions(t, "load")
        sq = r[(r.scheme == "TCP+SQ") & (r.size_kb == 2)]
        fl = r[(r.scheme == "FL-FH") & (r.size_kb == 2)]
        v = [Verdict("Source Quench is not significantly better than TCP (2 KB tail, the "
                     "size with the most flows: no more than 10% better at any load; §2.2.1)",
                     bool((sq.reduction <= 0.10).all()),
                     "SQ vs TCP 2 KB reduction by load: " + ", ".join(
                         f"{x:.0%}: {y:+.0%}" for x, y in zip(sq.load, sq.reduction,
                                                              strict=True))),
             Verdict("drop notification cuts the 2 KB tail by roughly 75% (Fig. 2: 'could "
                     "reduce high-percentile completion times by 75%')",
                     bool((fl.reduction >= 0.5).all()),
                     "FL-FH 2 KB reduction by load: " + ", ".join(
                         f"{x:.0%}: {y:.0%}" for x, y in zip(fl.load, fl.reduction,
                                                              strict=True)))]
        v.append(_caps_verdict(res, secs)[0])
        return table, imgs, v

    return Figure(
        id="fl_fig2_sq", data="utilization",
        title="FastLane Fig. 2: Source Quench vs TCP vs drop notification",
        source="FastLane §2.2.1 (Fig. 2)",
        setup="§5 workload, 10% short; tail FCT (ms) of short responses by size; schemes "
              "TCP (CoDel marking), TCP + Source Quench (quench on every CoDel mark, data "
              "priority, no caps), TCP + FastLane (flow hashing).",
        sweep=_util_sweep(quick), analyze=analyze,
        paper=["§2.2.1: 'Source Quench does not perform significantly better than TCP'; an "
               "idealized drop notification 'could reduce high-percentile completion times "
               "by 75%'. Linux answered quenches like ECN and waited for 3 duplicate ACKs or "
               "a timeout to retransmit."],
        metrics=[tail_percentile, tail_reduction, notification_shares],
        notes="Cells with fewer than 1000 flows use the 99th percentile. About 1% of TCP's "
              "short flows time out, so a 99th percentile sits on the edge of the timeout "
              "cliff and single small cells swing widely between TCP and TCP+SQ from run to "
              "run; the verdict reads the 2 KB cells, which have the most flows.")


def _fig6(quick: bool) -> Figure:
    _, secs = _duration(quick)

    def analyze(res: Results, out: Path) -> tuple[pd.DataFrame, list[Path], list[Verdict]]:
        t = _tails(res, "load")
        r = _reductions(t, "load")
        imgs = []
        for s in ("FL-FH", "FL-PS"):
            imgs += plots.grouped_bars(r[r.scheme == s], "load", "size_kb", "reduction",
                                       out / f"fl_fig6_{s.lower()}", percent=True,
                                       title=f"TCP + FastLane ({s}): tail FCT reduction "
                                             "(Fig. 6)", ylabel="reduction vs TCP")
        tcp = t[(t.scheme == "TCP") & (t.size_kb == 2)].set_index("load")["fct_ms"]
        ps = t[(t.scheme == "FL-PS") & (t.size_kb == 2)].set_index("load")["fct_ms"]
        red = r[(r.scheme == "FL-PS") & (r.size_kb == 2)].set_index("load")["reduction"]
        lo, hi = min(red.index), max(red.index)
        both = r[r.scheme.isin(["FL-FH", "FL-PS"])]
        w = both.loc[both.reduction.idxmin()]
        n = t.set_index(["scheme", "load", "size_kb"])
        v = [Verdict("FastLane cuts TCP's tail at every load and size, with hashing or scatter",
                     bool((both.reduction > 0).all()),
                     f"smallest reduction {w.reduction:.0%} ({w.scheme}, {w.load:.0%} load, "
                     f"{w.size_kb} KB: the {n.loc[(w.scheme, w.load, w.size_kb), 'pct']} of "
                     f"{n.loc[(w.scheme, w.load, w.size_kb), 'flows']} flows); "
                     f"{int((both.reduction > 0).sum())} of {len(both)} cells cut"),
             Verdict(f"2 KB at {lo:.0%} load: TCP ≈ 1.2 ms, FL-PS ≈ 0.3 ms (−75%; bands: TCP "
                     "0.6–2.4 ms, reduction 50–90%)",
                     0.5 <= red[lo] <= 0.9 and 0.6 <= tcp[lo] <= 2.4,
                     f"TCP {tcp[lo]:.2f} ms → FL-PS {ps[lo]:.2f} ms ({red[lo]:.0%})"),
             Verdict(f"2 KB at {hi:.0%} load: TCP ≈ 1.6 ms → FL-PS ≈ 0.9 ms (−44%; band: "
                     "reduction 20–80%)",
                     0.2 <= red[hi] <= 0.8,
                     f"TCP {tcp[hi]:.2f} ms → FL-PS {ps[hi]:.2f} ms ({red[hi]:.0%})"),
             Verdict("the reduction shrinks as utilization grows",
                     red[hi] < red[lo], f"{red[lo]:.0%} at {lo:.0%} vs {red[hi]:.0%} at {hi:.0%}")]
        v.append(_caps_verdict(res, secs)[0])
        return _pivot(r, "load", "reduction"), imgs, v

    return Figure(
        id="fl_fig6_tcp", data="utilization",
        title="FastLane Fig. 6: TCP's tail FCT reduction vs utilization (10% short)",
        source="FastLane §5.1.1 (Fig. 6)",
        setup="§5 workload, 10% of the load short; reduction = 1 − tail(FastLane) / tail(TCP) "
              "for each response size.",
        sweep=_util_sweep(quick), analyze=analyze,
        paper=["§5.1.1: 'At 20% utilization, 2KB flow completion times reduce from 1.2ms to "
               "0.3ms, a 75% reduction, when using FastLane with packet scatter'; 'at 80% "
               "utilization, FL-PS helps a 2KB flow complete in 0.9ms as opposed to 1.6ms, a "
               "reduction of 44%'. Flow hashing often improves short flows more than scatter."],
        metrics=[tail_percentile, tail_reduction])


def _fig7(quick: bool) -> Figure:
    _, secs = _duration(quick)

    def analyze(res: Results, out: Path) -> tuple[pd.DataFrame, list[Path], list[Verdict]]:
        t = _tails(res, "load")
        r = _reductions(t, "load")
        r = r[r.scheme == "pFabric+FL"]
        imgs = plots.grouped_bars(r, "load", "size_kb", "reduction", out / "fl_fig7_pfabric",
                                  percent=True, ylabel="reduction vs pFabric",
                                  title="pFabric + FastLane: tail FCT reduction (Fig. 7)")
        pf = t[(t.scheme == "pFabric") & (t.size_kb == 2)].set_index("load")["fct_ms"]
        fl = t[(t.scheme == "pFabric+FL") & (t.size_kb == 2)].set_index("load")["fct_ms"]
        red = r[r.size_kb == 2].set_index("load")["reduction"]
        v = [Verdict("2 KB at 40% load: FastLane halves pFabric's tail (paper: 0.6 → 0.3 ms, "
                     "−50%; band: reduction 25–75%)",
                     0.25 <= red[0.4] <= 0.75,
                     f"pFabric {pf[0.4]:.2f} ms → {fl[0.4]:.2f} ms ({red[0.4]:.0%})"),
             Verdict("FastLane helps pFabric's short-flow tail at every load (2–8 KB)",
                     bool((r[r.size_kb <= 8].reduction > 0).all()),
                     f"smallest 2–8 KB reduction {r[r.size_kb <= 8].reduction.min():.0%}")]
        v.append(_caps_verdict(res, secs)[0])
        return _pivot(r, "load", "reduction"), imgs, v

    return Figure(
        id="fl_fig7_pfabric", data="utilization",
        title="FastLane Fig. 7: pFabric's tail FCT reduction vs utilization (10% short)",
        source="FastLane §5.1.1 (Fig. 7)",
        setup="as Fig. 6, pFabric (64 KB ports, 250 µs RTO, packet scatter) with and "
              "without FastLane.",
        sweep=_util_sweep(quick), analyze=analyze,
        paper=["§5.1.1: 'At 40% utilization, FastLane reduces completion times from 0.6ms to "
               "0.3ms, a 50% reduction.' §5.3: up to 50% over pFabric."],
        metrics=[tail_percentile, tail_reduction])


def _long(quick: bool) -> Figure:
    def analyze(res: Results, out: Path) -> tuple[pd.DataFrame, list[Path], list[Verdict]]:
        m = _long_mean(res, "load")
        key = m.set_index(["scheme", "load"])
        paired = _long_change(res, "load")
        rows = []
        for (s, x), r in key.iterrows():
            base = BASELINE.get(s)
            if base and s != "TCP+SQ":
                change, n = paired(s, x, base, x)
                rows.append({"scheme": s, "load": x, "long_mean_ms": r["long_mean_ms"],
                             "baseline_ms": key.loc[(base, x), "long_mean_ms"],
                             "unfinished": r["long_unfinished"],
                             "baseline_unfinished": key.loc[(base, x), "long_unfinished"],
                             "change": change, "pairs": n})
        t = pd.DataFrame(rows)
        imgs = plots.lines(m, "load", "long_mean_ms", "scheme", out / "fl_long_flows",
                           title="Mean FCT of 1 MB responses (FastLane §5.1.1)",
                           ylabel="mean long-flow FCT (ms)")
        ch = t.set_index(["scheme", "load"])["change"]
        v = [Verdict("FL-PS shortens long flows by 5% or more at every load (paper: up to "
                     "−24%)", bool((ch["FL-PS"] <= -0.05).all()),
                     "FL-PS vs TCP: " + ", ".join(f"{x:.0%}: {c:+.0%}"
                                                  for x, c in ch["FL-PS"].items())),
             Verdict("FL-FH keeps long flows within a few percent of TCP (±10%)",
                     bool((ch["FL-FH"].abs() <= 0.10).all()),
                     "FL-FH vs TCP: " + ", ".join(f"{x:.0%}: {c:+.0%}"
                                                  for x, c in ch["FL-FH"].items())),
             Verdict("pFabric+FL within 10% of pFabric for long flows (paper: within 5%)",
                     bool((ch["pFabric+FL"].abs() <= 0.10).all()),
                     "pFabric+FL vs pFabric: " + ", ".join(
                         f"{x:.0%}: {c:+.0%}" for x, c in ch["pFabric+FL"].items()))]
        return t, imgs, v

    return Figure(
        id="fl_long_flows", data="utilization",
        title="FastLane §5.1.1: average long-flow completion time",
        source="FastLane §5.1.1",
        setup="mean FCT of the finished 1 MB responses in the runs of Fig. 6/7 (plotted; "
              "`unfinished`: those still running when the run stopped); `change` is against "
              "the unaided baseline at the same load, over the `pairs` of responses (the same "
              "query) that finished in both runs, so that which flows a run cut off does "
              "not bias it.",
        sweep=_util_sweep(quick), analyze=analyze,
        paper=["§5.1.1: 'With packet scatter, average long flow completion times reduce up to "
               "24%, whereas with flow hashing they remain within a few percent of unaided "
               "TCP.' pFabric with and without FastLane 'stay within 5% of each other'."])


def _fraction(quick: bool) -> Figure:
    d, secs = _duration(quick)
    fracs = [0.1, 0.5] if quick else [0.1, 0.2, 0.3, 0.4, 0.5]

    def analyze(res: Results, out: Path) -> tuple[pd.DataFrame, list[Path], list[Verdict]]:
        t = _tails(res, "short_fraction")
        r = _reductions(t, "short_fraction")
        imgs = []
        for s, fig in (("FL-PS", "8"), ("pFabric+FL", "9")):
            imgs += plots.grouped_bars(r[r.scheme == s], "short_fraction", "size_kb",
                                       "reduction", out / f"fl_fig{fig}_{s.lower()}",
                                       percent=True, xlabel="share of load that is short",
                                       title=f"{s}: tail FCT reduction at 60% load (Fig. {fig})",
                                       ylabel=f"reduction vs {BASELINE[s]}")
        top = max(fracs)
        ps = r[(r.scheme == "FL-PS") & (r.short_fraction == top) & (r.size_kb <= 4)]
        pf = r[(r.scheme == "pFabric+FL") & (r.short_fraction == top)]
        infl, _ = _long_change(res, "short_fraction")("pFabric+FL", top, "pFabric", top)
        v = [Verdict(f"at {top:.0%} short, FL-PS cuts the 2 and 4 KB tails by over 55%",
                     bool((ps.reduction > 0.55).all()),
                     ", ".join(f"{k} KB: {x:.0%}" for k, x in zip(ps.size_kb, ps.reduction,
                                                                  strict=True))),
             Verdict(f"at {top:.0%} short, FastLane still shortens pFabric's tail for at least "
                     "3 of the 5 sizes",
                     bool((pf.reduction > 0).mean() >= 0.6),
                     f"{(pf.reduction > 0).mean():.0%} of sizes improved at {top:.0%} short; "
                     f"best {pf.reduction.max():.0%} (paper: up to 44%)"),
             Verdict(f"pFabric+FL's long flows stay within 25% of pFabric's at {top:.0%} short "
                     "(paper: +10%)", abs(infl) <= 0.25, f"{infl:+.0%}"),
             _caps_verdict(res, secs)[0]]
        return _pivot(r, "short_fraction", "reduction"), imgs, v

    return Figure(
        id="fl_fig8_9_fraction",
        title="FastLane Figs. 8–9: tail FCT reduction vs share of short flows (60% load)",
        source="FastLane §5.1.2 (Figs. 8, 9)",
        setup="total load 60%; the short share of it varies; TCP vs FL-FH/FL-PS and pFabric "
              "vs pFabric+FL.",
        sweep={"base_text": BASE, "seeds": 1,
               "schemes": _schemes("TCP", "FL-FH", "FL-PS", "pFabric", "pFabric+FL"),
               "set": {"run.duration": d, "workload.load": 0.6},
               "grid": {"workload.short_fraction": fracs}},
        analyze=analyze,
        paper=["§5.1.2: 'Even when 50% of the load is due to short flows, FastLane provides "
               "significant benefit to TCP (e.g. FL-PS reduces the 99.9th percentile "
               "completion times of both 2 and 4KB flows by over 55%)'. For pFabric at 50% "
               "short, long flows inflate by 10% while short flows gain up to 44%."],
        metrics=[tail_percentile, tail_reduction])


SENSITIVITY = {"workload.load": 0.6, "workload.short_fraction": 0.5}


def _caps(quick: bool) -> Figure:
    d, secs = _duration(quick)
    scales = [0.25, 1.0] if quick else [0.25, 0.5, 1.0, 2.0]

    def analyze(res: Results, out: Path) -> tuple[pd.DataFrame, list[Path], list[Verdict]]:
        t = _tails(res, "fastlane_bandwidth")
        t["cap_scale"] = (t["fastlane_bandwidth"] / 0.01).round(3)
        _normalize(t, t.cap_scale == 1.0)
        imgs = []
        for s, fig in (("FL-FH", "10"), ("pFabric+FL", "11")):
            imgs += plots.grouped_bars(t[t.scheme == s], "cap_scale", "size_kb", "normalized",
                                       out / f"fl_fig{fig}_caps", xlabel="cap scaling",
                                       title=f"{s}: tail FCT vs cap scaling, strict (Fig. {fig})",
                                       ylabel="tail FCT / tail at scaling 1")
        lo = min(scales)
        worse = t[t.cap_scale == lo].groupby("scheme")["normalized"].mean()
        v = [Verdict(f"shrinking the caps to {lo}x lengthens the tail by 5% or more (the caps "
                     "matter)", bool((worse > 1.05).all()),
                     ", ".join(f"{s}: ×{x:.2f} on average over sizes" for s, x in worse.items()))]
        if 2.0 in scales:
            more = t[t.cap_scale == 2.0].groupby("scheme")["normalized"].mean()
            v.append(Verdict("doubling the caps gains little (the defaults suffice)",
                             bool((more >= 0.8).all()),
                             ", ".join(f"{s}: ×{x:.2f}" for s, x in more.items())))
        v.append(_caps_verdict(res, secs, strict=True)[0])
        return _pivot(t, "cap_scale", "normalized"), imgs, v

    return Figure(
        id="fl_fig10_11_caps",
        title="FastLane Figs. 10–11: sensitivity to the bandwidth and buffer caps (strict)",
        source="FastLane §5.1.3 (Figs. 10, 11)",
        setup="60% load, half of it short; bandwidth cap (1%) and notification buffer "
              "(3.2 KB) scaled together; notifications may not exceed the cap even on an "
              "idle link (`fastlane_strict`); tail FCT normalized to scaling 1.",
        sweep={"base_text": BASE, "seeds": 1, "schemes": _schemes("FL-FH", "pFabric+FL"),
               "set": {"run.duration": d, "switch.fastlane_strict": True} | SENSITIVITY,
               "zip": {"switch.fastlane_bandwidth": [0.01 * s for s in scales],
                       "switch.fastlane_buffer": [f"{round(3276 * s)}B" for s in scales]}},
        analyze=analyze,
        paper=["§5.1.3: 'Both do not see a performance hit until we scale the bandwidth and "
               "buffers to 0.5'; FastLane degrades more gradually with pFabric, whose fine "
               "timeouts soften drops."],
        metrics=[tail_percentile])


def _buffers(quick: bool, tcp: bool) -> Figure:
    d, secs = _duration(quick)
    if tcp:
        kbs = [32, 128] if quick else [32, 64, 96, 128]
        names, base_kb, fig = ("TCP", "FL-FH"), 128, "12"
    else:
        kbs = [16, 64] if quick else [16, 32, 48, 64]
        names, base_kb, fig = ("pFabric", "pFabric+FL"), 64, "13"

    def analyze(res: Results, out: Path) -> tuple[pd.DataFrame, list[Path], list[Verdict]]:
        t = _tails(res, "buffer")
        t["buffer_kb"] = t["buffer"].str.removesuffix("KB").astype(int)
        _normalize(t, t.buffer_kb == base_kb)
        imgs = []
        for s in names:
            imgs += plots.grouped_bars(t[t.scheme == s], "buffer_kb", "size_kb", "normalized",
                                       out / f"fl_fig{fig}_{s.lower()}",
                                       xlabel="buffer per port (KB)",
                                       title=f"{s}: tail FCT vs buffer (Fig. {fig})",
                                       ylabel=f"tail FCT / tail at {base_kb} KB")
        small = min(kbs)
        n = t[t.buffer_kb == small].groupby("scheme")["normalized"].mean()
        paired = _long_change(res, "buffer")
        growth = {s: paired(s, f"{small}KB", s, f"{base_kb}KB")[0] for s in names}
        abs_small = t[t.buffer_kb == small].set_index(["scheme", "size_kb"])["fct_ms"]
        v = []
        if tcp:
            v.append(Verdict(f"with FastLane TCP's tail does not degrade from {base_kb} to "
                             f"{small} KB (within 30%); without it, it does (by more than 30%; "
                             "paper: 'rapidly and severely')",
                             n["FL-FH"] <= 1.3 < n["TCP"],
                             f"mean normalized tail at {small} KB: FL-FH ×{n['FL-FH']:.2f}, "
                             f"TCP ×{n['TCP']:.2f}"))
            v.append(Verdict("FastLane's long flows slow down as buffers shrink (paper +38%, "
                             "3.9 → 5.4 ms)", growth["FL-FH"] > 0,
                             f"FL-FH {growth['FL-FH']:+.0%}, TCP {growth['TCP']:+.0%}"))
        else:
            better = bool((abs_small["pFabric+FL"] < abs_small["pFabric"]).loc[[2, 4, 8]].all())
            v.append(Verdict(f"pFabric+FL still beats pFabric for 2–8 KB at {small} KB",
                             better, ", ".join(
                                 f"{k} KB: {abs_small[('pFabric+FL', k)]:.2f} vs "
                                 f"{abs_small[('pFabric', k)]:.2f} ms" for k in (2, 4, 8))))
            v.append(Verdict("long flows slow down with small buffers, less so with FastLane "
                             "(paper: +72% with, +88% without, 64 → 16 KB)",
                             0 < growth["pFabric+FL"] < growth["pFabric"],
                             f"pFabric+FL {growth['pFabric+FL']:+.0%}, "
                             f"pFabric {growth['pFabric']:+.0%}"))
        v.append(_caps_verdict(res, secs)[0])
        return _pivot(t, "buffer_kb", "normalized"), imgs, v

    who = "TCP" if tcp else "pFabric"
    return Figure(
        id=f"fl_fig{fig}_buffers",
        title=f"FastLane Fig. {fig}: {who} tail FCT vs buffer size",
        source=f"FastLane §5.1.3 (Fig. {fig})",
        setup=f"60% load, half short; port buffers from {base_kb} KB down to {min(kbs)} KB, "
              "notification buffer fixed at 3.2 KB; tail FCT normalized to "
              f"{base_kb} KB per scheme and size.",
        sweep={"base_text": BASE, "seeds": 1, "schemes": _schemes(*names),
               "set": {"run.duration": d} | SENSITIVITY,
               "grid": {"switch.buffer": [f"{k}KB" for k in kbs]}},
        analyze=analyze,
        paper=["§5.1.3: 'with FastLane, TCP's 99.9th percentile flow completion times do not "
               "degrade as we reduce buffer sizes. Without FastLane, TCP's performance degrades "
               "rapidly'; long flows +38% (3.9 → 5.4 ms) from 128 to 32 KB."] if tcp else
              ["§5.1.3: FastLane cannot keep pFabric's 16 and 32 KB tails from growing; long "
               "flows +72% with FastLane and +88% without from 64 to 16 KB; FastLane still "
               "improves short flows at every point."],
        metrics=[tail_percentile])


def _parallelism(quick: bool) -> Figure:
    d, secs = _duration(quick)
    # At 60% load fewer than 8 parallel packets of 5 us cannot keep up with a 10 Gbps
    # NIC: the receive backlog grows without bound.
    par = [8, 32] if quick else [8, 16, 32, 64]

    def analyze(res: Results, out: Path) -> tuple[pd.DataFrame, list[Path], list[Verdict]]:
        t = _tails(res, "proc_parallel")
        r = _reductions(t, "proc_parallel")
        imgs = []
        for s in ("FL-FH", "pFabric+FL"):
            imgs += plots.grouped_bars(r[r.scheme == s], "proc_parallel", "size_kb",
                                       "reduction", out / f"fl_fig14_{s.lower()}",
                                       percent=True, xlabel="packets processed in parallel",
                                       title=f"{s}: tail reduction vs server parallelism "
                                             "(Fig. 14)", ylabel=f"reduction vs {BASELINE[s]}")
        m = r.groupby(["scheme", "proc_parallel"])["reduction"].mean()
        lo, hi = min(par), max(par)
        v = [Verdict("the improvement does not diminish as parallelism grows (by more than 10 "
                     "points)",
                     all(m[(s, hi)] >= m[(s, lo)] - 0.10 for s in ("FL-FH", "pFabric+FL")),
                     ", ".join(f"{s}: {m[(s, lo)]:.0%} at {lo} → {m[(s, hi)]:.0%} at {hi}"
                               for s in ("FL-FH", "pFabric+FL"))),
             _caps_verdict(res, secs)[0]]
        return _pivot(r, "proc_parallel", "reduction"), imgs, v

    return Figure(
        id="fl_fig14_parallelism",
        title="FastLane Fig. 14: tail FCT reduction vs server parallelism",
        source="FastLane §5.1.3 (Fig. 14)",
        setup="60% load, half short; each server processes up to P packets at once, 5 µs "
              "each; mean over sizes in the verdict.",
        sweep={"base_text": BASE, "seeds": 1,
               "schemes": _schemes("TCP", "FL-FH", "pFabric", "pFabric+FL"),
               "set": {"run.duration": d} | SENSITIVITY,
               "grid": {"host.proc_parallel": par}},
        analyze=analyze,
        paper=["§5.1.3: 'FastLane's performance improvement does not diminish as the amount "
               "of parallelism increases.'"],
        metrics=[tail_reduction])


def figures(quick: bool) -> list[Figure]:
    return [_fig2(quick), _fig6(quick), _fig7(quick), _long(quick), _fraction(quick),
            _caps(quick), _buffers(quick, tcp=True), _buffers(quick, tcp=False),
            _parallelism(quick)]
