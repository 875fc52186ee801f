"""The incast reproduction's claims (spillway.reproduce.incast) judged on known numbers:
each comes out PASS, FAIL or INCONCLUSIVE as its interval, or its runs, dictate."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from _fake_results import FakeResults
from spillway.reproduce.claim import Verdict
from spillway.reproduce.incast import _cp_websearch, _detail_rto

PASS, FAIL, INCONCLUSIVE = Verdict.PASS, Verdict.FAIL, Verdict.INCONCLUSIVE


def test_query_time_claims_follow_their_bootstrap_intervals(tmp_path):
    """CP Fig. 8(b) on one switch, one seed, three queries per point: TCP(10ms) at 16 ms
    with many senders passes its ±50% band around 16.1 ms, TCP(200ms) at 400 ms fails
    the band around 201.6 ms, and six few-sender queries of which one took 22 ms leave
    'under 12 ms on average' open: their mean's interval straddles 12."""
    senders = [4, 8, 16, 32, 64, 100]
    rows = []
    for rto, n in itertools.product(("10ms", "200ms"), senders):
        if n >= 50:
            ms = [15.9, 16.0, 16.2] if rto == "10ms" else [398.0, 400.0, 402.0]
        elif n <= 8:
            ms = [9.0, 9.0, 22.0] if n == 8 else [9.0, 9.0, 9.0]
        else:
            ms = [30.0, 31.0, 32.0]
        rows += [{"hash": f"{rto}/{n}", "query_id": i, "senders": n, "rto_min": rto,
                  "seed": 1, "qct_ps": x * 1e9} for i, x in enumerate(ms)]
    res = FakeResults(queries=pd.DataFrame(rows),
                      points=pd.DataFrame({"seed": [1], "status": ["done"]}))
    t, _, claims = _cp_websearch(quick=True).analyze(res, tmp_path)
    assert len(t) == 12
    fast, slow, few = claims
    assert fast.verdict is PASS and fast.ours.seeds == 1 and fast.ours.n == 6
    assert slow.verdict is FAIL and slow.ours.lo > 1.5 * 201.6
    assert few.ours.lo < 12 < few.ours.hi and few.verdict is INCONCLUSIVE
    assert few.ours.value == pytest.approx(np.mean([9.0] * 5 + [22.0]))


def test_detail_rto_claims_hold_in_every_run_or_fail(tmp_path):
    """DeTail Fig. 3's claims are about every run (a drop, a retransmission) and about the
    runs of one seed against each other: one run breaking a claim fails it, naming the
    run."""
    rows, flows = [], []
    for hosts, servers, rto in itertools.product(("no TSQ", "TSQ"), (8, 32),
                                                 ("1ms", "5ms", "10ms", "50ms")):
        low = rto in ("1ms", "5ms")
        # DeTail's hosts retransmit spuriously below 10 ms and lose time there; the
        # TSQ hosts do not retransmit at 5 ms with 8 servers (breaking the claim).
        resent = 100 if low and not (hosts == "TSQ" and servers == 8 and rto == "5ms") else 0
        base = 10.0 + (2.0 if low and hosts == "no TSQ" else 0.0)
        rows += [{"scheme": hosts, "hosts": servers, "rto_min": rto, "seed": 1,
                  "qct_ps": (base + 0.01 * i) * 1e9} for i in range(40)]
        flows.append({"scheme": hosts, "hosts": servers, "rto_min": rto, "seed": 1,
                      "retransmits": resent, "timeouts": resent // 10,
                      "drops": 1 if (hosts, servers, rto) == ("TSQ", 32, "50ms") else 0})
    res = FakeResults(queries=pd.DataFrame(rows), flows=pd.DataFrame(flows))
    _, _, claims = _detail_rto(quick=True).analyze(res, tmp_path)
    lossless, spurious_ns3, optimal_ns3, spurious_tsq, optimal_tsq = claims
    assert lossless.verdict is FAIL and "TSQ 32@50ms seed 1" in lossless.why
    assert spurious_ns3.verdict is PASS and optimal_ns3.verdict is PASS
    assert spurious_tsq.verdict is FAIL and "TSQ 8@5ms seed 1" in spurious_tsq.why
    assert optimal_tsq.verdict is PASS
