"""`spillway arbiter serve`, and what the demo (`spillway.arbiter_demo`) stands on: the
Fastpass arbiter as a real UDP service (issue 29).

The daemons are Rust binaries of crates/spillway-arbiter (`spillway-arbiterd`,
`spillway-endpoint`, `spillway-fcp-proxy`), built in release mode by cargo from the
source tree, as `spillway bench arbiter` builds `arbiter-bench`. Here: building them,
running one arbiter, writing a demo's fabric files, and judging a run from both sides'
logs (senders' and receivers') and the arbiters' grant logs.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from spillway.errors import UsageError

BINARIES = ("spillway-arbiterd", "spillway-endpoint", "spillway-fcp-proxy", "spillway-fcp-load")


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


STATUS_QUERY = b"\xe5spillway-status"
STOP_QUERY = b"\xe5spillway-stop"


def ask(addrs: list[str], msg: bytes, wait: float = 0.3) -> list[dict[str, Any] | None]:
    """Send ``msg`` (`STATUS_QUERY`, `STOP_QUERY`) to each ``"ip:port"``; their JSON
    answers in order (None where none came within ``wait`` seconds)."""
    out: list[dict[str, Any] | None] = [None] * len(addrs)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        where = {}
        for i, a in enumerate(addrs):
            host, port = a.rsplit(":", 1)
            where[(host, int(port))] = i
            s.sendto(msg, (host, int(port)))
        end = time.monotonic() + wait
        while any(o is None for o in out) and (left := end - time.monotonic()) > 0:
            s.settimeout(left)
            try:
                data, frm = s.recvfrom(65536)
            except OSError:
                break
            if frm in where:
                try:
                    out[where[frm]] = json.loads(data)
                except json.JSONDecodeError:
                    pass
    return out


class _Daemon:
    """A running service process: its status, a clean stop, its summary."""

    name = ""
    addr = ""

    def __init__(self, cmd: list[str]) -> None:
        self.cmd = cmd
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> _Daemon:
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        return self

    def status(self, wait: float = 0.5) -> dict[str, Any] | None:
        """Its status answer (a JSON object), or None if it did not answer."""
        return ask([self.addr], STATUS_QUERY, wait)[0]

    def stop(self, timeout: float = 10.0) -> dict[str, Any]:
        """Ask it to exit cleanly (a stop query; SIGTERM if that is not heard) and return
        the summary it prints; `UsageError` if it failed."""
        if self.proc is None:
            raise UsageError(f"{self.name}: not started")
        ask([self.addr], STOP_QUERY, wait=0)
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGTERM)
            out, err = self.proc.communicate(timeout=timeout)
        summary = _last_json(out)
        if self.proc.returncode != 0 or summary is None:
            raise UsageError(f"{self.name} exited with {self.proc.returncode}: "
                             f"{err.strip().splitlines()[-1:] or ''}")
        return summary

    def __enter__(self) -> _Daemon:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _addrs(config: str | Path, table: str) -> list[str]:
    import tomllib

    try:
        return list(tomllib.loads(Path(config).read_text())[table]["addrs"])
    except (OSError, KeyError, tomllib.TOMLDecodeError) as e:
        raise UsageError(f"{config}: no {table}.addrs ({e})") from e


class Arbiter(_Daemon):
    """`spillway-arbiterd` of rank ``rank`` for the fabric file ``config``, as a handle:
    ``with Arbiter(cfg, 0) as a: ... a.status() ...``."""

    def __init__(self, config: str | Path, rank: int = 0,
                 grant_log: str | Path | None = None) -> None:
        cmd = [str(build() / "spillway-arbiterd"), "--config", str(config), "--rank", str(rank)]
        if grant_log is not None:
            cmd += ["--grant-log", str(grant_log)]
        super().__init__(cmd)
        self.name, self.addr = f"arbiter{rank}", _addrs(config, "arbiter")[rank]


class Endpoint(_Daemon):
    """`spillway-endpoint` ``id`` of the fabric file ``config``, as a handle: demand from
    Poisson arrivals at ``load`` or from a ``trace`` file (docs/arbiter.md); ``status()``
    while it runs, ``stop()`` for its summary (demand, sent, received, FCP counters)."""

    def __init__(self, config: str | Path, id: int, load: float = 0.3, seed: int = 1,
                 trace: str | Path | None = None, events: str | Path | None = None,
                 demand_for: float | None = None) -> None:
        cmd = [str(build() / "spillway-endpoint"), "--config", str(config), "--id", str(id),
               "--load", str(load), "--seed", str(seed)]
        if trace is not None:
            cmd += ["--trace", str(trace)]
        if events is not None:
            cmd += ["--events", str(events)]
        if demand_for is not None:
            cmd += ["--demand-for", f"{int(demand_for * 1e6)}us"]
        super().__init__(cmd)
        self.name, self.addr = f"endpoint{id}", _addrs(config, "endpoints")[id]


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


def _fabric(endpoints: int, arbiters: list[int], eps: list[int], timeslot_us: int,
            origin_ns: int, lead_ms: float, watchdog_ms: float, takeover_ms: float) -> str:
    arbs = ", ".join(f'"127.0.0.1:{p}"' for p in arbiters)
    ep_list = ",\n  ".join(f'"127.0.0.1:{p}"' for p in eps)
    return ("# Written by `spillway arbiter demo`.\n"
            f"[topology]\nkind = \"star\"\nhosts = {endpoints}\n\n"
            f"[arbiter]\naddrs = [{arbs}]\n"
            f"timeslot = \"{timeslot_us}us\"\nlead = \"{lead_ms * 1000:.0f}us\"\nbatch = 8\n"
            f"watchdog = \"{watchdog_ms * 1000:.0f}us\"\n"
            f"takeover = \"{takeover_ms * 1000:.0f}us\"\n"
            f"origin_unix_ns = {origin_ns}\n\n"
            f"[endpoints]\naddrs = [\n  {ep_list},\n]\n")


def write_config(path: Path, endpoints: int, timeslot_us: int, origin_ns: int,
                 lead_ms: float, watchdog_ms: float, takeover_ms: float,
                 proxy: Path | None = None, arbiters: int = 2) -> dict[str, list[str]]:
    """The demo's fabric file(s) on free loopback ports. With ``proxy`` (the endpoints'
    file), FCP goes through `spillway-fcp-proxy`: ``path`` (the arbiters') names the
    proxy's sockets as the endpoints, ``proxy`` names its sockets as the arbiters. The
    real addresses: ``{"arbiters": [...], "endpoints": [...]}``."""
    n_proxy = endpoints + arbiters if proxy else 0
    ports = _free_ports(arbiters + endpoints + n_proxy)
    arbs, rest = ports[:arbiters], ports[arbiters:]
    eps, fake = rest[:endpoints], rest[endpoints:]
    timing = (timeslot_us, origin_ns, lead_ms, watchdog_ms, takeover_ms)
    if proxy is None:
        path.write_text(_fabric(endpoints, arbs, eps, *timing))
    else:
        path.write_text(_fabric(endpoints, arbs, fake[arbiters:], *timing))
        proxy.write_text(_fabric(endpoints, fake[:arbiters], eps, *timing))
    return {"arbiters": [f"127.0.0.1:{p}" for p in arbs],
            "endpoints": [f"127.0.0.1:{p}" for p in eps]}


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


def bench_service(endpoints: int = 64, timeslot_us: int = 100, load: float = 0.5,
                  seconds: float = 4.0) -> dict[str, Any]:
    """One arbiter (`spillway-arbiterd`) loaded by ``endpoints`` FCP endpoints
    (`spillway-fcp-load`, one process) on loopback for ``seconds`` of Poisson demand: the
    timeslots it allocated per second, and the share of batches it allocated on time
    (within one batch of when they were due: it kept up with real time)."""
    bin_dir = build()
    with tempfile.TemporaryDirectory(prefix="spillway-arbiter-bench-") as tmp:
        cfg = Path(tmp) / "fabric.toml"
        # Timeslot 0 now: the arbiter allocates from `lead` ahead of its start.
        write_config(cfg, endpoints, timeslot_us, time.time_ns(), 3.0, 2.0, 20.0, arbiters=1)
        with Arbiter(cfg, 0) as arb:
            time.sleep(0.2)
            load_run = subprocess.run(
                [str(bin_dir / "spillway-fcp-load"), "--config", str(cfg), "--load", str(load),
                 "--duration", f"{int((seconds + 0.5) * 1000)}ms",
                 "--demand-for", f"{int(seconds * 1000)}ms"],
                capture_output=True, text=True, timeout=seconds + 60)
            st = arb.stop()
    gen = _last_json(load_run.stdout)
    if load_run.returncode != 0 or gen is None:
        raise UsageError(f"bench arbiter_service: the run failed: {load_run.stderr.strip()}")
    return {
        "endpoints": endpoints,
        "timeslot_us": timeslot_us,
        "load": load,
        "seconds": seconds,
        "demand_slots_per_s": round(gen["demand_slots"] / seconds),
        "allocated_slots_per_s": round(st["granted_slots"] / seconds),
        "served_share": round(gen["granted_slots"] / max(1, gen["demand_slots"]), 4),
        "keep_up_share": st["keep_up_share"],
        "batches": st["batches"],
        "batches_late": st["batches_late"],
        "slots_skipped": st["slots_skipped"],
        "alloc_lag_p99_us_le": st["alloc_lag"]["p99_us_le"],
        "alloc_lag_max_us": st["alloc_lag"]["max_us"],
        "fcp_datagrams_per_s": round((gen["fcp_sent"] + gen["fcp_received"]) / seconds),
        "conflicts": gen["conflicts"],
    }
