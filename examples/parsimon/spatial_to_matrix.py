"""Turns a parsimon-eval spatial file (``workload/spatials/*.json``: a ToR-to-ToR count
matrix, its index to ToR names, and each pod's ToRs) into ``workload.matrix``'s text
format for a ``clos`` fabric of ``--racks-per-pod`` racks a pod.

Parsimon places the file's pods on the fabric's in its hash map's order and shuffles the
ToRs within each pod; every pod and every rack of a pod are alike in ``cluster_b``, so
this takes the pods in the file's order and each pod's ToRs in its listed order: rack
``p * racks_per_pod + i`` is pod p's i-th ToR. Racks the file leaves empty get zeros.

    python spatial_to_matrix.py cluster_b.json cluster_b_matrix.txt --racks-per-pod 48
"""

import argparse
import json
from pathlib import Path


def convert(spatial: dict, racks_per_pod: int) -> list[list[int]]:
    """The matrix in the fabric's rack numbering."""
    inner = spatial["matrix"]["inner"]
    names = spatial["matrix"]["idx2name"]
    pods = list(spatial["pod2tors"].values())
    rack_of = {}
    for p, tors in enumerate(pods):
        if len(tors) > racks_per_pod:
            raise ValueError(f"pod {p} has {len(tors)} ToRs, more than {racks_per_pod}")
        for i, tor in enumerate(tors):
            rack_of[tor] = p * racks_per_pod + i
    n = len(pods) * racks_per_pod
    out = [[0] * n for _ in range(n)]
    for a, row in enumerate(inner):
        for b, count in enumerate(row):
            if count:
                out[rack_of[names[a]]][rack_of[names[b]]] += count
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("spatial", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--racks-per-pod", type=int, default=48)
    args = ap.parse_args()
    spatial = json.loads(args.spatial.read_text())
    m = convert(spatial, args.racks_per_pod)
    head = (f"# {args.spatial.name} (netiken/parsimon-eval workload/spatials), ToR-to-ToR flow "
            f"counts as workload.matrix: {len(m)} racks, {args.racks_per_pod} a pod; "
            "spatial_to_matrix.py made it\n")
    args.out.write_text(head + "\n".join(" ".join(map(str, r)) for r in m) + "\n")


if __name__ == "__main__":
    main()
