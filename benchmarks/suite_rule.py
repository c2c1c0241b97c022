"""Choose a policy on the whole suite, and show it does not hang on one data set.

Issue 84: a default chosen on four data sets sent every n from 101 to 1,040 down a path
none of them exercised. This module takes the records of one ``bench_field --from-data``
queue run under several policies (the default and ``--policy NAME:KEY=VALUE`` variants,
side by side) and chooses among them by one criterion: the mean, over the cells, of each
policy's shortfall from the best network any policy found in that cell, relative to it.
Then the **leave-one-data-set-out** table: for each data set D, the policy chosen on the
suite without D, run on D, beside the policy chosen on the whole suite. A default that
only wins on the sets it was chosen on shows there as a D whose held-out choice differs.

Run: ``python -m benchmarks.suite_rule RECORDS.json [RECORDS.json …] --name NAME``;
writes ``results/suite-rule-NAME.md``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks.common import write_result

__all__ = ["cells", "shortfalls", "choose", "leave_one_out", "main"]


def cells(records: list[dict]) -> dict[tuple, dict[str, float]]:
    """(data, k, budget) → policy → score, over the twbn records with a valid network."""
    out: dict[tuple, dict[str, float]] = {}
    for r in records:
        if r.get("peer") == "etl" or r.get("score") is None or r.get("valid") is False:
            continue
        out.setdefault((r["data"], r["k"], r["budget"]), {})[r.get("policy", "default")] = r["score"]
    return {key: by for key, by in out.items() if len(by) > 1}


def shortfalls(table: dict[tuple, dict[str, float]], policy: str) -> list[float]:
    """Per cell, how far ``policy``'s network is below the best of the cell, in % of it."""
    return [100 * (max(by.values()) - by[policy]) / abs(max(by.values())) for by in table.values() if policy in by]


def choose(table: dict[tuple, dict[str, float]], policies: list[str]) -> str:
    """The policy of least mean shortfall (ties: the earlier one in ``policies``, the
    default first).

    Examples
    --------
    >>> t = {("a", 2, 60): {"default": -100.0, "x": -99.0}, ("b", 2, 60): {"default": -50.0, "x": -50.2}}
    >>> choose(t, ["default", "x"])
    'x'
    """
    def mean(p: str) -> float:
        s = shortfalls(table, p)
        return sum(s) / len(s) if s else float("inf")

    return min(policies, key=lambda p: (mean(p), policies.index(p)))


def leave_one_out(table: dict[tuple, dict[str, float]], policies: list[str]) -> list[dict]:
    """For each data set D: the policy chosen without D's cells, and D's cells under it and
    under the choice on the whole suite."""
    full = choose(table, policies)
    rows = []
    for data in sorted({key[0] for key in table}):
        rest = {key: by for key, by in table.items() if key[0] != data}
        held = choose(rest, policies) if rest else full
        mine = {key: by for key, by in table.items() if key[0] == data}
        rows.append({"data": data, "chosen_without": held, "chosen_full": full,
                     "shortfall_without": shortfalls(mine, held), "shortfall_full": shortfalls(mine, full),
                     "cells": sorted(mine)})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("records", nargs="+", help="bench_field --from-data records (results/field-data-….json)")
    ap.add_argument("--name", required=True, help="the result's name: results/suite-rule-NAME.md")
    args = ap.parse_args()
    records = [r for path in args.records for r in json.loads(Path(path).read_text())]
    table = cells(records)
    policies = list(dict.fromkeys(["default", *sorted({p for by in table.values() for p in by})]))
    full = choose(table, policies)
    lines = [f"# A policy chosen on the whole suite: {', '.join(policies)}", "",
             f"Records: {', '.join(args.records)}. {len(table)} cells (data, k, budget) ran under every policy, "
             "side by side in one queue. Criterion: the least mean shortfall from the cell's best network, in % of "
             f"it. Chosen on the whole suite: **{full}**.", "",
             "| policy | mean shortfall | cells best or tied | worst shortfall |", "|---|---|---|---|"]
    for p in policies:
        s = shortfalls(table, p)
        lines.append(f"| {p} | {sum(s) / len(s):.3f} % | {sum(x <= 1e-9 for x in s)} of {len(s)} | {max(s):.3f} % |")
    lines += ["", "Leave one data set out: the policy chosen on the others, run on it.", "",
              "| data set | chosen without it | its mean shortfall | chosen on the whole suite | its mean shortfall |",
              "|---|---|---|---|---|"]
    for row in leave_one_out(table, policies):
        w, f = row["shortfall_without"], row["shortfall_full"]
        lines.append(f"| {row['data']} | {row['chosen_without']} | {sum(w) / len(w):.3f} % | {row['chosen_full']} | "
                     f"{sum(f) / len(f):.3f} % |")
    print("wrote", write_result(f"suite-rule-{args.name}.md", "\n".join(lines) + "\n"))


if __name__ == "__main__":
    main()
