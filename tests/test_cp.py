"""CP and DCTCP from the command line: a testbed incast's outputs and the reproduction's
query figure (CP §6.1, Fig. 8b) on a quick sweep."""

import json
import subprocess
import sys

import pandas as pd
import pyarrow.parquet as pq
import pytest

SPILLWAY = [sys.executable, "-m", "spillway"]


def test_cp_incast_reports_cut_packets_and_packs(root, tmp_path):
    out = tmp_path / "cp"
    r = subprocess.run(SPILLWAY + ["run", str(root / "examples/cp/cp.toml"), "--out", str(out),
                                   "--set", "workload.senders=64", "--set", "workload.rounds=2"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    assert s["cut_packets"] > 0
    # Every cut packet reached its receiver and came back as a PACK; nothing timed out.
    assert s["packs"] == s["cut_packets"] and s["cut_dropped"] == 0
    assert s["timeouts"] == 0 and s["flows_unfinished"] == 0
    ports = pq.read_table(out / "ports.parquet").to_pandas()
    assert ports["cut"].sum() == s["cut_packets"]
    # The aggregation switch (the top tier, 128 KB) is where payloads are cut.
    cut_at = ports[ports["cut"] > 0]
    assert (cut_at["capacity_bytes"] == 128 * 1024).all()
    assert (cut_at["max_bytes"] <= 128 * 1024 + 4096).all()


def test_reproduce_cp_query_figure(tmp_path):
    out = tmp_path / "repro"
    r = subprocess.run(SPILLWAY + ["reproduce", "cp", "--quick", "--out", str(out),
                                   "--figure", "cp_fig8b_query"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    t = pd.read_csv(out / "cp_fig8b_query.csv")
    assert set(t["scheme"]) == {"TCP", "CP", "DCTCP", "DCTCP+CP"}
    cp = t[(t.scheme == "CP") & (t.senders <= 32)]
    assert (cp["timeouts"] == 0).all() and (cp["mean_qct_ms"] < 12).all()
    report = (out / "report.md").read_text()
    assert "CP Fig. 8(b)" in report and (out / "cp_fig8b_qct.png").exists()


def test_reproduce_cp_long_flow_figures(tmp_path):
    """Outcast (Figs. 10-11) and the two-path experiment (Fig. 14) on a quick sweep: TCP's
    few in-rack flows are starved (Outcast, §2.2), and TCP with three duplicate ACKs
    collapses under reordering while CP with none stays near footnote 11's theory."""
    out = tmp_path / "repro"
    r = subprocess.run(SPILLWAY + ["reproduce", "cp", "--quick", "--out", str(out),
                                   "--figure", "cp_fig10_outcast", "--figure", "cp_fig14_ooo"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    o = pd.read_csv(out / "cp_fig10_outcast.csv").set_index(["scheme", "pair"])
    assert o.loc[("TCP", "12-2"), "exp_over_bg"] < 0.5
    # Each group's resends per delivered segment, from the flows' own counters (the
    # points table has a run total of the same name that must not stand in for them),
    # per run, then the mean over the seeds.
    per_run: dict[tuple[str, str, str], list[float]] = {}
    for d in (out / "data" / "cp_fig10_outcast" / "points").iterdir():
        axes = json.loads((d / "point.json").read_text())["axes"]
        f = pq.read_table(d / "flows.parquet").to_pandas()
        for col, g in (("exp_resent_per_seg", f[f.src == 1]), ("bg_resent_per_seg", f[f.src != 1])):
            want = g.retransmits.sum() / (g.delivered_bytes.sum() / 1460)
            per_run.setdefault((axes["scheme"], axes["pair"], col), []).append(want)
    assert len(per_run) == 2 * len(o)
    for (scheme, pair, col), xs in per_run.items():
        assert len(xs) == o.loc[(scheme, pair), "seeds"] > 1
        want = sum(xs) / len(xs)
        assert abs(o.loc[(scheme, pair), col] - want) < 1e-9 * max(1, want), (scheme, pair, col)
    # The bottleneck stays busy: every scheme delivers most of the link in total.
    assert (o["total_mbps"] > 850).all()
    t = pd.read_csv(out / "cp_fig14_ooo.csv")
    mid = t[t.p > 0].set_index(["scheme", "p"])
    for p in (0.2, 0.4):
        assert mid.loc[("TCP-3", p), "of_theory"] < 0.5
        assert abs(mid.loc[("CP-inf", p), "of_theory"] - 1) < 0.25
        # And near the square-root-law model, with NewReno's window or CUBIC's.
        for s in ("CP-inf", "CP-inf(cubic)"):
            assert abs(mid.loc[(s, p), "of_aimd"] - 1) < 0.2, (s, p)
        # With Linux's TSO deferral only the single-path flow, never out of order, sends
        # in bursts, and tail drop cuts it more: the multipath flow gets more than with
        # a segment per ACK (the figure's notes).
        assert mid.loc[("CP-inf(tso)", p), "goodput_mbps"] > mid.loc[("CP-inf", p), "goodput_mbps"]
    report = (out / "report.md").read_text()
    assert "CP Fig. 14" in report and (out / "cp_fig11_efjr.png").exists()


def test_reproduce_cp_realistic_figure_reads_timeouts_from_the_flows(tmp_path):
    """Fig. 15's timeout counts, recomputed from each point's own flows.parquet and
    queries.parquet: a query waits on a timeout when one of its flows timed out and took
    RTOmin (10 ms) or longer, so such a query also took RTOmin or longer and has a flow
    that timed out. TCP with RTOmin 10 ms has such queries (CP §6.4); CP and DCTCP+CP
    have none ("no query traffic suffered timeouts")."""
    out = tmp_path / "repro"
    r = subprocess.run(SPILLWAY + ["reproduce", "cp", "--quick", "--out", str(out),
                                   "--figure", "cp_fig15_realistic"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    t = pd.read_csv(out / "cp_fig15_realistic.csv").set_index(["scheme", "spine_buffer"])
    points = list((out / "data" / "cp_fig15_realistic" / "points").iterdir())
    assert len(points) == len(t) == 8
    for d in points:
        axes = json.loads((d / "point.json").read_text())["axes"]
        row = t.loc[(axes["scheme"], axes["spine_buffer"])]
        f = pq.read_table(d / "flows.parquet").to_pandas()
        q = pq.read_table(d / "queries.parquet").to_pandas()
        f = f[f["query_id"].notna()]
        timed_out = f[f["timeouts"] > 0]
        waited = set(timed_out[timed_out["fct_ps"] >= 10e9]["query_id"])
        over = set(q[q["qct_ps"] >= 10e9]["query_id"])
        assert row["queries_waiting_on_timeout"] == len(waited)
        assert row["queries_with_sender_timeout"] == len(set(timed_out["query_id"]))
        assert row["queries_over_rto"] == len(over)
        assert waited <= over and waited <= set(timed_out["query_id"])
    assert (t.loc["TCP", "queries_waiting_on_timeout"] > 0).all()
    for s in ("CP", "DCTCP+CP"):
        assert (t.loc[s, "queries_waiting_on_timeout"] == 0).all()


def test_every_cp_testbed_run_uses_the_papers_rto_min():
    """CP §6 Protocols: RTOmin is 10 ms or 200 ms in every experiment, and a scheme named
    for one uses it. Checked on the resolved scenario of every point of every figure, so
    a figure that forgets the key (and runs with the simulator's 1 ms default) fails."""
    import tomllib

    from spillway.reproduce import cp
    from spillway.run import validate
    from spillway.sweep import build_sweep

    for quick in (True, False):
        for fig in cp.figures(quick):
            sweep = build_sweep(fig.sweep)
            for p in sweep.points[:: max(1, len(sweep.points) // 40)]:
                resolved = tomllib.loads(validate(sweep.base_text, p.overrides))
                rto = resolved["transport"]["rto_min"]
                assert rto in ("10ms", "200ms"), (fig.id, p.axes, rto)
                name = str(p.axes.get("scheme", ""))
                for named in ("10ms", "200ms"):
                    if f"({named})" in name:
                        assert rto == named, (fig.id, p.axes, rto)


def test_the_cp_figures_run_the_named_schemes_with_the_testbeds_settings():
    """The schemes come from spillway.schemes; what each figure adds (Fig. 12's RTOs and
    threshold 3, Fig. 14's thresholds and host models) is pinned here, value for value."""
    from spillway.reproduce import cp

    tcp = {"transport.kind": "tcp"}
    cut = {"switch.overflow": "cut_payload", "transport.dupack_threshold": "off"}
    dctcp = {"transport.kind": "dctcp", "switch.ecn": "threshold"}
    four = {"TCP": tcp, "CP": tcp | cut, "DCTCP": dctcp, "DCTCP+CP": dctcp | cut}
    sweeps = {f.id: f.sweep for f in cp.figures(quick=True)}
    for fig in ("cp_fig8a_goodput", "cp_fig8b_query", "cp_fig10_outcast",
                "cp_fig15_realistic", "cp_fig16a_10x"):
        assert sweeps[fig]["schemes"] == four, fig
    assert sweeps["cp_fig16b_buffers"]["schemes"] == {"CP": tcp | cut}
    dup3 = {"transport.dupack_threshold": 3}
    rto200 = {"transport.rto_min": "200ms"}
    assert sweeps["cp_fig12_multi"]["schemes"] == {
        "TCP(10ms)": tcp, "TCP(200ms)": tcp | rto200, "DCTCP(200ms)": dctcp | rto200,
        "CP": tcp | cut | dup3, "DCTCP+CP": dctcp | cut | dup3}
    inf = {"transport.dupack_threshold": "off"}
    linux = dup3 | {"transport.max_reordering": 127}
    gro = {"host.rx_coalesce": "50us", "host.gro": True}
    assert sweeps["cp_fig14_ooo"]["schemes"] == {
        "TCP-3": tcp | dup3, "TCP-3(linux)": tcp | linux,
        "TCP-3(linux+undo)": tcp | linux | {"transport.undo": True}, "TCP-inf": tcp | inf,
        "TCP-inf(200ms)": tcp | inf | rto200, "CP-3": tcp | cut | dup3, "CP-inf": tcp | cut,
        "CP-inf(cubic)": tcp | cut | {"transport.kind": "cubic"},
        "CP-inf(tso)": tcp | cut | {"transport.tso_defer": "2ms"},
        "CP-inf(gro)": tcp | cut | gro, "DCTCP-3": dctcp | dup3}


def test_cp_fig1_8a_is_reproduced_once_for_the_cp_and_the_incast_reports():
    """One function, `goodput`, makes CP Fig. 1/8(a) for both reports: the CP report's on
    the testbed's racks with four schemes, the incast report's on one switch with TCP."""
    from spillway.reproduce import cp, incast
    from spillway.reproduce.cp.incast import goodput

    for quick in (True, False):
        figs = {f.id: f for f in [*cp.figures(quick), *incast.figures(quick)]}
        for fig_id, model in (("cp_fig8a_goodput", "testbed"), ("cp_fig1_goodput", "star")):
            fig = figs[fig_id]
            assert fig.analyze.__qualname__ == "goodput.<locals>.analyze"
            assert fig.sweep == goodput(quick, model).sweep
        assert "schemes" not in figs["cp_fig1_goodput"].sweep
        assert 'kind = "star"' in figs["cp_fig1_goodput"].sweep["base_text"]
    with pytest.raises(ValueError, match="unknown model 'fat_tree'; known: testbed, star"):
        goodput(True, "fat_tree")
