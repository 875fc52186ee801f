"""`spillway reproduce hpcc` end to end on a small Clos at the paper's rates: every figure,
table and claim is written, and the runs' counts agree with the tables."""

from __future__ import annotations

import pandas as pd
import pytest
from spillway.reproduce import hpcc

# Two pods of two racks of four hosts, 100 Gbit/s to the hosts, 400 between the tiers.
SMALL = hpcc.BASE.replace("pods = 5", "pods = 2").replace(
    "racks_per_pod = 4", "racks_per_pod = 2").replace(
    "hosts_per_rack = 16", "hosts_per_rack = 4").replace(
    "planes = 4", "planes = 2").replace("spines_per_plane = 4", "spines_per_plane = 2")


@pytest.fixture(scope="module")
def tiny_report(tmp_path_factory):
    from spillway.reproduce import reproduce
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(hpcc, "BASE", SMALL)
        mp.setattr(hpcc, "QUICK", hpcc.Scale(hadoop="1ms", incast="2500us", rounds=1,
                                             seeds=(1, 2)))
        out = tmp_path_factory.mktemp("hpcc")
        yield out, reproduce("hpcc", out, quick=True, workers=2)


def test_the_reproduction_writes_every_figure_and_claim(tiny_report):
    out, report = tiny_report
    text = report.read_text()
    assert "HPCC Fig. 11" in text and "60-to-1 incasts" in text
    v = pd.read_parquet(out / "verdicts.parquet")
    assert len(v) == 5 and set(v.verdict) <= {"PASS", "FAIL", "INCONCLUSIVE"}
    assert (v.detail.str.len() > 15).all()
    for png in ("hpcc_fig11_hadoop50", "hpcc_incast_pfc"):
        assert (out / f"{png}.png").stat().st_size > 5000, png
    t = pd.read_csv(out / "hpcc_fig11_hadoop50.csv")
    assert list(t.scheme) == ["DCQCN", "HPCC", "DCTCP"]
    assert (t.flows > 100).all() and (t.drops == 0).all()


def test_each_scheme_ran_with_its_own_control(tiny_report):
    """The runs' resolved scenarios: RoCE hosts on the lossless fabric, each scheme its
    congestion control and marking, DCQCN with the simulator's notification point."""
    import json
    import tomllib
    out, _ = tiny_report
    seen = {}
    for d in sorted((out / "data" / "hpcc_fig11_hadoop50" / "points").iterdir()):
        if not (d / "point.json").exists():
            continue
        scheme = json.loads((d / "point.json").read_text())["axes"]["scheme"]
        sc = tomllib.loads((d / "scenario.toml").read_text())
        seen[scheme] = (sc["transport"]["kind"], sc["transport"]["cc"], sc["switch"]["ecn"],
                        sc["switch"]["flow_control"])
        if scheme == "DCQCN":
            assert sc["transport"]["dcqcn_cnp_interval"] == "0us"
    assert seen == {"DCQCN": ("roce", "dcqcn", "red", "pfc"),
                    "HPCC": ("roce", "hpcc", "off", "pfc"),
                    "DCTCP": ("roce", "dctcp", "threshold", "pfc")}
