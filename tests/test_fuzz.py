"""Hostile input never crashes the simulator: every example's keys set to wrong types,
out-of-range numbers, bad units and extreme sizes, alone and in random combinations,
either run or are refused with a ScenarioError. A Rust panic would surface as
PanicException (a BaseException) and an allocation failure would abort the process."""

import random
from pathlib import Path

import pytest
from spillway import ScenarioError, _core

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("**/*.toml"))

HOSTILE = ["0", "-1", "1", "2", "3", "1e30", "0.5", "18446744073709551615", "4294967296",
           "65536", '"abc"', '""', '"0us"', '"-5us"', '"1ps"', '"100ms"', '"1e20Gbps"',
           '"1Mbps"', '"0B"', '"1B"', '"999999999999999KB"', "true", '"off"', "[1]", "{}",
           "nan", "inf"]
# Kept short: these only bound the run, and a hostile value would make it long.
BOUNDS = ["run.duration=300us", "run.max_events=100000"]


def _resolved(path: Path) -> dict[str, str]:
    """The resolved scenario's keys and values (one `key = value` per line under
    `[section]`s; array-of-table keys such as switch.routes are left out)."""
    out, section = {}, ""
    for line in _core.validate(path.read_text(), [], str(path.parent)).splitlines():
        if line.startswith("[") and not line.startswith("[["):
            section = line.strip("[]")
        elif " = " in line and not line.startswith("#") and section != "run":
            key, value = line.split(" = ", 1)
            out[f"{section}.{key}"] = value
    return out


RESOLVED = {p: _resolved(p) for p in EXAMPLES}
# Every value some example resolves a key to: plausible settings to combine.
SEEN: dict[str, set[str]] = {}
for r in RESOLVED.values():
    for k, v in r.items():
        SEEN.setdefault(k, set()).add(v)


def _survives(text: str, base: str, overrides: list[str]) -> bool:
    """True if the scenario ran (as far as the bounds let it), False if refused."""
    try:
        sim = _core.Simulation(text, overrides + BOUNDS, base)
    except ScenarioError:
        return False
    sim.step(100_000)
    return True


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_hostile_values_run_or_are_refused(path: Path) -> None:
    text, base = path.read_text(), str(path.parent)
    keys = sorted(RESOLVED[path])
    rng = random.Random(path.name)

    def value(k: str) -> str:
        seen = sorted(SEEN[k])
        return rng.choice(HOSTILE) if rng.random() < 0.25 else rng.choice(seen)

    # Each key once with a hostile value, then random combinations of 2-5 keys, each set
    # to a value some example uses or, one time in four, a hostile one.
    cases = [[f"{k}={rng.choice(HOSTILE)}"] for k in keys]
    combos = [[f"{k}={value(k)}" for k in rng.sample(keys, rng.randint(2, 5))]
              for _ in range(40)]
    for overrides in cases:
        _survives(text, base, overrides)
    ran = sum(_survives(text, base, o) for o in combos)
    # Not everything is refused: the runs themselves are exercised too.
    assert ran >= len(combos) // 5, f"only {ran} of {len(combos)} combinations ran"


@pytest.mark.parametrize("overrides", [
    ["topology.kind=leaf_spine", "topology.racks=65536"],
    ["topology.kind=leaf_spine", "topology.hosts_per_rack=65536", "topology.racks=65536"],
    ["topology.kind=star", "topology.hosts=65537"],
    ["topology.kind=dumbbell", "topology.hosts=1048576"],
    ["topology.kind=fat_tree", "topology.k=66"],
])
def test_networks_too_large_to_build_are_refused(overrides: list[str]) -> None:
    with pytest.raises(ScenarioError) as e:
        _core.Simulation("", overrides + BOUNDS, None)
    assert e.value.key.startswith("topology.")
