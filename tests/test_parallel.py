"""Parallel runs (docs/architecture.md § Parallel runs): the fuzz runs' random
combinations, cut into logical processes, give the same flows for 1, 2, 3, 4 and 8
threads and keep the fuzz runs' truths; `spillway.run` writes byte-identical files for
any `threads`; the command line takes `--threads`; sweeps share the cores."""

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import spillway
from spillway import ScenarioError, _core
from spillway.sweep import thread_share
from test_fuzz_runs import draws

ROOT = Path(__file__).resolve().parent.parent
THREADS = [1, 2, 3, 4, 8]


def _flows(text: str, overrides: list[str]) -> tuple[dict[str, np.ndarray], dict, str]:
    sim = _core.Simulation(text, overrides, None)
    parts = []
    while True:
        done = sim.step(20_000)
        parts.append(sim.take_flows())
        if done:
            break
    f = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    return f, sim.counters(), sim.stop_reason


@pytest.mark.parametrize("seed", range(2))
def test_fuzz_draws_cut_into_processes_give_the_same_flows_for_any_thread_count(
        seed: int) -> None:
    """The fuzz runs' draws (same generator) on the fabrics a parallel run cuts."""
    ran = 0
    for topo, text, overrides in draws(seed):
        if "leaf_spine" not in topo and "fat_tree" not in topo:
            continue
        base = overrides + ["run.duration=off", "run.max_events=3000000",
                            "run.partitions=auto"]
        try:
            _core.validate(text, base + ["run.threads=1"], None)
        except ScenarioError:
            continue  # refused at validation (a parallel run refuses Fastpass)
        ref, counters, stop = _flows(text, base + ["run.threads=1"])
        what = (text, overrides)
        for t in THREADS[1:]:
            f, c, s = _flows(text, base + [f"run.threads={t}"])
            assert s == stop, what
            assert c == counters, (t, what)
            for k in ref:
                np.testing.assert_array_equal(f[k], ref[k], err_msg=f"{k}, {t} threads, {what}")
        ran += 1
        if stop == "all_flows_done":
            # The fuzz runs' truths hold on the cut fabric too.
            assert (ref["finish_ps"] >= ref["start_ps"]).all(), what
            # (As in test_fuzz_runs: ports' clocks up to 100 ppm fast may beat the ideal.)
            floor = 1 - 3e-4 if "topology.clock_ppm=100" in overrides else 1.0 - 1e-9
            assert (ref["slowdown"] >= floor).all(), what
            assert (ref["delivered_bytes"] == ref["size_bytes"]).all(), what
            assert counters["bytes_delivered"] == counters["bytes_offered"], what
    assert ran >= 8, ran


def _digest(out: Path, name: str) -> str:
    return hashlib.sha256((out / name).read_bytes()).hexdigest()


def test_run_writes_the_same_files_for_any_thread_count(tmp_path: Path) -> None:
    """flows, ports and summary (wall-clock fields and the thread count aside)."""
    scenario = ROOT / "examples" / "websearch.toml"
    sets = ["run.duration=3ms", "run.partitions=auto"]
    outs = {}
    for t in (1, 2, 3):
        out = tmp_path / f"t{t}"
        res = spillway.run(scenario, out, sets, progress=False, threads=t)
        assert res.summary["partitions"] == 4  # k=8: Partition::auto
        assert res.summary["provenance"]["threads"] == t
        outs[t] = out
    for name in ("flows.parquet", "ports.parquet"):
        assert len({_digest(o, name) for o in outs.values()}) == 1, name
    wall = {"wall_s", "sim_wall_s", "events_per_s", "packet_hops_per_s", "provenance"}
    summaries = [{k: v for k, v in json.loads((o / "summary.json").read_text()).items()
                  if k not in wall} for o in outs.values()]
    assert summaries[0] == summaries[1] == summaries[2]
    assert summaries[0]["flows_finished"] > 50


def test_every_table_is_the_same_for_any_thread_count(tmp_path: Path) -> None:
    """Queries on DeTail's lossless fabric, cut into racks, with every sampler and
    pings: each file the run writes is byte-identical for 1, 2 and 4 threads."""
    scenario = ROOT / "examples" / "detail" / "priority_pfc.toml"
    sets = ["run.duration=3ms", "run.partitions=auto", "run.timeseries_interval=100us",
            "run.queue_sample_interval=20us", "run.flow_throughput_interval=500us",
            "ping.interval=50us", "ping.src=0", "ping.dst=95"]
    outs = [tmp_path / f"t{t}" for t in (1, 2, 4)]
    for t, out in zip((1, 2, 4), outs, strict=True):
        res = spillway.run(scenario, out, sets, progress=False, threads=t)
        assert res.summary["partitions"] > 1
    names = ["flows.parquet", "queries.parquet", "ports.parquet", "timeseries.parquet",
             "flow_throughput.parquet", "pings.parquet"]
    for name in names:
        assert (outs[0] / name).exists(), name
        assert len({_digest(o, name) for o in outs}) == 1, name


def test_the_command_line_takes_threads(tmp_path: Path) -> None:
    from spillway.cli import main

    out = tmp_path / "r"
    assert main(["run", str(ROOT / "examples" / "websearch.toml"), "--out", str(out),
                 "--set", "run.duration=1ms", "--set", "run.partitions=4",
                 "--threads", "2", "--quiet"]) == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["partitions"] == 4 and s["provenance"]["threads"] == 2
    with pytest.raises(SystemExit):
        main(["run", "x.toml", "--out", str(out), "--threads", "0"])


def test_refusals_name_the_key() -> None:
    text = (ROOT / "examples" / "query.toml").read_text()
    with pytest.raises(ScenarioError) as e:
        _core.validate(text, ["run.partitions=2", "host.qdisc=fastpass",
                              "fastpass.arbiter=0"], None)
    assert "parallel run" in str(e.value) and "host.qdisc" in str(e.value)


def test_sweep_workers_share_the_cores() -> None:
    assert thread_share(2, cores=2) == 1
    assert thread_share(1, cores=8) == 8
    assert thread_share(3, cores=8) == 2
    assert thread_share(16, cores=8) == 1
