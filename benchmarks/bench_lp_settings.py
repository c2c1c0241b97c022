"""The cluster LP's bound alone under other values of its settings, side by side.

Issue 33.1 asks for a tighter proof at the same budget. Where the bound, not the network,
holds the gap (plants, baudio and jester at k = 5 and 8) the cluster LP of
solvers/relaxation.py ends its share of the budget with violated rows still to add
(``complete`` False in every 60 s cell of the 60 s runs), so an LP that converges sooner
proves more in the same seconds. Its settings are the policy's ``lp_*`` fields (columns
the LP starts with and takes in per pricing round, rows per separation round, when idle
rows leave).

For each anchor cache and k, the LP alone (``cluster_lp_bound``) runs for ``--seconds``
(default 14: its share of a 60 s ``auto`` run at n ≥ 60) with the default settings and
with each ``--variants`` entry (``NAME=VALUE[,NAME=VALUE]``: a twbn.Policy field, or
``highs.OPTION`` for a HiGHS option such as ``highs.simplex_strategy=4``), two
processes at a time (one per core). Any multipliers give a bound (L(λ) is recomputed from
them over all families), so a variant changes how tight the bound is, never whether it
holds. Reported: the bound (lower is
tighter) and its change from the default's, with the LP's rounds, rows and columns.

Run: ``python -m benchmarks.bench_lp_settings --anchors DIR
--variants lp_columns_per_round=20 lp_initial_columns=40 [--caches plants baudio] [--ks 5]
[--seconds 14] [--name STEM]``; results/STEM.md (default ``lp-settings``) and .json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import machine, write_result

CACHES = ("plants", "baudio", "jester", "munin5000")


def _parse(variant: str):
    """``NAME=VALUE[,NAME=VALUE]`` → (the twbn.Policy with those fields, {option: value}
    for ``highs.OPTION=VALUE``); an unknown name is an error naming the nearest field, not
    a silent default."""
    from twbn.solvers.policy import Policy, PolicyError

    fields, options = [], {}
    for part in [] if variant == "default" else variant.split(","):
        name, _, value = part.partition("=")
        if name.startswith("highs.") and value:
            options[name[6:]] = value
        else:
            fields.append(part)
    try:
        return Policy.from_settings(fields), options
    except PolicyError as exc:
        raise SystemExit(f"bench_lp_settings: {exc}") from None


def _typed(value: str) -> int | float | bool | str:
    """A HiGHS option's value from its text: an int, a float, true/false, or the text."""
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(value.lower(), value)


def run_one(path: str, k: int, seconds: float, variant: str) -> dict:
    """Child process: the LP alone on ``path`` at ``k`` with ``variant``'s settings."""
    from twbn.formulations.problem import Problem
    from twbn.scoring.jkl import read_jkl
    from twbn.solvers import relaxation
    from twbn.solvers.models import backends

    policy, options = _parse(variant)
    if options:
        plain = backends.quiet_highs

        def with_options():
            import highspy

            h = plain()
            for option, value in options.items():
                if h.setOptionValue(option, _typed(value)) != highspy.HighsStatus.kOk:
                    raise SystemExit(f"bench_lp_settings: HiGHS refused {option}={value}")
            return h

        backends.quiet_highs = with_options  # the LP imports it from there at each call
    problem = Problem(read_jkl(path), k)
    t0 = time.monotonic()
    bound, stats = relaxation.cluster_lp_bound(problem, time_limit=seconds, policy=policy)
    return {"bound": bound, "call_s": round(time.monotonic() - t0, 2),
            **{key: stats.get(key) for key in ("trivial", "rounds", "rows", "columns", "dropped", "complete")}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--anchors", metavar="DIR", help="folder with caches/NAME.jkl.gz (required)")
    ap.add_argument("--caches", nargs="+", default=list(CACHES), choices=CACHES)
    ap.add_argument("--ks", nargs="+", type=int, default=[2, 5])
    ap.add_argument("--seconds", type=float, default=14.0)
    ap.add_argument("--variants", nargs="+", default=[], metavar="NAME=VALUE[,NAME=VALUE]")
    ap.add_argument("--name", default="lp-settings", help="results/NAME.md and NAME.json")
    ap.add_argument("--one", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        path, k, seconds, variant = args.one
        print(json.dumps(run_one(path, int(k), float(seconds), variant)))
        return
    if not args.anchors:
        ap.error("--anchors DIR is required (the folder with caches/NAME.jkl.gz)")
    if args.seconds <= 0:
        ap.error("--seconds must be positive")
    variants = ["default", *args.variants]
    for v in variants:
        _parse(v)  # every variant checked before the first run
    paths = {c: Path(args.anchors) / "caches" / f"{c}.jkl.gz" for c in args.caches}
    missing = [str(p) for p in paths.values() if not p.is_file()]
    if missing:
        ap.error(f"no cache at {missing[0]}")
    # each cell's variants one after the other, so that side-by-side runs share a cell
    todo = [(c, k, v) for c in args.caches for k in args.ks for v in variants]
    done: dict[tuple, dict] = {}
    running: dict[tuple, subprocess.Popen] = {}
    while todo or running:
        while todo and len(running) < 2:
            c, k, v = key = todo.pop(0)
            running[key] = subprocess.Popen([sys.executable, "-m", __spec__.name, "--one", str(paths[c]), str(k),
                                             str(args.seconds), v], stdout=subprocess.PIPE, text=True)
        finished = next((key for key, p in running.items() if p.poll() is not None), None)
        if finished is None:
            time.sleep(0.1)
            continue
        p = running.pop(finished)
        out = p.communicate()[0].strip().splitlines()
        if p.returncode != 0 or not out:
            raise SystemExit(f"bench_lp_settings: the run {finished} failed (exit {p.returncode})")
        done[finished] = json.loads(out[-1])
        print(finished, done[finished], flush=True)
    head = ["| cache | k | " + " | ".join(variants) + " |", "|---|---|" + "---|" * len(variants)]
    rows, records = [], []
    for c in args.caches:
        for k in args.ks:
            base = done[c, k, "default"]["bound"]
            cols = []
            for v in variants:
                g = done[c, k, v]
                delta = "" if v == "default" else f" ({base - g['bound']:+,.0f})"
                cols.append(f"{g['bound']:,.1f}{delta}<br>{g['rounds']} rounds, {g['rows']} rows, "
                            f"{g['columns']} cols{', complete' if g['complete'] else ''}")
            rows.append(f"| {c} | {k} | " + " | ".join(cols) + " |")
            records.append({"cache": c, "k": k, **{v: done[c, k, v] for v in variants}})
    text = "\n".join([
        f"# The cluster LP alone for {args.seconds:g} s under other settings", "",
        f"Machine: {machine()}. Two LPs at a time (one process per core). Each cell: the bound L(λ) "
        "(lower is tighter; in brackets how much tighter than the default's), the LP's rounds, its rows and "
        "columns at the end.", "", *head, *rows, ""])
    print("wrote", write_result(f"{args.name}.md", text))
    write_result(f"{args.name}.json", json.dumps(records, indent=1) + "\n")


if __name__ == "__main__":
    main()
