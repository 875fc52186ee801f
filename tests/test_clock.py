"""`topology.clock_ppm`: one clock per node within the tolerance, and what it is for, the
lockout of a port's other inputs when every link runs at exactly the same rate."""

from statistics import median

import pyarrow.parquet as pq
import pytest
from spillway.errors import ScenarioError
from spillway.reproduce.cp.bottlenecks import MULTI_SET, multi_flows
from spillway.reproduce.cp.testbed import TESTBED
from spillway.run import run
from spillway.sweep import toml_literal

FAT_TREE = """
[topology]
kind = "fat_tree"
k = 4
link_rate = "1Gbps"
fabric_rate = "10Gbps"
[workload]
kind = "trace"
[[workload.flows]]
src = 0
dst = 5
size = "10KB"
start = "0us"
"""


def _port_rates(tmp_path, overrides):
    r = run(FAT_TREE, tmp_path / "clock", overrides, progress=False)
    assert r.summary["flows_finished"] == 1
    return pq.read_table(tmp_path / "clock" / "ports.parquet").to_pandas()


def test_each_node_has_one_clock_within_the_tolerance(tmp_path):
    exact = _port_rates(tmp_path, [])
    nominal = exact["rate_bps"].astype(float)
    assert set(nominal) == {1e9, 10e9}
    for seed in (1, 2):
        ports = _port_rates(tmp_path, ["topology.clock_ppm=100", f"run.seed={seed}"])
        x = ports["rate_bps"].astype(float) / nominal - 1
        # Within ±100 ppm, rounded to whole bit/s.
        assert (x.abs() <= 100e-6 + 1 / nominal).all()
        # A node's ports share its clock; different nodes (almost surely) do not.
        per_node = x.groupby(ports["node"])
        assert (per_node.max() - per_node.min() <= 2 / nominal.min()).all()
        assert per_node.mean().nunique() == ports["node"].nunique()
        # Spread over the tolerance, not bunched at one end.
        assert per_node.mean().min() < -30e-6 and per_node.mean().max() > 30e-6
    again = _port_rates(tmp_path, ["topology.clock_ppm=100", "run.seed=2"])
    assert (again["rate_bps"] == ports["rate_bps"]).all()
    other = _port_rates(tmp_path, ["topology.clock_ppm=100", "run.seed=1"])
    assert (other["rate_bps"] != ports["rate_bps"]).any()


def test_a_negative_tolerance_is_refused(tmp_path):
    with pytest.raises(ScenarioError, match="topology.clock_ppm"):
        run(FAT_TREE, tmp_path / "bad", ["topology.clock_ppm=-5"], progress=False)


def _two_bottlenecks(n: int) -> list[str]:
    """CP Fig. 12's setting (the reproduction's own settings and flows), n flows in each
    group, 500 ms: its flows 1 -> 0 keep host 1's link busy."""
    over = {**MULTI_SET, "workload.flows": multi_flows(n, n), "run.duration": "500ms"}
    return [f"{k}={toml_literal(v)}" for k, v in over.items()]


def test_exact_clocks_lock_a_full_ports_other_input_out(tmp_path):
    """Host 0's ToR port is full and its departures are paced by host 1's busy link: with
    every rate exact, each departure's room goes to host 1's packet arriving at the same
    picosecond, and the cross-rack flows get next to nothing in most seeds (receive jitter
    shifts the ACK clocks, and now and then a run escapes for a while); with clocks within
    ±100 ppm the phases drift and they get a real share in most seeds."""
    def cross_rack_mbps(ppm: int, seed: int) -> float:
        run(TESTBED, tmp_path / "lk", _two_bottlenecks(3) + [f"topology.clock_ppm={ppm}",
                                                            f"run.seed={seed}"], progress=False)
        f = pq.read_table(tmp_path / "lk" / "flows.parquet").to_pandas()
        mine = f[(f.src == 3) & (f.dst == 0)]
        return mine["delivered_bytes"].sum() * 8 / 0.5 / 1e6

    seeds = range(1, 9)
    exact = [cross_rack_mbps(0, s) for s in seeds]
    drifting = [cross_rack_mbps(100, s) for s in seeds]
    # Footnote 10's fair share for 3 of 3 flows is 316 Mbps.
    assert median(exact) < 10
    assert max(exact) < 0.15 * 316
    assert median(drifting) > 100
