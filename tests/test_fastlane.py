"""FastLane from the command line: a run's notification outputs, the reproduction's
machinery on one small figure, and the arbiter benchmark's JSON contract."""

import itertools
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
from _fake_results import FakeResults
from spillway.reproduce.claim import Verdict

PASS, FAIL, INCONCLUSIVE = Verdict.PASS, Verdict.FAIL, Verdict.INCONCLUSIVE

SPILLWAY = [sys.executable, "-m", "spillway"]


def test_fastlane_run_reports_notifications_within_caps(root, tmp_path):
    out = tmp_path / "fl"
    r = subprocess.run(SPILLWAY + ["run", str(root / "examples/fastlane/tcp-fl-ps.toml"),
                                   "--out", str(out), "--set", "run.duration=3ms",
                                   "--set", "workload.load=0.6"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    assert s["notifications_generated"] > 0
    assert s["notifications_generated"] <= s["drops"]
    assert 0 < s["notification_link_share_max"]
    assert s["notification_buffer_share_max"] <= 0.025 + 1e-9
    ports = pq.read_table(out / "ports.parquet").to_pandas()
    assert ports["notif_generated"].sum() == s["notifications_generated"]
    assert (ports["notif_max_bytes"] <= ports["notif_capacity_bytes"]).all()
    flows = pq.read_table(out / "flows.parquet").to_pandas()
    assert {"short", "long", "request"} <= set(flows["class"].astype(str))
    assert flows["notifications"].sum() == s["notifications_delivered"]


def test_reproduce_fastlane_one_figure_writes_a_report(tmp_path):
    out = tmp_path / "repro"
    r = subprocess.run(SPILLWAY + ["reproduce", "fastlane", "--quick", "--out", str(out),
                                   "--figure", "fl_fig10_11_caps"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    report = (out / "report.md").read_text()
    assert "Figs. 10–11" in report
    for png in ("fl_fig10_caps.png", "fl_fig11_caps.png"):
        assert (out / png).stat().st_size > 1000
    table = (out / "fl_fig10_11_caps.csv").read_text().splitlines()
    assert table[0].startswith("scheme,cap_scale")
    assert len(table) == 1 + 2 * 2  # two schemes at two cap scalings
    # Strict caps scaled 0.25x and 1x: each run within its own cap, idle links counted
    # (a property of every run: PASS or FAIL, never an interval's INCONCLUSIVE).
    assert ("- **PASS**: notifications stay within their cap, sent on idle links or not "
            "(strict)") in report
    v = pq.read_table(out / "verdicts.parquet").to_pandas()
    assert set(v.figure) == {"fl_fig10_11_caps"}
    assert set(v.verdict) <= {"PASS", "FAIL", "INCONCLUSIVE"}
    caps = v[v.claim.str.startswith("notifications stay within")]
    assert caps.verdict.tolist() == ["PASS"]
    # The tails behind the other claim come with bootstrap intervals over one run's flows.
    lengthens = v[v.claim.str.startswith("shrinking the caps")].iloc[0]
    assert lengthens.verdict != "FAIL" and "FL-FH" in lengthens.detail


def test_reproduce_refuses_an_unknown_figure(tmp_path):
    r = subprocess.run(SPILLWAY + ["reproduce", "fastlane", "--quick", "--out", str(tmp_path),
                                   "--figure", "fig99"], capture_output=True, text=True)
    assert r.returncode != 0
    assert "fig99" in r.stderr and "fl_fig6_tcp" in r.stderr


def test_bench_arbiter_json_has_the_contracted_keys():
    r = subprocess.run(SPILLWAY + ["bench", "arbiter", "--json", "--quick"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    b = json.loads(r.stdout)
    assert {"alloc", "alloc_realtime_tbps_1core", "alloc_2threads", "pathsel"} <= set(b)
    for row in b["alloc"] + b["alloc_2threads"]:
        assert {"load", "us_per_timeslot", "utilization", "gbps_per_core"} <= set(row)
        assert 0 < row["utilization"] <= 1
    assert {"perm512_median_us", "perm512_p99_us", "by_load"} <= set(b["pathsel"])


def _port(scheme: str, sent_bytes: int, idle: int = 0, cap: float | None = None,
          run: str = "h1", load: float = 0.4) -> dict:
    row = {"hash": run, "scheme": scheme, "load": load, "seed": 1, "is_switch": True,
           "rate_bps": 10_000_000_000, "notif_sent_bytes": sent_bytes, "notif_sent_idle": idle,
           "notif_generated": sent_bytes // 64, "notif_dropped": 0,
           "notif_max_bytes": 128, "notif_capacity_bytes": 3276, "capacity_bytes": 131072}
    if cap is not None:
        row["fastlane_bandwidth"] = cap
    return row


def _ports(rows: list[dict]) -> FakeResults:
    return FakeResults(ports=pd.DataFrame(rows))


def test_the_caps_claim_judges_each_run_against_its_own_cap():
    from spillway.reproduce.fastlane import _within_caps
    secs = 0.01  # 1% of 10 Gbps for 10 ms = 125,000 B
    assert _within_caps(_ports([_port("FL-FH", 100_000)]), secs, "load").verdict is PASS
    # 100,000 B is 0.8% of the link: over a cap scaled to 0.25%, within one of 1%. One run
    # over its cap fails the claim, and the report names it.
    scaled = [_port("FL-FH", 100_000, cap=0.0025, run="a", load=0.2),
              _port("FL-FH", 100_000, cap=0.01, run="b")]
    c = _within_caps(_ports(scaled), secs, "load")
    assert c.verdict is FAIL and "broken in 1 of 2 runs: FL-FH load 0.2 seed 1" in c.why
    # Strict caps count what was sent on idle links too (and there must be none).
    idle = [_port("FL-FH", 100_000, idle=10, cap=0.01)]
    assert _within_caps(_ports(idle), secs, "load").verdict is PASS
    assert _within_caps(_ports(idle), secs, "load", strict=True).verdict is FAIL
    # A notification buffer over its capacity on one port fails it.
    full = [_port("FL-FH", 1000) | {"notif_max_bytes": 4000}]
    assert _within_caps(_ports(full), secs, "load").verdict is FAIL
    # FastLane runs that sent nothing did nothing: no pass.
    none = [_port("FL-FH", 0), _port("TCP", 0, run="h2")]
    assert _within_caps(_ports(none), secs, "load").verdict is FAIL


def _flows(fl_2kb_at_40: np.ndarray) -> FakeResults:
    """Fig. 7's sweep on known numbers, one seed: pFabric's short responses take 0.9-1.0
    ms at every load and size, pFabric+FL's 0.4-0.5 ms but for 2 KB at 40% load, which
    take ``fl_2kb_at_40``; FastLane's runs within their caps."""
    rng = np.random.default_rng(5)
    rows, ports = [], []
    for scheme, load, kb in itertools.product(("pFabric", "pFabric+FL"), (0.2, 0.4, 0.8),
                                              (2, 4, 8)):
        if scheme == "pFabric+FL" and (load, kb) == (0.4, 2):
            ms = fl_2kb_at_40
        else:
            ms = rng.uniform(0.4, 0.5, 1200) if scheme == "pFabric+FL" else \
                rng.uniform(0.9, 1.0, 1200)
        rows.append(pd.DataFrame({"hash": f"{scheme}/{load}", "flow_id": np.arange(len(ms)),
                                  "scheme": scheme, "load": load, "seed": 1, "class": "short",
                                  "size_bytes": kb * 1024, "fct_ps": ms * 1e9}))
        if scheme == "pFabric+FL" and kb == 2:
            ports.append(_port(scheme, 50_000, run=f"{scheme}/{load}", load=load))
    return FakeResults(flows=pd.concat(rows, ignore_index=True),
                       points=pd.DataFrame({"seed": [1], "status": ["done"]}),
                       ports=pd.DataFrame(ports))


def test_fig7_claims_follow_the_tails_intervals(tmp_path):
    """FastLane Fig. 7's band (a 25-75% cut of pFabric's 2 KB tail at 40% load) on known
    numbers: a 50% cut passes, a 90% cut fails, and a tail resting on a few slow flows,
    whose interval straddles the band's edge, is inconclusive."""
    from spillway.reproduce.fastlane import _fig7
    rng = np.random.default_rng(6)
    fig = _fig7(quick=True)

    def claims(fl: np.ndarray) -> list:
        return fig.analyze(_flows(fl), tmp_path)[2]
    half = claims(rng.uniform(0.4, 0.5, 1200))
    assert [c.verdict for c in half] == [PASS, PASS, PASS]
    assert half[0].ours.method == "derived" and half[0].ours.lo > 0.25
    assert claims(rng.uniform(0.05, 0.1, 1200))[0].verdict is FAIL
    # 1195 flows at 0.3 ms and five slow ones: the 99.9th percentile is one of the slow
    # five, and which one the bootstrap cannot tell.
    edge = claims(np.concatenate([np.full(1195, 0.3), np.linspace(0.6, 0.95, 5)]))
    band = edge[0]
    assert band.ours.lo < 0.25 < band.ours.hi and band.verdict is INCONCLUSIVE
    assert edge[1].verdict is PASS  # still below pFabric's tail everywhere


def test_the_reproductions_schemes_are_the_named_ones_with_the_papers_parameters():
    """FastLane's runs take their schemes from spillway.schemes and add §4.2's parameters
    explicitly; the values each run gets are pinned here."""
    from spillway.reproduce.fastlane import SCHEMES
    tcp = {"transport.kind": "tcp"}
    fl = {"switch.overflow": "fastlane", "switch.fastlane_buffer": "3276B"}
    pfabric = {"switch.buffer": "64KB", "switch.queue": "pfabric", "switch.forwarding": "spray",
               "switch.ecn": "off", "transport.kind": "pfabric", "transport.rto_min": "250us",
               "transport.priority": "flow_size"}
    assert SCHEMES == {
        "TCP": tcp,
        "TCP+SQ": tcp | {"switch.overflow": "source_quench"},
        "FL-FH": tcp | fl | {"switch.forwarding": "ecmp"},
        "FL-PS": tcp | fl | {"switch.forwarding": "spray", "transport.dupack_threshold": "off",
                             "transport.ooo_option": True},
        "pFabric": pfabric,
        "pFabric+FL": pfabric | fl,
    }
