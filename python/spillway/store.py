"""The results store: ``DIR/catalog.duckdb`` indexes a sweep; Parquet files hold the data.

Tables and views in the catalog:

- ``points``: one row per point of the sweep plan: ``hash``, ``status`` (done, failed,
  pending, damaged), the axis columns, ``error``, ``wall_s`` and headline figures from each
  point's summary.json (``events``, ``packet_hops``, ``drops``, ``timeouts``,
  ``retransmits``, ``flows_finished``, ``flows_unfinished``, ``fct_p50_ps``,
  ``fct_p99_ps``, ``fct_p999_ps``, ``qct_p50_ps``, ``qct_p99_ps``).
- ``flows``, ``queries``, ``ports``, ``timeseries``, ``flow_throughput``, ``pings``: the
  points' Parquet files, each row tagged with its point's ``hash`` and axis columns, so
  one query spans the whole sweep::

      spillway query DIR "SELECT senders, rto_min, avg(size_bytes*8e12/qct_ps) AS goodput
                          FROM queries GROUP BY ALL ORDER BY ALL"

A point is done when its directory is complete: ``manifest.json``, written last, lists
every file of the point with its size, and each is there, of that size and readable
(`read_point`). Only done points' files are read, so one damaged point never fails the
catalog nor a query.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow.parquet as pq

from spillway.errors import UsageError

VIEWS = ("flows", "queries", "ports", "timeseries", "flow_throughput", "pings")
MANIFEST = "manifest.json"
# Files every finished point holds (queries.parquet too when its summary has queries).
REQUIRED = ("scenario.toml", "flows.parquet", "ports.parquet", "summary.json", "point.json")


class DamagedPoint(Exception):
    """A point directory that is not complete; the message says what is wrong."""


def write_manifest(d: Path) -> None:
    """Lists every file of point directory ``d`` with its size, in ``d/manifest.json``:
    written last, it marks the point complete."""
    files = {f.name: f.stat().st_size for f in sorted(d.iterdir()) if f.name != MANIFEST}
    (d / MANIFEST).write_text(json.dumps({"files": files}, indent=2) + "\n")


def read_point(d: Path) -> tuple[dict[str, Any], list[str]]:
    """The summary of a complete point directory and the names of its files; raises
    DamagedPoint if a file its manifest lists is missing, of another size or unreadable
    (Parquet footers are read, summary.json parsed), or the manifest itself is."""
    try:
        files = json.loads((d / MANIFEST).read_text())["files"]
        if not (isinstance(files, dict) and all(isinstance(n, int) for n in files.values())):
            raise TypeError
    except FileNotFoundError:
        raise DamagedPoint(f"no {MANIFEST} (written last: the point was never finished)"
                           ) from None
    except (OSError, ValueError, TypeError, KeyError):
        raise DamagedPoint(f"{MANIFEST} is unreadable") from None
    for name, size in files.items():
        f = d / name
        try:
            got = f.stat().st_size
        except OSError:
            raise DamagedPoint(f"{name} is missing") from None
        if got != size:
            raise DamagedPoint(f"{name} has {got} bytes, not {size}")
        if name.endswith(".parquet"):
            try:
                pq.read_metadata(f)
            except Exception as e:  # pyarrow raises several kinds for a broken footer
                raise DamagedPoint(f"{name} is unreadable ({type(e).__name__})") from None
    try:
        summary = json.loads((d / "summary.json").read_text())
        if not isinstance(summary, dict):
            raise TypeError
    except (OSError, ValueError, TypeError):
        raise DamagedPoint("summary.json is unreadable") from None
    needed = REQUIRED + (("queries.parquet",) if "qct_ps" in summary else ())
    missing = [n for n in needed if n not in files]
    if missing:
        raise DamagedPoint(f"{MANIFEST} does not list {', '.join(missing)}")
    return summary, list(files)


def read_plan(out: Path) -> dict[str, Any]:
    """The sweep plan, ``DIR/sweep.json``."""
    try:
        return json.loads((out / "sweep.json").read_text())
    except FileNotFoundError:
        raise FileNotFoundError(f"no sweep in {out} (sweep.json not found)") from None
    except ValueError as e:
        raise UsageError(f"{out / 'sweep.json'} is unreadable: {e}") from None


def _point_rows(out: Path) -> tuple[list[dict[str, Any]], list[str],
                                       dict[str, list[Path]]]:
    """The rows of ``points``, the axes, and per view the files of the done points."""
    plan = read_plan(out)
    axes = plan["axes"]
    rows, seen = [], set()
    files: dict[str, list[Path]] = {v: [] for v in VIEWS}
    for p in plan["points"]:
        h = p["hash"]
        if h in seen:
            continue
        seen.add(h)
        row: dict[str, Any] = {"hash": h, **{a: p["axes"].get(a) for a in axes}}
        point = out / "points" / h
        failed = _read_failed(out / "failed" / f"{h}.json")
        try:
            s, names = read_point(point)
        except DamagedPoint as e:
            if point.exists():
                row.update(status="damaged", error=str(e))
            elif failed is not None:
                row.update(status="failed", error=failed.get("error"),
                           wall_s=failed.get("wall_s"))
            else:
                row.update(status="pending", error=None)
        else:
            fct, qct = s.get("fct_ps", {}), s.get("qct_ps", {})
            row.update(status="done", error=None, wall_s=s.get("wall_s"),
                       events=s.get("events"), packet_hops=s.get("packet_hops"),
                       drops=s.get("drops"), timeouts=s.get("timeouts"),
                       retransmits=s.get("retransmits"), flows_finished=s.get("flows_finished"),
                       flows_unfinished=s.get("flows_unfinished"), fct_p50_ps=fct.get("p50"),
                       fct_p99_ps=fct.get("p99"), fct_p999_ps=fct.get("p99.9"),
                       qct_p50_ps=qct.get("p50"), qct_p99_ps=qct.get("p99"))
            _add_files(files, point, names)
        rows.append(row)
    return rows, axes, files


def _add_files(files: dict[str, list[Path]], point: Path, names: list[str]) -> None:
    """Adds a done point's Parquet files to those the views read."""
    for v in VIEWS:
        if f"{v}.parquet" in names:
            files[v].append(point / f"{v}.parquet")


def _read_failed(path: Path) -> dict[str, Any] | None:
    """A failed point's record, or None if there is none (or it cannot be read: the
    point is then pending, and run again like a failed one)."""
    try:
        f = json.loads(path.read_text())
        return f if isinstance(f, dict) else None
    except (OSError, ValueError):
        return None


def _create_views(con: duckdb.DuckDBPyConnection, files: dict[str, list[Path]],
                  axes: list[str], temp: bool = False) -> None:
    """The views of ``VIEWS`` (``flows``, ``queries``, ``ports``, ...) over the given files
    (those of done points, never a half-written or damaged one); a view no point has is
    left out."""
    cols = ", ".join(["p.hash"] + [f'p."{a}"' for a in axes])
    kind = "TEMP VIEW" if temp else "VIEW"
    for v in VIEWS:
        if not files[v]:
            continue
        paths = ", ".join("'" + str(f.resolve()).replace("'", "''") + "'" for f in files[v])
        con.execute(
            f"CREATE OR REPLACE {kind} {v} AS SELECT {cols}, f.* EXCLUDE (filename) "
            f"FROM read_parquet([{paths}], filename = true, union_by_name = true) f "
            f"JOIN points p ON p.hash = split_part(f.filename, '/', -2)")


def build_catalog(out: str | os.PathLike[str]) -> Path:
    """(Re)builds ``out/catalog.duckdb`` from the plan and the point directories."""
    return build_catalog_rows(Path(out))[0]


def build_catalog_rows(out: Path) -> tuple[Path, pd.DataFrame]:
    """`build_catalog`, also returning the ``points`` table it wrote."""
    rows, axes, files = _point_rows(out)
    tmp = out / f".catalog.{os.getpid()}.duckdb"
    df = pd.DataFrame(rows)
    try:
        tmp.unlink(missing_ok=True)
        con = duckdb.connect(str(tmp))
        try:
            con.register("points_df", df)
            con.execute("CREATE TABLE points AS SELECT * FROM points_df")
            con.unregister("points_df")
            _create_views(con, files, axes)
        finally:
            con.close()
        final = out / "catalog.duckdb"
        os.replace(tmp, final)
    finally:
        for f in (tmp, tmp.with_name(tmp.name + ".wal")):
            f.unlink(missing_ok=True)
    return final, df


class Results:
    """A sweep's results, queried in place (nothing is loaded until asked)."""

    def __init__(self, out: str | os.PathLike[str]) -> None:
        self.out = Path(out)
        cat = self.out / "catalog.duckdb"
        if not cat.exists():
            raise FileNotFoundError(f"no catalog in {self.out} (run a sweep there first)")
        axes = read_plan(self.out)["axes"]
        self.con = duckdb.connect(str(cat), read_only=True)
        # Points that were done when the catalog was built and are damaged now (found
        # again in the directory, as the views are, so they follow a moved directory).
        self.damaged: dict[str, str] = {}
        files: dict[str, list[Path]] = {v: [] for v in VIEWS}
        for (h,) in self.con.sql("SELECT hash FROM points WHERE status = 'done'").fetchall():
            point = self.out / "points" / h
            try:
                names = read_point(point)[1]
            except DamagedPoint as e:
                self.damaged[h] = str(e)
                continue
            _add_files(files, point, names)
        if self.damaged:
            db = self.con.sql("SELECT current_database()").fetchall()[0][0].replace('"', '""')
            cases = " ".join(f"WHEN '{h}' THEN '{r.replace(chr(39), chr(39) * 2)}'"
                             for h, r in self.damaged.items())
            self.con.execute(
                "CREATE TEMP VIEW points AS SELECT * REPLACE (CASE WHEN hash IN "
                f"({', '.join(repr(h) for h in self.damaged)}) THEN 'damaged' ELSE status "
                f"END AS status, CASE hash {cases} ELSE CAST(error AS VARCHAR) END AS error) "
                f'FROM "{db}".main.points')
        _create_views(self.con, files, axes, temp=True)

    def sql(self, query: str) -> pd.DataFrame:
        """Any SQL over the table ``points`` and the views of ``VIEWS`` (``flows``,
        ``queries``, ``ports``, ...)."""
        return self.con.sql(query).df()

    def points(self) -> pd.DataFrame:
        return self.sql("SELECT * FROM points")

    def flows(self) -> pd.DataFrame:
        return self.sql("SELECT * FROM flows")

    def queries(self) -> pd.DataFrame:
        return self.sql("SELECT * FROM queries")

    def ports(self) -> pd.DataFrame:
        return self.sql("SELECT * FROM ports")

    def timeseries(self) -> pd.DataFrame:
        """The points' samples (``run.timeseries_interval``), if any point took them."""
        return self.sql("SELECT * FROM timeseries")

    def flow_throughput(self) -> pd.DataFrame:
        """The points' per-flow goodput (``run.flow_throughput_interval``), if any point
        wrote it."""
        return self.sql("SELECT * FROM flow_throughput")

    def pings(self) -> pd.DataFrame:
        """The points' ping RTTs (``[ping]``), if any point pinged."""
        return self.sql("SELECT * FROM pings")

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Results:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_results(out: str | os.PathLike[str]) -> Results:
    """Opens a sweep directory's results (``spillway.open``)."""
    return Results(out)
