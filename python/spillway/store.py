"""The results store: ``DIR/catalog.duckdb`` indexes a sweep; Parquet files hold the data.

Tables and views in the catalog:

- ``points``: one row per point of the sweep plan: ``hash``, ``status`` (done, failed,
  pending), the axis columns, ``error``, ``wall_s`` and headline figures from each
  point's summary.json (``events``, ``packet_hops``, ``drops``, ``timeouts``,
  ``retransmits``, ``flows_finished``, ``flows_unfinished``, ``fct_p50_ps``,
  ``fct_p99_ps``, ``fct_p999_ps``, ``qct_p50_ps``, ``qct_p99_ps``).
- ``flows``, ``queries``, ``ports``: the points' Parquet files, each row tagged with
  its point's ``hash`` and axis columns, so one query spans the whole sweep::

      spillway query DIR "SELECT senders, rto_min, avg(size_bytes*8e12/qct_ps) AS goodput
                          FROM queries GROUP BY ALL ORDER BY ALL"
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

VIEWS = ("flows", "queries", "ports")


def _point_rows(out: Path) -> tuple[list[dict[str, Any]], list[str]]:
    plan = json.loads((out / "sweep.json").read_text())
    axes = plan["axes"]
    rows, seen = [], set()
    for p in plan["points"]:
        h = p["hash"]
        if h in seen:
            continue
        seen.add(h)
        row: dict[str, Any] = {"hash": h, **{a: p["axes"].get(a) for a in axes}}
        summary = out / "points" / h / "summary.json"
        failed = out / "failed" / f"{h}.json"
        if summary.exists():
            s = json.loads(summary.read_text())
            fct, qct = s.get("fct_ps", {}), s.get("qct_ps", {})
            row.update(status="done", error=None, wall_s=s["wall_s"], events=s["events"],
                       packet_hops=s["packet_hops"], drops=s["drops"], timeouts=s["timeouts"],
                       retransmits=s["retransmits"], flows_finished=s["flows_finished"],
                       flows_unfinished=s["flows_unfinished"], fct_p50_ps=fct.get("p50"),
                       fct_p99_ps=fct.get("p99"), fct_p999_ps=fct.get("p99.9"),
                       qct_p50_ps=qct.get("p50"), qct_p99_ps=qct.get("p99"))
        elif failed.exists():
            f = json.loads(failed.read_text())
            row.update(status="failed", error=f["error"], wall_s=f.get("wall_s"))
        else:
            row.update(status="pending", error=None)
        rows.append(row)
    return rows, axes


# A finished point's directory (a hex hash), in glob syntax both pathlib and DuckDB read.
POINT_DIR_GLOB = "[0-9a-f]*"


def _create_views(con: duckdb.DuckDBPyConnection, out: Path, axes: list[str],
                  temp: bool = False) -> None:
    cols = ", ".join(["p.hash"] + [f'p."{a}"' for a in axes])
    kind = "TEMP VIEW" if temp else "VIEW"
    # Point directories are named by their hex hash; `.tmp-*` ones are points still being
    # written by a concurrent sweep into the same directory, and must not be read.
    for v in VIEWS:
        files = list((out / "points").glob(f"{POINT_DIR_GLOB}/{v}.parquet"))
        if not files:
            continue
        glob = str((out / "points").resolve() / POINT_DIR_GLOB / f"{v}.parquet")
        glob = glob.replace("'", "''")
        con.execute(
            f"CREATE OR REPLACE {kind} {v} AS SELECT {cols}, f.* EXCLUDE (filename) "
            f"FROM read_parquet('{glob}', filename = true, union_by_name = true) f "
            f"JOIN points p ON p.hash = split_part(f.filename, '/', -2)")


def build_catalog(out: str | os.PathLike[str]) -> Path:
    """(Re)builds ``out/catalog.duckdb`` from the plan and the point directories."""
    out = Path(out)
    rows, axes = _point_rows(out)
    tmp = out / f".catalog.{os.getpid()}.duckdb"
    tmp.unlink(missing_ok=True)
    con = duckdb.connect(str(tmp))
    try:
        df = pd.DataFrame(rows)
        con.register("points_df", df)
        con.execute("CREATE TABLE points AS SELECT * FROM points_df")
        con.unregister("points_df")
        _create_views(con, out, axes)
    finally:
        con.close()
    final = out / "catalog.duckdb"
    os.replace(tmp, final)
    return final


class Results:
    """A sweep's results, queried in place (nothing is loaded until asked)."""

    def __init__(self, out: str | os.PathLike[str]) -> None:
        self.out = Path(out)
        cat = self.out / "catalog.duckdb"
        if not cat.exists():
            raise FileNotFoundError(f"no catalog in {self.out} (run a sweep there first)")
        self.con = duckdb.connect(str(cat), read_only=True)
        # Views that follow the directory even if it was moved since the sweep.
        axes = json.loads((self.out / "sweep.json").read_text())["axes"]
        _create_views(self.con, self.out, axes, temp=True)

    def sql(self, query: str) -> pd.DataFrame:
        """Any SQL over the tables ``points`` and views ``flows``, ``queries``, ``ports``."""
        return self.con.sql(query).df()

    def points(self) -> pd.DataFrame:
        return self.sql("SELECT * FROM points")

    def flows(self) -> pd.DataFrame:
        return self.sql("SELECT * FROM flows")

    def queries(self) -> pd.DataFrame:
        return self.sql("SELECT * FROM queries")

    def ports(self) -> pd.DataFrame:
        return self.sql("SELECT * FROM ports")

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Results:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_results(out: str | os.PathLike[str]) -> Results:
    """Opens a sweep directory's results (``spillway.open``)."""
    return Results(out)
