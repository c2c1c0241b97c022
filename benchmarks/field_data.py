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
#: Issue 84's suite from data: the 13 DEBD training splits (n = 16-1,556) and 7 bnlearn
#: networks sampled at 5,000 rows, seed 1 (``twbn sample NET.bif.gz --rows 5000 --seed 1 -o
#: NET5000_train.csv.gz``; n = 27-1,041), in increasing n. ``--sets suite`` runs those present.
SUITE = ("nltcs", "msnbc", "insurance5000", "alarm5000", "kdd", "plants", "hepar25000", "baudio", "bnetflix",
         "jester", "tretail", "pumsb_star", "dna", "andes5000", "pigs5000", "book", "link5000", "cwebkb",
         "munin5000", "ad")
#: ETL's variants, both run on every cell (its README: hc-ET adds, removes and reverses
#: arcs; hc-ET-poly only adds).
ETL_VARIANTS = ("hc-et", "hc-et-poly")
#: Seconds after which an ETL command is ended (``--etl-timeout``).
ETL_TIMEOUT = 900.0
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


def _spawn_etl(etl: tuple[Path, Path], data: Path, k: int, variant: str, out: Path,
               core: int | None) -> tuple[subprocess.Popen, float]:
    """ETL itself (``run_etl.py`` under its own interpreter), one core, the file's column
    order, every column at least binary as the DEBD protocol counts them (its README)."""
    python, runner = etl
    # ETL needs minutes at n in the hundreds (517 s at n = 910): ETL_TIMEOUT ends a run, which
    # then has no network (exit 124 in the records)
    cmd = ["timeout", f"{ETL_TIMEOUT:g}", str(python), str(runner), str(data), "--treewidth", str(k), "--variant", variant, "--order", "0",
           "--out", str(out), "--min-arity", "2"]
    pin = None if core is None else (lambda: os.sched_setaffinity(0, {core}))
    return (subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=pin),
            time.monotonic())


def _etl_record(name: str, data: Path, k: int, variant: str, out: Path, ran: dict) -> dict:
    """ETL's network re-scored in twbn's terms by the verifier's textbook count (a constant
    column is one state, as twbn reads it) and checked: acyclic, its order of width <= k."""
    from twbn.formulations.verify import textbook_score, verify_against_data
    from twbn.scoring.data import read_csv

    rec = {"data": name, "k": k, "peer": "etl", "variant": variant, **ran}
    if not out.exists():
        return rec
    got = json.loads(out.read_text())
    ds = read_csv(data)
    pos = {v: i for i, v in enumerate(ds.names)}
    parents = {v: list(got["parents"].get(v, [])) for v in ds.names}
    score = math.fsum(textbook_score(ds.data, pos[v], tuple(sorted(pos[p] for p in ps)), ds.arities)
                      for v, ps in parents.items())
    result = {"variables": list(ds.names), "parents": parents, "score": score, "bound": None, "gap": None,
              "status": "feasible", "treewidth_bound": k, "elimination_order": got["elimination_order"],
              "width": got.get("width_replayed")}
    errors = verify_against_data(ds, result, k)
    rec.update({"score": score, "valid": not errors, "errors": errors[:3], "width": got.get("width_replayed"),
                "learn_s": got.get("learn_seconds"), "bic_etl": got.get("bic_etl")})
    return rec


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
        variants: list[tuple[str, dict]] = (), etl: "tuple[Path, Path] | None" = None) -> list[dict]:
    """Every (set, k, budget) cell under the default policy and each named variant, and
    with ``etl`` (its interpreter, its ``run_etl.py``) both of ETL's variants on every
    (set, k), two commands at a time in one queue, each on a core of its own."""
    work.mkdir(parents=True, exist_ok=True)
    variants = [("default", {}), *variants]
    present = [s for s in sets if (folder / f"{s}_train.csv.gz").exists()]
    queue = [("twbn", s, k, b, v) for b in budgets for s in present for k in ks for v in variants]
    if etl is not None:  # the peer in the same queue, interleaved by set: the same day, the same load
        peer = [("etl", s, k, None, (variant, {})) for s in present for k in ks for variant in ETL_VARIANTS]
        queue = [item for pair in zip(peer, queue) for item in pair] + queue[len(peer):] + peer[len(queue):]
    # the commands first, the verifier after: re-scoring a finished cell's network beside
    # two running commands would take a core from one of them
    finished, running, free = [], [], _cores()
    while queue or running:
        while queue and free:
            who, s, k, b, (vname, policy) = queue.pop(0)
            tag = f"{b:g}s-{vname}" if who == "twbn" else f"etl-{vname}"
            out = work / f"{s}-k{k}-{tag}.json"
            out.unlink(missing_ok=True)
            core = free.pop(0)
            data = folder / f"{s}_train.csv.gz"
            proc, began = _spawn(data, k, b, out, policy, core) if who == "twbn" else \
                _spawn_etl(etl, data, k, vname, out, core)
            running.append((proc, _watch(proc, began), core, who, s, k, b, vname, out))
        done = next((r for r in running if not r[1].is_alive()), None)
        if done is None:
            time.sleep(0.02)
            continue
        running.remove(done)
        proc, watcher, core, who, s, k, b, vname, out = done
        free.append(core)
        ran = _finish(proc, watcher)
        finished.append((who, s, k, b, vname, out, ran))
        print(f"{s} k = {k} {who} {'' if b is None else f'{b:g} s '}{vname}: ended in {ran['command_s']} s "
              f"(exit {ran['exit']})", file=sys.stderr, flush=True)
    records = []
    for who, s, k, b, vname, out, ran in finished:
        data = folder / f"{s}_train.csv.gz"
        rec = {"policy": vname, **_record(s, data, k, b, out, ran)} if who == "twbn" else \
            _etl_record(s, data, k, vname, out, ran)
        records.append(rec)
        print(f"{s} k = {k} {who} {vname}: {rec.get('score')}, valid {rec.get('valid')}", file=sys.stderr, flush=True)
    return records


def etl_best(records: list[dict]) -> dict[tuple[str, int], dict]:
    """Per (set, k), ETL's better valid run of this queue: its score (twbn's terms), its
    variant, and the seconds of both variants' commands."""
    out: dict[tuple[str, int], dict] = {}
    for r in records:
        if r.get("peer") != "etl":
            continue
        cell = out.setdefault((r["data"], r["k"]), {"score": None, "variant": None, "seconds": {}})
        cell["seconds"][r["variant"]] = r["command_s"]
        if r.get("valid") and (cell["score"] is None or r["score"] > cell["score"]):
            cell["score"], cell["variant"] = r["score"], r["variant"]
    return out


def margins(records: list[dict]) -> list[str]:
    """Per budget and policy: cells ahead of ETL's better run of the same queue, the median
    and worst margin, and the commands over limit + 1 s."""
    peer = etl_best(records)
    lines = []
    groups: dict[tuple, list[tuple[float, str]]] = {}
    over: dict[tuple, int] = {}
    for r in records:
        if r.get("peer") == "etl" or r.get("score") is None:
            continue
        key = (r["budget"], r.get("policy", "default"))
        best = (peer.get((r["data"], r["k"])) or {}).get("score")
        if best is not None:
            groups.setdefault(key, []).append((100 * (r["score"] - best) / abs(best), f"{r['data']} k = {r['k']}"))
        over[key] = over.get(key, 0) + (r["command_s"] > r["budget"] + 1)
    for (budget, policy), cells in sorted(groups.items()):
        values = sorted(m for m, _ in cells)
        worst = min(cells)
        median = values[len(values) // 2] if len(values) % 2 else (values[len(values) // 2 - 1] + values[len(values) // 2]) / 2
        lines.append(f"- {budget:g} s, {policy}: ahead of ETL's better variant in **{sum(m > 0 for m in values)} of "
                     f"{len(values)}** cells; median margin {median:+.2f} %, worst {worst[0]:+.2f} % ({worst[1]}); "
                     f"{over[(budget, policy)]} command(s) over limit + 1 s")
    return lines


def monotone(records: list[dict]) -> list[str]:
    """Issue 84.5, more time never a worse network: per policy and pair of budgets in the
    records, the cells whose network at the larger budget scores below the smaller's."""
    cells: dict[tuple, dict[float, float]] = {}
    for r in records:
        if r.get("peer") != "etl" and r.get("score") is not None:
            cells.setdefault((r.get("policy", "default"), r["data"], r["k"]), {})[r["budget"]] = r["score"]
    lines = []
    for policy in dict.fromkeys(p for p, _, _ in cells):
        budgets = sorted({b for (p, _, _), by in cells.items() if p == policy for b in by})
        for lo, hi in zip(budgets, budgets[1:]):
            pairs = [(100 * (by[hi] - by[lo]) / abs(by[lo]), f"{d} k = {k}") for (p, d, k), by in cells.items()
                     if p == policy and lo in by and hi in by]
            if not pairs:
                continue
            worse = sorted(m for m in pairs if m[0] < 0)
            lines.append(f"- {policy}, {hi:g} s against {lo:g} s: below it in **{len(worse)} of {len(pairs)}** cells"
                         + (f" ({', '.join(f'{c} {m:+.2f} %' for m, c in worse)})" if worse else ""))
    return lines


def table(records: list[dict]) -> list[str]:
    peer = etl_best(records)
    lines = ["| data | k | limit (s) | policy | twbn `learn` | ETL's better of hc-ET, hc-ET-poly | "
             "twbn − ETL | margin | ETL command s (hc-ET / poly) | bound (gap) | bound over ETL | "
             "network's families in the scored cache | command (s) | peak MB | valid |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        if r.get("peer") == "etl":
            continue
        cell = peer.get((r["data"], r["k"]))
        if cell is None and (r["data"], r["k"]) in ETL:  # no run of the peer in this queue: the old figures
            etl = ETL[(r["data"], r["k"])]
            cell = {"score": max(etl[0], etl[1]) + CONSTANT_COLUMN.get(r["data"], 0.0), "seconds": {},
                    "variant": "2026-12-02 figures"}
        best = None if cell is None else cell["score"]
        score = r.get("score")
        delta = "—" if best is None or score is None else f"{score - best:+,.0f}"
        margin = "—" if best is None or score is None else f"{100 * (score - best) / abs(best):+.2f} %"
        secs = "—" if not cell or not cell["seconds"] else " / ".join(
            f"{cell['seconds'].get(v, '—')}" for v in ETL_VARIANTS)
        gap = "—" if r.get("gap") is None else f"{r['bound']:,.0f} ({100 * r['gap']:.2f} %)"
        # the most any network of the bound's scope (bound_scope) can be ahead of ETL
        over = "—" if best is None or r.get("bound") is None else f"{100 * (r['bound'] - best) / abs(best):+.2f} %"
        lines.append(f"| {r['data']} | {r['k']} | {r['budget']:g} | {r.get('policy', 'default')} | "
                     f"{'—' if score is None else f'{score:,.1f}'} | {'—' if best is None else f'{best:,.1f}'} | "
                     f"{delta} | {margin} | {secs} | {gap} | {over} | "
                     f"{r.get('families_in_cache') or '—'} | {r['command_s']} | {r['peak_mb']} | {r.get('valid')} |")
    return lines


def from_data(folder: str, sets: list[str], ks: list[int], budgets: list[float],
              variants: list[tuple[str, dict]] = (), records: "list[dict] | None" = None,
              etl: "tuple[Path, Path] | None" = None, tag: str = "") -> None:
    """The grid, its table and records as ``results/field-data-T….md`` (``-policies-NAME…``
    with policy variants, each cell run under the default policy too; ``-etl`` with ETL
    run in the same queue; ``-TAG`` where given); given ``records`` (a run's JSON), only
    the table and records again, named by their budgets and policies."""
    if records is None:
        records = run(Path(folder), sets, ks, budgets, Path("/tmp/twbn-bench-field-data"), list(variants), etl)
        names = [v for v, _ in variants]
    else:
        budgets = sorted({r["budget"] for r in records if r.get("peer") != "etl"})
        names = list(dict.fromkeys(r.get("policy", "default") for r in records
                                   if r.get("peer") != "etl" and r.get("policy", "default") != "default"))
    with_etl = any(r.get("peer") == "etl" for r in records)
    name = "field-data-" + "-".join(f"{b:g}" for b in budgets) + ("-etl" if with_etl else "") + (f"-{tag}" if tag else "")
    if names:
        name += "-policies-" + "-".join(names)
    peer = ("ETL (Benjumeda et al. 2019, ../shared/peers/etl, numpy 1.24.4) ran in the same queue, one core, "
            "both variants on every (set, k), every column at least binary (--min-arity 2, the DEBD protocol); "
            "its networks re-scored in twbn's terms by the same textbook count (a constant column one state) and "
            "checked by the verifier. 'ETL command s' is its whole command (reading, learning, writing)."
            if with_etl else
            "ETL's figures: `ETL` in benchmarks/field_data.py (measured 2026-12-02, 2–6 s a run); plants shifted "
            "by +4.88 into twbn's way of counting its constant column.")
    lines = [f"# `twbn learn DATA --treewidth K --time-limit T` beside ETL, from the training splits", "",
             machine(), "",
             "One command per cell, seed 1, one job, two commands at a time, each pinned to a core of its "
             "own (so that its scoring plans for one process); the networks verified after the last command. "
             "The command's wall time includes start-up, reading and scoring the data, the method and writing. Every "
             "network re-scored from the data by the independent verifier. The bound is the cluster LP's over "
             "the scored cache and the families the search scored from the data (each result's `bound_scope`): "
             "over every network of the data only where the cache holds every family of at most k parents "
             "(k = 2: every pair is scored), else not. 'bound over ETL' is the most a network of that scope "
             "can be ahead of ETL's better run. " + peer, "", *margins(records), "", *monotone(records), "",
             *table(records)]
    print("wrote", write_result(name + ".md", "\n".join(lines) + "\n"))
    write_result(name + ".json", json.dumps(records, indent=1) + "\n")
