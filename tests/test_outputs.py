"""The outputs any scheme can ask for, through `spillway run` and the results store:
queue percentiles in ports.parquet (`run.queue_sample_interval`), flow_throughput.parquet
(`run.flow_throughput_interval`) and pings.parquet (`[ping]`)."""

import numpy as np
import pyarrow.parquet as pq
import pytest
import spillway
from spillway.run import SCHEMAS
from spillway.sweep import build_sweep, run_sweep

QUEUE_COLUMNS = ["queue_samples", "queue_p50_bytes", "queue_p90_bytes", "queue_p99_bytes",
                 "queue_p999_bytes"]
SAMPLERS = ["run.queue_sample_interval=5us", "run.flow_throughput_interval=50us"]
ON = SAMPLERS + ["ping.interval=100us", "ping.src=0", "ping.dst=100", "ping.start=10us"]
# Web search on the 128-host fat tree, every flow run to its end.
BASE = ["workload.max_flows=400", "run.duration=off"]


@pytest.fixture(scope="module")
def runs(root, tmp_path_factory):
    """The same 400 flows with every output on (twice), with the samplers alone, and with
    none."""
    d = tmp_path_factory.mktemp("outputs")
    scenario = root / "examples/websearch.toml"
    return {name: spillway.run(scenario, d / name, BASE + extra)
            for name, extra in (("on", ON), ("again", ON), ("samplers", SAMPLERS),
                                ("off", []))}


def test_the_files_have_their_schemas(runs):
    on, off = runs["on"], runs["off"]
    for name in ("flow_throughput", "pings"):
        t = pq.read_table(on.out / f"{name}.parquet")
        assert t.column_names == [c["name"] for c in SCHEMAS[name]]
        assert not (off.out / f"{name}.parquet").exists()
    assert on.flow_throughput.num_rows > 0 and off.flow_throughput is None
    assert on.pings.num_rows > 0 and off.pings is None
    ports = on.ports.to_pandas()
    for c in ("max_bytes", "is_switch", "peer", *QUEUE_COLUMNS):
        assert c in ports.columns
    # On, every port has as many samples and its percentiles in order, none past its
    # highest occupancy; off, the columns are null.
    assert ports["queue_samples"].nunique() == 1 and ports["queue_samples"].iloc[0] > 100
    q = ports[QUEUE_COLUMNS[1:]].to_numpy()
    assert (np.diff(q, axis=1) >= 0).all()
    assert (q[:, -1] <= ports["max_bytes"] * (1 + 1 / 128)).all()
    assert (ports.loc[ports.is_switch, "queue_p999_bytes"] > 0).any()
    assert off.ports.to_pandas()[QUEUE_COLUMNS].isna().all().all()


def test_sampling_moves_no_result(runs):
    """The samplers only read: the same flows, ports (but the sampled queue's columns)
    and counters (but the events, which they add) as with none."""
    a, b = runs["samplers"], runs["off"]
    fa = a.flows.sort_by("flow_id").to_pydict()
    fb = b.flows.sort_by("flow_id").to_pydict()
    assert len(fa["flow_id"]) == 400 and fa == fb
    pa_, pb = a.ports.to_pydict(), b.ports.to_pydict()
    for c in QUEUE_COLUMNS:
        del pa_[c], pb[c]
    assert pa_ == pb
    skip = {"events", "events_per_s", "packet_hops_per_s", "wall_s", "sim_wall_s",
            "provenance"}
    assert ({k: v for k, v in a.summary.items() if k not in skip}
            == {k: v for k, v in b.summary.items() if k not in skip})


def test_same_scenario_same_files(runs):
    for name in ("flow_throughput.parquet", "pings.parquet", "ports.parquet",
                 "flows.parquet"):
        assert ((runs["on"].out / name).read_bytes()
                == (runs["again"].out / name).read_bytes()), name


def test_each_flow_s_goodput_sums_to_its_size(runs):
    res = runs["on"]
    t = res.flow_throughput.to_pandas()
    flows = res.flows.to_pandas().set_index("flow_id")
    assert res.summary["flows_unfinished"] == 0
    sums = t.groupby("flow_id")["bytes"].sum()
    assert len(sums) == len(flows)
    assert (sums == flows.loc[sums.index, "size_bytes"]).all()
    # Rows come in time order; a flow's last row is at or after its finish.
    assert t["time_ps"].is_monotonic_increasing
    last = t.groupby("flow_id")["time_ps"].max()
    assert (last >= flows.loc[last.index, "finish_ps"]).all()


def test_pings_cross_the_loaded_fabric_and_the_last_is_unanswered(runs):
    res = runs["on"]
    p = res.pings.to_pandas()
    assert (p["src"] == 0).all() and (p["dst"] == 100).all()
    assert p["sent_ps"].iloc[0] == 10_000_000
    assert (np.diff(p["sent_ps"]) == 100_000_000).all()
    # Host 0 to host 100 crosses the core: 6 hops each way, at least 12 us of
    # propagation and 12 frames of 102 B at 10 Gb/s.
    idle = 12 * (1_000_000 + 102 * 800)
    answered = p["rtt_ps"].dropna()
    assert len(answered) >= len(p) - 3
    assert (answered >= idle).all()
    # Under load some waited in queues.
    assert answered.max() > idle
    # The run ended with its flows; nothing pinged after that.
    assert p["sent_ps"].max() <= res.summary["sim_time_ps"]
    assert res.summary["flows_started"] == 400


def test_the_results_store_has_views_of_both_tables(tmp_path, root):
    spec = {"base": str(root / "examples/websearch.toml"), "seeds": 1,
            "set": {"workload.max_flows": 100, "run.duration": "off",
                    "run.flow_throughput_interval": "100us", "ping.interval": "200us",
                    "ping.src": 1, "ping.dst": 2, "run.queue_sample_interval": "20us"},
            "grid": {"workload.load": [0.3, 0.6]}}
    out = tmp_path / "sweep"
    res = run_sweep(build_sweep(spec), out, workers=1, quiet=True)
    assert res.ran == 2 and res.failed == 0
    with spillway.open(out) as r:
        t = r.flow_throughput()
        assert set(t["load"]) == {0.3, 0.6}
        per = r.sql("SELECT load, sum(bytes) AS b FROM flow_throughput GROUP BY load")
        sizes = r.sql("SELECT load, sum(size_bytes) AS b FROM flows GROUP BY load")
        assert per.sort_values("load")["b"].tolist() == sizes.sort_values("load")["b"].tolist()
        p = r.pings()
        assert set(p["load"]) == {0.3, 0.6} and (p["src"] == 1).all()
        q = r.sql("SELECT queue_p50_bytes FROM ports WHERE queue_samples > 0")
        assert len(q) > 0
