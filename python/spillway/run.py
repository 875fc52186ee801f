"""Running one scenario: stream flow records to Parquet, write the summary.

Output files (the command-line contract, see docs/outputs.md):
``flows.parquet``, ``queries.parquet`` (workloads with queries), ``ports.parquet``,
``timeseries.parquet`` (with ``run.timeseries_interval``), ``flow_throughput.parquet``
(with ``run.flow_throughput_interval``), ``pings.parquet`` (with ``ping.interval``),
``summary.json`` and the fully resolved ``scenario.toml``. They are written into a
temporary sibling of the output directory, which then takes the directory's place: a
run's outputs appear whole or not at all, and none of an earlier run's files survive
beside them.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import platform
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from spillway import _core
from spillway.errors import ScenarioError, UsageError
from spillway.progress import Progress

NONE_U64 = np.iinfo(np.uint64).max
# Events per step between progress updates and Parquet row groups.
STEP_EVENTS = 2_000_000

# The output tables' schemas, defined once in the simulator (crates/spillway-core/src/
# output/): column names, types, what means "none", labels of coded columns.
SCHEMAS: dict[str, list[dict[str, Any]]] = _core.schemas()
FLOW_COLUMNS = [c["name"] for c in SCHEMAS["flows"]]
_NUMPY = {"u64": np.uint64, "u32": np.uint32, "u8": np.uint8, "f64": np.float64,
          "bool": np.bool_}
# Every file a run may write. A directory holding anything else is not replaced.
OUTPUT_FILES = ("flows.parquet", "queries.parquet", "ports.parquet", "timeseries.parquet",
                "flow_throughput.parquet", "pings.parquet", "fct.txt", "summary.json",
                "scenario.toml")


def table(name: str, cols: dict[str, np.ndarray]) -> pa.Table:
    """Table ``name`` (flows, queries, ports) from the simulator's columns, as its schema
    says: the maximum or NaN as null where it means "none", coded columns as
    dictionaries of their labels."""
    arrays = []
    schema = SCHEMAS[name]
    for c in schema:
        col = cols[c["name"]]
        if c["null"] == "max":
            arrays.append(pa.array(col, mask=col == np.iinfo(col.dtype).max))
        elif c["null"] == "nan":
            arrays.append(pa.array(col, mask=np.isnan(col)))
        elif c["labels"] is not None:
            codes = pa.array(col.astype(np.int8))
            arrays.append(pa.DictionaryArray.from_arrays(codes, pa.array(c["labels"])))
        else:
            arrays.append(pa.array(col))
    return pa.Table.from_arrays(arrays, names=[c["name"] for c in schema])


def empty_table(name: str) -> pa.Table:
    """Table ``name`` with no rows, its columns typed."""
    return table(name, {c["name"]: np.zeros(0, dtype=_NUMPY[c["type"]])
                        for c in SCHEMAS[name]})


def joined_table(name: str, parts: list[dict[str, np.ndarray]]) -> pa.Table:
    """Table ``name`` from the columns the simulator handed over in parts (each a dict of
    columns), in order; typed and empty when there are none."""
    if not parts:
        return empty_table(name)
    return table(name, {c: np.concatenate([p[c] for p in parts]) for c in parts[0]})


def flows_table(cols: dict[str, np.ndarray]) -> pa.Table:
    return table("flows", cols)


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

    @property
    def timeseries(self) -> pa.Table | None:
        p = self.out / "timeseries.parquet"
        return pq.read_table(p) if p.exists() else None

    @property
    def flow_throughput(self) -> pa.Table | None:
        p = self.out / "flow_throughput.parquet"
        return pq.read_table(p) if p.exists() else None

    @property
    def pings(self) -> pa.Table | None:
        p = self.out / "pings.parquet"
        return pq.read_table(p) if p.exists() else None


def read_text(path: str | os.PathLike[str], key: str) -> str:
    """A file's text, for scenario and sweep files: a missing file is "not found" and
    bytes that are not UTF-8 a ScenarioError under ``key`` (a TOML file is UTF-8)."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"file not found: {p}")
    data = p.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ScenarioError(key, "", f"{p} is not UTF-8 text (byte 0x{data[e.start]:02x} at "
                                     f"offset {e.start}): a TOML file must be") from None


def _read_scenario(scenario: str | os.PathLike[str]) -> tuple[str, str | None]:
    """Accepts a path to a TOML file, or TOML text itself; a ``Path`` is always a path."""
    s = str(scenario)
    if isinstance(scenario, os.PathLike) or (
            "\n" not in s and (s.endswith(".toml") or os.path.exists(s))):
        p = Path(s)
        if not p.exists():
            raise FileNotFoundError(f"scenario file not found: {s}")
        return read_text(p, "(file)"), str(p.resolve().parent)
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
    threads: int | str | None = None,
) -> RunResult:
    """Runs a scenario (file path or TOML text) and writes its results into ``out``.

    ``threads`` sets ``run.threads`` (an integer or ``"auto"``): how many threads run a
    parallel run's logical processes (``run.partitions``); the outputs are the same for
    every value.

    ``base_dir`` resolves relative paths in scenario text (defaults: the file's folder).
    The outputs are written beside ``out`` and moved into its place when complete, so
    ``out`` holds one whole run, never a mix of two nor a half-written one. An existing
    ``out`` may hold only files a run writes (``OUTPUT_FILES``, all replaced); with any
    other file in it the run is refused (UsageError) before anything is written."""
    final = _check_out(out)
    text, base = _read_scenario(scenario)
    extra = [] if threads is None else [f"run.threads={threads}"]
    sim = _core.Simulation(text, list(overrides or []) + extra, base or base_dir)
    _remove_orphans(final)
    tmp = final.with_name(f".{final.name}.spillway-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        summary = write_outputs(sim, tmp, progress)
        _replace_dir(tmp, final)
    finally:
        _remove_outputs(tmp)
    return RunResult(out=Path(out), summary=summary)


def _check_out(out: str | os.PathLike[str]) -> Path:
    """The output directory as an absolute path, after refusing what must not be
    replaced: an empty name, the current directory, a file, a directory holding files
    that are not a run's outputs."""
    if str(out) == "":
        raise UsageError("--out is empty: name the output directory")
    final = Path(os.path.realpath(out))
    if final == Path.cwd() or final.parent == final:
        raise UsageError(f"--out {out} is the current (or root) directory, which a run "
                         "replaces: name a directory for its outputs, e.g. --out out/run")
    if final.exists() and not final.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "--out is not a directory", str(out))
    if final.is_dir():
        foreign = sorted(set(os.listdir(final)) - set(OUTPUT_FILES))
        if foreign:
            more = f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
            raise UsageError(
                f"--out {out} holds files that spillway run did not write "
                f"({', '.join(foreign[:3])}{more}); a run replaces its directory whole, so "
                "it leaves this one alone: use a new or empty directory")
    return final


def _remove_outputs(d: Path) -> None:
    """Deletes a run's output files in ``d`` and then ``d`` itself if that leaves it
    empty; anything else stays."""
    for name in OUTPUT_FILES:
        (d / name).unlink(missing_ok=True)
    try:
        d.rmdir()
    except OSError:
        pass


def _remove_orphans(final: Path) -> None:
    """Removes temporary siblings of ``final`` left by runs that were killed."""
    prefix = f".{final.name}.spillway-"
    for d in final.parent.glob(f"{prefix}*"):
        try:
            os.kill(int(d.name[len(prefix):].split("-")[0]), 0)
        except ProcessLookupError:
            _remove_outputs(d)
        except (ValueError, IndexError, PermissionError):
            continue


_RENAME_EXCHANGE = 2


def _replace_dir(new: Path, final: Path) -> None:
    """Puts directory ``new`` in the place of ``final``; the previous ``final`` (a run's
    outputs, see `_check_out`) ends up at ``new`` for the caller to remove. On Linux the
    two trade places in one step (renameat2 RENAME_EXCHANGE); elsewhere, or on a
    filesystem without it, the old one is first renamed to ``new``'s name with a suffix."""
    if not final.exists():
        os.rename(new, final)
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.renameat2(-100, os.fsencode(new), -100, os.fsencode(final),
                          _RENAME_EXCHANGE) == 0:  # -100: AT_FDCWD
            return
    except (OSError, AttributeError):
        pass
    old = new.with_name(new.name + "-old")
    os.rename(final, old)
    os.rename(new, final)
    _remove_outputs(old)


def write_outputs(sim: Any, out: Path, progress: bool | None = None) -> dict[str, Any]:
    """Runs ``sim`` (a ``_core.Simulation``) to its end, writing the output files into
    ``out`` (created; summary.json last); returns the summary."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "scenario.toml").write_text(sim.resolved)
    if progress is None:
        progress = sys.stderr.isatty()
    bar = Progress(enabled=progress, total_ps=sim.duration_ps)
    flows_path = out / "flows.parquet"
    writer: pq.ParquetWriter | None = None
    # Per-flow goodput grows with flows x intervals: streamed, as the flows are.
    tput_writer: pq.ParquetWriter | None = None
    query_parts: list[dict[str, np.ndarray]] = []
    series_parts: list[dict[str, np.ndarray]] = []
    ping_parts: list[dict[str, np.ndarray]] = []
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
                flows = flows_table(cols)
                if writer is None:
                    writer = pq.ParquetWriter(flows_path, flows.schema)
                writer.write_table(flows)
                fct = cols["fct_ps"]
                fcts.append(fct[fct != NONE_U64])
            q = sim.take_queries()
            if len(q["query_id"]):
                query_parts.append(q)
            if sim.has_timeseries:
                s = sim.take_timeseries()
                if len(s["time_ps"]):
                    series_parts.append(s)
            if sim.has_flow_throughput:
                t = sim.take_flow_throughput()
                if len(t["time_ps"]):
                    rows = table("flow_throughput", t)
                    if tput_writer is None:
                        tput_writer = pq.ParquetWriter(out / "flow_throughput.parquet",
                                                       rows.schema)
                    tput_writer.write_table(rows)
            if sim.has_pings:
                p = sim.take_pings()
                if len(p["sent_ps"]):
                    ping_parts.append(p)
            bar.update(sim.now_ps, sim.active_flows)
            if done:
                break
    finally:
        bar.close()
        for w in (writer, tput_writer):
            if w is not None:
                w.close()
    wall = time.perf_counter() - t0
    if writer is None:  # no flows at all: still write an empty table with the schema
        pq.write_table(empty_table("flows"), flows_path)
    if sim.has_queries:
        queries = joined_table("queries", query_parts)
        pq.write_table(queries, out / "queries.parquet")
    if sim.has_timeseries:
        series = joined_table("timeseries", series_parts)
        pq.write_table(series, out / "timeseries.parquet")
    if sim.has_flow_throughput and tput_writer is None:
        pq.write_table(empty_table("flow_throughput"), out / "flow_throughput.parquet")
    if sim.has_pings:
        pq.write_table(joined_table("pings", ping_parts), out / "pings.parquet")
    sim.write_fct_txt(out / "fct.txt")  # run.fct_txt: HPCC's file, for that pipeline's scripts
    ports = sim.ports()
    pq.write_table(table("ports", ports), out / "ports.parquet")
    counters = sim.counters()
    all_fct = np.concatenate(fcts) if fcts else np.zeros(0, dtype=np.uint64)
    summary: dict[str, Any] = dict(counters)
    summary["stop_reason"] = sim.stop_reason
    if sim.stop_detail:
        summary["stop_detail"] = sim.stop_detail
    summary["wall_s"] = wall
    summary["sim_wall_s"] = sim_wall
    summary["events_per_s"] = counters["events"] / sim_wall if sim_wall > 0 else None
    summary["packet_hops_per_s"] = (counters["packet_hops"] / sim_wall if sim_wall > 0
                                    else None)
    summary["fct_ps"] = _percentiles(all_fct.astype(np.float64))
    summary.update(_notification_shares(ports, counters["sim_time_ps"]))
    if sim.has_queries:
        # Over the queries that are no other's part: a sequential workload's web
        # requests, not their queries (every query of the other workloads).
        qct = (np.concatenate([p["qct_ps"][p["parent"] == NONE_U64] for p in query_parts])
               if query_parts else np.zeros(0))
        summary["qct_ps"] = _percentiles(np.asarray(qct, dtype=np.float64))
    partitions, threads = sim.partitions
    # The cut decides the result (run.partitions); the threads only how fast it came, so
    # they go with the machine's facts.
    summary["partitions"] = partitions
    summary["provenance"] = {
        "spillway_version": _core.__version__,
        "seed": _seed_of(sim.resolved),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "wall_s": wall,
        "threads": threads,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return summary


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
