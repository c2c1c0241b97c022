"""`twbn demo`: the main job on bundled data: score and prune (phase 1), learn exact
optimal networks of treewidth 1, 2 and unbounded (phase 2), each verified; then a
warm-started exact model evaluated on held-out rows, and the quick experiment grid with
its report."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from twbn.formulations.problem import Problem
from twbn.formulations.verify import verify_result
from twbn.scoring.data import read_csv
from twbn.scoring.jkl import atomic_write_text, read_jkl, write_jkl
from twbn.scoring.parent_sets import PRUNING_MODES, build_cache
from twbn.solvers.registry import solve

__all__ = ["run_demo", "held_out", "grid"]

DATA_DIR = Path(__file__).parent / "data"


def run_demo(out_dir: Path) -> int:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = DATA_DIR / "housing.csv.gz"
    ds = read_csv(path)
    print(f"twbn demo — {path.name}: {ds.n_variables} variables, {ds.n_rows} rows "
          f"(UCI Boston Housing, discretised; CC BY 4.0)\n")

    print("Phase 1: candidate parent sets, BIC, in-degree <= 3, by pruning mode")
    print(f"  {'mode':<8} {'scored':>7} {'kept':>6} {'seconds':>8}")
    results = {}
    for mode in PRUNING_MODES:
        cache, stats = build_cache(ds, score="bic", max_parents=3, pruning=mode, progress=False)
        results[mode] = (cache, stats)
        print(f"  {mode:<8} {stats['scored']:>7,} {stats['kept']:>6,} {stats['seconds']:>8.3f}")

    cache, stats = results["all"]
    none_cache = results["none"][0]
    # The pruned cache loses nothing: each variable's best set is the unpruned best.
    for v in range(ds.n_variables):
        assert cache.parent_sets[v][0] == none_cache.parent_sets[v][0]
    caps = stats["caps"]
    print(f"\n  rule-5 parent caps: {', '.join(f'{k} {v}' for k, v in caps.items())}")

    jkl = out_dir / "housing.bic.jkl"
    write_jkl(cache, jkl)
    atomic_write_text(out_dir / "housing.bic.stats.json", json.dumps(stats, indent=2) + "\n")
    again = read_jkl(jkl)
    assert again.families() == cache.families(), "jkl round trip changed the cache"

    print("\nBest parent set of each variable (BIC):")
    for v, name in enumerate(cache.names):
        ps = cache.parent_sets[v][0]
        print(f"  {name:<8} <- {', '.join(cache.names[p] for p in ps) or '(none)':<28} "
              f"{cache.scores[v][0]:10.3f}   ({cache.n_parent_sets(v)} candidates)")

    bdeu, bstats = build_cache(ds, score="bdeu", ess=1.0, max_parents=3, pruning="all", progress=False)
    write_jkl(bdeu, out_dir / "housing.bdeu.jkl")
    print(f"\nBDeu (ESS 1): {bstats['scored']:,} scored, {bstats['kept']:,} kept "
          f"(only subset dominance is valid for BDeu)")

    print("\nPhase 2: exact optimal networks over the BIC cache (method dp), each checked by the verifier;")
    print("treewidth 2 takes about 5 s (Korhonen-Parviainen DP over 14 variables)")
    print(f"  {'treewidth':<10} {'score':>12} {'arcs':>5} {'width':>6} {'seconds':>8}  check")
    for k in (1, 2, None):
        problem = Problem(cache, k)
        label = "unbounded" if k is None else str(k)
        if sys.stdout.isatty():
            print(f"  {label:<10} ...", end="\r", flush=True)
        sol = solve(problem, "dp")
        out = out_dir / f"housing.dp.{label}.json"
        sol.write(problem, str(out))
        errors = verify_result(read_jkl(jkl), json.loads(out.read_text()), k)
        arcs = sum(len(p) for p in sol.parents)
        print(f"  {label:<10} {sol.score:12.3f} {arcs:5d} {sol.width:6d} {sol.wall_time:8.2f}  "
              f"{'valid' if not errors else 'INVALID: ' + '; '.join(errors)}")
        if errors:
            return 1
    if held_out(ds, out_dir):
        return 1
    if grid(out_dir):
        return 3  # as ``twbn experiment`` exits when cells did not finish
    print(f"\nWrote the caches, their stats and the results (housing.*.json) in {out_dir}/")
    print(f"Try: twbn check {jkl} {out_dir}/housing.dp.2.json")
    return 0


def held_out(ds, out_dir: Path) -> int:
    """Fold 0 of a 5-fold split: learn on 4/5 of the rows with the cluster-cut ILP
    warm-started by k-G, evaluate on the rest."""
    from twbn.experiments.harness import fold_rows
    from twbn.scoring.likelihood import held_out_log_likelihood
    from twbn.solvers.registry import warm_start_solution

    train_rows, test_rows = fold_rows(ds.n_rows, 5, 0)
    train, test = ds.subset_rows(train_rows), ds.subset_rows(test_rows)
    cache = build_cache(train, score="bic", max_parents=3, pruning="all", progress=False)[0]
    problem = Problem(cache, 2)
    budget = 30.0
    print(f"\nHeld-out: treewidth <= 2 on {train.n_rows} training rows, method cuts warm-started by kg "
          f"({budget:.0f} s budget, 20% to k-G)")
    warm, used = warm_start_solution(problem, "kg", time_limit=budget, seed=0)
    sol = solve(problem, "cuts", time_limit=budget - used, seed=0, warm_start=warm)
    out = out_dir / "housing.cuts.2.json"
    sol.write(problem, str(out))
    errors = verify_result(cache, json.loads(out.read_text()), 2)
    ll, rows = held_out_log_likelihood(train, test, list(cache.names), sol.parents)
    print(f"  k-G start {warm.score:.3f}; cuts: {sol.status}, score {sol.score:.3f}, bound {sol.bound:.3f}, "
          f"gap {100 * sol.gap:.2f}%, width {sol.width}, {sol.wall_time + used:.1f} s, "
          f"{'valid' if not errors else 'INVALID'}")
    print(f"  held-out log-likelihood on {rows} test rows: {ll / rows:.4f} per row")
    return 1 if errors else 0


def grid(out_dir: Path) -> int:
    """The quick experiment config (experiments/configs/quick.toml) into a fresh store,
    and its report; the number of cells that failed or timed out (said on one line)."""
    import shutil

    from twbn.experiments.config import load_config
    from twbn.experiments.harness import run_experiment, work_folder
    from twbn.experiments.report import write_report

    config = load_config(Path(__file__).parent / "configs" / "quick.toml")
    store = out_dir / "quick.sqlite"
    for p in (store, Path(str(store) + "-wal"), Path(str(store) + "-shm")):
        p.unlink(missing_ok=True)
    shutil.rmtree(work_folder(store), ignore_errors=True)
    print(f"\nExperiment grid {config.name!r}: each cell in its own process, results in {store}")
    counts = run_experiment(config, store, jobs=2, log=lambda m: print("  " + m))
    bad = counts.get("failed", 0) + counts.get("timeout", 0)
    if bad and bad == sum(counts.values()):
        print(f"twbn: all {bad} cells of the grid failed or timed out; their errors are in {store}", file=sys.stderr)
        return bad
    written = write_report(store, out_dir / "report")
    print(f"  report: {', '.join(p.name for p in written)} in {out_dir / 'report'}/")
    if bad:
        print(f"twbn: {bad} of {sum(counts.values())} cells of the grid did not finish; their errors are in {store}",
              file=sys.stderr)
    return bad
