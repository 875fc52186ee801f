"""FastLane from the command line: a run's notification outputs, the reproduction's
machinery on one small figure, and the arbiter benchmark's JSON contract."""

import json
import subprocess
import sys

import pyarrow.parquet as pq

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
    # Strict caps scaled 0.25x and 1x: each run within its own cap, idle links counted.
    assert ("✅ holds: notifications stay within their cap, sent on idle links or not "
            "(strict)") in report


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


class _Ports:
    """Stands in for a sweep's results: `sql` returns the given ports table."""

    def __init__(self, rows: list[dict]) -> None:
        import pandas as pd
        self.df = pd.DataFrame(rows)

    def sql(self, query: str):
        return self.df


def _port(scheme: str, sent_bytes: int, idle: int = 0, cap: float | None = None) -> dict:
    row = {"scheme": scheme, "is_switch": True, "rate_bps": 10_000_000_000,
           "notif_sent_bytes": sent_bytes, "notif_sent_idle": idle,
           "notif_generated": sent_bytes // 64, "notif_dropped": 0,
           "notif_max_bytes": 128, "notif_capacity_bytes": 3276, "capacity_bytes": 131072}
    if cap is not None:
        row["fastlane_bandwidth"] = cap
    return row


def test_the_caps_verdict_judges_each_run_against_its_own_cap():
    from spillway.reproduce.fastlane import _caps_verdict
    secs = 0.01  # 1% of 10 Gbps for 10 ms = 125,000 B
    ok = _caps_verdict(_Ports([_port("FL-FH", 100_000)]), secs)[0]
    assert ok.holds
    # 100,000 B is 0.8% of the link: over a cap scaled to 0.25%, within one of 1%.
    scaled = [_port("FL-FH", 100_000, cap=0.0025), _port("FL-FH", 100_000, cap=0.01)]
    assert not _caps_verdict(_Ports(scaled), secs)[0].holds
    # Strict caps count what was sent on idle links too (and there must be none).
    idle = [_port("FL-FH", 100_000, idle=10, cap=0.01)]
    assert _caps_verdict(_Ports(idle), secs)[0].holds
    assert not _caps_verdict(_Ports(idle), secs, strict=True)[0].holds
    # FastLane runs that sent nothing did nothing: no pass by default.
    none = [_port("FL-FH", 0), _port("TCP", 0)]
    assert not _caps_verdict(_Ports(none), secs)[0].holds


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
