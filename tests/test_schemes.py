"""The named schemes (spillway.schemes): every one runs on one fabric, each sets what it
names, what it requires is what validation asks for, and unknown names are refused."""

import tomllib

import pytest
from spillway.errors import ScenarioError
from spillway.run import validate
from spillway.schemes import SCHEMES, Scheme, UnknownSchemeError, scheme
from spillway.sweep import build_sweep

# One fabric for all: a small fat-tree whose ports mark by CoDel (the ECN marker Source
# Quench needs; DCTCP and pFabric set their own marking).
FABRIC = """
[topology]
kind = "fat_tree"
k = 4
[switch]
ecn = "codel"
[workload]
kind = "incast"
senders = 4
"""

EXPECTED = [
    "TCP", "CUBIC", "DCTCP", "pFabric", "TCP+SQ", "FL-FH", "FL-PS", "pFabric+FL", "CP",
    "DCTCP+CP", "baseline", "priority", "fc", "priority_pfc", "detail", "priority_pfc-1class",
    "detail-1class", "Turbo-T1", "Turbo-T2", "Turbo-T3", "Turbo-T4", "DCQCN", "HPCC",
    "DCTCP-RoCE", "Fastpass",
]
# What a scheme needs of the setup beyond the fabric: Fastpass an arbiter host.
SETUP = {"Fastpass": {"fastpass.arbiter": 15}}


def _resolved(overrides: dict) -> dict:
    sweep = build_sweep({"base_text": FABRIC, "schemes": {"x": overrides}})
    (point,) = sweep.points
    return tomllib.loads(validate(sweep.base_text, point.overrides))


def test_the_papers_schemes_are_all_there_with_a_description_citing_a_section():
    assert list(SCHEMES) == EXPECTED
    for name, s in SCHEMES.items():
        assert s.name == name
        assert "§" in s.description, name
        assert s.settings, name


def test_every_scheme_runs_on_one_fabric_as_it_says():
    """A head-to-head: every scheme validates on the same base, and its resolved scenario
    has the transport and the switch mechanisms that the scheme names."""
    want = {
        "TCP": ("tcp", "droptail", "drop", "codel"),
        "CUBIC": ("cubic", "droptail", "drop", "codel"),
        "DCTCP": ("dctcp", "droptail", "drop", "threshold"),
        "pFabric": ("pfabric", "pfabric", "drop", "off"),
        "TCP+SQ": ("tcp", "droptail", "source_quench", "codel"),
        "FL-FH": ("tcp", "droptail", "fastlane", "codel"),
        "FL-PS": ("tcp", "droptail", "fastlane", "codel"),
        "pFabric+FL": ("pfabric", "pfabric", "fastlane", "off"),
        "CP": ("tcp", "droptail", "cut_payload", "codel"),
        "DCTCP+CP": ("dctcp", "droptail", "cut_payload", "threshold"),
        **{d: ("tcp", "droptail", "drop", "off")
           for d in ("baseline", "priority", "fc", "priority_pfc", "detail",
                     "priority_pfc-1class", "detail-1class")},
        **{f"Turbo-T{i}": ("turbo", "pfabric", "drop", "off") for i in range(1, 5)},
        "Fastpass": ("cubic", "droptail", "drop", "codel"),
        "DCQCN": ("roce", "droptail", "drop", "red"),
        "HPCC": ("roce", "droptail", "drop", "off"),
        "DCTCP-RoCE": ("roce", "droptail", "drop", "threshold"),
    }
    assert set(want) == set(SCHEMES)
    for name, (kind, queue, overflow, ecn) in want.items():
        r = _resolved(scheme(name).overrides(SETUP.get(name)))
        got = (r["transport"]["kind"], r["switch"]["queue"], r["switch"]["overflow"],
               r["switch"]["ecn"])
        assert got == (kind, queue, overflow, ecn), name
    assert _resolved(scheme("FL-PS").overrides())["switch"]["forwarding"] == "spray"
    assert _resolved(scheme("FL-FH").overrides())["switch"]["forwarding"] == "ecmp"
    for name in ("CP", "DCTCP+CP", "FL-PS", "detail"):
        assert _resolved(scheme(name).overrides())["transport"]["dupack_threshold"] == "off"
    # DeTail §8.1's environments: what each adds to the one before.
    detail = {"baseline": ("none", "ecmp", False), "priority": ("none", "ecmp", True),
              "fc": ("pause", "ecmp", False), "priority_pfc": ("pfc", "ecmp", True),
              "detail": ("pfc", "alb", True),
              # The showdown's one-class rows: the same switches, one class served.
              "priority_pfc-1class": ("pfc", "ecmp", False), "detail-1class": ("pfc", "alb", False)}
    for name, want_switch in detail.items():
        s = _resolved(scheme(name).overrides())["switch"]
        assert s["kind"] == "cioq", name
        assert (s["flow_control"], s["forwarding"], s["priorities"]) == want_switch, name
    # RoCE's rows: RDMA hosts on the lossless fabric, each with its congestion control.
    for name, cc in (("DCQCN", "dcqcn"), ("HPCC", "hpcc"), ("DCTCP-RoCE", "dctcp")):
        r = _resolved(scheme(name).overrides())
        assert (r["transport"]["cc"], r["switch"]["kind"], r["switch"]["flow_control"]) == (
            cc, "cioq", "pfc"), name
    for i in range(1, 5):
        r = _resolved(scheme(f"Turbo-T{i}").overrides())["transport"]
        assert r["turbo_variant"] == f"t{i}"
    fp = _resolved(scheme("Fastpass").overrides(SETUP["Fastpass"]))
    assert (fp["host"]["qdisc"], fp["fastpass"]["arbiter"]) == ("fastpass", 15)
    # The hosts' RTO becomes Linux's (Fastpass §6.1) unless the setup says otherwise.
    assert fp["transport"]["rto_min"] == "200ms"


def test_fastpass_without_an_arbiter_is_refused_naming_the_key():
    assert "fastpass.arbiter" in scheme("Fastpass").requires
    sweep = build_sweep({"base_text": FABRIC, "schemes": {"FP": scheme("Fastpass").overrides()}})
    with pytest.raises(ScenarioError, match="fastpass.arbiter"):
        validate(sweep.base_text, sweep.points[0].overrides)


def test_a_scheme_that_requires_an_ecn_marker_is_refused_without_one():
    """Source Quench names the ECN marker in `requires`; validation asks for it."""
    assert "switch.ecn" in scheme("TCP+SQ").requires
    assert "switch.ecn" in scheme("DCTCP").requires
    no_marker = FABRIC.replace('ecn = "codel"', 'ecn = "off"')
    sweep = build_sweep({"base_text": no_marker, "schemes": {"SQ": scheme("TCP+SQ").overrides()}})
    with pytest.raises(ScenarioError, match="switch.ecn"):
        validate(sweep.base_text, sweep.points[0].overrides)


def test_overrides_add_a_papers_parameters_without_changing_the_scheme():
    pf = scheme("pFabric")
    extra = {"switch.buffer": "64KB", "transport.rto_min": "250us"}
    got = pf.overrides(extra)
    assert got == dict(pf.settings) | extra
    got["switch.queue"] = "droptail"  # a new dict each time
    assert pf.overrides()["switch.queue"] == "pfabric"
    # The extra wins where both set a key (CP Fig. 12 runs CP with threshold 3).
    assert scheme("CP").overrides({"transport.dupack_threshold": 3})[
        "transport.dupack_threshold"] == 3
    assert scheme("CP").settings["transport.dupack_threshold"] == "off"
    with pytest.raises(TypeError):
        pf.settings["switch.buffer"] = "1KB"  # read-only
    v = pf.with_(extra, name="pFabric (FastLane)")
    assert isinstance(v, Scheme) and v.name == "pFabric (FastLane)"
    assert dict(v.settings) == got | {"switch.queue": "pfabric"}
    assert v.description == pf.description and v.requires == pf.requires


def test_an_unknown_scheme_is_refused_naming_it_and_the_known_ones():
    with pytest.raises(UnknownSchemeError) as e:
        scheme("XCP")
    assert str(e.value).startswith("unknown scheme 'XCP'; known: TCP, CUBIC")
    assert isinstance(e.value, KeyError)
