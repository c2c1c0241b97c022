"""Leave one data set out, for a which-k Policy field: the value chosen without data set D
(most sets within 0.5 % of the best fixed k, then the larger mean margin), beside each
value's margin on D. Issue 84's rule for every default: chosen on the whole suite, and
not by any one set.

Run: ``python -m benchmarks.which_k_rule --runs NAME=JSON [NAME=JSON ...] --name RESULT``;
each JSON a ``bench_which_k`` run; several JSONs under one name (``a=x.json,y.json``) are
averaged per set (repeated runs of the same code: their spread is the noise).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks.common import write_result


def margins(path: Path) -> dict[str, float]:
    """Per data set: auto's test log-likelihood against the best fixed k's, in %."""
    records = json.loads(path.read_text())
    best: dict[str, float] = {}
    for r in records:
        if r["k"] != "auto" and r.get("test_ll") is not None:
            best[r["data"]] = max(best.get(r["data"], -float("inf")), r["test_ll"])
    return {r["data"]: 100 * (r["test_ll"] - best[r["data"]]) / abs(best[r["data"]])
            for r in records if r["k"] == "auto" and r.get("test_ll") is not None}


def chosen(runs: dict[str, dict[str, float]], sets: list[str]) -> str:
    """The value with the most sets within 0.5 %, then the larger mean margin."""
    return max(runs, key=lambda v: (sum(runs[v][s] >= -0.5 for s in sets), sum(runs[v][s] for s in sets) / len(sets)))


def table(runs: dict[str, dict[str, float]]) -> list[str]:
    sets = sorted(set.intersection(*(set(m) for m in runs.values())))
    names = list(runs)
    full = chosen(runs, sets)
    lines = [f"On all {len(sets)} sets the rule chooses **{full}**.", "",
             "| left out | chosen without it | " + " | ".join(f"{v} on it" for v in names) + " |",
             "|---|---|" + "---|" * len(names)]
    for s in sets:
        pick = chosen(runs, [x for x in sets if x != s])
        lines.append(f"| {s} | {pick} | " + " | ".join(f"{runs[v][s]:+.2f} %" for v in names) + " |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", nargs="+", required=True, metavar="NAME=JSON[,JSON]")
    ap.add_argument("--name", required=True)
    args = ap.parse_args()
    runs = {}
    for item in args.runs:
        name, paths = item.split("=", 1)
        each = [margins(Path(p)) for p in paths.split(",")]
        runs[name] = {s: sum(m[s] for m in each) / len(each) for s in set.intersection(*(set(m) for m in each))}
    lines = ["# Leave one data set out: a which-k Policy value chosen without each set", "",
             "auto's test log-likelihood per row against the best of the fixed k = 1…8 (each on the whole 30 s), "
             "in %. Runs: " + "; ".join(f"{i}" for i in args.runs) + ".", "", *table(runs), "",
             f"Regenerate: `python -m benchmarks.which_k_rule --runs {' '.join(args.runs)} --name {args.name}`."]
    print("wrote", write_result(args.name + ".md", "\n".join(lines) + "\n"))


if __name__ == "__main__":
    main()
