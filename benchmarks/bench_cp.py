"""CP-SAT beside the MILP on the same instances and budget (time to optimum where
reached, final gap otherwise), and the CP model's redundant constraints and
permutation symmetry breaking switched off one at a time.

Instances: HOUSING (14 variables, its BIC cache, the DP optimum known), ZOO (17) and
WDBC (31), BIC, at most 3 parents; treewidth 2 and 3.

Run: ``python -m benchmarks.bench_cp [--budget 60]``
"""

from __future__ import annotations

import argparse

from benchmarks.common import dataset_path, machine, write_result

INSTANCES = [("housing", 2), ("housing", 3), ("zoo", 2), ("zoo", 3), ("wdbc", 3)]
METHODS = [
    ("milp (scip, tree start)", "milp", {"solver": "scip", "warm": True}),
    ("milp (highs, tree start)", "milp", {"solver": "highs", "warm": True}),
    ("cuts (tree start)", "cuts", {"warm": True}),
    ("cp", "cp", {}),
    ("cp, no redundant rows", "cp", {"redundant": False}),
    ("cp, no permutation", "cp", {"permutation": False}),
    ("cp (tree hint)", "cp", {"warm": True}),
]


def _cache(name: str):
    from twbn.scoring.data import read_csv
    from twbn.scoring.parent_sets import build_cache

    return build_cache(read_csv(dataset_path(name)), score="bic", max_parents=3, progress=False)[0]


def main() -> None:
    from twbn.formulations.problem import Problem
    from twbn.formulations.solution import make_solution
    from twbn.formulations.verify import verify_result
    from twbn.solvers.exact.branching import optimal_forest
    from twbn.solvers.registry import solve

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=60.0)
    ap.add_argument("--only", nargs="*", help="run only these method labels (results to cp-only.md)")
    args = ap.parse_args()
    methods = [m for m in METHODS if not args.only or m[0] in args.only]
    rows = ["| data | k | method | score | bound | gap | time to optimal (s) | valid |", "|---|---|---|---|---|---|---|---|"]
    for name, k in INSTANCES:
        cache = _cache(name)
        problem = Problem(cache, k)
        tree = make_solution(problem, optimal_forest(problem), bound=None, status="feasible", method="tree")
        for label, method, opts in methods:
            opts = dict(opts)
            warm = tree if opts.pop("warm", False) else None
            solver = opts.pop("solver", None)
            sol = solve(problem, method, solver=solver, time_limit=args.budget, seed=0, warm_start=warm,
                        options=opts or None)
            ok = verify_result(cache, sol.to_json(problem), k) == []
            t_opt = f"{sol.wall_time:.1f}" if sol.status == "optimal" else "—"
            gap = "—" if sol.gap is None else f"{100 * sol.gap:.2f}%"
            score = "—" if sol.score is None else f"{sol.score:.2f}"
            bound = "—" if sol.bound is None else f"{sol.bound:.2f}"
            rows.append(f"| {name} | {k} | {label} | {score} | {bound} | {gap} | {t_opt} | {'yes' if ok else 'NO'} |")
            print(rows[-1], flush=True)
    text = "\n".join(["# CP-SAT beside the MILP and the cluster-cut ILP", "", f"Machine: {machine()}. BIC, at most 3 parents, {args.budget:.0f} s "
                      "per solve; CP-SAT on 2 workers, MIP engines single-threaded.", "", *rows, ""])
    print(text)
    print("wrote", write_result("cp-only.md" if args.only else "cp.md", text))


if __name__ == "__main__":
    main()
