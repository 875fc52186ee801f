"""DeTail's simulated network and its five environments (DeTail §7.1, §8.1), shared by
the reproduction's figures."""

from __future__ import annotations

from typing import Any

from spillway.schemes import scheme

# §8.1: 8 racks x 12 servers, 4 spines (oversubscription 3), 1 GbE, 6.6 us per link
# (topology.kind = "detail96" has them); §7.1: 128 KB ingress and egress queues per
# port, a 3.1 us forwarding engine and a crossbar at speedup 4.
NETWORK = """
[topology]
kind = "detail96"
[switch]
buffer = "128KB"
forwarding_delay = "3100ns"
speedup = 4
"""

ENVIRONMENTS = ("baseline", "priority", "fc", "priority_pfc", "detail")

# §8.1: "In the Baseline and Priority environment (i.e., environments without flow
# control mechanisms), a TCP timeout of 10ms is used ... For all the other environments,
# the timeout is set to 50ms."
RTO_MIN = {"baseline": "10ms", "priority": "10ms", "fc": "50ms", "priority_pfc": "50ms",
           "detail": "50ms"}


def environments(names: tuple[str, ...] = ENVIRONMENTS) -> dict[str, dict[str, Any]]:
    """The sweep's ``schemes`` table for the environments ``names``: each scheme's
    overrides with its timeout."""
    return {n: scheme(n).overrides({"transport.rto_min": RTO_MIN[n]}) for n in names}
