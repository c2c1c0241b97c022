"""From the data or from a cache of the same families: the Machado study's UCI sets.

Issue 84's goal: on the bundled UCI sets of the Machado study (mushroom, wdbc, audiology;
BDeu, ESS 1, at most 3 parents), ``twbn learn DATA`` is never worse than ``twbn learn
CACHE.jkl``, where the cache holds the same families (``twbn score DATA --max-parents 3``).
Both commands of a cell run side by side, one on each core, seed 1, one job, with the same
``--time-limit`` (the data's scoring counts in its command's time, the cache's reading in
its). Every network is re-scored from the data by the verifier's textbook BDeu.

Run: ``python -m benchmarks.bench_uci [--sets mushroom wdbc audiology] [--ks 3 4 5]
[--budget 60] [--policy NAME:KEY=VALUE,...]``; writes ``results/uci-data-vs-cache-T.md``
and its ``.json`` (about 6 minutes at 60 s over 9 cells).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import machine, parse_variant, write_result
from benchmarks.field_data import _cores, _finish, _watch

SETS = ("mushroom", "wdbc", "audiology")
KS = (3, 4, 5)
SCORING = ["--score", "bdeu", "--ess", "1", "--max-parents", "3"]
WORK = Path("/tmp/twbn-bench-uci")


def _cache(name: str) -> Path:
    """The set's cache of every family of at most 3 parents, BDeu ESS 1 (not timed)."""
    out = WORK / f"{name}.jkl"
    subprocess.run([sys.executable, "-m", "twbn.experiments.cli", "score", name, *SCORING, "-o", str(out), "-q"],
                   check=True)
    return out


def _spawn(source: str, k: int, budget: float, out: Path, policy: dict, core: int | None):
    import os

    cmd = [sys.executable, "-m", "twbn.experiments.cli", "learn", source, "--treewidth", str(k),
           "--time-limit", f"{budget:g}", "--seed", "1", "-o", str(out), "--quiet"]
    if not source.endswith(".jkl"):
        cmd += SCORING
    for key, value in policy.items():
        cmd += ["--policy", f"{key}={value}"]
    pin = None if core is None else (lambda: os.sched_setaffinity(0, {core}))
    return (subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=pin),
            time.monotonic())


def _record(name: str, k: int, budget: float, source: str, policy: str, out: Path, ran: dict) -> dict:
    import twbn
    from twbn.formulations.verify import verify_against_data
    from twbn.scoring.data import read_csv

    rec = {"data": name, "k": k, "budget": budget, "from": source, "policy": policy, **ran}
    if not out.exists():
        return rec
    result = json.loads(out.read_text())
    errors = verify_against_data(read_csv(twbn.example_path(name)), result, k, score="bdeu", ess=1.0)
    warm = (result.get("stats") or {}).get("warm_start") or {}
    rec.update({"score": result["score"], "bound": result["bound"], "gap": result["gap"], "valid": not errors,
                "errors": errors[:3], "width": result["width"], "method": result["method"],
                "start": warm.get("score"), "start_from": warm.get("from"), "wall": result["wall_time"]})
    return rec


def run(sets: list[str], ks: list[int], budget: float, variants: list[tuple[str, dict]]) -> list[dict]:
    """Each (set, k, policy): from the data and from the cache, side by side."""
    WORK.mkdir(parents=True, exist_ok=True)
    caches = {s: _cache(s) for s in sets}
    # the cache's command once per (set, k): a policy variant changes only the path from data
    queue = [(s, k, src, v) for s in sets for k in ks for v in [("default", {}), *variants]
             for src in (("data", "cache") if v[0] == "default" else ("data",))]
    finished, running, free = [], [], _cores()
    while queue or running:
        while queue and free:
            s, k, src, (vname, policy) = queue.pop(0)
            out = WORK / f"{s}-k{k}-{src}-{vname}.json"
            out.unlink(missing_ok=True)
            core = free.pop(0)
            proc, began = _spawn(s if src == "data" else str(caches[s]), k, budget, out, policy, core)
            running.append((proc, _watch(proc, began), core, s, k, src, vname, out))
        done = next((r for r in running if not r[1].is_alive()), None)
        if done is None:
            time.sleep(0.02)
            continue
        running.remove(done)
        proc, watcher, core, s, k, src, vname, out = done
        free.append(core)
        finished.append((s, k, src, vname, out, _finish(proc, watcher)))
        print(f"{s} k = {k} from {src} {vname}: ended", file=sys.stderr, flush=True)
    return [_record(s, k, budget, src, vname, out, ran) for s, k, src, vname, out, ran in finished]


def table(records: list[dict]) -> list[str]:
    """A row per (set, k, policy): both scores, the difference, both gaps and starts."""
    cells: dict[tuple, dict] = {}
    caches = {(r["data"], r["k"]): r for r in records if r["from"] == "cache"}
    for r in records:
        if r["from"] == "data":
            cells[r["data"], r["k"], r["policy"]] = {"data": r, "cache": caches.get((r["data"], r["k"]), {})}
    lines = ["| data | k | policy | from data | from the cache | data − cache | gap (data / cache) | "
             "start from data (its method) | start from the cache | command s (data / cache) | valid |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    worse = 0
    for (name, k, policy), pair in cells.items():
        d, c = pair.get("data", {}), pair.get("cache", {})
        diff = None if d.get("score") is None or c.get("score") is None else d["score"] - c["score"]
        worse += diff is not None and diff < -1e-6
        fmt = lambda x: "—" if x is None else f"{x:,.1f}"  # noqa: E731
        gap = lambda r: "—" if r.get("gap") is None else f"{100 * r['gap']:.2f} %"  # noqa: E731
        lines.append(f"| {name} | {k} | {policy} | {fmt(d.get('score'))} | {fmt(c.get('score'))} | "
                     f"{'—' if diff is None else f'{diff:+,.1f}'} | {gap(d)} / {gap(c)} | "
                     f"{fmt(d.get('start'))} ({d.get('start_from') or '—'}) | {fmt(c.get('start'))} | "
                     f"{d.get('command_s')} / {c.get('command_s')} | {d.get('valid')} / {c.get('valid')} |")
    return [f"From the data worse than from the cache in **{worse} of {len(cells)}** cells.", "", *lines]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    ap.add_argument("--ks", nargs="+", type=int, default=list(KS))
    ap.add_argument("--budget", type=float, default=60.0)
    ap.add_argument("--policy", action="append", type=parse_variant, default=[], metavar="NAME:KEY=VALUE,...")
    ap.add_argument("--tag", default="")
    args = ap.parse_args()
    records = run(args.sets, args.ks, args.budget, args.policy)
    name = f"uci-data-vs-cache-{args.budget:g}" + (f"-{args.tag}" if args.tag else "")
    lines = ["# `twbn learn DATA` against `twbn learn CACHE.jkl` of the same families (BDeu, ESS 1, "
             "at most 3 parents)", "", machine(), "",
             "Both commands of a cell side by side, one on each core, seed 1, one job, the same time limit "
             "(scoring counts in the data's command, reading the cache in the cache's). Every network re-scored "
             "from the data by the verifier's textbook BDeu.", "", *table(records)]
    print("wrote", write_result(name + ".md", "\n".join(lines) + "\n"))
    write_result(name + ".json", json.dumps(records, indent=1) + "\n")


if __name__ == "__main__":
    main()
