"""`spillway import hpcc CONFIG`: an HPCC simulator `config.txt` (alibaba-edu's ns-3 fork,
`mix/config_doc.txt`; `KEY value` lines) as a Spillway scenario, with every key it maps
and every key it cannot honour named (../shared/specs/hpcc-formats-and-parsimon.md).

The topology and flow files are referred to, not copied: relative to the scenario written
(HPCC's paths are relative to where it runs, so each is looked for beside the config and
in the directories above it)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from spillway.errors import ScenarioError

# HPCC's CC_MODE values, for the report.
CC_NAMES = {1: "DCQCN", 3: "HPCC", 7: "TIMELY", 8: "DCTCP", 10: "HPCC-PINT"}

# Keys with no counterpart, and why.
NOT_HONOURED = {
    "USE_DYNAMIC_PFC_THRESHOLD": "PFC's thresholds are DeTail §6.1's per link on the CIOQ "
                                 "switches (`switch.pfc_xoff`, `switch.pfc_xon`)",
    "PAUSE_TIME": "a pause holds until its resume (as the simulator's, which ignores the quanta)",
    "L2_CHUNK_SIZE": "ACKs are per packet (L2_ACK_INTERVAL 1); go-back-N resends from the hole",
    "INT_MULTI": "telemetry keeps full precision (no 8-byte packing to scale)",
    "BUFFER_SIZE": "the lossless fabric's CIOQ switches keep a buffer per port "
                   "(`switch.buffer`), not a shared pool",
    "TRACE_FILE": "no packet trace output",
    "TRACE_OUTPUT_FILE": "no packet trace output",
    "ENABLE_TRACE": "no packet trace output",
    "PFC_OUTPUT_FILE": "no pfc.txt output",
    "QLEN_MON_FILE": "no qlen.txt output (run.queue_sample_interval samples queues)",
    "QLEN_MON_START": "no qlen.txt output",
    "QLEN_MON_END": "no qlen.txt output",
    "LINK_DOWN": "links do not fail",
    "FIXED_WIN": "a fixed window (HAS_WIN 1, VAR_WIN 0) is not modelled: W = R·T",
    "BASE_RTT": "T is `transport.base_rtt`, the fabric's longest round trip by default",
}

# CC_MODE -> transport.cc on RoCE hosts, and the switches' marking for it.
ROCE_CC = {1: ("dcqcn", "red"), 3: ("hpcc", "off"), 8: ("dctcp", "threshold")}

# Keys of one congestion control: (CC_MODE, scenario key, how the value converts).
CC_KEYS: dict[str, list[tuple[int, str, str]]] = {
    "ALPHA_RESUME_INTERVAL": [(1, "transport.dcqcn_alpha_interval", "us")],
    "RATE_DECREASE_INTERVAL": [(1, "transport.dcqcn_decrease_interval", "us")],
    "RP_TIMER": [(1, "transport.dcqcn_increase_interval", "us")],
    "FAST_RECOVERY_TIMES": [(1, "transport.dcqcn_fast_recovery", "int")],
    "CLAMP_TARGET_RATE": [(1, "transport.dcqcn_clamp_target", "bool")],
    "RATE_AI": [(1, "transport.dcqcn_rate_ai", "rate"), (3, "transport.hpcc_rate_ai", "rate")],
    "RATE_HAI": [(1, "transport.dcqcn_rate_hai", "rate")],
    "EWMA_GAIN": [(1, "transport.dcqcn_g", "float"), (8, "transport.dctcp_g", "float")],
    "U_TARGET": [(3, "transport.hpcc_eta", "float")],
    "MI_THRESH": [(3, "transport.hpcc_max_stage", "int")],
    "FAST_REACT": [(3, "transport.hpcc_fast_react", "bool")],
    "DCTCP_RATE_AI": [(8, "transport.dctcp_rate_ai", "rate")],
}
# Keys whose one value the model has (anything else is named as not honoured).
FIXED = {
    "L2_ACK_INTERVAL": ("1", "an ACK per packet"),
    "L2_BACK_TO_ZERO": ("0", "go-back-N from the first missing byte"),
    "MULTI_RATE": ("0", "one rate for the path (HPCC's per-hop rates are not modelled)"),
    "SAMPLE_FEEDBACK": ("0", "every hop's record read on every ACK"),
    "RATE_BOUND": ("1", "the NIC paces each flow at its rate"),
    "GLOBAL_T": ("1", "T is the fabric's longest base round trip (`transport.base_rtt`)"),
    "ENABLE_QCN": ("1", "switches mark, receivers flag CNPs (DCQCN)"),
}


def _rate(value: str) -> str:
    """HPCC's `50Mb/s` as a scenario rate."""
    v = value.strip()
    for unit, ours in (("Gb/s", "Gbps"), ("Mb/s", "Mbps"), ("Kb/s", "Kbps"), ("b/s", "bps")):
        if v.endswith(unit):
            return f'"{float(v[: -len(unit)]):g}{ours}"'
    raise ValueError(f"{value!r} is not a rate like 50Mb/s")


@dataclass
class Imported:
    """The scenario's keys (section -> key -> TOML value text), and what was read."""
    keys: dict[str, dict[str, str]] = field(default_factory=dict)
    mapped: list[tuple[str, str, str]] = field(default_factory=list)  # (KEY, value, to)
    not_honoured: list[tuple[str, str, str]] = field(default_factory=list)  # (KEY, value, why)

    def set(self, path: str, value: str) -> None:
        section, key = path.split(".", 1)
        self.keys.setdefault(section, {})[key] = value

    def toml(self, source: Path) -> str:
        lines = [f"# Imported from the HPCC simulator's {source.name} by `spillway import "
                 "hpcc`; what it could not honour is listed at the end."]
        for section, keys in self.keys.items():
            lines += ["", f"[{section}]"] + [f"{k} = {v}" for k, v in keys.items()]
        if self.not_honoured:
            lines += ["", "# Not honoured:"]
            lines += [f"#   {k} {v}: {why}" for k, v, why in self.not_honoured]
        return "\n".join(lines) + "\n"


def _find(name: str, config: Path) -> Path:
    """`name` (HPCC resolves it from its working directory) beside the config or above."""
    p = Path(name)
    if p.is_absolute():
        return p
    for d in [config.parent, *config.parent.parents]:
        if (d / p).exists():
            return d / p
    raise ScenarioError(name, name, f"not found beside {config} or in a directory above it")


def _kmap(value: str) -> list[tuple[int, float]]:
    """`n rate1 v1 rate2 v2 ...` (KMIN_MAP, KMAX_MAP, PMAX_MAP)."""
    f = value.split()
    n = int(f[0])
    if len(f) != 1 + 2 * n:
        raise ValueError(f"{n} pairs promised, {len(f) - 1} numbers given")
    return [(int(f[1 + 2 * i]), float(f[2 + 2 * i])) for i in range(n)]


def import_config(config: Path, out: Path) -> Imported:
    """`config` as a scenario to be written at `out` (its file paths relative to it)."""
    text = config.read_text()
    values: dict[str, str] = {}
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        key, _, value = line.partition(" ")
        if not value.strip():
            raise ScenarioError(key, "", f"{config}:{n}: a key with no value")
        values[key] = value.strip()
    imp = Imported()
    rel = lambda p: os.path.relpath(p, out.parent)  # noqa: E731
    for key, value in values.items():
        try:
            _map(imp, key, value, values, lambda name: rel(_find(name, config)))
        except ValueError as e:
            raise ScenarioError(key, value, f"{config}: {e}") from None
    if "BUFFER_SIZE" in values and "TOPOLOGY_FILE" in values:
        _per_port_buffer(imp, values["BUFFER_SIZE"], _find(values["TOPOLOGY_FILE"], config))
    return imp


def _per_port_buffer(imp: Imported, value: str, topology: Path) -> None:
    """BUFFER_SIZE (MB, one pool a switch) on the lossless fabric, whose CIOQ switches
    keep a buffer per port: the pool split evenly over the ports of the switch with the
    most, so that no switch holds more than the simulator's would."""
    lines = topology.read_text().split("\n")
    try:
        switches = {int(x) for x in lines[1].split()}
        degree: dict[int, int] = {}
        for line in lines[2:]:
            f = line.split()
            if len(f) >= 2:
                for n in (int(f[0]), int(f[1])):
                    if n in switches:
                        degree[n] = degree.get(n, 0) + 1
    except (IndexError, ValueError):
        return  # the run reads the file and names what is wrong with it
    if not degree:
        return
    ports = max(degree.values())
    per = int(float(value) * (1 << 20)) // ports
    imp.set("switch.buffer", f'"{per}B"')
    imp.not_honoured = [x for x in imp.not_honoured if x[0] != "BUFFER_SIZE"]
    imp.mapped.append(("BUFFER_SIZE", value, f'switch.buffer = "{per}B" (the pool split over '
                       f"the {ports} ports of the largest switch: CIOQ switches keep a buffer "
                       "per port, not a shared pool)"))


def _map(imp: Imported, key: str, value: str, values: dict[str, str], path) -> None:  # noqa: ANN001
    def to(scenario_key: str, v: str) -> None:
        imp.set(scenario_key, v)
        imp.mapped.append((key, value, f"{scenario_key} = {v}"))

    if key == "TOPOLOGY_FILE":
        imp.set("topology.kind", '"graph"')
        to("topology.file", f'"{path(value)}"')
    elif key == "FLOW_FILE":
        imp.set("workload.kind", '"trace"')
        imp.set("workload.format", '"hpcc"')
        to("workload.file", f'"{path(value)}"')
    elif key == "FCT_OUTPUT_FILE":
        to("run.fct_txt", '"hpcc"')
    elif key == "SIMULATOR_STOP_TIME":
        to("run.duration", f'"{float(value) * 1e9:.0f}ns"')
    elif key == "PACKET_PAYLOAD_SIZE":
        to("transport.mss", str(int(value)))
    elif key == "CC_MODE":
        mode = int(value)
        if mode not in ROCE_CC:
            raise ValueError(f"CC_MODE {mode} ({CC_NAMES.get(mode, 'unknown')}) has no "
                             "counterpart: 1 (DCQCN), 3 (HPCC) and 8 (DCTCP) do")
        cc, ecn = ROCE_CC[mode]
        # The simulator's RDMA hosts on its lossless fabric: RoCE on CIOQ switches with PFC.
        for k, v in (("transport.kind", '"roce"'), ("transport.cc", f'"{cc}"'),
                     ("switch.kind", '"cioq"'), ("switch.flow_control", '"pfc"'),
                     ("switch.ecn", f'"{ecn}"')):
            imp.set(k, v)
        imp.mapped.append((key, value, f'transport.kind = "roce", transport.cc = "{cc}", '
                           f'switch.kind = "cioq", switch.flow_control = "pfc", '
                           f'switch.ecn = "{ecn}"'))
    elif key in CC_KEYS:
        mode = int(values.get("CC_MODE", "1").strip())
        for m, ours, conv in CC_KEYS[key]:
            if m != mode:
                continue
            convert = {"us": lambda x: f'"{float(x):g}us"', "int": lambda x: str(int(x)),
                       "bool": lambda x: "true" if int(x) else "false",
                       "float": lambda x: repr(float(x)), "rate": _rate}[conv]
            to(ours, convert(value))
            return
        imp.not_honoured.append((key, value, f"not read by CC_MODE {mode} "
                                 f"({CC_NAMES.get(mode, '?')})"))
    elif key in FIXED:
        want, what = FIXED[key]
        if value.strip() == want:
            imp.mapped.append((key, value, f"({what}, as modelled)"))
        else:
            imp.not_honoured.append((key, value, f"only {key} {want} is modelled: {what}"))
    elif key in ("HAS_WIN", "VAR_WIN"):
        if key == "VAR_WIN" and "HAS_WIN" in values:
            return  # read with HAS_WIN
        has, var = values.get("HAS_WIN", "0").strip(), values.get("VAR_WIN", "0").strip()
        if has == "1" and var == "0":
            imp.not_honoured.append((key, value, NOT_HONOURED["FIXED_WIN"]))
        to("transport.roce_window", "true" if has == "1" else "false")
    elif key == "MIN_RATE":
        to("transport.roce_min_rate", _rate(value))
    elif key in ("KMAX_MAP", "KMIN_MAP", "PMAX_MAP"):
        _marking(imp, key, value, values)
    elif key == "ACK_HIGH_PRIO":
        to("transport.ack_class", "0" if int(value) else "3")
    elif key == "ERROR_RATE_PER_LINK":
        if float(value) != 0.0:
            imp.not_honoured.append((key, value, "random link loss is not modelled"))
        else:
            imp.mapped.append((key, value, "(no loss: as Spillway's links)"))
    else:
        imp.not_honoured.append((key, value, NOT_HONOURED.get(key, "no counterpart")))


def _marking(imp: Imported, key: str, value: str, values: dict[str, str]) -> None:
    """KMIN_MAP, KMAX_MAP, PMAX_MAP: DCTCP's step at K (CC_MODE 8: `ecn_threshold`, by rate
    where the map lists several), or DCQCN's RED thresholds (`ecn_kmin`, `ecn_kmax`,
    `ecn_pmax`: one value for every port, so a map of several rates is honoured when it
    is the simulator's own 100/400 KB per 25 Gbit/s, the keys' defaults)."""
    pairs = _kmap(value)
    mode = int(values.get("CC_MODE", "1").strip())
    if mode == 3:
        imp.not_honoured.append((key, value, "HPCC reads telemetry: no marking"))
        return
    if mode == 8:
        if key == "PMAX_MAP":
            if any(p != 1.0 for _, p in pairs):
                imp.not_honoured.append((key, value, "DCTCP marks at K with certainty"))
            else:
                imp.mapped.append((key, value, "(certain marking at K, as the step)"))
            return
        if key == "KMIN_MAP":
            # DCTCP marks at one K (Kmin = Kmax); KMAX_MAP gives it.
            if values.get("KMAX_MAP") and _kmap(values["KMAX_MAP"]) != pairs:
                imp.not_honoured.append((key, value, "DCTCP's step marks at KMAX_MAP's K"))
            return
        # The slowest rate's K for any port the map does not list; each listed rate its own.
        _, k = min(pairs)
        imp.set("switch.ecn_threshold", f'"{int(k * 1000)}B"')
        if len(pairs) > 1:
            table = ", ".join(f'"{r}bps" = "{int(v * 1000)}B"' for r, v in sorted(pairs))
            imp.set("switch.ecn_threshold_by_rate", f"{{ {table} }}")
            imp.mapped.append((key, value, f"switch.ecn_threshold_by_rate = {{ {table} }}"))
        else:
            imp.mapped.append((key, value, f'switch.ecn_threshold = "{int(k * 1000)}B"'))
        return
    # DCQCN's RED: one setting for every port.
    if key == "PMAX_MAP":
        ps = {p for _, p in pairs}
        p = min(pairs)[1]
        imp.set("switch.ecn_pmax", repr(p))
        if len(ps) == 1:
            imp.mapped.append((key, value, f"switch.ecn_pmax = {p!r}"))
        else:
            imp.not_honoured.append((key, value, "one Pmax for every port: the slowest rate's"))
        return
    ours = "switch.ecn_kmin" if key == "KMIN_MAP" else "switch.ecn_kmax"
    per_25g = 100 if key == "KMIN_MAP" else 400
    if all(abs(k - per_25g * r / 25e9) <= 1e-6 * max(1.0, k) for r, k in pairs):
        imp.mapped.append((key, value, f"({ours} by rate: 100/400 KB per 25 Gbit/s, the default)"))
    elif len(pairs) == 1:
        v = f'"{int(pairs[0][1] * 1000)}B"'
        imp.set(ours, v)
        imp.mapped.append((key, value, f"{ours} = {v}"))
    else:
        k = int(min(pairs)[1] * 1000)
        imp.set(ours, f'"{k}B"')
        imp.not_honoured.append((key, value, f"one {ours} for every port: the slowest "
                                 f"rate's, {k} B"))
