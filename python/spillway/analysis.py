"""Metrics the papers report, each defined once here (its docstring is its definition,
and reports quote it). Inputs are DataFrames from ``spillway.open(DIR)`` or Parquet.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from spillway import _core

PS_PER_S = 1e12


def percentile(values: pd.Series | np.ndarray, q: float) -> float:
    """The q-th percentile (0-100) with linear interpolation between order statistics
    (NumPy's default, DuckDB's ``quantile_cont``); NaN for no values."""
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    return float(np.percentile(v, q)) if len(v) else float("nan")


def fct_percentiles(flows: pd.DataFrame, by: Sequence[str] = (),
                    qs: Sequence[float] = (50, 99, 99.9),
                    size_buckets: Sequence[int] | None = None) -> pd.DataFrame:
    """FCT percentiles (ps) of finished flows, grouped by ``by`` columns and, if given,
    by flow-size bucket: ``size_buckets`` are bucket edges in bytes, a flow of size s
    falls in (edges[i-1], edges[i]]. Unfinished flows are excluded (count them with
    ``unfinished_share``)."""
    df = flows[flows["fct_ps"].notna()].copy()
    keys = list(by)
    if size_buckets is not None:
        df["size_bucket"] = pd.cut(df["size_bytes"], [0, *size_buckets], right=True)
        keys.append("size_bucket")
    if not keys:
        return pd.DataFrame([{f"p{q:g}": percentile(df["fct_ps"], q) for q in qs}
                             | {"flows": len(df)}])
    rows = []
    for k, g in df.groupby(keys, observed=True):
        k = k if isinstance(k, tuple) else (k,)
        rows.append(dict(zip(keys, k, strict=True))
                    | {f"p{q:g}": percentile(g["fct_ps"], q) for q in qs} | {"flows": len(g)})
    return pd.DataFrame(rows)


def mean_slowdown(flows: pd.DataFrame, by: Sequence[str] = ()) -> pd.DataFrame | float:
    """Mean of FCT / ideal FCT over finished flows (ideal: the flow alone on its path at
    line rate, see docs/outputs.md)."""
    df = flows[flows["slowdown"].notna()]
    if not by:
        return float(df["slowdown"].mean())
    return df.groupby(list(by), observed=True)["slowdown"].mean().reset_index()


def qct_percentiles(queries: pd.DataFrame, by: Sequence[str] = (),
                    qs: Sequence[float] = (50, 99, 99.9)) -> pd.DataFrame:
    """Query completion time percentiles (ps): from a query's start until its last flow
    completes."""
    if not by:
        return pd.DataFrame([{f"p{q:g}": percentile(queries["qct_ps"], q) for q in qs}])
    rows = []
    for k, g in queries.groupby(list(by), observed=True):
        k = k if isinstance(k, tuple) else (k,)
        rows.append(dict(zip(by, k, strict=True))
                    | {f"p{q:g}": percentile(g["qct_ps"], q) for q in qs} | {"queries": len(g)})
    return pd.DataFrame(rows)


def incast_goodput(queries: pd.DataFrame, by: Sequence[str] = ()) -> pd.DataFrame:
    """Incast goodput (bit/s) of a set of rounds: application bytes of all rounds × 8 /
    the summed round completion times (the rate at which the receiver got its data while
    rounds were running). Per ``by`` group."""
    g = queries.groupby(list(by), observed=True) if by else [((), queries)]
    rows = []
    for k, q in g:
        k = k if isinstance(k, tuple) else (k,)
        rate = q["size_bytes"].sum() * 8 / (q["qct_ps"].sum() / PS_PER_S)
        rows.append(dict(zip(by, k, strict=True)) | {"goodput_bps": rate, "rounds": len(q)})
    return pd.DataFrame(rows)


def unfinished_share(flows: pd.DataFrame) -> float:
    """Share of flows that had not finished when the run stopped."""
    return float(flows["fct_ps"].isna().mean()) if len(flows) else 0.0


def tail_percentile(values: pd.Series | np.ndarray, min_samples: int = 1000) -> tuple[float, str]:
    """The 99.9th percentile of ``values`` when there are at least ``min_samples`` of
    them (so that about one sample lies above it), else the 99th; returns (value, name)."""
    q = 99.9 if len(values) >= min_samples else 99.0
    return percentile(values, q), f"p{q:g}"


def tail_reduction(scheme: float, baseline: float) -> float:
    """Reduction of a tail FCT relative to a baseline at the same point and flow size:
    1 − FCT(scheme) / FCT(baseline) (FastLane Figs. 6–9, 14); positive is better."""
    return 1.0 - scheme / baseline


# A FastLane notification on the wire, as the simulator sizes it (packet/notification.rs).
NOTIFICATION_FRAME: int = _core.constants()["notification_frame_bytes"]


def notification_shares(ports: pd.DataFrame, duration_s: float) -> pd.DataFrame:
    """Per switch port, what FastLane notifications used: ``bandwidth_share`` = bytes sent
    × 8 / (rate × run time); ``capped_share`` = the same without the notifications sent
    on an otherwise idle link (work conservation: they took nothing from data), the
    share the bandwidth cap bounds; ``buffer_share`` = peak notification bytes / the
    port's data buffer."""
    df = ports[ports["is_switch"]].copy()
    df["bandwidth_share"] = df["notif_sent_bytes"] * 8 / (df["rate_bps"] * duration_s)
    capped = df["notif_sent_bytes"] - df["notif_sent_idle"] * NOTIFICATION_FRAME
    df["capped_share"] = capped * 8 / (df["rate_bps"] * duration_s)
    df["buffer_share"] = df["notif_max_bytes"] / df["capacity_bytes"]
    return df


def flow_goodput(delivered_bytes: pd.Series | np.ndarray, duration_s: float) -> np.ndarray:
    """Goodput (bit/s) of long-running flows over a fixed run: bytes the receiver holds
    in order × 8 / the run's duration (CP Figs. 10–14)."""
    return np.asarray(delivered_bytes, dtype=float) * 8 / duration_s


def jitter_ratio(goodputs: pd.Series | np.ndarray) -> float:
    """Flow jitter ratio (CP §6.2's EFJR): the average absolute deviation of the flows'
    goodputs from their mean, over that mean; 0 is perfectly fair."""
    g = np.asarray(goodputs, dtype=float)
    m = g.mean()
    return float(np.abs(g - m).mean() / m) if m > 0 else float("nan")
