"""`spillway arbiter demo`: an arbiter pair and N endpoints on 127.0.0.1 with Poisson
demand, judged from both sides' logs (issue 29).

Optionally: SIGKILL the primary (failover), SIGSTOP it and let it come back (split
brain), or put `spillway-fcp-proxy` between endpoints and arbiters to drop, duplicate and
corrupt FCP datagrams and flood the arbiters from an unregistered address. The run lasts
at least ``--duration``: demand stops before that (the demand window), and the demo then
waits until every endpoint's queue is empty (asked by status query), up to as long
again, so that "all demand is served" does not depend on how busy the machine was.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spillway.arbiter import (
    STATUS_QUERY,
    STOP_QUERY,
    _last_json,
    _read_jsonl,
    analyse,
    ask,
    build,
    write_config,
)
from spillway.errors import UsageError


@dataclass(frozen=True)
class DemoOptions:
    """What `spillway arbiter demo` runs; see its ``--help``."""

    endpoints: int
    duration: float
    kill_primary_at: float | None = None
    pause_primary_at: float | None = None
    pause_for: float = 0.1
    drop: float = 0.0
    dup: float = 0.0
    corrupt: float = 0.0
    flood: int = 0
    load: float = 0.3
    timeslot_us: int = 100
    seed: int = 1
    keep: str | None = None

    def check(self) -> None:
        if not 2 <= self.endpoints <= 1024:
            raise UsageError(f"arbiter demo: --endpoints {self.endpoints}: between 2 and 1024")
        if self.duration <= 0:
            raise UsageError(f"arbiter demo: --duration {self.duration}: must be positive")
        for name, at in (("kill-primary-at", self.kill_primary_at),
                         ("pause-primary-at", self.pause_primary_at)):
            if at is not None and not 0 < at < self.duration:
                raise UsageError(f"arbiter demo: --{name} {at}: between 0 and --duration "
                                 f"({self.duration})")
        if self.kill_primary_at is not None and self.pause_primary_at is not None:
            raise UsageError("arbiter demo: --kill-primary-at and --pause-primary-at: one "
                             "or the other")
        if self.pause_primary_at is not None and not (
                0 < self.pause_for and self.pause_primary_at + self.pause_for < self.duration):
            raise UsageError(f"arbiter demo: --pause-for {self.pause_for}: positive, and the "
                             f"primary back before --duration ({self.duration})")
        for name, p in (("drop", self.drop), ("dup", self.dup), ("corrupt", self.corrupt)):
            if not 0 <= p < 1:
                raise UsageError(f"arbiter demo: --{name} {p}: a probability in [0, 1)")
        if not 0 <= self.flood <= 1_000_000:
            raise UsageError(f"arbiter demo: --flood {self.flood}: 0..=1000000 datagrams/s")
        if not 0 < self.load <= 1:
            raise UsageError(f"arbiter demo: --load {self.load}: in (0, 1]")
        if not 10 <= self.timeslot_us <= 100_000:
            raise UsageError(f"arbiter demo: --timeslot-us {self.timeslot_us}: in 10..=100000")

    @property
    def proxied(self) -> bool:
        return bool(self.drop or self.dup or self.corrupt or self.flood)


def _rss_kb(pid: int) -> int | None:
    """Resident memory of a process (Linux /proc), None where unknown."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def demo(o: DemoOptions, json_out: bool) -> int:
    o.check()
    bin_dir = build()
    workdir = Path(o.keep) if o.keep else Path(tempfile.mkdtemp(prefix="spillway-arbiter-demo-"))
    workdir.mkdir(parents=True, exist_ok=True)
    # Timing scaled for loopback on a shared machine (docs/arbiter.md): 20x the paper's
    # T_w = 100 us and T_d = 1 ms, a lead of 3 ms (the paper: 65 us), so that scheduling
    # delays of a few ms on loaded cores do not cause spurious takeovers.
    lead_ms, watchdog_ms, takeover_ms = 3.0, 2.0, 20.0
    origin_ns = time.time_ns()
    cfg = workdir / "fabric.toml"
    ep_cfg = workdir / "fabric-endpoints.toml" if o.proxied else cfg
    addrs = write_config(cfg, o.endpoints, o.timeslot_us, origin_ns, lead_ms, watchdog_ms,
                         takeover_ms, proxy=ep_cfg if o.proxied else None)
    # Demand stops before --duration; then the run waits for queues to drain, up to as
    # long again as the run (at least 2 s) before it gives up on what is left.
    drain = min(1.0, max(0.5, 0.3 * o.duration))
    demand_for = max(o.duration - drain, 0.1)
    cap = o.duration + max(2.0, o.duration)
    procs: dict[str, subprocess.Popen[str]] = {}
    errs: dict[str, Any] = {}

    def start(name: str, cmd: list[str]) -> None:
        errs[name] = open(workdir / f"{name}.log", "w")
        procs[name] = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errs[name], text=True)

    timeline: list[tuple[float, str, signal.Signals]] = []
    if o.kill_primary_at is not None:
        timeline.append((o.kill_primary_at, "kill", signal.SIGKILL))
    if o.pause_primary_at is not None:
        timeline.append((o.pause_primary_at, "pause", signal.SIGSTOP))
        timeline.append((o.pause_primary_at + o.pause_for, "resume", signal.SIGCONT))
    happened: dict[str, int] = {}
    rss: dict[str, list[int]] = {"arbiter0": [], "arbiter1": []}
    outs: dict[str, str] = {}
    drained_after = None
    t0 = time.monotonic()
    try:
        if o.proxied:
            start("proxy", [str(bin_dir / "spillway-fcp-proxy"), "--arbiter-config", str(cfg),
                            "--endpoint-config", str(ep_cfg), "--drop", str(o.drop),
                            "--dup", str(o.dup), "--corrupt", str(o.corrupt),
                            "--flood", str(o.flood), "--seed", str(o.seed)])
        for rank in (0, 1):
            start(f"arbiter{rank}", [
                str(bin_dir / "spillway-arbiterd"), "--config", str(cfg), "--rank", str(rank),
                "--duration", f"{int((cap + 2) * 1000)}ms",
                "--grant-log", str(workdir / f"arbiter{rank}.grants.jsonl")])
        for e in range(o.endpoints):
            start(f"endpoint{e}", [
                str(bin_dir / "spillway-endpoint"), "--config", str(ep_cfg), "--id", str(e),
                "--load", str(o.load), "--seed", str(o.seed),
                "--duration", f"{int(cap * 1000)}ms",
                "--demand-for", f"{int(demand_for * 1000)}ms",
                "--events", str(workdir / f"endpoint{e}.events.jsonl")])
        # The run: the timeline's signals, and memory samples of the arbiters.
        while (now := time.monotonic() - t0) < o.duration:
            while timeline and timeline[0][0] <= now:
                _, what, sig = timeline.pop(0)
                happened[what] = time.time_ns()
                procs["arbiter0"].send_signal(sig)
            for name in rss:
                if what_rss := _rss_kb(procs[name].pid):
                    rss[name].append(what_rss)
            nxt = timeline[0][0] if timeline else o.duration
            time.sleep(max(0.0, min(0.1, nxt - now)))
        # The drain: until every endpoint's queue is empty, or the cap.
        while time.monotonic() - t0 < cap:
            answers = ask(addrs["endpoints"], STATUS_QUERY)
            if all(a is not None and a.get("queued") == 0 for a in answers):
                drained_after = round(time.monotonic() - t0, 3)
                break
            time.sleep(0.1)
        time.sleep(0.05)  # what is on the wire lands
        ask(addrs["endpoints"], STOP_QUERY, wait=0)
        for e in range(o.endpoints):
            name = f"endpoint{e}"
            try:
                outs[name] = procs[name].communicate(timeout=5)[0]
            except subprocess.TimeoutExpired:  # the stop query was lost
                procs[name].send_signal(signal.SIGTERM)
                outs[name] = procs[name].communicate(timeout=30)[0]
        for name in rss:
            if r := _rss_kb(procs[name].pid):
                rss[name].append(r)
        # Both arbiters at once: stopping one first leaves the other T_d to take over
        # before its own signal (seen in CI after a split brain, when arbiter1 was the
        # primary and was stopped first: arbiter0 took over, epochs apart at the end).
        names = [n for n in ("arbiter0", "arbiter1", "proxy") if n in procs]
        for name in names:
            if procs[name].poll() is None:
                procs[name].send_signal(signal.SIGTERM)
        for name in names:
            outs[name] = procs[name].communicate(timeout=30)[0]
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGCONT)
                p.kill()
                p.wait()
        for f in errs.values():
            f.close()
    kill_ns = happened.get("kill")
    codes = {n: p.returncode for n, p in procs.items()}
    bad = {n: c for n, c in codes.items()
           if c != 0 and not (n == "arbiter0" and kill_ns is not None and c == -signal.SIGKILL)}
    summaries = {n: _last_json(out) for n, out in outs.items()}
    result = analyse(workdir, o.endpoints, o.timeslot_us * 1_000_000, origin_ns,
                     kill_ns or happened.get("pause"))
    eps = [summaries.get(f"endpoint{e}") or {} for e in range(o.endpoints)]
    arbs = {n: summaries.get(n) for n in ("arbiter0", "arbiter1")}
    log1 = _read_jsonl(workdir / "arbiter1.log")
    log0 = _read_jsonl(workdir / "arbiter0.log")
    # Takeovers by either: under heavy load a stalled primary is (rightly) replaced, and
    # a primary that stood down may later take over again from a stalled one.
    took_over = sorted((r for r in log1 + log0 if r.get("ev") == "took_over"),
                       key=lambda r: r["t_ns"])
    event_ns = kill_ns or happened.get("pause")
    result.update({
        "endpoints": o.endpoints,
        "duration_s": o.duration,
        "demand_window_s": demand_for,
        "drained_at_s": drained_after,
        "load": o.load,
        "timeslot_us": o.timeslot_us,
        "lead_us": lead_ms * 1000,
        "watchdog_us": watchdog_ms * 1000,
        "takeover_us": takeover_ms * 1000,
        "killed_primary_at_s": o.kill_primary_at,
        "paused_primary_at_s": o.pause_primary_at,
        "paused_for_s": o.pause_for if o.pause_primary_at is not None else None,
        "takeover_after_kill_us": (round((took_over[0]["t_ns"] - event_ns) / 1000, 1)
                                   if took_over and event_ns else None),
        "takeovers": len(took_over),
        "stood_down": sum(1 for r in log0 if r.get("ev") == "stood_down"),
        "primaries_at_end": sum(1 for a in arbs.values() if a and a.get("role") == "primary"),
        "missed_slots": sum(s.get("missed", 0) for s in eps),
        "unused_grants": sum(s.get("unused", 0) for s in eps),
        "queued_at_end": sum(s.get("queued", 0) for s in eps),
        "fcp_resets": sum(s.get("fcp", {}).get("resets", 0) for s in eps),
        "endpoint_fcp_dropped": {k: sum(s.get("fcp", {}).get(k, 0) for s in eps)
                                 for k in ("bad_checksums", "stale_epoch", "malformed")},
        "endpoint_timer_lateness_mean_us": (
            round(sum(s["timer_lateness"]["mean_us"] for s in eps if s) / max(1, len(eps)), 1)),
        "arbiter_rss_kb": {n: ({"first": v[0], "max": max(v), "last": v[-1]} if v else None)
                           for n, v in rss.items()},
        "proxy": summaries.get("proxy"),
        "arbiters": arbs,
        "exit_codes": codes,
        "workdir": str(workdir),
    })
    if json_out:
        print(json.dumps(result))
    else:
        _print(o, result)
    if bad:
        print(f"arbiter demo: processes that failed: {bad} (logs in {workdir})",
              file=sys.stderr)
    return 1 if bad else 0


def _print(o: DemoOptions, r: dict[str, Any]) -> None:
    print(f"arbiter demo: {o.endpoints} endpoints, {o.duration:g} s (demand for "
          f"{r['demand_window_s']:g} s at load {o.load:g}), timeslot {o.timeslot_us} us, "
          f"logs in {r['workdir']}")
    print(f"  demand {r['demand_slots']} slots, served {r['served_slots']}, received "
          f"{r['received_slots']}, conflicts {r['conflicts']} (grant logs: "
          f"{r['grant_conflicts']}), sent outside slot {r['sent_outside_slot']}; all "
          f"queues empty at {r['drained_at_s']} s")
    print(f"  missed timeslots (re-requested) {r['missed_slots']}, unused grants "
          f"{r['unused_grants']}, endpoint timer lateness mean "
          f"{r['endpoint_timer_lateness_mean_us']} us")
    for n, a in r["arbiters"].items():
        mem = r["arbiter_rss_kb"].get(n)
        mem_s = f", RSS {mem['first']}..{mem['max']} kB" if mem else ""
        if a:
            print(f"  {n}: {a['role']} epoch {a['epoch']}, {a['granted_slots']} slots "
                  f"granted, keeps up {a['keep_up_share']:.1%}, timer lateness "
                  f"{a['timer_lateness']['mean_us']} us mean; dropped: unknown source "
                  f"{a['unknown_source']}, malformed {a['malformed'] + a['fcp_malformed']}, "
                  f"bad checksum {a['bad_checksums']}{mem_s}")
        else:
            print(f"  {n}: no summary (killed)")
    if (p := r["proxy"]) is not None:
        up, down = p["to_arbiters"], p["to_endpoints"]
        print(f"  proxy: to arbiters {up['received']} (dropped {up['dropped']}, duplicated "
              f"{up['duplicated']}, corrupted {up['corrupted']}); to endpoints "
              f"{down['received']} (dropped {down['dropped']}, duplicated "
              f"{down['duplicated']}, corrupted {down['corrupted']}); flood {p['flood_sent']}")
    if o.kill_primary_at is not None or o.pause_primary_at is not None:
        what = "killed" if o.kill_primary_at is not None else "paused"
        print(f"  primary {what} at {o.kill_primary_at or o.pause_primary_at:g} s: takeover "
              f"after {r['takeover_after_kill_us']} us, failover gap {r['failover_gap_us']} "
              f"us; primaries at the end {r['primaries_at_end']}")
