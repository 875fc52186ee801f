"""`spillway arbiter serve|demo`: the Fastpass arbiter as a real UDP service (issue 29).

The daemons are Rust binaries of crates/spillway-arbiter (`spillway-arbiterd`,
`spillway-endpoint`), built in release mode by cargo from the source tree, as
`spillway bench arbiter` builds `arbiter-bench`. The demo starts an arbiter pair and N
endpoints on 127.0.0.1 ephemeral ports with Poisson demand, optionally SIGKILLs the
primary, stops by itself, and judges the run from both sides' logs (senders' and
receivers'), and the arbiters' grant logs.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from spillway.errors import UsageError

BINARIES = ("spillway-arbiterd", "spillway-endpoint")


def _root() -> Path:
    root = Path(__file__).resolve().parents[2]
    if not (root / "crates" / "spillway-arbiter").exists():
        raise UsageError("arbiter: needs the source tree (crates/spillway-arbiter)")
    return root


def build() -> Path:
    """Build both binaries (release) and return the directory that holds them."""
    root = _root()
    cmd = ["cargo", "build", "--release", "-q", "-p", "spillway-arbiter"]
    for b in BINARIES:
        cmd += ["--bin", b]
    r = subprocess.run(cmd, cwd=root)
    if r.returncode != 0:
        raise UsageError("arbiter: cargo build of the service binaries failed")
    target = Path(os.environ.get("CARGO_TARGET_DIR", root / "target"))
    if not target.is_absolute():
        target = root / target
    return target / "release"


def serve(config: str, rank: int, duration: str | None, grant_log: str | None,
          busy_poll: bool) -> int:
    """`spillway arbiter serve CONFIG`: run one arbiter in the foreground."""
    if not Path(config).is_file():
        raise UsageError(f"arbiter serve: {config}: no such file")
    bin_dir = build()
    cmd = [str(bin_dir / "spillway-arbiterd"), "--config", config, "--rank", str(rank)]
    if duration:
        cmd += ["--duration", duration]
    if grant_log:
        cmd += ["--grant-log", grant_log]
    if busy_poll:
        cmd.append("--busy-poll")
    p = subprocess.Popen(cmd)
    try:
        return p.wait()
    except KeyboardInterrupt:
        p.send_signal(signal.SIGTERM)
        return p.wait()


def _free_ports(n: int) -> list[int]:
    """n distinct free UDP ports on 127.0.0.1 (held together while chosen, so distinct;
    freed before the daemons bind them, a race other programs rarely win)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def write_config(path: Path, endpoints: int, timeslot_us: int, origin_ns: int,
                 lead_ms: float, watchdog_ms: float, takeover_ms: float) -> None:
    ports = _free_ports(2 + endpoints)
    arbs = ", ".join(f'"127.0.0.1:{p}"' for p in ports[:2])
    eps = ",\n  ".join(f'"127.0.0.1:{p}"' for p in ports[2:])
    path.write_text(
        "# Written by `spillway arbiter demo`.\n"
        f"[topology]\nkind = \"star\"\nhosts = {endpoints}\n\n"
        f"[arbiter]\naddrs = [{arbs}]\n"
        f"timeslot = \"{timeslot_us}us\"\nlead = \"{lead_ms * 1000:.0f}us\"\nbatch = 8\n"
        f"watchdog = \"{watchdog_ms * 1000:.0f}us\"\ntakeover = \"{takeover_ms * 1000:.0f}us\"\n"
        f"origin_unix_ns = {origin_ns}\n\n"
        f"[endpoints]\naddrs = [\n  {eps},\n]\n")


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    out = []
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            # A killed arbiter's last line may be cut short.
            continue
    return out


def _last_json(text: str) -> dict[str, Any] | None:
    for line in reversed(text.strip().splitlines()):
        try:
            return json.loads(line)
        except json.JSONDecodeError:
            continue
    return None


def analyse(workdir: Path, endpoints: int, timeslot_ps: int, origin_ns: int,
            kill_ns: int | None) -> dict[str, Any]:
    """Judge a run from its logs: conflicts from senders' and receivers' sides, demand
    served, datagrams outside their timeslot, the grant logs of both arbiters, and the
    failover gap."""
    sends: list[tuple[int, int, int, int, int]] = []  # (ts, src, dst, epoch, t_ps)
    recvs: list[tuple[int, int, int]] = []  # (ts, src, dst)
    demand = 0
    for e in range(endpoints):
        for r in _read_jsonl(workdir / f"endpoint{e}.events.jsonl"):
            ev = r["ev"]
            if ev == "send":
                sends.append((r["ts"], e, r["dst"], r["epoch"], r["t"]))
            elif ev == "recv":
                recvs.append((r["ts"], r["src"], e))
            elif ev == "demand":
                demand += 1
    conflict_slots: set[int] = set()
    for side in (((s[0], s[1]) for s in sends), ((s[0], s[2]) for s in sends),
                 ((r[0], r[1]) for r in recvs), ((r[0], r[2]) for r in recvs)):
        # src twice in a slot (sender given twice), dst twice (receiver given twice).
        conflict_slots.update(k[0] for k, n in Counter(side).items() if n > 1)
    outside = sum(1 for ts, _, _, _, t in sends
                  if not ts * timeslot_ps <= t < (ts + 1) * timeslot_ps)
    grants: list[tuple[int, int, int, int]] = []  # (ts, src, dst, rank)
    for rank in (0, 1):
        for b in _read_jsonl(workdir / f"arbiter{rank}.grants.jsonl"):
            grants += [(ts, src, dst, rank) for ts, src, dst in b["grants"]]
    grant_conflicts: set[int] = set()
    for side in (((g[0], g[1]) for g in grants), ((g[0], g[2]) for g in grants)):
        grant_conflicts.update(k[0] for k, n in Counter(side).items() if n > 1)
    out: dict[str, Any] = {
        "conflicts": len(conflict_slots),
        "grant_conflicts": len(grant_conflicts),
        "demand_slots": demand,
        "served_slots": len(sends),
        "received_slots": len(recvs),
        "sent_outside_slot": outside,
        "failover_gap_us": None,
    }
    if kill_ns is not None and sends:
        first_epoch = min(s[3] for s in sends)
        after = [s[4] for s in sends if s[3] > first_epoch]
        before = [s[4] for s in sends if s[3] == first_epoch]
        if after:
            # From the kill to the first datagram sent in a timeslot the new primary
            # granted (the paper's 1-2 ms, §5.1, counts detection and resync alike).
            first_new = origin_ns + min(after) // 1000
            out["failover_gap_us"] = round((first_new - kill_ns) / 1000, 1)
        if before:
            last_old = origin_ns + max(before) // 1000
            out["last_old_send_after_kill_us"] = round((last_old - kill_ns) / 1000, 1)
    return out


def demo(endpoints: int, duration: float, kill_primary_at: float | None, json_out: bool,
         load: float = 0.3, timeslot_us: int = 100, seed: int = 1,
         keep: str | None = None) -> int:
    if endpoints < 2 or endpoints > 1024:
        raise UsageError(f"arbiter demo: --endpoints {endpoints}: between 2 and 1024")
    if duration <= 0:
        raise UsageError(f"arbiter demo: --duration {duration}: must be positive")
    if kill_primary_at is not None and not 0 < kill_primary_at < duration:
        raise UsageError(f"arbiter demo: --kill-primary-at {kill_primary_at}: "
                         f"between 0 and --duration ({duration})")
    if not 0 < load <= 1:
        raise UsageError(f"arbiter demo: --load {load}: in (0, 1]")
    if not 10 <= timeslot_us <= 100_000:
        raise UsageError(f"arbiter demo: --timeslot-us {timeslot_us}: in 10..=100000")
    bin_dir = build()
    workdir = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="spillway-arbiter-demo-"))
    workdir.mkdir(parents=True, exist_ok=True)
    # Timing scaled for loopback on a shared machine (docs/arbiter.md): 20x the paper's
    # T_w = 100 us and T_d = 1 ms, a lead of 3 ms (the paper: 65 us), so that scheduling
    # delays of a few ms on loaded cores do not cause spurious takeovers.
    lead_ms, watchdog_ms, takeover_ms = 3.0, 2.0, 20.0
    # Timeslot 0 a little in the future is fine; in the past keeps numbers small.
    origin_ns = time.time_ns()
    cfg = workdir / "fabric.toml"
    write_config(cfg, endpoints, timeslot_us, origin_ns, lead_ms, watchdog_ms, takeover_ms)
    # Demand stops before the run does, leaving time to serve what is queued.
    drain = min(1.0, max(0.5, 0.3 * duration))
    demand_for = max(duration - drain, 0.1)
    procs: dict[str, subprocess.Popen[str]] = {}
    errs: dict[str, Any] = {}

    def start(name: str, cmd: list[str]) -> None:
        errs[name] = open(workdir / f"{name}.log", "w")
        procs[name] = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errs[name], text=True)

    t0 = time.monotonic()
    kill_ns = None
    try:
        for rank in (0, 1):
            start(f"arbiter{rank}", [
                str(bin_dir / "spillway-arbiterd"), "--config", str(cfg), "--rank", str(rank),
                "--duration", f"{int((duration + 2) * 1000)}ms",
                "--grant-log", str(workdir / f"arbiter{rank}.grants.jsonl")])
        for e in range(endpoints):
            start(f"endpoint{e}", [
                str(bin_dir / "spillway-endpoint"), "--config", str(cfg), "--id", str(e),
                "--load", str(load), "--seed", str(seed),
                "--duration", f"{int(duration * 1000)}ms",
                "--demand-for", f"{int(demand_for * 1000)}ms",
                "--events", str(workdir / f"endpoint{e}.events.jsonl")])
        if kill_primary_at is not None:
            time.sleep(max(0.0, kill_primary_at - (time.monotonic() - t0)))
            kill_ns = time.time_ns()
            procs["arbiter0"].send_signal(signal.SIGKILL)
        outs: dict[str, str] = {}
        for e in range(endpoints):
            name = f"endpoint{e}"
            outs[name] = procs[name].communicate(timeout=duration + 30)[0]
        # The secondary first: stopping the primary first would leave it to take over.
        for rank in (1, 0):
            name = f"arbiter{rank}"
            p = procs[name]
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
            outs[name] = p.communicate(timeout=30)[0]
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()
        for f in errs.values():
            f.close()
    codes = {n: p.returncode for n, p in procs.items()}
    bad = {n: c for n, c in codes.items()
           if c != 0 and not (n == "arbiter0" and kill_ns is not None and c == -signal.SIGKILL)}
    summaries = {n: _last_json(o) for n, o in outs.items()}
    result = analyse(workdir, endpoints, timeslot_us * 1_000_000, origin_ns, kill_ns)
    eps = [summaries.get(f"endpoint{e}") or {} for e in range(endpoints)]
    arbs = {n: summaries.get(n) for n in ("arbiter0", "arbiter1")}
    took_over = [r for r in _read_jsonl(workdir / "arbiter1.log") if r.get("ev") == "took_over"]
    result.update({
        "endpoints": endpoints,
        "duration_s": duration,
        "demand_window_s": demand_for,
        "load": load,
        "timeslot_us": timeslot_us,
        "lead_us": lead_ms * 1000,
        "watchdog_us": watchdog_ms * 1000,
        "takeover_us": takeover_ms * 1000,
        "killed_primary_at_s": kill_primary_at,
        "takeover_after_kill_us": (round((took_over[0]["t_ns"] - kill_ns) / 1000, 1)
                                   if took_over and kill_ns else None),
        "takeovers": len(took_over),
        "missed_slots": sum(s.get("missed", 0) for s in eps),
        "unused_grants": sum(s.get("unused", 0) for s in eps),
        "queued_at_end": sum(s.get("queued", 0) for s in eps),
        "fcp_resets": sum(s.get("fcp", {}).get("resets", 0) for s in eps),
        "endpoint_timer_lateness_mean_us": (
            round(sum(s["timer_lateness"]["mean_us"] for s in eps if s) / max(1, len(eps)), 1)),
        "arbiters": arbs,
        "exit_codes": codes,
        "workdir": str(workdir),
    })
    if not json_out:
        print(f"arbiter demo: {endpoints} endpoints, {duration:g} s "
              f"(demand for {demand_for:g} s at load {load:g}), timeslot {timeslot_us} us, "
              f"logs in {workdir}")
        print(f"  demand {result['demand_slots']} slots, served {result['served_slots']}, "
              f"received {result['received_slots']}, conflicts {result['conflicts']} "
              f"(grant logs: {result['grant_conflicts']}), sent outside slot "
              f"{result['sent_outside_slot']}")
        print(f"  missed timeslots (re-requested) {result['missed_slots']}, unused grants "
              f"{result['unused_grants']}, endpoint timer lateness mean "
              f"{result['endpoint_timer_lateness_mean_us']} us")
        for n, a in arbs.items():
            if a:
                print(f"  {n}: {a['role']} epoch {a['epoch']}, {a['granted_slots']} slots "
                      f"granted, keeps up {a['keep_up_share']:.1%}, timer lateness "
                      f"{a['timer_lateness']['mean_us']} us mean")
            else:
                print(f"  {n}: no summary (killed)")
        if kill_ns is not None:
            print(f"  primary killed at {kill_primary_at:g} s: takeover after "
                  f"{result['takeover_after_kill_us']} us, failover gap "
                  f"{result['failover_gap_us']} us")
        if bad:
            print(f"  processes that failed: {bad}", file=sys.stderr)
    else:
        print(json.dumps(result))
    return 1 if bad else 0
