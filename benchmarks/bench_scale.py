"""Thousands of variables: approximate scoring, then k-G and S2 at k = 2, 5, 8 (Sec. 4.4
and Tables 6–7 of Scanagatta et al. 2016, at a smaller budget).

Data: synthetic networks from ``twbn.scoring.networks.random_network`` (n = 2,000 and 10,000;
2–4 states, 0–6 parents, Dirichlet(1) CPTs, seed 1) and real bnlearn networks
as pgmpy ships them (munin, n = 1,041; link, n = 724), 5,000 rows forward-sampled
(seed 2). Scoring: ``twbn.scoring.explore.explore_cache`` (BIC, at most 3 parents, 30
candidates, ``--tpv`` seconds per variable, 2 processes), in its own process. Then k-G
and S2 side by side (one process each, the same budget and seed) at each k; every result
is verified. Peak memory is each process's maximum resident set (with its children).

W-score reference: the sum of each variable's best cached score, an upper bound on the
unbounded optimum over the cache (nothing better exists at this n). W = (G − T)/|G|;
"gap closed" = (T_kG − T_S2)/(G − T_S2), the share of S2's gap to G that k-G closes
(the paper: about 60%).

Run: ``python -m benchmarks.bench_scale [--sets syn2000 syn10000 munin] [--budget 600]``
Writes ``results/scale.md``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from benchmarks.common import machine, network_path, write_result

ROWS = 5000
KS = [2, 5, 8]
METHODS = ["kg", "s2"]
WORK = Path("/tmp/twbn-bench-scale")


def _peak_gb() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, kids) / 2**20  # KiB → GiB


def dataset(name: str):
    from twbn.scoring.networks import random_network, read_bif, sample

    if name.startswith("syn"):
        net = random_network(int(name[3:]), seed=1)
    else:
        net = read_bif(network_path(name))
    return sample(net, ROWS, seed=2)


def score_one(name: str, tpv: float, out: str) -> None:
    """Child process: score ``name`` into ``out``; print one JSON line."""
    from twbn.scoring.explore import explore_cache
    from twbn.scoring.jkl import write_jkl

    t0 = time.monotonic()
    ds = dataset(name)
    t_data = time.monotonic() - t0
    cache, stats = explore_cache(ds, score="bic", max_parents=3, candidates=30, time_per_variable=tpv, jobs=2,
                                 progress=False)
    write_jkl(cache, out)
    best = sum(float(cache.scores[v][0]) for v in range(cache.n_variables))
    line = json.dumps({"n": ds.n_variables, "data_s": t_data, "score_s": stats["seconds"], "mi_s": stats["mi_seconds"],
                      "scored": stats["scored"], "kept": stats["kept"], "peak_gb": _peak_gb(), "reference": best,
                      "explored_to_end": stats["variables_explored_to_the_end"]})
    Path(out + ".bench.json").write_text(line + "\n", encoding="utf-8")
    print(line)


def solve_cell(args: tuple) -> dict:
    path, k, method, budget = args
    from twbn.formulations.problem import Problem
    from twbn.formulations.verify import verify_result
    from twbn.scoring.jkl import read_jkl
    from twbn.solvers.registry import solve

    t0 = time.monotonic()
    cache = read_jkl(path)
    problem = Problem(cache, k)
    t1 = time.monotonic()
    sol = solve(problem, method, time_limit=budget, seed=0)
    t2 = time.monotonic()
    ok = sol.parents is not None and verify_result(cache, sol.to_json(problem), k) == []
    return {"k": k, "method": method, "score": sol.score, "iterations": sol.stats.get("iterations"),
            "load_s": t1 - t0, "solve_s": t2 - t1, "valid": ok, "peak_gb": _peak_gb()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="*", default=["syn2000", "munin", "syn10000"])
    ap.add_argument("--budget", type=float, nargs="*", default=[600.0],
                    help="seconds per k-G / S2 run, one per set or one for all (default 600)")
    ap.add_argument("--tpv", type=float, nargs="*", default=None,
                    help="seconds per variable of exploration, one per set (default 0.25, or 0.1 for n ≥ 5,000)")
    ap.add_argument("--reuse", action="store_true", help="reuse a cache scored by an earlier run (and its figures)")
    ap.add_argument("--score-only", nargs=3, metavar=("NAME", "TPV", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.score_only:
        score_one(args.score_only[0], float(args.score_only[1]), args.score_only[2])
        return
    WORK.mkdir(exist_ok=True)
    lines = ["# Thousands of variables: approximate scoring, k-G and S2", "",
             f"Machine: {machine()}. {ROWS} rows; BIC, at most 3 parents, 30 candidates per variable; "
             "k-G and S2 with the same budget each (below), run side by side (one core each), seed 0.", "",
             "## Scoring and end to end", "",
             "| data | n | s/variable | budget (s) | scoring (s) | of which MI (s) | sets scored | sets kept | peak memory (GB) "
             "| k-G peak memory (GB) | end to end, scoring + k-G k=5 (min) |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    quality = ["## Quality: k-G against S2 at the same budget", "",
               "| data | k | k-G score | S2 score | W k-G | W S2 | gap closed by k-G | k-G orders | S2 k-trees "
               "| valid |", "|---|---|---|---|---|---|---|---|---|---|"]
    wins = total = 0
    closed = []
    for i, name in enumerate(args.sets):
        tpv = args.tpv[i] if args.tpv and i < len(args.tpv) else None
        if tpv is None:
            tpv = 0.1 if name.startswith("syn") and int(name[3:]) >= 5000 else 0.25
        out = WORK / f"{name}.jkl"
        t0 = time.monotonic()
        saved = Path(str(out) + ".bench.json")
        if args.reuse and out.exists() and saved.exists():
            sc = json.loads(saved.read_text(encoding="utf-8"))
            wall_score = sc["data_s"] + sc["score_s"]
        else:
            proc = subprocess.run([sys.executable, "-m", __spec__.name, "--score-only", name, str(tpv), str(out)],
                                  capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                print(f"{name}: scoring failed:\n{proc.stderr[-2000:]}", flush=True)
                continue
            sc = json.loads(proc.stdout.strip().splitlines()[-1])
            wall_score = time.monotonic() - t0
        print(f"{name}: scored in {wall_score:.0f} s: {sc}", flush=True)
        budget = args.budget[i] if i < len(args.budget) else args.budget[-1]
        cells = [(str(out), k, m, budget) for k in KS for m in METHODS]
        with ProcessPoolExecutor(2, max_tasks_per_child=1) as pool:
            res = list(pool.map(solve_cell, cells))
        for r in res:
            print(f"  {name} k={r['k']} {r['method']}: {r}", flush=True)
        by = {(r["k"], r["method"]): r for r in res}
        g = sc["reference"]
        kg5 = by[5, "kg"]
        e2e = (wall_score + kg5["load_s"] + kg5["solve_s"]) / 60
        lines.append(f"| {name} | {sc['n']:,} | {tpv} | {budget:.0f} | {sc['score_s']:.0f} | {sc['mi_s']:.0f} | {sc['scored']:,} | "
                     f"{sc['kept']:,} | {sc['peak_gb']:.2f} | {max(r['peak_gb'] for r in res if r['method'] == 'kg'):.2f} "
                     f"| {e2e:.1f} |")
        for k in KS:
            a, b = by[k, "kg"], by[k, "s2"]
            wa = None if a["score"] is None else (g - a["score"]) / abs(g)
            wb = None if b["score"] is None else (g - b["score"]) / abs(g)
            gc = None
            if a["score"] is not None and b["score"] is not None:
                total += 1
                wins += a["score"] > b["score"]
                if g > b["score"]:
                    gc = (a["score"] - b["score"]) / (g - b["score"])
                    closed.append(gc)
            fmt = lambda x: "—" if x is None else f"{x:.2f}"  # noqa: E731
            pct = lambda x: "—" if x is None else f"{100 * x:.2f}%"  # noqa: E731
            quality.append(f"| {name} | {k} | {fmt(a['score'])} | {fmt(b['score'])} | {pct(wa)} | {pct(wb)} | {pct(gc)} "
                           f"| {a['iterations']} | {b['iterations']} | {'yes' if a['valid'] and b['valid'] else 'NO'} |")
        # written after every set, so a long run that is stopped keeps what it measured
        tail = ["", f"k-G beats S2 in {wins} of {total} runs; mean gap closed "
                    f"{100 * sum(closed) / max(1, len(closed)):.0f}%."]
        text = "\n".join(lines + [""] + quality + tail) + "\n"
        print(text, flush=True)
        print("wrote", write_result("scale.md", text), flush=True)


if __name__ == "__main__":
    main()
