"""The showdown's figures: Pareto fronts, slowdown against flow size, heat maps of scheme
against load, and the incast curves; each saved as PNG and SVG (`spillway.plots.save`)
with the table it draws written beside it as Parquet."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from spillway import plots

# Flow-size buckets for slowdown against size (bytes, upper edges).
SIZE_EDGES = (10_000, 100_000, 1_000_000, 10_000_000, float("inf"))
SIZE_LABELS = ("≤10 KB", "10-100 KB", "0.1-1 MB", "1-10 MB", ">10 MB")


def _colors(schemes: list[str]) -> dict[str, tuple[float, ...]]:
    cmap = plots.plt.get_cmap("tab20").colors
    return {s: cmap[i % 20] for i, s in enumerate(schemes)}


def _log(ax: object, values: object, axis: str = "y") -> None:
    """A log scale on ``axis`` when some of the plotted values can take one (an empty or
    all-NaN panel keeps its linear axis)."""
    v = np.asarray(values, dtype=float)
    if (np.isfinite(v) & (v > 0)).any():
        getattr(ax, f"set_{axis}scale")("log")


def _data(table: pd.DataFrame, path: Path) -> Path:
    p = path.with_suffix(".parquet")
    table.reset_index(drop=True).to_parquet(p, index=False)
    return p


def _with_ends(*cols: str) -> list[str]:
    """Each column followed by its interval's ends."""
    return [x for c in cols for x in (c, f"{c}_lo", f"{c}_hi")]


def _err(r: pd.Series, col: str) -> np.ndarray | None:
    """The distances from ``col``'s value to its interval's ends, for an error bar."""
    v, lo, hi = r.get(col), r.get(f"{col}_lo"), r.get(f"{col}_hi")
    if any(x is None or pd.isna(x) for x in (v, lo, hi)):
        return None
    return np.array([[max(v - lo, 0.0)], [max(hi - v, 0.0)]])


def pareto_front(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Which points no other point beats on both coordinates (lower is better in each):
    a boolean mask. NaN points are never on the front."""
    ok = ~(np.isnan(x) | np.isnan(y))
    front = np.zeros(len(x), dtype=bool)
    for i in np.flatnonzero(ok):
        better = ok & (x <= x[i]) & (y <= y[i]) & ((x < x[i]) | (y < y[i]))
        front[i] = not better.any()
    return front


def pareto(cells: pd.DataFrame, workload: str, schemes: list[str],
           path: Path) -> list[Path]:
    """Short-flow p99 FCT against long-flow mean FCT, one panel per fabric and load; the
    schemes on the Pareto front drawn with a black edge and named."""
    d = cells[(cells.workload == workload) & (cells.status == "ok")]
    fabrics = list(dict.fromkeys(d.fabric))
    loads = sorted(d["load"].dropna().unique())
    fig, axes = plots.plt.subplots(len(fabrics), len(loads), squeeze=False,
                                   figsize=(3.6 * len(loads) + 2.2, 3.2 * len(fabrics)))
    colors = _colors(schemes)
    rows = []
    for i, f in enumerate(fabrics):
        for j, load in enumerate(loads):
            ax = axes[i][j]
            g = d[(d.fabric == f) & (d["load"] == load)].set_index("scheme")
            g = g.reindex([s for s in schemes if s in g.index])
            if g.empty:  # a load this fabric does not run (fat-tree-1024's are fewer)
                ax.axis("off")
                continue
            front = pareto_front(g["long_fct_mean_ms"].to_numpy(float),
                                 g["short_fct_p99_ms"].to_numpy(float))
            named: list[tuple[float, float]] = []
            for (s, r), on in zip(g.iterrows(), front, strict=True):
                # The 95% intervals of both coordinates (metrics.cells).
                ax.errorbar(r.long_fct_mean_ms, r.short_fct_p99_ms,
                            xerr=_err(r, "long_fct_mean_ms"), yerr=_err(r, "short_fct_p99_ms"),
                            fmt="none", ecolor=colors[s], elinewidth=0.7, alpha=0.6, zorder=2)
                ax.scatter(r.long_fct_mean_ms, r.short_fct_p99_ms, s=42 if on else 26,
                           color=colors[s], edgecolors="black" if on else "none",
                           linewidths=1.2, label=s if (i, j) == (0, 0) else None, zorder=3)
                if on:
                    # Front points often sit on top of each other (pFabric, pFabric+FL and
                    # Turbo within a few %): stack their names instead of overprinting.
                    x, y = r.long_fct_mean_ms, r.short_fct_p99_ms
                    near = sum(1 for a, b in named
                               if abs(a - x) <= 0.04 * abs(x) and abs(b - y) <= 0.15 * abs(y))
                    named.append((x, y))
                    ax.annotate(s, (x, y), fontsize=6, xytext=(3, 2 + 7 * near),
                                textcoords="offset points")
                rows.append({"fabric": f, "load": load, "scheme": s} | {
                    c: r.get(c, np.nan) for c in _with_ends("long_fct_mean_ms", "short_fct_p99_ms")}
                    | {"pareto": bool(on)})
            _log(ax, g["short_fct_p99_ms"].where(g["long_fct_mean_ms"].notna()))
            ax.set_title(f"{f}, load {load:g}", fontsize=8)
            ax.grid(alpha=0.3)
            ax.tick_params(labelsize=7)
            if i == len(fabrics) - 1:
                ax.set_xlabel("long flows: mean FCT (ms)", fontsize=8)
            if j == 0:
                ax.set_ylabel("short flows: p99 FCT (ms)", fontsize=8)
    fig.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.suptitle(f"{workload}: short-flow tail against long-flow mean (lower-left is better; "
                 "edged: Pareto front of the point estimates; bars: 95% intervals)", fontsize=9)
    fig.tight_layout()
    return [*plots.save(fig, path), _data(pd.DataFrame(rows), path)]


def slowdown_by_size(flows: pd.DataFrame, workload: str, load: float, schemes: list[str],
                     path: Path) -> list[Path]:
    """99th percentile slowdown per flow-size bucket, one line per scheme, one panel per
    fabric. ``flows``: `fabric`, `scheme`, `size_bytes`, `slowdown` of one workload and
    load."""
    fabrics = list(dict.fromkeys(flows.fabric))
    b = pd.cut(flows["size_bytes"], [0, *SIZE_EDGES], labels=list(SIZE_LABELS))
    t = (flows.assign(size=b).groupby(["fabric", "scheme", "size"], observed=True)["slowdown"]
         .agg(p99=lambda v: float(np.nanpercentile(v, 99)) if v.notna().any() else np.nan,
              mean="mean", flows="count").reset_index())
    fig, axes = plots.plt.subplots(1, len(fabrics), squeeze=False,
                                   figsize=(4.6 * len(fabrics) + 2.0, 3.6))
    colors = _colors(schemes)
    for ax, f in zip(axes[0], fabrics, strict=True):
        for s in schemes:
            g = t[(t.fabric == f) & (t.scheme == s)]
            if len(g):
                x = [SIZE_LABELS.index(v) for v in g["size"]]
                ax.plot(x, g["p99"], marker="o", ms=3, lw=1.2, color=colors[s],
                        label=s if f == fabrics[0] else None)
        ax.set_xticks(range(len(SIZE_LABELS)), SIZE_LABELS, fontsize=7, rotation=20)
        _log(ax, t.loc[t.fabric == f, "p99"])
        ax.set_title(f"{f}", fontsize=8)
        ax.set_ylabel("p99 slowdown (FCT / ideal)", fontsize=8)
        ax.grid(alpha=0.3)
    fig.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.suptitle(f"{workload} at load {load:g}: 99th percentile slowdown by flow size",
                 fontsize=9)
    fig.tight_layout()
    t["size"] = t["size"].astype(str)
    return [*plots.save(fig, path), _data(t, path)]


def heatmap(cells: pd.DataFrame, workload: str, schemes: list[str], path: Path,
            value: str = "short_fct_p99_ms", x: str = "load") -> list[Path]:
    """``value`` of each scheme (rows) at each load (columns) over the best scheme's at
    that load, one panel per fabric (log color scale; the number in each cell is the
    value itself). Cells a scheme could not run are blank and marked ×."""
    d = cells[cells.workload == workload]
    fabrics = list(dict.fromkeys(d.fabric))
    xs = sorted(d[x].dropna().unique())
    fig, axes = plots.plt.subplots(1, len(fabrics), squeeze=False,
                                   figsize=(0.9 * len(xs) * len(fabrics) + 3.2,
                                            0.32 * len(schemes) + 1.4))
    rows = []
    im = None
    for ax, f in zip(axes[0], fabrics, strict=True):
        fx = sorted(d.loc[d.fabric == f, x].dropna().unique())  # this fabric's loads
        g = d[d.fabric == f].pivot_table(index="scheme", columns=x, values=value,
                                         aggfunc="first").reindex(index=schemes, columns=fx)
        rel = g / g.min(axis=0)
        im = ax.imshow(np.log10(rel.to_numpy(float)), cmap="RdYlGn_r", vmin=0, vmax=2,
                       aspect="auto")
        for i, s in enumerate(schemes):
            for j, v in enumerate(fx):
                val = g.loc[s, v]
                ax.text(j, i, "×" if np.isnan(val) else f"{val:.3g}", ha="center",
                        va="center", fontsize=6)
                rows.append({"fabric": f, "scheme": s, x: v, value: val,
                             "relative_to_best": rel.loc[s, v]})
        ax.set_xticks(range(len(fx)), [f"{v:g}" for v in fx], fontsize=7)
        ax.set_yticks(range(len(schemes)), schemes if f == fabrics[0] else [], fontsize=7)
        ax.set_xlabel(x, fontsize=8)
        ax.set_title(f, fontsize=8)
    if im is not None:
        cb = fig.colorbar(im, ax=list(axes[0]), shrink=0.8)
        cb.set_label("× the best at that " + x + " (log)", fontsize=7)
        cb.set_ticks([0, 1, 2], labels=["1", "10", "100"])
    fig.suptitle(f"{workload}: {value} (numbers) relative to the best scheme (color)",
                 fontsize=9)
    return [*plots.save(fig, path), _data(pd.DataFrame(rows), path)]


def incast_lines(cells: pd.DataFrame, schemes: list[str], path: Path) -> list[Path]:
    """Incast: p99 round completion time and timeouts against fan-in, one panel pair per
    fabric."""
    d = cells[(cells.workload == "incast") & (cells.status == "ok")]
    fabrics = list(dict.fromkeys(d.fabric))
    fig, axes = plots.plt.subplots(2, len(fabrics), squeeze=False,
                                   figsize=(4.6 * len(fabrics) + 2.0, 6.4), sharex=True)
    colors = _colors(schemes)
    for j, f in enumerate(fabrics):
        for s in schemes:
            g = d[(d.fabric == f) & (d.scheme == s)].sort_values("fanin")
            if len(g):
                kw = dict(marker="o", ms=3, lw=1.2, color=colors[s])
                axes[0][j].plot(g.fanin, g.qct_p99_ms, label=s if j == 0 else None, **kw)
                if "qct_p99_ms_lo" in g:
                    axes[0][j].fill_between(g.fanin, g.qct_p99_ms_lo, g.qct_p99_ms_hi,
                                            color=colors[s], alpha=0.15, lw=0)
                axes[1][j].plot(g.fanin, g.timeouts + 0.5, **kw)
        axes[0][j].set_title(f, fontsize=8)
        axes[0][j].set_ylabel("p99 round completion (ms)", fontsize=8)
        axes[1][j].set_ylabel("timeouts + 0.5", fontsize=8)
        axes[1][j].set_xlabel("fan-in (senders)", fontsize=8)
        g = d[d.fabric == f]
        for ax, v in ((axes[0][j], g.qct_p99_ms), (axes[1][j], g.timeouts + 0.5)):
            ax.set_xscale("log", base=2)
            _log(ax, v)
            ax.grid(alpha=0.3)
    fig.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.suptitle("Incast: 64 KB from each sender at once (bands: 95% intervals of the p99)",
                 fontsize=9)
    fig.tight_layout()
    cols = ["fabric", "scheme", "fanin", *_with_ends("qct_p99_ms", "timeouts", "goodput_gbps")]
    return [*plots.save(fig, path), _data(d.reindex(columns=cols), path)]
