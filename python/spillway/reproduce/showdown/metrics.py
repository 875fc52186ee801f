"""The showdown's metrics: one row per scheme and cell (fabric, workload, load or fan-in),
from a sweep directory's catalog and its points' summary.json files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from spillway.analysis import NOTIFICATION_FRAME
from spillway.reproduce.showdown.setup import LONG_BYTES, SHORT_BYTES
from spillway.store import Results

# Columns of a cell, in table order, with what each means (the report quotes these).
COLUMNS = {
    "short_fct_p99_ms": f"99th percentile FCT of short flows (at most {SHORT_BYTES // 1000} "
                        "KB; background flows aside), ms",
    "short_fct_p999_ms": "99.9th percentile FCT of short flows, ms",
    "short_slowdown_p99": "99th percentile slowdown (FCT / ideal FCT) of short flows",
    "short_slowdown_p999": "99.9th percentile slowdown of short flows",
    "long_fct_mean_ms": f"mean FCT of long flows (over {LONG_BYTES // 10**6} MB, and the "
                        "background flows of partition/aggregate), ms",
    "mean_fct_ms": "mean FCT of every finished flow, ms",
    "mean_slowdown": "mean slowdown of every finished flow",
    "qct_p99_ms": "99th percentile query completion time (incast rounds, partition/aggregate "
                  "queries), ms",
    "goodput_gbps": "payload delivered in order × 8 / the run's simulated time, Gbit/s (incast: "
                    "a round's bytes × 8 / its completion time, over all rounds)",
    "flows": "flows started",
    "unfinished": "flows not finished when the run stopped (the safety limit, run.duration)",
    "drops": "packets dropped anywhere (FCP and data; notifications aside)",
    "retransmits": "segments sent again",
    "timeouts": "retransmission timer expiries",
    "pauses": "PFC/802.3x pause and resume frames sent by switches",
    "notifications": "FastLane drop notifications generated",
    "packs": "CP precise ACKs received by senders",
    "notif_link_pct": "FastLane: the largest share of any switch port's link its notifications "
                      "took from data over the run (those sent on an otherwise idle link "
                      "aside: the share FastLane §3.3.1's 1% cap bounds), %",
    "fcp_pct": "Fastpass FCP wire bytes (both ways) as % of the data's wire bytes",
    "dead_pct": "dead bytes (sent by hosts, dropped in the network) as % of bytes offered",
    "dup_pct": "bytes received more than once as % of bytes offered",
    "queue_mean_bytes": "time-averaged occupancy of the switch ports, averaged over all "
                        "switch ports, bytes",
    "queue_max_kb": "the highest occupancy any switch port reached, KB (KiB)",
    "queue_busiest_mean_bytes": "the largest time-averaged occupancy of any one switch port, "
                                "bytes",
    "wall_s": "wall-clock seconds of the run (not deterministic)",
    "mhops_per_s": "simulated packet-hops per second of event loop, millions (not "
                   "deterministic)",
}
COST = ("wall_s", "mhops_per_s")


def _summaries(res: Results) -> pd.DataFrame:
    pts = res.sql("SELECT hash FROM points WHERE status = 'done'")
    rows = []
    for h in pts["hash"]:
        s = json.loads((res.out / "points" / h / "summary.json").read_text())
        rows.append({"hash": h} | {k: v for k, v in s.items() if isinstance(v, int | float)})
    return pd.DataFrame(rows)


# Means of floating-point columns are taken over fixed-point integers: DuckDB sums doubles
# in whatever order its threads finish, which moves the last bit from run to run, and the
# same seed must give the same Parquet.


def _flow_stats(res: Results) -> pd.DataFrame:
    return res.sql(f"""
        SELECT hash,
          quantile_cont(fct_ps, 0.99) FILTER (WHERE s) / 1e9 AS short_fct_p99_ms,
          quantile_cont(fct_ps, 0.999) FILTER (WHERE s) / 1e9 AS short_fct_p999_ms,
          quantile_cont(slowdown, 0.99) FILTER (WHERE s) AS short_slowdown_p99,
          quantile_cont(slowdown, 0.999) FILTER (WHERE s) AS short_slowdown_p999,
          avg(fct_ps) FILTER (WHERE l) / 1e9 AS long_fct_mean_ms,
          avg(fct_ps) / 1e9 AS mean_fct_ms,
          avg(CAST(slowdown * 1e9 AS HUGEINT)) / 1e9 AS mean_slowdown,
          count(*) AS flows, count(*) - count(fct_ps) AS unfinished,
          count(fct_ps) FILTER (WHERE s) AS short_flows,
          count(fct_ps) FILTER (WHERE l) AS long_flows
        FROM (SELECT *, class <> 'background' AND size_bytes <= {SHORT_BYTES} AS s,
                     class = 'background' OR size_bytes > {LONG_BYTES} AS l FROM flows)
        GROUP BY hash""")


def _port_stats(res: Results) -> pd.DataFrame:
    return res.sql(f"""
        SELECT hash, avg(CAST(mean_bytes * 1e3 AS HUGEINT)) / 1e3 AS queue_mean_bytes,
               max(max_bytes) / 1024 AS queue_max_kb,
               max(mean_bytes) AS queue_busiest_mean_bytes,
               max((notif_sent_bytes - notif_sent_idle * {NOTIFICATION_FRAME}) * 8.0
                   / rate_bps) AS notif_busy_s
        FROM ports WHERE is_switch GROUP BY hash""")


def _query_stats(res: Results) -> pd.DataFrame:
    try:
        return res.sql("""
            SELECT hash, quantile_cont(qct_ps, 0.99) / 1e9 AS qct_p99_ms,
                   sum(size_bytes) * 8e3 / sum(qct_ps) AS incast_gbps
            FROM queries WHERE parent IS NULL GROUP BY hash""")
    except Exception:  # no point of this sweep has queries (Poisson)
        return pd.DataFrame({"hash": pd.Series(dtype=str),
                             "qct_p99_ms": pd.Series(dtype=float),
                             "incast_gbps": pd.Series(dtype=float)})


def cells(res: Results, fabric: str, family: str) -> pd.DataFrame:
    """One row per point of the sweep in ``res`` (done, failed or refused): its axes, its
    status (`ok`, or why it has no numbers) and the `COLUMNS` metrics."""
    pts = res.sql("SELECT * FROM points")
    axes = [c for c in ("scheme", "cdf", "load", "senders", "seed") if c in pts.columns]
    t = pts[["hash", "status", "error", *axes]].copy()
    t["fabric"] = fabric
    t["workload"] = t["cdf"] if "cdf" in t.columns else family
    t["fanin"] = t["senders"] if "senders" in t.columns else np.nan
    if "load" not in t.columns:
        t["load"] = 0.2 if family == "partition-aggregate" else np.nan
    done = t[t.status == "done"]
    if len(done):
        s = _summaries(res)
        s = s.assign(
            pauses=s["pause_frames"], notifications=s["notifications_generated"],
            packs=s["packs"],
            fcp_pct=100 * (s["fastpass_fcp_to_arbiter_bytes"] + s["fastpass_fcp_to_endpoint_bytes"])
            / s["host_sent_data_wire_bytes"].clip(lower=1),
            dead_pct=100 * s["dead_bytes"] / s["bytes_offered"].clip(lower=1),
            dup_pct=100 * s["duplicate_bytes"] / s["bytes_offered"].clip(lower=1),
            goodput_gbps=s["bytes_delivered"] * 8e3 / s["sim_time_ps"].clip(lower=1),
            mhops_per_s=s["packet_hops_per_s"] / 1e6)
        keep = ["hash", "drops", "retransmits", "timeouts", "pauses", "notifications", "packs",
                "fcp_pct", "dead_pct", "dup_pct", "goodput_gbps", "wall_s",
                "mhops_per_s"]
        t = (t.merge(s[keep], on="hash", how="left").merge(_flow_stats(res), on="hash", how="left")
             .merge(_port_stats(res), on="hash", how="left")
             .merge(_query_stats(res), on="hash", how="left"))
        t = t.merge(s[["hash", "sim_time_ps"]], on="hash", how="left")
        t["notif_link_pct"] = 100 * t.pop("notif_busy_s") * 1e12 / t.pop("sim_time_ps")
        inc = (t["incast_gbps"].notna() & (t["workload"] == "incast")).to_numpy()
        t["goodput_gbps"] = np.where(inc, t["incast_gbps"].astype(float), t["goodput_gbps"])
        t = t.drop(columns="incast_gbps")
    # A point validation refused has no scenario hash (spillway.sweep.plan).
    t["status"] = [("ok" if st == "done" else _why(st, err, h.startswith("invalid-")))
                   for st, err, h in zip(t["status"], t["error"], t["hash"], strict=True)]
    for c in COLUMNS:
        if c not in t.columns:
            t[c] = np.nan
    return t[["fabric", "workload", "load", "fanin", "scheme", "status", *COLUMNS]]


def _why(status: str, error: object, refused: bool) -> str:
    msg = " ".join(str(error).split()) if isinstance(error, str) else status
    if refused:
        return "refused at validation: " + msg
    return f"{status}: {msg}"


def collect(data: Path, fabrics: list[str], families: list[str]) -> pd.DataFrame:
    """`cells` of every sweep under ``data`` (``data/<fabric>/<family>``)."""
    parts = []
    for f in fabrics:
        for fam in families:
            d = data / f / fam
            if (d / "catalog.duckdb").exists():
                with Results(d) as res:
                    parts.append(cells(res, f, fam))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
