"""The sweep store counts a point as done only when all its files are whole: a damaged
point is left out of the catalog and of queries, moved aside, reported and recomputed."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import spillway
from spillway.store import build_catalog
from spillway.sweep import build_sweep, run_sweep

ROOT = Path(__file__).resolve().parent.parent
SPILLWAY = [sys.executable, "-m", "spillway"]
FIGURES = ["hash", "status", "events", "drops", "flows_finished", "fct_p99_ps", "qct_p99_ps"]
SENDERS = [2, 3, 4, 5, 6, 7]


def _truncate(f: Path) -> None:
    f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])


# One kind of damage per point (by its number of senders); senders = 7 stays whole.
DAMAGE = {
    2: ("flows.parquet", _truncate),
    3: ("summary.json", Path.unlink),
    4: ("summary.json", lambda f: f.write_text('{"events": ')),
    5: ("queries.parquet", Path.unlink),
    6: ("ports.parquet", _truncate),
}


def _spec() -> dict:
    return {"base": str(ROOT / "examples/incast.toml"), "seeds": 1,
            "set": {"workload.rounds": 1}, "grid": {"workload.senders": SENDERS}}


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Path:
    """A finished sweep of six tiny incasts (one round each), run once per module."""
    out = tmp_path_factory.mktemp("clean") / "out"
    res = run_sweep(build_sweep(_spec()), out, workers=1, quiet=True)
    assert res.ran == len(SENDERS) and res.failed == 0
    return out


def _damaged_copy(clean: Path, tmp_path: Path) -> tuple[Path, dict[int, str]]:
    """A copy of the clean sweep with DAMAGE done; returns it and the damaged hashes."""
    out = tmp_path / "out"
    shutil.copytree(clean, out)
    hashes = {}
    for d in (out / "points").iterdir():
        senders = json.loads((d / "point.json").read_text())["axes"]["senders"]
        if senders in DAMAGE:
            name, harm = DAMAGE[senders]
            harm(d / name)
            hashes[senders] = d.name
    assert len(hashes) == len(DAMAGE)
    return out, hashes


def _figures(out: Path) -> pd.DataFrame:
    with spillway.open(out) as r:
        return r.points()[FIGURES].sort_values("hash").reset_index(drop=True)


def test_query_answers_while_points_are_damaged(clean, tmp_path):
    """`spillway query` used to fail on any query, `points` included, once one finished
    point held a truncated Parquet file."""
    out, damaged = _damaged_copy(clean, tmp_path)
    r = subprocess.run(SPILLWAY + ["query", str(out), "SELECT senders, status FROM points "
                                   "ORDER BY senders"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[2:] == ["2", "damaged", "3", "damaged", "4", "damaged", "5",
                                    "damaged", "6", "damaged", "7", "done"]
    # Each damaged point is named on a line of stderr, with what is wrong with it.
    lines = r.stderr.splitlines()
    assert len(lines) == len(damaged) and all("is damaged" in line for line in lines)
    assert {line.split()[2] for line in lines} == set(damaged.values())
    assert "flows.parquet has" in r.stderr and "summary.json is missing" in r.stderr
    # The views read only whole points: the one intact incast's 7 flows.
    r = subprocess.run(SPILLWAY + ["query", str(out), "SELECT count(*) AS n, min(senders) AS s "
                                   "FROM flows"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.split()[2:] == ["7", "7"], r.stderr


def test_catalog_is_built_around_a_damaged_point_and_no_temporary_file_is_left(clean, tmp_path):
    """Building the catalog used to raise on one truncated flows.parquet, leaving its
    temporary `.catalog.<pid>.duckdb` behind."""
    out, damaged = _damaged_copy(clean, tmp_path)
    build_catalog(out)
    assert sorted(p.name for p in out.iterdir() if "catalog" in p.name) == ["catalog.duckdb"]
    with spillway.open(out) as r:
        pts = r.points().set_index("senders")
        n = r.sql("SELECT count(*) AS n FROM flows").n[0]
    assert list(pts.status) == ["damaged"] * 5 + ["done"]
    assert "summary.json has 11 bytes" in pts.loc[4, "error"]
    assert n == 7


def test_rerun_moves_damaged_points_aside_reports_and_recomputes_them(clean, tmp_path, capsys):
    """A rerun used to crash building the catalog (truncated Parquet), or to rerun a point
    missing summary.json every time without ever repairing it (the rename into the
    existing directory failed silently). Now each damaged point is reported in one
    line, kept under DIR/damaged/ and run again; the store ends as a clean sweep's."""
    out, damaged = _damaged_copy(clean, tmp_path)
    res = run_sweep(build_sweep(_spec()), out, workers=1, quiet=True)
    assert (res.ran, res.skipped, res.failed) == (5, 1, 0)
    assert set(res.damaged) == set(damaged.values())
    lines = capsys.readouterr().err.splitlines()
    assert sorted(line.split()[2].rstrip(":") for line in lines) == sorted(damaged.values())
    assert all(line.startswith("damaged point ") and "running it again" in line
               for line in lines)
    # Kept for inspection, as found.
    aside = {d.name.split("-")[0]: d for d in (out / "damaged").iterdir()}
    assert set(aside) == set(damaged.values())
    assert not (aside[damaged[3]] / "summary.json").exists()
    assert (aside[damaged[2]] / "flows.parquet").stat().st_size < \
        (clean / "points" / damaged[2] / "flows.parquet").stat().st_size
    pd.testing.assert_frame_equal(_figures(out), _figures(clean))
    assert not [p for p in out.iterdir() if p.name.startswith(".catalog")]
    # Repaired for good: the next run has nothing to do.
    again = run_sweep(build_sweep(_spec()), out, workers=1, quiet=True)
    assert (again.ran, again.skipped) == (0, len(SENDERS))
