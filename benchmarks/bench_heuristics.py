"""k-G, k-A*, S2 and S2+ side by side at equal budgets, in the layout of Tables 1, 2 and 5
of Scanagatta et al. (2016); k-G's order rate on a 1,000-variable cache; and what a k-G
warm start does for the exact models.

Part ``tables``: the bundled UCI sets and the DEBD sets of $TWBN_DATA (BIC, at most 3 parents, all pruning rules),
k = 2, 4, 5, 8, every heuristic with the same budget and seed. W-score = (G − T)/|G| with
G the unbounded optimum (unbounded DP for n ≤ 24, else ``cuts``; its bound if ``cuts``
did not close). Win counts per pair of methods with a two-sided sign test (ties dropped).
Part ``rate``: orders per second of k-G at k = 4 on a synthetic cache of 1,000 variables
(each with ∅ and 60 random candidate sets of 1–3 parents among 40 "neighbours", scores
decreasing with size); the paper reports 83 orders per hour on munin (n = 1,041).
Part ``warm``: the gap of ``milp`` and ``cuts`` after the same budget with and without
``--warm-start kg`` (20% of the budget to k-G).

Run: ``python -m benchmarks.bench_heuristics [--part tables|rate|warm|all] [--budget 30]``
"""

from __future__ import annotations

import argparse
import random
from concurrent.futures import ProcessPoolExecutor

from benchmarks.common import machine, bic_cache, write_result
from twbn.experiments.stats import sign_test, w_score

SETS = ["nursery", "breast", "housing", "adult", "nltcs", "letter", "msnbc", "zoo", "mushroom", "wdbc"]
KS = [2, 4, 5, 8]
METHODS = ["kg", "kastar", "s2", "s2plus"]
WARM_CELLS = [("zoo", 4), ("wdbc", 4), ("letter", 4)]


def reference(name: str) -> tuple[str, float, bool]:
    from twbn.formulations.problem import Problem
    from twbn.solvers.exact.unbounded import unbounded_optimum
    from twbn.solvers.registry import solve

    cache = bic_cache(name)
    if cache.n_variables <= 24:
        return name, unbounded_optimum(cache)[1], True
    sol = solve(Problem(cache), "cuts", time_limit=600, seed=0)
    return name, sol.bound, sol.status == "optimal"


def heuristic_cell(args: tuple) -> dict:
    name, k, method, budget = args
    from twbn.formulations.problem import Problem
    from twbn.formulations.verify import verify_result
    from twbn.solvers.registry import solve

    cache = bic_cache(name)
    problem = Problem(cache, k)
    sol = solve(problem, method, time_limit=budget, seed=0)
    ok = sol.parents is not None and verify_result(cache, sol.to_json(problem), k) == []
    return {"name": name, "n": cache.n_variables, "k": k, "method": method, "score": sol.score, "valid": ok, **{
        x: sol.stats.get(x) for x in ("iterations", "median_score", "max_score")}}


def warm_cell(args: tuple) -> dict:
    name, k, method, warm, budget = args
    from twbn.formulations.problem import Problem
    from twbn.formulations.verify import verify_result
    from twbn.solvers.registry import solve, warm_start_solution

    cache = bic_cache(name)
    problem = Problem(cache, k)
    start, used = (None, 0.0)
    if warm:
        start, used = warm_start_solution(problem, "kg", time_limit=budget, seed=0)
    sol = solve(problem, method, solver="scip", time_limit=budget - used, seed=0, warm_start=start)
    ok = sol.parents is None or verify_result(cache, sol.to_json(problem), k) == []
    return {"name": name, "k": k, "method": method, "warm": warm, "score": sol.score, "bound": sol.bound,
            "gap": sol.gap, "valid": ok}


def synthetic_bic_cache(n: int, seed: int):
    from twbn.scoring.cache import ScoreCache

    rng = random.Random(seed)
    families = []
    for v in range(n):
        near = rng.sample([u for u in range(n) if u != v], 40)
        base = -1000.0 - 200 * rng.random()
        fam = {(): base}
        while len(fam) < 61:
            ps = tuple(sorted(rng.sample(near, rng.randint(1, 3))))
            fam[ps] = base + rng.uniform(0, 150) - 30 * len(ps)
        families.append(fam)
    return ScoreCache.from_mapping([f"V{i}" for i in range(n)], families)


def rate(budget: float) -> list[str]:
    from twbn.formulations.problem import Problem
    from twbn.solvers.registry import solve

    cache = synthetic_bic_cache(1000, 0)
    sol = solve(Problem(cache, 4), "kg", time_limit=budget, seed=0)
    per_s = sol.stats["iterations"] / sol.wall_time
    return ["## k-G order rate (n = 1,000, k = 4, synthetic cache of 61 sets per variable)", "",
            f"{sol.stats['iterations']} orders in {sol.wall_time:.1f} s: **{per_s:.2f} orders/s** "
            f"({per_s * 3600:.0f} per hour; the paper: 83 per hour on munin, n = 1,041).", ""]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=["tables", "rate", "warm", "all"], default="all")
    ap.add_argument("--budget", type=float, default=30.0)
    ap.add_argument("--sets", nargs="*", default=SETS)
    args = ap.parse_args()
    lines = ["# Heuristics side by side", "", f"Machine: {machine()}. BIC, at most 3 parents, all pruning rules; "
             f"seed 0; two cells at a time.", ""]
    with ProcessPoolExecutor(2) as pool:
        if args.part in ("tables", "all"):
            refs = {name: (g, exact) for name, g, exact in pool.map(reference, args.sets)}
            print("references:", refs, flush=True)
            cells = [(s, k, m, args.budget) for s in args.sets for k in KS for m in METHODS]
            res = {}
            for r in pool.map(heuristic_cell, cells):  # in order, as they finish: a log that survives a kill
                res[r["name"], r["k"], r["method"]] = r
                print(f"cell {r['name']} k={r['k']} {r['method']}: {r['score']} ({r['iterations']} iterations)", flush=True)
            lines += [f"## W-scores, % (Table 1 layout; {args.budget:.0f} s per method and cell)", "",
                      "| data | n | k | " + " | ".join(METHODS) + " |", "|---|---|---|" + "---|" * len(METHODS)]
            for s in args.sets:
                g, exact = refs[s]
                for k in KS:
                    ws = []
                    for m in METHODS:
                        r = res[s, k, m]
                        ws.append("—" if r["score"] is None else f"{100 * w_score(g, r['score']):.2f}" + ("" if r["valid"] else " INVALID"))
                    n = res[s, k, METHODS[0]]["n"]
                    lines.append(f"| {s}{'' if exact else ' (bound)'} | {n} | {k} | " + " | ".join(ws) + " |")
            lines += ["", "## Wins of the row method over the column method (Table 5 layout; sign test p in brackets)", "",
                      "| | " + " | ".join(METHODS) + " |", "|---|" + "---|" * len(METHODS)]
            for a in METHODS:
                row = []
                for b in METHODS:
                    if a == b:
                        row.append("—")
                        continue
                    wins = losses = 0
                    for s in args.sets:
                        for k in KS:
                            x, y = res[s, k, a]["score"], res[s, k, b]["score"]
                            if x is None or y is None or abs(x - y) <= 1e-6 * abs(y):
                                continue
                            wins += x > y
                            losses += x < y
                    p = sign_test(wins, losses)
                    row.append(f"{'**' if p < 0.05 and wins > losses else ''}{wins}{'**' if p < 0.05 and wins > losses else ''} (p={p:.3f})")
                lines.append(f"| {a} | " + " | ".join(row) + " |")
            big = args.sets[-1]
            lines += ["", f"## Candidate solutions on {big} (Tables 2–3 layout)", "",
                      "| k | method | iterations | median score | max score |", "|---|---|---|---|---|"]
            for k in KS:
                for m in METHODS:
                    r = res[big, k, m]
                    med = "—" if r["median_score"] is None else f"{r['median_score']:.1f}"
                    mx = "—" if r["max_score"] is None else f"{r['max_score']:.1f}"
                    lines.append(f"| {k} | {m} | {r['iterations']} | {med} | {mx} |")
            lines.append("")
        if args.part in ("rate", "all"):
            lines += rate(min(args.budget, 60.0))
        if args.part in ("warm", "all"):
            cells = [(s, k, m, w, args.budget) for s, k in WARM_CELLS for m in ("milp", "cuts") for w in (False, True)]
            res = list(pool.map(warm_cell, cells))
            lines += [f"## Warm start from k-G ({args.budget:.0f} s in all; 20% to k-G when warm)", "",
                      "| data | k | method | gap cold | gap warm | score cold | score warm |", "|---|---|---|---|---|---|---|"]
            for s, k in WARM_CELLS:
                for m in ("milp", "cuts"):
                    cold, warm = (next(r for r in res if (r["name"], r["k"], r["method"], r["warm"]) == (s, k, m, w)) for w in (False, True))

                    def fmt(r, key):
                        v = r[key]
                        return "—" if v is None else (f"{100 * v:.2f}%" if key == "gap" else f"{v:.2f}")

                    lines.append(f"| {s} | {k} | {m} | {fmt(cold, 'gap')} | {fmt(warm, 'gap')} | {fmt(cold, 'score')} | {fmt(warm, 'score')} |")
            lines.append("")
    text = "\n".join(lines)
    print(text)
    print("wrote", write_result("heuristics.md" if args.part == "all" else f"heuristics-{args.part}.md", text))


if __name__ == "__main__":
    main()
