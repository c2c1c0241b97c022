"""The field's benchmark from data: the protocol users run, ``twbn learn DATA --treewidth K
--time-limit T``, scoring included, beside ETL's figures on the same training splits.

Data: the DEBD training splits ``plants_train.csv.gz``, ``baudio_train.csv.gz``,
``jester_train.csv.gz`` (and ``munin5000_train.csv.gz`` where the folder has it), read
from ``--from-data DIR``. Each cell is one ``twbn learn`` command in its own process, seed
1, one job, two at a time, each pinned to a core of its own (where the system allows);
networks are verified after the last command has ended; its wall time is the whole command (start-up,
reading, scoring, the method, writing), its memory the process's peak resident set. Every
network is re-scored from the data by the independent verifier
(``formulations/verify.verify_against_data``, a textbook count).

ETL (Benjumeda, Bielza & Larrañaga 2019), measured 2026-12-02 on the same splits, one
core, 2–6 s a run (``ETL`` below: hc-ET and hc-ET-poly, and hc-ET's median over 10 column
orders where it was measured, k = 3, 5, 7). ETL reads every DEBD column as binary; twbn
reads plants' constant column X0 as one state, so every plants network scores
½ ln 17,412 = 4.88 higher in twbn: ETL's plants figures are shown in twbn's terms
(+4.88), so that the two columns compare the same networks' way of counting.

Run: ``python -m benchmarks.bench_field --from-data DIR [--budgets 10 60] [--caches plants
baudio jester] [--ks 2 5 8]``; writes ``results/field-data-T….md`` (about 9 minutes at
10 and 60 s over 3 sets).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from benchmarks.common import machine, write_result

SETS = ("plants", "baudio", "jester", "munin5000")
#: ETL's figures (ETL.md): per (set, k), hc-ET's and hc-ET-poly's BIC, and hc-ET's median
#: over 10 column orders where measured; textbook BIC, arity 2 for every column.
ETL = {
    ("plants", 2): (-259962.7, -259962.7, None),
    ("plants", 5): (-238079.1, -238105.5, -238041.0),
    ("plants", 8): (-233374.7, -233670.1, None),
    ("baudio", 2): (-645128.0, -644756.1, None),
    ("baudio", 5): (-625381.6, -625351.0, -624931.0),
    ("baudio", 8): (-620841.3, -621721.6, None),
    ("jester", 2): (-509480.2, -509460.3, None),
    ("jester", 5): (-495748.5, -495699.4, -495946.0),
    ("jester", 8): (-493097.4, -493633.6, None),
}
#: What twbn adds to every network's BIC where it counts a constant column as one state.
CONSTANT_COLUMN = {"plants": 0.5 * math.log(17412)}


def _spawn(data: Path, k: int, budget: float, out: Path, policy: dict, core: int | None) -> tuple[subprocess.Popen, float]:
    cmd = [sys.executable, "-m", "twbn.experiments.cli", "learn", str(data), "--treewidth", str(k),
           "--time-limit", f"{budget:g}", "--seed", "1", "-o", str(out), "--quiet"]
    for key, value in policy.items():
        cmd += ["--policy", f"{key}={value}"]
    # each command on a core of its own: what "one core" says, and the command then plans
    # its scoring processes for one core (two on a shared core overran munin's 10 s by 2 s)
    pin = None if core is None else (lambda: os.sched_setaffinity(0, {core}))
    return (subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=pin),
            time.monotonic())


def _cores() -> list[int | None]:
    """Two cores to pin the two commands at a time to, where the system lets a process
    choose (else none: the system places them)."""
    try:
        cores = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return [None, None]
    return cores[:2] if len(cores) >= 2 else [None, None]


def _watch(proc: subprocess.Popen, began: float) -> threading.Thread:
    """A thread that reaps ``proc`` the moment it ends and keeps its wall time and peak
    memory: the main thread may be re-scoring another cell's network meanwhile (munin: about
    10 s), which a wait after it would add to this command's time."""
    def reap() -> None:
        _, status, usage = os.wait4(proc.pid, 0)
        proc.reaped = (time.monotonic() - began, os.waitstatus_to_exitcode(status), usage.ru_maxrss)

    t = threading.Thread(target=reap, daemon=True)
    t.start()
    return t


def _finish(proc: subprocess.Popen, watcher: threading.Thread) -> dict:
    watcher.join()
    wall, proc.returncode, rss = proc.reaped
    return {"exit": proc.returncode, "command_s": round(wall, 2), "peak_mb": round(rss / 1024),
            "stderr": proc.stderr.read()[-400:]}


def _record(name: str, data: Path, k: int, budget: float, out: Path, ran: dict) -> dict:
    from twbn.formulations.verify import verify_against_data
    from twbn.scoring.data import read_csv

    rec = {"data": name, "k": k, "budget": budget, **ran}
    if not out.exists():
        return rec
    result = json.loads(out.read_text())
    stats = result.get("stats") or {}
    errors = verify_against_data(read_csv(data), result, k) if result.get("parents") else ["no network"]
    rec.update({"score": result["score"], "bound": result["bound"], "gap": result["gap"], "valid": not errors,
                "errors": errors[:3], "width": result["width"], "method": result["method"],
                "families_in_cache": stats.get("families_in_cache"), "bound_scope": stats.get("bound_scope"),
                "start": (stats.get("warm_start") or {}).get("score"), "wall": result["wall_time"],
                "stages": (stats.get("budget") or {}).get("stages")})
    return rec


def run(folder: Path, sets: list[str], ks: list[int], budgets: list[float], work: Path,
        variants: list[tuple[str, dict]] = ()) -> list[dict]:
    """Every (set, k, budget) cell under the default policy and each named variant, two
    commands at a time."""
    work.mkdir(parents=True, exist_ok=True)
    variants = [("default", {}), *variants]
    queue = [(s, k, b, v) for b in budgets for s in sets for k in ks for v in variants
             if (folder / f"{s}_train.csv.gz").exists()]
    # the commands first, the verifier after: re-scoring a finished cell's network beside
    # two running commands would take a core from one of them
    finished, running, free = [], [], _cores()
    while queue or running:
        while queue and free:
            s, k, b, (vname, policy) = queue.pop(0)
            out = work / f"{s}-k{k}-{b:g}s-{vname}.json"
            out.unlink(missing_ok=True)
            core = free.pop(0)
            proc, began = _spawn(folder / f"{s}_train.csv.gz", k, b, out, policy, core)
            running.append((proc, _watch(proc, began), core, s, k, b, vname, out))
        done = next((r for r in running if not r[1].is_alive()), None)
        if done is None:
            time.sleep(0.02)
            continue
        running.remove(done)
        proc, watcher, core, s, k, b, vname, out = done
        free.append(core)
        ran = _finish(proc, watcher)
        finished.append((s, k, b, vname, out, ran))
        print(f"{s} k = {k} {b:g} s {vname}: ended in {ran['command_s']} s (exit {ran['exit']})",
              file=sys.stderr, flush=True)
    records = []
    for s, k, b, vname, out, ran in finished:
        rec = {"policy": vname, **_record(s, folder / f"{s}_train.csv.gz", k, b, out, ran)}
        records.append(rec)
        print(f"{s} k = {k} {b:g} s {vname}: {rec.get('score')}, valid {rec.get('valid')}", file=sys.stderr,
              flush=True)
    return records


def table(records: list[dict]) -> list[str]:
    lines = ["| data | k | limit (s) | policy | twbn `learn` | ETL's better of hc-ET, hc-ET-poly (twbn's terms) | "
             "twbn − ETL | ETL hc-ET median of 10 orders | bound (gap) | bound over ETL | "
             "network's families in the scored cache | command (s) | peak MB | valid |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        etl = ETL.get((r["data"], r["k"]))
        shift = CONSTANT_COLUMN.get(r["data"], 0.0)
        best = None if etl is None else max(etl[0], etl[1]) + shift
        median = None if etl is None or etl[2] is None else etl[2] + shift
        score = r.get("score")
        delta = "—" if best is None or score is None else f"{score - best:+,.0f}"
        gap = "—" if r.get("gap") is None else f"{r['bound']:,.0f} ({100 * r['gap']:.2f} %)"
        # the most any network of the bound's scope (bound_scope) can be ahead of ETL
        over = "—" if best is None or r.get("bound") is None else f"{100 * (r['bound'] - best) / abs(best):+.2f} %"
        lines.append(f"| {r['data']} | {r['k']} | {r['budget']:g} | {r.get('policy', 'default')} | "
                     f"{'—' if score is None else f'{score:,.1f}'} | {'—' if best is None else f'{best:,.1f}'} | "
                     f"{delta} | {'—' if median is None else f'{median:,.1f}'} | {gap} | {over} | "
                     f"{r.get('families_in_cache') or '—'} | {r['command_s']} | {r['peak_mb']} | {r.get('valid')} |")
    return lines


def from_data(folder: str, sets: list[str], ks: list[int], budgets: list[float],
              variants: list[tuple[str, dict]] = (), records: "list[dict] | None" = None) -> None:
    """The grid, its table and records as ``results/field-data-T….md`` (``-policies-NAME…``
    with policy variants, each cell run under the default policy too); given ``records``
    (a run's JSON), only the table and records again, named by their budgets and policies."""
    if records is None:
        records = run(Path(folder), sets, ks, budgets, Path("/tmp/twbn-bench-field-data"), list(variants))
        names = [v for v, _ in variants]
    else:
        budgets = sorted({r["budget"] for r in records})
        names = list(dict.fromkeys(r.get("policy", "default") for r in records if r.get("policy", "default") != "default"))
    name = "field-data-" + "-".join(f"{b:g}" for b in budgets)
    if names:
        name += "-policies-" + "-".join(names)
    lines = [f"# `twbn learn DATA --treewidth K --time-limit T` beside ETL, from the training splits", "",
             machine(), "",
             "One command per cell, seed 1, one job, two commands at a time, each pinned to a core of its "
             "own (so that its scoring plans for one process); the networks verified after the last command. "
             "The command's wall time includes start-up, reading and scoring the data, the method and writing. Every "
             "network re-scored from the data by the independent verifier. The bound is the cluster LP's over "
             "the scored cache and the families the search scored from the data (each result's `bound_scope`): "
             "over every network of the data only where the cache holds every family of at most k parents "
             "(k = 2: every pair is scored), else not. 'bound over ETL' is the most a network of that scope "
             "can be ahead of ETL's better run. ETL's figures: `ETL` in benchmarks/field_data.py "
             "(measured 2026-12-02, 2–6 s a run); plants shifted by +4.88 into twbn's way of counting its "
             "constant column.", "", *table(records)]
    print("wrote", write_result(name + ".md", "\n".join(lines) + "\n"))
    write_result(name + ".json", json.dumps(records, indent=1) + "\n")
