"""The `spillway` command line. Its commands, options, outputs and exit statuses are an
interface users and tests depend on: change them deliberately.

    spillway run SCENARIO.toml --out DIR [--set key.path=value ...] [--threads N]
    spillway validate SCENARIO.toml [--set ...]
    spillway sweep SWEEP.toml --out DIR [--workers N] [--backend local|dask] [--scheduler ADDR]
    spillway query DIR "SQL"
    spillway reproduce NAME [--quick] [--figure ID ...] [--seeds-from K] --out DIR
    spillway compare --out DIR [--quick] [--schemes A,B] [--workloads W,..] [--fabrics F,..]
                     [--workers N] [--backend local|dask] [--scheduler ADDR]
    spillway bench [--json] [--repeat N] [--threads N] [NAME ...]
    spillway bench arbiter [--json] [--quick]
    spillway bench arbiter_service [--json] [--quick]
    spillway bench pfabric_queue [--json] [--quick]
    spillway reference [--out FILE | --outputs docs/outputs.md]
    spillway import hpcc CONFIG --out SCENARIO.toml
    spillway arbiter serve CONFIG [--rank R] [--duration T] [--grant-log FILE] [--busy-poll]
    spillway arbiter demo --endpoints N --duration T [--kill-primary-at T] [--json]
                          [--pause-primary-at T] [--drop P] [--dup P] [--corrupt P] [--flood N]

Exit status: 0 on success, 2 for a scenario or usage error (a one-line message that names
the key or the option), 1 when a sweep has failed points, 130 when interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import NoReturn

from spillway.errors import ScenarioError, UsageError


def _fmt_ps(v: float | None) -> str:
    if v is None:
        return "-"
    for unit, scale in (("s", 1e12), ("ms", 1e9), ("us", 1e6)):
        if v >= scale:
            return f"{v / scale:.3f} {unit}"
    return f"{v:.0f} ps"


def _file(name: str, what: str) -> Path:
    """A file argument: always a path (never TOML text), and not an empty name."""
    if name == "":
        raise UsageError(f"the {what} file name is empty")
    return Path(name)


def _overrides(values: list[str]) -> list[str]:
    for v in values:
        try:
            v.encode()
        except UnicodeEncodeError:
            raise UsageError(f"--set {v!r}: not UTF-8 text") from None
    return values


def cmd_run(args: argparse.Namespace) -> int:
    from spillway.run import OUTPUT_FILES, run

    res = run(_file(args.scenario, "scenario"), args.out, _overrides(args.set),
              progress=None if not args.quiet else False, threads=args.threads)
    s = res.summary
    print(f"wrote {args.out}/"
          + ", ".join(f for f in OUTPUT_FILES if (res.out / f).exists()))
    print(f"  flows: {s['flows_finished']} finished, {s['flows_unfinished']} unfinished "
          f"(stopped: {s['stop_reason']}, simulated {_fmt_ps(s['sim_time_ps'])})")
    if "stop_detail" in s:
        print(f"  {s['stop_detail']}")
    f = s["fct_ps"]
    print(f"  FCT p50 {_fmt_ps(f['p50'])}  p99 {_fmt_ps(f['p99'])}  p99.9 {_fmt_ps(f['p99.9'])}")
    if "qct_ps" in s:
        q = s["qct_ps"]
        print(f"  QCT p50 {_fmt_ps(q['p50'])}  p99 {_fmt_ps(q['p99'])}"
              + (f"  ({s['queries_unfinished']} queries unfinished)"
                 if s["queries_unfinished"] else ""))
    print(f"  drops {s['drops']}, retransmits {s['retransmits']}, timeouts {s['timeouts']}")
    if s.get("ingress_drops") and s.get("pause_frames"):
        print(f"  warning: {s['ingress_drops']} packets overflowed switch inputs despite flow "
              "control (switch.pfc_xoff leaves too little headroom: ports.parquet "
              "dropped_ingress says where)")
    print(f"  {s['events']:,} events in {s['sim_wall_s']:.2f} s of event loop "
          f"({s['wall_s']:.2f} s with output; {s['events_per_s'] / 1e6:.2f} M events/s, "
          f"{s['packet_hops_per_s'] / 1e6:.2f} M packet-hops/s)")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from spillway.run import validate

    resolved = validate(_file(args.scenario, "scenario"), _overrides(args.set))
    if args.print:
        print(resolved, end="")
    else:
        print(f"{args.scenario}: valid")
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from spillway.sweep import load_sweep, run_sweep

    sweep = load_sweep(_file(args.sweep, "sweep"))
    res = run_sweep(sweep, args.out, workers=args.workers, backend=args.backend,
                    scheduler=args.scheduler)
    # The table of this run's plan, as it wrote the catalog (not re-read from DIR).
    pts = res.points
    show = ["hash"] + [c for c in sweep.axis_names if c in pts.columns] + [
        c for c in ("status", "flows_finished", "drops", "timeouts", "fct_p99_ps", "qct_p99_ps")
        if c in pts.columns]
    print(pts[show].to_string(index=False))
    failed = pts[pts.status == "failed"]
    for _, row in failed.iterrows():
        print(f"failed {row.hash}: {row.error}", file=sys.stderr)
    if len(failed):
        # The others are done and cached; a script should still see that some are not.
        print(f"{len(failed)} of {len(pts)} points failed", file=sys.stderr)
        return 1
    return 0


def cmd_query(args: argparse.Namespace) -> int:
    import duckdb

    from spillway.store import VIEWS, Results

    with Results(args.dir) as r:
        for h, why in r.damaged.items():
            print(f"spillway: point {h} is damaged ({why}): left out of the views until "
                  "`spillway sweep` runs it again", file=sys.stderr)
        try:
            df = r.sql(args.sql)
        except duckdb.Error as e:
            missing = [v for v in VIEWS if isinstance(e, duckdb.CatalogException)
                       and f"name {v} does not exist" in str(e)]
            if missing:
                raise UsageError(f"{args.dir} has no `{missing[0]}`: none of its done points "
                                 f"wrote {missing[0]}.parquet") from None
            raise UsageError(f"query failed: {_one_line(str(e))}") from None
    print(df.to_string(index=False) if len(df) else "(no rows)")
    return 0


def _one_line(message: str) -> str:
    """DuckDB's message without the quoted query and caret lines it appends."""
    lines = []
    for line in message.splitlines():
        if line.startswith("LINE "):
            break
        if line.strip():
            lines.append(line.strip())
    return " ".join(lines)


def cmd_reproduce(args: argparse.Namespace) -> int:
    from spillway.reproduce import reproduce

    report = reproduce(args.name, args.out, quick=args.quick, workers=args.workers,
                       only=args.figure or None, seeds_from=args.seeds_from)
    print(f"report: {report}")
    return 0


def cmd_arbiter(args: argparse.Namespace) -> int:
    from spillway import arbiter

    if args.arbiter_command == "serve":
        return arbiter.serve(args.config, args.rank, args.duration, args.grant_log,
                             args.busy_poll)
    from spillway.arbiter_demo import DemoOptions, demo

    return demo(DemoOptions(
        endpoints=args.endpoints, duration=args.duration, kill_primary_at=args.kill_primary_at,
        pause_primary_at=args.pause_primary_at, pause_for=args.pause_for, drop=args.drop,
        dup=args.dup, corrupt=args.corrupt, flood=args.flood, load=args.load,
        timeslot_us=args.timeslot_us, seed=args.seed, keep=args.keep), args.json)


def _names(values: list[str] | None) -> list[str] | None:
    """Names given as repeated options and/or comma-separated lists."""
    if not values:
        return None
    return [n.strip() for v in values for n in v.split(",") if n.strip()]


def cmd_compare(args: argparse.Namespace) -> int:
    from spillway.reproduce.showdown import report

    path = report(args.out, quick=args.quick, workers=args.workers,
                  only=_names(args.workloads), schemes=_names(args.schemes),
                  fabrics=_names(args.fabrics), backend=args.backend, scheduler=args.scheduler)
    print(f"report: {path}")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from spillway.bench import (
        run_arbiter_bench,
        run_arbiter_service_bench,
        run_benchmarks,
        run_pfabric_queue_bench,
    )

    if args.names == ["arbiter"]:
        return run_arbiter_bench(json_out=args.json, quick=args.quick)
    if args.names == ["arbiter_service"]:
        return run_arbiter_service_bench(json_out=args.json, quick=args.quick)
    if args.names == ["pfabric_queue"]:
        return run_pfabric_queue_bench(json_out=args.json, quick=args.quick)
    for special in ("arbiter", "arbiter_service", "pfabric_queue"):
        if special in args.names:
            raise UsageError(f"bench: run `spillway bench {special}` on its own "
                             "(it prints its own table, the engine benchmarks a list)")
    results = run_benchmarks(args.names or None, progress=not args.json, repeat=args.repeat,
                             threads=args.threads)
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    """Writes the scenario, then says what was mapped and what could not be honoured."""
    from spillway import hpcc

    config, out = Path(args.config), Path(args.out)
    try:
        imp = hpcc.import_config(config, out)
    except OSError as e:
        raise UsageError(f"{args.config}: {e.strerror or e}") from None
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(imp.toml(config))
    print(f"wrote {out}: {len(imp.mapped)} keys mapped, {len(imp.not_honoured)} not honoured")
    for key, value, to in imp.mapped:
        print(f"  mapped        {key} {value}  ->  {to}")
    for key, value, why in imp.not_honoured:
        print(f"  not honoured  {key} {value}: {why}")
    return 0


def cmd_reference(args: argparse.Namespace) -> int:
    from spillway import reference

    if args.outputs:
        # Rewrite the generated tables of docs/outputs.md in place.
        path = Path(args.outputs)
        try:
            text = reference.fill_outputs(path.read_text())
        except (OSError, ValueError) as e:
            raise UsageError(f"--outputs {args.outputs}: {e}") from None
        path.write_text(text)
        return 0
    text = reference.keys()
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    else:
        print(text, end="")
    return 0


class _Parser(argparse.ArgumentParser):
    """Usage errors on one line (argparse prints the whole usage first), exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _positive(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, not {n}")
    return n


def _threads(value: str) -> int | str:
    """`--threads`: a whole number of at least 1, or `auto`."""
    if value == "auto":
        return value
    return _positive(value)


def _seconds(value: str) -> float:
    """A time option in seconds: a plain number is seconds, anything else takes the
    scenario files' time syntax (`3s`, `1500ms`, `200us`)."""
    try:
        seconds = float(value)
    except ValueError:
        from spillway import _core

        try:
            return _core.parse_time(value) / 1e12
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    if not math.isfinite(seconds):
        raise argparse.ArgumentTypeError(f"{value!r} is not a time")
    return seconds


def _time_text(value: str) -> str:
    """A time option passed on to a daemon: checked here, handed on exactly."""
    _seconds(value)
    return value


DESCRIPTION = ("Spillway: a fast, deterministic packet-level simulator for datacenter "
               "transports and switches. Run a scenario, sweep a grid of them, query the "
               "results, reproduce a paper's evaluation or compare every scheme head to head.")
EPILOG = ("Exit status: 0 on success, 2 for a scenario or usage error (a one-line message that "
          "names the key or the option), 1 when a sweep has failed points, 130 when "
          "interrupted. Every command's options: spillway COMMAND --help. Times take the "
          "scenario syntax (3s, 1500ms, 200us); a plain number is seconds.")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="spillway", description=DESCRIPTION, epilog=EPILOG)
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="run one scenario")
    r.add_argument("scenario")
    r.add_argument("--out", required=True, help="output directory")
    r.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario key, e.g. --set workload.senders=64")
    r.add_argument("--quiet", action="store_true", help="no progress line")
    r.add_argument("--threads", type=_threads, default=None, metavar="N",
                   help="threads for a parallel run's logical processes (run.threads: an "
                        "integer or auto); the outputs are the same for every N")
    r.set_defaults(func=cmd_run)

    v = sub.add_parser("validate", help="check a scenario file")
    v.add_argument("scenario")
    v.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    v.add_argument("--print", action="store_true", help="print the resolved scenario")
    v.set_defaults(func=cmd_validate)

    s = sub.add_parser("sweep", help="run a grid of scenarios, cached and resumable")
    s.add_argument("sweep")
    s.add_argument("--out", required=True)
    s.add_argument("--workers", type=_positive, default=None,
                   help="parallel points (default: cores)")
    s.add_argument("--backend", choices=["local", "dask"], default="local")
    s.add_argument("--scheduler", default=None, help="dask scheduler address (default: local)")
    s.set_defaults(func=cmd_sweep)

    q = sub.add_parser("query", help="SQL over a sweep's catalog (points, flows, queries, ports)")
    q.add_argument("dir")
    q.add_argument("sql")
    q.set_defaults(func=cmd_query)

    rp = sub.add_parser("reproduce", help="reproduce a paper's evaluation with a report")
    rp.add_argument("name")
    rp.add_argument("--out", required=True)
    rp.add_argument("--quick", action="store_true", help="fewer points, shorter runs")
    rp.add_argument("--workers", type=_positive, default=None)
    rp.add_argument("--figure", action="append", metavar="ID",
                    help="only this figure (repeatable); ids are in the report's data/ names")
    rp.add_argument("--seeds-from", type=int, default=1, metavar="K",
                    help="number each figure's seeds from K instead of 1 (same count): "
                         "do the verdicts hold on other draws?")
    rp.set_defaults(func=cmd_reproduce)

    c = sub.add_parser("compare", help="every scheme head to head on the same fabrics and "
                       "workloads (the showdown), or the schemes and workloads you name")
    c.add_argument("--out", required=True)
    c.add_argument("--quick", action="store_true", help="fewer loads, flows and fan-ins")
    c.add_argument("--schemes", action="append", metavar="A,B",
                   help="registry schemes to compare (default: the showdown's 19)")
    c.add_argument("--workloads", action="append", metavar="W,..",
                   help="websearch, datamining, incast, partition-aggregate (default: all)")
    c.add_argument("--fabrics", action="append", metavar="F,..",
                   help="fat-tree-128, leaf-spine-144, fat-tree-1024 (default: the mode's)")
    c.add_argument("--workers", type=_positive, default=None,
                   help="parallel runs (default: cores)")
    c.add_argument("--backend", choices=["local", "dask"], default="local")
    c.add_argument("--scheduler", default=None, help="dask scheduler address (default: local)")
    c.set_defaults(func=cmd_compare)

    b = sub.add_parser("bench", help="standard speed benchmarks")
    b.add_argument("names", nargs="*",
                   help="engine benchmarks to run (default: all), or `arbiter` for the "
                        "Fastpass arbiter's allocation and path-selection benchmark, or "
                        "`arbiter_service` for the arbiter as a UDP service loaded by 64 "
                        "endpoints, or `pfabric_queue` for the pFabric queue's cost against "
                        "its length")
    b.add_argument("--json", action="store_true",
                   help="print JSON (engine: a list; arbiter: one object)")
    b.add_argument("--quick", action="store_true",
                   help="arbiter, arbiter_service, pfabric_queue: a shorter run")
    b.add_argument("--threads", type=_threads, default=None, metavar="N",
                   help="engine: a parallel run, the fabric cut into its pods or racks "
                        "(run.partitions = auto) on N threads (an integer or auto); the "
                        "result is the same for every N")
    b.add_argument("--repeat", type=_positive, default=1, metavar="N",
                   help="engine: run each benchmark N times and report the median run, "
                        "with the range")
    b.set_defaults(func=cmd_bench)

    ar = sub.add_parser("arbiter", help="the Fastpass arbiter as a real UDP service")
    asub = ar.add_subparsers(dest="arbiter_command", required=True)
    sv = asub.add_parser("serve", help="run one arbiter (spillway-arbiterd) of a fabric file")
    sv.add_argument("config", help="the fabric file (docs/arbiter.md, the arbiter service)")
    sv.add_argument("--rank", type=int, default=0,
                    help="this arbiter's rank in arbiter.addrs (0 starts primary)")
    sv.add_argument("--duration", type=_time_text,
                    help="exit after this long (e.g. 10s, 500ms; a plain number is seconds); "
                         "default: until SIGTERM/Ctrl-C")
    sv.add_argument("--grant-log", help="write every batch's grants as JSON lines here")
    sv.add_argument("--busy-poll", action="store_true",
                    help="spin between timers (with a core to spare)")
    dm = asub.add_parser("demo", help="an arbiter pair and N endpoints on loopback")
    dm.add_argument("--endpoints", type=_positive, required=True, metavar="N")
    dm.add_argument("--duration", type=_seconds, required=True, metavar="T",
                    help="how long (3s, 1500ms; a plain number is seconds); demand stops "
                         "before the end, to drain")
    dm.add_argument("--kill-primary-at", type=_seconds, metavar="T",
                    help="SIGKILL the primary arbiter T seconds in")
    dm.add_argument("--pause-primary-at", type=_seconds, metavar="T",
                    help="SIGSTOP the primary T seconds in and SIGCONT it --pause-for later "
                         "(cut off, then back: split brain)")
    dm.add_argument("--pause-for", type=_seconds, default=0.1, metavar="D",
                    help="how long the primary stays stopped (default 0.1 s)")
    dm.add_argument("--drop", type=float, default=0.0, metavar="P",
                    help="put spillway-fcp-proxy between endpoints and arbiters, dropping "
                         "each FCP datagram with probability P (both ways)")
    dm.add_argument("--dup", type=float, default=0.0, metavar="P",
                    help="... duplicating each with probability P")
    dm.add_argument("--corrupt", type=float, default=0.0, metavar="P",
                    help="... corrupting each with probability P (bit flips, cuts, random "
                         "bytes, wrong nonces)")
    dm.add_argument("--flood", type=int, default=0, metavar="N",
                    help="... and sending N junk datagrams/s to the arbiters from an "
                         "unregistered address")
    dm.add_argument("--json", action="store_true",
                    help="print the summary as one JSON object (the last line)")
    dm.add_argument("--load", type=float, default=0.3,
                    help="each endpoint's Poisson demand, a share of its link (default 0.3)")
    dm.add_argument("--timeslot-us", type=int, default=100,
                    help="timeslot length in microseconds (default 100)")
    dm.add_argument("--seed", type=int, default=1)
    dm.add_argument("--keep", metavar="DIR", help="write config and logs here "
                                                  "(default: a new temporary directory)")
    ar.set_defaults(func=cmd_arbiter)

    im = sub.add_parser("import", help="another simulator's configuration as a scenario")
    im.add_argument("format", choices=["hpcc"], help="hpcc: the HPCC simulator's config.txt")
    im.add_argument("config")
    im.add_argument("--out", required=True, metavar="SCENARIO.toml",
                    help="the scenario to write (its file paths relative to it)")
    im.set_defaults(func=cmd_import)

    ref = sub.add_parser("reference", help="print the scenario key reference (Markdown)")
    ref.add_argument("--out", help="write to this file")
    ref.add_argument("--outputs", metavar="FILE",
                     help="instead, rewrite the generated column tables of FILE "
                          "(docs/outputs.md) from the output schemas")
    ref.set_defaults(func=cmd_reference)
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return args.func(args)
    except KeyboardInterrupt:
        # A sweep's finished points are kept and its catalog rebuilt; a run leaves nothing.
        print("spillway: interrupted", file=sys.stderr)
        return 130
    except ScenarioError as e:
        print(f"spillway: invalid scenario: {_printable(str(e))}", file=sys.stderr)
        return 2
    except (UsageError, OSError) as e:
        # A missing file, an --out that is a file or not writable, an option out of range:
        # the user's to fix.
        print(f"spillway: {_printable(str(e))}", file=sys.stderr)
        return 2


def _printable(message: str) -> str:
    """The message on one line: control characters it quotes from a file (a form feed in
    a trace line, say) are escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)


if __name__ == "__main__":
    sys.exit(main())
