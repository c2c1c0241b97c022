"""Exact-inference cost of learned networks against their treewidth bound: why bounding
treewidth matters, made visible.

For the bundled UCI sets (BIC, at most 3 parents, all pruning rules): k-G networks at
k = 1, 2, 4, 6, 8 (``--budget`` seconds each) and the unbounded network (the unbounded DP
for n ≤ 24, else ``cuts`` for 60 s), CPTs fitted on all rows (Dirichlet, ess 1), then
pgmpy: the junction tree built from the result's certificate, calibrated (all
marginals), and five variable-elimination queries in the certificate's order (pgmpy's
MinFill order until 2026-11-27: results/inference.md was measured with it). Junction
trees above ``twbn.scoring.inference.MAX_TABLE_ENTRIES`` potential entries are not built;
their size is reported. Each cell runs in its own process; times are the fastest of 3.

Run: ``python -m benchmarks.bench_inference [--sets letter wdbc] [--budget 10]``
Writes ``results/inference.md`` and ``results/inference.png``.
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor

from benchmarks.common import (
    RESULTS,
    dataset_path,
    machine,
    bic_cache,
    write_result,
)
from twbn.experiments.report import save_png

SETS = ["zoo", "letter", "mushroom", "wdbc"]
KS = [1, 2, 4, 6, 8, None]


def cell(args: tuple) -> dict:
    name, k, budget = args
    from twbn.scoring.inference import inference_time, learned_model
    from twbn.formulations.problem import Problem
    from twbn.formulations.verify import verify_result
    from twbn.scoring.data import read_csv
    from twbn.solvers.registry import solve

    cache = bic_cache(name)
    problem = Problem(cache, k)
    if k is not None:
        sol = solve(problem, "kg", time_limit=budget, seed=0)
    elif cache.n_variables <= 24:
        sol = solve(problem, "dp")
    else:
        sol = solve(problem, "cuts", time_limit=60, seed=0)
    result = sol.to_json(problem)
    assert verify_result(cache, result, k) == [], f"{name} k={k}: result failed verification"
    model = learned_model(read_csv(dataset_path(name)), list(problem.names), sol.parents)
    t = inference_time(model, result["elimination_order"], seed=0, repeats=3)
    return {"name": name, "n": cache.n_variables, "k": k, "width": sol.width, "score": sol.score,
            "arcs": sum(len(p) for p in sol.parents), **t}


def _plot(rows: list[dict], path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for name in dict.fromkeys(r["name"] for r in rows):
        mine = [r for r in rows if r["name"] == name]
        axes[0].plot([r["width"] for r in mine], [r["table_entries"] for r in mine], marker="o", label=name)
        timed = [r for r in mine if r["junction_tree_s"] is not None]
        axes[1].plot([r["width"] for r in timed], [1000 * r["junction_tree_s"] for r in timed], marker="o", label=name)
    axes[0].set_ylabel("junction-tree potential entries")
    axes[1].set_ylabel("junction tree build + calibrate (ms)")
    for ax in axes:
        ax.set_xlabel("treewidth of the learned network (certificate)")
        ax.set_yscale("log")
        ax.legend(fontsize=7)
    save_png(fig, path)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="*", default=SETS)
    ap.add_argument("--budget", type=float, default=10.0, help="k-G seconds per bounded network")
    args = ap.parse_args()
    cells = [(s, k, args.budget) for s in args.sets for k in KS]
    with ProcessPoolExecutor(2) as pool:
        rows = list(pool.map(cell, cells))
    lines = ["# Exact inference against treewidth", "",
             f"Machine: {machine()}. BIC, at most 3 parents; k-G {args.budget:.0f} s per bounded network, unbounded by "
             "the DP (n ≤ 24) or cuts (60 s); CPTs on all rows (ess 1); pgmpy junction tree from the certificate; "
             "VE queries in the certificate's order; two cells at a time.", "",
             "| data | n | k | width | arcs | score | largest clique | potential entries | junction tree (ms) "
             "| VE query (ms) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        jt = "not built" if r["junction_tree_s"] is None else f"{1000 * r['junction_tree_s']:.1f}"
        ve = "—" if r["ve_query_s"] is None else f"{1000 * r['ve_query_s']:.2f}"
        lines.append(f"| {r['name']} | {r['n']} | {'unbounded' if r['k'] is None else r['k']} | {r['width']} | "
                     f"{r['arcs']} | {r['score']:.2f} | {r['max_clique']} | {r['table_entries']:,} | {jt} | {ve} |")
    text = "\n".join(lines) + "\n"
    print(text)
    print("wrote", write_result("inference.md", text))
    png = RESULTS / "inference.png"
    _plot(rows, png)
    print("wrote", png)


if __name__ == "__main__":
    main()
