import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPILLWAY = [sys.executable, "-m", "spillway"]


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


def _usage_error(args: list[str], *fragments: str, cwd: Path | None = None) -> str:
    """Runs `spillway ARGS`, which must refuse: exit 2 and one line on stderr holding
    every fragment, no traceback. Returns the line."""
    r = subprocess.run(SPILLWAY + args, capture_output=True, text=True, cwd=cwd)
    assert r.returncode == 2, (args, r.returncode, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1, (args, r.stderr)
    for f in fragments:
        assert f in lines[0], (args, f, lines[0])
    return lines[0]


@pytest.fixture
def usage_error() -> Callable[..., str]:
    return _usage_error
