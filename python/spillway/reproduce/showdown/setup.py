"""The showdown's common setup: the fabrics, every scheme's parameters on each (and why),
the workloads, and the sweeps that run them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from spillway import schemes

# The schemes the issue names, in the order the tables list them (registry names).
SCHEMES = ("TCP", "CUBIC", "DCTCP", "pFabric", "Turbo-T1", "Turbo-T2", "FL-FH", "FL-PS",
           "pFabric+FL", "CP", "DCTCP+CP", "detail", "priority_pfc", "detail-1class",
           "priority_pfc-1class", "Fastpass", "DCQCN", "HPCC", "DCTCP-RoCE")
# Registry schemes the showdown leaves out unless asked for (`spillway compare --schemes`).
LEFT_OUT = {
    "TCP+SQ": "FastLane's own strawman (§2.2.1, Fig. 2); it needs an ECN marker the common "
              "switch does not have, and FL-FH supersedes it",
    "baseline": "DeTail's ablation step (§8.1): the common fabric's TCP is the same idea on "
                "output-queued switches",
    "priority": "DeTail's ablation step (§8.1), between baseline and priority_pfc",
    "fc": "DeTail's ablation step (§8.1), between baseline and priority_pfc",
    "Turbo-T3": "dominated by T2 in `spillway reproduce turbo` (mean FCT, slowdown, dead and "
                "duplicate bytes at every load)",
    "Turbo-T4": "dominated by T2 in `spillway reproduce turbo`",
}
# Short flows: at most 100 KB (pFabric's and DCTCP's (0, 100KB] bin); long: over 10 MB
# (pFabric's), and the background flows of partition/aggregate.
SHORT_BYTES = 100 * 1000
LONG_BYTES = 10 * 1000 * 1000
# The schemes that serve priorities get the flows marked by size, as an application that
# knows its request sizes would mark them (DeTail §8 runs its priorities that way): flows
# up to SHORT_BYTES in class 0, the rest in class 1. Their `-1class` rows serve one class.
SIZE_CLASSES = {"workload.classes_by_size": [SHORT_BYTES]}
CLASSED = ("detail", "priority_pfc")

# Every scheme's TCP minimum RTO where the registry leaves it to the setup: DeTail's
# (lossless: a timeout can only be spurious) and Fastpass's (packets wait for timeslots in
# the endpoint queues, up to 2.6 ms measured at load 0.8; Linux's 200 ms would make each
# packet the in-band FCP traffic gets dropped cost 200 ms).
RTO_LOSSLESS = "10ms"
# The RoCE rows (issue 40): RoCE hosts on the lossless fabric.
ROCE = ("DCQCN", "HPCC", "DCTCP-RoCE")
RTO_FASTPASS = "10ms"
# CP §5.2's 4 KB allowance for cut packets, on a 1 Gbit/s testbed, scaled to 10 Gbit/s.
CUT_EXTRA = "40KB"


@dataclass(frozen=True)
class Fabric:
    """A common fabric: its base scenario, its host count (the last host runs Fastpass's
    arbiter and is left out of every scheme's workload), and Turbo's buffer and timeout
    on it (Turbo §5.2's, scaled by the fabric's round trip)."""

    name: str
    text: str
    hosts: int
    turbo_buffer: str
    turbo_rto: str
    about: str
    # Fastpass's arbiter link (`fastpass.arbiter_link_rate`).
    arbiter_link: str = "40Gbps"

    @property
    def arbiter(self) -> int:
        return self.hosts - 1

    def workload_hosts(self) -> list[int]:
        return list(range(self.hosts - 1))


_SWITCH = """
[switch]
buffer = "128KB"
"""

FAT_TREE = Fabric(
    "fat-tree-128", '[topology]\nkind = "fat_tree"\nk = 8\nlink_rate = "10Gbps"\n'
    'link_delay = "1us"\n' + _SWITCH, 128, "26KB", "40us",
    "FastLane's fat tree (§4.2): k = 8, 128 hosts, 10 Gbit/s links of 1 µs everywhere; a "
    "full-size packet's round trip across the core is about 20 µs")
LEAF_SPINE = Fabric(
    "leaf-spine-144", '[topology]\nkind = "pfabric144"\n' + _SWITCH, 144, "6200B", "9.5us",
    "pFabric's and Turbo's leaf-spine (`pfabric144`): 9 racks of 16 hosts, 4 spines, "
    "10 Gbit/s to the hosts, 40 Gbit/s in the core, 0.2 µs links; a round trip of about "
    "4.7 µs")
FAT_TREE_1024 = Fabric(
    "fat-tree-1024", '[topology]\nkind = "fat_tree"\nk = 16\nlink_rate = "10Gbps"\n'
    'link_delay = "1us"\n' + _SWITCH, 1024, "26KB", "40us",
    "a k = 16 fat tree: 1024 hosts, 10 Gbit/s links of 1 µs (the same round trip as the "
    "128-host one)", arbiter_link="100Gbps")
FABRICS = {f.name: f for f in (FAT_TREE, LEAF_SPINE, FAT_TREE_1024)}


def scheme_overrides(name: str, fabric: Fabric) -> dict[str, Any]:
    """Scheme ``name`` on ``fabric``: the registry's bundle plus what the setup gives it
    (`PARAMETERS` says why)."""
    extra: dict[str, Any] = {}
    if name.startswith("Turbo-"):
        # A run in which nothing is acknowledged, cumulatively or by SACK, for 20 ms
        # (thousands of Turbo's fixed, unbacked-off timeouts) is livelocked: it stops and
        # says so (T1 at fan-ins past its probes' limit, § Limits at scale). A flow whose
        # first hole waits while the rest is SACKed is slow, not stopped.
        extra = {"switch.buffer": fabric.turbo_buffer, "transport.rto_min": fabric.turbo_rto,
                 "run.progress_limit": "20ms"}
    elif name in ("detail", "priority_pfc", "baseline", "priority", "fc", "detail-1class",
                  "priority_pfc-1class"):
        extra = {"transport.rto_min": RTO_LOSSLESS} | (SIZE_CLASSES if name in CLASSED else {})
    elif name in ROCE:
        extra = {"transport.rto_min": RTO_LOSSLESS}
    elif name == "Fastpass":
        extra = {"fastpass.arbiter": fabric.arbiter, "transport.rto_min": RTO_FASTPASS,
                 "fastpass.arbiter_link_rate": fabric.arbiter_link}
    elif name in ("CP", "DCTCP+CP"):
        extra = {"transport.rearm_rto": True, "switch.cut_payload_extra": CUT_EXTRA}
    elif name == "TCP+SQ":
        extra = {"switch.ecn": "codel"}
    return schemes.scheme(name).overrides(extra)


PARAMETERS = {
    "TCP": "NewReno + SACK, the simulator's defaults: initial window 10, RTOmin 1 ms (the "
           "datacenter RTO FastLane §5 uses on this fat tree), duplicate-ACK threshold 3, "
           "TCP Small Queues (2 segments a flow in the NIC).",
    "CUBIC": "As TCP with CUBIC's window (Linux 2.6.38's constants).",
    "DCTCP": "As TCP; every port marks above K = 32 KB (`switch.ecn_threshold`, the "
             "default), g = 1/16. K is above DCTCP's C·RTT/7 rule (3.6 KB at 10 Gbit/s and "
             "20 µs) on both fabrics.",
    "pFabric": "pFabric's queues on the common 128 KB buffers, priority = remaining bytes, "
               "its fixed timeout at the transport's default 250 µs (FastLane §4.2.2's on "
               "this fat tree), probe mode after 5 timeouts. The paper's small buffers are "
               "not needed: the queue serves the most urgent flow whatever its length.",
    "Turbo-T1": "Turbo §5.2's recipe, a buffer of about one bandwidth-delay product and a "
                "timeout of about two round trips: on leaf-spine-144 the paper's own 6,200 B "
                "and 9.5 µs; on the fat trees, whose round trip is 4.3 times longer, 26 KB "
                "and 40 µs. With the common 128 KB and 9.5 µs, T1 on the fat tree resent "
                "every packet many times over (a 500-flow run took 264 s and 2 s of "
                "simulated time instead of 2 s and 50 ms).",
    "Turbo-T2": "As T1 (T2 is the best variant in `spillway reproduce turbo`: lowest mean FCT "
                "and slowdown of the four at every load, near-pFabric waste).",
    "FL-FH": "As TCP, with FastLane's notifications capped at 1% of each link and 2.5% of "
             "each buffer (the defaults, FastLane §3.3); ECMP.",
    "FL-PS": "As FL-FH with per-packet spraying, the out-of-order option and no "
             "duplicate-ACK recovery (FastLane §3.4.1).",
    "pFabric+FL": "As pFabric, with FastLane's notifications.",
    "CP": "As TCP, with payload cutting and PACKs, no duplicate-ACK threshold (CP §4.4), and "
          "two settings of the CP testbed's Linux senders and switches. The timer restarts "
          "when the head is resent (`transport.rearm_rto`, Linux's behaviour; CP's senders "
          "resend a head at every PACK): without it CP timed out 85 times in a 64-sender "
          "incast on the fat tree with not one packet dropped. And 40 KB of extra buffer per "
          "port for cut packets, CP §5.2's 4 KB on 1 Gbit/s links scaled to 10 Gbit/s: with "
          "4 KB, on the leaf-spine (40 Gbit/s spines into 10 Gbit/s host ports, beyond the "
          "13.1× burst §4.6 sizes the allowance for) 119 and 220 cut headers were dropped at "
          "fan-ins 32 and 64 and CP timed out more often than TCP at 32 (55 against 44).",
    "DCTCP+CP": "As DCTCP, with CP's cutting and PACKs and CP's two settings above.",
    "detail": "Combined input/output-queued switches (iSLIP) with the common 128 KB per "
              "port for egress and ingress, PFC on 8 classes with DeTail §6.1's thresholds "
              "derived for each link, adaptive load balancing (16/64 KB tiers), flows' "
              "classes served: the flows marked by size (`workload.classes_by_size`: up to "
              "100 KB in class 0, larger in class 1), as an application that knows its "
              "request sizes would mark them, and partition/aggregate's background in class "
              "7 (DeTail §8.1.2); reorder-tolerant hosts. The common switch's latency: no "
              "forwarding delay and an instant crossbar (`switch.forwarding_delay = 0`, "
              "`switch.speedup = off`: DeTail §7.1's 3.1 µs and speedup 4 model its 1 GbE "
              "hardware; the other schemes' switches get neither). RTOmin 10 ms: lossless, "
              "so a timeout can only be spurious (DeTail §6.3 finds 10 ms and more optimal; "
              "§8.1 uses 10 ms without flow control, 50 ms with, at 1 GbE).",
    "priority_pfc": "As detail without adaptive load balancing (ECMP).",
    "detail-1class": "As detail, its switches serving one class for all traffic "
                     "(`switch.priorities = false`): no size classes, and "
                     "partition/aggregate's background in the queries' class. The showdown's "
                     "DeTail row before size classes, kept to show what they change.",
    "priority_pfc-1class": "As priority_pfc, serving one class (`switch.priorities = "
                           "false`).",
    "DCQCN": "RoCE hosts on DeTail's lossless fabric (CIOQ switches, iSLIP, PFC with DeTail "
             "§6.1's thresholds, the common 128 KB per port, ECMP, one class): flows start at "
             "line rate, the NIC paces each at its rate, a NACK or a 10 ms timeout (lossless: "
             "only a spurious one) sends again from the hole. DCQCN as the HPCC simulator "
             "runs it (α every 1 µs with g = 1/256, a cut at most every 4 µs, the 300 µs "
             "increase timer, F = 1, 2 and 20 Mbit/s steps at 10 Gbit/s), RED marking at "
             "40/160 KB with Pmax 0.2 (100/400 KB per 25 Gbit/s), and the paper's notification "
             "point: at most one CNP per flow per 50 µs. 1,000 B payloads, 44 B of RoCEv2 "
             "headers.",
    "HPCC": "As DCQCN's fabric and hosts, no ECN: every switch port stamps 42 B of telemetry "
            "on each data packet (and the ACK carries it back); η = 0.95, maxStage 5, "
            "W_AI = 50 Mbit/s, the window R·T with T the fabric's longest base round trip, "
            "reaction on every ACK.",
    "DCTCP-RoCE": "As DCQCN's fabric and hosts, the rate and window cut by α/2 (g = 1/16) at "
                  "the first ECN echo of a window and raised by 615 Mbit/s a window without "
                  "one (the HPCC simulator's CC_MODE 8); ports mark above K = 32 KB, as the "
                  "TCP DCTCP row's.",
    "Fastpass": "The arbiter on the fabric's last host (left out of every scheme's "
                "workload), on a 40 Gbit/s link (`fastpass.arbiter_link_rate`; 100 Gbit/s on "
                "the 1024-host fat tree), and its switch's links up to the next tier at the "
                "same rate (`fastpass.arbiter_uplink_rate`, the key's default): Fastpass §2 "
                "and §8.1 give a large cluster's arbiter high-speed ports, and a port that "
                "ends at its own rack is not one (on fat-tree-1024 the 8 × 10 Gbit/s uplinks "
                "of the arbiter's edge switch, shared with its rack's data, carried every "
                "allocation to the other 1,016 hosts, ran full and dropped 62,711 packets in "
                "partition/aggregate). This one rack is the only topology difference any "
                "scheme gets. The arbiter allocates only what its link can deliver within "
                "the lead, and FCP acknowledges by sequence number (§5). FCP shares class 0 "
                "with the data, first in first out, timeslots 1% longer than a frame for it; "
                "reports every 10 µs, batches of 16 timeslots, max-min fair allocation (the "
                "defaults). CUBIC above it as in §6.1, with RTOmin 10 ms instead of Linux's "
                "200 ms: packets wait for their timeslots (2.6 ms at most at load 0.8), so "
                "1 ms would fire spuriously, and 200 ms would make every packet that "
                "in-band FCP traffic gets dropped cost 200 ms.",
}


@dataclass(frozen=True)
class Mode:
    """How much the showdown runs."""

    fabrics: tuple[str, ...]
    loads: tuple[float, ...]
    flows: dict[str, int]
    fanins: tuple[int, ...]
    incast_rounds: int
    pa_queries: int
    duration: str
    # Partition/aggregate's own safety limit (empty: `duration`). Its runs end when the
    # queries are done (within 51 ms of simulated time on every fabric, full mode); a
    # scheme that could not finish them would otherwise simulate the whole `duration`,
    # hours of wall time, the closed-loop background never ending (Fastpass on
    # fat-tree-1024 did, until its arbiter learned to wait for its own link).
    pa_duration: str = ""
    seeds: tuple[int, ...] = (1,)
    workloads: tuple[str, ...] = ("websearch", "datamining", "incast", "partition-aggregate")
    schemes: tuple[str, ...] = field(default=SCHEMES)
    # The experiments behind § Limits at scale (showdown/limits.py), on leaf-spine-144.
    limits: bool = False


QUICK = Mode(fabrics=("fat-tree-128", "leaf-spine-144"), loads=(0.2, 0.5, 0.8),
             flows={"websearch": 200, "datamining": 100}, fanins=(8, 16, 32, 64),
             incast_rounds=3, pa_queries=400, duration="2s", seeds=(1, 2))
# Full mode is sized for its intervals: five seeds of 2,000 web-search flows a cell (about
# 5,400 short flows) put the leaders' short-flow p99 intervals within 5-8% (pFabric,
# pFabric+FL) and 20-25% (Turbo T2) of their values on fat-tree-128, which separates
# Turbo from pFabric and ties pFabric+FL with it (a pilot, docs/sweeps.md § Showdown);
# five seeds of three loads cost what one seed of seven loads did, times 2.1.
FULL = Mode(fabrics=("fat-tree-128", "leaf-spine-144", "fat-tree-1024"),
            loads=(0.2, 0.5, 0.8),
            flows={"websearch": 2000, "datamining": 1000}, fanins=(8, 16, 32, 64, 128, 256),
            incast_rounds=10, pa_queries=4000, duration="5s", pa_duration="250ms",
            seeds=(1, 2, 3, 4, 5), limits=True)

POISSON = ("websearch", "datamining")
INCAST_SIZE = "64KB"
# Partition/aggregate (DeTail §8.1.2's shape): each query asks 10, 20 or 40 workers for a
# 2, 8 or 32 KB response; a quarter of the hosts each keep a 1 MB background flow running
# to a random host, at the lowest priority class (DeTail §8.1.2).
PA = {"workload.kind": "partition_aggregate", "workload.fanouts": [10, 20, 40],
      "workload.response_sizes": ["2KB", "8KB", "32KB"], "workload.load": 0.2,
      "workload.background_flows": "1MB"}


def workload_about(mode: Mode) -> dict[str, str]:
    """What each workload is, for the report."""
    return {
        "websearch": f"Poisson arrivals between random pairs of hosts, web-search flow sizes "
                     f"(DCTCP's; mean 1.6 MB), {mode.flows['websearch']:,} flows a run, loads "
                     f"{', '.join(map(str, mode.loads))} of the hosts' capacity",
        "datamining": f"the same with data-mining sizes (mean 7.5 MB, up to 973 MB; 80% of "
                      f"flows under 10 KB), {mode.flows['datamining']:,} flows a run",
        "incast": f"host 0 asks n senders (spread over the other hosts) for {INCAST_SIZE} each "
                  f"at once (10 µs of jitter), {mode.incast_rounds} rounds back to back; "
                  f"n = {', '.join(map(str, mode.fanins))}",
        "partition-aggregate": f"{mode.pa_queries:,} queries at load 0.2, each from a random "
                               "host to 10, 20 or 40 workers answering 2, 8 or 32 KB; beside "
                               "them a quarter of the hosts each keep a 1 MB background flow "
                               "running (class 7, the lowest)",
    }


def _base(fabric: Fabric, mode: Mode) -> dict[str, Any]:
    """Keys every run on ``fabric`` shares: the run's safety limit."""
    return {"run.duration": mode.duration}


def sweeps(fabric: Fabric, mode: Mode, names: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """The sweep of each workload family on ``fabric`` (data directory name -> sweep)."""
    hosts = fabric.workload_hosts()
    bundles = {n: scheme_overrides(n, fabric) for n in names}
    out: dict[str, dict[str, Any]] = {}
    common = {"base_text": fabric.text, "seeds": list(mode.seeds), "schemes": bundles}
    cdfs = [w for w in POISSON if w in mode.workloads]
    if cdfs:
        out["poisson"] = common | {
            "set": _base(fabric, mode) | {
                "workload.kind": "poisson", "workload.sources": hosts,
                "workload.destinations": hosts},
            "zip": {"workload.cdf": cdfs, "workload.max_flows": [mode.flows[w] for w in cdfs]},
            "grid": {"workload.load": list(mode.loads)}}
    if "incast" in mode.workloads:
        out["incast"] = common | {
            "set": _base(fabric, mode) | {
                "workload.kind": "incast", "workload.receiver": 0,
                "workload.sources": hosts[1:], "workload.size": INCAST_SIZE,
                "workload.rounds": mode.incast_rounds, "workload.jitter": "10us"},
            "grid": {"workload.senders": list(mode.fanins)}}
    if "partition-aggregate" in mode.workloads:
        out["partition-aggregate"] = common | {
            "set": _base(fabric, mode) | {"run.duration": mode.pa_duration or mode.duration}
            | PA | {
                "workload.queries": mode.pa_queries, "workload.clients": hosts,
                "workload.workers": hosts, "workload.background_sources": hosts[1::4],
                "workload.background_destinations": hosts}}
    return out
