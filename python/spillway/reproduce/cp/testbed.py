"""The CP testbed's models and what every CP figure shares: the base scenarios, the
schemes, constants of our wire, and the query that reads long flows (see the package
docstring)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from spillway import _core, schemes
from spillway.store import Results

# The testbed hosts' TCP (Linux 3.x as CP §6 ran it): the window grows per ACK, a loss's
# ssthresh comes from the window, the timer is re-armed on every ACK.
TESTBED_TRANSPORT = """
[transport]
init_cwnd = 3
rwnd = "256KB"
rearm_rto = true
cwnd_increase = "acks"
ssthresh_from = "cwnd"
"""

TESTBED = """
[topology]
kind = "leaf_spine"
racks = 4
hosts_per_rack = 3
spines = 1
link_rate = "1Gbps"
link_delay = "20us"
[switch]
buffer = "512KB"
spine_buffer = "128KB"
ecn_threshold = "32KB"
""" + TESTBED_TRANSPORT

BASE = TESTBED + """
[workload]
kind = "incast"
receiver = 0
sources = [3, 4, 5, 6, 7, 8, 9, 10, 11]
size = "64KB"
jitter = "10us"
"""

# The long-flow figures' clocks (the package docstring).
LONG_FLOW_CLOCK_PPM = 100
# The schemes of CP §6 as spillway.schemes defines them; the testbed's own settings are in
# the base scenarios above, and a figure that runs a scheme otherwise says so.
SCHEMES: dict[str, dict[str, Any]] = {
    n: schemes.scheme(n).overrides() for n in ("TCP", "CP", "DCTCP", "DCTCP+CP")}
# The testbed as one switch, the incast report's model of it (reproduce/incast.py): 10
# hosts on a star, ~100 µs RTT without queueing, 128 KB at the port toward the receiver.
STAR = """
[topology]
kind = "star"
hosts = 10
link_rate = "1Gbps"
link_delay = "25us"
[switch]
buffer = "128KB"
[transport]
init_cwnd = 3
rwnd = "256KB"
rto_min = "10ms"
[workload]
kind = "incast"
receiver = 0
size = "64KB"
jitter = "10us"
"""

# Sizes as the simulator makes them, with the defaults the testbed keeps (MSS, header,
# Ethernet framing): a payload-cut packet's frame, a full segment's payload and frame.
_SIZES = _core.constants()
CUT_WIRE: int = _SIZES["cut_frame_bytes"]
MSS: int = _SIZES["mss"]
CP_SCHEMES = ("CP", "DCTCP+CP")
LONG_FLOW = "10GB"  # never finishes within a run: goodput is bytes delivered / duration
# Goodput of one flow alone at 1 Gbps on our wire: MSS payload bytes per full frame.
LINE_GOODPUT_MBPS = 1000 * MSS / _SIZES["full_frame_bytes"]


def long_flows(res: Results) -> pd.DataFrame:
    """Every long flow of every point, with its point's axes. The flow's own counters
    are `flow_retransmits` and `flow_timeouts`: `points` has run totals by the same
    names (`retransmits`, `timeouts`). In a fixed order: the float sums taken over them
    would otherwise differ in their last bits with DuckDB's row order."""
    return res.sql("""
        SELECT p.*, f.src, f.dst, f.delivered_bytes, f.retransmits AS flow_retransmits,
               f.timeouts AS flow_timeouts
        FROM points p JOIN flows f USING (hash) WHERE p.status = 'done'
        ORDER BY p.hash, f.flow_id""")

