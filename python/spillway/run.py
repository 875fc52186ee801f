"""Running one scenario: stream flow records to Parquet, write the summary.

Output files (the command-line contract, see docs/outputs.md):
``flows.parquet``, ``queries.parquet`` (workloads with queries), ``ports.parquet``,
``summary.json`` and the fully resolved ``scenario.toml``.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from spillway import _core
from spillway.progress import Progress

NONE_U64 = np.iinfo(np.uint64).max
# Events per step between progress updates and Parquet row groups.
STEP_EVENTS = 2_000_000

FLOW_COLUMNS = [
    "flow_id", "src", "dst", "size_bytes", "start_ps", "finish_ps", "fct_ps", "ideal_fct_ps",
    "slowdown", "priority", "class", "query_id", "retransmits", "timeouts", "drops",
    "notifications", "delivered_bytes",
]


def _nullable(col: np.ndarray) -> pa.Array:
    """u64 columns where the maximum means 'none' (unfinished flow, no query)."""
    return pa.array(col, mask=col == NONE_U64)


def flows_table(cols: dict[str, np.ndarray], labels: list[str]) -> pa.Table:
    arrays = []
    for name in FLOW_COLUMNS:
        c = cols[name]
        if name in ("finish_ps", "fct_ps", "query_id"):
            arrays.append(_nullable(c))
        elif name == "slowdown":
            arrays.append(pa.array(c, mask=np.isnan(c)))
        elif name == "class":
            arrays.append(
                pa.DictionaryArray.from_arrays(pa.array(c.astype(np.int8)), pa.array(labels))
            )
        else:
            arrays.append(pa.array(c))
    return pa.Table.from_arrays(arrays, names=FLOW_COLUMNS)


def _percentiles(values: np.ndarray) -> dict[str, float | None]:
    if len(values) == 0:
        return {"p50": None, "p99": None, "p99.9": None, "mean": None}
    q = np.percentile(values, [50, 99, 99.9])
    return {"p50": float(q[0]), "p99": float(q[1]), "p99.9": float(q[2]),
            "mean": float(values.mean())}


@dataclass
class RunResult:
    """What a run wrote; tables are read back lazily from the files."""

    out: Path
    summary: dict[str, Any]

    @property
    def flows(self) -> pa.Table:
        return pq.read_table(self.out / "flows.parquet")

    @property
    def queries(self) -> pa.Table | None:
        p = self.out / "queries.parquet"
        return pq.read_table(p) if p.exists() else None

    @property
    def ports(self) -> pa.Table:
        return pq.read_table(self.out / "ports.parquet")


def _read_scenario(scenario: str | os.PathLike[str]) -> tuple[str, str | None]:
    """Accepts a path to a TOML file, or TOML text itself."""
    s = str(scenario)
    if "\n" not in s and (s.endswith(".toml") or os.path.exists(s)):
        p = Path(s)
        if not p.exists():
            raise FileNotFoundError(f"scenario file not found: {s}")
        return p.read_text(), str(p.resolve().parent)
    return s, None


def validate(scenario: str | os.PathLike[str], overrides: list[str] | None = None) -> str:
    """Checks a scenario; returns the resolved TOML or raises ScenarioError."""
    text, base = _read_scenario(scenario)
    return _core.validate(text, list(overrides or []), base)


def run(
    scenario: str | os.PathLike[str],
    out: str | os.PathLike[str],
    overrides: list[str] | None = None,
    progress: bool | None = None,
    base_dir: str | None = None,
) -> RunResult:
    """Runs a scenario (file path or TOML text) and writes its results into ``out``.

    ``base_dir`` resolves relative paths in scenario text (defaults: the file's folder)."""
    text, base = _read_scenario(scenario)
    base = base or base_dir
    sim = _core.Simulation(text, list(overrides or []), base)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "scenario.toml").write_text(sim.resolved)
    labels = _core.class_labels()
    if progress is None:
        progress = sys.stderr.isatty()
    bar = Progress(enabled=progress, total_ps=sim.duration_ps)
    flows_path = out / "flows.parquet"
    writer: pq.ParquetWriter | None = None
    query_parts: list[dict[str, np.ndarray]] = []
    fcts: list[np.ndarray] = []
    # The rates in the summary are the event loop's: `sim_wall_s` sums the time inside
    # `step`, not the Parquet writing between steps (whose first use imports pandas
    # through pyarrow, ~0.4 s: a third of a one-second run).
    sim_wall = 0.0
    t0 = time.perf_counter()
    try:
        while True:
            ts = time.perf_counter()
            done = sim.step(STEP_EVENTS)
            sim_wall += time.perf_counter() - ts
            cols = sim.take_flows()
            if len(cols["flow_id"]):
                table = flows_table(cols, labels)
                if writer is None:
                    writer = pq.ParquetWriter(flows_path, table.schema)
                writer.write_table(table)
                fct = cols["fct_ps"]
                fcts.append(fct[fct != NONE_U64])
            q = sim.take_queries()
            if len(q["query_id"]):
                query_parts.append(q)
            bar.update(sim.now_ps, sim.active_flows)
            if done:
                break
    finally:
        bar.close()
        if writer is not None:
            writer.close()
    wall = time.perf_counter() - t0
    if writer is None:  # no flows at all: still write an empty table with the schema
        empty = {c: np.zeros(0, dtype=np.uint64) for c in FLOW_COLUMNS}
        empty["slowdown"] = np.zeros(0)
        pq.write_table(flows_table(empty, labels), flows_path)
    if sim.has_queries:
        qcols = {k: np.concatenate([p[k] for p in query_parts]) if query_parts
                 else np.zeros(0, dtype=np.uint64)
                 for k in ("query_id", "start_ps", "finish_ps", "qct_ps", "size_bytes", "flows")}
        pq.write_table(pa.table(qcols), out / "queries.parquet")
    ports = sim.ports()
    pq.write_table(pa.table(ports), out / "ports.parquet")
    counters = sim.counters()
    all_fct = np.concatenate(fcts) if fcts else np.zeros(0, dtype=np.uint64)
    summary: dict[str, Any] = dict(counters)
    summary["stop_reason"] = sim.stop_reason
    summary["wall_s"] = wall
    summary["sim_wall_s"] = sim_wall
    summary["events_per_s"] = counters["events"] / sim_wall if sim_wall > 0 else None
    summary["packet_hops_per_s"] = (counters["packet_hops"] / sim_wall if sim_wall > 0
                                    else None)
    summary["fct_ps"] = _percentiles(all_fct.astype(np.float64))
    summary.update(_notification_shares(ports, counters["sim_time_ps"]))
    if sim.has_queries:
        qct = (np.concatenate([p["qct_ps"] for p in query_parts]) if query_parts
               else np.zeros(0))
        summary["qct_ps"] = _percentiles(np.asarray(qct, dtype=np.float64))
    summary["provenance"] = {
        "spillway_version": _core.__version__,
        "seed": _seed_of(sim.resolved),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "wall_s": wall,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return RunResult(out=out, summary=summary)


def _notification_shares(ports: dict[str, np.ndarray], sim_time_ps: int) -> dict[str, float]:
    """Largest share of a switch link's capacity and of a port's buffer that FastLane
    notifications used (docs/outputs.md, ports.parquet)."""
    sw = ports["is_switch"]
    if not sw.any() or sim_time_ps == 0:
        return {"notification_link_share_max": 0.0, "notification_buffer_share_max": 0.0}
    secs = sim_time_ps / 1e12
    link = ports["notif_sent_bytes"][sw] * 8 / (ports["rate_bps"][sw] * secs)
    buf = ports["notif_max_bytes"][sw] / ports["capacity_bytes"][sw]
    return {"notification_link_share_max": float(link.max()),
            "notification_buffer_share_max": float(buf.max())}


def _seed_of(resolved: str) -> int:
    import tomllib

    return int(tomllib.loads(resolved)["run"]["seed"])
