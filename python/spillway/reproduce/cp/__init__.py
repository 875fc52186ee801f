"""CP (cutting payload) against TCP and DCTCP, on the CP paper's testbed (CP §6).

The testbed model: 1 Gbps links; one aggregation switch over 4 ToRs of 3 hosts each; 20 µs
per link (≈100 µs RTT within a rack without queueing); 128 KB of buffer at the
aggregation switch, where incast traffic toward the receiver's rack converges (the
bottleneck), 512 KB elsewhere. TCP is SACK with delayed ACK off, initial window 3 (the
testbed's Linux 2.6.38), 256 KB receive window, RTOmin 10 ms or 200 ms, and Linux's
timer behaviour (the timer restarts when the first unacknowledged segment is resent).
CP switches cut payloads with a 4 KB extra allowance; CP senders run with the
duplicate-ACK threshold off (§4.4). DCTCP marks at K = 32 KB with g = 1/16. As in the
testbed, the nine hosts of the other three racks emulate all senders (several flows per
host) and start within 10 µs of each other.

The long-flow experiments (Figs. 10–12, 14) add 10 µs of random receive latency per
packet at every host (`host.rx_jitter`): without it, ACK-clocked senders meeting at one
tail-drop queue lock in phase and one of them loses at every overflow, which real hosts'
timing noise prevents. There every host and switch also runs on its own clock, within
IEEE 802.3's ±100 ppm of the nominal rate (`topology.clock_ppm`): with exactly equal
rates, a full port whose departures are paced by one busy input offers the room each
departure frees to that input's next packet at the same picosecond, every time, and locks
the other inputs out (Fig. 12's experimental flows got 1% of their fair share so), where
real links drift in phase against each other. The incast and query figures keep exact
clocks, as the incast reproduction does: with drifting clocks TCP there times out from 8
senders on (the incast reproduction's few-sender query time went from 9.1 to 14.9 ms),
where the testbed's cliff is near 42; what spares real incasts those losses is not
modelled, so those figures stay as they were.
"""

from __future__ import annotations

from spillway.reproduce import Figure
from spillway.reproduce.cp import bottlenecks, incast, ooo, outcast, realistic

TITLE = "CP: cutting payload with precise ACKs, against TCP and DCTCP (CP §6.1)"


def figures(quick: bool) -> list[Figure]:
    return [*incast.figures(quick), *outcast.figures(quick), *bottlenecks.figures(quick),
            *ooo.figures(quick), *realistic.figures(quick)]
