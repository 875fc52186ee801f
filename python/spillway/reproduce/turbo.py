"""Turbo (Narayan et al., §2.1.3, §3 and §5): pFabric's starvation of long flows at low BDP,
and the four Turbo design options against pFabric.

The network (§5.1.1) is pFabric's: 144 hosts in 9 racks of 16 under 4 spines, 10 Gbps to
the hosts, 40 Gbps in the core, 0.2 µs per link (`topology.kind = "pfabric144"`), 1460 B
of payload and 40 B of headers per packet, no Ethernet framing. Flows arrive as a Poisson
process per source-destination pair at the offered load (§5.1.3), sizes from the Bing web
search (`websearch`), Aditya and data mining CDFs. Every port is a pFabric queue (serve the
most urgent flow, its earliest packet under pFabric and its lowest sequence number under
Turbo, §4(3); drop the least urgent).

pFabric as Turbo configures it (§5.2): initial window 4 packets (one BDP), at most 7,
12,000 B buffers (8 packets), a fixed 15 µs timeout, priority = remaining bytes, no probe
mode. Turbo (§4, §5.2): 6,200 B buffers, a 9.5 µs timeout, line rate always; T1 simple
timeouts with cliff inflation and a probe at each timeout, T2 stop-on-timeout, T3 a
timeout per packet, T4 T3 with probes at least one timeout apart
(`transport.turbo_variant`).

A run offers `workload.max_flows` flows and lasts until every one has finished (no time
limit): FCTs are never cut off, and the outstanding-byte series (`timeseries.parquet`,
every 100 µs) covers the arrivals and the drain after them. The paper ran 200,000 flows a
point (1 million for Figs. 4-5); the counts here are in each figure's setup.

Claims: a mean or a drop rate over flows carries a bootstrap interval over the flows (one
seed: the second stage alone), the draws keyed by the figure and the cell (workload,
load, size group), so that the schemes of a cell are resampled alike; a run's own number
(dead and duplicate %, the backlog's share, whether the outstanding bytes grow) is the
one run's, and says so. Fig. 1's are closed forms of the CDFs (facts).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import spillway
from spillway import plots, schemes
from spillway.analysis import mean_slowdown
from spillway.intervals import Estimate
from spillway.reproduce import Figure, claim
from spillway.reproduce.claim import Claim
from spillway.reproduce.estimates import per_run_groups, resampled_groups
from spillway.store import Results

TITLE = "Turbo: starvation under pFabric and Turbo's design options (Turbo §2.1.3, §3, §5)"

MSS = 1460
HOSTS = 144
LINK_BPS = 10e9
WORKLOADS = ("websearch", "aditya", "datamining")
NAMES = {"websearch": "Bing (web search)", "aditya": "Aditya", "datamining": "Data mining"}

BASE = """
[topology]
kind = "pfabric144"
framing_bytes = 0
[workload]
kind = "poisson"
[run]
timeseries_interval = "100us"
"""

# §5.2: "an initial CWND of one BDP number of packets, or 4 ... a maximum CWND of 7
# packets ... The buffer size was set to 12000 bytes ... and the timeout was 15 µs".
PFABRIC = schemes.scheme("pFabric").overrides({
    "switch.buffer": "12000B", "transport.init_cwnd": 4, "transport.max_cwnd": 7,
    "transport.rto_min": "15us", "transport.probe_after": "off"})


def _turbo(variant: str) -> dict[str, Any]:
    # §5.2: "a timeout of 9.5 µs and a buffer size of 6200 bytes".
    return schemes.scheme(f"Turbo-{variant.upper()}").overrides(
        {"switch.buffer": "6200B", "transport.rto_min": "9.5us"})


SCHEMES: dict[str, dict[str, Any]] = {
    "pFabric": PFABRIC, "T1": _turbo("t1"), "T2": _turbo("t2"), "T3": _turbo("t3"),
    "T4": _turbo("t4")}
TURBO = ("T1", "T2", "T3", "T4")

# Flow-size groups in packets of 1460 B (the paper's figures do not name theirs).
GROUPS = ((1, 5), (6, 50), (51, 500), (501, 5000), (5001, None))
LONG_PACKETS = 501  # "long": more than 500 packets (730 KB)


@dataclass(frozen=True)
class Mode:
    """How much a reproduction runs: the loads of Figs. 12-13, the pFabric loads of
    Figs. 2-7, and the flows per run of each workload."""

    loads: tuple[float, ...]
    starvation_loads: tuple[float, ...]
    flows: dict[str, int]
    seeds: int = 1


QUICK = Mode(loads=(0.2, 0.5, 0.8), starvation_loads=(0.6, 0.7, 0.8),
             flows={"websearch": 5_000, "aditya": 20_000, "datamining": 1_500})
FULL = Mode(loads=(0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8), starvation_loads=(0.6, 0.7, 0.8),
            flows={"websearch": 20_000, "aditya": 50_000, "datamining": 4_000})


def _mode(quick: bool) -> Mode:
    return QUICK if quick else FULL


# ------------------------------------------------------------------ Fig. 1: the CDFs

def cdf_dir() -> Path:
    """The built-in CDF files the simulator compiles in (crates/spillway-core/data/cdf)."""
    return Path(spillway.__file__).resolve().parents[2] / "crates/spillway-core/data/cdf"


def read_cdf(name: str) -> tuple[np.ndarray, np.ndarray]:
    """A built-in flow-size CDF as (sizes in bytes, cumulative probabilities), read as the
    simulator reads it (workload/cdf.rs): ns-2 rows `<packets> 1 <cdf>`, packets × 1460
    B, the CDF piecewise linear between the points."""
    rows = [line.split() for line in (cdf_dir() / f"{name}.txt").read_text().splitlines()
            if line.strip() and not line.lstrip().startswith("#")]
    sizes = np.array([float(r[0]) * MSS for r in rows])
    probs = np.array([float(r[2]) for r in rows])
    return sizes, probs


def cdf_at(name: str, size_bytes: float) -> float:
    """P(flow size ≤ size_bytes) under the piecewise-linear CDF."""
    v, c = read_cdf(name)
    return float(np.interp(size_bytes, v, c, left=0.0, right=1.0))


def _segments(name: str) -> list[tuple[float, float, float]]:
    """(low size, high size, probability) pieces: a point mass at the first size, then a
    uniform piece on each segment, as the simulator samples."""
    v, c = read_cdf(name)
    segs = [(v[0], v[0], c[0])]
    segs += [(v[i - 1], v[i], c[i] - c[i - 1]) for i in range(1, len(v)) if c[i] > c[i - 1]]
    return segs


def byte_share_of_longest(name: str, fraction: float) -> float:
    """Share of all bytes carried by the longest ``fraction`` of flows: the integral of
    size × density above the (1 − fraction) quantile over the mean, under the
    piecewise-linear CDF."""
    total = sum(p * (a + b) / 2 for a, b, p in _segments(name))
    left, top = fraction, 0.0
    for a, b, p in reversed(_segments(name)):
        take = min(p, left)
        if take <= 0:
            break
        lo = b - (b - a) * take / p  # the top `take` of this uniform piece
        top += take * (lo + b) / 2
        left -= take
    return top / total


def byte_cdf_at(name: str, size_bytes: float) -> float:
    """Share of all bytes in flows of at most ``size_bytes``."""
    total = sum(p * (a + b) / 2 for a, b, p in _segments(name))
    part = 0.0
    for a, b, p in _segments(name):
        if size_bytes >= b:
            part += p * (a + b) / 2
        elif size_bytes > a:
            part += p * (size_bytes - a) / (b - a) * (a + size_bytes) / 2
    return part / total


FIG1_PAPER = ("§2.1.3: '80% of the flows in the Aditya workload are smaller than 6 packets "
              "(~9 KB), whereas most of the bytes lie in the long flows, e.g., 90% of the "
              "bytes are attributed to the 10% longest flows'")


def _fig1() -> Figure:
    def analyze(res: Results | None, out: Path) -> tuple[pd.DataFrame, list[Path],
                                                         list[Claim]]:
        pk = np.unique(np.round(np.logspace(0, np.log10(666_667), 400)))
        curves = pd.DataFrame([{"workload": NAMES[w], "packets": p,
                                "flows": cdf_at(w, p * MSS), "bytes": byte_cdf_at(w, p * MSS)}
                               for w in WORKLOADS for p in pk])
        imgs = []
        for col, label, fig in (("flows", "CDF of flow sizes", "a"),
                                ("bytes", "CDF of total bytes", "b")):
            imgs += _curves({n: (g["packets"], g[col]) for n, g in curves.groupby("workload")},
                            out / f"turbo_fig1{fig}_{col}", logx=True,
                            title=f"{label} (Turbo Fig. 1{fig})",
                            xlabel="flow size (packets of 1460 B)", ylabel="CDF")
        table = pd.DataFrame([{
            "workload": w, "mean_kb": sum(p * (a + b) / 2 for a, b, p in _segments(w)) / 1e3,
            "p80_packets": float(np.interp(0.8, read_cdf(w)[1], read_cdf(w)[0])) / MSS,
            "flows_under_6_packets": cdf_at(w, 6 * MSS),
            "bytes_in_longest_10pct": byte_share_of_longest(w, 0.10)} for w in WORKLOADS])
        t = table.set_index("workload")
        under6, p80 = t.loc["aditya", "flows_under_6_packets"], t.loc["aditya", "p80_packets"]
        # Closed forms of the CDFs: no sampling, so facts.
        v = [claim.fact("80% of Aditya's flows are smaller than 6 packets (~9 KB), within one "
                        "packet: the 80th percentile at most 7 packets", bool(p80 <= 7),
                        f"{under6:.1%} of Aditya's flows are under 6 packets (8,760 B); its "
                        f"80th percentile is {p80:.1f} packets ({p80 * MSS / 1e3:.1f} KB)",
                        paper=FIG1_PAPER, paper_value="80% under 6 packets",
                        ours=Estimate.exact(p80))]
        for w in WORKLOADS:
            s = t.loc[w, "bytes_in_longest_10pct"]
            v.append(claim.fact(f"{NAMES[w]}: 90% of the bytes are in the 10% longest flows "
                                "(at least 85%)", bool(s >= 0.85), f"{s:.1%}",
                                paper=FIG1_PAPER, paper_value="90% ('e.g.')",
                                ours=Estimate.exact(s)))
        return table, imgs, v

    return Figure(
        id="turbo_fig1_cdfs", title="Turbo Fig. 1: flow sizes and bytes of three workloads",
        source="Turbo §2.1.3 (Fig. 1)",
        setup="No simulation: the built-in CDFs (crates/spillway-core/data/cdf/, piecewise "
              "linear between their points, as the simulator samples them); (a) the share of "
              "flows of at most a size, (b) the share of all bytes in flows of at most that "
              "size.",
        sweep=None, analyze=analyze,
        paper=["§2.1.3: '80% of the flows in the Aditya workload are smaller than 6 packets "
               "(~9 KB), whereas most of the bytes lie in the long flows, e.g., 90% of the "
               "bytes are attributed to the 10% longest flows.'"],
        metrics=[byte_share_of_longest])


# ----------------------------------------------------------------------- analysis

def summaries(res: Results) -> pd.DataFrame:
    """Every done point's axes with its summary.json counters (dead and duplicate bytes,
    bytes offered...), and `dead_pct` = 100 × dead_bytes / bytes_offered, `dup_pct` = 100
    × duplicate_bytes / bytes_offered (Turbo §5.2: dead packets are bytes sent by hosts
    and never received, duplicates bytes received more than once, both over the goodput,
    the sum of the flows' sizes)."""
    pts = res.sql("SELECT * FROM points WHERE status = 'done'")
    rows = []
    for p in pts.to_dict("records"):
        s = json.loads((res.out / "points" / p["hash"] / "summary.json").read_text())
        rows.append(p | {k: v for k, v in s.items() if isinstance(v, int | float)})
    df = pd.DataFrame(rows)
    df["dead_pct"] = 100 * df["dead_bytes"] / df["bytes_offered"]
    df["dup_pct"] = 100 * df["duplicate_bytes"] / df["bytes_offered"]
    return df


def _group_sql() -> str:
    cases = " ".join(f"WHEN ceil(size_bytes / {MSS}) <= {hi} THEN '{lo}–{hi:,}'"
                     for lo, hi in GROUPS if hi is not None)
    lo = GROUPS[-1][0]
    return f"CASE {cases} ELSE '>{lo - 1:,}' END"


GROUP_ORDER = [f"{lo}–{hi:,}" if hi else f">{lo - 1:,}" for lo, hi in GROUPS]


def drop_rates(res: Results, where: str = "TRUE") -> pd.DataFrame:
    """Drop rate per flow-size group (packets of 1460 B): Σ drops / Σ packets of the
    group's flows, in percent (flows.parquet's `drops`: the flow's data packets and probes
    dropped in the network; packets: ⌈size / 1460⌉). 45,000% is 450 drops per packet.
    Also the group's mean slowdown and mean FCT (ms)."""
    return res.sql(f"""
        SELECT scheme, cdf, load, {_group_sql()} AS size_group, count(*) AS flows,
               100.0 * sum(drops) / sum(ceil(size_bytes / {MSS})) AS drop_rate_pct,
               avg(slowdown) AS mean_slowdown, avg(fct_ps) / 1e9 AS mean_fct_ms
        FROM flows WHERE {where} GROUP BY ALL""")


def outstanding_growth(ts: pd.DataFrame, last_start_ps: int, offered_bytes: float) -> dict:
    """Whether the outstanding bytes (timeseries.parquet: over the active flows, the
    bytes not yet acknowledged) grow without bound while flows arrive, on the samples up
    to the last flow's arrival cut in four quarters: `growth` = mean of the last quarter /
    mean of the second (the first is the network filling up from empty); `backlog_share`
    = the slope of a least-squares line over the second half, over the rate at which
    bytes were offered (the share of the offered bytes piling up in the network).
    `grows` when growth ≥ 1.25, the slope is positive and the last quarter never comes
    back down to the first quarter's mean. A stable network fills to a level and stays
    there; a finite run of a heavy-tailed workload still fills for a long while, so the
    verdicts compare loads and schemes on the same flows too."""
    a = ts[ts["time_ps"] <= last_start_ps].sort_values("time_ps")
    y = a["outstanding_bytes"].to_numpy(dtype=float)
    if len(y) < 8:
        return {"growth": np.nan, "backlog_share": np.nan, "grows": False}
    q = np.array_split(y, 4)
    half = a[a["time_ps"] >= last_start_ps / 2]
    slope = np.polyfit(half["time_ps"].to_numpy() / 1e12,
                       half["outstanding_bytes"].to_numpy(dtype=float), 1)[0]
    rate = offered_bytes / (last_start_ps / 1e12)
    growth = q[3].mean() / max(q[1].mean(), 1.0)
    return {"growth": float(growth), "backlog_share": float(slope / rate),
            "grows": bool(growth >= 1.25 and slope > 0 and q[3].min() > q[0].mean())}


def growth_table(res: Results) -> pd.DataFrame:
    """`outstanding_growth` for every run, with its peak outstanding bytes (GB)."""
    ts = res.sql("SELECT hash, time_ps, outstanding_bytes FROM timeseries")
    fl = res.sql("SELECT hash, scheme, cdf, load, seed, max(start_ps) AS last_start_ps, "
                 "sum(size_bytes) AS offered FROM flows GROUP BY ALL")
    rows = []
    for r in fl.itertuples():
        t = ts[ts["hash"] == r.hash]
        rows.append({"scheme": r.scheme, "cdf": r.cdf, "load": r.load, "seed": r.seed,
                     "arrivals_ms": r.last_start_ps / 1e9,
                     "peak_outstanding_gb": t["outstanding_bytes"].max() / 1e9}
                    | outstanding_growth(t, int(r.last_start_ps), float(r.offered)))
    return pd.DataFrame(rows).sort_values(["scheme", "cdf", "load", "seed"]).reset_index(
        drop=True)


def halves_gap(fct_ps: pd.Series) -> float:
    """Stability of a run's mean FCT: |mean of the first half of the flows (by arrival)
    − mean of the second half| / the run's mean. A small gap says the run is long
    enough for its mean."""
    f = fct_ps.to_numpy(dtype=float)
    h = len(f) // 2
    return float(abs(f[:h].mean() - f[h:].mean()) / f.mean()) if h else np.nan


def performance(res: Results) -> pd.DataFrame:
    """Per run: mean FCT (ms), mean slowdown, long flows' (more than 500 packets) mean
    FCT, the halves gap of the mean FCT, dead % and duplicate %."""
    f = res.sql("SELECT hash, scheme, cdf, load, seed, flow_id, size_bytes, fct_ps, slowdown "
                "FROM flows ORDER BY hash, start_ps, flow_id")
    rows = []
    for (h, scheme, cdf, load, seed), g in f.groupby(["hash", "scheme", "cdf", "load",
                                                       "seed"]):
        long = g[g["size_bytes"] > (LONG_PACKETS - 1) * MSS]
        rows.append({"hash": h, "scheme": scheme, "cdf": cdf, "load": load, "seed": seed,
                     "flows": len(g),
                     "unfinished": int(g["fct_ps"].isna().sum()),
                     "mean_fct_ms": g["fct_ps"].mean() / 1e9,
                     "mean_slowdown": mean_slowdown(g),
                     "long_mean_fct_ms": long["fct_ps"].mean() / 1e9,
                     "halves_gap": halves_gap(g["fct_ps"].dropna())})
    s = summaries(res)[["hash", "dead_pct", "dup_pct", "zombie_packets"]]
    order = {n: i for i, n in enumerate(SCHEMES)}
    return (pd.DataFrame(rows).merge(s, on="hash").drop(columns="hash")
            .sort_values(["cdf", "load", "scheme", "seed"], key=lambda c: c.map(order)
                         if c.name == "scheme" else c).reset_index(drop=True))


# ---------------------------------------------------------------------- estimates

def flow_samples(res: Results, where: str = "TRUE") -> pd.DataFrame:
    """Every flow of the sweep in ``res`` (``where`` selects) with its run (`scheme`,
    `cdf`, `load`, `seed`), size group, packets, drops, FCT (ms) and slowdown: the
    samples the claims' estimates are drawn from."""
    return res.sql(f"""
        SELECT scheme, cdf, load, seed, {_group_sql()} AS size_group,
               ceil(size_bytes / {MSS}) AS packets, CAST(drops AS DOUBLE) AS drops,
               fct_ps / 1e9 AS fct_ms, slowdown, size_bytes > {(LONG_PACKETS - 1) * MSS} AS long
        FROM flows WHERE {where} ORDER BY hash, flow_id""")


# ------------------------------------------------------------------------ plotting

def _curves(curves: dict[str, tuple[Any, Any]], path: Path, *, title: str, xlabel: str,
            ylabel: str, logx: bool = False, logy: bool = False) -> list[Path]:
    """Plain lines (no markers) for dense series: CDFs and time series."""
    fig, ax = plots.plt.subplots(figsize=(6.4, 4.0))
    for name, (x, y) in curves.items():
        ax.plot(x, y, label=name, lw=1.4)
    ax.set_xscale("log" if logx else "linear")
    ax.set_yscale("log" if logy else "linear")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return plots.save(fig, path)


def _sweep(mode: Mode, names: tuple[str, ...], workloads: tuple[str, ...],
           loads: tuple[float, ...]) -> dict[str, Any]:
    return {"base_text": BASE, "seeds": mode.seeds,
            "schemes": {n: SCHEMES[n] for n in names},
            "zip": {"workload.cdf": list(workloads),
                    "workload.max_flows": [mode.flows[w] for w in workloads]},
            "grid": {"workload.load": list(loads)}}


def _flows_note(mode: Mode, workloads: tuple[str, ...]) -> str:
    return ", ".join(f"{NAMES[w]} {mode.flows[w]:,}" for w in workloads)


# ------------------------------------------------------------ Figs. 2-7: pFabric

DROPS_PAPER = ("§3: 'the drop rate for the largest group of flows surpasses an astounding "
               "45,000 percent' (Bing, 0.8 load, Fig. 2); Fig. 3: 'Even at 0.6 load, both the "
               "Bing and Aditya workloads experience high drop rates for the long flows.'")
GROWTH_PAPER = ("§3, Figs. 4-6: at 0.8 the outstanding bytes 'steadily increase until the very "
                "end of the simulation'; at 0.6 'the most heavy-tailed workload creates a "
                "starvation scenario ... Under the Bing and Aditya workloads, the simulation "
                "is not a starvation scenario'; 'even at 0.7 load, the datamining workload "
                "creates a starvation scenario'")


def drop_claims(flows: pd.DataFrame, fig: str) -> list[Claim]:
    """Figs. 2 and 3's claims on pFabric's flows at one load (`flow_samples`): a group's
    drop rate, Σ drops / Σ packets of its flows, bootstrapped over the flows (and the
    seeds)."""
    rate = {k: r.ratio_of_sums(0, 1, scale=100) for k, r in resampled_groups(
        flows, ["cdf", "size_group"], ["drops", "packets"], f"turbo_fig{fig}_drops").items()}
    v = []
    for w in ("websearch", "aditya"):
        groups = [g for g in GROUP_ORDER if (w, g) in rate]
        # No flows of the workload: no data, an INCONCLUSIVE claim.
        miss = Estimate.missing()
        short = rate[(w, groups[0])] if groups else miss
        long = rate[(w, groups[-1])] if groups else miss
        if fig == "2" and w == "websearch":
            v.append(claim.at_least(
                "the largest web-search group's drop rate surpasses 45,000% at 0.8 load (450 "
                "drops per packet)", long, 45_000, paper=DROPS_PAPER, paper_value="> 45,000%",
                why=f"group {groups[-1] if groups else '—'} packets, %"))
        v.append(claim.no_more(
            f"{NAMES[w]}: long flows' drop rate far above short flows' (the largest group's "
            "at least 10× the shortest group's: 10× the shortest's no more than the "
            "largest's)", short.scaled(10), long, paper=DROPS_PAPER,
            paper_value="'high drop rates for the long flows'",
            why="drop rate (%) " + ", ".join(f"{g}: {rate[(w, g)].fmt('.3g')}" for g in groups)))
    return v


def _starvation(quick: bool) -> list[Figure]:
    mode = _mode(quick)
    sweep = _sweep(mode, ("pFabric",), WORKLOADS, mode.starvation_loads)
    hi, lo = max(mode.starvation_loads), min(mode.starvation_loads)
    setup = (f"pFabric as §5.2 configures it, flows per run: {_flows_note(mode, WORKLOADS)} "
             f"(the paper: 200,000; 1 million for Figs. 4-5); loads "
             f"{', '.join(map(str, mode.starvation_loads))}; one seed.")

    def drops_fig(load: float, fig: str) -> Figure:
        def analyze(res: Results | None, out: Path) -> tuple[pd.DataFrame, list[Path],
                                                             list[Claim]]:
            assert res is not None
            d = drop_rates(res, f"load = {load} AND cdf IN ('websearch', 'aditya')")
            d["workload"] = d["cdf"].map(NAMES)
            d = d.sort_values(["cdf", "size_group"],
                              key=lambda c: c.map(GROUP_ORDER.index)
                              if c.name == "size_group" else c)
            imgs = []
            for w in ("websearch", "aditya"):
                g = d[d.cdf == w]
                imgs += _bars(g, out / f"turbo_fig{fig}_{w}", logy=True,
                              title=f"pFabric drop rate at {load:.0%} load, {NAMES[w]} "
                                    f"(Turbo Fig. {fig})")
            f = flow_samples(res, f"load = {load} AND cdf IN ('websearch', 'aditya')")
            return d.drop(columns="cdf"), imgs, drop_claims(f, fig)

        return Figure(
            id=f"turbo_fig{fig}_drops", data="runs",
            title=f"Turbo Fig. {fig}: pFabric's drop rate per flow size at {load:.0%} load",
            source=f"Turbo §3 (Fig. {fig})", setup=setup + " Groups by packets of 1460 B.",
            sweep=sweep, analyze=analyze,
            paper=["§3: 'the drop rate for the largest group of flows surpasses an astounding "
                   "45,000 percent' (Bing, 0.8 load, Fig. 2); Fig. 3: 'Even at 0.6 load, both "
                   "the Bing and Aditya workloads experience high drop rates for the long "
                   "flows.'"],
            metrics=[drop_rates])

    def growth_fig() -> Figure:
        def analyze(res: Results | None, out: Path) -> tuple[pd.DataFrame, list[Path],
                                                             list[Claim]]:
            assert res is not None
            g = growth_table(res)
            ts = res.sql("SELECT cdf, load, time_ps, outstanding_bytes FROM timeseries "
                         "ORDER BY cdf, load, time_ps")
            imgs = []
            for load, fig in ((hi, "4"), (lo, "5")):
                t = ts[ts.load == load]
                imgs += _curves({NAMES[w]: (x.time_ps / 1e9, x.outstanding_bytes / 1e9)
                                 for w, x in t.groupby("cdf")},
                                out / f"turbo_fig{fig}_outstanding",
                                title=f"pFabric outstanding bytes, {load:.0%} load "
                                      f"(Turbo Fig. {fig})",
                                xlabel="time (ms)", ylabel="outstanding (GB)")
            mid = sorted(mode.starvation_loads)[len(mode.starvation_loads) // 2]
            t = ts[(ts.cdf == "datamining") & (ts.load == mid)]
            imgs += _curves({f"{NAMES['datamining']}, {mid:.0%}":
                             (t.time_ps / 1e9, t.outstanding_bytes / 1e9)},
                            out / "turbo_fig6_outstanding",
                            title=f"pFabric outstanding bytes, data mining at {mid:.0%} "
                                  "(Turbo Fig. 6)", xlabel="time (ms)",
                            ylabel="outstanding (GB)")
            def said(w: str, load: float) -> str:
                return "; ".join(
                    f"{NAMES[w]} at {load} (seed {r.seed}): growth ×{r.growth:.2f}, backlog "
                    f"{r.backlog_share:+.1%} of the offered rate, "
                    f"{'grows' if r.grows else 'bounded'}"
                    for r in g[(g.cdf == w) & (g.load == load)].itertuples())

            def runs(load: float, workloads: tuple[str, ...], grows: bool) -> dict[str, bool]:
                # Growth is judged on each run's own series: it must hold in every run.
                d = g[(g.load == load) & g.cdf.isin(workloads)]
                return {f"{NAMES[r.cdf]} at {load}, seed {r.seed}": bool(r.grows) == grows
                        for r in d.itertuples()}

            v = [claim.in_every_run(
                     f"at {hi} load the outstanding bytes grow without bound (Fig. 4), every "
                     "workload", runs(hi, WORKLOADS, True),
                     "; ".join(said(w, hi) for w in WORKLOADS), paper=GROWTH_PAPER,
                     paper_value="grows (0.8)"),
                 claim.in_every_run(
                     f"at {lo} load bounded for web search and Aditya, growing for data mining "
                     "(Fig. 5)", runs(lo, ("websearch", "aditya"), False)
                     | runs(lo, ("datamining",), True),
                     "; ".join(said(w, lo) for w in WORKLOADS), paper=GROWTH_PAPER,
                     paper_value="bounded, bounded, grows (0.6)"),
                 claim.in_every_run(f"data mining at {mid} load grows (Fig. 6)",
                                    runs(mid, ("datamining",), True), said("datamining", mid),
                                    paper=GROWTH_PAPER, paper_value="grows (0.7)")]
            return g.drop(columns="scheme"), imgs, v

        return Figure(
            id="turbo_fig4_6_outstanding", data="runs",
            title="Turbo Figs. 4-6: pFabric's outstanding bytes over time",
            source="Turbo §3 (Figs. 4, 5, 6)",
            setup=setup + " Outstanding bytes sampled every 100 µs; `arrivals_ms` is when "
                  "the last flow arrived (the samples the verdict reads).",
            sweep=sweep, analyze=analyze,
            paper=["Fig. 4: 'Under 0.8 load, the network is flooded by packets from long "
                   "flows which are starved by higher priority short flows' — outstanding "
                   "bytes 'steadily increase until the very end of the simulation'.",
                   "Fig. 5: 'Even under a lower 0.6 load, the most heavy-tailed workload "
                   "creates a starvation scenario ... Under the Bing and Aditya workloads, "
                   "the simulation is not a starvation scenario.'",
                   "Fig. 6: 'Even at 0.7 load, the datamining workload creates a starvation "
                   "scenario.'"],
            metrics=[outstanding_growth],
            notes="Growth over a finite run is not instability by itself: a stable network "
                  "offered a heavy-tailed workload fills toward its steady backlog for a long "
                  "time (data mining's largest flows, up to 973 MB, take 0.8 s alone at "
                  "10 Gbps, longer than the arrivals of a quick run last). Compare the loads "
                  "and the `backlog_share`: the share of the offered bytes that piles up.")

    def slowdown_fig() -> Figure:
        def analyze(res: Results | None, out: Path) -> tuple[pd.DataFrame, list[Path],
                                                             list[Claim]]:
            assert res is not None
            d = drop_rates(res)
            d = d.sort_values(["cdf", "load", "size_group"],
                              key=lambda c: c.map(GROUP_ORDER.index)
                              if c.name == "size_group" else c)
            imgs = _bars(d[d.load == hi].assign(workload=d.cdf.map(NAMES)),
                         out / "turbo_fig7_slowdown", y="mean_slowdown", logy=True,
                         ylabel="mean slowdown (FCT / ideal)",
                         title=f"pFabric mean slowdown per flow size, {hi:.0%} load "
                               "(Turbo Fig. 7)")
            # A group's mean slowdown, bootstrapped over its flows (and the seeds).
            f = flow_samples(res, f"load = {hi} AND cdf IN ('websearch', 'aditya')")
            f = f[f["slowdown"].notna()]
            m = {k: r.mean(0) for k, r in resampled_groups(f, ["cdf", "size_group"], ["slowdown"],
                                                     "turbo_fig7_slowdown").items()}
            v = []
            for w in ("websearch", "aditya"):
                groups = [g for g in GROUP_ORDER if (w, g) in m]
                short = m[(w, groups[0])]
                v.append(claim.some(
                    f"{NAMES[w]}, {hi} load: pFabric's long flows (over 500 packets) far from "
                    "ideal (some long group's mean slowdown at least 3, and above the "
                    "shortest group's)",
                    [claim.each(g, [claim.at_least("at least 3", m[(w, g)], 3),
                                    claim.below("above the shortest's", short, m[(w, g)])])
                     for g in groups if g in GROUP_ORDER[3:]],
                    paper="Fig. 7: 'pFabric performs quite far from the ideal for long flows.'",
                    paper_value="(a bar chart, no number)",
                    why="mean slowdown " + ", ".join(f"{g}: {m[(w, g)].fmt('.3g')}"
                                                     for g in groups),
                    label=[g for g in groups if g in GROUP_ORDER[3:]]))
            return d[["cdf", "load", "size_group", "flows", "mean_slowdown", "mean_fct_ms"]], \
                imgs, v

        return Figure(
            id="turbo_fig7_slowdown", data="runs",
            title="Turbo Fig. 7: pFabric's long flows are far from ideal",
            source="Turbo §3 (Fig. 7)", setup=setup + " Mean slowdown per size group.",
            sweep=sweep, analyze=analyze,
            paper=["Fig. 7: 'pFabric performs quite far from the ideal for long flows.'"],
            metrics=[mean_slowdown])

    return [drops_fig(hi, "2"), drops_fig(lo, "3"), growth_fig(), slowdown_fig()]


def _bars(d: pd.DataFrame, path: Path, *, title: str, y: str = "drop_rate_pct",
          logy: bool = False, ylabel: str = "drop rate (%)") -> list[Path]:
    """Bars per flow-size group (one colour per workload)."""
    fig, ax = plots.plt.subplots(figsize=(6.4, 4.0))
    groups = [g for g in GROUP_ORDER if g in set(d["size_group"])]
    hues = list(dict.fromkeys(d["workload"]))
    w = 0.8 / max(len(hues), 1)
    for i, h in enumerate(hues):
        s = d[d.workload == h].set_index("size_group")[y]
        ax.bar(np.arange(len(groups)) + i * w, [s.get(g, np.nan) for g in groups], w, label=h)
    ax.set_xticks(np.arange(len(groups)) + w * (len(hues) - 1) / 2, groups)
    ax.set_yscale("log" if logy else "linear")
    ax.set_xlabel("flow size (packets of 1460 B)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8)
    return plots.save(fig, path)


# -------------------------------------------------------- Figs. 12-13: Turbo vs pFabric

FIG12_PAPER = ("§3: pFabric starves long flows; Turbo, sending at line rate with priorities "
               "alone, is meant not to. §5.2: 'if we are able to lower the dead-packet and "
               "duplicated packet number' Turbo would perform well")
FIG13_PAPER = ("§5.2: 'Turbo still experiences a large number of dead-packets' (Fig. 13a); "
               "'the number of duplicated packets was substantially high in the per-packet "
               "timeout scheme' (Fig. 13b)")


def _comparison(quick: bool) -> list[Figure]:
    mode = _mode(quick)
    wl = ("websearch", "aditya")
    sweep = _sweep(mode, tuple(SCHEMES), wl, mode.loads)
    top = max(mode.loads)
    setup = (f"pFabric (§5.2) and Turbo T1-T4; loads {', '.join(map(str, mode.loads))}; "
             f"flows per run: {_flows_note(mode, wl)} (the paper: 200,000); one seed. "
             "`halves_gap`: how far the mean FCT of the first half of the flows (by arrival) "
             "is from the second half's, relative to the mean (the check that a run is long "
             "enough).")

    def fig12(res: Results | None, out: Path) -> tuple[pd.DataFrame, list[Path],
                                                      list[Claim]]:
        assert res is not None
        p = performance(res)
        imgs = []
        for w in wl:
            g = p[p.cdf == w]
            imgs += plots.lines(g, "load", "mean_fct_ms", "scheme", out / f"turbo_fig12_fct_{w}",
                                title=f"Mean FCT, {NAMES[w]} (Turbo Fig. 12)",
                                ylabel="mean FCT (ms)", logy=True)
            imgs += plots.lines(g, "load", "mean_slowdown", "scheme",
                                out / f"turbo_fig12_slowdown_{w}",
                                title=f"Mean slowdown, {NAMES[w]} (Turbo Fig. 12)",
                                ylabel="mean slowdown")
        # Means of flows bootstrapped over the flows (and seeds) of each run at the top
        # load, drawn alike for every scheme of a cell; the backlog is a run's own number.
        f = flow_samples(res, f"load = {top} AND cdf IN ('websearch', 'aditya') "
                              "AND fct_ps IS NOT NULL")
        by = ["cdf", "scheme"]
        every = resampled_groups(f, by, ["fct_ms", "slowdown"], "turbo_fig12_fct/all")
        long = resampled_groups(f[f["long"]], by, ["fct_ms"], "turbo_fig12_fct/long")
        gr = growth_table(res)
        backlog = per_run_groups(gr[gr.load == top], ["cdf", "scheme"], "backlog_share")
        growth = per_run_groups(gr[gr.load == top], ["cdf", "scheme"], "growth")
        v = []
        for w in wl:
            lm = {s: long[(w, s)].mean(0) if (w, s) in long else Estimate.missing()
                  for s in SCHEMES}
            v.append(claim.some(
                f"{NAMES[w]}, {top} load: Turbo avoids long-flow starvation (some variant's "
                "long flows, over 500 packets, finish faster on average than pFabric's)",
                [claim.below(s, lm[s], lm["pFabric"]) for s in TURBO], paper=FIG12_PAPER,
                paper_value="(the design's aim, no number)",
                why="long-flow mean FCT (ms) " + ", ".join(f"{s} {lm[s].fmt('.3g')}"
                                                          for s in SCHEMES),
                label=list(TURBO)))
            b = {s: backlog[(w, s)] for s in SCHEMES}
            v.append(claim.some(
                f"{NAMES[w]}, {top} load: less backlog piling up under Turbo than under "
                "pFabric (some variant's `backlog_share` below pFabric's)",
                [claim.below(s, b[s], b["pFabric"]) for s in TURBO], paper=FIG12_PAPER,
                paper_value="(no number)",
                why=", ".join(f"{s} {b[s].fmt('+.1%')} (growth ×{growth[(w, s)].fmt('.2f')})"
                              for s in SCHEMES), label=list(TURBO)))
            for col, what in ((0, "mean FCT"), (1, "mean slowdown")):
                e = {s: every[(w, s)].mean(col) for s in SCHEMES}
                v.append(claim.some(
                    f"{NAMES[w]}, {top} load: some Turbo variant's {what} below pFabric's",
                    [claim.below(s, e[s], e["pFabric"]) for s in TURBO], paper=FIG12_PAPER,
                    paper_value="(no number)",
                    why=", ".join(f"{s} {e[s].fmt('.3g')}" for s in SCHEMES),
                    label=list(TURBO)))
        return p, imgs, v

    def fig13(res: Results | None, out: Path) -> tuple[pd.DataFrame, list[Path],
                                                      list[Claim]]:
        assert res is not None
        p = performance(res)[["scheme", "cdf", "load", "seed", "dead_pct", "dup_pct",
                              "zombie_packets"]]
        imgs = []
        for w in wl:
            g = p[p.cdf == w]
            imgs += plots.lines(g, "load", "dead_pct", "scheme", out / f"turbo_fig13a_dead_{w}",
                                title=f"Dead packets, {NAMES[w]} (Turbo Fig. 13a)",
                                ylabel="dead bytes (% of bytes offered)")
            imgs += plots.lines(g, "load", "dup_pct", "scheme", out / f"turbo_fig13b_dup_{w}",
                                title=f"Duplicate packets, {NAMES[w]} (Turbo Fig. 13b)",
                                ylabel="duplicate bytes (% of bytes offered)")
        # Dead and duplicate bytes are each run's own shares (one run with one seed).
        dup = per_run_groups(p, ["cdf", "load", "scheme"], "dup_pct")
        dead = per_run_groups(p, ["cdf", "load", "scheme"], "dead_pct")
        v = []
        for w in wl:
            for s in ("T3", "T4"):
                v.append(claim.each(
                    f"{NAMES[w]}: {s}'s (per-packet timeouts) duplicates above T1's at every "
                    "load", [claim.below(f"{x}", dup[(w, x, "T1")], dup[(w, x, s)])
                             for x in mode.loads], paper=FIG13_PAPER,
                    paper_value="'substantially high' (Fig. 13b)",
                    why="duplicate % " + ", ".join(
                        f"{x}: {dup[(w, x, s)].fmt('.3g')} vs {dup[(w, x, 'T1')].fmt('.3g')}"
                        for x in mode.loads),
                    label=[f"load {x}" for x in mode.loads]))
            hi_loads = [x for x in mode.loads if x >= 0.5]
            v.append(claim.each(
                f"{NAMES[w]}: Turbo's dead % is large (every variant above pFabric's at "
                "every load from 0.5, and some variant over 10% at the top load)",
                [claim.each("above pFabric's from 0.5",
                            [claim.below(f"{s} at {x}", dead[(w, x, "pFabric")], dead[(w, x, s)])
                             for x in hi_loads for s in TURBO],
                            label=[f"{s} at {x}" for x in hi_loads for s in TURBO]),
                 claim.some(f"over 10% at {top}",
                            [claim.at_least(s, dead[(w, top, s)], 10) for s in TURBO],
                            label=list(TURBO))],
                paper=FIG13_PAPER, paper_value="'a large number' (Fig. 13a)",
                why=f"dead % at {top}: " + ", ".join(f"{s} {dead[(w, top, s)].fmt('.3g')}"
                                                     for s in SCHEMES),
                label=["above pFabric's from 0.5", f"over 10% at {top}"]))
        return p, imgs, v

    def table(res: Results | None, out: Path) -> tuple[pd.DataFrame, list[Path],
                                                       list[Claim]]:
        assert res is not None
        p = performance(res)
        loads = [x for x in (0.5, top) if x in mode.loads]
        p = p[p.load.isin(loads)]
        t = p.pivot_table(index=["cdf", "scheme"], columns="load",
                          values=["mean_fct_ms", "mean_slowdown"])
        t.columns = [f"{m}@{x}" for m, x in t.columns]
        order = {n: i for i, n in enumerate(SCHEMES)}
        t = t.reset_index().sort_values(["cdf", "scheme"], key=lambda c: c.map(order)
                                        if c.name == "scheme" else c)
        f = flow_samples(res, "cdf IN ('websearch', 'aditya') AND fct_ps IS NOT NULL AND "
                              "load IN (" + ", ".join(map(str, loads)) + ")")
        fct = {k: r.mean(0) for k, r in resampled_groups(f, ["cdf", "load", "scheme"], ["fct_ms"],
                                                   "turbo_table").items()}
        v = []
        for w in wl:
            for x in loads:
                e = {s: fct[(w, x, s)] for s in SCHEMES}
                v.append(claim.some(
                    f"{NAMES[w]}, {x} load: the best mean FCT is a Turbo variant's (some "
                    "variant's mean FCT below pFabric's; the paper's hope: Turbo beats "
                    "pFabric)", [claim.below(s, e[s], e["pFabric"]) for s in TURBO],
                    paper="§5.2, §6: Turbo's inefficiencies (dead and duplicate packets) "
                          "are open problems", paper_value="(no number)",
                    why="mean FCT (ms) " + ", ".join(f"{s} {e[s].fmt('.3g')}" for s in SCHEMES),
                    label=list(TURBO)))
        return t.reset_index(drop=True), [], v

    base = dict(data="runs", sweep=sweep, source="Turbo §5.2 (Figs. 12, 13)")
    return [
        Figure(id="turbo_fig12_fct", title="Turbo Fig. 12: mean FCT and mean slowdown vs load",
               setup=setup, analyze=fig12, metrics=[halves_gap, outstanding_growth],
               notes="In quick mode a second seed (pFabric and T2 at 0.8, both workloads) "
                     "moved the mean FCT by under 3% against a 12-15% gap between the two; "
                     "`halves_gap` is largest for Turbo at 0.8, whose later flows meet a "
                     "fuller network.",
               paper=["§5: mean slowdown measures latency (dominated by short flows), mean "
                      "FCT throughput (dominated by long flows). §3: pFabric starves long "
                      "flows; Turbo, sending at line rate with priorities alone, is meant not "
                      "to. §5.2: 'we were able to observe the trend that if we are able to "
                      "lower the dead-packet and duplicated packet number' Turbo would perform "
                      "well (no number given)."], **base),
        Figure(id="turbo_fig13_waste", title="Turbo Fig. 13: dead and duplicate packets vs load",
               setup=setup + " Dead % = dead_bytes / bytes_offered (summary.json: bytes hosts "
               "sent and no host received), duplicate % = duplicate_bytes / bytes_offered.",
               analyze=fig13, metrics=[summaries],
               paper=["§5.2: 'Turbo still experiences a large number of dead-packets' (Fig. "
                      "13a); 'the number of duplicated packets was substantially high in the "
                      "per-packet timeout scheme' (Fig. 13b)."], **base),
        Figure(id="turbo_table", title="Turbo vs pFabric: mean FCT (ms) and mean slowdown",
               setup=setup + " Columns: metric@load.", analyze=table,
               paper=["§5.2, §6: Turbo's inefficiencies (dead and duplicate packets) are open "
                      "problems; the paper gives no numbers for Fig. 12."], **base),
    ]


# --------------------------------- pFabric, cut-through and the load's count (issue 37)

# Flow sizes as the pFabric group's papers bucket them (KB = 1024 B, as everywhere here).
SIZE_BUCKETS = ((10 << 10, "≤10 KB"), (100 << 10, "10-100 KB"), (1 << 20, "0.1-1 MB"),
                (10 << 20, "1-10 MB"), (None, ">10 MB"))
CUT_THROUGH_LOADS = (0.5, 0.8)
VARIANTS = {(False, "payload"): "store-and-forward, load on payload",
            (False, "wire"): "store-and-forward, load on the wire",
            (True, "payload"): "cut-through, load on payload",
            (True, "wire"): "cut-through, load on the wire"}


def slowdown_by_size(res: Results) -> pd.DataFrame:
    """Per run (load, `cut_through`, `load_on`) and flow-size bucket (SIZE_BUCKETS, KB =
    1024 B): flows, mean and 99th-percentile slowdown (flows.parquet's `slowdown`: FCT
    over the ideal FCT of the flow alone, which follows cut-through when it is on), mean
    FCT (µs). The bucket `all` is every flow of the run."""
    cases = " ".join(f"WHEN size_bytes <= {hi} THEN '{name}'"
                     for hi, name in SIZE_BUCKETS if hi is not None)
    f = res.sql(f"""
        SELECT load, cut_through, load_on, CASE {cases} ELSE '{SIZE_BUCKETS[-1][1]}' END
               AS bucket, slowdown, fct_ps
        FROM flows WHERE slowdown IS NOT NULL ORDER BY hash, flow_id""")
    order = [name for _, name in SIZE_BUCKETS] + ["all"]
    rows = []
    for (load, ct, on), g in f.groupby(["load", "cut_through", "load_on"]):
        for b, h in [*g.groupby("bucket"), ("all", g)]:
            rows.append({"load": load, "cut_through": bool(ct), "load_on": on, "bucket": b,
                         "flows": len(h), "mean_slowdown": h["slowdown"].mean(),
                         "p99_slowdown": float(np.percentile(h["slowdown"], 99)),
                         "mean_fct_us": h["fct_ps"].mean() / 1e6})
    return (pd.DataFrame(rows)
            .sort_values(["load", "cut_through", "load_on", "bucket"],
                         key=lambda c: c.map(order.index) if c.name == "bucket" else c)
            .reset_index(drop=True))


def cut_through_claims(res: Results) -> list[Claim]:
    """Cut-through shortens the smallest flows (a header time instead of a serialization
    at each hop that can cut through), and counting the load on the wire (fewer flows for
    the same nominal load) lets the largest ones finish sooner: means bootstrapped over
    the flows and seeds of each load, draws keyed by the load and bucket."""
    cases = " ".join(f"WHEN size_bytes <= {hi} THEN '{name}'"
                     for hi, name in SIZE_BUCKETS if hi is not None)
    f = res.sql(f"""
        SELECT load, cut_through, load_on, seed, CASE {cases} ELSE '{SIZE_BUCKETS[-1][1]}'
               END AS bucket, slowdown, fct_ps / 1e6 AS fct_us
        FROM flows WHERE slowdown IS NOT NULL ORDER BY hash, flow_id""")
    f["variant"] = [f"{ct}/{on}" for ct, on in zip(f.cut_through, f.load_on, strict=True)]
    small, large = SIZE_BUCKETS[0][1], SIZE_BUCKETS[-1][1]
    fct = {k: r.mean(0) for k, r in resampled_groups(
        f[f.bucket == small], ["load", "variant"], ["fct_us"], "turbo_cut_through/small",
        alike="variant").items()}
    sd = {k: r.mean(0) for k, r in resampled_groups(
        f[f.bucket == large], ["load", "variant"], ["slowdown"], "turbo_cut_through/large",
        alike="variant").items()}
    loads = sorted(f["load"].unique())
    miss = Estimate.missing()

    def at_every_load(text: str, est: dict, ours: str, theirs: str, paper: str,
                      unit: str = "") -> Claim:
        a = {x: est.get((x, ours), miss) for x in loads}
        b = {x: est.get((x, theirs), miss) for x in loads}
        return claim.each(
            text, [claim.below(f"load {x:g}", a[x], b[x]) for x in loads], paper=paper,
            label=[f"load {x:g}" for x in loads],
            why="; ".join(f"load {x:g}: {a[x].fmt()} against {b[x].fmt()}{unit}"
                          for x in loads))

    return [
        at_every_load("cut-through shortens flows up to 10 KB: their mean FCT below "
                      "store-and-forward's at every load (load on payload)",
                      fct, "True/payload", "False/payload",
                      "Turbo §5.1.2: the pFabric group's simulator forwards cut-through", " µs"),
        at_every_load("counting the load on the wire offers fewer flows, and flows over 10 MB "
                      "finish sooner: their mean slowdown below the payload count's "
                      "(store-and-forward)", sd, "False/wire", "False/payload",
                      "Turbo §5.1.2: the group's simulator counts the load in 1500 B packets"),
    ]


def slowdown_by_size_plot(t: pd.DataFrame, path: Path, *, title: str) -> list[Path]:
    """Mean slowdown per size bucket, a panel per load, a bar per (switching, load
    count)."""
    loads = sorted(t["load"].unique())
    fig, axes = plots.plt.subplots(1, len(loads), figsize=(5.2 * len(loads), 3.8),
                                   sharey=True, squeeze=False)
    buckets = [name for _, name in SIZE_BUCKETS]
    w = 0.8 / len(VARIANTS)
    for ax, load in zip(axes[0], loads, strict=True):
        for i, ((ct, on), label) in enumerate(VARIANTS.items()):
            s = t[(t.load == load) & (t.cut_through == ct) & (t.load_on == on)]
            s = s.set_index("bucket")["mean_slowdown"]
            ax.bar(np.arange(len(buckets)) + i * w, [s.get(b, np.nan) for b in buckets], w,
                   label=label, hatch="//" if ct else None, alpha=0.9)
        ax.set_xticks(np.arange(len(buckets)) + w * (len(VARIANTS) - 1) / 2, buckets,
                      fontsize=8)
        ax.set_title(f"load {load}")
        ax.set_xlabel("flow size")
        ax.grid(alpha=0.3, axis="y")
    axes[0][0].set_ylabel("mean slowdown (FCT / ideal)")
    axes[0][0].legend(fontsize=7)
    fig.suptitle(title)
    return plots.save(fig, path)


def _cut_through(quick: bool) -> Figure:
    mode = _mode(quick)
    flows = mode.flows["websearch"]
    loads = [x for x in CUT_THROUGH_LOADS if x in mode.loads] or [max(mode.loads)]
    sweep = {"base_text": BASE, "seeds": mode.seeds, "schemes": {"pFabric": PFABRIC},
             "set": {"workload.cdf": "websearch", "workload.max_flows": flows},
             "grid": {"workload.load": loads,
                      "switch.cut_through": [False, True],
                      "workload.load_on": ["payload", "wire"]}}

    def analyze(res: Results | None, out: Path) -> tuple[pd.DataFrame, list[Path],
                                                         list[Claim]]:
        assert res is not None
        t = slowdown_by_size(res)
        imgs = slowdown_by_size_plot(
            t[t.bucket != "all"], out / "turbo_cut_through",
            title="pFabric on pfabric144, web search: slowdown by flow size")
        return t, imgs, cut_through_claims(res)

    return Figure(
        id="turbo_cut_through",
        title="pFabric on pfabric144: store-and-forward vs cut-through, load on payload "
              "vs on the wire",
        source="Turbo §5.1 (pFabric's setup, the pFabric group's simulator); issue 37",
        setup=f"pFabric as §5.2 configures it on pfabric144 without framing (1500 B "
              f"packets), web search, {flows:,} flows a run, loads "
              f"{', '.join(map(str, loads))}, one seed; each load with "
              "`switch.cut_through` off and on, and `workload.load_on` = payload (Spillway's "
              "load: the flows' payload) and wire (the pFabric simulator's: their 1500 B "
              "packets: about 1500/1460 of the payload), so the same nominal load offers ~2.7% "
              "fewer flows on the wire. Slowdown = FCT / ideal FCT, the ideal following "
              "cut-through when it is on. The claims are what the two settings do; the "
              "comparison with that simulator is in docs/sweeps.md § pFabric on pfabric144.",
        sweep=sweep, analyze=analyze, data="cut_through",
        notes="Full mode, seed 1 (docs/sweeps.md, beside the pFabric group's simulator): "
              "counting the load on the wire offers 2.7% fewer bytes and speeds flows over "
              "10 MB by 3-5%; cut-through speeds flows up to 10 KB by 3-5% (only the spine and "
              "the last leaf can cut through: a 10 Gbps host link into a 40 Gbps uplink "
              "cannot) and moves longer flows by under 1%.",
        paper=["Turbo §2.1.2: cut-through switching is one reason datacenter latency falls; "
               "§5.1.2: the group's own simulator (forwarding cut-through, its load counted "
               "in 1500 B packets) ran pFabric and Turbo."],
        metrics=[slowdown_by_size])


def figures(quick: bool) -> list[Figure]:
    return [_fig1(), *_starvation(quick), *_comparison(quick), _cut_through(quick)]
