"""The field's benchmark, first part: twbn's k-G and k-MAX beside BLIP's on the anchor caches.

Caches: the four anchor caches (plants n = 69, baudio and jester n = 100, munin5000
n = 1,041; made by ``twbn score --approximate --max-parents 4``), read from
``--anchors DIR`` (``DIR/caches/NAME.jkl.gz`` + ``NAME.jkl.names``). For each cache and
k = 2, 5, 8, twbn's ``kg`` and ``kmax`` run side by side, one process per core, for
``--budget`` seconds (BLIP's runs: 60 s, one core each, the same pairing), seed 1. Every
network is checked by the verifier. Reported beside BLIP's figures on the same files
(``BLIP`` below, measured 2026-11-24 with BLIP's 2019 snapshot, parent sets up to size k
allowed, re-scored and checked independently): scores, ΔBIC against BLIP's better method
(> 10: "very strong" in Raftery's bands), and iterations per second as ratios.

Run: ``python -m twbn.experiments.benchmarks.bench_field --anchors DIR [--budget 60]
[--caches plants baudio] [--ks 2 5 8]`` (about 13 minutes at 60 s).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from twbn.experiments.benchmarks.common import machine, write_result

CACHES = ("plants", "baudio", "jester", "munin5000")
KS = (2, 5, 8)
#: BLIP's k-G and k-MAX on the anchor caches, 60 s, one core: (score, iterations).
BLIP = {
    ("plants", 2): {"kg": (-271052.794, 355_711), "kmax": (-261873.876, 19_936)},
    ("plants", 5): {"kg": (-261461.563, 4_084), "kmax": (-250857.307, 481)},
    ("plants", 8): {"kg": (-255828.344, 2_424), "kmax": (-248075.660, 349)},
    ("baudio", 2): {"kg": (-649311.291, 210_628), "kmax": (-644440.893, 8_788)},
    ("baudio", 5): {"kg": (-636609.975, 1_061), "kmax": (-631838.069, 93)},
    ("baudio", 8): {"kg": (-634446.556, 639), "kmax": (-630524.945, 65)},
    ("jester", 2): {"kg": (-510999.652, 175_500), "kmax": (-508390.490, 6_571)},
    ("jester", 5): {"kg": (-501831.043, 919), "kmax": (-498000.027, 58)},
    ("jester", 8): {"kg": (-501190.470, 556), "kmax": (-496997.295, 39)},
    ("munin5000", 2): {"kg": (-1064870.351, 18_017), "kmax": (-1032510.468, 464)},
    ("munin5000", 5): {"kg": (-1063466.644, 5_905), "kmax": (-1029923.129, 204)},
    ("munin5000", 8): {"kg": (-1065016.213, 2_472), "kmax": (-1029776.031, 109)},
}


def run_one(cache_path: str, k: int, method: str, budget: float) -> dict:
    """Child process: load the cache, run ``method``, verify; one JSON line."""
    from twbn.formulations.problem import Problem
    from twbn.formulations.verify import verify_result
    from twbn.scoring.jkl import read_jkl
    from twbn.solvers.registry import solve

    t0 = time.monotonic()
    cache = read_jkl(cache_path)
    load = time.monotonic() - t0
    problem = Problem(cache, k)
    sol = solve(problem, method, time_limit=budget, seed=1)
    errors = verify_result(cache, sol.to_json(problem), k)
    return {"method": method, "score": sol.score, "bound": sol.bound, "iterations": sol.stats.get("iterations"),
            "wall": sol.wall_time, "load_s": round(load, 1), "valid": not errors, "width": sol.width}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--anchors", metavar="DIR", help="folder with caches/NAME.jkl.gz (required)")
    ap.add_argument("--budget", type=float, default=60.0)
    ap.add_argument("--caches", nargs="+", default=list(CACHES), choices=CACHES)
    ap.add_argument("--ks", nargs="+", type=int, default=list(KS))
    ap.add_argument("--one", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one[0], int(args.one[1]), args.one[2], float(args.one[3]))))
        return
    if args.anchors is None:
        ap.error("--anchors DIR is required")
    rows = ["| cache | k | BLIP k-G | BLIP k-MAX | twbn kg | twbn kmax | ΔBIC best twbn − best BLIP | kg it/s ÷ BLIP k-G | "
            "kmax it/s ÷ BLIP k-MAX | valid |", "|---|---|---|---|---|---|---|---|---|---|"]
    for name in args.caches:
        path = Path(args.anchors) / "caches" / f"{name}.jkl.gz"
        for k in args.ks:
            procs = {m: subprocess.Popen([sys.executable, "-m", __spec__.name, "--one", str(path), str(k), m,
                                          str(args.budget)], stdout=subprocess.PIPE, text=True)
                     for m in ("kg", "kmax")}
            got = {m: json.loads(p.communicate()[0].strip().splitlines()[-1]) for m, p in procs.items()}
            ref = BLIP[name, k]
            best_blip = max(ref["kg"][0], ref["kmax"][0])
            best_ours = max(got["kg"]["score"], got["kmax"]["score"])
            rate = {m: got[m]["iterations"] / max(got[m]["wall"], 1e-9) / (ref[m][1] / 60.0) for m in got}
            rows.append(f"| {name} | {k} | {ref['kg'][0]:,.1f} | {ref['kmax'][0]:,.1f} | {got['kg']['score']:,.1f} | "
                        f"{got['kmax']['score']:,.1f} | {best_ours - best_blip:+,.1f} | {rate['kg']:.2f}× | "
                        f"{rate['kmax']:.2f}× | {'yes' if got['kg']['valid'] and got['kmax']['valid'] else 'NO'} |")
            print(rows[-1], flush=True)
    text = "\n".join([
        "# The field's benchmark: k-G and k-MAX beside BLIP (anchor caches)", "",
        f"Machine: {machine()}. {args.budget:g} s per run, twbn's kg and kmax side by side (one process per core), "
        "seed 1; BLIP's figures: the same caches, 60 s, one core per run, measured 2026-11-24. Iterations per "
        "second: twbn's over its own wall time (cache loading excluded), BLIP's over 60 s (JVM start and "
        "loading included).", "", *rows, ""])
    out = "field.md" if set(args.caches) == set(CACHES) and set(args.ks) == set(KS) else \
        f"field-{'-'.join(args.caches)}-k{'-'.join(map(str, args.ks))}.md"
    print("wrote", write_result(out, text))


if __name__ == "__main__":
    main()
