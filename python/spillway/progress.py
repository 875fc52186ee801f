"""A dependency-free progress line for long runs (stderr, only on a terminal)."""

from __future__ import annotations

import sys
import time


def _fmt_time(ps: int) -> str:
    for unit, scale in (("s", 10**12), ("ms", 10**9), ("us", 10**6)):
        if ps >= scale:
            return f"{ps / scale:.2f}{unit}"
    return f"{ps}ps"


class Progress:
    """Shows simulated time (as a bar with ETA when the run has a duration)."""

    def __init__(self, enabled: bool, total_ps: int | None, label: str = "sim") -> None:
        self.enabled = enabled
        self.total = total_ps
        self.label = label
        self.t0 = time.perf_counter()
        self.last = 0.0

    def update(self, now_ps: int, active: int) -> None:
        if not self.enabled:
            return
        t = time.perf_counter()
        if t - self.last < 0.2:
            return
        self.last = t
        el = t - self.t0
        if self.total:
            frac = min(now_ps / self.total, 1.0)
            n = int(frac * 30)
            eta = el / frac - el if frac > 0 else 0.0
            line = (f"\r{self.label} [{'#' * n}{'.' * (30 - n)}] {frac * 100:5.1f}% "
                    f"{_fmt_time(now_ps)} simulated, {active} active flows, ETA {eta:.0f}s ")
        else:
            line = (f"\r{self.label} {_fmt_time(now_ps)} simulated, {active} active flows, "
                    f"{el:.0f}s elapsed ")
        sys.stderr.write(line)
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")
            sys.stderr.flush()
