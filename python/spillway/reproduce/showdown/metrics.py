"""The showdown's metrics: one row per run (`runs`: a scheme in a cell on one seed) and one
row per cell (`cells`: a scheme on a fabric, workload and load or fan-in, over its seeds),
each metric with its 95% interval (`spillway.intervals`).

Percentiles and means of flows and queries pool every seed's samples and take a two-stage
bootstrap interval (the seeds, then the flows or queries within each); per-run quantities
(counts, goodput, time-averaged queues) are averaged over the seeds with a Student-t
interval. The draws are keyed by the cell without the scheme, so that every scheme of a
cell is resampled alike (the same seeds drawn, the same positions within them)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from spillway import intervals
from spillway.analysis import NOTIFICATION_FRAME
from spillway.intervals import Estimate, Resamples
from spillway.reproduce.showdown.setup import LONG_BYTES, SHORT_BYTES
from spillway.store import Results, read_plan

KEYS = ["fabric", "workload", "load", "fanin", "scheme"]

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
    "flows": "flows started, over all seeds",
    "unfinished": "flows not finished when their run stopped (the safety limit, "
                  "run.duration), over all seeds",
    "drops": "packets dropped anywhere (FCP and data; notifications aside), per run",
    "retransmits": "segments sent again, per run",
    "timeouts": "retransmission timer expiries, per run",
    "pauses": "PFC/802.3x pause and resume frames sent by switches, per run",
    "notifications": "FastLane drop notifications generated, per run",
    "packs": "CP precise ACKs received by senders, per run",
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
    "wall_s": "wall-clock seconds of the runs, summed over seeds (not deterministic)",
    "mhops_per_s": "simulated packet-hops per second of event loop, millions, median over "
                   "seeds (not deterministic)",
}
COST = ("wall_s", "mhops_per_s")
# Totals over the seeds: counts of the sample, not estimates.
TOTALS = ("flows", "unfinished")
# Every other column is an estimate, with `<column>_lo` and `<column>_hi` beside it.
ESTIMATED = tuple(c for c in COLUMNS if c not in COST + TOTALS)
# Per-run quantities, averaged over the seeds (a Student-t interval; counts cut at 0).
PER_RUN = ("goodput_gbps", "drops", "retransmits", "timeouts", "pauses", "notifications",
           "packs", "notif_link_pct", "fcp_pct", "dead_pct", "dup_pct", "queue_mean_bytes",
           "queue_max_kb", "queue_busiest_mean_bytes")
# Samples behind the percentile columns, summed over the seeds.
SAMPLES = ("seeds", "short_flows", "long_flows", "queries")


def _summaries(res: Results) -> pd.DataFrame:
    pts = res.sql("SELECT hash FROM points WHERE status = 'done' ORDER BY hash")
    rows = []
    for h in pts["hash"]:
        s = json.loads((res.out / "points" / h / "summary.json").read_text())
        rows.append({"hash": h} | {k: v for k, v in s.items() if isinstance(v, int | float)}
                    | {"stop": _stop(s)})
    return pd.DataFrame(rows)


def _stop(summary: dict) -> str:
    """Why a run stopped, when not because its flows were done: the safety limit
    (`duration`), a livelock (`no_progress`, since when), a deadlock."""
    reason = summary.get("stop_reason", "")
    if reason in ("", "all_flows_done"):
        return ""
    detail = summary.get("stop_detail", "")
    return f"{reason}: {detail}" if detail else reason


def _port_stats(res: Results) -> pd.DataFrame:
    # Means over fixed-point integers: DuckDB sums doubles in whatever order its threads
    # finish, which moves the last bit from run to run, and the same seed must give the
    # same Parquet.
    return res.sql(f"""
        SELECT hash, avg(CAST(mean_bytes * 1e3 AS HUGEINT)) / 1e3 AS queue_mean_bytes,
               max(max_bytes) / 1024 AS queue_max_kb,
               max(mean_bytes) AS queue_busiest_mean_bytes,
               max((notif_sent_bytes - notif_sent_idle * {NOTIFICATION_FRAME}) * 8.0
                   / rate_bps) AS notif_busy_s
        FROM ports WHERE is_switch GROUP BY hash""")


def _has(res: Results, view: str) -> bool:
    try:
        res.sql(f"SELECT 1 FROM {view} LIMIT 0")
        return True
    except Exception:  # no point of this sweep wrote it (Poisson: no queries)
        return False


def _flows(res: Results) -> pd.DataFrame:
    """Every finished or unfinished flow: its run, whether it is short or long, its FCT
    (ms) and slowdown, in a fixed order."""
    return res.sql(f"""
        SELECT hash, fct_ps / 1e9 AS fct_ms, slowdown,
               class <> 'background' AND size_bytes <= {SHORT_BYTES} AS short,
               class = 'background' OR size_bytes > {LONG_BYTES} AS long
        FROM flows ORDER BY hash, flow_id""")


def _queries(res: Results) -> pd.DataFrame:
    if not _has(res, "queries"):
        return pd.DataFrame({"hash": pd.Series(dtype=str), "qct_ms": pd.Series(dtype=float),
                             "size_bytes": pd.Series(dtype=float)})
    return res.sql("""
        SELECT hash, qct_ps / 1e9 AS qct_ms, CAST(size_bytes AS DOUBLE) AS size_bytes
        FROM queries WHERE parent IS NULL AND qct_ps IS NOT NULL ORDER BY hash, query_id""")


def runs(res: Results, fabric: str, family: str) -> pd.DataFrame:
    """One row per point of the sweep in ``res`` (done, failed or refused): its cell, seed,
    status (`ok`, or why it has no numbers) and its per-run quantities (`PER_RUN`), flow
    counts and cost."""
    pts = res.sql("SELECT hash, status, error FROM points")
    # Every point of the plan, from the plan: two schemes that resolve to the same
    # scenario (one scheme under two names) are one point in the catalog, and both get
    # its results.
    plan = pd.DataFrame([{"hash": p["hash"], **p["axes"]} for p in read_plan(res.out)["points"]])
    axes = [c for c in ("scheme", "cdf", "load", "senders", "seed") if c in plan.columns]
    t = plan[["hash", *axes]].merge(pts, on="hash", how="left").sort_values(
        ["hash", *axes], kind="stable").reset_index(drop=True)
    t["status"] = t["status"].fillna("pending")
    t["fabric"] = fabric
    t["workload"] = t["cdf"] if "cdf" in t.columns else family
    t["fanin"] = t["senders"].astype(float) if "senders" in t.columns else np.nan
    if "load" not in t.columns:
        t["load"] = 0.2 if family == "partition-aggregate" else np.nan
    if "seed" not in t.columns:
        t["seed"] = 1
    done = t[t.status == "done"]
    if len(done):
        s = _summaries(res)
        s = s.assign(
            pauses=s["pause_frames"], notifications=s["notifications_generated"],
            fcp_pct=100 * (s["fastpass_fcp_to_arbiter_bytes"] + s["fastpass_fcp_to_endpoint_bytes"])
            / s["host_sent_data_wire_bytes"].clip(lower=1),
            dead_pct=100 * s["dead_bytes"] / s["bytes_offered"].clip(lower=1),
            dup_pct=100 * s["duplicate_bytes"] / s["bytes_offered"].clip(lower=1),
            goodput_gbps=s["bytes_delivered"] * 8e3 / s["sim_time_ps"].clip(lower=1),
            mhops_per_s=s["packet_hops_per_s"] / 1e6,
            flows=s["flows_finished"] + s["flows_unfinished"], unfinished=s["flows_unfinished"])
        keep = ["hash", "drops", "retransmits", "timeouts", "pauses", "notifications", "packs",
                "fcp_pct", "dead_pct", "dup_pct", "goodput_gbps", "flows", "unfinished",
                "wall_s", "mhops_per_s", "sim_time_ps", "stop"]
        t = t.merge(s[keep], on="hash", how="left").merge(_port_stats(res), on="hash",
                                                          how="left")
        t["notif_link_pct"] = 100 * t.pop("notif_busy_s") * 1e12 / t.pop("sim_time_ps")
    # A point validation refused has no scenario hash (spillway.sweep.plan).
    t["status"] = [("ok" if st == "done" else _why(st, err, h.startswith("invalid-")))
                   for st, err, h in zip(t["status"], t["error"], t["hash"], strict=True)]
    for c in (*PER_RUN, *TOTALS, *COST):
        if c not in t.columns:
            t[c] = np.nan
    t["stop"] = t["stop"].fillna("") if "stop" in t.columns else ""
    return t[["hash", *KEYS, "seed", "status", "stop", *TOTALS, *PER_RUN, *COST]]


def _why(status: str, error: object, refused: bool) -> str:
    msg = " ".join(str(error).split()) if isinstance(error, str) else status
    if refused:
        return "refused at validation: " + msg
    return f"{status}: {msg}"


class _Samples:
    """A sweep's flows and queries, split once by run: for each run (hash) the arrays a
    cell's estimates are computed from."""

    def __init__(self, flows: pd.DataFrame, queries: pd.DataFrame) -> None:
        done = flows[flows.fct_ms.notna()]
        self.short = self._by_run(done[done.short], ["fct_ms", "slowdown"])
        self.long = self._by_run(done[done.long], ["fct_ms"])
        self.every = self._by_run(done, ["fct_ms", "slowdown"])
        self.queries = self._by_run(queries, ["qct_ms", "size_bytes"])

    @staticmethod
    def _by_run(frame: pd.DataFrame, cols: list[str]) -> dict[str, np.ndarray]:
        return {h: d[cols].to_numpy(float) for h, d in frame.groupby("hash", sort=False)}

    @staticmethod
    def of(table: dict[str, np.ndarray], hashes: list[str], width: int) -> list[np.ndarray]:
        return [table.get(h, np.empty((0, width))) for h in hashes]


def _estimates(smp: _Samples, hashes: list[str], incast: bool, key: str) -> dict[str, Estimate]:
    """The flow and query estimates of one cell (its runs: ``hashes``, ordered by seed)."""
    out: dict[str, Estimate] = {}
    short = Resamples(smp.of(smp.short, hashes, 2), key + "/short")
    [out["short_fct_p99_ms"], out["short_fct_p999_ms"]] = short.quantiles(0, [0.99, 0.999])
    [out["short_slowdown_p99"], out["short_slowdown_p999"]] = short.quantiles(1, [0.99, 0.999])
    long = Resamples(smp.of(smp.long, hashes, 1), key + "/long")
    out["long_fct_mean_ms"] = long.mean(0)
    every = Resamples(smp.of(smp.every, hashes, 2), key + "/all")
    out["mean_fct_ms"], out["mean_slowdown"] = every.mean(0), every.mean(1)
    qs = Resamples(smp.of(smp.queries, hashes, 2), key + "/queries")
    [out["qct_p99_ms"]] = qs.quantiles(0, [0.99])
    if incast:
        # A round's bytes over its completion time, over every round: Gbit/s.
        out["goodput_gbps"] = qs.ratio_of_sums(1, 0, scale=8e-6)
    for name, r in (("short_flows", short), ("long_flows", long), ("queries", qs)):
        out[name] = Estimate.exact(r.n)
    return out


def cells(res: Results, fabric: str, family: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The sweep in ``res`` as (cells, runs): one row per cell (every scheme of every
    load or fan-in, over its seeds) with each estimate, its `_lo` and `_hi`, the sample
    sizes and its status (`ok`, or the first of its runs' reasons for having no numbers),
    and `runs`' table."""
    r = runs(res, fabric, family)
    smp = _Samples(_flows(res), _queries(res))
    rows = []
    for cell, g in r.groupby(KEYS, sort=False, dropna=False):
        g = g.sort_values("seed")
        row: dict[str, object] = dict(zip(KEYS, cell, strict=True))
        bad = g[g.status != "ok"]
        # A reason every seed shares is the cell's; otherwise the first seed's, named.
        row["status"] = "ok" if bad.empty else (
            bad.status.iloc[0] if len(bad) == len(g) and bad.status.nunique() == 1
            else f"seed {bad.seed.iloc[0]}: {bad.status.iloc[0]}")
        row["seeds"] = len(g)
        # How the runs that did not finish their flows stopped (the first, by seed).
        stops = [f"seed {sd}: {st}" for sd, st in zip(g.seed, g.stop, strict=True) if st]
        row["stopped"] = (stops[0] + (f" (and {len(stops) - 1} more seeds)" if len(stops) > 1
                                      else "")) if stops else ""
        row["wall_s"] = g.wall_s.sum(min_count=1)
        row["mhops_per_s"] = g.mhops_per_s.median()
        if bad.empty:
            key = "/".join(map(str, cell[:-1]))
            est = _estimates(smp, list(g.hash), family == "incast", key)
            for c in PER_RUN:
                if c == "goodput_gbps" and family == "incast":
                    continue
                est[c] = intervals.over_seeds(g[c].astype(float).tolist(), floor=0.0)
            for c in TOTALS:
                row[c] = g[c].sum()
            for c, e in est.items():
                if c in ESTIMATED:
                    row[c], row[f"{c}_lo"], row[f"{c}_hi"] = e.value, e.lo, e.hi
                else:
                    row[c] = e.value
        rows.append(row)
    cols = ["fabric", "workload", "load", "fanin", "scheme", "status", "stopped", *SAMPLES,
            *[x for c in COLUMNS if c not in COST
              for x in ((c, f"{c}_lo", f"{c}_hi") if c in ESTIMATED else (c,))], *COST]
    t = pd.DataFrame(rows).reindex(columns=cols)
    return t, r


def estimate(row: pd.Series, col: str) -> Estimate:
    """A cell's ``col`` as an Estimate, with its interval, samples and seeds (unknown
    when the cell has no numbers)."""
    v = row.get(col, np.nan)
    if v is None or pd.isna(v):
        return Estimate.missing()
    seeds = int(row.get("seeds", 0) or 0)
    lo, hi = row.get(f"{col}_lo", v), row.get(f"{col}_hi", v)
    if col in PER_RUN and not (col == "goodput_gbps" and row.get("workload") == "incast"):
        return Estimate(float(v), float(lo), float(hi), seeds, seeds,
                        "seeds" if seeds > 1 else "one run")
    samples = ("queries" if col.startswith("qct") or col == "goodput_gbps" else
               "short_flows" if col.startswith("short") else
               "long_flows" if col.startswith("long") else None)
    n = row.get(samples, 0) if samples else (row.get("flows", 0) or 0) - (
        row.get("unfinished", 0) or 0)
    return Estimate(float(v), float(lo), float(hi), int(n or 0), seeds, "bootstrap")


def collect(data: Path, fabrics: list[str], families: list[str]) -> tuple[pd.DataFrame,
                                                                          pd.DataFrame]:
    """`cells` of every sweep under ``data`` (``data/<fabric>/<family>``): (cells, runs)."""
    parts, run_parts = [], []
    for f in fabrics:
        for fam in families:
            d = data / f / fam
            if (d / "catalog.duckdb").exists():
                with Results(d) as res:
                    c, r = cells(res, f, fam)
                    parts.append(c)
                    run_parts.append(r)
    if not parts:
        return pd.DataFrame(), pd.DataFrame()
    return pd.concat(parts, ignore_index=True), pd.concat(run_parts, ignore_index=True)
