"""The cluster-cut ILP (``cuts``): unbounded solve time to optimality on the sets of
the bundled UCI sets and the DEBD sets of the data folder ($TWBN_DATA), and its root bound against the elimination-order MILP's at k = 2, 4, 6.

Part ``unbounded``: BIC, at most 3 parents, all pruning rules; each set solved by
``cuts`` with the budget (default 600 s) and, where n ≤ 24, by the unbounded DP as the
reference optimum. Part ``root``: the same caches at k = 2, 4, 6, ``cuts`` and ``milp``
(SCIP, strengthened), both from k-G's network (20% of the budget spent on k-G, as
``--warm-start kg`` does), each given the same budget. Root gap = (root bound − best known
score) / |best known score|, the best known score being the best network either found,
or the unbounded optimum where its treewidth is ≤ k (then it is the bounded optimum too),
or a ``--budget`` long ``cuts`` run's (``bounded_reference``), or the best network any
earlier run of this benchmark found (``results/cuts-best-known.json``: whole result
objects, each re-checked by ``verify_result`` against the cache before it counts, and
replaced when a run finds a better one).
Cells run two at a time (one per core), SCIP single-threaded.

Part ``improve``: long ``cuts`` runs from the stored best networks, the LNS given most of
the time (``--lns-share``, default 0.9), storing what they find (the root part's best
known then starts from it).

Run: ``python -m benchmarks.bench_cuts [--part unbounded|root|both|improve] [--budget 600]``
"""

from __future__ import annotations

import argparse
import json
from concurrent.futures import ProcessPoolExecutor

from benchmarks.common import RESULTS, machine, bic_cache, write_result

BEST_KNOWN = RESULTS / "cuts-best-known.json"

# plants (69), baudio and jester (100) are left out: with 3 parents their exhaustive caches
# run to millions of families (issue 9's approximate exploration is the way there)
UNBOUNDED_SETS = ["nursery", "breast", "housing", "adult", "nltcs", "letter", "msnbc", "zoo", "mushroom", "wdbc"]
ROOT_SETS = ["zoo", "letter", "wdbc"]
ROOT_KS = [2, 4, 6]


def _checked(cache, problem, sol, k: int | None) -> tuple[dict, bool]:
    """A solve's result object and whether ``verify_result`` finds it valid."""
    from twbn.formulations.verify import verify_result

    result = sol.to_json(problem)
    return result, verify_result(cache, result, k) == []


def unbounded_cell(args: tuple) -> dict:
    name, budget = args
    import time

    from twbn.formulations.problem import Problem
    from twbn.solvers.exact.unbounded import unbounded_optimum
    from twbn.solvers.registry import solve

    t0 = time.monotonic()
    cache = bic_cache(name)
    score_s = time.monotonic() - t0
    problem = Problem(cache)
    sol = solve(problem, "cuts", time_limit=budget, seed=0)
    dp = None
    if cache.n_variables <= 24:
        dp = unbounded_optimum(cache)[1]
    _, ok = _checked(cache, problem, sol, None)
    return {"name": name, "n": cache.n_variables, "families": cache.n_parent_sets(), "score_s": score_s,
            "status": sol.status, "score": sol.score, "bound": sol.bound, "gap": sol.gap, "time": sol.wall_time,
            "root": sol.stats.get("root_bound"), "nodes": sol.stats.get("nodes"), "dp": dp, "valid": ok}


def root_cell(args: tuple) -> dict:
    name, k, method, budget = args
    from twbn.formulations.problem import Problem
    from twbn.solvers.registry import solve, warm_start_solution

    cache = bic_cache(name)
    problem = Problem(cache, k)
    start, used = warm_start_solution(problem, "kg", time_limit=budget, seed=0)
    sol = solve(problem, method, solver="scip", time_limit=budget - used, seed=0, warm_start=start)
    result, ok = _checked(cache, problem, sol, k)
    return {"name": name, "k": k, "method": method, "status": sol.status, "score": sol.score, "bound": sol.bound,
            "root": sol.stats.get("root_bound"), "time": sol.wall_time + used, "valid": ok, "result": result}


def bounded_reference(args: tuple) -> dict:
    """A long ``cuts`` run at (set, k) from k-G's network, for the best known score where the
    bounded optimum is not known: the root gaps are measured against it. A ratio of gaps
    measured against a feasible score r is a lower bound on the ratio against the optimum,
    since (B_milp − r) / (B_cuts − r) grows with r when B_milp > B_cuts ≥ optimum ≥ r."""
    name, k, budget = args
    from twbn.formulations.problem import Problem
    from twbn.solvers.registry import solve, warm_start_solution

    cache = bic_cache(name)
    problem = Problem(cache, k)
    start, used = warm_start_solution(problem, "kg", time_limit=budget, seed=0)
    sol = solve(problem, "cuts", time_limit=budget - used, seed=0, warm_start=start)
    result, ok = _checked(cache, problem, sol, k)
    return {"name": name, "k": k, "score": sol.score if ok else None, "bound": sol.bound, "result": result if ok else None}


def improve_cell(args: tuple) -> dict:
    """A long ``cuts`` run at (set, k) warm-started from ``start`` (a result object: the
    stored best network, or a result file's), with the LNS given ``share`` of the time:
    more networks for the best known score, not a bound."""
    name, k, start_result, budget, share, seed = args
    from twbn.formulations.problem import Problem
    from twbn.formulations.solution import SolverResult
    from twbn.solvers.registry import solve

    cache = bic_cache(name)
    problem = Problem(cache, k)
    start = SolverResult.from_json(start_result, problem)
    sol = solve(problem, "cuts", time_limit=budget, seed=seed, warm_start=start, options={"lns_share": share})
    result, ok = _checked(cache, problem, sol, k)
    return {"name": name, "k": k, "start": start.score, "score": sol.score if ok else None, "bound": sol.bound,
            "lns": {f: sol.stats.get(f) for f in ("lns_calls", "lns_improvements", "lns_seconds")},
            "result": result if ok else None}


def _stored_best_known() -> dict:
    return json.loads(BEST_KNOWN.read_text()) if BEST_KNOWN.exists() else {}


def checked_best_known(sets: list[str], ks: list[int]) -> dict[tuple[str, int], dict]:
    """The stored best networks that pass ``verify_result`` on today's caches, by (set, k);
    an entry that fails (the cache or the scoring changed) is dropped with a message."""
    from twbn.formulations.verify import verify_result

    stored = _stored_best_known()
    out = {}
    for s in sets:
        cache = None
        for k in ks:
            entry = stored.get(f"{s}:{k}")
            if entry is None:
                continue
            if cache is None:
                cache = bic_cache(s)
            errors = verify_result(cache, entry, k)
            if errors:
                print(f"stored best network for {s} k={k} dropped: {errors[0]}", flush=True)
                continue
            out[s, k] = entry
    return out


def save_best_known(best: dict[tuple[str, int], dict]) -> None:
    from twbn.scoring.jkl import atomic_write_text

    stored = _stored_best_known()
    # the network, its certificate and how it was found; not the trajectory or stats
    stored.update({f"{s}:{k}": {f: v for f, v in r.items() if f not in ("trajectory", "stats")}
                   for (s, k), r in best.items()})
    atomic_write_text(BEST_KNOWN, json.dumps(dict(sorted(stored.items())), indent=1) + "\n")


def unbounded_reference(args: tuple) -> dict:
    """The unbounded optimum (DP for n ≤ 24, else ``cuts``) and the width of an elimination
    order of its moral graph: at every k ≥ that width it is also the bounded optimum, so it
    is the exact reference for the root gaps there."""
    name, budget = args
    from twbn.formulations.problem import Problem
    from twbn.formulations.solution import certificate_order
    from twbn.solvers.exact.unbounded import unbounded_optimum
    from twbn.solvers.registry import solve

    cache = bic_cache(name)
    if cache.n_variables <= 24:
        parents, score = unbounded_optimum(cache)
    else:
        sol = solve(Problem(cache), "cuts", time_limit=budget, seed=0)
        if sol.status != "optimal":
            return {"name": name, "score": None, "width": None}
        parents, score = sol.parents, sol.score
    _, width = certificate_order(cache.n_variables, parents, None)
    return {"name": name, "score": score, "width": width}


def improve(args) -> None:
    """Part ``improve``: one ``improve_cell`` per stored best network (restricted by
    ``--sets``/``--ks``), from it or from ``--start`` where that verifies and is better;
    every better network found replaces the stored one. Prints, writes no table."""
    from twbn.formulations.verify import verify_result

    sets = args.sets or ROOT_SETS
    ks = args.ks or ROOT_KS
    best = checked_best_known(sets, ks)
    if args.start:
        if len(sets) != 1 or len(ks) != 1:
            raise SystemExit("--start needs one set and one bound (--sets S --ks K)")
        key = (sets[0], ks[0])
        with open(args.start, encoding="utf-8") as fh:
            entry = json.load(fh)
        errors = verify_result(bic_cache(key[0]), entry, key[1])
        if errors:
            raise SystemExit(f"--start {args.start}: {errors[0]}")
        if key not in best or entry["score"] > best[key]["score"]:
            best[key] = entry
    cells = [(s, k, best[s, k], args.budget, args.lns_share, args.seed) for s, k in sorted(best)]
    if not cells:
        raise SystemExit("no stored best network for those sets and bounds; run --part root first")
    with ProcessPoolExecutor(2) as pool:
        for r in pool.map(improve_cell, cells):
            print(f"{r['name']} k={r['k']}: {r['start']:.2f} -> {r['score']}, bound {r['bound']:.2f}, {r['lns']}", flush=True)
            if r["result"] is not None and r["score"] > best[r["name"], r["k"]]["score"]:
                best[r["name"], r["k"]] = r["result"]
    save_best_known(best)


def _pct(x) -> str:
    # a root bound within SCIP's tolerance below the optimum prints as 0.00%, not −0.00%
    return "—" if x is None else f"{0.0 if -1e-7 < x < 0 else 100 * x:.2f}%"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=["unbounded", "root", "both", "improve"], default="both")
    ap.add_argument("--budget", type=float, default=600.0)
    ap.add_argument("--root-budget", type=float, default=120.0)
    ap.add_argument("--sets", nargs="*", help="restrict the parts to these sets (the table goes to a file named after them)")
    ap.add_argument("--ks", nargs="*", type=int, help="restrict the improve part to these bounds")
    ap.add_argument("--lns-share", type=float, default=0.9, help="improve part: the LNS's share of the time")
    ap.add_argument("--seed", type=int, default=0, help="improve part: the solver's seed")
    ap.add_argument("--start", help="improve part: a result file to start from where it beats the stored network")
    args = ap.parse_args()
    if args.part == "improve":
        improve(args)
        return
    lines = ["# The cluster-cut ILP (`cuts`)", "", (f"Machine: {machine()}. BIC, at most 3 parents, all pruning rules; "
             "SCIP single-threaded, two cells at a time."), ""]
    with ProcessPoolExecutor(2) as pool:
        if args.part in ("unbounded", "both"):
            lines += [f"## Unbounded, time to optimality (budget {args.budget:.0f} s)", "",
                      "| data | n | families | status | score | bound | gap | time (s) | root bound | nodes | DP optimum | valid |",
                      "|---|---|---|---|---|---|---|---|---|---|---|---|"]
            for r in pool.map(unbounded_cell, [(s, args.budget) for s in (args.sets or UNBOUNDED_SETS)]):
                dp = "—" if r["dp"] is None else f"{r['dp']:.2f}"
                t = f"{r['time']:.1f}" if r["status"] == "optimal" else f"> {args.budget:.0f}"
                lines.append(f"| {r['name']} | {r['n']} | {r['families']} | {r['status']} | {r['score']:.2f} | "
                             f"{r['bound']:.2f} | {_pct(r['gap'])} | {t} | {r['root']:.2f} | {r['nodes']} | {dp} | "
                             f"{'yes' if r['valid'] else 'NO'} |")
                print(lines[-1], flush=True)
            lines.append("")
        if args.part in ("root", "both"):
            root_sets = [s for s in ROOT_SETS if not args.sets or s in args.sets]
            refs = {r["name"]: r for r in pool.map(unbounded_reference, [(s, args.budget) for s in root_sets])}
            open_cells = [(s, k, args.budget) for s in root_sets for k in ROOT_KS
                          if refs[s]["score"] is None or refs[s]["width"] > k]
            cells = [(s, k, m, args.root_budget) for s in root_sets for k in ROOT_KS for m in ("cuts", "milp")]
            # the long reference runs first, so that the short cells fill the other core
            long_runs = [pool.submit(bounded_reference, c) for c in open_cells]
            res = []
            for r in pool.map(root_cell, cells):  # in order, each printed once it is in: a run takes ~40 min
                res.append(r)
                print(f"{r['name']} k={r['k']} {r['method']}: root {r['root']}, score {r['score']}, "
                      f"bound {r['bound']}, {r['time']:.1f} s", flush=True)
            bounded_refs = {(r["name"], r["k"]): r for r in (f.result() for f in long_runs)}
            # the best valid network per open (set, k): stored, the cells', the long run's
            best_nets = checked_best_known(root_sets, ROOT_KS)
            for r in [*res, *bounded_refs.values()]:
                key, net = (r["name"], r["k"]), r["result"]
                if (r.get("valid", True) and net is not None and net["parents"] is not None
                        and (key not in best_nets or net["score"] > best_nets[key]["score"])):
                    best_nets[key] = net
            open_keys = {(s, k) for s, k, _ in open_cells}
            best_nets = {key: net for key, net in best_nets.items() if key in open_keys}
            save_best_known(best_nets)
            lines += [f"## Root bound, `cuts` vs `milp` (SCIP, k-G start, {args.root_budget:.0f} s per solve)", "",
                      (f"Best known: the unbounded optimum where its width is ≤ k (then optimal), else the best of "
                      f"the two runs, a {args.budget:.0f} s `cuts` run from k-G and the verified networks of "
                      f"earlier runs in {BEST_KNOWN.name}; the ratio of gaps against it is "
                      "a lower bound on the ratio against the unknown optimum. Best bound: the least upper bound "
                      "proved by any run."), "",
                      ("| data | k | best known | best bound | cuts root gap | milp root gap | ratio | cuts final gap | "
                      "milp final gap | cuts time (s) | milp time (s) | valid |"),
                      "|---|---|---|---|---|---|---|---|---|---|---|---|"]
            for s in root_sets:
                for k in ROOT_KS:
                    c, m = (next(r for r in res if r["name"] == s and r["k"] == k and r["method"] == x) for x in ("cuts", "milp"))
                    best = max(x["score"] for x in (c, m) if x["score"] is not None)
                    ref = refs[s]
                    exact_ref = ref["score"] is not None and ref["width"] <= k
                    bounds = [x["bound"] for x in (c, m) if x["bound"] is not None]
                    if exact_ref:
                        best = max(best, ref["score"])
                    elif (s, k) in bounded_refs:
                        long_run = bounded_refs[s, k]
                        best = max(best, best_nets.get((s, k), {"score": best})["score"])
                        bounds += [long_run["bound"]] if long_run["bound"] is not None else []
                    best_bound = best if exact_ref else min(bounds, default=None)

                    def gap(b, best=best):
                        return None if b is None else (b - best) / abs(best)

                    gc, gm = gap(c["root"]), gap(m["root"])
                    if gc is None or gm is None:
                        ratio = "—"
                    elif gc < 1e-9:
                        ratio = "∞ (closed at the root)"
                    else:
                        ratio = f"{gm / gc:.1f}×"
                    lines.append(f"| {s} | {k} | {best:.2f}{' (optimum)' if exact_ref else ''} | {'—' if best_bound is None else f'{best_bound:.2f}'} | {_pct(gap(c['root']))} | {_pct(gap(m['root']))} | {ratio} | "
                                 f"{_pct(gap(c['bound']))} | {_pct(gap(m['bound']))} | {c['time']:.1f} | {m['time']:.1f} | "
                                 f"{'yes' if c['valid'] and m['valid'] else 'NO'} |")
                    print(lines[-1], flush=True)
            lines.append("")
    text = "\n".join(lines)
    print(text)
    name = "cuts.md" if args.part == "both" else f"cuts-{args.part}.md"
    if args.sets:
        name = name.replace(".md", "-" + "-".join(args.sets) + ".md")
    print("wrote", write_result(name, text))


if __name__ == "__main__":
    main()
