"""Pruning benchmark in the layout of de Campos et al. (entropy-based pruning), Tables 2–4.

For each bundled UCI set and DEBD set of $TWBN_DATA and in-degree 3 and 4: how many of the possible
parent sets each rule alone leaves unscored, and the modes `classic` (rules 1, 2, 5),
`entropy` (1, 3, 4, 5) and `all` (1–6) together; plus the rule-5 cap on the number of
parents per variable (Table 2 layout: "cap (number of variables with that cap)").
Sets "unscored" = possible − scored; rule 1 (dominance) only cleans the cache, so it is
reported as the number of sets kept.

Run: ``python -m benchmarks.bench_pruning [--quick]``
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from benchmarks.common import DataMissing, dataset_path, machine, write_result
from twbn.scoring.data import read_csv
from twbn.scoring.local_scores import Scorer
from twbn.scoring.parent_sets import build_cache, parent_cap

SETS = [
    ("zoo", (3, 4)),
    ("breast", (3, 4)),
    ("housing", (3, 4)),
    ("nursery", (3, 4)),
    ("adult", (3, 4)),
    ("letter", (3, 4)),
    ("mushroom", (3, 4)),
    ("wdbc", (3, 4)),
    ("nltcs", (3, 4)),
    ("msnbc", (3, 4)),
    ("plants", (3,)),
]
QUICK = {"zoo", "breast", "housing", "nursery"}
CONFIGS = [("rule 2", (2,)), ("rule 3", (3,)), ("rule 4", (4,)), ("rule 6", (6,)),
           ("classic", "classic"), ("entropy", "entropy"), ("all", "all")]


def caps_text(caps: list[int]) -> str:
    return ", ".join(f"{k} ({v})" for k, v in sorted(Counter(caps).items(), reverse=True))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="only the four smallest sets")
    args = ap.parse_args()
    rows2 = ["| data | n | N | rule-5 cap per variable: cap (variables) |", "|---|---|---|---|"]
    rows3 = [
        "| data | n | N | in-d | possible | " + " | ".join(name for name, _ in CONFIGS) + " | kept (all) | s (all) |",
        "|---|---|---|---|---|" + "---|" * len(CONFIGS) + "---|---|",
    ]
    for name, degrees in SETS:
        if args.quick and name not in QUICK:
            continue
        try:
            path = dataset_path(name)
        except DataMissing as exc:
            print(f"skipping {name}: {exc}")
            continue
        ds = read_csv(path)
        n, N = ds.n_variables, ds.n_rows
        scorer = Scorer(ds, "bic")
        caps = [parent_cap(N, scorer.entropy(x), int(ds.arities[x]), scorer.penalty_c) for x in range(n)]
        rows2.append(f"| {name} | {n} | {N:,} | {caps_text(caps)} |")
        for d in degrees:
            cells, kept, secs, space = [], None, None, None
            for label, rules in CONFIGS:
                t = time.perf_counter()
                cache, st = build_cache(ds, score="bic", max_parents=d, pruning=rules, progress=False)
                el = time.perf_counter() - t
                space = st["space"]
                cells.append(f"{st['space'] - st['scored']:,}")
                if label == "all":
                    kept, secs = st["kept"], el
            rows3.append(f"| {name} | {n} | {N:,} | {d} | {space:,} | " + " | ".join(cells) + f" | {kept:,} | {secs:.2f} |")
            print(rows3[-1], flush=True)
    text = "\n".join([
        "# Pruning benchmark (BIC)",
        "",
        f"Machine: {machine()}. Data: the bundled UCI sets (discretised) and the DEBD training splits of the data folder.",
        "",
        "## Table 2 layout: rule 5, the most parents a variable can have",
        "",
        *rows2,
        "",
        "## Tables 3–4 layout: parent sets left unscored, by rule alone and by mode",
        "",
        "Each cell counts possible − scored sets; rules 2–4 and 6 alone, then the modes.",
        "",
        *rows3,
        "",
    ])
    print(text)
    print("wrote", write_result("pruning.md" if not args.quick else "pruning-quick.md", text))


if __name__ == "__main__":
    main()
