"""What the showdown checks: the sanity claims every fabric must pass, and each paper's
headline claim restated on the common setup. Each function takes the cells table
(`metrics.cells`: every metric with its 95% interval) or the runs table (one row per
seed) and returns a `Claim` judged on the intervals (`spillway.reproduce.claim`)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd

from spillway.intervals import Estimate, ratio, reduction, total
from spillway.reproduce import claim
from spillway.reproduce.claim import Claim
from spillway.reproduce.showdown.metrics import KEYS, estimate
from spillway.reproduce.showdown.setup import POISSON, ROCE

# Fastpass's switch queues are "near zero" when the switch ports' time-averaged
# occupancy, averaged over the ports, stays under one full-size frame, and below its own
# baseline's (CUBIC, which Fastpass runs above).
NEAR_ZERO_BYTES = 1538
# "No worse" for a completion time: at most this factor above.
CLOSE = 1.05


def _ok(cells: pd.DataFrame) -> pd.DataFrame:
    return cells[cells.status == "ok"]


def _label(fabric: str, workload: str, load: float, fanin: float) -> str:
    where = f"n={fanin:g}" if workload == "incast" else f"{load:g}"
    return f"{fabric} {workload} {where}"


def _pairs(cells: pd.DataFrame, schemes: list[str], workloads: tuple[str, ...] | list[str]
           ) -> Iterator[tuple[str, dict[str, pd.Series]]]:
    """For every cell of ``workloads`` where all of ``schemes`` have numbers: its label
    and each scheme's row."""
    d = _ok(cells[cells.workload.isin(workloads) & cells.scheme.isin(schemes)])
    for (f, w, x, n), g in d.groupby(["fabric", "workload", "load", "fanin"], sort=False,
                                     dropna=False):
        rows = {r.scheme: r for _, r in g.iterrows()}
        if set(schemes) <= set(rows):
            yield _label(f, w, x, n), rows


def _unmeasured(cells: pd.DataFrame, schemes: list[str], workloads: list[str]) -> str:
    d = cells[cells.scheme.isin(schemes) & cells.workload.isin(workloads) & (cells.status != "ok")]
    return "; ".join(f"{r.scheme} {_label(r.fabric, r.workload, r.load, r.fanin)}: {r.status}"
                     for r in d.itertuples())


def _measured(text: str, body: Claim, cells: pd.DataFrame, schemes: list[str],
              workloads: list[str]) -> Claim:
    """``body``, but never a PASS over cells that could not be measured (a scheme
    refused or failed there): INCONCLUSIVE then, the cells named."""
    gone = _unmeasured(cells, schemes, workloads)
    if not gone:
        return body
    return claim.each(text, [body, Claim("every cell measured", claim.Verdict.INCONCLUSIVE,
                                         gone)], why=f"cells without numbers: {gone}",
                      label=["the measured cells", "the rest"])


def beats_tcp(cells: pd.DataFrame, scheme: str) -> Claim:
    """``scheme``'s short-flow p99 FCT no higher than TCP's in every Poisson cell (every
    fabric, workload and load) and lower in most of them."""
    text = (f"{scheme}'s short-flow p99 FCT (flows ≤ 100 KB) is no higher than TCP's in every "
            "Poisson cell (a tie at the floor, where nothing queues, counts as no higher) and "
            "lower in most")
    labels, no_worse, better, ratios = [], [], [], []
    for label, r in _pairs(cells, [scheme, "TCP"], POISSON):
        a, b = estimate(r[scheme], "short_fct_p99_ms"), estimate(r["TCP"], "short_fct_p99_ms")
        labels.append(label)
        no_worse.append(claim.no_more(label, a, b))
        better.append(claim.below(label, a, b))
        ratios.append(a.value / b.value)
    if not labels:
        return claim.each(text, [], why="no cells with both: " + _unmeasured(
            cells, [scheme, "TCP"], list(POISSON)))
    body = claim.each(text, [claim.each("no higher anywhere", no_worse, label=labels),
                             claim.most("lower in most cells", better)],
                      why=f"{scheme}/TCP p99 in {len(ratios)} cells: median "
                          f"{np.median(ratios):.2f}, {min(ratios):.2f} to {max(ratios):.2f}",
                      label=["no higher anywhere", "lower in most cells"])
    return _measured(text, body, cells, [scheme, "TCP"], list(POISSON))


def _lossless(runs: pd.DataFrame, names: list[str], text: str, why: str) -> Claim:
    """No drop in any run of ``names`` (their runs that could not be measured named: no
    pass over them)."""
    d = runs[runs.scheme.isin(names)]
    ok = d[d.status == "ok"]
    body = claim.in_every_run(
        text, {f"{r.scheme} {_label(r.fabric, r.workload, r.load, r.fanin)} seed {r.seed}":
               r.drops == 0 for r in ok.itertuples()}, why)
    missing = d[d.status != "ok"]
    if missing.empty:
        return body
    gone = "; ".join(f"{r.scheme} {_label(r.fabric, r.workload, r.load, r.fanin)}: {r.status}"
                     for r in missing.drop_duplicates(KEYS).itertuples())
    return claim.each(text, [body, Claim("every run measured", claim.Verdict.INCONCLUSIVE,
                                         gone)],
                      why=f"runs without numbers: {gone}", label=["measured", "unmeasured"])


def detail_lossless(runs: pd.DataFrame) -> Claim:
    """DeTail (with size classes and with one class) drops nothing, in any run of any cell
    or seed."""
    names = [s for s in ("detail", "detail-1class") if s in set(runs.scheme)]
    ok = runs[runs.scheme.isin(names) & (runs.status == "ok")]
    pf = runs[runs.scheme.str.startswith("priority_pfc") & (runs.status == "ok")]
    return _lossless(
        runs, names, "DeTail drops nothing (every workload, load, fan-in, fabric and seed)",
        f"{int(ok.drops.sum())} packets dropped in {len(ok)} runs "
        f"({int(ok.pauses.sum()):,} pause frames); Priority+PFC: {int(pf.drops.sum())} drops "
        f"in {len(pf)} runs")


def fastpass_queues(cells: pd.DataFrame) -> Claim:
    """Fastpass's switch queues near zero in every Poisson cell: the switch ports'
    time-averaged occupancy, averaged over ports, under one frame (1,538 B) and below
    CUBIC's (its baseline, which it runs above)."""
    text = ("Fastpass's switch queues stay near zero (mean occupancy over all switch ports "
            f"under {NEAR_ZERO_BYTES} B, one frame, and below CUBIC's, every Poisson cell)")
    labels, cases, fp_v, cu_v, busiest, peak = [], [], [], [], [], []
    for label, r in _pairs(cells, ["Fastpass", "CUBIC"], POISSON):
        fp, cu = estimate(r["Fastpass"], "queue_mean_bytes"), estimate(r["CUBIC"],
                                                                       "queue_mean_bytes")
        labels.append(label)
        cases.append(claim.each(label, [claim.at_most("under a frame", fp, NEAR_ZERO_BYTES),
                                        claim.below("below CUBIC's", fp, cu)]))
        fp_v.append(fp.value)
        cu_v.append(cu.value)
        busiest.append(r["Fastpass"].queue_busiest_mean_bytes)
        peak.append(r["Fastpass"].queue_max_kb)
    if not cases:
        return claim.each(text, [], why="no Fastpass runs: " + _unmeasured(
            cells, ["Fastpass"], list(POISSON)))
    body = claim.each(text, cases, label=labels, why=(
        f"Fastpass {min(fp_v):.0f}-{max(fp_v):.0f} B against CUBIC's {min(cu_v):.0f}-"
        f"{max(cu_v):.0f} B; the busiest single port averages up to {max(busiest):,.0f} B and "
        f"peaks at {max(peak):.0f} KB (the arbiter's rack: in-band FCP, see the notes)"))
    return _measured(text, body, cells, ["Fastpass", "CUBIC"], list(POISSON))


def incast_timeouts(cells: pd.DataFrame, scheme: str) -> Claim:
    """``scheme`` has fewer incast timeouts than TCP on every fabric (summed over the
    fan-ins, per run), and no more than TCP at any fan-in."""
    text = (f"{scheme} has fewer incast timeouts than TCP on every fabric (summed over the "
            "fan-ins) and no more at any fan-in")
    d = _ok(cells[cells.workload == "incast"])
    fabrics = list(dict.fromkeys(d.fabric))
    cases, labels = [], []
    for f in fabrics:
        at: list[Claim] = []
        ours, tcp = [], []
        for label, r in _pairs(d[d.fabric == f], [scheme, "TCP"], ("incast",)):
            a, b = estimate(r[scheme], "timeouts"), estimate(r["TCP"], "timeouts")
            at.append(claim.no_more(label, a, b))
            ours.append(a)
            tcp.append(b)
        if not at:
            continue
        ours_total, tcp_total = total(ours), total(tcp)
        cases.append(claim.each(f, [claim.below("fewer in all", ours_total, tcp_total),
                                    claim.each("no more at any fan-in", at)],
                                why=f"{f}: {ours_total.fmt()} vs TCP's {tcp_total.fmt()} "
                                    "per run summed over fan-ins"))
        labels.append(f"{f} ({ours_total.fmt()} vs TCP's {tcp_total.fmt()})")
    if not cases:
        return claim.each(text, [], why="no incast runs")
    body = claim.each(text, cases, label=labels, why="; ".join(c.why.split(";")[0]
                                                                 for c in cases))
    return _measured(text, body, cells, [scheme, "TCP"], ["incast"])


def sanity(cells: pd.DataFrame, runs: pd.DataFrame) -> list[Claim]:
    """The claims every fabric must pass."""
    return [beats_tcp(cells, "pFabric"), beats_tcp(cells, "Turbo-T1"),
            beats_tcp(cells, "Turbo-T2"), detail_lossless(runs), fastpass_queues(cells),
            incast_timeouts(cells, "FL-FH"), incast_timeouts(cells, "FL-PS"),
            incast_timeouts(cells, "CP"), roce_lossless(runs)]


def _reductions(cells: pd.DataFrame, scheme: str, base: str, col: str,
                workloads: list[str]) -> list[tuple[str, Estimate]]:
    return [(label, reduction(estimate(r[scheme], col), estimate(r[base], col)))
            for label, r in _pairs(cells, [scheme, base], workloads)]


def _span(rs: list[tuple[str, Estimate]]) -> str:
    if not rs:
        return "no runs"
    best = max(rs, key=lambda x: x[1].value)
    worst = min(rs, key=lambda x: x[1].value)
    med = float(np.median([e.value for _, e in rs]))
    return (f"best {best[1].value:+.0%} [{best[1].lo:+.0%}, {best[1].hi:+.0%}] ({best[0]}), "
            f"median {med:+.0%}, worst {worst[1].value:+.0%} ({worst[0]}) over {len(rs)} cells")


def headline_claims(cells: pd.DataFrame, runs: pd.DataFrame) -> list[Claim]:
    """Each paper's headline claim on the common setup, judged on the intervals."""
    wl = ["websearch", "datamining", "partition-aggregate"]
    out = []
    fl = {s: _reductions(cells, s, "TCP", "short_fct_p999_ms", wl) for s in ("FL-FH", "FL-PS")}
    cases = [claim.at_least(f"{s} {label}", e, 0.375) for s, rs in fl.items() for label, e in rs]
    share = runs[runs.scheme.isin(["FL-FH", "FL-PS", "pFabric+FL"]) & (runs.status == "ok")]
    capped = claim.in_every_run(
        "notifications within 1% of every link", {
            f"{r.scheme} {_label(r.fabric, r.workload, r.load, r.fanin)} seed {r.seed}":
            r.notif_link_pct <= 1.0 for r in share.itertuples()},
        f"largest share of a link {share.notif_link_pct.max():.3f}%")
    out.append(claim.each(
        "FastLane cuts TCP's short-flow p99.9 by at least half the paper's 75% somewhere (at "
        "the interval's unfavourable end), its notifications within 1% of any link in every run",
        [claim.some("a cut of 37.5% or more", cases), capped],
        paper="FastLane: 'reduces 99.9th percentile completion times of short flows by up to "
              "75%' against TCP, notifications taking 'no more than 1% of bandwidth' "
              "(abstract, §5)", paper_value="up to −75%; ≤ 1% of a link",
        why="; ".join(f"{s}: {_span(rs)}" for s, rs in fl.items())
            + f"; notifications' largest share of a link {share.notif_link_pct.max():.3f}%",
        label=["a cut somewhere", "within 1%"]))
    inc = _ok(cells[cells.workload == "incast"])
    top = inc.fanin.max() if len(inc) else np.nan
    cases, labels = [], []
    for label, r in _pairs(inc[inc.fanin == top], ["CP", "TCP", "DCTCP", "DCTCP+CP"],
                           ("incast",)):
        q = {s: estimate(r[s], "qct_p99_ms") for s in r}
        t = {s: estimate(r[s], "timeouts") for s in r}
        cases.append(claim.each(label, [
            claim.below("fewer timeouts", t["CP"], t["TCP"]),
            claim.at_most("CP's p99 round within 5% of TCP's", ratio(q["CP"], q["TCP"]), CLOSE),
            claim.at_most("DCTCP+CP's within 5% of DCTCP's", ratio(q["DCTCP+CP"], q["DCTCP"]),
                          CLOSE)]))
        labels.append(f"{label}: timeouts CP {t['CP'].fmt()} vs TCP {t['TCP'].fmt()}; p99 round "
                      f"CP {q['CP'].fmt()} ms vs TCP {q['TCP'].fmt()}, DCTCP+CP "
                      f"{q['DCTCP+CP'].fmt()} vs DCTCP {q['DCTCP'].fmt()}")
    out.append(claim.each(
        "at the largest fan-in CP has fewer timeouts than TCP, and CP's and DCTCP+CP's p99 "
        f"round completion are at most {CLOSE - 1:.0%} above TCP's and DCTCP's, every fabric",
        cases, label=labels, why="; ".join(labels),
        paper="CP: cutting payload 'successfully addresses the root cause' of TCP incast and "
              "'works well with other TCP variants' (abstract, §6.1)",
        paper_value="timeouts vanish"))
    dt = _reductions(cells, "detail", "TCP", "short_fct_p99_ms", wl)
    out.append(claim.some(
        "DeTail cuts TCP's short-flow p99 by at least 40% (half the paper's 80%) somewhere",
        [claim.at_least(label, e, 0.4) for label, e in dt],
        paper="DeTail: 'reduces the 99th percentile flow completion tail ... by up to 80%' "
              "(abstract; against drop-tail ECMP, §8)", paper_value="up to −80%",
        why=f"detail vs TCP: {_span(dt)}", label=[x for x, _ in dt]))
    cases, labels, red_v, thr_v = [], [], [], []
    for label, r in _pairs(cells, ["Fastpass", "CUBIC"], POISSON):
        fq = estimate(r["Fastpass"], "queue_mean_bytes")
        # A queue averaging under a byte is a byte: the ratio stays finite.
        fq = Estimate(max(fq.value, 1), max(fq.lo, 1), max(fq.hi, 1), fq.n, fq.seeds, fq.method)
        red = ratio(estimate(r["CUBIC"], "queue_mean_bytes"), fq)
        thr = ratio(estimate(r["Fastpass"], "long_fct_mean_ms"),
                    estimate(r["CUBIC"], "long_fct_mean_ms"))
        cases.append(claim.each(label, [claim.at_least("queues 24× shorter", red, 24),
                                        claim.at_most("long flows within 10%", thr, 1.1)]))
        labels.append(label)
        red_v.append(red.value)
        thr_v.append(thr.value)
    out.append(claim.each(
        "Fastpass's switch queues are far shorter than CUBIC's (at least 24×, a tenth of the "
        "paper's 240×) with long flows no more than 10% slower, every Poisson cell", cases,
        label=labels,
        paper="Fastpass: 'high throughput comparable to current networks at a 240× reduction "
              "in queue lengths' (abstract, §7.1)", paper_value="240× shorter queues",
        why=(f"mean switch queue CUBIC/Fastpass {min(red_v):.0f}× to {max(red_v):.0f}×; "
             f"long-flow mean FCT Fastpass/CUBIC {np.nanmin(thr_v):.2f} to "
             f"{np.nanmax(thr_v):.2f}") if cases else "no runs"))
    cases, ratios = [], []
    for label, r in _pairs(cells, ["Turbo-T1", "Turbo-T2", "pFabric"], POISSON):
        pf = estimate(r["pFabric"], "mean_fct_ms")
        ts = [estimate(r[s], "mean_fct_ms") for s in ("Turbo-T1", "Turbo-T2")]
        cases.append(claim.some(label, [claim.below(s, t, pf) for s, t in
                                        zip(("T1", "T2"), ts, strict=True)]))
        ratios.append(min(t.value for t in ts) / pf.value)
    out.append(claim.most(
        "some Turbo variant's mean FCT below pFabric's in most Poisson cells", cases,
        paper="Turbo delivers 'minimized average flow completion times for all flows', "
              "sending at line rate with priorities doing the work, where pFabric starves "
              "long flows (abstract, §3)", paper_value="mean FCT below pFabric's",
        why=(f"best Turbo / pFabric mean FCT {min(ratios):.2f} to {max(ratios):.2f}, below 1 "
             f"in {sum(x < 1 for x in ratios)} of {len(ratios)} cells") if ratios else ""))
    out.append(hpcc_beats_dcqcn(cells))
    return out


def roce_lossless(runs: pd.DataFrame) -> Claim:
    """The RoCE rows (DCQCN, HPCC, DCTCP on RoCE hosts) drop nothing on the lossless
    fabric, in any run."""
    names = [s for s in ROCE if s in set(runs.scheme)]
    text = "the RoCE rows (DCQCN, HPCC, DCTCP-RoCE) drop nothing on the lossless fabric"
    if not names:
        return claim.each(text, [], why="no RoCE runs")
    ok = runs[runs.scheme.isin(names) & (runs.status == "ok")]
    return _lossless(runs, names, text, f"{int(ok.drops.sum())} packets dropped in {len(ok)} "
                     "runs; pause frames: " + ", ".join(
                         f"{s} {int(ok[ok.scheme == s].pauses.sum()):,}" for s in names))


def hpcc_beats_dcqcn(cells: pd.DataFrame) -> Claim:
    """HPCC's short-flow p99 FCT below DCQCN's at the highest load on web search, on every
    fabric: the HPCC paper's headline (§5) restated on the common setup."""
    d = _ok(cells[cells.workload == "websearch"])
    d = cells[(cells.workload == "websearch") & (cells.load == d.load.max())] if len(d) else d
    text = ("HPCC's short-flow p99 FCT (flows ≤ 100 KB) is below DCQCN's at the highest load "
            "on web search, every fabric")
    cases, labels, ratios = [], [], []
    for label, r in _pairs(d, ["HPCC", "DCQCN"], ("websearch",)):
        h, q = estimate(r["HPCC"], "short_fct_p99_ms"), estimate(r["DCQCN"], "short_fct_p99_ms")
        cases.append(claim.below(label, h, q))
        labels.append(f"{label}: HPCC {h.fmt()} ms vs DCQCN {q.fmt()} ms")
        ratios.append(h.value / q.value)
    if not cases:
        return claim.each(text, [], why="no cells with both: " + _unmeasured(
            cells, ["HPCC", "DCQCN"], ["websearch"]))
    body = claim.each(
        text, cases, label=labels,
        paper="HPCC: 'reduces FCT by up to 95%' against DCQCN; on its testbed's web search at "
              "50% load the p99 slowdown of flows under 3 KB falls from 53.9 to 2.70 (abstract, "
              "§5.2)", paper_value="up to −95%",
        why="HPCC/DCQCN short-flow p99 " + ", ".join(f"{x:.2f}" for x in ratios))
    return _measured(text, body, d, ["HPCC", "DCQCN"], ["websearch"])


CLASS_ROWS = (("detail", "detail-1class"), ("priority_pfc", "priority_pfc-1class"))


def size_classes(cells: pd.DataFrame) -> tuple[pd.DataFrame, list[Claim]]:
    """What marking flows by size changes for DeTail and Priority+PFC: their short-flow
    p99 with size classes and with one class in every Poisson cell (with TCP's beside),
    and a claim per scheme that the classes cut it in most cells."""
    rows, out = [], []
    for main, one in CLASS_ROWS:
        cases, labels = [], []
        for label, r in _pairs(cells, [main, one, "TCP"], POISSON):
            a, b = estimate(r[main], "short_fct_p99_ms"), estimate(r[one], "short_fct_p99_ms")
            t = estimate(r["TCP"], "short_fct_p99_ms")
            cases.append(claim.below(label, a, b))
            labels.append(label)
            rows.append({"cell": label, "scheme": main, "size classes": a.fmt(),
                         "one class": b.fmt(), "classes / one": f"{a.value / b.value:.2f}",
                         "TCP": t.fmt()})
        if cases:
            out.append(claim.most(
                f"size classes cut {main}'s short-flow p99 against its one-class row in most "
                "Poisson cells", cases,
                paper="DeTail §8: queries and their responses above background traffic",
                why=f"{main}/{one} p99 " + ", ".join(
                    f"{x['cell']} {x['classes / one']}" for x in rows if x["scheme"] == main)))
    return pd.DataFrame(rows), out
