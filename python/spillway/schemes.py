"""The schemes the papers compare, by name: each a bundle of scenario-key overrides.

A scheme is what makes a run "DCTCP" or "pFabric + FastLane": its transport, and the
switch mechanisms that transport relies on. It is generic: a paper's own parameters for
it (FastLane's 64 KB pFabric ports, CP's testbed RTOs) are not part of it; a
reproduction adds them explicitly, so that what each run gets is stated where the figure
is::

    from spillway.schemes import scheme

    sweep = {..., "schemes": {
        "TCP": scheme("TCP").overrides(),
        "pFabric": scheme("pFabric").overrides({"switch.buffer": "64KB"}),
    }}

The bundles say only what the scheme needs; everything else comes from the base scenario.
A scheme that needs a switch mechanism it does not set itself (Source Quench needs an
ECN marker, whose kind the setup chooses) says so in ``requires``; a scenario without it
is refused at validation with a message naming the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True)
class Scheme:
    """A named scheme: ``settings`` are its scenario-key overrides (key path -> value),
    ``description`` says what it is and which paper section it follows, ``requires``
    what it needs of the switch."""

    name: str
    settings: Mapping[str, Any]
    description: str
    requires: str = ""

    def __post_init__(self) -> None:
        # Read-only: one scheme serves every reproduction that uses it.
        object.__setattr__(self, "settings", MappingProxyType(dict(self.settings)))

    def overrides(self, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The scheme's overrides, then ``extra`` (a paper's own parameters for it), which
        wins where both set a key: a new dict, for a sweep's ``schemes`` table."""
        return dict(self.settings) | dict(extra or {})

    def with_(self, extra: Mapping[str, Any], name: str | None = None,
              description: str | None = None) -> Scheme:
        """A new scheme: this one with ``extra`` on top (see `overrides`), under ``name``
        (default: this scheme's)."""
        return Scheme(name or self.name, self.overrides(extra),
                      description if description is not None else self.description,
                      self.requires)


# Mechanisms that several schemes share (not schemes by themselves).
_TCP = {"transport.kind": "tcp"}
_DCTCP = {"transport.kind": "dctcp", "switch.ecn": "threshold"}
_PFABRIC = {"switch.queue": "pfabric", "switch.ecn": "off", "transport.kind": "pfabric"}
_FASTLANE = {"switch.overflow": "fastlane"}
# CP senders leave losses to PACKs and the timeout: no duplicate-ACK threshold (CP §4.4).
_CUT_PAYLOAD = {"switch.overflow": "cut_payload", "transport.dupack_threshold": "off"}

# DeTail §8.1's environments, all on combined input/output-queued switches (DeTail §5.1).
# Loss or pauses are their only congestion signals: no ECN marking.
_CIOQ = {"transport.kind": "tcp", "switch.kind": "cioq", "switch.ecn": "off"}
_DETAIL_NEEDS = ("the switch's latency is the setup's (DeTail §7.1: `switch.forwarding_delay = "
                 "\"3100ns\"`, `switch.speedup = 4`), and so are the timeouts (§8.1: "
                 "`transport.rto_min` 10 ms without flow control, 50 ms with)")

_ECN = ("an ECN marker at every port (`switch.ecn`: `threshold` marks above K = "
        "`switch.ecn_threshold`; `codel` by CoDel's law)")
_FASTLANE_NEEDS = ("FastLane's overflow action (`switch.overflow = \"fastlane\"`, set here; "
                   "caps `switch.fastlane_bandwidth`, `switch.fastlane_buffer`)")
_CUT_NEEDS = ("payload cutting (`switch.overflow = \"cut_payload\"`, set here) on a droptail "
              "queue, with `switch.cut_payload_extra` for cut packets (CP §5.2: 4 KB)")

_ALL = [
    Scheme("TCP", _TCP,
           "TCP NewReno with SACK (RFC 6582, 2018, 6675), the baseline of FastLane §5 and "
           "CP §6 (which adds the testbed's Linux window arithmetic and RTOs)"),
    Scheme("CUBIC", {"transport.kind": "cubic"},
           "TCP with CUBIC's window (RFC 8312, Linux 2.6.38's constants), the CP testbed "
           "kernel's default (CP §6.3, Fig. 14)"),
    Scheme("DCTCP", _DCTCP,
           "DCTCP (RFC 8257): the window follows the fraction of ECN-marked bytes; ports "
           "mark above a queue threshold K (CP §6: K = 32 KB, g = 1/16)",
           "ECN marking above K (`switch.ecn = \"threshold\"`, set here; K is "
           "`switch.ecn_threshold`)"),
    Scheme("pFabric", _PFABRIC,
           "pFabric: ports serve the most urgent flow first and drop the least urgent "
           "packet; senders run minimal rate control with a small fixed timeout "
           "(pFabric §4; as FastLane §4.2.2 runs it)",
           "pFabric's queue discipline (`switch.queue = \"pfabric\"`, set here; ECN off)"),
    Scheme("TCP+SQ", _TCP | {"switch.overflow": "source_quench"},
           "TCP with Source Quench: a port quenches the source whenever its ECN marker "
           "marks, and the source halves its window as for an ECN echo (FastLane §2.2.1, "
           "§5)",
           _ECN + ", whose marks send the quenches (FastLane: `codel`)"),
    Scheme("FL-FH", _TCP | _FASTLANE | {"switch.forwarding": "ecmp"},
           "TCP + FastLane with flow hashing: a full port turns the packet it cannot keep "
           "into a notification to its source at top priority, within caps on bandwidth "
           "and buffer (FastLane §3, §5.1: FL-FH)",
           _FASTLANE_NEEDS + "; ECMP by flow hash"),
    Scheme("FL-PS", _TCP | _FASTLANE | {"switch.forwarding": "spray",
                                        "transport.dupack_threshold": "off",
                                        "transport.ooo_option": True},
           "TCP + FastLane with packet scatter: the out-of-order option and no "
           "duplicate-ACK recovery, losses left to the notifications (FastLane §3.4.1, "
           "§5.1: FL-PS)",
           _FASTLANE_NEEDS + "; per-packet spraying (`switch.forwarding = \"spray\"`, set "
           "here)"),
    Scheme("pFabric+FL", _PFABRIC | _FASTLANE,
           "pFabric + FastLane: pFabric's queues and transport, with drop notifications "
           "(FastLane §4.2.2, §5.1.1 Fig. 7)",
           "pFabric's queue discipline and " + _FASTLANE_NEEDS),
    Scheme("CP", _TCP | _CUT_PAYLOAD,
           "CP: a full port cuts the payload and forwards the header; the receiver answers "
           "with a precise ACK (PACK) and the sender resends at once; no duplicate-ACK "
           "threshold (CP §4, §4.4)",
           _CUT_NEEDS),
    Scheme("DCTCP+CP", _DCTCP | _CUT_PAYLOAD,
           "DCTCP with CP's payload cutting and PACKs (CP §6: 'DCTCP with CP')",
           "ECN marking above K and " + _CUT_NEEDS),
]

_ALL += [
    Scheme("baseline", _CIOQ | {"switch.flow_control": "none", "switch.forwarding": "ecmp",
                                "switch.priorities": False},
           "DeTail's Baseline (§8.1): CIOQ switches with drop-tail queues, flow hashing (ECMP), "
           "no priorities", _DETAIL_NEEDS),
    Scheme("priority", _CIOQ | {"switch.flow_control": "none", "switch.forwarding": "ecmp",
                                "switch.priorities": True},
           "DeTail's Priority (§8.1): Baseline with strict-priority ingress and egress queues "
           "serving flows' classes", _DETAIL_NEEDS),
    Scheme("fc", _CIOQ | {"switch.flow_control": "pause", "switch.forwarding": "ecmp",
                          "switch.priorities": False},
           "DeTail's FC (§8.1): Baseline with link-layer flow control (802.3x pause, one class "
           "for all traffic): lossless", _DETAIL_NEEDS),
    Scheme("priority_pfc", _CIOQ | {"switch.flow_control": "pfc", "switch.forwarding": "ecmp",
                                    "switch.priorities": True},
           "DeTail's Priority+PFC (§8.1): Priority with priority flow control (802.1Qbb)",
           _DETAIL_NEEDS),
    Scheme("detail", _CIOQ | {"switch.flow_control": "pfc", "switch.forwarding": "alb",
                              "switch.priorities": True},
           "DeTail (§4-§6): Priority+PFC with priority-aware adaptive load balancing; hosts "
           "tolerate reordering (no duplicate-ACK retransmission, the `alb` default)",
           _DETAIL_NEEDS),
]
# The same switches serving one class, whatever classes the flows carry (the showdown's
# rows beside DeTail and Priority+PFC with size classes).
_ALL += [
    base.with_({"switch.priorities": False}, name=f"{base.name}-1class",
               description=f"{base.description}, its switches serving one class for all "
                           "traffic (`switch.priorities = false`)")
    for base in _ALL if base.name in ("detail", "priority_pfc")
]

# Turbo (§4.2): pFabric's queues (served by sequence within the best flow, the default with
# Turbo), senders at line rate; the paper's 6,200 B buffers and 9.5 us timeout (§5.2) are
# its own parameters for pFabric's 144-host fabric, added by whoever runs it.
_TURBO = {"switch.queue": "pfabric", "switch.ecn": "off", "transport.kind": "turbo"}
_TURBO_NEEDS = ("pFabric's queue discipline (`switch.queue = \"pfabric\"`, set here); buffers "
                "and a timeout sized to the fabric's round trip (Turbo §5.2 on pfabric144: "
                "`switch.buffer = \"6200B\"`, `transport.rto_min = \"9.5us\"`, the timeout "
                "being the transport's default)")
_TURBO_VARIANTS = {
    "t1": "simple timeouts (one per flow) with cliff inflation and a probe at each timeout",
    "t2": "simple timeouts, stop on a timeout until a probe is echoed",
    "t3": "a timeout per packet, cliff inflation, a probe at every expiry",
    "t4": "T3 with probes at least one timeout apart",
}
_ALL += [
    Scheme(f"Turbo-{v.upper()}", _TURBO | {"transport.turbo_variant": v},
           f"Turbo {v.upper()} (Turbo §4.2, §5.2): senders always at line rate, priority "
           f"(remaining bytes) does all the work in pFabric's queues; {what}", _TURBO_NEEDS)
    for v, what in _TURBO_VARIANTS.items()
]

# RoCE hosts on DeTail's lossless fabric (CIOQ switches, PFC): what datacenters deployed
# after the five papers, with its congestion controls (issue 40; the HPCC simulator's
# CC_MODE 1, 3 and 8, docs/mechanisms.md § RoCE).
_ROCE = {"transport.kind": "roce", "switch.kind": "cioq", "switch.flow_control": "pfc",
         "switch.forwarding": "ecmp", "switch.priorities": False}
_ROCE_NEEDS = ("a lossless fabric (CIOQ switches with PFC, set here) and a timeout longer than "
               "any pause (`transport.rto_min`: RoCE's go-back-N timer)")
_ALL += [
    Scheme("DCQCN", _ROCE | {"transport.cc": "dcqcn", "switch.ecn": "red"},
           "RoCE with DCQCN (DCQCN §3) as the HPCC simulator's CC_MODE 1 runs it: switches "
           "mark RED-style between Kmin and Kmax (100/400 KB per 25 Gbit/s, Pmax 0.2), "
           "receivers flag CNPs (at most one per flow per 50 µs), senders cut by α/2 and "
           "recover on timers", _ROCE_NEEDS + "; RED marking (`switch.ecn = \"red\"`, set "
           "here)"),
    Scheme("HPCC", _ROCE | {"transport.cc": "hpcc", "switch.ecn": "off"},
           "RoCE with HPCC (HPCC §3, Algorithm 1; CC_MODE 3): every switch port stamps in-band "
           "telemetry, senders set rate and window from the most utilized hop toward "
           "η = 95%", _ROCE_NEEDS),
    Scheme("DCTCP-RoCE", _ROCE | {"transport.cc": "dctcp", "switch.ecn": "threshold"},
           "DCTCP's reaction on RoCE hosts (the HPCC simulator's CC_MODE 8, HPCC §5's "
           "DCTCP): a rate and window cut by α/2 once per window of ECN echoes, marks above K",
           _ROCE_NEEDS + "; ECN marking above K (`switch.ecn = \"threshold\"`, set here)"),
]

# Fastpass (§2-§6): every packet waits in its host's endpoint queue for the timeslot and
# path a central arbiter grants; Linux TCP (CUBIC in 2014) unmodified above it (§6.1).
_ALL.append(Scheme(
    "Fastpass", {"host.qdisc": "fastpass", "transport.kind": "cubic"},
    "Fastpass (§2-§6): a central arbiter allocates every MTU-sized timeslot and its path "
    "(max-min fair), FCP carries demand and grants through the same network; the hosts "
    "run Linux's CUBIC unmodified (§6.1)",
    "an arbiter host (`fastpass.arbiter`, which the workload then leaves out: its default "
    "host lists skip it, a list naming it is refused)"))

SCHEMES: Mapping[str, Scheme] = MappingProxyType({s.name: s for s in _ALL})


class UnknownSchemeError(KeyError):
    """A scheme name that `SCHEMES` does not have; the message names it and the known ones."""

    def __str__(self) -> str:
        return str(self.args[0])


def scheme(name: str) -> Scheme:
    """The scheme called ``name`` (see `SCHEMES`); `UnknownSchemeError` for another name."""
    try:
        return SCHEMES[name]
    except KeyError:
        raise UnknownSchemeError(f"unknown scheme {name!r}; known: "
                                 f"{', '.join(SCHEMES)}") from None
