"""The bounded-treewidth DP (Korhonen & Parviainen, Thm 1): time and peak memory for
n = 10…15 and w = 1…3 on real data, beside the paper's figures (HOUSING w=2: 3,220 s,
ADULT w=2: 13,086 s, Python/Cython on 2.53 GHz blades; n = 14, w = 3 ran out of memory).

Data as in the paper: HOUSING (n ≤ 14, its first n columns) and ADULT (n = 15), binarised
(benchmarks/binarise.py), BDeu ESS 1, parent sets of size ≤ w. Each (n, w)
runs in its own process, whose peak resident memory is read from the OS.

Run: ``python -m benchmarks.bench_dp [--max-n 15] [--widths 1,2,3]``
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

from benchmarks.common import dataset_path, machine, write_result

PAPER = {("housing", 14, 2): 3220, ("adult", 15, 2): 13086}


def run_one(name: str, n: int, w: int) -> dict:
    from benchmarks.binarise import binarise
    from twbn.scoring.data import read_csv
    from twbn.scoring.parent_sets import build_cache
    from twbn.solvers.exact.kp_dp import bounded_treewidth_optimum, table_bytes

    ds = binarise(read_csv(dataset_path(name)))
    from twbn.scoring.data import Dataset

    ds = Dataset(ds.names[:n], ds.states[:n], ds.data[:n].copy())
    cache, _ = build_cache(ds, score="bdeu", ess=1.0, max_parents=w, pruning="all", progress=False)
    t = time.perf_counter()
    parents, score, order, stats = bounded_treewidth_optimum(cache, w)
    el = time.perf_counter() - t
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB
    return {"data": name, "n": n, "w": w, "seconds": el, "peak_gib": rss, "score": score,
            "table_gib": table_bytes(n, w) / 2**30}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-n", type=int, default=15)
    ap.add_argument("--widths", default="1,2,3")
    ap.add_argument("--one", nargs=3, metavar=("DATA", "N", "W"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one[0], int(args.one[1]), int(args.one[2]))))
        return
    # warm the compiled kernels once, so no run pays for compilation
    subprocess.run([sys.executable, "-m", __spec__.name, "--one", "housing", "6", "2"], check=True, capture_output=True)
    rows = ["| data | n | w | DP time (s) | peak memory (GiB) | DP tables (GiB) | optimum | paper (s) | speed-up |",
            "|---|---|---|---|---|---|---|---|---|"]
    for w in [int(x) for x in args.widths.split(",")]:
        for n in range(10, args.max_n + 1):
            name = "housing" if n <= 14 else "adult"
            out = subprocess.run([sys.executable, "-m", __spec__.name, "--one", name, str(n), str(w)],
                                 capture_output=True, text=True)
            if out.returncode != 0:
                rows.append(f"| {name} | {n} | {w} | failed: {out.stderr.strip().splitlines()[-1]} | | | | | |")
                print(rows[-1], flush=True)
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            paper = PAPER.get((name, n, w))
            speedup = f"{paper / r['seconds']:.0f}×" if paper else ""
            rows.append(f"| {name} | {n} | {w} | {r['seconds']:.2f} | {r['peak_gib']:.2f} | {r['table_gib']:.2f} | "
                        f"{r['score']:.2f} | {paper or ''} | {speedup} |")
            print(rows[-1], flush=True)
    text = "\n".join(["# Bounded-treewidth DP benchmark", "", f"Machine: {machine()}.", "", *rows, ""])
    print(text)
    print("wrote", write_result("dp.md", text))


if __name__ == "__main__":
    main()
