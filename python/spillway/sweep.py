"""Sweeps: a grid of scenarios, run in parallel, cached by the resolved scenario's hash.

A sweep file::

    base = "../examples/incast.toml"      # the base scenario (path relative to this file)
    seeds = [1, 2, 3]                     # or a count: seeds = 3  (-> 1, 2, 3)

    [set]                                 # overrides for every point
    "workload.rounds" = 5

    [grid]                                # cartesian product
    "workload.senders" = [4, 16, 64]
    "transport.rto_min" = ["10ms", "200ms"]

    [zip]                                 # lists of equal length, varied together
    "workload.senders" = [...]
    "workload.size" = [...]

    [schemes.tcp]                         # named bundles of overrides: the axis `scheme`
    "transport.init_cwnd" = 10

A grid or zip key `label.NAME` is an axis only: its values name the points (column
`NAME`) and are not passed to the scenario. Zip it beside a structured key (such as
`switch.routes`, whose values are lists of tables) to give each point a readable
coordinate; structured axis values are stored as their TOML text.

Layout of the output directory::

    DIR/sweep.json                 the plan: every point's axes, overrides and hash
    DIR/points/<hash>/             one finished point: the files of `spillway run`,
                                   point.json, and manifest.json (written last)
    DIR/failed/<hash>.json         one failed point: its axes and error message
    DIR/damaged/<hash>-<time>/     a point found damaged, moved aside for inspection
    DIR/catalog.duckdb             the index (see spillway.store), rebuilt after every run
    DIR/.sweep.lock                held (flock) by the sweep running into DIR

A point directory is written under a temporary name and renamed into place when it is
complete, so a killed sweep loses at most the points in flight and never leaves a
half-written point behind. A rerun skips every point whose directory is complete
(`spillway.store.read_point`); a damaged one is moved to DIR/damaged/, reported and run
again. One sweep at a time runs into a directory; worker processes end with the sweep.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import functools
import hashlib
import itertools
import json
import os
import shutil
import signal
import sys
import threading
import time
import tomllib
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from spillway import _core
from spillway.errors import ScenarioError, UsageError
from spillway.run import read_text, write_outputs
from spillway.store import DamagedPoint, build_catalog_rows, read_point, write_manifest


def toml_literal(v: Any) -> str:
    """A Python value as a TOML literal, for `key=value` overrides."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(toml_literal(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {toml_literal(x)}" for k, x in v.items()) + "}"
    raise TypeError(f"cannot write {v!r} as a TOML value")


@dataclass
class Point:
    """One scenario of a sweep."""

    axes: dict[str, Any]
    overrides: list[str]
    hash: str = ""
    error: str | None = None


@dataclass
class Sweep:
    """A base scenario and the points to run."""

    base_text: str
    base_dir: str | None
    points: list[Point] = field(default_factory=list)
    axis_names: list[str] = field(default_factory=list)


def _short_names(keys: Iterable[str]) -> dict[str, str]:
    """Column names for axes: the last path component, unless two axes share it."""
    keys = list(keys)
    last = [k.rsplit(".", 1)[-1] for k in keys]
    return {k: (s if last.count(s) == 1 else k.replace(".", "_")) for k, s in zip(keys, last,
                                                                                strict=True)}


def build_sweep(spec: dict[str, Any], base_dir: str | None = None) -> Sweep:
    """Expands a sweep specification (the parsed sweep file) into points."""
    known = {"base", "base_text", "seeds", "set", "grid", "zip", "schemes"}
    unknown = set(spec) - known
    if unknown:
        raise ScenarioError("sweep", ", ".join(sorted(unknown)),
                            f"unknown sweep key(s); known: {', '.join(sorted(known))}")
    for key in ("base", "base_text"):
        if key in spec and not isinstance(spec[key], str):
            raise ScenarioError(f"sweep.{key}", str(spec[key]),
                                "expected a string (the base scenario's path, relative to "
                                "the sweep file)" if key == "base" else "expected a string")
    if "base_text" in spec:
        base_text, scen_dir = spec["base_text"], base_dir
    elif "base" in spec:
        p = Path(base_dir or ".") / spec["base"]
        if not p.is_file():
            raise ScenarioError("sweep.base", spec["base"], f"file not found: {p}")
        base_text, scen_dir = read_text(p, "sweep.base"), str(p.resolve().parent)
    else:
        base_text, scen_dir = "", base_dir
    seeds = spec.get("seeds", [1])
    if isinstance(seeds, int) and not isinstance(seeds, bool):
        if seeds < 1:
            raise ScenarioError("sweep.seeds", str(seeds), "a count of seeds must be at least 1")
        seeds = list(range(1, seeds + 1))
    if not (isinstance(seeds, list) and seeds
            and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in seeds)):
        raise ScenarioError("sweep.seeds", str(seeds),
                            "expected a count (3 -> seeds 1, 2, 3) or a non-empty list of "
                            "non-negative integers")
    for table in ("set", "grid", "zip", "schemes"):
        if not isinstance(spec.get(table, {}), dict):
            raise ScenarioError(f"sweep.{table}", str(spec[table]), "expected a table")
    for table in ("grid", "zip"):
        for k, v in spec.get(table, {}).items():
            if not (isinstance(v, list) and v):
                raise ScenarioError(f"sweep.{table}.{k}", str(v),
                                    "expected a non-empty list of values")
    for name, bundle in spec.get("schemes", {}).items():
        if not isinstance(bundle, dict):
            raise ScenarioError(f"sweep.schemes.{name}", str(bundle),
                                "expected a table of overrides")
    # `seeds` sets run.seed last in every point: any other value of it would be lost.
    for table, overrides in [(t, spec.get(t, {})) for t in ("set", "grid", "zip")] + [
            (f"schemes.{n}", b) for n, b in spec.get("schemes", {}).items()]:
        if "run.seed" in overrides:
            raise ScenarioError(f"sweep.{table}.run.seed", str(overrides["run.seed"]),
                                "a sweep's seeds are given by `seeds` (a count, or a list "
                                "such as seeds = [1, 7, 42]), which would override this")
    fixed = [f"{k}={toml_literal(v)}" for k, v in spec.get("set", {}).items()]
    grid = spec.get("grid", {})
    zipped = spec.get("zip", {})
    lengths = {len(v) for v in zipped.values()}
    if len(lengths) > 1:
        raise ScenarioError("sweep.zip", str(sorted(lengths)), "zip lists must have equal lengths")
    schemes = spec.get("schemes", {})
    names = _short_names(list(grid) + list(zipped))
    axis_names = (["scheme"] if schemes else []) + list(names.values()) + ["seed"]
    zip_rows = list(zip(*zipped.values(), strict=True)) if zipped else [()]
    scheme_items = list(schemes.items()) or [(None, {})]
    sweep = Sweep(base_text=base_text, base_dir=scen_dir, axis_names=axis_names)
    for (scheme, bundle), combo, zrow, seed in itertools.product(
            scheme_items, itertools.product(*grid.values()), zip_rows, seeds):
        axes: dict[str, Any] = {}
        over = list(fixed)
        if scheme is not None:
            axes["scheme"] = scheme
            over += [f"{k}={toml_literal(v)}" for k, v in bundle.items()]
        for k, v in [*zip(grid, combo, strict=True), *zip(zipped, zrow, strict=True)]:
            axes[names[k]] = toml_literal(v) if isinstance(v, list | tuple | dict) else v
            if not k.startswith("label."):
                over.append(f"{k}={toml_literal(v)}")
        axes["seed"] = seed
        over.append(f"run.seed={seed}")
        sweep.points.append(Point(axes=axes, overrides=over))
    return sweep


def load_sweep(path: str | os.PathLike[str]) -> Sweep:
    """Reads and expands a sweep file."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"sweep file not found: {p}")
    try:
        spec = tomllib.loads(read_text(p, "(sweep file)"))
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError("(sweep file)", "", f"not valid TOML: {e}") from e
    return build_sweep(spec, str(p.resolve().parent))


@functools.cache
def code_id() -> str:
    """Digest of the code that produces a point's files: the compiled simulator and the
    module that writes its outputs. A rebuilt simulator gives new point hashes, so a sweep
    never serves results of older code from its cache."""
    h = hashlib.sha256()
    for f in (_core.__file__, Path(__file__).with_name("run.py")):
        h.update(Path(f).read_bytes())
    return h.hexdigest()


def plan(sweep: Sweep) -> None:
    """Resolves every point: its hash is that of the resolved scenario (so key order,
    spelling of units and defaults do not matter) and of the code (`code_id`). Invalid
    points keep their error."""
    for pt in sweep.points:
        try:
            resolved = _core.validate(sweep.base_text, pt.overrides, sweep.base_dir)
            pt.hash = hashlib.sha256((code_id() + resolved).encode()).hexdigest()[:16]
        except ScenarioError as e:
            pt.error = str(e)
            raw = json.dumps([sweep.base_text, pt.overrides]).encode()
            pt.hash = "invalid-" + hashlib.sha256(raw).hexdigest()[:8]


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    tmp.write_text(text)
    os.replace(tmp, path)


def _remove_orphans(points: Path) -> None:
    """Deletes temporary point directories whose writer process no longer exists (a
    killed sweep); those of live processes (a concurrent sweep) are left alone."""
    for d in points.glob(".tmp-*"):
        try:
            pid = int(d.name.split("-")[2])
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(d, ignore_errors=True)
        except (ValueError, IndexError, PermissionError):
            continue


def run_point(out: str, base_text: str, base_dir: str | None, overrides: list[str],
              point_hash: str, axes: dict[str, Any],
              threads: int | None = None) -> dict[str, Any]:
    """Runs one point into ``out/points/<hash>`` (atomically); never raises an Exception.

    ``threads``: this point's share of the cores, given to ``run.threads`` where the
    point leaves it ``auto`` (a point's result is the same for any thread count, so the
    cache holds whatever the share was)."""
    root = Path(out)
    final = root / "points" / point_hash
    failed = root / "failed" / f"{point_hash}.json"
    if _is_complete(final):
        return {"hash": point_hash, "status": "cached"}
    tmp = root / "points" / f".tmp-{point_hash}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    t0 = time.perf_counter()
    try:
        own = _threads_of(_base_threads(base_text), overrides)
        share = [f"run.threads={threads}"] if threads is not None and own is None else []
        sim = _core.Simulation(base_text, overrides + share, base_dir)
        summary = write_outputs(sim, tmp, progress=False)
        (tmp / "point.json").write_text(json.dumps(
            {"hash": point_hash, "axes": axes, "overrides": overrides}, indent=2) + "\n")
        write_manifest(tmp)
        _move_into_place(tmp, final, root)
        failed.unlink(missing_ok=True)
        return {"hash": point_hash, "status": "done", "wall_s": summary["wall_s"]}
    except Exception as e:  # a failing point must not stop the sweep
        msg = f"{type(e).__name__}: {e}"
        failed.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(failed, json.dumps({"hash": point_hash, "axes": axes,
                                          "overrides": overrides, "error": msg,
                                          "wall_s": time.perf_counter() - t0}, indent=2))
        return {"hash": point_hash, "status": "failed", "error": msg}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # gone already unless the run stopped


def _base_threads(base_text: str) -> str | None:
    """``run.threads`` as the base scenario's [run] sets it, as text (None: unset)."""
    try:
        v = tomllib.loads(base_text).get("run", {}).get("threads")
    except tomllib.TOMLDecodeError:
        return None
    return None if v is None else str(v)


def _threads_of(base: str | None, overrides: list[str]) -> str | None:
    """``run.threads`` as a point sets it (its last axis override, else the base's ``base``
    value), as text; None: the point leaves it to the default."""
    for o in reversed(overrides):
        k, _, v = o.partition("=")
        if k.strip() == "run.threads":
            return v.strip()
    return base


def thread_share(workers: int, cores: int | None = None) -> int:
    """Threads each of ``workers`` concurrent points may use so that workers x threads
    stays within the cores."""
    cores = cores or os.cpu_count() or 1
    return max(1, cores // max(1, workers))


def _is_complete(point: Path) -> bool:
    try:
        read_point(point)
        return True
    except DamagedPoint:
        return False


def _move_into_place(tmp: Path, final: Path, root: Path) -> None:
    """Renames a finished point directory to its final name. If a directory is there
    already, a complete one (another sweep's, or a killed sweep's orphan worker's) is
    kept; a damaged one is moved aside first."""
    for _ in range(3):
        try:
            os.rename(tmp, final)
            return
        except OSError:
            if _is_complete(final):
                return
            _move_aside(final, root)
    raise OSError(f"could not move the finished point into {final}")


def _move_aside(point: Path, root: Path) -> Path | None:
    """Moves a damaged point directory to ``root/damaged/<hash>-<time>``; returns where
    (None if it was no longer there)."""
    dest = root / "damaged" / f"{point.name}-{time.strftime('%Y%m%dT%H%M%S')}"
    dest.parent.mkdir(parents=True, exist_ok=True)
    while dest.exists():
        dest = dest.with_name(f"{dest.name}-{uuid.uuid4().hex[:4]}")
    try:
        os.rename(point, dest)
    except FileNotFoundError:
        return None
    return dest


@dataclass
class SweepResult:
    out: Path
    total: int
    ran: int
    skipped: int
    failed: int
    wall_s: float
    # Points found damaged, recomputed: hash -> what was wrong.
    damaged: dict[str, str] = field(default_factory=dict)
    # The catalog's `points` table as this run wrote it.
    points: pd.DataFrame | None = None


class _SweepProgress:
    def __init__(self, total: int, enabled: bool) -> None:
        self.total, self.enabled = total, enabled
        self.done = self.failed = 0
        self.t0 = time.perf_counter()

    def update(self, status: str) -> None:
        self.done += 1
        self.failed += status == "failed"
        if not self.enabled:
            return
        el = time.perf_counter() - self.t0
        eta = el / self.done * (self.total - self.done)
        n = int(30 * self.done / max(self.total, 1))
        sys.stderr.write(f"\rsweep [{'#' * n}{'.' * (30 - n)}] {self.done}/{self.total} points"
                         f", {self.failed} failed, {el:.0f}s elapsed, ETA {eta:.0f}s ")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled and self.total:
            sys.stderr.write("\n")


def run_sweep(sweep: Sweep, out: str | os.PathLike[str], workers: int | None = None,
              backend: str = "local", scheduler: str | None = None,
              progress: bool | None = None, quiet: bool = False) -> SweepResult:
    """Runs every point not already finished in ``out``; rebuilds the catalog. Refuses
    (UsageError) while another sweep runs into ``out``. A damaged point (see
    `spillway.store.read_point`) is moved to ``out/damaged/``, reported on stderr (one
    line each, even when ``quiet``) and run again."""
    if str(out) == "":
        raise UsageError("--out is empty: name the sweep's directory")
    if workers is not None and workers < 1:
        raise UsageError(f"--workers {workers}: expected at least 1")
    out = Path(out)
    (out / "points").mkdir(parents=True, exist_ok=True)
    (out / "failed").mkdir(parents=True, exist_ok=True)
    with _lock(out):
        return _run_locked(sweep, out, workers, backend, scheduler, progress, quiet)


@contextlib.contextmanager
def _lock(out: Path) -> Iterator[None]:
    """Holds ``out/.sweep.lock`` (flock: the kernel releases it when the holder dies, so a
    killed sweep leaves no stale lock) or refuses: two sweeps with different plans would
    overwrite each other's sweep.json and catalog."""
    fd = os.open(out / ".sweep.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            raise UsageError(f"another sweep (pid {holder}) is running into {out}: wait for "
                             "it to finish, or use another --out") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)


def _explicit_threads(sweep: Sweep) -> int:
    """The largest whole ``run.threads`` the sweep's points set (0: none)."""
    base = _base_threads(sweep.base_text)
    found = (_threads_of(base, p.overrides) for p in sweep.points)
    return max((int(x) for x in found if x is not None and x.isdigit()), default=0)


def _run_locked(sweep: Sweep, out: Path, workers: int | None, backend: str,
                scheduler: str | None, progress: bool | None, quiet: bool) -> SweepResult:
    _remove_orphans(out / "points")
    plan(sweep)
    _write_atomic(out / "sweep.json", json.dumps({
        "axes": sweep.axis_names,
        "points": [{"hash": p.hash, "axes": p.axes, "overrides": p.overrides}
                   for p in sweep.points]}, indent=2))
    seen: set[str] = set()
    todo, cached, invalid = [], 0, []
    damaged: dict[str, str] = {}
    for p in sweep.points:
        if p.hash in seen:
            continue  # two axis combinations that resolve to the same scenario
        seen.add(p.hash)
        point = out / "points" / p.hash
        if p.error is not None:
            invalid.append(p)
            continue
        try:
            read_point(point)
            cached += 1
            continue
        except DamagedPoint as e:
            if point.exists():
                damaged[p.hash] = str(e)
                dest = _move_aside(point, out)
                print(f"damaged point {p.hash}: {e}; moved to {dest}, running it again",
                      file=sys.stderr)
        todo.append(p)
    for p in invalid:
        _write_atomic(out / "failed" / f"{p.hash}.json", json.dumps(
            {"hash": p.hash, "axes": p.axes, "overrides": p.overrides, "error": p.error},
            indent=2))
    if not quiet:
        print(f"{len(seen)} points: {cached} already done (skipped), {len(todo)} to run"
              + (f" ({len(damaged)} of them damaged)" if damaged else "")
              + (f", {len(invalid)} invalid" if invalid else ""), file=sys.stderr)
    if progress is None:
        progress = sys.stderr.isatty() and not quiet
    bar = _SweepProgress(len(todo), progress)
    t0 = time.perf_counter()
    # Concurrent points share the cores: W workers x T threads never more than them.
    w = min(workers or os.cpu_count() or 1, max(1, len(todo)))
    share = thread_share(w) if backend == "local" else 1
    explicit = _explicit_threads(sweep)
    if backend == "local" and explicit and w * explicit > (os.cpu_count() or 1):
        print(f"warning: {w} workers x run.threads = {explicit} is more threads than the "
              f"{os.cpu_count()} cores: the points will slow each other down (results are "
              "the same for any thread count; lower --workers or run.threads)",
              file=sys.stderr)
    args = [(str(out), sweep.base_text, sweep.base_dir, p.overrides, p.hash, p.axes, share)
            for p in todo]
    failed = len(invalid)
    try:
        with contextlib.closing(_execute(args, workers, backend, scheduler)) as results:
            for r in results:
                bar.update(r["status"])
                failed += r["status"] == "failed"
    finally:
        bar.close()
        _remove_orphans(out / "points")  # those of workers stopped by Ctrl-C
        _, points = build_catalog_rows(out)
    res = SweepResult(out=out, total=len(seen), ran=len(todo), skipped=cached, failed=failed,
                      wall_s=time.perf_counter() - t0, damaged=damaged, points=points)
    if not quiet:
        print(f"ran {res.ran}, skipped {res.skipped}, failed {res.failed} "
              f"in {res.wall_s:.1f} s; catalog: {out / 'catalog.duckdb'}", file=sys.stderr)
    return res


def _worker_init(parent: int) -> None:
    """Runs in each local worker process: it ends when the sweep does, however the sweep
    ends (a SIGKILL included), and leaves Ctrl-C to the sweep, which stops it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # 1: PDEATHSIG
    if os.getppid() != parent:  # the sweep died before prctl took hold
        os._exit(1)

    def watch() -> None:  # elsewhere, and as a fallback: a parent-pid watchdog
        while os.getppid() == parent:
            time.sleep(1)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="spillway-parent-watch").start()


def _execute(args: list[tuple], workers: int | None, backend: str,
             scheduler: str | None) -> Iterable[dict[str, Any]]:
    if not args:
        return
    if backend == "local":
        import concurrent.futures as cf
        import multiprocessing as mp

        n = workers or os.cpu_count() or 1
        if n == 1:
            for a in args:
                yield run_point(*a)
            return
        ex = cf.ProcessPoolExecutor(max_workers=n, mp_context=mp.get_context("spawn"),
                                    initializer=_worker_init, initargs=(os.getpid(),))
        try:
            futures = [ex.submit(run_point, *a) for a in args]
            for f in cf.as_completed(futures):
                yield f.result()
        except BaseException:
            # Ctrl-C, or the caller stopped early: the points in flight are abandoned
            # (run_sweep removes their temporary directories).
            for proc in list((getattr(ex, "_processes", None) or {}).values()):
                proc.kill()
            raise
        finally:
            ex.shutdown(wait=True, cancel_futures=True)
    elif backend == "dask":
        try:
            from dask.distributed import Client, LocalCluster, as_completed
        except ImportError as e:
            raise UsageError(
                "the dask backend needs the extra: pip install 'spillway[dask]'") from e
        if scheduler:
            client = Client(scheduler)
            cluster = None
        else:
            cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1,
                                   threads_per_worker=1, processes=True,
                                   dashboard_address=None)
            client = Client(cluster)
        try:
            futures = [client.submit(run_point, *a, pure=False) for a in args]
            for f in as_completed(futures):
                yield f.result()
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    else:
        raise UsageError(f"unknown backend {backend!r}: use local or dask")
