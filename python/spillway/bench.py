"""`spillway bench`: the standard benchmarks, each in its own process so that its peak
resident memory is its own."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from spillway import _core
from spillway.errors import UsageError


def run_benchmarks(names: list[str] | None = None, progress: bool = True,
                   repeat: int = 1, threads: int | str | None = None) -> list[dict[str, Any]]:
    """Each benchmark ``repeat`` times, each run in a fresh process. With ``threads``, a
    parallel run: the fabric cut into its pods or racks (``run.partitions = "auto"``) and
    run on that many threads (``run.threads``), whose result is the same for every
    thread count; rows then carry ``cpu_s`` beside ``wall_s``. The row reported is
    the median run by packet-hops/s (the lower middle one for an even count); with
    ``repeat`` > 1 it also holds ``runs`` and the min-max ``*_range`` of both rates, since
    on a shared machine identical runs differ by tens of percent."""
    if repeat < 1:
        raise UsageError(f"bench: --repeat must be at least 1, not {repeat}")
    known = dict(_core.bench_names())
    names = names or list(known)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(f"bench: unknown benchmark(s) {unknown}; known: {list(known)}")
    results = []
    for n in names:
        if progress:
            print(f"{n}: {known[n]} ...", file=sys.stderr, flush=True)
        runs = []
        for i in range(repeat):
            sets = ([] if threads is None
                    else ["run.partitions=auto", f"run.threads={threads}"])
            out = subprocess.run([sys.executable, "-m", "spillway.bench", n, *sets],
                                 check=True, capture_output=True, text=True).stdout
            r = json.loads(out)
            runs.append(r)
            if progress:
                run = f"run {i + 1}/{repeat}: " if repeat > 1 else ""
                print(f"  {run}{r['events']:,} events, {r['packet_hops']:,} packet-hops in "
                      f"{r['wall_s']:.2f} s: {r['events_per_s'] / 1e6:.2f} M events/s, "
                      f"{r['packet_hops_per_s'] / 1e6:.2f} M packet-hops/s, "
                      f"{r['cpu_s']:.2f} s CPU, {r['partitions']} partitions on "
                      f"{r['threads']} threads, "
                      f"peak RSS {r['peak_rss_mb']:.0f} MB", file=sys.stderr, flush=True)
        by_rate = sorted(runs, key=lambda r: r["packet_hops_per_s"])
        row = dict(by_rate[(len(by_rate) - 1) // 2])
        if repeat > 1:
            row["runs"] = repeat
            for k in ("events_per_s", "packet_hops_per_s"):
                row[f"{k}_range"] = [min(r[k] for r in runs), max(r[k] for r in runs)]
            if progress:
                lo, hi = row["packet_hops_per_s_range"]
                print(f"  median {row['packet_hops_per_s'] / 1e6:.2f} M packet-hops/s "
                      f"(range {lo / 1e6:.2f}-{hi / 1e6:.2f}), "
                      f"{row['events_per_s'] / 1e6:.2f} M events/s", file=sys.stderr,
                      flush=True)
        results.append(row)
    return results


def run_arbiter_bench(json_out: bool = False, quick: bool = False) -> int:
    """The Fastpass arbiter benchmark (crates/spillway-arbiter, `arbiter-bench`): built in
    release mode by cargo from the source tree, output passed through."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    if not (root / "crates" / "spillway-arbiter").exists():
        raise UsageError("bench arbiter: needs the source tree (crates/spillway-arbiter)")
    cmd = ["cargo", "run", "--release", "-q", "-p", "spillway-arbiter", "--bin", "arbiter-bench",
           "--"] + (["--json"] if json_out else []) + (["--quick"] if quick else [])
    return subprocess.run(cmd, cwd=root).returncode


def run_arbiter_service_bench(json_out: bool = False, quick: bool = False) -> int:
    """The arbiter as a UDP service under load (issue 29): one `spillway-arbiterd` and 64
    FCP endpoints on loopback, at timeslots from the demo's 100 us down to where it stops
    keeping up. A table, or with ``json_out`` a JSON list of rows."""
    from spillway.arbiter import bench_service

    cases = [(100, 0.5)] if quick else [(100, 0.5), (100, 0.9), (50, 0.5), (20, 0.5)]
    rows = []
    for slot_us, load in cases:
        rows.append(bench_service(64, slot_us, load, 2.0 if quick else 4.0))
        if not json_out:
            r = rows[-1]
            if len(rows) == 1:
                print(f"{'endpoints':>9} {'slot us':>7} {'load':>5} {'demand/s':>10} "
                      f"{'alloc/s':>10} {'served':>7} {'keep-up':>8} {'lag p99 us':>10} "
                      f"{'FCP dgrams/s':>12} {'conflicts':>9}")
            print(f"{r['endpoints']:>9} {r['timeslot_us']:>7} {r['load']:>5} "
                  f"{r['demand_slots_per_s']:>10,} {r['allocated_slots_per_s']:>10,} "
                  f"{r['served_share']:>7.2%} {r['keep_up_share']:>8.2%} "
                  f"{r['alloc_lag_p99_us_le']:>10} {r['fcp_datagrams_per_s']:>12,} "
                  f"{r['conflicts']:>9}", flush=True)
    if json_out:
        print(json.dumps(rows, indent=2))
    return 0


def run_pfabric_queue_bench(json_out: bool = False, quick: bool = False) -> int:
    """The pFabric queue micro-benchmark (issue 27): wall time per op (an arrival at a full
    buffer, which evicts or is the victim; a dequeue; an arrival into the room) at queues of
    8 to 4096 packets, for the queue as it runs in both serve orders and for the linear
    queue it replaced. A table, or with ``json_out`` a JSON list of rows."""
    rows = [dict(r) for r in _core.bench_pfabric_queue(20_000 if quick else 1_000_000)]
    if json_out:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'form':<8} {'order':<9} {'packets':>8} {'ops':>10} {'evictions':>10} {'ns/op':>9}")
    for r in rows:
        print(f"{r['form']:<8} {r['order']:<9} {r['packets']:>8} {r['ops']:>10} "
              f"{r['evictions']:>10} {r['ns_per_op']:>9.1f}")
    return 0


def _worker(name: str, overrides: list[str]) -> None:
    import resource

    r = dict(_core.bench(name, overrides))
    # ru_maxrss is in KiB on Linux.
    r["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(r))


if __name__ == "__main__":
    _worker(sys.argv[1], sys.argv[2:])
