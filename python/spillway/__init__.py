"""Spillway: a fast, deterministic packet-level simulator for datacenter transports.

    import spillway
    result = spillway.run("examples/incast.toml", out="out/incast",
                          overrides=["workload.senders=32"])
    result.flows        # pyarrow.Table, one row per flow (see docs/outputs.md)
    result.summary      # dict, as written to summary.json
"""

from spillway._core import __version__
from spillway.errors import ScenarioError
from spillway.run import RunResult, run, validate

__all__ = ["RunResult", "ScenarioError", "__version__", "run", "validate"]
