"""The field's benchmark, first part: twbn's k-G and k-MAX beside BLIP's on the anchor caches.

Caches: the four anchor caches (plants n = 69, baudio and jester n = 100, munin5000
n = 1,041; made by ``twbn score --approximate --max-parents 4``), read from
``--anchors DIR`` (``DIR/caches/NAME.jkl.gz`` + ``NAME.jkl.names``). For each cache and
k = 2, 5, 8, twbn's ``kg`` and ``kmax`` run side by side, one process per core, for
``--budget`` seconds (BLIP's runs: 60 s, one core each, the same pairing), seed 1; then
``auto`` (what ``twbn learn`` runs: k-MAX, then ``improve``) beside ``improve`` from a k-G
start. Every
network is checked by the verifier. Reported beside BLIP's figures on the same files
(``BLIP`` below, measured 2026-11-24 with BLIP's 2019 snapshot, parent sets up to size k
allowed, re-scored and checked independently): scores, ΔBIC against BLIP's better method
(> 10: "very strong" in Raftery's bands), and iterations per second as ratios.

Run: ``python -m benchmarks.bench_field --anchors DIR [--budget 60]
[--caches plants baudio] [--ks 2 5 8]`` (about 25 minutes at 60 s). ``--scaling``: auto
on one job at the budget and twice it, beside two jobs at the budget (field-scaling.md,
about 36 minutes at 60 s); with ``--seed S`` every run takes seed S instead of 1
(field-scaling-seedS…md; with ``--budgets``, field-budgets…-seedS…md). ``--budgets T …
--policy NAME:KEY=VALUE,…``: every cell also under each named twbn.Policy variant, in the
same queue as the default policy, the difference in each cell
(field-budgets-T-policies-NAME….md): two policies side by side in one checkout.
``--from-data DIR``: the protocol users run, ``twbn learn DATA`` from the training splits,
scoring included, beside ETL's figures (benchmarks/field_data.py, field-data-T….md).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import machine, parse_variant, write_result

CACHES = ("plants", "baudio", "jester", "munin5000")
KS = (2, 5, 8)
#: ``--others``: the rest of the registry's methods for a bounded problem, two at a time.
OTHER_PAIRS = (("kastar", "s2"), ("s2plus", "cuts"), ("cp", "milp"))
#: Options that keep a method on one core, as BLIP's runs were.
ONE_CORE = {"cp": {"workers": 1}}
#: BLIP's k-G and k-MAX on the anchor caches, 60 s, one core: (score, iterations).
BLIP = {
    ("plants", 2): {"kg": (-271052.794, 355_711), "kmax": (-261873.876, 19_936)},
    ("plants", 5): {"kg": (-261461.563, 4_084), "kmax": (-250857.307, 481)},
    ("plants", 8): {"kg": (-255828.344, 2_424), "kmax": (-248075.660, 349)},
    ("baudio", 2): {"kg": (-649311.291, 210_628), "kmax": (-644440.893, 8_788)},
    ("baudio", 5): {"kg": (-636609.975, 1_061), "kmax": (-631838.069, 93)},
    ("baudio", 8): {"kg": (-634446.556, 639), "kmax": (-630524.945, 65)},
    ("jester", 2): {"kg": (-510999.652, 175_500), "kmax": (-508390.490, 6_571)},
    ("jester", 5): {"kg": (-501831.043, 919), "kmax": (-498000.027, 58)},
    ("jester", 8): {"kg": (-501190.470, 556), "kmax": (-496997.295, 39)},
    ("munin5000", 2): {"kg": (-1064870.351, 18_017), "kmax": (-1032510.468, 464)},
    ("munin5000", 5): {"kg": (-1063466.644, 5_905), "kmax": (-1029923.129, 204)},
    ("munin5000", 8): {"kg": (-1065016.213, 2_472), "kmax": (-1029776.031, 109)},
}


def run_one(cache_path: str, k: int, method: str, budget: float, jobs: int = 1, seed: int = 1,
            policy: dict | None = None) -> dict:
    """Child process: load the cache, run ``method`` (``auto`` as ``twbn learn`` does, on
    ``jobs`` processes; ``improve-kg``: ``improve`` from a k-G start on its share) with
    ``seed`` under the twbn.Policy fields ``policy`` changes, verify; one JSON line."""
    import resource

    from twbn.formulations.graphs import degeneracy, moral_graph
    from twbn.formulations.problem import Problem
    from twbn.formulations.verify import verify_result
    from twbn.scoring.jkl import read_jkl
    from twbn.solvers.policy import Policy
    from twbn.solvers.registry import run, solve

    policy = Policy.from_mapping(policy or {})
    t0 = time.monotonic()
    cache = read_jkl(cache_path)
    load = time.monotonic() - t0
    problem = Problem(cache, k)  # k None: unbounded
    if method.startswith("lp"):  # the cluster LP alone, with the width rows (W) or without
        from twbn.solvers.relaxation import cluster_lp_bound

        bound, stats = cluster_lp_bound(problem, time_limit=budget, width=method == "lp-width", policy=policy)
        return {"method": method, "bound": bound, **stats, "call_s": round(time.monotonic() - t0 - load, 2)}
    if method == "auto":
        sol = run(problem, "auto", time_limit=budget, seed=seed, jobs=jobs, policy=policy)
    elif method == "improve-kg":
        sol = run(problem, "improve", time_limit=budget, seed=seed, warm_start="kg", policy=policy)
    else:
        sol = solve(problem, method, time_limit=budget, seed=seed, options=ONE_CORE.get(method), policy=policy)
    wall = time.monotonic() - t0 - load
    errors = verify_result(cache, sol.to_json(problem), k) if sol.parents is not None else None
    lp = sol.stats.get("lp_bound", {})
    # a d-degenerate moral graph meets the edge count of every width row at k >= d, so those
    # rows of the cluster LP cannot cut it off (docs/auto.md, "Where issue 33's goals stand")
    moral = moral_graph(sol.parents) if sol.parents is not None else None
    return {"method": method, "score": sol.score, "bound": sol.bound, "status": sol.status,
            "trivial": lp.get("trivial"), "bound_source": sol.stats.get("bound_source"),
            "iterations": sol.stats.get("iterations"), "pieces": sol.stats.get("pieces"),
            "improvements": sol.stats.get("improvements"), "stale": sol.stats.get("stale"), "jobs": jobs,
            "redrawn": sol.stats.get("redrawn"), "piece_time_limit": sol.stats.get("piece_time_limit"),
            "overrun": sol.stats.get("overrun"), "stalled": sol.stats.get("stalled"),
            "restarts": sol.stats.get("restarts"), "first_score": sol.stats.get("first_score"),
            "resumed": sol.stats.get("resumed"), "stages": (sol.stats.get("budget") or {}).get("stages"),
            "trajectory": [[p["time"], p.get("incumbent"), p.get("bound")] for p in sol.trajectory],
            "lp": {key: lp.get(key) for key in ("rounds", "rows", "seconds", "complete", "columns")},
            "wall": sol.wall_time, "call_s": round(wall, 2),
            "load_s": round(load, 1), "valid": None if errors is None else not errors, "width": sol.width,
            "reason": sol.stats.get("reason"), "engine_bound": _engine_bound(sol), "policy": policy.changed(),
            "moral_edges": None if moral is None else sum(map(len, moral.values())) // 2,
            "degeneracy": None if moral is None else degeneracy(moral),
            "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:,.1f}"


def _engine_bound(sol) -> float | None:
    """SCIP's root bound of a ``cuts`` run, where it is a bound worth the name (below the
    trivial one: before its first LP is solved SCIP reports the objective's upper end)."""
    rb, trivial = sol.stats.get("root_bound"), sol.stats.get("lp_bound", {}).get("trivial")
    return rb if rb is not None and trivial is not None and rb < trivial else None


def _spawn_one(path: Path, k, method: str, budget: float, jobs: int, seed: int = 1,
               policy: dict | None = None) -> subprocess.Popen:
    """One ``--one`` run in its own process, with ``seed`` and the policy fields ``policy``
    changes; its JSON record is the last line it prints."""
    return subprocess.Popen([sys.executable, "-m", __spec__.name, "--one", str(path), str(k).lower(), method,
                             str(budget), str(jobs), str(seed), json.dumps(policy or {})],
                            stdout=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[1])


def _pair(path: Path, k: int, methods: tuple[str, ...], budget: float | tuple[float, ...], jobs: int = 1,
          seed: int = 1) -> dict:
    """Runs side by side (two: one process per core; one with 2 jobs: both cores), each
    ``budget`` seconds (or one budget per method)."""
    budgets = budget if isinstance(budget, tuple) else (budget,) * len(methods)
    procs = {m: _spawn_one(path, k, m.split("@")[0], b, jobs, seed=seed) for m, b in zip(methods, budgets)}
    return {m: json.loads(p.communicate()[0].strip().splitlines()[-1]) for m, p in procs.items()}


def raftery(delta: float) -> str:
    """Raftery's (1995) bands for a BIC difference (here: twbn minus BLIP's better)."""
    band = "very strong" if abs(delta) > 10 else "strong" if abs(delta) > 6 else "positive" if abs(delta) > 2 else "weak"
    return band if abs(delta) <= 2 else f"{band} {'for twbn' if delta > 0 else 'for BLIP'}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--anchors", metavar="DIR", help="folder with caches/NAME.jkl.gz (required)")
    ap.add_argument("--budget", type=float, default=60.0)
    ap.add_argument("--caches", nargs="+", default=list(CACHES), choices=CACHES)
    ap.add_argument("--ks", nargs="+", type=int, default=list(KS))
    ap.add_argument("--others", action="store_true",
                    help="run the other methods (kastar, s2, s2plus, cuts, cp, milp) instead; field-others.md")
    ap.add_argument("--unbounded", action="store_true",
                    help="cuts beside improve without a bound instead (use --budget 300); field-unbounded.md")
    ap.add_argument("--scaling", action="store_true",
                    help="auto on 1 job at the budget and at twice it, side by side, then on 2 jobs at the budget; "
                         "field-scaling.md")
    ap.add_argument("--width-rows", action="store_true",
                    help="the cluster LP alone for 30 %% of the budget, with and without the width rows, side by "
                         "side; field-width-rows.md")
    ap.add_argument("--budgets", nargs="+", type=float, metavar="S",
                    help="auto on one job at each of these budgets (two runs at a time), e.g. 60 300 1800; "
                         "field-budgets.md")
    ap.add_argument("--policy", action="append", type=parse_variant, metavar="NAME:KEY=VALUE,...",
                    help="with --budgets: every run also under this named policy variant (twbn.Policy fields, "
                         "`twbn policy` lists them), in the same queue, beside the default policy (repeatable); "
                         "field-budgets-T-policies-NAMES.md")
    ap.add_argument("--records", metavar="FILE",
                    help="with --budgets: keep each finished run in this JSON-lines file as it ends, and skip "
                         "the runs already in it (a long queue over several sittings)")
    ap.add_argument("--with-json", metavar="FILE",
                    help="with --budgets: an earlier run's field-budgets JSON, its budgets shown beside this run's "
                         "(field-budgets-T1-T2-….md)")
    ap.add_argument("--from-json", metavar="FILE", help="with --scaling: the table from a run's JSON records")
    ap.add_argument("--seed", type=int, default=1,
                    help="with --scaling or --budgets: the seed of every run (default 1, as the other tables); "
                         "results name it when it is not 1")
    ap.add_argument("--from-data", metavar="DIR",
                    help="the protocol users run instead: `twbn learn DIR/SET_train.csv.gz --treewidth K "
                         "--time-limit T` per cell (T: --budgets, default 10 60), beside ETL's figures; "
                         "field-data-T….md (benchmarks/field_data.py); with --from-json FILE, the table again from "
                         "that run's records, without running")
    ap.add_argument("--sets", nargs="+", metavar="SET",
                    help="with --from-data: the training splits to run (DIR/SET_train.csv.gz), or 'suite' for "
                         "issue 84's 20 sets (benchmarks/field_data.SUITE) the folder holds; default: --caches")
    ap.add_argument("--etl", nargs=2, metavar=("PYTHON", "RUN_ETL"),
                    help="with --from-data: run ETL itself in the same queue, both variants per (set, k): its "
                         "interpreter (DEST/bin/python after its install.sh) and its run_etl.py")
    ap.add_argument("--etl-timeout", type=float, default=900.0, metavar="S",
                    help="with --etl: end an ETL command after S seconds (default 900); it then has no network")
    ap.add_argument("--tag", default="", help="with --from-data: a word added to the result's name")
    ap.add_argument("--one", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.from_data:
        import benchmarks.field_data as field_data
        from benchmarks.field_data import SUITE, from_data

        field_data.ETL_TIMEOUT = args.etl_timeout

        records = json.loads(Path(args.from_json).read_text()) if args.from_json else None
        sets = list(SUITE) if args.sets == ["suite"] else (args.sets or args.caches)
        etl = None if args.etl is None else (Path(args.etl[0]), Path(args.etl[1]))
        from_data(args.from_data, sets, args.ks, args.budgets or [10.0, 60.0], args.policy or [], records, etl,
                  args.tag)
        return
    if args.one:
        k = None if args.one[1] == "none" else int(args.one[1])
        print(json.dumps(run_one(args.one[0], k, args.one[2], float(args.one[3]), int(args.one[4]),
                                 int(args.one[5]) if len(args.one) > 5 else 1,
                                 json.loads(args.one[6]) if len(args.one) > 6 else None)))
        return
    if args.anchors is None:
        ap.error("--anchors DIR is required")
    if args.policy and not args.budgets and not args.from_data:
        ap.error("--policy is for --budgets and --from-data")
    if args.seed != 1 and not (args.scaling or args.budgets):
        ap.error("--seed is for --scaling and --budgets (the other tables are seed 1's)")
    if args.others:
        others(args)
        return
    if args.unbounded:
        unbounded(args)
        return
    if args.scaling:
        scaling(args)
        return
    if args.width_rows:
        width_rows(args)
        return
    if args.budgets:
        budgets(args)
        return
    head = ["| cache | k | BLIP k-G | BLIP k-MAX | twbn kg | twbn kmax | twbn improve (k-G start) | twbn auto | "
            "ΔBIC auto − best BLIP | Raftery | kg it/s ÷ BLIP k-G | kmax it/s ÷ BLIP k-MAX | valid |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    bound_rows = ["| cache | k | trivial bound U | twbn LP bound | LP bound's gain over U | auto's gap to LP bound | "
                  "W vs U (auto) | W vs U (BLIP best) | W vs LP bound (auto) | W vs LP bound (BLIP best) | "
                  "pieces (improved) | peak memory (MB) |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    rows, wins, worse, records = [], 0, 0, []
    for name in args.caches:
        path = Path(args.anchors) / "caches" / f"{name}.jkl.gz"
        for k in args.ks:
            got = {**_pair(path, k, ("kg", "kmax"), args.budget), **_pair(path, k, ("auto", "improve-kg"), args.budget)}
            ref = BLIP[name, k]
            best_blip = max(ref["kg"][0], ref["kmax"][0])
            auto = got["auto"]
            delta = auto["score"] - best_blip
            wins += delta > 10
            worse += delta < 0
            rate = {m: got[m]["iterations"] / max(got[m]["wall"], 1e-9) / (ref[m][1] / 60.0) for m in ("kg", "kmax")}
            valid = all(g["valid"] for g in got.values())
            rows.append(f"| {name} | {k} | {ref['kg'][0]:,.1f} | {ref['kmax'][0]:,.1f} | {got['kg']['score']:,.1f} | "
                        f"{got['kmax']['score']:,.1f} | {got['improve-kg']['score']:,.1f} | **{auto['score']:,.1f}** | "
                        f"{delta:+,.1f} | {raftery(delta)} | {rate['kg']:.2f}× | {rate['kmax']:.2f}× | "
                        f"{'yes' if valid else 'NO'} |")
            bound = min(g["bound"] for g in got.values())
            u = auto["trivial"] if auto["trivial"] is not None else max(g["bound"] for g in got.values())
            bound_rows.append(
                f"| {name} | {k} | {u:,.1f} | {bound:,.1f} | {u - bound:,.1f} | "
                f"{(bound - auto['score']) / abs(auto['score']):.2%} | {(u - auto['score']) / abs(u):.4f} | "
                f"{(u - best_blip) / abs(u):.4f} | {(bound - auto['score']) / abs(bound):.4f} | "
                f"{(bound - best_blip) / abs(bound):.4f} | {auto['pieces']} ({auto['improvements']}) | "
                f"{auto['max_rss_mb']} |")
            records.append({"cache": name, "k": k, **{m: g for m, g in got.items()}})
            print(rows[-1], flush=True)
            print(bound_rows[-1], flush=True)
    cells = len(rows)
    from twbn.solvers.policy import DEFAULT_POLICY as P

    text = "\n".join([
        "# The field's benchmark: twbn beside BLIP's k-G and k-MAX (anchor caches)", "",
        f"Machine: {machine()}. {args.budget:g} s per run, seed 1, two twbn runs side by side (one process per "
        "core): kg ‖ kmax, then auto ‖ improve from a k-G start. `auto` is what `twbn learn` runs above n = 40: "
        f"k-MAX on {P.improve_start_share:.0%} of the budget, then `improve` (pieces of the network re-solved "
        f"exactly), {P.large_bound_share:.0%} kept for the LP bound (n ≥ {P.large_bound_n}). BLIP's figures: the same caches, 60 s, one core per run, measured 2026-11-24. Iterations "
        "per second: twbn's over its own wall time (cache loading excluded), BLIP's over 60 s (JVM start and "
        "loading included). Every twbn network was checked by the verifier.", "",
        f"**auto beats BLIP's better method by ΔBIC > 10 (\"very strong\", Raftery 1995) in {wins} of {cells} "
        f"cells; worse than BLIP in {worse}.**", "", *head, *rows, "",
        "## Bounds and W-scores", "",
        "U: the sum of each variable's best cached score (the trivial bound). LP bound: the best of the twbn "
        f"runs' cluster-LP bounds (solvers/relaxation.py, {P.large_bound_share:.0%} of a run's budget), a proof "
        "for every network of the cache's parent sets at this k, BLIP's included (a network with a family outside "
        "the cache may beat it). W = (bound − score)/|bound|.", "", *bound_rows, ""])
    out = "field.md" if set(args.caches) == set(CACHES) and set(args.ks) == set(KS) else \
        f"field-{'-'.join(args.caches)}-k{'-'.join(map(str, args.ks))}.md"
    print("wrote", write_result(out, text))
    write_result(out.replace(".md", ".json"), json.dumps(records, indent=1) + "\n")


def _cell(got: dict, limit: float) -> str:
    """One method's score, or why it has none; † marks a run past its limit by > 1 s."""
    late = " †" if got["call_s"] > limit + 1.0 else ""
    if got["score"] is None:
        return f"— ({got['status']}){late}"
    mark = "" if got["valid"] else " INVALID"
    return f"{got['score']:,.1f}{mark}{late}"


def others(args) -> None:
    """The registry's other methods on the same cells, two at a time; beside BLIP's best
    and what ``auto`` reached in field.json (when it is there)."""
    from benchmarks.common import RESULTS

    auto = {}
    if (RESULTS / "field.json").is_file():
        auto = {(r["cache"], r["k"]): r["auto"]["score"] for r in json.loads((RESULTS / "field.json").read_text())}
    methods = [m for pair in OTHER_PAIRS for m in pair]
    head = ["| cache | k | BLIP best | " + " | ".join(methods) + " | auto (field.md) | longest call (s) |",
            "|---|---|---|" + "---|" * len(methods) + "---|---|"]
    bound_head = ["| cache | k | trivial U | " + " | ".join(methods) + " |", "|---|---|---|" + "---|" * len(methods)]
    rows, bound_rows, records = [], [], []
    for name in args.caches:
        path = Path(args.anchors) / "caches" / f"{name}.jkl.gz"
        for k in args.ks:
            got = {}
            for pair in OTHER_PAIRS:
                got.update(_pair(path, k, pair, args.budget))
            ref = BLIP[name, k]
            best_blip = max(ref["kg"][0], ref["kmax"][0])
            a = auto.get((name, k))
            rows.append(f"| {name} | {k} | {best_blip:,.1f} | " + " | ".join(_cell(got[m], args.budget) for m in methods)
                        + f" | {'' if a is None else f'{a:,.1f}'} | {max(g['call_s'] for g in got.values()):.1f} |")
            u = next((g["trivial"] for g in got.values() if g["trivial"] is not None), None)
            bound_rows.append(f"| {name} | {k} | {'' if u is None else f'{u:,.1f}'} | " + " | ".join(
                "—" if got[m]["bound"] is None else f"{got[m]['bound']:,.1f}" for m in methods) + " |")
            records.append({"cache": name, "k": k, **got})
            print(rows[-1], flush=True)
    text = "\n".join([
        "# The field's benchmark, the other methods: k-A*, S2, S2+, cuts, cp and milp on the anchor caches", "",
        f"Machine: {machine()}. {args.budget:g} s per run, seed 1, two runs side by side (one process per core; "
        "`cp` with one worker): " + ", ".join(" ‖ ".join(p) for p in OTHER_PAIRS) + ". Every network was checked "
        "by the verifier (INVALID would say otherwise). — : no network, with the status. † : the call took more "
        "than its limit + 1 s (cache loading excluded). BLIP best: the better of BLIP's k-G and k-MAX in 60 s.", "",
        *head, *rows, "", "## Bounds", "", "Each run's reported bound (the cluster LP's where the method's own is "
        "weaker; U where neither beats it).", "", *bound_head, *bound_rows, ""])
    out = "field-others.md" if set(args.caches) == set(CACHES) and set(args.ks) == set(KS) else \
        f"field-others-{'-'.join(args.caches)}-k{'-'.join(map(str, args.ks))}.md"
    print("wrote", write_result(out, text))
    write_result(out.replace(".md", ".json"), json.dumps(records, indent=1) + "\n")


def _write(stem: str, caches, ks, text: str, records: list | None) -> None:
    """``STEM.md`` (and ``STEM.json`` with ``records``) for the whole grid, or
    ``STEM-CACHES-kKS.md`` for part of it, in the results folder."""
    out = f"{stem}.md" if set(caches) == set(CACHES) and set(ks) == set(KS) else \
        f"{stem}-{'-'.join(caches)}-k{'-'.join(map(str, ks))}.md"
    print("wrote", write_result(out, text))
    if records is not None:
        write_result(out.replace(".md", ".json"), json.dumps(records, indent=1) + "\n")


def _gap(got: dict) -> str:
    return "—" if got["bound"] is None else f"{_gap_value(got):.2%}"


def _gap_value(got: dict) -> float:
    return (got["bound"] - got["score"]) / abs(got["score"])


def scaling(args) -> None:
    """Issue 33.2: ``auto`` on one job at the budget B and at 2B side by side (one core
    each), then on two jobs at B (both cores): does a second core buy what a second
    budget does? ``--from-json FILE``: the table again from a run's records."""
    b = args.budget
    if args.from_json:
        records = json.loads(Path(args.from_json).read_text())
    else:
        records = []
        for name in args.caches:
            path = Path(args.anchors) / "caches" / f"{name}.jkl.gz"
            for k in args.ks:
                got = _pair(path, k, ("auto@1", "auto@2B"), (b, 2 * b), seed=args.seed)
                got["auto@2jobs"] = _pair(path, k, ("auto",), b, jobs=2, seed=args.seed)["auto"]
                records.append({"cache": name, "k": k, "seed": args.seed, **got})
                print(_scaling_row(records[-1]), flush=True)
    rows = [_scaling_row(r) for r in records]
    seed = records[0].get("seed", 1) if records else args.seed
    ahead = sum(r["auto@2jobs"]["score"] >= r["auto@2B"]["score"] for r in records)
    beyond = sum(r["auto@2jobs"]["score"] >= r["auto@1"]["score"] for r in records)
    head = [f"| cache | k | BLIP best (60 s) | 1 job, {b:g} s | gap | 1 job, {2 * b:g} s | gap | 2 jobs, {b:g} s | gap | "
            f"2 jobs − 1 job at {2 * b:g} s | pieces (improved, stale): 1 job {b:g} s / {2 * b:g} s / 2 jobs | "
            "longest call (s) | valid |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    text = "\n".join([
        f"# A second core against a second budget: auto on 1 job at {b:g} s and {2 * b:g} s, and on 2 jobs at {b:g} s",
        "", f"Machine: {machine()}. Seed {seed}. The two one-job runs side by side (one process per core), then the "
        "two-job run alone (both cores). Above n = 40 `auto` runs `improve` from k-MAX; with 2 jobs the cluster "
        "LP's bound runs beside it in a process of its own for its share of both jobs' time (30 % × 2 × the "
        "budget), then that job joins `improve`'s pieces; `improve` has the other job and the LP's 30 % share "
        "(solvers/parallel.py, `BoundAlone`). Every network was checked "
        "by the verifier. Gap: to each "
        "run's own proved bound. Longest call: the budget's runs, then the doubled one. BLIP best: the better "
        "of BLIP's k-G and k-MAX, 60 s, one core.", "",
        f"**2 jobs at {b:g} s reach at least 1 job at {2 * b:g} s in {ahead} of {len(rows)} cells, and at least 1 "
        f"job at {b:g} s in {beyond}.**", "", *head, *rows, ""])
    caches = sorted({r["cache"] for r in records}, key=CACHES.index)
    ks = sorted({r["k"] for r in records})
    _write("field-scaling" if seed == 1 else f"field-scaling-seed{seed}", caches, ks, text,
           None if args.from_json else records)


def _scaling_row(r: dict) -> str:
    one, long, two = r["auto@1"], r["auto@2B"], r["auto@2jobs"]
    pieces = " / ".join(f"{g['pieces']} ({g['improvements']}, {g.get('stale') or 0})" for g in (one, long, two))
    blip = max(BLIP[r["cache"], r["k"]]["kg"][0], BLIP[r["cache"], r["k"]]["kmax"][0])
    return (f"| {r['cache']} | {r['k']} | {blip:,.1f} | {one['score']:,.1f} | {_gap(one)} | {long['score']:,.1f} | "
            f"{_gap(long)} | **{two['score']:,.1f}** | {_gap(two)} | {two['score'] - long['score']:+,.1f} | {pieces} | "
            f"{max(one['call_s'], two['call_s']):.1f} / {long['call_s']:.1f} | "
            f"{'yes' if all(g['valid'] for k, g in r.items() if k.startswith('auto')) else 'NO'} |")


def _two_at_a_time(runs: list[tuple], records: Path | None = None, seed: int = 1) -> dict:
    """``--one`` runs (key, path, k, method, budget[, policy fields]), longest first, always
    two at a time (one process per core) until all are done, each with ``seed``; their
    records by key.

    ``records``: a JSON-lines file that keeps every finished run (key and record) as it
    ends, so that a queue of hours can stop and go on later: runs already in it are not
    run again."""
    out = {}
    if records is not None and records.is_file():
        for line in records.read_text().splitlines():
            if line.strip():
                got = json.loads(line)
                out[tuple(got["key"])] = got["record"]
    todo = sorted((r for r in runs if r[0] not in out), key=lambda r: -r[4])
    if records is not None:
        print(f"{len(runs) - len(todo)} of {len(runs)} runs already in {records}", flush=True)
    running: dict = {}
    while todo or running:
        while todo and len(running) < 2:
            key, path, k, method, budget, *policy = todo.pop(0)
            running[key] = _spawn_one(path, k, method, budget, 1, seed=seed, policy=policy[0] if policy else None)
        finished = next((key for key, p in running.items() if p.poll() is not None), None)
        if finished is None:
            time.sleep(0.2)
            continue
        out[finished] = json.loads(running.pop(finished).communicate()[0].strip().splitlines()[-1])
        if records is not None:
            with records.open("a") as f:
                f.write(json.dumps({"key": list(finished), "record": out[finished]}) + "\n")
        print(f"done {finished}", flush=True)
    return out


def budgets(args) -> None:
    """Issue 33.3: ``auto`` (one job) at several budgets per cell, two runs at a time (one
    process per core; the longest first, so that both cores stay busy): does the network
    keep improving and the bound keep tightening? With ``--policy NAME:KEY=VALUE,...``
    (repeatable), every cell also runs under each named policy variant, in the same queue,
    beside the default policy: two policies compared in one checkout and one run."""
    times = sorted(args.budgets)
    variants = dict(args.policy or [])
    if "default" in variants:
        raise SystemExit("bench_field: 'default' names the default policy; give the variant another name")
    earlier = {}
    if args.with_json:
        if variants:
            raise SystemExit("bench_field: --with-json and --policy do not go together")
        for r in json.loads(Path(args.with_json).read_text()):
            earlier[r["cache"], r["k"]] = {key: got for key, got in r.items() if key.startswith("auto@")}
    ran = times
    times = sorted(set(times) | {float(key[5:]) for got in earlier.values() for key in got})
    names = ["default", *variants]
    if not variants:
        head = ["| cache | k | BLIP best (60 s) | " + " | ".join(f"{t:g} s: score | gap" for t in times)
                + " | pieces (improved, redrawn) |", "|---|---|---|" + "---|---|" * len(times) + "---|"]
    else:
        head = ["| cache | k | BLIP best (60 s) | " + " | ".join(
            f"{t:g} s: {v} | gap" + ("" if v == "default" else f" | {v} − default") for t in times for v in names)
            + " | pieces (improved, redrawn, last piece limit): " + " / ".join(names) + " |",
            "|---|---|---|" + "".join("---|---|" if v == "default" else "---|---|---|" for _ in times for v in names)
            + "---|"]
    rows, records = [], []
    paths = {name: Path(args.anchors) / "caches" / f"{name}.jkl.gz" for name in args.caches}
    runs = []
    seeded = () if args.seed == 1 else (f"seed {args.seed}",)  # seed 1's keys as before: records stay valid
    for name in args.caches:
        for k in args.ks:
            for t in ran:
                runs.append(((name, k, t, *seeded), paths[name], k, "auto", t))
                for v, fields in variants.items():  # the same cell under each variant, in the same queue
                    runs.append(((name, k, t, v, *seeded), paths[name], k, "auto", t, fields))
    done = {key[:len(key) - len(seeded)]: got for key, got in
            _two_at_a_time(runs, None if args.records is None else Path(args.records), args.seed).items()}
    from twbn.solvers.method_options import ImproveOptions

    pieces = lambda g: (f"{g['pieces']} ({g['improvements']}, {g.get('redrawn') or 0}"  # noqa: E731
                        + (f", {g.get('piece_time_limit') or ImproveOptions().piece_time_limit:g} s" if variants else "")
                        + ")")
    for name in args.caches:
        for k in args.ks:
            got = {f"auto@{t:g}": done[name, k, t] if t in ran else earlier[name, k][f"auto@{t:g}"] for t in times}
            blip = max(BLIP[name, k]["kg"][0], BLIP[name, k]["kmax"][0])
            if not variants:
                cols = [f"{g['score']:,.1f} | {_gap(g)}" for g in got.values()]
                counts = " / ".join(pieces(g) for g in got.values())
            else:
                got.update({f"{v}@{t:g}": done[name, k, t, v] for t in times for v in variants})
                cols = []
                for t in times:
                    base = got[f"auto@{t:g}"]
                    cols.append(f"{base['score']:,.1f} | {_gap(base)}")
                    cols += [f"{got[f'{v}@{t:g}']['score']:,.1f} | {_gap(got[f'{v}@{t:g}'])} | "
                             f"{got[f'{v}@{t:g}']['score'] - base['score']:+,.1f}" for v in variants]
                counts = " · ".join(" / ".join(pieces(got[f"{'auto' if v == 'default' else v}@{t:g}"]) for v in names)
                                    for t in times)
            rows.append(f"| {name} | {k} | {blip:,.1f} | " + " | ".join(cols) + f" | {counts} |")
            records.append({"cache": name, "k": k, **got})
            print(rows[-1], flush=True)
    longest = max(ran)
    from twbn.solvers.policy import DEFAULT_POLICY as P

    if earlier:  # the longest run's incumbent over its own time, and its wall time
        marks = [t for t in (60, 300, 600, 1200) if t < longest]
        start_s = P.improve_start_share * (1 - P.large_bound_share) * longest
        rows += ["", f"Within the {longest:g} s runs: the incumbent at each time of the improver's own clock "
                 f"(its trajectory; it starts after the k-MAX start, {start_s:g} s here), the call's "
                 "wall time (the limit covers it; cache loading excluded) and the largest piece overrun.", "",
                 "| cache | k | " + " | ".join(f"at {t:g} s" for t in marks) + f" | at {longest:g} s | call (s) | "
                 "largest piece overrun (s) |", "|---|---|" + "---|" * (len(marks) + 3)]
        for r in records:
            g = r[f"auto@{longest:g}"]
            at = [max((p[1] for p in g.get("trajectory", []) if p[0] <= t and p[1] is not None), default=None)
                  for t in marks]
            rows.append(f"| {r['cache']} | {r['k']} | " + " | ".join("—" if a is None else f"{a:,.1f}" for a in at)
                        + f" | {g['score']:,.1f} | {g['call_s']:.2f} | {g.get('overrun')} |")
    described = "; ".join(f"`{v}`: " + ", ".join(f"{key} = {value:g}" for key, value in fields.items())
                          for v, fields in variants.items())
    text = "\n".join([
        "# Any budget: auto on one job at " + ", ".join(f"{t:g}" for t in times) + " s"
        + ("" if not variants else ", under the default policy and " + ", ".join(variants)), "",
        f"Machine: {machine()}. Seed {args.seed}, one job, two runs at a time (one process per core, the longest "
        "first). Above n = 40 `auto` "
        f"runs `improve` from localsearch's network up to n = {P.localsearch_max_n} (from k = "
        f"{P.localsearch_start_min_k}) and from k-MAX's above ({P.warm_start_share:.0%} of the method's part), keeping "
        f"{P.large_bound_share:.0%} of the budget for the cluster LP's bound at n ≥ {P.large_bound_n}. Gap: to the "
        "run's own proved bound."
        + ("" if not variants else f" Policy variants (twbn.Policy fields changed from the defaults), run in the "
                                   f"same queue as the default: {described}.")
        + ("" if not earlier else f" The {', '.join(f'{t:g}' for t in times if t not in ran)} s columns: the "
                                  f"records of an earlier run ({args.with_json}), not re-run."), "",
        "Regenerate: `python -m benchmarks.bench_field --anchors DIR --budgets "
        + " ".join(f"{t:g}" for t in ran) + " --caches " + " ".join(args.caches) + " --ks "
        + " ".join(map(str, args.ks)) + "".join(f" --policy {v}:" + ",".join(f"{key}={value:g}" for key, value in
                                                                           fields.items())
                                              for v, fields in variants.items())
        + ("" if args.seed == 1 else f" --seed {args.seed}") + "`.", "", *head, *rows, ""])
    stem = "field-budgets-" + "-".join(f"{t:g}" for t in times)  # named by the budgets it measures
    if variants:
        stem += "-policies-" + "-".join(variants)
    _write(stem if args.seed == 1 else f"{stem}-seed{args.seed}", args.caches, args.ks, text, records)


def width_rows(args) -> None:
    """Issue 33.1: the cluster LP's bound with the width rows (W) of solvers/relaxation.py
    and without them, each for the LP's share of the budget at these n (30 %), side by
    side; the auto scores of field.json (when there) give the gaps."""
    from benchmarks.common import RESULTS
    from twbn.solvers.policy import DEFAULT_POLICY

    seconds = DEFAULT_POLICY.large_bound_share * args.budget
    auto = {}
    if (RESULTS / "field.json").is_file():
        auto = {(r["cache"], r["k"]): r["auto"]["score"] for r in json.loads((RESULTS / "field.json").read_text())}
    head = ["| cache | k | trivial U | LP bound, cluster rows | LP bound, + width rows | width rows (rounds) | "
            "tightened by | auto (field.md) | gap then | gap now |", "|---|---|---|---|---|---|---|---|---|---|"]
    rows, records = [], []
    for name in args.caches:
        path = Path(args.anchors) / "caches" / f"{name}.jkl.gz"
        for k in args.ks:
            got = _pair(path, k, ("lp", "lp-width"), seconds)
            plain, wide = got["lp"], got["lp-width"]
            a = auto.get((name, k))
            gaps = ("", "") if a is None else tuple(f"{(b - a) / abs(a):.2%}" for b in (plain["bound"], wide["bound"]))
            rows.append(f"| {name} | {k} | {plain['trivial']:,.1f} | {plain['bound']:,.1f} | **{wide['bound']:,.1f}** | "
                        f"{wide['width_rows']} ({wide['rounds']}) | {plain['bound'] - wide['bound']:,.1f} | "
                        f"{'' if a is None else f'{a:,.1f}'} | {gaps[0]} | {gaps[1]} |")
            records.append({"cache": name, "k": k, **got})
            print(rows[-1], flush=True)
    text = "\n".join([
        "# The cluster LP's bound with the width rows (W)", "",
        f"Machine: {machine()}. The LP alone for {seconds:g} s (the share `auto` keeps for it at n ≥ 60 of a "
        f"{args.budget:g} s budget), with and without the width rows, side by side (one process per core). Width "
        "rows: for a vertex set C of m ≥ k + 2 variables and each pair of C assigned to one child, the pairs the "
        "chosen families cover are at most k·m − k(k+1)/2, the most edges a graph of treewidth ≤ k has on m "
        "vertices (proof in solvers/relaxation.py). Gaps: against auto's score in field.json (same caches, same "
        "k).", "", *head, *rows, ""])
    _write("field-width-rows", args.caches, args.ks, text, records)


def unbounded(args) -> None:
    """Without a treewidth bound: ``cuts`` (its own start: ``improve`` on a share, above
    n = 40) beside ``improve`` alone, per cache."""
    head = ["| cache | n | cuts: score | cuts: bound | cuts: gap | cuts: SCIP's root bound | improve: score | "
            "improve: bound | improve: gap | improve: width, moral edges, degeneracy | valid |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    rows, records = [], []
    for name in args.caches:
        if name == "munin5000":
            continue  # n = 1,041: the whole model is out of reach, unbounded or not
        path = Path(args.anchors) / "caches" / f"{name}.jkl.gz"
        got = _pair(path, None, ("cuts", "improve"), args.budget)
        c, i = got["cuts"], got["improve"]
        n = {"plants": 69, "baudio": 100, "jester": 100}[name]
        rows.append(f"| {name} | {n} | {c['score']:,.1f} | {c['bound']:,.1f} | {(c['bound'] - c['score']) / abs(c['score']):.2%} | "
                    f"{_num(c['engine_bound'])} | {i['score']:,.1f} | "
                    f"{i['bound']:,.1f} | {(i['bound'] - i['score']) / abs(i['score']):.2%} | "
                    f"{i['width']}, {i['moral_edges']}, {i['degeneracy']} | "
                    f"{'yes' if c['valid'] and i['valid'] else 'NO'} |")
        records.append({"cache": name, **got})
        print(rows[-1], flush=True)
    from twbn.solvers.policy import DEFAULT_POLICY as P

    text = "\n".join([
        "# Unbounded at n = 69–100: `cuts` beside `improve`", "",
        f"Machine: {machine()}. {args.budget:g} s per run, seed 1, side by side (one process per core). `cuts` "
        "without a start above n = 40 runs `improve` on 60 % of the budget, then the whole cluster-cut ILP on "
        f"SCIP, keeping {P.large_bound_share:.0%} for the cluster LP's bound; its bound is the better of SCIP's and the LP's. "
        "SCIP's root bound: its dual bound after the root's cutting loop (— : none below the trivial bound; its first LP unsolved). GOBNILP 1.6.3's "
        "figures on kdd and community (docs/blip.md) are not comparable: those caches are not here. Width: of "
        "the network's own elimination order (an upper bound on its treewidth); degeneracy: of its moral graph (a "
        "lower bound), the least d with at most d·m − d(d+1)/2 edges on every m of its vertices.", "",
        *head, *rows, ""])
    print("wrote", write_result("field-unbounded.md", text))
    write_result("field-unbounded.json", json.dumps(records, indent=1) + "\n")


if __name__ == "__main__":
    main()
