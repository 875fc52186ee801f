"""CP Figs. 10-11: TCP Outcast at a single bottleneck (CP §2.2, §6.2)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from spillway import plots
from spillway.analysis import flow_goodput, jitter_ratio
from spillway.intervals import Estimate, ratio
from spillway.reproduce import Figure, claim
from spillway.reproduce.claim import Claim
from spillway.reproduce.cp.testbed import (
    CP_SCHEMES,
    LONG_FLOW,
    LONG_FLOW_CLOCK_PPM,
    MSS,
    SCHEMES,
    TESTBED,
    long_flows,
)
from spillway.reproduce.estimates import per_run
from spillway.store import Results

OUTCAST_PAIRS = [(12, 2), (60, 10), (120, 20)]


def _resent_per_segment(f: pd.DataFrame) -> float:
    """Retransmissions per full segment delivered, over a group of flows."""
    return float(f.flow_retransmits.sum() / max(f.delivered_bytes.sum() / MSS, 1))


def _outcast(quick: bool) -> Figure:
    duration = 0.5 if quick else 2.0
    # A run's shares hang on its clock draws (which two links drift slowly against each
    # other), so the figure averages seeds.
    seeds = 3 if quick else 16
    flows = []
    for n, m in OUTCAST_PAIRS:
        fl = [{"src": 1, "dst": 0, "size": LONG_FLOW, "start": f"{10 * i}us"} for i in range(m)]
        # Background: the nine hosts of the other racks, round robin.
        fl += [{"src": 3 + i % 9, "dst": 0, "size": LONG_FLOW, "start": f"{10 * i + 5}us"}
               for i in range(n)]
        flows.append(fl)

    def analyze(res: Results, out: Path) -> tuple[pd.DataFrame, list[Path], list[Claim]]:
        f = long_flows(res)
        f["mbps"] = flow_goodput(f["delivered_bytes"], duration) / 1e6
        f["group"] = (f["src"] == 1).map({True: "experimental", False: "background"})
        rows = []
        for (scheme, pair, seed), g in f.groupby(["scheme", "pair", "seed"]):
            e, b = g[g.group == "experimental"], g[g.group == "background"]
            rows.append({"scheme": scheme, "pair": pair, "seed": seed,
                         "exp_mean_mbps": e.mbps.mean(), "bg_mean_mbps": b.mbps.mean(),
                         "efjr": jitter_ratio(e.mbps), "total_mbps": g.mbps.sum(),
                         "timeouts": int(g.flow_timeouts.sum()),
                         # Segments sent again per segment delivered (with CP, nearly all
                         # are payloads cut at a full port), per group.
                         "exp_resent_per_seg": _resent_per_segment(e),
                         "bg_resent_per_seg": _resent_per_segment(b)})
        # Each seed's EFJR is over its own run's flows; then the mean over seeds (one
        # run's shares hang on its clock draws: see the notes). The shares are ratios of
        # the means over seeds, the long-run average a testbed measures; the median run's
        # ratio is kept beside them.
        runs = pd.DataFrame(rows)
        runs["run_ratio"] = runs["exp_mean_mbps"] / runs["bg_mean_mbps"]
        t = (runs.groupby(["scheme", "pair"], as_index=False)
             .agg(exp_mean_mbps=("exp_mean_mbps", "mean"),
                  bg_mean_mbps=("bg_mean_mbps", "mean"), efjr=("efjr", "mean"),
                  total_mbps=("total_mbps", "mean"), timeouts=("timeouts", "mean"),
                  exp_resent_per_seg=("exp_resent_per_seg", "mean"),
                  bg_resent_per_seg=("bg_resent_per_seg", "mean"),
                  median_run_ratio=("run_ratio", "median"), seeds=("seed", "nunique")))
        t["exp_over_bg"] = t["exp_mean_mbps"] / t["bg_mean_mbps"]
        order = {f"{n}-{m}": i for i, (n, m) in enumerate(OUTCAST_PAIRS)}
        t = t.sort_values(["scheme", "pair"], key=lambda c: c.map(order) if c.name == "pair"
                          else c).reset_index(drop=True)
        imgs = plots.grouped_bars(t, "pair", "scheme", "exp_mean_mbps",
                                  out / "cp_fig10_outcast",
                                  title="Mean goodput per experimental flow (CP Fig. 10)",
                                  xlabel="n background - m experimental flows",
                                  ylabel="goodput per flow (Mbps)", x_order=list(order))
        imgs += plots.grouped_bars(t, "pair", "scheme", "efjr", out / "cp_fig11_efjr",
                                   title="Experimental flow jitter ratio (CP Fig. 11)",
                                   xlabel="n background - m experimental flows",
                                   ylabel="EFJR", percent=True, x_order=list(order),
                                   refs=[("paper: CP below 15%", 0.15, "gray")])
        by = t.set_index(["scheme", "pair"])
        pairs = [f"{n}-{m}" for n, m in OUTCAST_PAIRS]
        runs = runs.sort_values("seed")

        def of(scheme: str, pair: str, col: str) -> Estimate:
            """A per-run quantity's mean over the seeds (Student t)."""
            return per_run(runs[(runs.scheme == scheme) & (runs.pair == pair)], col, floor=0.0)

        def share(scheme: str, pair: str) -> Estimate:
            """Experimental over background per-flow goodput: the ratio of their means over
            the seeds (the table's `exp_over_bg`), its interval from the two intervals."""
            return ratio(of(scheme, pair, "exp_mean_mbps"), of(scheme, pair, "bg_mean_mbps"))
        paper = ("§6.2: TCP's experimental flows suffer Outcast in all three pairs; DCTCP "
                 "alleviates it for 12-2 and 60-10 but not 120-20, its EFJR ranging from 3% "
                 "to 48%; CP prevents Outcast with EFJR below 15%; DCTCP with CP has a smaller "
                 "EFJR than CP")
        v = []
        tcp = [(p, share("TCP", p)) for p in pairs]
        med = [by.loc[("TCP", p), "median_run_ratio"] for p in pairs]
        v.append(claim.each("TCP's experimental flows suffer Outcast in all three pairs (their "
                            "per-flow goodput well below the background's: under 0.8 of it)",
                            [claim.at_most(p, e, 0.8) for p, e in tcp], paper=paper,
                            paper_value="Outcast in all three",
                            why="experimental/background per-flow goodput: "
                                + ", ".join(f"{p}: {e.fmt('.2f')}" for p, e in tcp)
                                + " (in the median run: " + ", ".join(f"{x:.2f}" for x in med)
                                + ")"))
        for s in CP_SCHEMES:
            r = [(p, share(s, p)) for p in pairs]
            j = [(p, of(s, p, "efjr")) for p in pairs]
            v.append(claim.each(
                f"{s} prevents Outcast and keeps EFJR below 15% (per-flow goodput ratio at "
                "least 0.8 and EFJR under 15% in every pair)",
                [claim.each(p, [claim.at_least("ratio", e, 0.8), claim.at_most("EFJR", f, 0.15)])
                 for (p, e), (_, f) in zip(r, j, strict=True)],
                paper=paper, paper_value="EFJR < 15%", label=pairs,
                why="ratio " + ", ".join(e.fmt(".2f") for _, e in r) + "; EFJR "
                    + ", ".join(f.fmt(".1%") for _, f in j)))
        # A run's EFJR averaged over the three pairs (the same seed's runs), then over seeds.
        mean_j = runs.groupby(["scheme", "seed"], as_index=False)["efjr"].mean()
        jc, jd = (per_run(mean_j[mean_j.scheme == s], "efjr", floor=0.0)
                  for s in ("CP", "DCTCP+CP"))
        v.append(claim.below("DCTCP with CP has a smaller EFJR than CP (averaged over the pairs)",
                             jd, jc, paper=paper, paper_value="smaller",
                             why=f"mean EFJR {jd.fmt('.1%')} vs {jc.fmt('.1%')}"))
        v.append(claim.at_least("DCTCP's EFJR is high for the 120-20 pair (over 15%; paper: up "
                                "to 48%)", of("DCTCP", "120-20", "efjr"), 0.15, paper=paper,
                                paper_value="up to 48%"))
        return t, imgs, v

    return Figure(
        id="cp_fig10_outcast",
        title="CP Figs. 10–11: TCP Outcast at a single bottleneck, n-m flow pairs",
        source="CP §2.2, §6.2 (Figs. 9a, 10, 11)",
        setup="m experimental flows from host 1 (host 0's rack: one input port of the "
              "bottleneck) and n background flows from the nine hosts of the other racks "
              "(through the aggregation switch: the other input port), all long-running, "
              "to host 0; the bottleneck, host 0's ToR port, has 128 KB (CP §6.2); "
              f"RTOmin 10 ms; {duration:g} s per run, mean of {seeds} seeds; goodput = "
              "bytes delivered in order × 8 / run time; EFJR = mean absolute deviation / "
              "mean of the experimental flows' goodputs, per run, then the mean over seeds.",
        sweep={"base_text": TESTBED, "seeds": seeds, "schemes": SCHEMES,
               "set": {"workload.kind": "trace", "switch.edge_buffer": "128KB",
                       "host.rx_jitter": "10us", "topology.clock_ppm": LONG_FLOW_CLOCK_PPM,
                       "transport.rto_min": "10ms",
                       "run.duration": f"{int(duration * 1000)}ms"},
               "zip": {"label.pair": [f"{n}-{m}" for n, m in OUTCAST_PAIRS],
                       "workload.flows": flows}},
        analyze=analyze,
        notes="Why CP's few experimental flows still fall behind in the 12-2 pair: the "
              "bottleneck port stays full (122 of 128 KB on average), so each departure "
              "makes room for one packet, and while both of its inputs deliver at line "
              "rate, one of the two packets arriving in that packet time is cut. The "
              "aggregation switch's port is busy 97% of the time with the background flows, "
              "so nearly every packet from host 1 meets a competitor, while host 1's link "
              "is busy a few percent of the time, so background packets seldom do: host "
              "1's packets are cut at 0.33 per segment delivered against the background's "
              "0.022 (`exp_resent_per_seg`, `bg_resent_per_seg`). Each cut is a PACK and a "
              "window halving, so the experimental windows stay at two or three segments: "
              "about 23 Mbps over a ~1.1 ms RTT, what they get. No timeouts: the Outcast's "
              "other half (consecutive losses ending in a timeout) is gone, as the paper "
              "says, but not the unequal share. It is not a phase accident of the link "
              "delays: with the fabric delay at 20, 20.5, 21, 22, 23 and 25 µs the ratio "
              "stayed at 0.30–0.42 (exact clocks, measured while building the figure), and "
              "every seed gives about 0.31 (quartiles 0.30 and 0.31 over 16 seeds). "
              "TCP's shares, by contrast, hang on the clocks (`topology.clock_ppm`): where "
              "host 1's link and the bottleneck port run at nearly the same rate, the "
              "phase in which host 1's packets take each freed slot lasts the whole 2 s "
              "run, and the background starves instead (one seed of 16 at 120-20: "
              "experimental flows 45 Mbps each, background 0.4). Those runs weigh on the "
              "mean, so the shares are means over 16 seeds, with the median run's "
              "ratio in the verdict (0.16, 0.44, 0.59: Outcast in the typical run, not in "
              "the mean at 60-10 and 120-20). Until November 2026 this figure ran one seed, "
              "and its verdicts on TCP and on DCTCP+CP's EFJR held on that seed's draws.",
        paper=["§6.2: TCP's experimental flows suffer Outcast in all three pairs; DCTCP "
               "alleviates it for 12-2 and 60-10 but not 120-20, its EFJR ranging from 3% to "
               "48%; CP prevents Outcast with EFJR below 15%; DCTCP with CP has a smaller "
               "EFJR than CP."],
        metrics=[flow_goodput, jitter_ratio])



def figures(quick: bool) -> list[Figure]:
    return [_outcast(quick)]
