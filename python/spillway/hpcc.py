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
    "ENABLE_QCN": "QCN/CNP congestion notification belongs to DCQCN (issue 40)",
    "USE_DYNAMIC_PFC_THRESHOLD": "no PFC on output-queued switches (PFC is the CIOQ fabric's)",
    "PAUSE_TIME": "no PFC on output-queued switches",
    "L2_CHUNK_SIZE": "RDMA go-back-N chunking (issue 40)",
    "L2_ACK_INTERVAL": "RDMA ACK coalescing (issue 40); TCP acknowledges every segment",
    "L2_BACK_TO_ZERO": "RDMA go-back-N (issue 40)",
    "HAS_WIN": "the RDMA host's window (issue 40); TCP's window is transport.rwnd",
    "VAR_WIN": "the RDMA host's window (issue 40)",
    "GLOBAL_T": "HPCC's timer (issue 40)",
    "FAST_REACT": "HPCC (issue 40)",
    "U_TARGET": "HPCC's eta (issue 40)",
    "MI_THRESH": "HPCC's maxStage (issue 40)",
    "INT_MULTI": "HPCC's INT (issue 40)",
    "MULTI_RATE": "HPCC (issue 40)",
    "SAMPLE_FEEDBACK": "HPCC (issue 40)",
    "RATE_BOUND": "the RDMA NIC's rate limiter (issue 40)",
    "ALPHA_RESUME_INTERVAL": "DCQCN (issue 40)",
    "RATE_DECREASE_INTERVAL": "DCQCN (issue 40)",
    "RP_TIMER": "DCQCN (issue 40)",
    "FAST_RECOVERY_TIMES": "DCQCN (issue 40)",
    "CLAMP_TARGET_RATE": "DCQCN (issue 40)",
    "RATE_AI": "DCQCN/HPCC rate increase (issue 40)",
    "RATE_HAI": "DCQCN (issue 40)",
    "MIN_RATE": "the RDMA host's rate floor (issue 40)",
    "DCTCP_RATE_AI": "the RDMA host's DCTCP rate increase (issue 40); TCP DCTCP grows its window",
    "PMAX_MAP": "marking at K is certain (DCTCP's step); RED's probability ramp is issue 40's",
    "BUFFER_SIZE": "a switch-wide shared buffer is not built yet: ports keep switch.buffer each",
    "TRACE_FILE": "no packet trace output",
    "TRACE_OUTPUT_FILE": "no packet trace output",
    "ENABLE_TRACE": "no packet trace output",
    "PFC_OUTPUT_FILE": "no pfc.txt output",
    "QLEN_MON_FILE": "no qlen.txt output (run.queue_sample_interval samples queues)",
    "QLEN_MON_START": "no qlen.txt output",
    "QLEN_MON_END": "no qlen.txt output",
    "LINK_DOWN": "links do not fail",
    "FIXED_WIN": "the RDMA host's window (issue 40)",
    "BASE_RTT": "the RDMA host's window (issue 40)",
}


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
    return imp


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
        if mode == 8:
            imp.set("transport.kind", '"dctcp"')
            imp.set("switch.ecn", '"threshold"')
            imp.mapped.append((key, value, 'transport.kind = "dctcp", switch.ecn = "threshold" '
                               "(TCP DCTCP: the RDMA host's is issue 40's)"))
        else:
            imp.not_honoured.append((key, value, f"{CC_NAMES.get(mode, 'this mode')} on RDMA hosts "
                                     "is issue 40's; the scenario keeps the default transport"))
    elif key == "EWMA_GAIN":
        if values.get("CC_MODE", "").strip() == "8":
            to("transport.dctcp_g", str(float(value)))
        else:
            imp.not_honoured.append((key, value, "DCQCN's gain (issue 40)"))
    elif key in ("KMAX_MAP", "KMIN_MAP"):
        pairs = _kmap(value)
        if key == "KMIN_MAP":
            # DCTCP marks at one K (Kmin = Kmax); KMAX_MAP gives it.
            if values.get("KMAX_MAP") and _kmap(values["KMAX_MAP"]) != pairs:
                imp.not_honoured.append((key, value, "marking between Kmin and Kmax is RED's "
                                         "(issue 40); the step marks at KMAX_MAP's K"))
            return
        # The slowest rate's K for any port the map does not list; each listed rate its own.
        rate, k = min(pairs)
        imp.set("switch.ecn_threshold", f'"{int(k * 1000)}B"')
        if len(pairs) > 1:
            table = ", ".join(f'"{r}bps" = "{int(v * 1000)}B"' for r, v in sorted(pairs))
            to("switch.ecn_threshold_by_rate", f"{{ {table} }}")
        else:
            to("switch.ecn_threshold", f'"{int(k * 1000)}B"')
    elif key == "ACK_HIGH_PRIO":
        to("transport.ack_class", "0" if int(value) else "3")
    elif key == "ERROR_RATE_PER_LINK":
        if float(value) != 0.0:
            imp.not_honoured.append((key, value, "random link loss is not modelled"))
        else:
            imp.mapped.append((key, value, "(no loss: as Spillway's links)"))
    else:
        imp.not_honoured.append((key, value, NOT_HONOURED.get(key, "no counterpart")))
