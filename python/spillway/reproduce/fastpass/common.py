"""What the Fastpass reproduction's figures share: the setup's constants, the
scenarios, the paper's numbers and the analysis helpers (tested one by one)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from spillway import plots, schemes
from spillway.errors import ScenarioError
from spillway.intervals import Estimate
from spillway.store import Results

TITLE = "Fastpass: a centralized zero-queue datacenter network (Fastpass §5, §7, Appendix)"

LINK_BPS = 10e9
MSS = 1460
WIRE = 1538  # a full segment on the wire: 1460 + 40 B TCP/IP + 38 B framing
RESERVE = 0.01  # fastpass.control_reserve: a timeslot is a frame's time x 1.01
# Goodput of one saturated flow (Exp C's C): a segment per frame time, and under
# Fastpass a segment per timeslot.
C_BASELINE = LINK_BPS * MSS / WIRE
C_FASTPASS = C_BASELINE / (1 + RESERVE)
KIB = 1024  # the simulator's KB (5376KB = 5,505,024 B)

# Exp A/B: the star of 7 (§7.1: four senders, a receiver, a fifth machine pinging it,
# and a server set aside for the arbiter).
SENDERS_A = (0, 1, 2, 3)
RECEIVER_A = 4
PINGER = 5
ARBITER = 6
SECONDARY = 7  # the failover run's eighth host
FLOWS_PER_SENDER = 20  # §7.1: "20 TCP flows per sender" (iperf)
# Exp C: five senders, a sixth receiving, the arbiter on the seventh.
SENDERS_C = 5
RECEIVER_C = 5

BASE = """
[topology]
kind = "star"
hosts = {hosts}
link_delay = "500ns"

[switch]
buffer = "5376KB"

[transport]
kind = "cubic"
rto_min = "200ms"
"""

CUBIC = schemes.scheme("CUBIC").overrides({"transport.rto_min": "200ms"})
FASTPASS = schemes.scheme("Fastpass").overrides({"transport.rto_min": "200ms",
                                                 "fastpass.arbiter": ARBITER})
AB_RUNS: dict[str, dict[str, Any]] = {
    "baseline": CUBIC,
    # The simulator's default RTOmin, 1 ms: what the baseline does without Linux's.
    "baseline (RTOmin 1 ms)": CUBIC | {"transport.rto_min": "1ms"},
    "Fastpass": FASTPASS,
    "Fastpass, jitter 2 µs": FASTPASS | {"fastpass.jitter": "2us"},
    "Fastpass, jitter 5 µs": FASTPASS | {"fastpass.jitter": "5us"},
}
FP_RUNS = tuple(n for n in AB_RUNS if n.startswith("Fastpass"))
PCTS = ("p50", "p90", "p99", "p999")
PCT_NAMES = {"p50": "median", "p90": "90th", "p99": "99th", "p999": "99.9th"}

# The paper's numbers (§7.1-7.2), typed in.
PAPER_QUEUE_KB = {"baseline": (4351, 5097, 5224, 5239), "Fastpass": (18, 36, 53, 305)}
PAPER_PING_MS = {"baseline": (3.56, 3.89, 3.92, 3.95), "Fastpass": (0.23, 0.27, 0.32, 0.38)}
PAPER_GOODPUT_GBPS = {"baseline": 9.43, "Fastpass": 9.28}
PAPER_SPREAD_MBPS = {3: (543.86, 15.89), 4: (628.49, 0.146), 5: (459.75, 0.087)}


@dataclass(frozen=True)
class Mode:
    """How much a reproduction runs (all times in ms): Exp A/B's run length and the
    warm-up its steady goodput skips, Exp C's phase, Exp E's sweep runs, Exp E's lossy
    runs (Exp C's flows at a shorter phase, and Poisson web-search flows), the failover
    run, and the Appendix's fabric sizes and measured timeslots."""

    duration_ms: int
    warmup_ms: int
    phase_ms: int
    overhead_ms: int
    loss_phase_ms: int
    loss_flows: int
    failover_ms: int
    appendix_endpoints: tuple[int, ...]
    appendix_timeslots: int = 50_000


QUICK = Mode(duration_ms=300, warmup_ms=50, phase_ms=100, overhead_ms=100, loss_phase_ms=5,
             loss_flows=200, failover_ms=100, appendix_endpoints=(16,))
FULL = Mode(duration_ms=10_000, warmup_ms=50, phase_ms=1000, overhead_ms=1000,
            loss_phase_ms=20, loss_flows=2000, failover_ms=1000, appendix_endpoints=(16, 32))


def _mode(quick: bool) -> Mode:
    return QUICK if quick else FULL


# --------------------------------------------------------------------- scenarios

def exp_a_flows() -> list[dict[str, Any]]:
    """Exp A's bulk flows: 20 per sender from hosts 0-3 to host 4, 1 GB each (never
    finishing), flow i from host i mod 4 starting 5 µs after flow i − 1."""
    n = len(SENDERS_A) * FLOWS_PER_SENDER
    return [{"src": SENDERS_A[i % len(SENDERS_A)], "dst": RECEIVER_A, "size": "1GB",
             "start": f"{5 * i}us"} for i in range(n)]


def _flows_toml(flows: Sequence[dict[str, Any]]) -> str:
    def val(v: Any) -> str:
        return json.dumps(v) if isinstance(v, str) else str(v)
    rows = ",\n".join("  {" + ", ".join(f"{k} = {val(v)}" for k, v in f.items()) + "}"
                      for f in flows)
    return f"flows = [\n{rows},\n]\n"


def exp_a_text(duration_ms: int, hosts: int = 7) -> str:
    """Exp A/B's base scenario (the baseline: CUBIC, Linux's 200 ms RTOmin): the bulk
    flows, a ping from host 5 to the receiver every 1 ms from 5 ms, the receiver's queue
    sampled every 100 µs and every flow's goodput every 1 ms."""
    return (BASE.format(hosts=hosts) + f"""
[ping]
src = {PINGER}
dst = {RECEIVER_A}
interval = "1ms"
start = "5ms"

[run]
duration = "{duration_ms}ms"
queue_sample_interval = "100us"
flow_throughput_interval = "1ms"

[workload]
kind = "trace"
""" + _flows_toml(exp_a_flows()))


def phase_counts(senders: int = SENDERS_C) -> list[int]:
    """Flows active in each phase of Exp C: one more per phase up to ``senders``, then one
    fewer per phase: 1, 2, 3, 4, 5, 4, 3, 2, 1 for five senders (2·senders − 1 phases)."""
    if senders < 1:
        raise ScenarioError("senders", str(senders), "expected at least one sender")
    return [min(k + 1, senders, 2 * senders - 1 - k) for k in range(2 * senders - 1)]


def fair_share_bytes(flow: int, phase_ps: int, rate_bps: float,
                     senders: int = SENDERS_C) -> int:
    """The payload bytes that make flow ``flow`` of Exp C leave at the end of its
    ``senders``-th phase under perfect fair sharing: flow i starts at i·P and is active in
    phases i .. i + senders − 1, in each of which it carries rate·P / n(phase) bits
    (``phase_counts``), so bytes = rate/8 · P · Σ 1/n(k), rounded down."""
    if not 0 <= flow < senders:
        raise ScenarioError("flow", str(flow), f"expected a flow of 0..{senders - 1}")
    if phase_ps <= 0:
        raise ScenarioError("phase_ps", str(phase_ps), "expected a positive phase")
    if not rate_bps > 0:
        raise ScenarioError("rate_bps", str(rate_bps), "expected a positive rate")
    n = phase_counts(senders)
    share = sum(1 / n[k] for k in range(flow, flow + senders))
    return int(rate_bps / 8 * phase_ps / 1e12 * share)


def exp_c_flows(phase_ms: float, rate_bps: float) -> list[dict[str, Any]]:
    """Exp C's flows: sender i to host 5 from i·P with its fair-share bytes."""
    p = round(phase_ms * 1e9)
    return [{"src": i, "dst": RECEIVER_C, "size": fair_share_bytes(i, p, rate_bps),
             "start": f"{round(i * phase_ms * 1000)}us"} for i in range(SENDERS_C)]


def exp_c_text() -> str:
    return BASE.format(hosts=7) + """
[run]
flow_throughput_interval = "1ms"

[workload]
kind = "trace"
"""


def exp_c_runs(phase_ms: float) -> dict[str, dict[str, Any]]:
    """The baseline and Fastpass on Exp C's flows, each sized with its own single-flow
    goodput (C: a segment per frame time, and per timeslot under Fastpass)."""
    return {"baseline": CUBIC | {"workload.flows": exp_c_flows(phase_ms, C_BASELINE)},
            "Fastpass": FASTPASS | {"workload.flows": exp_c_flows(phase_ms, C_FASTPASS)}}


# Exp E's lossy runs: each run names its topology (a star's keys and a leaf-spine's
# differ); the run ends when its last flow finishes (5 s is only a safety net).
LOSS_BASE = """
[switch]
buffer = "5376KB"
[transport]
kind = "cubic"
rto_min = "200ms"
[host]
qdisc = "fastpass"
[run]
duration = "5s"
"""


# ------------------------------------------------------------------ estimates

def one_run(value: float) -> Estimate:
    """A per-run number (a queue percentile, a goodput, a count) of a figure's single
    run: no interval can be had. The runs are deterministic, and but for the jittered
    ones and the Poisson web search, the same whatever their seed (a second seed gives
    the same counters), so more seeds would not give one either."""
    return Estimate.exact(value, "one run", n=1, seeds=1)


# ------------------------------------------------------------------ helpers

def summaries(res: Results) -> pd.DataFrame:
    """Every done point's axes with its summary.json numbers (the `fastpass_*` counters,
    `host_sent_data_wire_bytes`, `bytes_delivered`, ...)."""
    pts = res.sql("SELECT * FROM points WHERE status = 'done'")
    rows = []
    for p in pts.to_dict("records"):
        s = json.loads((res.out / "points" / p["hash"] / "summary.json").read_text())
        rows.append(p | {k: v for k, v in s.items() if isinstance(v, int | float)})
    return pd.DataFrame(rows)


def fcp_shares(summary: dict[str, Any]) -> dict[str, float]:
    """Control traffic as a share of data traffic (Fastpass §7.3, Exp E), in percent of
    the wire bytes of data the hosts sent (`host_sent_data_wire_bytes`: segments with
    their headers and framing): `to_arbiter_pct` (FCP reports, resets' acks),
    `to_endpoint_pct` (allocations, resets), `watchdog_pct` (between arbiters). FCP
    bytes are wire bytes too: IP header, FCP message, framing."""
    data = summary["host_sent_data_wire_bytes"]
    if data <= 0:
        raise ScenarioError("host_sent_data_wire_bytes", str(data),
                            "no data sent: no share of it can be taken")
    return {"to_arbiter_pct": 100 * summary["fastpass_fcp_to_arbiter_bytes"] / data,
            "to_endpoint_pct": 100 * summary["fastpass_fcp_to_endpoint_bytes"] / data,
            "watchdog_pct": 100 * summary["fastpass_watchdog_bytes"] / data}


def window_goodput(ft: pd.DataFrame, start_ps: int, end_ps: int) -> float:
    """Goodput (bit/s) over (start_ps, end_ps] from flow_throughput.parquet rows
    (payload bytes newly acknowledged, summed over flows): the rows whose intervals end
    after start_ps and by end_ps, over the window's length. ``start_ps`` should be a
    sample time (the rows' intervals then tile the window)."""
    if end_ps <= start_ps:
        raise ScenarioError("end_ps", str(end_ps), f"expected a window end after {start_ps}")
    t = ft["time_ps"]
    b = ft.loc[(t > start_ps) & (t <= end_ps), "bytes"].sum()
    return float(b * 8e12 / (end_ps - start_ps))


def flow_spans(ft: pd.DataFrame, flows: pd.DataFrame) -> pd.DataFrame:
    """Each flow's span in flow_throughput.parquet: `start_ps` (flows.parquet) to `end_ps`,
    the time of its last row (its record written: last byte acknowledged, or the run's
    end)."""
    end = ft.groupby("flow_id")["time_ps"].max().rename("end_ps")
    return flows[["flow_id", "start_ps"]].merge(end, on="flow_id")


def _stable_intervals(ft: pd.DataFrame, spans: pd.DataFrame,
                      interval_ps: int) -> pd.DataFrame:
    """Per sample time t (a multiple of the interval): the flows active for the whole
    interval (t − I, t] when no other flow was active during any part of it, with each
    flow's goodput in Mbit/s; rows of unstable intervals are left out."""
    # Signed times: t - interval must not wrap (the store's columns are unsigned).
    ft = ft.astype({"time_ps": "int64", "flow_id": "int64"})
    times = np.unique(ft["time_ps"][ft["time_ps"] % interval_ps == 0])
    s0 = spans["start_ps"].to_numpy(dtype=np.int64)
    s1 = spans["end_ps"].to_numpy(dtype=np.int64)
    ids = spans["flow_id"].to_numpy(dtype=np.int64)
    b = ft.groupby(["time_ps", "flow_id"])["bytes"].sum()
    rows = []
    for t in times:
        full = ids[(s0 <= t - interval_ps) & (s1 >= t)]
        part = ids[(s0 < t) & (s1 > t - interval_ps)]
        if len(full) == 0 or len(full) != len(part):
            continue
        for f in full:
            rows.append({"time_ps": int(t), "flow_id": int(f),
                         "mbps": float(b.get((t, f), 0)) * 8e12 / interval_ps / 1e6})
    return pd.DataFrame(rows, columns=["time_ps", "flow_id", "mbps"])


def interval_spread(ft: pd.DataFrame, spans: pd.DataFrame, interval_ps: int) -> pd.DataFrame:
    """Fastpass §7.2 (Exp C): per interval, the standard deviation (population, ddof 0)
    of the active flows' goodputs in Mbit/s, over the intervals in which exactly the same
    n flows were active from start to end (no flow joined or left during it). Columns
    `time_ps` (the interval's end), `n`, `std_mbps`, `mean_mbps`. A flow's goodput is
    its payload bytes newly acknowledged in the interval (flow_throughput.parquet)."""
    if interval_ps <= 0:
        raise ScenarioError("interval_ps", str(interval_ps), "expected a positive interval")
    st = _stable_intervals(ft, spans, interval_ps)
    if st.empty:
        return pd.DataFrame(columns=["time_ps", "n", "std_mbps", "mean_mbps"])
    g = st.groupby("time_ps")["mbps"]
    return pd.DataFrame({"n": g.size(), "std_mbps": g.std(ddof=0),
                         "mean_mbps": g.mean()}).reset_index()


def coarsen(ft: pd.DataFrame, interval_ps: int, factor: int) -> pd.DataFrame:
    """flow_throughput rows of ``interval_ps`` summed into intervals ``factor`` times
    longer (each row into the coarse interval that holds its end; a flow's last, partial
    row is dropped): the same goodput at a coarser grain, for `interval_spread` with
    ``interval_ps * factor``."""
    if factor < 1:
        raise ScenarioError("factor", str(factor), "expected a factor of at least 1")
    d = ft[ft["time_ps"] % interval_ps == 0].astype({"time_ps": "int64"})
    big = interval_ps * factor
    d["time_ps"] = -(-d["time_ps"] // big) * big  # the coarse interval's end
    return d.groupby(["time_ps", "flow_id"], as_index=False)["bytes"].sum()


def median_spread(spread: pd.DataFrame, n: int) -> tuple[float, int]:
    """The median of `interval_spread`'s standard deviations over the intervals with n
    flows (§7.2: 'the median over all standard deviations for a given number of
    connections'), and how many intervals it is over (NaN, 0 when none)."""
    s = spread.loc[spread["n"] == n, "std_mbps"]
    return (float(s.median()) if len(s) else float("nan")), int(len(s))


def join_convergence(ft: pd.DataFrame, spans: pd.DataFrame, interval_ps: int,
                     tol: float = 0.10) -> pd.DataFrame:
    """For every flow that joins others (all but the first to start): how many whole
    intervals after its start its goodput first comes within ``tol`` of the fair share
    (the interval's total goodput of the active flows over their number), counting the
    first whole interval after the join as 0 (§7.2: Fastpass converges 'immediately');
    only intervals before the next join or leave (`interval_spread`'s stable ones).
    Columns `flow_id`, `n`, `intervals` (stable intervals in that phase),
    `first_share` (the flow's goodput over the fair share in the first of them),
    `first_within` (NaN: never), `share_within` (the phase's intervals within tol) and
    `share_after` (of the intervals from `first_within` on, those within tol)."""
    st = _stable_intervals(ft, spans, interval_ps)
    events = np.sort(np.concatenate([spans["start_ps"], spans["end_ps"]]))
    first = spans["start_ps"].min()
    rows = []
    for r in spans.sort_values("start_ps").itertuples():
        if r.start_ps == first:
            continue
        nxt = events[events > r.start_ps]
        until = nxt[0] if len(nxt) else np.iinfo(np.int64).max
        phase = st[(st["time_ps"] - interval_ps >= r.start_ps) & (st["time_ps"] <= until)]
        mine = phase[phase["flow_id"] == r.flow_id].set_index("time_ps")["mbps"]
        row: dict[str, Any] = {"flow_id": r.flow_id, "n": 0, "intervals": 0,
                               "first_share": np.nan, "first_within": np.nan,
                               "share_within": np.nan, "share_after": np.nan}
        if not mine.empty:
            share = phase.groupby("time_ps")["mbps"].mean()[mine.index]
            ok = ((mine - share).abs() <= tol * share).to_numpy()
            k = (mine.index.to_numpy() - r.start_ps) // interval_ps - 1
            hit = k[ok]
            row |= {"n": int(phase.groupby("time_ps").size().iloc[0]),
                    "intervals": len(mine), "first_share": float(mine.iloc[0] / share.iloc[0]),
                    "share_within": float(ok.mean())}
            if len(hit):
                row |= {"first_within": float(hit.min()),
                        "share_after": float(ok[k >= hit.min()].mean())}
        rows.append(row)
    return pd.DataFrame(rows)


def recovery_ms(series: pd.Series, fail_ps: int, window_ps: int, level: float,
                frac: float = 0.9) -> float:
    """Time (ms) from ``fail_ps`` until the goodput series (bit/s per interval, indexed by
    the interval's end) first averages at least ``frac`` × ``level`` over the next
    ``window_ps`` (a rolling window smooths the bursts of ACKs that arrive a batch at a
    time): the start of that window minus the failure. NaN if it never does."""
    s = series.sort_index()
    step = int(np.median(np.diff(s.index.to_numpy()))) if len(s) > 1 else window_ps
    k = max(1, round(window_ps / step))
    roll = s.rolling(k).mean().shift(-(k - 1))  # mean of this interval and the next k-1
    after = roll[(s.index.to_numpy() - step >= fail_ps) & roll.notna().to_numpy()]
    good = after[after >= frac * level]
    if good.empty:
        return float("nan")
    return (int(good.index[0]) - step - fail_ps) / 1e9


# ------------------------------------------------------------------ plotting

def _symlog_bars(d: pd.DataFrame, path: Path, *, groups: Sequence[str], hue: str,
                 y: str, title: str, ylabel: str, xlabels: Sequence[str]) -> list[Path]:
    """Bars of ``y`` for each ``groups`` value (x) and ``hue`` value, on a symlog axis
    (linear below 1, so a zero shows as no bar)."""
    fig, ax = plots.plt.subplots(figsize=(7.4, 4.2))
    hues = list(dict.fromkeys(d[hue]))
    w = 0.84 / max(len(hues), 1)
    for i, h in enumerate(hues):
        s = d[d[hue] == h].set_index("x")[y]
        hatch = "//" if h.startswith("paper") else None
        ax.bar(np.arange(len(groups)) + i * w, [s.get(g, np.nan) for g in groups], w,
               label=h, hatch=hatch, edgecolor="0.3" if hatch else None)
    ax.set_xticks(np.arange(len(groups)) + w * (len(hues) - 1) / 2, list(xlabels))
    ax.set_yscale("symlog", linthresh=1)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return plots.save(fig, path)


def _throughput_panels(panels: dict[str, pd.DataFrame], path: Path, *, title: str,
                       vlines: Sequence[float] = ()) -> list[Path]:
    """Per-flow goodput time series (Gbit/s against ms), one panel per run (Fig. 9)."""
    fig, axes = plots.plt.subplots(len(panels), 1, figsize=(7.4, 2.6 * len(panels)),
                                   sharex=True)
    axes = np.atleast_1d(axes)
    for ax, (name, d) in zip(axes, panels.items(), strict=True):
        for f, g in d.sort_values("time_ps").groupby("flow_id"):
            ax.plot(g["time_ps"] / 1e9, g["gbps"], lw=1.0, label=f"flow {f}")
        for x in vlines:
            ax.axvline(x, ls=":", lw=0.8, color="gray")
        ax.set_title(name, fontsize=9)
        ax.set_ylabel("Gbit/s")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7, ncol=5, loc="upper right")
    axes[-1].set_xlabel("time (ms)")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return plots.save(fig, path)


# ------------------------------------------------------------ Exp A and B

def _slash(row: pd.Series, digits: int) -> str:
    return "/".join(f"{row[f'{q}_ms']:.{digits}f}" for q in PCTS)
