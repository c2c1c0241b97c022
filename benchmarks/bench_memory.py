"""How ``twbn learn``'s memory and time grow with n: 1,000 to 10,000 variables.

Data: random networks from ``twbn generate`` (seed 0, 2-4 states, at most 6 parents,
5,000 rows), the papers' scale; each scored once by ``twbn score --approximate
--time-per-variable 0.03`` (the cache is not what is measured, so it is kept small and
quick). Each cell is then ``twbn learn CACHE --treewidth 5 --time-limit 60 --jobs 1`` in
its own process, two at a time (one per core); its memory is the peak resident set of the
command and everything it starts, sampled every 0.2 s (psutil), its time the whole
command's.

With ``--peer DIR`` (a checkout of another version, e.g. ``git worktree add DIR
COMMIT``), each cell runs under that checkout too (its packages laid out as installed in
a folder of links, first on PYTHONPATH, its numba kernels compiled first), beside this
one, in one queue: the ratio compares two versions on one machine on one day.

Run: ``python -m benchmarks.bench_memory --work DIR [--sizes 1000 2500 5000 10000]
[--peer DIR]``; writes ``results/memory-scaling.md``. DIR keeps the networks and caches
between runs (scoring 10,000 variables takes about 5 minutes on 2 cores).
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

SIZES = (1000, 2500, 5000, 10000)
LIMIT, K = 60.0, 5


def _prepare(work: Path, n: int) -> Path:
    """The network's cache in ``work`` (generated and scored if absent)."""
    prefix = work / f"syn{n}"
    cache = work / f"syn{n}.jkl"
    if not cache.exists():
        twbn = [sys.executable, "-m", "twbn.experiments.cli"]
        subprocess.run([*twbn, "generate", "--variables", str(n), "--seed", "0", "--rows", "5000", "-o", str(prefix)],
                       check=True, stdout=subprocess.DEVNULL)
        subprocess.run([*twbn, "score", f"{prefix}.csv.gz", "--approximate", "--time-per-variable", "0.03",
                        "--jobs", "2", "-q", "-o", str(cache)], check=True)
    return cache


def _peer_env(work: Path, peer: Path) -> dict:
    """An environment in which ``import twbn`` is the checkout ``peer``: its folders linked
    as the installed package's layout (pyproject's package-dir) in ``work/peer-site``."""
    site = work / "peer-site" / "twbn"
    if site.exists():
        for link in site.iterdir():
            link.unlink()
    site.mkdir(parents=True, exist_ok=True)
    for src in (peer / "twbn").iterdir():
        (site / src.name).symlink_to(src)
    for sub in ("scoring", "formulations", "solvers", "experiments"):
        (site / sub).symlink_to(peer / sub)
    env = {**os.environ, "PYTHONPATH": str(site.parent)}
    subprocess.run([sys.executable, "-m", "twbn.experiments.precompile"], env=env, cwd=work, check=True,
                   stdout=subprocess.DEVNULL)
    return env


def _spawn(cache: Path, out: Path, env: dict | None) -> subprocess.Popen:
    # run from the cache's folder: ``python -m`` puts the working directory first on the
    # path, and a checkout's own twbn/ there would shadow the peer's
    cmd = [sys.executable, "-m", "twbn.experiments.cli", "learn", str(cache.resolve()), "--treewidth", str(K),
           "--time-limit", f"{LIMIT:g}", "--jobs", "1", "--seed", "1", "-q", "-o", str(out.resolve())]
    return subprocess.Popen(cmd, env=env, cwd=cache.parent, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)


def _watch(procs: dict) -> None:
    """Sample every running command's resident set (with its children) until all end."""
    import psutil

    while any(p["proc"].poll() is None for p in procs.values()):
        for p in procs.values():
            if p["proc"].poll() is not None:
                p.setdefault("wall", time.monotonic() - p["began"])
                continue
            try:
                root = psutil.Process(p["proc"].pid)
                rss = sum(q.memory_info().rss for q in [root, *root.children(recursive=True)])
            except psutil.Error:
                continue
            p["peak"] = max(p.get("peak", 0), rss)
        time.sleep(0.2)
    for p in procs.values():
        p.setdefault("wall", time.monotonic() - p["began"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", required=True, metavar="DIR", help="networks and caches (made if absent)")
    ap.add_argument("--sizes", nargs="+", type=int, default=list(SIZES))
    ap.add_argument("--peer", metavar="DIR", help="a checkout of another twbn version, run beside this one")
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    versions = [("this", None)] + ([("peer", _peer_env(work, Path(args.peer).resolve()))] if args.peer else [])
    queue = [(n, name, env) for n in args.sizes for name, env in versions]
    caches = {n: _prepare(work, n) for n in args.sizes}
    rows = []
    while queue:
        pair, queue = queue[:2], queue[2:]
        procs = {}
        for n, name, env in pair:
            out = work / f"learn-{name}-{n}.json"
            procs[(n, name)] = {"proc": _spawn(caches[n], out, env), "began": time.monotonic(), "out": out}
        _watch(procs)
        for (n, name), p in procs.items():
            err = p["proc"].stderr.read()
            if p["proc"].returncode != 0:
                raise SystemExit(f"n = {n} ({name}): exit {p['proc'].returncode}: {err.strip()[-500:]}")
            res = json.loads(p["out"].read_text())
            lp = res["stats"].get("lp_bound", {})
            rows.append({"n": n, "version": name, "cache_bytes": caches[n].stat().st_size,
                         "peak_mb": round(p["peak"] / 2**20), "command_s": round(p["wall"], 2),
                         "score": res["score"], "bound": res["bound"], "lp_rounds": lp.get("rounds"),
                         "lp_entries": lp.get("entries")})
            print(json.dumps(rows[-1]), flush=True)
    lines = [f"# `twbn learn` from n = 1,000 to 10,000 variables: memory and time", "",
             machine(), "",
             f"`twbn learn CACHE --treewidth {K} --time-limit {LIMIT:g} --jobs 1`, each in its own process, two at a "
             "time; peak memory is the command's resident set with its children (sampled every 0.2 s); the "
             "cache is a quick approximate one (`--time-per-variable 0.03`) of a `twbn generate` network "
             "(seed 0, 5,000 rows).", "",
             "| n | version | cache (MB) | peak memory (MB) | command (s) | score | bound | LP rounds | LP entries |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['n']:,} | {r['version']} | {r['cache_bytes'] / 2**20:.1f} | {r['peak_mb']:,} | "
                     f"{r['command_s']:.2f} | {r['score']:,.0f} | {r['bound']:,.0f} | {r['lp_rounds']} | "
                     f"{r['lp_entries'] if r['lp_entries'] is not None else '—'} |")
    if args.peer:
        lines += ["", "Peak memory, this version over the peer's: " + ", ".join(
            f"n = {n:,}: {this['peak_mb'] / peer['peak_mb']:.2f}"
            for n in args.sizes
            for this in [next(r for r in rows if r['n'] == n and r['version'] == 'this')]
            for peer in [next(r for r in rows if r['n'] == n and r['version'] == 'peer')]) + "."]
    print(write_result("memory-scaling.md", "\n".join(lines) + "\n"))


if __name__ == "__main__":
    main()
