"""How every reproduction states a claim and judges it.

A claim is what the paper says (its words, with the section), the number it gives, ours
with its 95% interval (`spillway.intervals.Estimate`), the verdict and why. Verdicts have
three states, judged on the interval:

- **PASS**: the claim holds at the interval's unfavourable end;
- **FAIL**: it fails even at the favourable end;
- **INCONCLUSIVE**: otherwise (the interval straddles the bound); the numbers say how
  close.

A claim over several cases (every load, every fabric: `each`) passes only when every case
passes and fails when one fails; a claim that must hold in every run (`in_every_run`: "drops
nothing") fails on one run that breaks it. So a verdict that flips between seeds is never a
PASS. A fact without sampling (a closed form, an allocation checked by construction) is
stated with `fact`.

A reproduction builds its claims with these functions and nothing else; the report
(`markdown`) and `verdicts.parquet` (`table`) show them all the same way.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

import pandas as pd

from spillway.intervals import Estimate


class Verdict(StrEnum):
    PASS = "PASS"
    FAIL = "FAIL"
    INCONCLUSIVE = "INCONCLUSIVE"


@dataclass(frozen=True)
class Claim:
    """One claim and its verdict. ``claim``: what is tested, in our words (the bound
    included); ``paper``: what the paper says (quoted, section cited); ``paper_value``:
    the number it gives; ``ours``: our estimate (None for a claim over several cases,
    whose ``why`` gives each); ``why``: the numbers and the reasoning."""

    claim: str
    verdict: Verdict
    why: str
    paper: str = ""
    paper_value: str = ""
    ours: Estimate | None = None
    # What ``ours`` is compared with, for a comparison (`below`, `no_more`).
    versus: Estimate | None = None

    @property
    def holds(self) -> bool:
        return self.verdict is Verdict.PASS

    def line(self) -> str:
        """The claim as a report's bullet: verdict, claim, the paper's words and number,
        ours with its interval and where the interval comes from, why."""
        text = f"- **{self.verdict.value}**: {self.claim}."
        if self.paper or self.paper_value:
            text += " Paper: " + ", ".join(x for x in (self.paper, self.paper_value) if x) + "."
        if self.ours is not None and self.ours.known:
            # fmt() says "one run" itself; about() says where any other interval is from.
            about = "" if self.ours.method in ("exact", "one run") else f" ({self.ours.about()})"
            text += f" Ours: {self.ours.fmt()}{about}."
        if self.why:
            text += f" {self.why.rstrip('.')}."
        return text


def _judge(holds_unfavourable: bool, holds_favourable: bool) -> Verdict:
    if holds_unfavourable:
        return Verdict.PASS
    if not holds_favourable:
        return Verdict.FAIL
    return Verdict.INCONCLUSIVE


def _judgeable(*estimates: Estimate) -> bool:
    """Whether every estimate has a value and both ends: a comparison with an unknown end
    would be false whatever the data, and read as FAIL."""
    return all(e.known and not (math.isnan(e.lo) or math.isnan(e.hi)) for e in estimates)


def _missing(claim: str, ours: Estimate, paper: str, paper_value: str, why: str,
             other: Estimate | None = None) -> Claim:
    what = "no data" if not (ours.known and (other is None or other.known)) else "no interval"
    return Claim(claim, Verdict.INCONCLUSIVE, what + (f": {why}" if why else ""), paper,
                 paper_value, ours)


def at_most(claim: str, ours: Estimate, bound: float, *, paper: str = "",
            paper_value: str = "", why: str = "") -> Claim:
    """``ours`` is at most ``bound``: PASS when its interval's top is, FAIL when even its
    bottom is above."""
    if not _judgeable(ours):
        return _missing(claim, ours, paper, paper_value, why)
    v = _judge(ours.hi <= bound, ours.lo <= bound)
    return Claim(claim, v, why or f"bound {bound:.4g}", paper, paper_value, ours)


def at_least(claim: str, ours: Estimate, bound: float, *, paper: str = "",
             paper_value: str = "", why: str = "") -> Claim:
    """``ours`` is at least ``bound``: PASS when its interval's bottom is, FAIL when even
    its top is below."""
    if not _judgeable(ours):
        return _missing(claim, ours, paper, paper_value, why)
    v = _judge(ours.lo >= bound, ours.hi >= bound)
    return Claim(claim, v, why or f"bound {bound:.4g}", paper, paper_value, ours)


def within(claim: str, ours: Estimate, lo: float, hi: float, *, paper: str = "",
           paper_value: str = "", why: str = "") -> Claim:
    """``ours`` lies in the band [lo, hi]: PASS when its whole interval does, FAIL when
    its interval misses the band."""
    if not _judgeable(ours):
        return _missing(claim, ours, paper, paper_value, why)
    v = _judge(lo <= ours.lo and ours.hi <= hi, ours.hi >= lo and ours.lo <= hi)
    return Claim(claim, v, why or f"band {lo:.4g} to {hi:.4g}", paper, paper_value, ours)


def below(claim: str, a: Estimate, b: Estimate, *, paper: str = "", paper_value: str = "",
          why: str = "") -> Claim:
    """``a`` is smaller than ``b``: PASS when a's interval lies wholly below b's, FAIL
    when a's bottom is not below b's top (a is no smaller at any plausible value)."""
    if not _judgeable(a, b):
        return _missing(claim, a, paper, paper_value, why, b)
    v = _judge(a.hi < b.lo, a.lo < b.hi)
    return Claim(claim, v, why or f"{a.fmt()} against {b.fmt()}", paper, paper_value, a, b)


def no_more(claim: str, a: Estimate, b: Estimate, *, paper: str = "", paper_value: str = "",
            why: str = "") -> Claim:
    """``a`` is no larger than ``b`` (a tie holds): PASS when a's top is at most b's
    bottom, FAIL when a's bottom is above b's top."""
    if not _judgeable(a, b):
        return _missing(claim, a, paper, paper_value, why, b)
    v = _judge(a.hi <= b.lo, a.lo <= b.hi)
    return Claim(claim, v, why or f"{a.fmt()} against {b.fmt()}", paper, paper_value, a, b)


def fact(claim: str, holds: bool, why: str, *, paper: str = "", paper_value: str = "",
         ours: Estimate | None = None) -> Claim:
    """A claim with no sampling behind it (a closed form, a property checked on every
    output): PASS or FAIL."""
    return Claim(claim, Verdict.PASS if holds else Verdict.FAIL, why, paper, paper_value,
                 ours)


def in_every_run(claim: str, runs: Mapping[str, bool], why: str, *, paper: str = "",
                 paper_value: str = "") -> Claim:
    """A claim that must hold in every run ("drops nothing"): PASS when it holds in all
    of ``runs`` (run label -> held), FAIL when one breaks it; INCONCLUSIVE with none."""
    if not runs:
        return Claim(claim, Verdict.INCONCLUSIVE, "no runs" + (f": {why}" if why else ""),
                     paper, paper_value)
    broken = [k for k, ok in runs.items() if not ok]
    v = Verdict.FAIL if broken else Verdict.PASS
    tail = (f"; broken in {len(broken)} of {len(runs)} runs: {', '.join(broken[:6])}" + (
        " ..." if len(broken) > 6 else "") if broken else
        "; holds in its one run" if len(runs) == 1 else f"; holds in all {len(runs)} runs")
    return Claim(claim, v, why + tail, paper, paper_value)


def each(claim: str, cases: Sequence[Claim], *, paper: str = "", paper_value: str = "",
         why: str = "", label: Sequence[str] | None = None) -> Claim:
    """A claim over several cases: PASS when every case passes, FAIL when one fails,
    INCONCLUSIVE otherwise (and with no case). ``label``: each case's name for ``why``
    (default: its own claim text)."""
    names = list(label) if label is not None else [c.claim for c in cases]
    if not cases:
        return Claim(claim, Verdict.INCONCLUSIVE, "no cases" + (f": {why}" if why else ""),
                     paper, paper_value)
    states = [c.verdict for c in cases]
    if Verdict.FAIL in states:
        v = Verdict.FAIL
    elif all(s is Verdict.PASS for s in states):
        v = Verdict.PASS
    else:
        v = Verdict.INCONCLUSIVE
    tally = (f"{states.count(Verdict.PASS)} of {len(cases)} cases pass, "
             f"{states.count(Verdict.FAIL)} fail, {states.count(Verdict.INCONCLUSIVE)} "
             "inconclusive")
    off = [f"{n}: {c.verdict.value.lower()} ({_brief(c)})"
           for n, c in zip(names, cases, strict=True) if c.verdict is not Verdict.PASS]
    text = "; ".join(x for x in [why, tally] if x) + (
        "; not passing: " + "; ".join(off[:8]) + (" ..." if len(off) > 8 else "")
        if off else "")
    return Claim(claim, v, text, paper, paper_value)


def some(claim: str, cases: Sequence[Claim], *, paper: str = "", paper_value: str = "",
         why: str = "", label: Sequence[str] | None = None) -> Claim:
    """A claim that holds in at least one case ("cuts the tail by 40% somewhere"): PASS
    when a case passes, FAIL when every case fails, INCONCLUSIVE otherwise."""
    if not cases:
        return Claim(claim, Verdict.INCONCLUSIVE, "no cases" + (f": {why}" if why else ""),
                     paper, paper_value)
    names = list(label) if label is not None else [c.claim for c in cases]
    states = [c.verdict for c in cases]
    v = _judge(Verdict.PASS in states, any(x is not Verdict.FAIL for x in states))
    best = [f"{n}: {_brief(c)}" for n, c in zip(names, cases, strict=True)
            if c.verdict is Verdict.PASS]
    text = "; ".join(x for x in [why, f"{states.count(Verdict.PASS)} of {len(cases)} cases "
                                      f"pass, {states.count(Verdict.FAIL)} fail"] if x)
    return Claim(claim, v, text + ("; passing: " + "; ".join(best[:4]) if best else ""),
                 paper, paper_value)


def _brief(c: Claim, limit: int = 160) -> str:
    """A case in a few words: its estimate, or the start of its reasons."""
    if c.ours is not None and c.ours.known:
        versus = c.versus.fmt() if c.versus is not None and c.versus.known else ""
        return c.ours.fmt() + (f" vs {versus}" if versus else "")
    return c.why if len(c.why) <= limit else c.why[:limit].rsplit(" ", 1)[0] + " …"


def most(claim: str, cases: Sequence[Claim], share: float = 0.5, *, paper: str = "",
         paper_value: str = "", why: str = "") -> Claim:
    """A claim that holds in more than ``share`` of the cases: PASS when the passing
    cases alone are enough, FAIL when even the passing and inconclusive together are
    not, INCONCLUSIVE otherwise."""
    if not cases:
        return Claim(claim, Verdict.INCONCLUSIVE, "no cases", paper, paper_value)
    n = len(cases)
    passing = sum(c.verdict is Verdict.PASS for c in cases)
    maybe = passing + sum(c.verdict is Verdict.INCONCLUSIVE for c in cases)
    v = _judge(passing > share * n, maybe > share * n)
    text = "; ".join(x for x in [why, f"{passing} of {n} cases pass, {maybe - passing} "
                                      f"inconclusive (needs more than {share:.0%})"] if x)
    return Claim(claim, v, text, paper, paper_value)


def markdown(claims: Sequence[Claim]) -> str:
    """The claims as report bullets."""
    return "\n".join(c.line() for c in claims)


def tally(claims: Sequence[Claim]) -> str:
    """'3 PASS, 1 FAIL, 1 INCONCLUSIVE of 5'."""
    n = {v: sum(c.verdict is v for c in claims) for v in Verdict}
    return (f"{n[Verdict.PASS]} PASS, {n[Verdict.FAIL]} FAIL, "
            f"{n[Verdict.INCONCLUSIVE]} INCONCLUSIVE of {len(claims)}")


def table(claims: Sequence[Claim], **extra: Sequence[object]) -> pd.DataFrame:
    """One row per claim (verdicts.parquet): the claim, the paper's words and number,
    ours with its interval, the `verdict` (PASS, FAIL or INCONCLUSIVE), `holds` (PASS)
    and `detail` (why); ``extra`` columns first (e.g. which paper)."""
    rows = []
    for c in claims:
        e = c.ours if c.ours is not None else Estimate.missing()
        rows.append({"claim": c.claim, "paper": c.paper, "paper_value": c.paper_value,
                     "value": e.value, "lo": e.lo, "hi": e.hi, "samples": e.n,
                     "seeds": e.seeds, "interval": e.method, "verdict": c.verdict.value,
                     "holds": c.holds, "detail": c.why})
    t = pd.DataFrame(rows, columns=["claim", "paper", "paper_value", "value", "lo", "hi",
                                    "samples", "seeds", "interval", "verdict", "holds",
                                    "detail"])
    for i, (k, v) in enumerate(extra.items()):
        t.insert(i, k, list(v))
    return t
