"""Which k? ``--treewidth auto`` against every fixed k, on held-out test rows.

Issue 86's goal: on the suite's data with their test splits, the chosen k's test
log-likelihood is within 0.5 % of the best fixed k among 1–8 learned with the same total
time, in at least 90 % of the data sets, and never below k = 1's. Per data set: ``twbn learn
TRAIN --treewidth auto --time-limit T`` and ``twbn learn TRAIN --treewidth K --time-limit T``
for each K, two commands at a time, each on a core of its own, seed 1; then each network's
log-likelihood per test row, its tables fitted on the training rows (ess 1, as ``twbn
evaluate``; a test value unseen in training gets the smoothing's pseudo-count alone).

Run: ``python -m benchmarks.bench_which_k --data DIR [--sets nltcs plants ...] [--ks 1 2 ... 8]
[--budget 30]``; writes ``results/which-k-T.md`` and its ``.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import machine, write_result
from benchmarks.field_data import _cores, _finish, _watch

WORK = Path("/tmp/twbn-bench-which-k")
SETS = ("nltcs", "plants", "jester", "baudio", "dna", "tretail")


def _spawn(train: Path, k: str, budget: float, out: Path, core: int | None, policy: list[str] = ()):
    cmd = [sys.executable, "-m", "twbn.experiments.cli", "learn", str(train), "--treewidth", k,
           "--time-limit", f"{budget:g}", "--seed", "1", "-o", str(out), "--quiet"]
    if k == "auto":
        cmd += [arg for setting in policy for arg in ("--policy", setting)]
    pin = None if core is None else (lambda: os.sched_setaffinity(0, {core}))
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=pin), \
        time.monotonic()


def run(folder: Path, sets: list[str], ks: list[int], budget: float, policy: list[str] = ()) -> list[dict]:
    """Every (set, auto or k) command, two at a time; then each network on the test rows."""
    WORK.mkdir(parents=True, exist_ok=True)
    queue = [(s, k) for s in sets for k in ["auto", *map(str, ks)]]
    finished, running, free = [], [], _cores()
    while queue or running:
        while queue and free:
            s, k = queue.pop(0)
            out = WORK / f"{s}-{k}-{budget:g}.json"
            out.unlink(missing_ok=True)
            core = free.pop(0)
            proc, began = _spawn(folder / f"{s}_train.csv.gz", k, budget, out, core, policy)
            running.append((proc, _watch(proc, began), core, s, k, out))
        done = next((r for r in running if not r[1].is_alive()), None)
        if done is None:
            time.sleep(0.05)
            continue
        running.remove(done)
        proc, watcher, core, s, k, out = done
        free.append(core)
        finished.append((s, k, out, _finish(proc, watcher)))
        print(f"{s} {k}: ended", file=sys.stderr, flush=True)
    return [_record(folder, s, k, out, ran) for s, k, out, ran in finished]


def _record(folder: Path, name: str, k: str, out: Path, ran: dict) -> dict:
    import twbn

    rec = {"data": name, "k": k, **ran}
    if not out.exists():
        return rec
    sol = twbn.Solution.from_json(out)
    train, test = folder / f"{name}_train.csv.gz", folder / f"{name}_test.csv.gz"
    rec.update({"score": sol.score, "width": sol.width, "table_size": sol.table_size,
                "test_ll": sol.log_likelihood(train, test, allow_unseen=True), "valid": sol.check(train) == []})
    if k == "auto":
        wk = sol.stats["which_k"]
        rec.update({"chosen": wk["chosen"], "why": wk["why"], "validation": wk["validation"],
                    "curve": [(p["k"], p["held_out"]) for p in wk["curve"]]})
    return rec


def table(records: list[dict]) -> list[str]:
    by = {}
    for r in records:
        by.setdefault(r["data"], {})[r["k"]] = r
    lines = ["| data | chosen k | auto's test LL per row | best fixed k (its LL) | k = 1's LL | auto vs best | "
             "auto vs k = 1 | junction tree (auto / best k) | curve measured at k | command s (auto) | valid |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    near = above_tree = n = 0
    for name, cells in by.items():
        auto = cells.get("auto", {})
        fixed = {int(k): r for k, r in cells.items() if k != "auto" and r.get("test_ll") is not None}
        if auto.get("test_ll") is None or not fixed:
            lines.append(f"| {name} | — | — | — | — | — | — | — | — | {auto.get('command_s')} | — |")
            continue
        n += 1
        best_k = max(fixed, key=lambda k: fixed[k]["test_ll"])
        best, tree = fixed[best_k]["test_ll"], fixed.get(1, {}).get("test_ll")
        rel = (auto["test_ll"] - best) / abs(best)
        near += rel >= -0.005
        above_tree += tree is None or auto["test_ll"] >= tree - 1e-9
        lines.append(f"| {name} | {auto['chosen']} | {auto['test_ll']:.4f} | {best_k} ({best:.4f}) | "
                     f"{'—' if tree is None else f'{tree:.4f}'} | {100 * rel:+.2f} % | "
                     f"{'—' if tree is None else format(auto['test_ll'] - tree, '+.4f')} | "
                     f"{auto.get('table_size'):,} / {fixed[best_k].get('table_size'):,} | "
                     f"{', '.join(str(k) for k, _ in auto['curve'])} | {auto['command_s']} | {auto.get('valid')} |")
    return [f"Within 0.5 % of the best fixed k in **{near} of {n}** data sets; at or above k = 1's in "
            f"**{above_tree} of {n}**.", "", *lines]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, type=Path, help="a folder of SET_train.csv.gz and SET_test.csv.gz")
    ap.add_argument("--sets", nargs="+", default=list(SETS))
    ap.add_argument("--ks", nargs="+", type=int, default=list(range(1, 9)))
    ap.add_argument("--budget", type=float, default=30.0)
    ap.add_argument("--policy", action="append", default=[], metavar="NAME=VALUE",
                    help="a Policy setting for the auto commands (repeatable)")
    ap.add_argument("--fixed-from", type=Path, help="the fixed-k records of an earlier run of this bench "
                    "(its .json), instead of running them: --ks is then ignored")
    ap.add_argument("--name", help="the result's name (default which-k-BUDGET)")
    args = ap.parse_args()
    records = run(args.data, args.sets, [] if args.fixed_from else args.ks, args.budget, args.policy)
    if args.fixed_from:
        records += [r for r in json.loads(args.fixed_from.read_text()) if r["k"] != "auto" and r["data"] in args.sets]
    name = args.name or f"which-k-{args.budget:g}"
    lines = ["# `--treewidth auto` against every fixed k, on the test split", "", machine(), "",
             f"Each command `twbn learn TRAIN --treewidth auto|K --time-limit {args.budget:g} --seed 1`, two at a "
             "time, each on a core of its own. Test log-likelihood per row (natural log), the network's tables "
             "fitted on the training rows with ess 1, as `twbn evaluate`. Every network checked against its "
             "training data by the verifier."
             + (f" auto's commands with `--policy {' --policy '.join(args.policy)}`." if args.policy else "")
             + (f" The fixed k's records from {args.fixed_from.name} (same code, run before)." if args.fixed_from
                else ""), "", *table(records)]
    print("wrote", write_result(name + ".md", "\n".join(lines) + "\n"))
    write_result(name + ".json", json.dumps(records, indent=1) + "\n")


if __name__ == "__main__":
    main()
