"""Plots with matplotlib, saved as PNG and SVG side by side."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only; never needs a display

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402


def save(fig: plt.Figure, path: str | Path) -> list[Path]:
    """Writes ``path`` with .png and .svg suffixes; returns both paths."""
    path = Path(path)
    out = []
    for ext in (".png", ".svg"):
        p = path.with_suffix(ext)
        fig.savefig(p, dpi=130, bbox_inches="tight")
        out.append(p)
    plt.close(fig)
    return out


def lines(df: pd.DataFrame, x: str, y: str, hue: str | None, path: str | Path, *,
          title: str = "", xlabel: str | None = None, ylabel: str | None = None,
          logx: bool = False, logy: bool = False,
          refs: Sequence[tuple[str, float, str]] = (),
          vrefs: Sequence[tuple[str, float]] = (),
          models: Sequence[str] = ()) -> list[Path]:
    """One line per ``hue`` value of ``y`` against ``x`` (e.g. a percentile against load,
    goodput against senders). ``refs``: horizontal reference lines (label, y, color) such
    as a paper's reported value; ``vrefs``: vertical ones (label, x); ``models``: ``hue``
    values that are theory, not measurement, drawn dark and dashed without markers. More
    than ten measured lines take twenty colors; more than six entries put the legend
    beside the axes."""
    groups = list(df.groupby(hue, observed=True)) if hue else [(None, df)]
    measured = [n for n, _ in groups if n not in models]
    many = len(groups) + len(refs) + len(vrefs) > 6
    fig, ax = plt.subplots(figsize=(8.6 if many else 6.4, 4.0))
    palette = plt.get_cmap("tab20").colors if len(measured) > 10 else None
    dashes = ["--", "-.", ":"]
    for name, g in groups:
        g = g.sort_values(x)
        label = f"{hue} = {name}" if hue else None
        if name in models:
            i = list(models).index(name)
            ax.plot(g[x], g[y], ls=dashes[i % 3], lw=1.6, color="0.15", label=label)
        else:
            color = palette[measured.index(name) % 20] if palette else None
            ax.plot(g[x], g[y], marker="o", ms=4, color=color, label=label)
    for label, yv, color in refs:
        ax.axhline(yv, ls="--", lw=1, color=color, label=label)
    for label, xv in vrefs:
        ax.axvline(xv, ls=":", lw=1, color="gray", label=label)
    ax.set_xscale("log" if logx else "linear")
    ax.set_yscale("log" if logy else "linear")
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or y)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if many:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        fig.tight_layout()
    elif hue or refs or vrefs:
        ax.legend(fontsize=8)
    return save(fig, path)


def cdf(values: dict[str, np.ndarray], path: str | Path, *, title: str = "",
        xlabel: str = "FCT (ms)", logx: bool = True) -> list[Path]:
    """Empirical CDFs, one per named sample (e.g. FCTs per scheme)."""
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for name, v in values.items():
        v = np.sort(np.asarray(v, dtype=float))
        if len(v):
            ax.plot(v, np.arange(1, len(v) + 1) / len(v), label=name)
    ax.set_xscale("log" if logx else "linear")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("CDF")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return save(fig, path)


def normalized_bars(df: pd.DataFrame, x: str, scheme: str, value: str, baseline: str,
                    path: str | Path, *, title: str = "", ylabel: str = "") -> list[Path]:
    """Bars of ``value`` per ``scheme`` divided by the baseline scheme's value at the same
    ``x`` (FastLane and DeTail plot their results this way)."""
    base = df[df[scheme] == baseline].set_index(x)[value]
    schemes = [s for s in df[scheme].unique() if s != baseline]
    xs = sorted(df[x].unique())
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    w = 0.8 / max(len(schemes), 1)
    for i, s in enumerate(schemes):
        d = df[df[scheme] == s].set_index(x)[value]
        ratio = [d.get(v, np.nan) / base.get(v, np.nan) for v in xs]
        ax.bar(np.arange(len(xs)) + i * w, ratio, w, label=s)
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_xticks(np.arange(len(xs)) + w * (len(schemes) - 1) / 2, [str(v) for v in xs])
    ax.set_xlabel(x)
    ax.set_ylabel(ylabel or f"{value} / {baseline}")
    ax.set_title(title)
    ax.legend(fontsize=8)
    return save(fig, path)


def grouped_bars(df: pd.DataFrame, x: str, hue: str, y: str, path: str | Path, *,
                 title: str = "", xlabel: str | None = None, ylabel: str | None = None,
                 percent: bool = False, refs: Sequence[tuple[str, float, str]] = (),
                 x_order: Sequence[Any] | None = None) -> list[Path]:
    """Bars of ``y`` at each ``x``, one bar per ``hue`` value side by side (FastLane's
    reduction-by-flow-size charts). ``percent`` formats a fraction (and the ``refs``,
    given as fractions too) as percent. ``x_order``: the x values in display order
    (default sorted)."""
    xs = list(x_order) if x_order is not None else sorted(df[x].unique())
    hues = sorted(df[hue].unique(), key=lambda v: (isinstance(v, str), v))
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    w = 0.8 / max(len(hues), 1)
    for i, h in enumerate(hues):
        d = df[df[hue] == h].set_index(x)[y]
        vals = [d.get(v, np.nan) * (100 if percent else 1) for v in xs]
        ax.bar(np.arange(len(xs)) + i * w, vals, w, label=f"{hue} = {h}")
    for label, yv, color in refs:
        ax.axhline(yv * (100 if percent else 1), ls="--", lw=1, color=color, label=label)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks(np.arange(len(xs)) + w * (len(hues) - 1) / 2, [str(v) for v in xs])
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel((ylabel or y) + (" (%)" if percent else ""))
    ax.set_title(title)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=7)
    return save(fig, path)
