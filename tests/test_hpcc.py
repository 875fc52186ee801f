"""HPCC's files through `spillway run`: a topology.txt and flow.txt made here, fct.txt
written beside flows.parquet and read back as that pipeline's scripts read it."""

import random
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import spillway


def _two_tier(d: Path, hosts: int = 8, per: int = 4, spines: int = 2) -> None:
    """HPCC's topology.txt: hosts first, then rack switches, then spines."""
    racks = hosts // per
    links = [f"{h} {hosts + h // per} 10000000000bps 1000ns 0" for h in range(hosts)]
    links += [f"{hosts + r} {hosts + racks + s} 40Gbps 1000ns 0.000000"
              for r in range(racks) for s in range(spines)]
    ids = " ".join(str(hosts + i) for i in range(racks + spines))
    (d / "topology.txt").write_text(
        f"{hosts + racks + spines} {racks + spines} {len(links)}\n{ids}\n" + "\n".join(links))


def _flows(d: Path, n: int, hosts: int = 8, with_id: bool = True) -> list[tuple[int, int, int]]:
    """flow.txt of `n` flows from 2 s, as HPCC's traffic generator writes them."""
    rng = random.Random(7)
    t, rows, out = 2.0, [], []
    for i in range(n):
        s = rng.randrange(hosts)
        dst = rng.choice([h for h in range(hosts) if h != s])
        size = rng.choice([1000, 20000, 300000])
        t += rng.expovariate(1 / 2e-6)
        rows.append((f"{i} " if with_id else "") + f"{s} {dst} 3 100 {size} {t:.9f}")
        out.append((s, dst, size))
    (d / "flow.txt").write_text(f"{n}\n" + "\n".join(rows) + "\n")
    return out


SCENARIO = """
[topology]
kind = "graph"
file = "topology.txt"
[workload]
kind = "trace"
format = "hpcc"
file = "flow.txt"
"""


@pytest.mark.parametrize("variant,columns", [("hpcc", 8), ("hpcc9", 9)])
def test_fct_txt_has_a_line_per_finished_flow_in_hpccs_fields(tmp_path: Path, variant: str,
                                                             columns: int) -> None:
    _two_tier(tmp_path)
    flows = _flows(tmp_path, 40, with_id=variant == "hpcc9")
    (tmp_path / "s.toml").write_text(SCENARIO)
    res = spillway.run(tmp_path / "s.toml", tmp_path / "out", [f"run.fct_txt={variant}"],
                       progress=False)
    lines = (tmp_path / "out" / "fct.txt").read_text().splitlines()
    finished = res.summary["flows_finished"]
    assert finished == 40 and len(lines) == finished
    table = pq.read_table(tmp_path / "out" / "flows.parquet").to_pandas()
    off = columns - 8
    seen = set()
    for line in lines:
        f = line.split()
        assert len(f) == columns
        sip, dip = (int(f[off], 16) >> 8) & 0xFFFF, (int(f[off + 1], 16) >> 8) & 0xFFFF
        size, start, fct, standalone = (int(x) for x in f[off + 4:off + 8])
        assert (sip, dip, size) in flows
        # Parsimon's readers: slowdown = fct / standalone, at least about 1.
        assert fct / standalone > 0.9
        if off:
            row = table[table.flow_id == int(f[0])].iloc[0]
            assert (row.src, row.dst, row.size_bytes) == (sip, dip, size)
            assert fct == (row.finish_ps - row.start_ps) // 1000
            assert start == row.start_ps // 1000
            seen.add(int(f[0]))
    assert not off or len(seen) == 40


def test_a_bad_flow_line_is_refused_naming_it(tmp_path: Path) -> None:
    _two_tier(tmp_path)
    (tmp_path / "flow.txt").write_text("2\n0 3 3 100 1000 2.0\n0 9 3 100 1000 2.1\n")
    (tmp_path / "s.toml").write_text(SCENARIO)
    with pytest.raises(spillway.ScenarioError) as e:
        spillway.run(tmp_path / "s.toml", tmp_path / "out", progress=False)
    assert e.value.key == "workload.file"
    assert "line 3" in str(e.value)


CONFIG = """ENABLE_QCN 1
USE_DYNAMIC_PFC_THRESHOLD 1
PACKET_PAYLOAD_SIZE 1000
TOPOLOGY_FILE mix/topology.txt
FLOW_FILE mix/flow.txt
FCT_OUTPUT_FILE mix/fct.txt
SIMULATOR_STOP_TIME 2.01
CC_MODE 8
EWMA_GAIN 0.0625
ERROR_RATE_PER_LINK 0.0000
HAS_WIN 1
ACK_HIGH_PRIO 1
KMAX_MAP 2 10000000000 30 40000000000 120
KMIN_MAP 2 10000000000 30 40000000000 120
PMAX_MAP 2 10000000000 1 40000000000 1
BUFFER_SIZE 3
"""


def test_import_hpcc_maps_what_it_can_and_names_the_rest(tmp_path: Path) -> None:
    from spillway.cli import main

    mix = tmp_path / "mix"
    mix.mkdir()
    _two_tier(mix)
    _flows(mix, 20, with_id=False)
    (mix / "config.txt").write_text(CONFIG)
    scenario = tmp_path / "scen" / "imported.toml"
    assert main(["import", "hpcc", str(mix / "config.txt"), "--out", str(scenario)]) == 0
    text = scenario.read_text()
    for line in ['kind = "graph"', 'file = "../mix/topology.txt"', 'format = "hpcc"',
                 'kind = "roce"', 'cc = "dctcp"', 'kind = "cioq"', 'flow_control = "pfc"',
                 'ecn = "threshold"', 'ecn_threshold = "30000B"',
                 "mss = 1000", "dctcp_g = 0.0625", 'duration = "2010000000ns"',
                 'fct_txt = "hpcc"', "ack_class = 0"]:
        assert line in text, line
    assert ('ecn_threshold_by_rate = { "10000000000bps" = "30000B", '
            '"40000000000bps" = "120000B" }') in text
    for name in ("HAS_WIN", "USE_DYNAMIC_PFC_THRESHOLD"):
        assert f"#   {name} " in text, name
    # 3 MB over the 6 ports of a rack switch (4 hosts, 2 spines).
    assert f'buffer = "{3 * 2**20 // 6}B"' in text
    for name in ("ENABLE_QCN", "PMAX_MAP", "CC_MODE", "EWMA_GAIN", "BUFFER_SIZE"):
        assert f"#   {name} " not in text, name
    res = spillway.run(scenario, tmp_path / "out", progress=False)
    assert res.summary["flows_finished"] == 20
    assert len((tmp_path / "out" / "fct.txt").read_text().splitlines()) == 20


def test_import_hpcc_refuses_a_file_it_cannot_find(tmp_path: Path) -> None:
    (tmp_path / "config.txt").write_text("TOPOLOGY_FILE nowhere/topology.txt\n")
    with pytest.raises(spillway.ScenarioError) as e:
        from spillway.hpcc import import_config
        import_config(tmp_path / "config.txt", tmp_path / "s.toml")
    assert "nowhere/topology.txt" in str(e.value)


DCQCN_HPCC = """TOPOLOGY_FILE mix/topology.txt
FLOW_FILE mix/flow.txt
SIMULATOR_STOP_TIME 2.01
CC_MODE {mode}
ALPHA_RESUME_INTERVAL 1
RATE_DECREASE_INTERVAL 4
RP_TIMER 300
FAST_RECOVERY_TIMES 1
CLAMP_TARGET_RATE 0
EWMA_GAIN 0.00390625
RATE_AI 20Mb/s
RATE_HAI 200Mb/s
MIN_RATE 1000Mb/s
U_TARGET 0.95
MI_THRESH 0
FAST_REACT 1
MULTI_RATE 0
SAMPLE_FEEDBACK 0
HAS_WIN {win}
VAR_WIN {win}
GLOBAL_T 1
L2_ACK_INTERVAL 1
L2_BACK_TO_ZERO 0
KMAX_MAP 2 10000000000 160 40000000000 640
KMIN_MAP 2 10000000000 40 40000000000 160
PMAX_MAP 2 10000000000 0.2 40000000000 0.2
BUFFER_SIZE 3
"""


@pytest.mark.parametrize("mode,cc,win", [(1, "dcqcn", 0), (3, "hpcc", 1)])
def test_import_hpcc_maps_dcqcn_and_hpcc_to_roce(tmp_path: Path, mode: int, cc: str,
                                                 win: int) -> None:
    from spillway.cli import main

    mix = tmp_path / "mix"
    mix.mkdir()
    _two_tier(mix)
    _flows(mix, 20, with_id=False)
    (mix / "config.txt").write_text(DCQCN_HPCC.format(mode=mode, win=win))
    scenario = tmp_path / "imported.toml"
    assert main(["import", "hpcc", str(mix / "config.txt"), "--out", str(scenario)]) == 0
    text = scenario.read_text()
    common = ['kind = "roce"', f'cc = "{cc}"', 'flow_control = "pfc"', 'roce_min_rate = "1000Mbps"',
              f"roce_window = {'true' if win else 'false'}"]
    own = {1: ['ecn = "red"', 'dcqcn_alpha_interval = "1us"', 'dcqcn_decrease_interval = "4us"',
               'dcqcn_increase_interval = "300us"', "dcqcn_fast_recovery = 1",
               "dcqcn_clamp_target = false", "dcqcn_g = 0.00390625",
               'dcqcn_rate_ai = "20Mbps"', 'dcqcn_rate_hai = "200Mbps"', "ecn_pmax = 0.2"],
           3: ['ecn = "off"', "hpcc_eta = 0.95", "hpcc_max_stage = 0", "hpcc_fast_react = true",
               'hpcc_rate_ai = "20Mbps"']}[mode]
    for line in common + own:
        assert line in text, line
    # The simulator's own 100/400 KB per 25 Gbit/s: the RED keys' defaults, not pinned.
    assert "ecn_kmin" not in text and "ecn_kmax" not in text
    # What the other control reads is named, not silently dropped.
    other = {1: "U_TARGET", 3: "RP_TIMER"}[mode]
    assert f"#   {other} " in text
    res = spillway.run(scenario, tmp_path / "out", progress=False)
    assert res.summary["flows_finished"] == 20


def test_import_hpcc_refuses_a_mode_it_has_no_counterpart_for(tmp_path: Path) -> None:
    mix = tmp_path / "mix"
    mix.mkdir()
    _two_tier(mix)
    (mix / "config.txt").write_text("CC_MODE 7\n")
    from spillway.hpcc import import_config
    with pytest.raises(spillway.ScenarioError) as e:
        import_config(mix / "config.txt", tmp_path / "s.toml")
    assert e.value.key == "CC_MODE" and "TIMELY" in str(e.value)
