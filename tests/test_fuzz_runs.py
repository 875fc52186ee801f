"""Long runs over random mechanism combinations, to completion, with their outputs
checked against truths the simulator did not choose: every flow finishes after it starts
and no sooner than it could alone on its path (slowdown >= 1), nothing finishes after the
run's end, every byte offered arrives exactly once, and every query ends after it began.
Clocks far from zero (starts up to a day, slow links, long delays) exercise the time
arithmetic near its limits (docs/reference.md § Limits)."""

import random
from collections.abc import Iterator

import numpy as np
import pytest
from spillway import ScenarioError, _core
from test_fuzz import MECHANISMS

TOPOLOGIES = [
    'kind = "star"\nhosts = 6',
    'kind = "dumbbell"\nhosts = 8',
    'kind = "leaf_spine"\nracks = 3\nhosts_per_rack = 3\nspines = 2',
    'kind = "fat_tree"\nk = 4',
]
# Far from the defaults, within the limits: slow or fast links, long propagation.
TIMING = {
    "topology.link_rate": ["100Mbps", "1Gbps", "10Gbps", "100Gbps"],
    "topology.link_delay": ["0us", "1us", "500us", "20ms"],
    "transport.rto_max": ["100ms", "60s", "86400s"],
}


def _workload(rng: random.Random, hosts: int) -> str:
    kind = rng.choice(["trace", "incast", "poisson", "request_response"])
    if kind == "trace":
        # Starts spread over up to a day: the clock runs far from zero.
        base = rng.choice([0, 10**6, 86_400 * 10**6 - 10**6])
        flows = []
        for _ in range(rng.randint(1, 12)):
            src, dst = rng.sample(range(hosts), 2)
            size = rng.choice([1, 1460, 1461, 50_000, 400_000, 2_000_000])
            flows.append(f'{{src = {src}, dst = {dst}, size = {size}, '
                         f'start = "{base + rng.randint(0, 2000)}us"}}')
        return 'kind = "trace"\nflows = [' + ", ".join(flows) + "]"
    if kind == "incast":
        return (f'kind = "incast"\nsenders = {rng.randint(1, 40)}\nsize = "64KB"\n'
                f'rounds = {rng.randint(1, 5)}\njitter = "{rng.choice([0, 5, 50])}us"')
    if kind == "poisson":
        return (f'kind = "poisson"\nload = {rng.choice([0.1, 0.5, 0.9])}\n'
                f'max_flows = {rng.randint(20, 300)}')
    return f'kind = "request_response"\nload = 0.3\nqueries = {rng.randint(10, 100)}'


def draws(seed: int, count: int = 60) -> Iterator[tuple[str, str, list[str]]]:
    """The random combinations: (topology, scenario text, overrides), ``count`` of them
    from ``seed`` (tests/test_parallel.py runs the same draws cut into processes)."""
    rng = random.Random(1000 + seed)
    for _ in range(count):
        topo = rng.choice(TOPOLOGIES)
        hosts = {0: 6, 1: 8, 2: 9, 3: 16}[TOPOLOGIES.index(topo)]
        text = f"[topology]\n{topo}\n[workload]\n{_workload(rng, hosts)}\n"
        knobs = sorted(MECHANISMS.items()) + sorted(TIMING.items())
        overrides = [f"{k}={rng.choice(v)}" for k, v in rng.sample(knobs, rng.randint(2, 10))]
        yield topo, text, overrides


def _to_end(sim: _core.Simulation) -> tuple[dict, dict]:
    """Runs ``sim`` to its end; its flow and query records, each column joined."""
    flows, queries = [], []
    while True:
        done = sim.step(10**6)
        flows.append(sim.take_flows())
        queries.append(sim.take_queries())
        if done:
            break

    def join(parts: list[dict]) -> dict:
        return {k: np.concatenate([x[k] for x in parts]) for k in parts[0]}
    return join(flows), join(queries)


@pytest.mark.parametrize("seed", range(3))
def test_random_runs_to_completion_keep_their_outputs_true(seed: int) -> None:
    ran = 0
    for _topo, text, overrides in draws(seed):
        try:
            sim = _core.Simulation(text, overrides + ["run.duration=off",
                                                      "run.max_events=20000000"], None)
        except ScenarioError:
            continue  # a combination refused at validation
        ran += 1
        f, q = _to_end(sim)
        what = (text, overrides)
        assert sim.stop_reason == "all_flows_done", (sim.stop_reason, what)
        c = sim.counters()
        end = c["sim_time_ps"]
        assert (f["finish_ps"] >= f["start_ps"]).all(), what
        assert (f["finish_ps"] <= end).all(), what
        assert (f["fct_ps"] == f["finish_ps"] - f["start_ps"]).all(), what
        # Alone on its path a flow could do no better (clock drift: ports up to 100 ppm
        # faster than the path the ideal was computed on).
        floor = 1 - 3e-4 if "topology.clock_ppm=100" in overrides else 1.0
        assert (f["slowdown"] >= floor).all(), (f["slowdown"].min(), what)
        assert (f["delivered_bytes"] == f["size_bytes"]).all(), what
        assert c["bytes_delivered"] == c["bytes_offered"] == f["size_bytes"].sum(), what
        assert c["flows_finished"] == c["flows_started"] == len(f["flow_id"]), what
        assert (q["finish_ps"] >= q["start_ps"]).all() and (q["finish_ps"] <= end).all(), what
        assert c["queries_unfinished"] == 0, what
    assert ran >= 30, f"only {ran} of 60 combinations were accepted"


# RoCE hosts: each congestion control with what it reacts to, on the lossless fabric or a
# lossy one (go-back-N), through the same mechanisms' far corners. Timeouts are the
# milliseconds RoCE NICs run: one below the queueing a path can hold (8 ms a hop behind
# 1 MB at 1 Gbit/s) fires spuriously under pauses, and go-back-N's resends feed the pauses
# (docs/mechanisms.md § RoCE hosts).
ROCE = {
    "transport.cc": ["none", "dcqcn", "hpcc", "dctcp"],
    "switch.kind": ["oq", "cioq"],
    "switch.buffer": ["24KB", "128KB", "1MB"],
    "transport.mss": ["1000", "4096"],
    "transport.rto_min": ["2ms", "20ms"],
    "transport.roce_window": ["true", "false"],
    "transport.dcqcn_cnp_interval": ["0us", "50us"],
    "transport.hpcc_max_stage": ["0", "5"],
    "topology.link_rate": ["10Gbps", "25Gbps", "100Gbps"],
    "topology.link_delay": ["0us", "1us", "20us"],
}
MARKING = {"none": "off", "dcqcn": "red", "hpcc": "off", "dctcp": "threshold"}


@pytest.mark.parametrize("seed", range(2))
def test_random_roce_runs_deliver_every_byte_once(seed: int) -> None:
    rng = random.Random(2000 + seed)
    ran = 0
    for _ in range(30):
        topo = rng.choice(TOPOLOGIES[1:])  # a star's one switch would have 6 ports: fine too
        hosts = {1: 8, 2: 9, 3: 16}[TOPOLOGIES.index(topo)]
        o = {k: rng.choice(v) for k, v in ROCE.items()}
        o["switch.ecn"] = MARKING[o["transport.cc"]]
        if o["transport.cc"] == "none":
            # Line rate with go-back-N on a lossy fabric collapses (every loss resends a
            # round trip's bytes: docs/mechanisms.md § RoCE hosts): PFC's, as RoCE is run.
            o["switch.kind"] = "cioq"
        if o["switch.kind"] == "oq" and o["topology.link_delay"] == "20us":
            # Go-back-N on a lossy fabric whose round trip holds many buffers' worth (here
            # 300 us at up to 100 Gbit/s against 24 KB to 1 MB) resends a round trip per
            # loss: it recovers, slowly, but not within a test's budget.
            o["topology.link_delay"] = "1us"
        if o["switch.kind"] == "cioq":
            o["switch.flow_control"] = "pfc"
            o["switch.buffer"] = "1MB"  # PFC's headroom for 8 classes
        text = f"[topology]\n{topo}\n[transport]\nkind = \"roce\"\n[workload]\n" \
               f"{_workload(rng, hosts)}\n"
        overrides = [f"{k}={v}" for k, v in o.items()]
        try:
            sim = _core.Simulation(text, overrides + ["run.duration=off",
                                                      "run.max_events=50000000"], None)
        except ScenarioError:
            continue
        ran += 1
        f, _ = _to_end(sim)
        what = (text, overrides)
        assert sim.stop_reason == "all_flows_done", (sim.stop_reason, what)
        c = sim.counters()
        assert (f["slowdown"] >= 1.0).all(), (f["slowdown"].min(), what)
        assert (f["delivered_bytes"] == f["size_bytes"]).all(), what
        assert c["bytes_delivered"] == c["bytes_offered"] == f["size_bytes"].sum(), what
        if o["switch.kind"] == "cioq":
            assert c["drops"] == 0, what  # lossless
    assert ran >= 20, f"only {ran} of 30 combinations were accepted"
