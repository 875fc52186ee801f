"""Fastpass Exp A and B (§7.1, Fig. 7, Fig. 8): switch queues, goodput and ping RTT under
bulk load, baseline TCP against Fastpass."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from spillway import plots
from spillway.intervals import Resamples, ratio
from spillway.reproduce import Figure, claim
from spillway.reproduce.claim import Claim
from spillway.reproduce.fastpass.common import (
    AB_RUNS,
    ARBITER,
    C_FASTPASS,
    FP_RUNS,
    KIB,
    LINK_BPS,
    PAPER_GOODPUT_GBPS,
    PAPER_PING_MS,
    PAPER_QUEUE_KB,
    PCT_NAMES,
    PCTS,
    PINGER,
    RECEIVER_A,
    _mode,
    _slash,
    _symlog_bars,
    exp_a_text,
    one_run,
    window_goodput,
)
from spillway.store import Results

BUFFER_KIB = 5376
QUEUE_PAPER = ("§7.1: 'Fastpass reduces the median switch queue occupancy from 4.35 Megabytes "
               "in the baseline to just 18 kilobytes with Fastpass, a reduction of a factor "
               "of 242×'")
PING_PAPER = ("§7.1: 'Fastpass reduces the end-to-end round-trip time (RTT) for interactive "
              "traffic when the network is heavily loaded by a factor of 15.5×, from a "
              "median of 3.56 ms to 230 µs'")
GOODPUT_PAPER = ("§7.1: '9.43 Gbits/s in the baseline run versus 9.28 Gbits/s with "
                 "Fastpass'")


def queue_claims(k: pd.DataFrame, warmup_ms: int) -> list[Claim]:
    """Exp A's claims from its table (one row per run, indexed by run): every number is
    one run's (a queue percentile of 100 µs samples, a goodput), so each is compared as
    it is, and says so."""
    base = k.loc["baseline"]
    b50 = one_run(base.p50_kb)
    out = []
    for run in FP_RUNS:
        fp = k.loc[run]
        out.append(claim.at_least(
            f"{run}: median queue at least 20× below the baseline's", ratio(b50,
                                                                            one_run(fp.p50_kb)),
            20, paper=QUEUE_PAPER, paper_value="242× (4,351 vs 18 KB)",
            why=f"{base.p50_kb:,.0f} vs {fp.p50_kb:,.1f} KiB; percentiles "
                + "/".join(f"{fp[f'{p}_kb']:,.1f}" for p in PCTS)
                + " KiB (paper 18/36/53/305)"))
    tenth = one_run(base.p50_kb / 10)
    out.append(claim.each(
        "the tails too: every Fastpass run's 99.9th percentile below a tenth of the "
        "baseline's median",
        [claim.below(run, one_run(k.loc[run, "p999_kb"]), tenth) for run in FP_RUNS],
        paper="§7.1's table: Fastpass's 99.9th percentile 305 KB against the baseline's "
              "median 4,351 KB", paper_value="305 vs 4,351 KB",
        why="99.9th percentiles " + ", ".join(f"{run} {k.loc[run, 'p999_kb']:,.1f} KiB"
                                             for run in FP_RUNS)
            + f"; baseline median {base.p50_kb:,.0f} KiB", label=list(FP_RUNS)))
    out.append(claim.at_least(
        f"the baseline keeps the switch queue nearly full (median at least 75% of the "
        f"{BUFFER_KIB:,} KiB buffer)", b50, 0.75 * BUFFER_KIB,
        paper="§7.1's table: the baseline's median queue 4,351 KB of about 5,240 KB",
        paper_value="4,351 KB", why=f"99th percentile {base.p99_kb:,.0f} KiB"))
    fp, b1 = k.loc["Fastpass"], k.loc["baseline (RTOmin 1 ms)"]
    g_fp, g_base = one_run(fp.steady_goodput_gbps), one_run(base.steady_goodput_gbps)
    pen = ratio(g_fp, g_base)
    out.append(claim.within(
        "Fastpass's throughput penalty is small: steady goodput within 5% of the "
        "baseline's (Fastpass / baseline between 0.95 and 1.05)", pen, 0.95, 1.05,
        paper=GOODPUT_PAPER, paper_value="9.28 / 9.43 = 0.984 (−1.6%)",
        why=f"{fp.steady_goodput_gbps:.3f} vs {base.steady_goodput_gbps:.3f} Gbit/s after "
            f"{warmup_ms} ms ({pen.value - 1:+.1%}); over the whole run "
            f"{fp.goodput_gbps:.3f} vs {base.goodput_gbps:.3f}"))
    pen1 = fp.steady_goodput_gbps / b1.steady_goodput_gbps - 1
    out.append(claim.below(
        "the direction: Fastpass's steady goodput below the baseline's (a penalty, not a "
        "gain)", g_fp, g_base, paper=GOODPUT_PAPER, paper_value="−1.6%",
        why=f"{pen.value - 1:+.1%} against the baseline with Linux's 200 ms RTOmin "
            f"({int(base.timeouts)} timeouts, {int(base.drops):,} drops); {pen1:+.1%} "
            f"against the baseline with a 1 ms RTOmin, which loses throughput to "
            f"{int(b1.timeouts):,} timeouts after synchronized drop-tail losses"))
    out.append(claim.at_least(
        "most of the penalty is the 1% reserved for FCP: Fastpass carries at least 99% of "
        f"its timeslots' goodput ({C_FASTPASS / 1e9:.3f} Gbit/s: a 1,460 B segment per 1.01 "
        "frame times)", g_fp, 0.99 * C_FASTPASS / 1e9,
        paper="§7.1: 'Most of the 1.6% difference ... can be attributed to Fastpass "
              "reserving about 1% of the achieved throughput for FCP traffic'",
        paper_value="about 1%",
        why=f"{fp.steady_goodput_gbps * 1e9 / C_FASTPASS:.1%} of {C_FASTPASS / 1e9:.3f} "
            "Gbit/s"))
    return out


def ping_claims(t: pd.DataFrame, samples: dict[str, np.ndarray]) -> list[Claim]:
    """Exp B's claims: each run's ping RTTs (ms) are its samples, their percentiles
    bootstrapped over the pings (one run each; the draws keyed by the figure, so every
    run is resampled alike). Linear interpolation between order statistics, where the
    table's percentiles are nearest rank."""
    est = {run: Resamples([rtt], key="fastpass_expB_ping").quantiles(0, [0.5, 0.999])
           for run, rtt in samples.items()}
    k = t.set_index("run")
    b50 = est["baseline"][0]
    out = [claim.at_least(f"{run}: median ping RTT at least 5× below the baseline's",
                          ratio(b50, est[run][0]), 5, paper=PING_PAPER,
                          paper_value="15.5× (3.56 vs 0.23 ms)",
                          why=f"medians {b50.fmt('.3f')} vs {est[run][0].fmt('.3f')} ms")
           for run in FP_RUNS]
    fp999 = est["Fastpass"][1]
    out.append(claim.each(
        "Fastpass's tail stays low: 99.9th percentile under 1 ms and below the baseline's "
        "median", [claim.at_most("under 1 ms", fp999, 1.0),
                   claim.below("below the baseline's median", fp999, b50)],
        paper="§7.1's table: Fastpass's 99.9th percentile 0.38 ms, the baseline's median "
              "3.56 ms", paper_value="0.38 vs 3.56 ms",
        why=f"Fastpass's 99.9th percentile {fp999.fmt('.3f')} ms, the baseline's median "
            f"{b50.fmt('.3f')} ms; nearest rank: Fastpass {_slash(k.loc['Fastpass'], 3)} ms, "
            f"baseline {_slash(k.loc['baseline'], 2)} ms (50/90/99/99.9th)"))
    out.append(claim.within(
        "the baseline's RTT is the deep queue's drain time: median within 30% of the "
        "paper's 3.56 ms", b50, 0.7 * 3.56, 1.3 * 3.56, paper=PING_PAPER,
        paper_value="3.56 ms",
        why=f"a full {BUFFER_KIB:,} KiB queue drains in "
            f"{BUFFER_KIB * KIB * 8 / LINK_BPS * 1e3:.2f} ms"))
    return out


def _ab(quick: bool) -> list[Figure]:
    mode = _mode(quick)
    sweep = {"base_text": exp_a_text(mode.duration_ms), "schemes": AB_RUNS}
    dur_ps = mode.duration_ms * 10**9
    warm_ps = mode.warmup_ms * 10**9
    setup = (f"The star of 7 (§7.1): hosts 0-3 each run 20 CUBIC flows of 1 GB (iperf's 20 "
             f"connections per sender; flow i from host i mod 4, started 5 µs apart) to "
             f"host {RECEIVER_A}; host {PINGER} pings host {RECEIVER_A} every 1 ms from 5 ms; "
             f"host {ARBITER} runs the arbiter under Fastpass. Runs of {mode.duration_ms} ms "
             "instead of 20 minutes (6,000× shorter). Runs: `baseline` (CUBIC, Linux's "
             "200 ms RTOmin), `baseline (RTOmin 1 ms)` (the simulator's default, shown for "
             "what Linux's RTOmin does to it), `Fastpass` (perfect clocks) and Fastpass "
             "with each granted timeslot used a uniform [0, 2 µs] or [0, 5 µs] late "
             "(`fastpass.jitter`: clock error, §6.3).")

    def table_a(res: Results) -> pd.DataFrame:
        q = res.sql(f"SELECT scheme, queue_samples, queue_p50_bytes, queue_p90_bytes, "
                    f"queue_p99_bytes, queue_p999_bytes, max_bytes, dropped FROM ports "
                    f"WHERE is_switch AND peer = {RECEIVER_A}").set_index("scheme")
        ft = res.sql("SELECT scheme, time_ps, flow_id, bytes FROM flow_throughput")
        fl = res.sql("SELECT scheme, sum(delivered_bytes) AS delivered, "
                     "sum(timeouts) AS timeouts FROM flows GROUP BY scheme").set_index("scheme")
        rows = []
        for run in AB_RUNS:
            r = q.loc[run]
            paper = PAPER_QUEUE_KB.get(run, (np.nan,) * 4)
            row = {"run": run, "samples": int(r.queue_samples)}
            for p, pv in zip(PCTS, paper, strict=True):
                row[f"{p}_kb"] = r[f"queue_{p}_bytes"] / KIB
                row[f"paper_{p}_kb"] = float(pv)
            row |= {"max_kb": r.max_bytes / KIB, "drops": int(r.dropped),
                    "timeouts": int(fl.loc[run, "timeouts"]),
                    "goodput_gbps": fl.loc[run, "delivered"] * 8e12 / dur_ps / 1e9,
                    "steady_goodput_gbps": window_goodput(ft[ft.scheme == run], warm_ps,
                                                          dur_ps) / 1e9,
                    "paper_goodput_gbps": PAPER_GOODPUT_GBPS.get(run, np.nan)}
            rows.append(row)
        return pd.DataFrame(rows)

    def fig_a(res: Results | None, out: Path) -> tuple[pd.DataFrame, list[Path],
                                                       list[Claim]]:
        assert res is not None
        t = table_a(res)
        k = t.set_index("run")
        bars = [{"x": p, "run": run, "kb": k.loc[run, f"{p}_kb"]} for run in AB_RUNS
                for p in PCTS]
        bars += [{"x": p, "run": f"paper: {run}", "kb": v} for run, vals in
                 PAPER_QUEUE_KB.items() for p, v in zip(PCTS, vals, strict=True)]
        imgs = _symlog_bars(pd.DataFrame(bars), out / "fastpass_expA_queues", groups=PCTS,
                            hue="run", y="kb", xlabels=[PCT_NAMES[p] for p in PCTS],
                            ylabel="queue at the receiver's ToR port (KiB, symlog)",
                            title="Switch queue percentiles (Fastpass Exp A, Fig. 7)")
        return t, imgs, queue_claims(k, mode.warmup_ms)

    def fig_b(res: Results | None, out: Path) -> tuple[pd.DataFrame, list[Path],
                                                       list[Claim]]:
        assert res is not None
        p = res.sql("SELECT scheme, rtt_ps FROM pings")
        rows, samples = [], {}
        for run in AB_RUNS:
            r = p.loc[p.scheme == run, "rtt_ps"]
            rtt = r.dropna().to_numpy(dtype=float) / 1e9
            samples[run] = rtt
            paper = PAPER_PING_MS.get(run, (np.nan,) * 4)
            row = {"run": run, "pings": len(r), "answered": len(rtt)}
            for q, name, pv in zip((0.5, 0.9, 0.99, 0.999), PCTS, paper, strict=True):
                row[f"{name}_ms"] = float(np.quantile(rtt, q, method="inverted_cdf"))
                row[f"paper_{name}_ms"] = float(pv)
            rows.append(row)
        t = pd.DataFrame(rows)
        imgs = plots.cdf(samples, out / "fastpass_expB_ping", xlabel="ping RTT (ms)",
                         title="Ping RTT under load (Fastpass Exp B, Fig. 8)")
        return t, imgs, ping_claims(t, samples)

    return [
        Figure(id="fastpass_expA_queues", data="ab",
               title="Fastpass Exp A: switch queue and throughput, baseline TCP vs Fastpass",
               source="Fastpass §7.1 (Experiment A, Fig. 7 and its table)",
               setup=setup + f" Queue: the receiver's ToR port (the switch port towards host "
               f"{RECEIVER_A}), sampled every 100 µs (the paper: every 100 ms), percentiles "
               "by nearest rank in KiB (the paper's Kbytes). `goodput_gbps`: the flows' "
               "delivered bytes over the run; `steady_goodput_gbps`: payload acknowledged "
               f"after a {mode.warmup_ms} ms warm-up (flow_throughput.parquet), per second.",
               sweep=sweep, analyze=fig_a, metrics=[window_goodput],
               paper=["§7.1: 'Fastpass reduces the median switch queue occupancy from 4.35 "
                      "Megabytes in the baseline to just 18 kilobytes with Fastpass, a "
                      "reduction of a factor of 242×'. Table: baseline 4351 / 5097 / 5224 / "
                      "5239 KB, Fastpass 18 / 36 / 53 / 305 KB (50/90/99/99.9th).",
                      "'9.43 Gbits/s in the baseline run versus 9.28 Gbits/s with Fastpass' "
                      "(−1.6%): 'Most of the 1.6% difference ... can be attributed to "
                      "Fastpass reserving about 1% of the achieved throughput for FCP "
                      "traffic'; the rest to re-requested late timeslots (§6.3).",
                      "'Although the design intends queues to be strictly 0, the "
                      "implementation does not yet achieve it because of jitter in endpoint "
                      "transmission times.'"],
               notes="Without clock error a Fastpass port never holds more than one frame "
                     "besides the one it sends (docs/arbiter.md), so the median is 0 and "
                     "the tail one frame. Uniform clock error adds about one frame per "
                     "timeslot of error (1.24 µs): 20 µs of it (measured once) still gives "
                     "a median of 4.7 KiB and a 99.9th of 12 KiB, so the paper's 18 KB "
                     "median and 305 KB tail come from burstier timing errors than "
                     "independent per-timeslot ones (the kernel module's lock waits, "
                     "§6.3). The baseline with Linux's 200 ms RTOmin recovers its losses by "
                     "fast retransmission and runs the link full; with the simulator's "
                     "1 ms RTOmin, synchronized tail drops at the full queue end in "
                     "hundreds of timeouts and lose 5-10% of the throughput, and Fastpass "
                     "then comes out ahead."),
        Figure(id="fastpass_expB_ping", data="ab",
               title="Fastpass Exp B: ping RTT under load",
               source="Fastpass §7.1 (Experiment B, Fig. 8 and its table)",
               setup=setup + f" Ping every 1 ms (the paper: every 10 ms over 20 minutes, "
               f"about 120,000 pings; here {mode.duration_ms - 5} a run, so the 99.9th "
               "percentile is the largest or nearly): 64 B requests and replies, "
               "scheduled by the arbiter like any packet under Fastpass. Percentiles by "
               "nearest rank.",
               sweep=sweep, analyze=fig_b,
               paper=["§7.1: 'Fastpass reduces the end-to-end round-trip time (RTT) for "
                      "interactive traffic when the network is heavily loaded by a factor "
                      "of 15.5×, from a median of 3.56 ms to 230 µs'. Table: baseline "
                      "3.56 / 3.89 / 3.92 / 3.95 ms, Fastpass 0.23 / 0.27 / 0.32 / 0.38 ms."]),
    ]


# -------------------------------------------------------------------- Exp C
