"""DeTail (the 2011 technical report, §8): its five switch environments on its simulated
datacenter.

The network (§7.1, §8.1): 8 racks of 12 servers under 4 spines (oversubscription 3),
1 GbE, 6.6 µs per link, combined input/output-queued switches with 128 KB ingress and
egress queues per port, a 3.1 µs forwarding engine and a crossbar at speedup 4 scheduled
by iSLIP. The environments: Baseline (flow hashing, drop-tail), Priority (strict-priority
queues), FC (802.3x pause: lossless), Priority+PFC (per-class pauses) and DeTail
(Priority+PFC with priority-aware adaptive load balancing and reorder-tolerant hosts);
TCP's minimum timeout is 10 ms without flow control and 50 ms with it.

Claims (`spillway.reproduce.detail.estimates`): a percentile of queries or web requests
carries a bootstrap interval over them and over the seeds of its cell (one seed in quick
mode, three in full for Figs. 5-10, 11(a-b) and 12; Fig. 11(c) and the prototype run
one); a reduction or ratio takes the ends of the intervals it comes from; a run's own
number (the background's throughput) is averaged over the seeds, `one run` with one;
"loses nothing" must hold in every run.
"""

from __future__ import annotations

from spillway.reproduce import Figure
from spillway.reproduce.detail import microbenchmarks, web

TITLE = "DeTail: a lossless, load-balanced, prioritized fabric against its parts (DeTail §8)"


def figures(quick: bool) -> list[Figure]:
    figs: list[Figure] = []
    figs += microbenchmarks.figures(quick)
    figs += web.figures(quick)
    return figs
