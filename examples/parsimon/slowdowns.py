"""p99 (and p50) slowdown by flow size from an fct.txt, as Parsimon's figures bin them:
< 10 KB, 10-100 KB, 100 KB-1 MB, > 1 MB; slowdown = fct / standalone fct, fields by
position as its ns-3 frontend reads them (9 columns: [5] size, [7] fct, [8] standalone;
8 columns: [4], [6], [7]).

    python slowdowns.py out/cluster_b/fct.txt
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd

BUCKETS = [("<10KB", 0, 10_000), ("10KB-100KB", 10_000, 100_000),
           ("100KB-1MB", 100_000, 1_000_000), (">1MB", 1_000_000, float("inf"))]


def slowdowns(path: Path) -> list[tuple[str, int, float, float]]:
    """(bucket, flows, p50, p99) for each size bucket."""
    with path.open() as f:
        off = len(f.readline().split()) - 8
    cols = [off + 4, off + 6, off + 7]
    t = pd.read_csv(path, sep=" ", header=None, usecols=cols, dtype=np.float64)
    size = t[off + 4].to_numpy()
    slow = t[off + 6].to_numpy() / t[off + 7].to_numpy()
    out = []
    for name, lo, hi in BUCKETS:
        s = slow[(size >= lo) & (size < hi)]
        p50, p99 = (np.percentile(s, [50, 99]) if len(s) else (float("nan"),) * 2)
        out.append((name, len(s), float(p50), float(p99)))
    return out


def main() -> None:
    print(f"{'size':<12} {'flows':>10} {'p50':>8} {'p99':>8}")
    for name, n, p50, p99 in slowdowns(Path(sys.argv[1])):
        print(f"{name:<12} {n:>10} {p50:>8.2f} {p99:>8.2f}")


if __name__ == "__main__":
    main()
