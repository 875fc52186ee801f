"""Sweeps, caching, resume after SIGKILL, failures, the catalog and the Dask backend."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pyarrow.parquet as pq
import pytest
import spillway
from spillway.reproduce import shift_seeds
from spillway.sweep import build_sweep, run_sweep

SPILLWAY = [sys.executable, "-m", "spillway"]
FIGURES = ["hash", "status", "events", "packet_hops", "drops", "timeouts", "flows_finished",
           "fct_p99_ps"]


def write_sweep(tmp_path, root, grid, rounds=2, name="sweep.toml"):
    p = tmp_path / name
    lines = [f'base = "{root / "examples/incast.toml"}"', "seeds = 1", "[set]",
             f'"workload.rounds" = {rounds}', "[grid]"]
    lines += [f'"{k}" = {json.dumps(v)}' for k, v in grid.items()]
    p.write_text("\n".join(lines) + "\n")
    return p


def figures(out):
    with spillway.open(out) as r:
        return r.points()[FIGURES].sort_values("hash").reset_index(drop=True)


def test_rerun_skips_every_finished_point(tmp_path, root):
    sweep = spillway.sweep.load_sweep(
        write_sweep(tmp_path, root, {"workload.senders": [4, 8, 16]}))
    first = run_sweep(sweep, tmp_path / "out", workers=2, quiet=True)
    assert (first.ran, first.skipped, first.failed) == (3, 0, 0)
    mtimes = {p: p.stat().st_mtime_ns for p in (tmp_path / "out/points").glob("*/flows.parquet")}
    second = run_sweep(sweep, tmp_path / "out", workers=2, quiet=True)
    assert (second.ran, second.skipped) == (0, 3)
    # No simulation work: nothing was rewritten.
    assert mtimes == {p: p.stat().st_mtime_ns
                      for p in (tmp_path / "out/points").glob("*/flows.parquet")}
    r = subprocess.run(SPILLWAY + ["sweep", str(tmp_path / "sweep.toml"), "--out",
                                   str(tmp_path / "out")], capture_output=True, text=True)
    assert r.returncode == 0 and "3 already done (skipped), 0 to run" in r.stderr


def test_sigkill_then_rerun_gives_the_uninterrupted_catalog(tmp_path, root):
    grid = {"workload.senders": [8, 16, 24, 32, 48, 64]}
    path = write_sweep(tmp_path, root, grid, rounds=60)
    proc = subprocess.Popen(SPILLWAY + ["sweep", str(path), "--out", str(tmp_path / "killed"),
                                        "--workers", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    points = tmp_path / "killed/points"
    deadline = time.time() + 120
    while time.time() < deadline and len(list(points.glob("[0-9a-f]*"))) < 2:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = len(list(points.glob("[0-9a-f]*")))
    assert 2 <= done_before < 6, "the kill should land mid-sweep"
    res = run_sweep(spillway.sweep.load_sweep(path), tmp_path / "killed", workers=2, quiet=True)
    assert res.skipped == done_before and res.ran == 6 - done_before
    assert not list(points.glob(".tmp-*")), "no half-written point survives"
    run_sweep(spillway.sweep.load_sweep(path), tmp_path / "clean", workers=2, quiet=True)
    killed, clean = figures(tmp_path / "killed"), figures(tmp_path / "clean")
    assert killed["hash"].is_unique and len(killed) == 6
    pd.testing.assert_frame_equal(killed, clean)


def test_a_failing_point_is_recorded_and_the_others_finish(tmp_path, root):
    path = write_sweep(tmp_path, root, {"transport.rto_min": ["10ms", "ten", "200ms"]})
    res = run_sweep(spillway.sweep.load_sweep(path), tmp_path / "out", workers=2, quiet=True)
    assert res.failed == 1
    with spillway.open(tmp_path / "out") as r:
        pts = r.points()
    assert sorted(pts.status) == ["done", "done", "failed"]
    err = pts[pts.status == "failed"].error.iloc[0]
    assert "transport.rto_min" in err and "ten" in err


def test_cli_exits_1_when_a_point_failed_and_0_when_all_are_done(tmp_path, root):
    bad = write_sweep(tmp_path, root, {"transport.rto_min": ["10ms", "ten"]})
    r = subprocess.run([*SPILLWAY, "sweep", str(bad), "--out", str(tmp_path / "a")],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "1 of 2 points failed" in r.stderr, r.stderr
    good = write_sweep(tmp_path, root, {"transport.rto_min": ["10ms"]}, name="good.toml")
    r = subprocess.run([*SPILLWAY, "sweep", str(good), "--out", str(tmp_path / "b")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize(("spec", "key"), [
    ({"seeds": 0}, "sweep.seeds"),
    ({"seeds": []}, "sweep.seeds"),
    ({"seeds": ["a"]}, "sweep.seeds"),
    ({"grid": {"workload.senders": []}}, "sweep.grid.workload.senders"),
    ({"grid": {"workload.senders": 4}}, "sweep.grid.workload.senders"),
    ({"zip": {"workload.senders": []}}, "sweep.zip.workload.senders"),
    ({"grid": [1]}, "sweep.grid"),
    ({"schemes": {"a": 3}}, "sweep.schemes.a"),
    ({"base": 5}, "sweep.base"),
    # `seeds` sets run.seed in every point: another value of it used to be dropped silently.
    ({"grid": {"run.seed": [1, 2]}}, "sweep.grid.run.seed"),
    ({"zip": {"run.seed": [1, 2], "workload.senders": [4, 8]}}, "sweep.zip.run.seed"),
    ({"set": {"run.seed": 3}}, "sweep.set.run.seed"),
    ({"schemes": {"a": {"run.seed": 3}}}, "sweep.schemes.a.run.seed"),
])
def test_malformed_sweeps_are_refused_naming_the_key(spec, key):
    with pytest.raises(spillway.ScenarioError) as e:
        build_sweep(spec)
    assert e.value.key == key


def test_query_and_open_agree_with_the_parquet_files(tmp_path, root):
    path = write_sweep(tmp_path, root, {"workload.senders": [4, 16]})
    run_sweep(spillway.sweep.load_sweep(path), tmp_path / "out", workers=2, quiet=True)
    direct = []
    for d in (tmp_path / "out/points").iterdir():
        senders = json.loads((d / "point.json").read_text())["axes"]["senders"]
        f = pq.read_table(d / "flows.parquet").to_pandas()
        direct.append((senders, len(f), int(f.fct_ps.sum()), float(f.fct_ps.quantile(0.99))))
    direct.sort()
    with spillway.open(tmp_path / "out") as r:
        df = r.sql("SELECT senders, count(*) n, sum(fct_ps) s, quantile_cont(fct_ps, 0.99) q "
                   "FROM flows GROUP BY senders ORDER BY senders")
    assert [(int(a), int(b), int(c)) for a, b, c, _ in direct] == \
        [(int(a), int(b), int(c)) for a, b, c in zip(df.senders, df.n, df.s, strict=True)]
    for (_, _, _, q), q2 in zip(direct, df.q, strict=True):
        assert q == pytest.approx(q2)
    cli = subprocess.run(SPILLWAY + ["query", str(tmp_path / "out"),
                                     "SELECT senders, count(*) AS n FROM flows GROUP BY ALL "
                                     "ORDER BY ALL"], capture_output=True, text=True, check=True)
    assert cli.stdout.split() == ["senders", "n", "4", "8", "16", "32"]


def test_dask_backend_gives_the_local_catalog(tmp_path, root):
    pytest.importorskip("dask.distributed")
    sweep = build_sweep({"base": str(root / "examples/incast.toml"), "seeds": [1, 2],
                         "set": {"workload.rounds": 2}, "grid": {"workload.senders": [4, 16]}})
    run_sweep(sweep, tmp_path / "local", workers=2, quiet=True)
    run_sweep(sweep, tmp_path / "dask", workers=2, backend="dask", quiet=True)
    pd.testing.assert_frame_equal(figures(tmp_path / "local"), figures(tmp_path / "dask"))


def test_reproduce_incast_quick_writes_a_report_showing_collapse(tmp_path):
    out = tmp_path / "rep"
    r = subprocess.run(SPILLWAY + ["reproduce", "incast", "--quick", "--out", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    report = (out / "report.md").read_text()
    assert "Quick run" in report
    for img in ("cp_fig1_goodput", "cp_fig8b_qct", "detail_fig3_rto"):
        assert (out / f"{img}.png").stat().st_size > 10_000
        assert f"({img}.png)" in report
    g = pd.read_csv(out / "cp_fig1_goodput.csv")
    slow = g[g.rto_min == "200ms"].set_index("senders").goodput_mbps
    assert slow[slow.index.max()] < 0.5 * slow[4]
    # The collapse holds at its interval's unfavourable end (the rounds' bootstrap).
    assert "- **PASS**: with RTOmin 200 ms goodput collapses as senders grow" in report
    v = pd.read_parquet(out / "verdicts.parquet")
    assert set(v.figure) == {"cp_fig1_goodput", "cp_fig8b_qct", "detail_fig3_rto"}
    assert set(v.verdict) <= {"PASS", "FAIL", "INCONCLUSIVE"}
    collapse = v[v.claim.str.startswith("with RTOmin 200 ms goodput collapses")].iloc[0]
    assert collapse.interval == "derived" and collapse.hi < 0.5
    # PFC drops nothing in any run: a property of every run, PASS or FAIL.
    assert v[v.claim.str.startswith("no packet is lost")].verdict.tolist() == ["PASS"]


def test_reproduce_seeds_from_renumbers_every_figures_seeds(tmp_path):
    """`--seeds-from K` runs the same figures on other draws: seeds 1..n become K..K+n-1,
    and the report says so."""
    assert shift_seeds({"seeds": 3}, 5)["seeds"] == [5, 6, 7]
    assert shift_seeds({"seeds": [1, 4]}, 10)["seeds"] == [10, 13]
    assert shift_seeds({}, 2)["seeds"] == [2]
    out = tmp_path / "rep"
    r = subprocess.run(SPILLWAY + ["reproduce", "incast", "--quick", "--figure",
                                   "detail_fig3_rto", "--seeds-from", "7", "--out", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "--seeds-from 7" in (out / "report.md").read_text()
    with spillway.open(out / "data" / "detail_fig3_rto") as res:
        seeds = set(res.points()["seed"])
    assert seeds == {7}
    r = subprocess.run(SPILLWAY + ["reproduce", "incast", "--quick", "--seeds-from", "-1",
                                   "--out", str(out)], capture_output=True, text=True)
    assert r.returncode != 0 and "--seeds-from -1" in r.stderr


def test_catalog_skips_points_a_concurrent_sweep_is_still_writing(tmp_path, root):
    """The catalog must not read a half-written point (`points/.tmp-*`, e.g. of a worker
    still running), which used to fail the whole build."""
    spec = {"base_text": (root / "examples/incast.toml").read_text(), "seeds": 1,
            "set": {"workload.rounds": 1, "workload.senders": 2}}
    out = tmp_path / "out"
    run_sweep(build_sweep(spec), out, workers=1, quiet=True)
    writing = out / "points" / f".tmp-0123456789abcdef-{os.getpid()}-00000000"
    writing.mkdir()
    (writing / "flows.parquet").write_bytes(b"not yet a parquet file")
    run_sweep(build_sweep(spec), out, workers=1, quiet=True)  # rebuilds the catalog
    assert writing.exists()  # a live writer's directory is left alone
    with spillway.open(out) as r:
        assert len(r.flows()) == 2


def test_label_axes_name_structured_values_and_reach_no_scenario(tmp_path, root):
    """`label.*` keys are axes only; a structured value (a list of route tables) is passed
    to the scenario and recorded as its TOML text."""
    pin = {"at": "leaf2", "to": [1], "via": ["spine1"]}
    routes = [[{"at": "leaf1", "to": [0], "via": [v]}, pin] for v in ("spine0", "spine1")]
    spec = {"base_text": (root / "examples/cp/ooo.toml").read_text(), "seeds": 1,
            "set": {"run.duration": "5ms"},
            "zip": {"label.path": ["A", "B"], "switch.routes": routes}}
    sweep = build_sweep(spec)
    assert all(not any(o.startswith("label.") for o in p.overrides) for p in sweep.points)
    run_sweep(sweep, tmp_path / "out", workers=1, quiet=True)
    with spillway.open(tmp_path / "out") as r:
        pts = r.points().set_index("path")
        assert list(pts["status"]) == ["done", "done"]
        assert pts.loc["B", "routes"] == ('[{at = "leaf1", to = [0], via = ["spine1"]}, '
                                          '{at = "leaf2", to = [1], via = ["spine1"]}]')
        ports = r.sql("""SELECT p.path, ports.node, sum(ports.enqueued) AS n FROM points p
                         JOIN ports USING (hash) WHERE ports.peer = 12 AND ports.node >= 16
                         GROUP BY ALL""")
    # Host 3's packets to host 0 cross only the pinned spine (16 = spine0, 17 = spine1);
    # host 6's flow to host 1 is pinned to spine1.
    got = {(r.path, r.node): r.n for r in ports.itertuples()}
    assert got.get(("A", 16), 0) > 0
    assert got.get(("B", 16), 0) == 0


def test_point_hash_follows_the_code_as_well_as_the_scenario(root, monkeypatch):
    """The cache key includes the code: the same scenario under another build is another
    point, so results of older code are never reused."""
    spec = {"base": str(root / "examples/incast.toml"), "grid": {"workload.senders": [4]}}
    a = build_sweep(spec)
    spillway.sweep.plan(a)
    b = build_sweep(spec)
    spillway.sweep.plan(b)
    assert a.points[0].hash == b.points[0].hash
    monkeypatch.setattr(spillway.sweep, "code_id", lambda: "another build")
    c = build_sweep(spec)
    spillway.sweep.plan(c)
    assert c.points[0].hash != a.points[0].hash


def test_seed_axes_are_refused_naming_seeds(tmp_path, root, usage_error):
    path = write_sweep(tmp_path, root, {"run.seed": [1, 2]})
    usage_error(["sweep", str(path), "--out", str(tmp_path / "out")],
                "sweep.grid.run.seed", "`seeds`")


def _group(pgid: int) -> list[int]:
    """Live (not zombie) processes of a process group."""
    pids = []
    for d in os.listdir("/proc"):
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            pids.append(int(d))
    return pids


def _workers(pid: int) -> list[int]:
    out = []
    for p in _group(pid):
        try:
            cmd = open(f"/proc/{p}/cmdline").read()
        except OSError:
            continue
        if "spawn_main" in cmd:
            out.append(p)
    return out


def _start_slow_sweep(tmp_path, root, workers=2):
    """A sweep (in its own process group) whose points each take seconds, once its
    workers are up."""
    path = write_sweep(tmp_path, root, {"workload.senders": [60, 61, 62, 63]}, rounds=3000,
                       name="slow.toml")
    # Output to a file: workers that outlive the sweep would hold a pipe open.
    with open(tmp_path / "stderr", "w") as err:
        # Ctrl-C's default action, as in a terminal, whatever the test runner inherited:
        # a runner started in the background by a non-interactive shell (`make test &`)
        # ignores SIGINT, and an ignored signal stays ignored across exec.
        proc = subprocess.Popen(SPILLWAY + ["sweep", str(path), "--out", str(tmp_path / "slow"),
                                            "--workers", str(workers)],
                                stdout=subprocess.DEVNULL, stderr=err, start_new_session=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 60
    while time.time() < deadline and (
            len(_workers(proc.pid)) < workers if workers > 1
            else not (tmp_path / "slow/sweep.json").exists()):
        time.sleep(0.05)
    # And a point under way: the sweep is past starting its pool.
    while time.time() < deadline and not list((tmp_path / "slow/points").glob(".tmp-*")):
        time.sleep(0.05)
    return proc


def _kill_group(pgid):
    for p in _group(pgid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, signal.SIGKILL)


def test_sigkill_of_a_sweep_ends_its_workers(tmp_path, root):
    """Workers used to outlive a SIGKILLed sweep: they finished more points and then
    idled forever (~150 MB each)."""
    proc = _start_slow_sweep(tmp_path, root)
    try:
        assert len(_workers(proc.pid)) == 2
        proc.kill()
        proc.wait()
        deadline = time.time() + 5
        while time.time() < deadline and _group(proc.pid):
            time.sleep(0.05)
        assert _group(proc.pid) == []
    finally:
        _kill_group(proc.pid)


def test_ctrl_c_stops_a_sweep_in_one_line_with_exit_130(tmp_path, root):
    """Ctrl-C (SIGINT to the foreground process group) used to print the tracebacks of
    the sweep and of its workers, and to wait for the workers to run every point left."""
    proc = _start_slow_sweep(tmp_path, root)
    try:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=20)
        err = (tmp_path / "stderr").read_text()
        assert proc.returncode == 130, err
        assert err.splitlines()[-1] == "spillway: interrupted" and "Traceback" not in err
        deadline = time.time() + 5
        while time.time() < deadline and _group(proc.pid):
            time.sleep(0.05)
        assert _group(proc.pid) == []
        assert not list((tmp_path / "slow/points").glob(".tmp-*"))
    finally:
        _kill_group(proc.pid)
        proc.wait()


def test_a_second_sweep_into_a_running_sweeps_directory_is_refused(tmp_path, root,
                                                                    usage_error):
    """A second sweep with another plan into the same --out used to overwrite the first's
    plan: the first printed the second's table and its own points vanished from the
    catalog. It is now refused while the first runs, and not after it was killed."""
    proc = _start_slow_sweep(tmp_path, root, workers=1)
    out = tmp_path / "slow"
    try:
        plan = (out / "sweep.json").read_text()
        other = write_sweep(tmp_path, root, {"workload.senders": [2, 3]}, rounds=1)
        usage_error(["sweep", str(other), "--out", str(out)], "another sweep",
                    f"pid {proc.pid}")
        assert (out / "sweep.json").read_text() == plan
    finally:
        proc.kill()
        proc.wait()
    # The killed sweep's lock died with it.
    r = subprocess.run(SPILLWAY + ["sweep", str(other), "--out", str(out), "--workers", "1"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[:3] == ["hash", "senders", "seed"]
    assert sorted(line.split()[1] for line in r.stdout.splitlines()[1:]) == ["2", "3"]
