"""Fastpass (Perry et al., SIGCOMM 2014, §5.1, §5.3, §7.1-7.3 and the Appendix): a
central arbiter that schedules every packet's timeslot, against a baseline of TCP on
deep drop-tail buffers.

The network is the paper's rack (§7): hosts on one 10 Gbit/s top-of-rack switch (`star`,
0.5 µs links, 1460 B segments, 40 B TCP/IP headers and 38 B of Ethernet framing), the
switch's ports 5.25 MB deep (5,376 KiB; the paper's baseline queue tops out at 5,239 KB).
Senders run CUBIC (Linux's default in 2014) with Linux's 200 ms minimum RTO, in both the
baseline and Fastpass (which ran Linux TCP unmodified, §6.1). Under Fastpass
(`host.qdisc = "fastpass"`, docs/arbiter.md § "Fastpass in the simulated network") one
host runs the arbiter and takes no part in the workload; FCP messages cross the same
switch as the data (`fastpass.control = "network"`), and each timeslot is a full frame's
time plus the 1% reserved for them.

Time is scaled down: the paper's runs last minutes (Exp A/B: 20 min, Exp C: 270 s with
1 s intervals); ours last milliseconds, each figure's setup says by how much. Every run
is deterministic; one seed. A claim on a run's own number (a queue percentile of its
samples, a goodput, a count, FCP's share) says so (`one run`): but for the jittered runs
and the Poisson web search, a run is the same whatever its seed, so more seeds would give
no interval. Percentiles of pings and medians over Exp C's intervals carry a bootstrap
interval over them; the Appendix's mean queues their batch means' interval.

Not reproduced here: Exp D (comm-core NIC polling rate vs load), F (alloc-core scaling on
DPDK) and G (pathsel-core scaling) measure the paper's multicore arbiter on real
hardware; `spillway bench arbiter` measures our allocator and path selection instead
(docs/arbiter.md § Benchmark). Exp H ran on Facebook's production service. Exp E's
control-traffic share is measured here on Exp A's workload, not Exp D's.
"""

from __future__ import annotations

from spillway.reproduce import Figure
from spillway.reproduce.fastpass.common import (  # noqa: F401
    AB_RUNS,
    C_BASELINE,
    C_FASTPASS,
    CUBIC,
    FULL,
    PCTS,
    QUICK,
    RECEIVER_A,
    TITLE,
    Mode,
    coarsen,
    exp_a_text,
    exp_c_flows,
    fair_share_bytes,
    fcp_shares,
    flow_spans,
    interval_spread,
    join_convergence,
    median_spread,
    phase_counts,
    recovery_ms,
    window_goodput,
)
from spillway.reproduce.fastpass.control import _appendix, _exp_e, _failover
from spillway.reproduce.fastpass.fairness import _exp_c
from spillway.reproduce.fastpass.queues import _ab


def figures(quick: bool) -> list[Figure]:
    return [*_ab(quick), *_exp_c(quick), *_exp_e(quick), _failover(quick), _appendix(quick)]
