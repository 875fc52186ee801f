"""`spillway run` and the Python API: output files, columns, summary, determinism."""

import json
import subprocess
import sys

import pyarrow.parquet as pq
import pytest
import spillway

SPILLWAY = [sys.executable, "-m", "spillway"]

REQUIRED_FLOW_COLUMNS = [
    "flow_id", "src", "dst", "size_bytes", "start_ps", "finish_ps", "fct_ps", "ideal_fct_ps",
    "slowdown", "priority", "class", "query_id", "retransmits", "timeouts", "drops",
    "notifications",
]
REQUIRED_SUMMARY = [
    "events", "packet_hops", "drops", "retransmits", "timeouts", "sim_time_ps", "wall_s",
    "sim_wall_s", "events_per_s", "flows_finished", "flows_unfinished",
]


def test_cli_run_writes_the_contracted_files(root, tmp_path):
    out = tmp_path / "incast"
    r = subprocess.run(
        SPILLWAY + ["run", str(root / "examples/incast.toml"), "--out", str(out),
                    "--set", "workload.senders=8", "--set", "workload.rounds=3"],
        capture_output=True, text=True,
    )
    assert r.returncode == 0, r.stderr
    for name in ("flows.parquet", "queries.parquet", "summary.json", "scenario.toml",
                 "ports.parquet"):
        assert (out / name).exists(), name
    flows = pq.read_table(out / "flows.parquet")
    assert flows.num_rows == 8 * 3
    for c in REQUIRED_FLOW_COLUMNS:
        assert c in flows.column_names, c
    queries = pq.read_table(out / "queries.parquet")
    assert queries.column_names == ["query_id", "start_ps", "finish_ps", "qct_ps",
                                    "size_bytes", "flows"]
    assert queries.num_rows == 3
    summary = json.loads((out / "summary.json").read_text())
    for k in REQUIRED_SUMMARY:
        assert k in summary, k
    for p in ("p50", "p99", "p99.9"):
        assert summary["fct_ps"][p] > 0
    assert summary["provenance"]["seed"] == 1
    assert summary["flows_finished"] == 24
    # The rates are the event loop's alone, which is part of the run.
    assert 0 < summary["sim_wall_s"] <= summary["wall_s"]
    assert summary["events_per_s"] == summary["events"] / summary["sim_wall_s"]
    # The resolved scenario carries the override and every default.
    resolved = (out / "scenario.toml").read_text()
    assert "senders = 8" in resolved
    assert "rto_max" in resolved


def test_qct_is_the_slowest_flow_of_each_round(tmp_path, root):
    res = spillway.run(root / "examples/incast.toml", tmp_path, ["workload.senders=6"])
    flows = res.flows.to_pydict()
    for q in res.queries.to_pylist():
        finishes = [f for f, qid in zip(flows["finish_ps"], flows["query_id"], strict=True)
                    if qid == q["query_id"]]
        assert len(finishes) == 6
        assert q["finish_ps"] == max(finishes)
        assert q["qct_ps"] == q["finish_ps"] - q["start_ps"]


def test_same_seed_same_files_other_seed_differs(tmp_path, root):
    scenario = root / "examples/websearch.toml"
    over = ["workload.max_flows=300", "run.duration=off"]
    a = spillway.run(scenario, tmp_path / "a", over)
    b = spillway.run(scenario, tmp_path / "b", over)
    c = spillway.run(scenario, tmp_path / "c", over + ["run.seed=7"])
    for name in ("flows.parquet", "scenario.toml", "ports.parquet"):
        assert (a.out / name).read_bytes() == (b.out / name).read_bytes(), name
    assert (a.out / "flows.parquet").read_bytes() != (c.out / "flows.parquet").read_bytes()
    assert a.summary["events"] == b.summary["events"]


def test_unfinished_flows_have_null_finish(tmp_path, root):
    res = spillway.run(root / "examples/websearch.toml", tmp_path, ["run.duration=200us"])
    s = res.summary
    assert s["stop_reason"] == "duration"
    flows = res.flows
    unfinished = flows.filter(flows.column("finish_ps").is_null())
    assert unfinished.num_rows == s["flows_unfinished"] > 0
    assert s["flows_finished"] + s["flows_unfinished"] == flows.num_rows


def test_queries_cut_short_by_the_duration_are_counted(tmp_path, root):
    """Every query begun is either in queries.parquet or counted unfinished: with all
    2000 run to the end none is left, and a run stopped early holds the rest open."""
    full = spillway.run(root / "examples/query.toml", tmp_path / "full", [])
    assert full.summary["queries_unfinished"] == 0
    assert full.queries.num_rows == 2000
    cut = spillway.run(root / "examples/query.toml", tmp_path / "cut", ["run.duration=20ms"])
    assert cut.summary["stop_reason"] == "duration"
    assert cut.summary["queries_unfinished"] > 0
    # The same seed begins the same queries: those finished by 20 ms are a prefix of the
    # full run's by id, and the open ones the ids just after them (at most the open
    # ones can be out of order).
    done = sorted(cut.queries.column("query_id").to_pylist())
    open_ = cut.summary["queries_unfinished"]
    begun = set(done) | set(range(len(done) + open_))
    assert len(begun) == len(done) + open_


@pytest.mark.parametrize("example", [
    "incast.toml", "websearch.toml", "query.toml", "trace.toml", "pfabric144.toml", "detail96.toml",
    "fastlane/tcp.toml", "fastlane/tcp-sq.toml", "fastlane/tcp-fl-fh.toml",
    "fastlane/tcp-fl-ps.toml", "fastlane/pfabric.toml", "fastlane/pfabric-fl.toml",
    "cp/tcp.toml", "cp/cp.toml", "cp/dctcp.toml", "cp/dctcp-cp.toml"])
def test_examples_validate(root, example):
    r = subprocess.run(SPILLWAY + ["validate", str(root / "examples" / example)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
