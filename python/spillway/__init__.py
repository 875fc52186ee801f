"""Spillway: a fast, deterministic packet-level simulator for datacenter transports.

    import spillway
    result = spillway.run("examples/incast.toml", out="out/incast",
                          overrides=["workload.senders=32"])
    result.flows        # pyarrow.Table, one row per flow (see docs/outputs.md)
    result.summary      # dict, as written to summary.json
"""

from typing import TYPE_CHECKING

from spillway._core import __version__
from spillway.errors import ScenarioError
from spillway.run import RunResult, run, validate

if TYPE_CHECKING:
    from spillway.store import Results


def open(out: str) -> "Results":  # noqa: A001 - the documented name, spillway.open(DIR)
    """Opens a sweep directory's results: ``.points()``, ``.flows()``, ``.sql(...)``."""
    from spillway.store import Results

    return Results(out)


__all__ = ["RunResult", "ScenarioError", "__version__", "open", "run", "validate"]
