"""What the showdown checks: the sanity verdicts every fabric must pass, and each paper's
headline claim restated on the common setup. Each function takes the cells table
(`metrics.cells`) and returns `Verdict`s whose detail holds the numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd

from spillway.reproduce import Verdict

# Fastpass's switch queues are "near zero" when the switch ports' time-averaged
# occupancy, averaged over the ports, stays under one full-size frame, and below its own
# baseline's (CUBIC, which Fastpass runs above).
NEAR_ZERO_BYTES = 1538
# "No worse" for a completion time: at most this factor above.
CLOSE = 1.05
# Two p99s within this share of each other are a tie.
TIE = 0.001


def _ok(cells: pd.DataFrame) -> pd.DataFrame:
    return cells[cells.status == "ok"]


def _poisson(cells: pd.DataFrame) -> pd.DataFrame:
    ok = _ok(cells)
    return ok[ok.workload.isin(["websearch", "datamining"])]


def _by_cell(d: pd.DataFrame, col: str) -> pd.DataFrame:
    return d.pivot_table(index=["fabric", "workload", "load"], columns="scheme", values=col,
                         aggfunc="first")


def _missing(cells: pd.DataFrame, names: list[str], workloads: list[str]) -> str:
    d = cells[cells.scheme.isin(names) & cells.workload.isin(workloads) & (cells.status != "ok")]
    return "; ".join(f"{r.scheme} {r.fabric} {r.workload} {r.load:g}/{r.fanin:g}: {r.status}"
                     for r in d.itertuples())


def beats_tcp(cells: pd.DataFrame, scheme: str) -> Verdict:
    """``scheme``'s short-flow p99 FCT below TCP's in every Poisson cell (every fabric,
    workload and load)."""
    p = _by_cell(_poisson(cells), "short_fct_p99_ms")
    if scheme not in p.columns or "TCP" not in p.columns:
        gone = _missing(cells, [scheme, "TCP"], ["websearch", "datamining"])
        return Verdict(f"{scheme} beats TCP on short-flow tails at every load", False,
                       f"no runs of {scheme} or TCP: {gone}")
    r = (p[scheme] / p["TCP"]).dropna()
    # Both at the floor (the ideal FCT: nothing queued at a low load) is a tie, not a loss.
    worse = r[r > 1 + TIE]
    ties = int((r > 1 - TIE).sum() - len(worse))
    gone = _missing(cells, [scheme, "TCP"], ["websearch", "datamining"])
    detail = (f"short-flow p99 FCT over TCP's in {len(r)} cells: median {r.median():.2f}, worst "
              f"{r.max():.2f} ({', '.join(map(str, r.idxmax()))}), best {r.min():.2f}"
              + (f"; {ties} tie(s) within {TIE:.1%} (both at the floor)" if ties else "")
              + ("; not below TCP's in: " + ", ".join(
                  f"{f} {w} {x:g} ({p.loc[(f, w, x), scheme]:.3g} vs "
                  f"{p.loc[(f, w, x), 'TCP']:.3g} ms)" for f, w, x in worse.index)
                 if len(worse) else "")
              + (f"; cells without numbers: {gone}" if gone else ""))
    return Verdict(f"{scheme} beats TCP on short-flow tails (p99 FCT of flows ≤ 100 KB) at "
                   "every load, both workloads, every fabric (or ties it at the floor)",
                   len(worse) == 0 and not gone and len(r) > 0, detail)


def detail_lossless(cells: pd.DataFrame) -> Verdict:
    """DeTail drops nothing, in any cell of any workload."""
    d = cells[cells.scheme == "detail"]
    ok = _ok(d)
    drops = int(ok["drops"].sum())
    pf = _ok(cells[cells.scheme == "priority_pfc"])
    gone = _missing(cells, ["detail"], list(cells.workload.unique()))
    return Verdict("DeTail drops nothing (every workload, load, fan-in and fabric)",
                   drops == 0 and len(ok) > 0 and not gone,
                   f"{drops} packets dropped in {len(ok)} runs ({int(ok['pauses'].sum()):,} pause "
                   f"frames); Priority+PFC: {int(pf['drops'].sum())} drops in {len(pf)} runs"
                   + (f"; runs without numbers: {gone}" if gone else ""))


def fastpass_queues(cells: pd.DataFrame) -> Verdict:
    """Fastpass's switch queues near zero in every Poisson cell: the switch ports'
    time-averaged occupancy, averaged over ports, under one frame (1,538 B) and below
    CUBIC's (its baseline, which it runs above)."""
    p = _poisson(cells)
    q = _by_cell(p, "queue_mean_bytes")
    if "Fastpass" not in q.columns or "CUBIC" not in q.columns:
        return Verdict("Fastpass's switch queues stay near zero", False, "no Fastpass runs: "
                       + _missing(cells, ["Fastpass"], ["websearch", "datamining"]))
    fp, cu = q["Fastpass"], q["CUBIC"]
    share = (fp / cu).dropna()
    bad = fp[(fp > NEAR_ZERO_BYTES) | (fp >= cu)]
    busiest = _by_cell(p, "queue_busiest_mean_bytes")["Fastpass"]
    peak = _by_cell(p, "queue_max_kb")["Fastpass"]
    return Verdict(
        "Fastpass's switch queues stay near zero (mean occupancy over all switch ports under "
        f"{NEAR_ZERO_BYTES} B, one frame, and below CUBIC's, every Poisson cell)",
        len(bad) == 0 and len(fp.dropna()) > 0,
        f"Fastpass {fp.min():.0f}-{fp.max():.0f} B against CUBIC's {cu.min():.0f}-{cu.max():.0f} B "
        f"(Fastpass/CUBIC {share.min():.3f}-{share.max():.3f}); the busiest single port "
        f"averages up to {busiest.max():,.0f} B and peaks at {peak.max():.0f} KB (the "
        "arbiter's rack: in-band FCP, see the notes)"
        + (f"; above the bound in: {', '.join(' '.join(map(str, i)) for i in bad.index)}"
           if len(bad) else ""))


def incast_timeouts(cells: pd.DataFrame, scheme: str) -> Verdict:
    """``scheme`` has fewer incast timeouts than TCP on every fabric (summed over the
    fan-ins), and no more than TCP at any fan-in."""
    d = _ok(cells[cells.workload == "incast"])
    t = d.pivot_table(index=["fabric", "fanin"], columns="scheme", values="timeouts",
                      aggfunc="first")
    if scheme not in t.columns or "TCP" not in t.columns:
        return Verdict(f"{scheme} cuts TCP's incast timeouts", False, "no incast runs")
    tot = t.groupby(level="fabric")[[scheme, "TCP"]].sum()
    more = t[t[scheme] > t["TCP"]]
    holds = bool((tot[scheme] < tot["TCP"]).all()) and len(more) == 0
    return Verdict(
        f"{scheme} cuts TCP's incast timeouts (fewer in total on every fabric, never more at a "
        "fan-in)", holds,
        "; ".join(f"{f}: {int(r[scheme])} vs TCP's {int(r['TCP'])}" for f, r in tot.iterrows())
        + (" — more than TCP at " + ", ".join(f"{f} n={n:g}" for f, n in more.index)
           if len(more) else ""))


def sanity(cells: pd.DataFrame) -> list[Verdict]:
    """The issue's sanity verdicts, in its order."""
    return [beats_tcp(cells, "pFabric"), beats_tcp(cells, "Turbo-T1"),
            beats_tcp(cells, "Turbo-T2"), detail_lossless(cells), fastpass_queues(cells),
            incast_timeouts(cells, "FL-FH"), incast_timeouts(cells, "FL-PS"),
            incast_timeouts(cells, "CP")]


def _reduction(cells: pd.DataFrame, scheme: str, base: str, col: str,
               workloads: list[str]) -> pd.Series:
    d = _ok(cells[cells.workload.isin(workloads)])
    p = d.pivot_table(index=["fabric", "workload", "load"], columns="scheme", values=col,
                      aggfunc="first")
    if scheme not in p.columns or base not in p.columns:
        return pd.Series(dtype=float)
    return (1 - p[scheme] / p[base]).dropna()


def _span(r: pd.Series) -> str:
    if r.empty:
        return "no runs"
    return (f"best {r.max():+.0%} ({' '.join(map(str, r.idxmax()))}), median {r.median():+.0%}, "
            f"worst {r.min():+.0%} ({' '.join(map(str, r.idxmin()))}) over {len(r)} cells")


def headline_claims(cells: pd.DataFrame) -> list[tuple[str, str, Verdict]]:
    """Each paper's headline claim on the common setup: (paper, its claim, verdict)."""
    wl = ["websearch", "datamining", "partition-aggregate"]
    out = []
    fl = {s: _reduction(cells, s, "TCP", "short_fct_p999_ms", wl) for s in ("FL-FH", "FL-PS")}
    best = max((r.max() for r in fl.values() if len(r)), default=np.nan)
    share = _ok(cells[cells.scheme.isin(["FL-FH", "FL-PS", "pFabric+FL"])])["notif_link_pct"]
    out.append(("FastLane", "'reduces 99.9th percentile completion times of short flows by up "
                "to 75%' against TCP, its notifications taking 'no more than 1% of bandwidth' "
                "(abstract, §5)",
                Verdict("FastLane cuts TCP's short-flow p99.9 substantially somewhere (best "
                        "reduction at least half the paper's 75%), within 1% of any link",
                        bool(best >= 0.375) and float(share.max()) <= 1.0,
                        "; ".join(f"{s}: {_span(r)}" for s, r in fl.items())
                        + f"; notifications' largest share of a link {share.max():.3f}%")))
    inc = _ok(cells[cells.workload == "incast"])
    top = inc[inc.fanin == inc.fanin.max()].set_index(["fabric", "scheme"])
    rows = []
    holds = True
    for f in top.index.get_level_values(0).unique():
        g = top.loc[f]
        if not {"CP", "TCP", "DCTCP", "DCTCP+CP"} <= set(g.index):
            holds = False
            continue
        q = g["qct_p99_ms"]
        holds &= bool(g.loc["CP", "timeouts"] < g.loc["TCP", "timeouts"]
                      and q["CP"] <= CLOSE * q["TCP"] and q["DCTCP+CP"] <= CLOSE * q["DCTCP"])
        rows.append(f"{f}, n={inc.fanin.max():g}: timeouts CP {int(g.loc['CP', 'timeouts'])} vs "
                    f"TCP {int(g.loc['TCP', 'timeouts'])}; p99 round CP {q['CP']:.3g} ms vs "
                    f"TCP {q['TCP']:.3g}, DCTCP+CP {q['DCTCP+CP']:.3g} vs DCTCP {q['DCTCP']:.3g}")
    out.append(("CP", "cutting payload 'successfully addresses the root cause' of TCP incast "
                "and 'works well with other TCP variants' (abstract, §6.1)",
                Verdict("at the largest fan-in CP has fewer timeouts than TCP, and CP's and "
                        f"DCTCP+CP's p99 round completion are at most {CLOSE - 1:.0%} above "
                        "TCP's and DCTCP's, on every fabric", holds and bool(rows),
                        "; ".join(rows) or "no incast runs")))
    dt = _reduction(cells, "detail", "TCP", "short_fct_p99_ms", wl)
    out.append(("DeTail", "'reduces the 99th percentile flow completion tail ... by up to 80%' "
                "(abstract; against drop-tail ECMP, §8)",
                Verdict("DeTail cuts TCP's short-flow p99 by at least 40% (half the paper's "
                        "80%) somewhere", bool(len(dt) and dt.max() >= 0.4),
                        f"detail vs TCP: {_span(dt)}")))
    q = _by_cell(_poisson(cells), "queue_mean_bytes")
    lf = _by_cell(_poisson(cells), "long_fct_mean_ms")
    if {"Fastpass", "CUBIC"} <= set(q.columns):
        red = (q["CUBIC"] / q["Fastpass"].clip(lower=1e-9)).dropna()
        thr = (lf["Fastpass"] / lf["CUBIC"]).dropna()
        v = Verdict("Fastpass's switch queues are far shorter than CUBIC's (at least 24×, a "
                    "tenth of the paper's 240×) with long flows no more than 10% slower",
                    bool(red.min() >= 24 and thr.max() <= 1.1),
                    f"mean switch queue CUBIC/Fastpass {red.min():.0f}× to {red.max():.0f}×; "
                    f"long-flow mean FCT Fastpass/CUBIC {thr.min():.2f} to {thr.max():.2f}")
    else:
        v = Verdict("Fastpass's queues far shorter than CUBIC's", False, "no runs")
    out.append(("Fastpass", "'high throughput comparable to current networks at a 240× "
                "reduction in queue lengths' (abstract, §7.1)", v))
    mf = _by_cell(_poisson(cells), "mean_fct_ms")
    if {"Turbo-T1", "Turbo-T2", "pFabric"} <= set(mf.columns):
        bt = mf[["Turbo-T1", "Turbo-T2"]].min(axis=1) / mf["pFabric"]
        v = Verdict("some Turbo variant's mean FCT below pFabric's in most Poisson cells",
                    bool((bt < 1).mean() > 0.5),
                    f"best Turbo / pFabric mean FCT: below 1 in {(bt < 1).sum()} of {len(bt)} "
                    f"cells, {bt.min():.2f} to {bt.max():.2f}")
    else:
        v = Verdict("Turbo's mean FCT below pFabric's", False, "no runs")
    out.append(("Turbo", "Turbo delivers 'minimized average flow completion times for all "
                "flows', sending at line rate with priorities doing the work, where pFabric "
                "starves long flows (abstract, §3)", v))
    return out
