"""`spillway run` and the Python API: output files, columns, summary, determinism."""

import json
import subprocess
import sys
import time

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
                                    "size_bytes", "flows", "parent"]
    assert queries.column("parent").null_count == 3
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


def test_sequential_web_requests_are_the_parents_of_their_queries(tmp_path):
    """queries.parquet's `parent`: each web request's row (null parent) spans its 3
    queries, which name it; the summary's qct is over the web requests."""
    scenario = tmp_path / "seq.toml"
    scenario.write_text('[topology]\nkind = "star"\nhosts = 8\n[workload]\n'
                        'kind = "sequential"\nsequence = 3\nclients = [0, 1, 2, 3]\n'
                        'workers = [4, 5, 6, 7]\nrate = 1000\nqueries = 40\n')
    res = spillway.run(scenario, tmp_path / "out")
    q = res.queries.to_pylist()
    web = [r for r in q if r["parent"] is None]
    assert len(web) == 40 and len(q) == 40 * 4
    for w in web:
        parts = sorted((r for r in q if r["parent"] == w["query_id"]),
                       key=lambda r: r["start_ps"])
        assert len(parts) == 3
        assert parts[0]["start_ps"] == w["start_ps"]
        assert parts[-1]["finish_ps"] == w["finish_ps"]
        assert sum(p["size_bytes"] for p in parts) == w["size_bytes"]
    qct = sorted(w["qct_ps"] for w in web)
    assert res.summary["qct_ps"]["p50"] == (qct[19] + qct[20]) / 2


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


def _files(d):
    return {p.name: p.read_bytes() for p in d.iterdir()}


def test_a_run_replaces_an_earlier_runs_outputs_whole(tmp_path, root):
    """A trace run into the directory of an incast run used to leave the incast's
    queries.parquet beside its own files (and the Python API did the same)."""
    out = tmp_path / "out"
    spillway.run(root / "examples/incast.toml", out, ["workload.senders=2", "workload.rounds=1"])
    assert (out / "queries.parquet").exists()
    r = subprocess.run(SPILLWAY + ["run", str(root / "examples/trace.toml"), "--out", str(out),
                                   "--set", "run.duration=1ms"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in out.iterdir()) == ["flows.parquet", "ports.parquet",
                                                     "scenario.toml", "summary.json"]
    res = spillway.run(root / "examples/incast.toml", out, ["workload.senders=2",
                                                            "workload.rounds=1"])
    assert res.queries is not None and res.out == out
    spillway.run(root / "examples/trace.toml", out, ["run.duration=1ms"])
    assert not (out / "queries.parquet").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["out"], "no temporary directory is left"


def test_a_killed_run_leaves_the_earlier_outputs_untouched(tmp_path, root):
    """Killing a run used to leave its new scenario.toml (and a truncated flows.parquet)
    beside the earlier run's summary.json. Now the earlier files stay as they were until
    the new run is complete, and the next run removes the killed one's leftovers."""
    out = tmp_path / "out"
    spillway.run(root / "examples/trace.toml", out, ["run.duration=1ms"])
    before = _files(out)
    proc = subprocess.Popen(SPILLWAY + ["run", str(root / "examples/websearch.toml"), "--out",
                                        str(out), "--set", "run.duration=10s"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def writing():
        return any(p.name != "out" for p in tmp_path.iterdir()) or \
            (out / "scenario.toml").read_bytes() != before["scenario.toml"]

    try:
        deadline = time.time() + 30
        while time.time() < deadline and not writing():
            time.sleep(0.02)
        assert writing()
        time.sleep(0.3)
    finally:
        proc.kill()
        proc.wait()
    assert _files(out) == before
    spillway.run(root / "examples/trace.toml", out, ["run.duration=1ms"])
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_an_output_directory_holding_other_files_is_refused(tmp_path, root, usage_error):
    """A run replaces its directory whole, so one holding files a run does not write is
    left alone: exit 2, nothing written, the files intact."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / "summary.json").write_text("{}")
    usage_error(["run", str(root / "examples/trace.toml"), "--out", str(out)],
                "notes.txt", "new or empty directory")
    with pytest.raises(spillway.errors.UsageError):
        spillway.run(root / "examples/trace.toml", out)
    assert _files(out) == {"notes.txt": b"mine", "summary.json": b"{}"}
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_empty_names_are_refused(tmp_path, root, usage_error):
    """`--out ""` used to write into the current directory, and `spillway run ""` ran
    the default scenario."""
    usage_error(["run", str(root / "examples/trace.toml"), "--out", ""], "--out is empty",
                cwd=tmp_path)
    usage_error(["run", "", "--out", "o"], "empty", cwd=tmp_path)
    usage_error(["validate", ""], "empty", cwd=tmp_path)
    with pytest.raises(spillway.errors.UsageError):
        spillway.run(root / "examples/trace.toml", "")
    assert list(tmp_path.iterdir()) == []
