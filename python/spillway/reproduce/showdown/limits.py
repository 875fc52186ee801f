"""Limits at scale: two cells of the full showdown where a scheme does not do what its
paper promises, each isolated by an experiment that shows the mechanism is the scheme's
own, not the simulator's (issue 37). Full mode runs them on leaf-spine-144, where both
appear at fan-in 256.

- **Turbo T1's probes.** T1 (simple timeouts, cliff inflation, a probe at every timeout;
  Turbo §4.2) resends from its first unacknowledged segment at every timeout, at the
  inflated priority, and learns only a round trip later, from its probe's echo, that the
  path is clear. A timed-out flow probes once an RTO, at its true priority: n such flows
  send n header-only frames an RTO. Past n* = RTO × C / (probe frame) they alone fill the
  receiver's link, every resend at inflated priority loses to them, and nothing is
  acknowledged again: a livelock. The experiment sweeps the fan-in across n* and doubles
  the RTO (which doubles n*).
- **CP's allowance.** CP (§4.6) argues that an extra allowance of one packet holds the
  payload-cut headers, since cutting leaves less than the output can send. At fan-in 256
  the headers of a burst wait behind a full 128 KB buffer of payload while 160 Gbit/s of
  spine links feed a 10 Gbit/s port: the 40 KB allowance overflows, headers are dropped,
  and their flows time out. With an allowance that holds them no timeout fires, but
  every cut packet is resent at once (§4.4) and cut again while the port stays full: cut
  headers take the bottleneck's time from payload, and rounds take longer than TCP's.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import pandas as pd

from spillway import _core
from spillway.intervals import Estimate, over_seeds
from spillway.reproduce import claim, markdown_table
from spillway.reproduce.claim import Claim
from spillway.reproduce.showdown.setup import INCAST_SIZE, LEAF_SPINE, Mode, scheme_overrides
from spillway.store import Results

FABRIC = LEAF_SPINE
# A probe is a header-only segment: the frame of an ACK.
PROBE_FRAME = _core.constants()["ack_frame_bytes"]
T1_FANINS = (96, 128, 160, 192, 256)
T1_LONGER_RTO = 2
CP_FANIN = 256
CP_BIG_ALLOWANCE = "256KB"
# The receiver's link: leaf-spine-144's host links.
HOST_LINK_BPS = 10e9


def probe_limit(rto: str, rate_bps: float = HOST_LINK_BPS) -> float:
    """n*: the number of flows whose probes, one an RTO each, fill a link of ``rate_bps``."""
    return _core.parse_time(rto) * 1e-12 * rate_bps / (PROBE_FRAME * 8)


def _longer_rto() -> str:
    return f"{_core.parse_time(FABRIC.turbo_rto) * T1_LONGER_RTO / 1e6:g}us"


def _incast(rounds: int, duration: str) -> dict[str, Any]:
    hosts = FABRIC.workload_hosts()
    return {"run.duration": duration, "workload.kind": "incast", "workload.receiver": 0,
            "workload.sources": hosts[1:], "workload.size": INCAST_SIZE,
            "workload.rounds": rounds, "workload.jitter": "10us"}


def sweeps(mode: Mode) -> dict[str, dict[str, Any]]:
    """The two experiments' sweeps (data directory name -> sweep) on leaf-spine-144,
    with the mode's first two seeds."""
    seeds = list(mode.seeds[:2])
    t1 = scheme_overrides("Turbo-T1", FABRIC)
    longer = _longer_rto()
    cp = scheme_overrides("CP", FABRIC)
    return {
        "limits-turbo-t1": {
            "base_text": FABRIC.text, "seeds": seeds,
            "schemes": {"Turbo-T1": t1, f"Turbo-T1 ({longer} RTO)": t1 | {
                "transport.rto_min": longer}},
            "set": _incast(1, "200ms"),
            "grid": {"workload.senders": list(T1_FANINS)}},
        "limits-cp": {
            "base_text": FABRIC.text, "seeds": seeds,
            "schemes": {"TCP": scheme_overrides("TCP", FABRIC), "CP": cp,
                        f"CP ({CP_BIG_ALLOWANCE} allowance)": cp | {
                            "switch.cut_payload_extra": CP_BIG_ALLOWANCE}},
            "set": _incast(mode.incast_rounds, mode.duration)
            | {"workload.senders": CP_FANIN}},
    }


def _runs(res: Results) -> pd.DataFrame:
    """One row per done run: its scheme, fan-in, seed and what its summary says."""
    pts = res.sql("SELECT * FROM points WHERE status = 'done' ORDER BY hash")
    rows = []
    for p in pts.itertuples():
        s = json.loads((res.out / "points" / p.hash / "summary.json").read_text())
        rows.append({"scheme": p.scheme, "senders": getattr(p, "senders", CP_FANIN),
                     "seed": p.seed, "started": s["flows_started"],
                     "finished": s["flows_finished"], "stop": s.get("stop_reason", ""),
                     "timeouts": s["timeouts"], "drops": s["drops"],
                     "cut_bytes": s.get("cut_bytes", 0), "delivered": s["bytes_delivered"],
                     "retransmits": s["retransmits"], "sim_ms": s["sim_time_ps"] / 1e9,
                     "qct_p99_ms": _ms((s.get("qct_ps") or {}).get("p99"))})
    return pd.DataFrame(rows).sort_values(["scheme", "senders", "seed"], kind="stable")


def _ms(ps: float | None) -> float:
    return float("nan") if ps is None else ps / 1e9


def _label(r: Any) -> str:
    return f"{r.scheme} n={r.senders} seed {r.seed}"


def turbo_claims(runs: pd.DataFrame) -> tuple[pd.DataFrame, list[Claim]]:
    limit, longer = probe_limit(FABRIC.turbo_rto), probe_limit(_longer_rto())
    base = runs[runs.scheme == "Turbo-T1"]
    slow = runs[runs.scheme != "Turbo-T1"]
    below, above = base[base.senders < limit], base[base.senders > limit]
    table = runs.assign(unfinished=runs.started - runs.finished)[
        ["scheme", "senders", "seed", "started", "unfinished", "stop", "sim_ms", "timeouts"]]
    claims = [
        claim.in_every_run(
            f"Turbo-T1 finishes every flow of a 64 KB incast at fan-ins below its probes' limit "
            f"n* = RTO × C / probe frame = {FABRIC.turbo_rto} × 10 Gbit/s / {PROBE_FRAME} B = "
            f"{limit:.0f}",
            {_label(r): r.finished == r.started for r in below.itertuples()},
            "fan-ins " + ", ".join(map(str, sorted(set(below.senders)))),
            paper="Turbo: 'probe packets, which are very small so as to barely consume any "
                  "network bandwidth' (§4.1)"),
        claim.in_every_run(
            "above n* it stops acknowledging anything: a livelock, stopped by "
            "run.progress_limit (stop reason no_progress)",
            {_label(r): r.stop == "no_progress" for r in above.itertuples()},
            "fan-ins " + ", ".join(map(str, sorted(set(above.senders))))
            + "; finished before the livelock: " + ", ".join(
                f"{r.finished} of {r.started} (n={r.senders})" for r in above.itertuples()
                if r.seed == above.seed.min())),
        claim.in_every_run(
            f"with {T1_LONGER_RTO}× the RTO (n* = {longer:.0f}) every fan-in finishes: the "
            "limit is the probes' share of the link, as n* says",
            {_label(r): r.finished == r.started for r in slow.itertuples()},
            "fan-ins " + ", ".join(map(str, sorted(set(slow.senders))))),
    ]
    return table, claims


def cp_claims(runs: pd.DataFrame) -> tuple[pd.DataFrame, list[Claim]]:
    big = f"CP ({CP_BIG_ALLOWANCE} allowance)"

    def est(scheme: str, col: str) -> Estimate:
        return over_seeds(runs.loc[runs.scheme == scheme, col].astype(float).tolist(), floor=0)

    rows = []
    for s in ("TCP", "CP", big):
        d = runs[runs.scheme == s]
        rows.append({"scheme": s, "seeds": len(d), "timeouts": est(s, "timeouts").fmt(),
                     "drops (CP: cut headers)": est(s, "drops").fmt(),
                     "p99 round ms": est(s, "qct_p99_ms").fmt(),
                     "cut header bytes / payload": (d.cut_bytes / d.delivered).mean(),
                     "sends per segment": (1 + d.retransmits / (d.delivered / 1460)).mean()})
    claims = [
        claim.each(
            f"at fan-in {CP_FANIN} CP's timeouts come with dropped cut headers: its 40 KB "
            "allowance overflows", [
                claim.at_least("headers dropped", est("CP", "drops"), 1),
                claim.at_least("timeouts", est("CP", "timeouts"), 1)],
            paper="CP: the extra buffer 'only needs to be one maximum packet size because the "
                  "input bandwidth becomes smaller than output bandwidth after CP processing' "
                  "(§4.6)", paper_value="4 KB (§5.2)", label=["headers", "timeouts"]),
        # Nothing may be dropped or time out in any run: a count is judged run by run.
        claim.in_every_run(
            f"with a {CP_BIG_ALLOWANCE} allowance no header is dropped and no timeout fires",
            {_label(r): r.drops == 0 and r.timeouts == 0
             for r in runs[runs.scheme == big].itertuples()},
            f"headers dropped {est(big, 'drops').fmt()}, timeouts "
            f"{est(big, 'timeouts').fmt()} a run"),
        claim.below(
            "but its rounds take longer than TCP's: each cut packet is resent at once and cut "
            "again while the port stays full, and the cut headers take the bottleneck's time",
            est("TCP", "qct_p99_ms"), est(big, "qct_p99_ms"),
            paper="CP: 'the sender could start the retransmission immediately' (§4.5)",
            why=f"p99 round TCP {est('TCP', 'qct_p99_ms').fmt()} ms, {big} "
                f"{est(big, 'qct_p99_ms').fmt()} ms"),
    ]
    return pd.DataFrame(rows), claims


def section(data: Path) -> tuple[str, list[Claim]]:
    """The report's section on the two experiments (data under ``data``), and its
    claims; an empty section where they did not run."""
    parts, every = [], []
    for name, title, judge in (
            ("limits-turbo-t1", "Turbo T1 past its probes' limit (leaf-spine-144, incast of "
             "64 KB, one round)", turbo_claims),
            ("limits-cp", f"CP's allowance at fan-in {CP_FANIN} (leaf-spine-144, the "
             "showdown's incast)", cp_claims)):
        d = data / FABRIC.name / name
        if not (d / "catalog.duckdb").exists():
            continue
        with Results(d) as res:
            runs = _runs(res)
        if runs.empty:
            continue
        table, claims = judge(runs)
        every += claims
        parts.append(f"### {title}\n\n" + markdown_table(table) + "\n\n"
                     + claim.markdown(claims) + "\n")
    if not parts:
        return "", []
    return ("## Limits at scale: what breaks, and why\n\n" + inspect.cleandoc(__doc__ or "")
            + "\n\n" + "\n".join(parts)), every
