"""Every reproduction states its claims through spillway.reproduce.claim: no module keeps
a verdict type or helper of its own, and the report framework takes nothing else."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pandas as pd
import pytest
import spillway.reproduce as reproduce
from spillway.errors import UsageError
from spillway.intervals import Estimate
from spillway.reproduce import Figure, claim

ROOT = Path(__file__).resolve().parent.parent / "python" / "spillway" / "reproduce"


def test_no_reproduction_has_a_verdict_of_its_own():
    assert not hasattr(reproduce, "Verdict")
    for p in sorted(ROOT.rglob("*.py")):
        if p.name == "claim.py":
            continue
        text = p.read_text()
        # The only verdict is claim.Verdict; no module builds one or a bool verdict.
        assert not re.search(r"\bVerdict\s*\(", text), p
        assert not re.search(r"\bholds\s*=", text), p


def test_every_paper_module_builds_its_claims_with_the_claim_module():
    """Each reproduction (and each of its figure modules that states claims) imports the
    claim module: its verdicts have the same three states."""
    stating = [p for p in ROOT.rglob("*.py") if "claim." in p.read_text()
               and p.name not in ("claim.py", "__init__.py")]
    assert len(stating) >= 12
    for p in stating:
        assert re.search(r"from spillway\.reproduce import .*\bclaim\b|"
                         r"import spillway\.reproduce\.claim", p.read_text()), p
    for name in reproduce.REPRODUCTIONS:
        pkg = ROOT / name if (ROOT / name).is_dir() else ROOT / f"{name}.py"
        files = list(pkg.rglob("*.py")) if pkg.is_dir() else [pkg]
        assert any("claim." in f.read_text() for f in files), name


def test_the_report_refuses_a_claim_that_is_not_a_claim(tmp_path, monkeypatch):
    mod = types.ModuleType("spillway_test_paper")
    mod.TITLE = "A paper"

    def figures(quick: bool) -> list[Figure]:
        def good(res, out):
            return pd.DataFrame({"x": [1]}), [], [
                claim.at_most("x is at most 2", Estimate(1.0, 0.5, 1.5), 2.0, paper="'x'")]

        def bad(res, out):
            return pd.DataFrame({"x": [1]}), [], [("x", True, "a tuple")]

        return [Figure("good", "Good", "§1", "none", None, good),
                Figure("bad", "Bad", "§2", "none", None, bad)]

    mod.figures = figures
    monkeypatch.setitem(sys.modules, "spillway_test_paper", mod)
    monkeypatch.setitem(reproduce.REPRODUCTIONS, "paper", "spillway_test_paper")
    with pytest.raises(TypeError, match="bad"):
        reproduce.reproduce("paper", tmp_path / "r")
    report = reproduce.reproduce("paper", tmp_path / "ok", only=["good"])
    v = pd.read_parquet(report.parent / "verdicts.parquet")
    assert v[["figure", "verdict", "holds"]].values.tolist() == [["good", "PASS", True]]
    assert "- **PASS**: x is at most 2." in report.read_text()
    with pytest.raises(UsageError):
        reproduce.reproduce("paper", tmp_path / "x", only=["nope"])
