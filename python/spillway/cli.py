"""The `spillway` command line (contract: DESIGN.md § Command-line contract).

    spillway run SCENARIO.toml --out DIR [--set key.path=value ...]
    spillway validate SCENARIO.toml [--set ...]
    spillway bench [--json] [NAME ...]
    spillway reference [--out FILE]

Exit status: 0 on success, 2 for a scenario or usage error (the message names the key).
"""

from __future__ import annotations

import argparse
import json
import sys

from spillway.errors import ScenarioError


def _fmt_ps(v: float | None) -> str:
    if v is None:
        return "-"
    for unit, scale in (("s", 1e12), ("ms", 1e9), ("us", 1e6)):
        if v >= scale:
            return f"{v / scale:.3f} {unit}"
    return f"{v:.0f} ps"


def cmd_run(args: argparse.Namespace) -> int:
    from spillway.run import run

    res = run(args.scenario, args.out, args.set, progress=None if not args.quiet else False)
    s = res.summary
    print(f"wrote {args.out}/flows.parquet, summary.json, scenario.toml"
          + (", queries.parquet" if "qct_ps" in s else ""))
    print(f"  flows: {s['flows_finished']} finished, {s['flows_unfinished']} unfinished "
          f"(stopped: {s['stop_reason']}, simulated {_fmt_ps(s['sim_time_ps'])})")
    f = s["fct_ps"]
    print(f"  FCT p50 {_fmt_ps(f['p50'])}  p99 {_fmt_ps(f['p99'])}  p99.9 {_fmt_ps(f['p99.9'])}")
    if "qct_ps" in s:
        q = s["qct_ps"]
        print(f"  QCT p50 {_fmt_ps(q['p50'])}  p99 {_fmt_ps(q['p99'])}")
    print(f"  drops {s['drops']}, retransmits {s['retransmits']}, timeouts {s['timeouts']}")
    print(f"  {s['events']:,} events in {s['wall_s']:.2f} s "
          f"({s['events_per_s'] / 1e6:.2f} M events/s, "
          f"{s['packet_hops_per_s'] / 1e6:.2f} M packet-hops/s)")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from spillway.run import validate

    resolved = validate(args.scenario, args.set)
    if args.print:
        print(resolved, end="")
    else:
        print(f"{args.scenario}: valid")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from spillway.bench import run_benchmarks

    results = run_benchmarks(args.names or None, progress=not args.json)
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


def cmd_reference(args: argparse.Namespace) -> int:
    from spillway import _core

    text = _core.reference()
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    else:
        print(text, end="")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="spillway", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="run one scenario")
    r.add_argument("scenario")
    r.add_argument("--out", required=True, help="output directory")
    r.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario key, e.g. --set workload.senders=64")
    r.add_argument("--quiet", action="store_true", help="no progress line")
    r.set_defaults(func=cmd_run)

    v = sub.add_parser("validate", help="check a scenario file")
    v.add_argument("scenario")
    v.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    v.add_argument("--print", action="store_true", help="print the resolved scenario")
    v.set_defaults(func=cmd_validate)

    b = sub.add_parser("bench", help="standard speed benchmarks")
    b.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    b.add_argument("--json", action="store_true", help="print a JSON list")
    b.set_defaults(func=cmd_bench)

    ref = sub.add_parser("reference", help="print the scenario key reference (Markdown)")
    ref.add_argument("--out", help="write to this file")
    ref.set_defaults(func=cmd_reference)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ScenarioError as e:
        print(f"spillway: invalid scenario: {e}", file=sys.stderr)
        return 2
    except FileNotFoundError as e:
        print(f"spillway: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
