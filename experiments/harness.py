"""``twbn experiment``: expand a config's grid, score each (data, fold) once, run every
cell in its own process with a hard time limit and a memory limit, and record each
finished cell in the SQLite store.

A cell that crashes, runs out of memory or overruns costs that cell only: it is stored
with status ``failed`` or ``timeout`` and the error text. ``resume`` runs only the cells
the store lacks. The local executor keeps ``jobs`` cell processes running; only this
process writes the store.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path

import numpy as np

from experiments.config import Cell, Config, expand
from experiments.store import Store

#: Seed of the fold split: folds must not change with the cells' seeds.
FOLD_SEED = 0


class ExperimentError(ValueError):
    """A problem with the experiment as asked for (e.g. a store that already has cells)."""


def fold_rows(n_rows: int, folds: int, fold: int) -> tuple[np.ndarray, np.ndarray]:
    """(train rows, test rows) of fold ``fold`` of a seeded k-fold split; with one fold
    every row trains and none tests."""
    if folds == 1:
        return np.arange(n_rows), np.arange(0)
    perm = np.random.default_rng(FOLD_SEED).permutation(n_rows)
    parts = np.array_split(perm, folds)
    test = np.sort(parts[fold])
    train = np.sort(np.concatenate([p for i, p in enumerate(parts) if i != fold]))
    return train, test


def prepare_caches(config: Config, work: Path, log) -> dict[tuple[str, int], dict]:
    """Score every (data, fold)'s training rows once; reuse caches already written."""
    from scoring.data import read_csv
    from scoring.jkl import write_jkl
    from scoring.parent_sets import build_cache

    out = {}
    for name, path in config.data.items():
        ds = read_csv(path)
        for f in range(config.folds):
            cache_path = work / f"{name}.fold{f}.{config.score}.jkl"
            train, test = fold_rows(ds.n_rows, config.folds, f)
            if not cache_path.exists():
                t0 = time.monotonic()
                cache = build_cache(ds.subset_rows(train), score=config.score, max_parents=config.max_parents,
                                    pruning=config.pruning, ess=config.ess, progress=False)[0]
                write_jkl(cache, str(cache_path))
                log(f"scored {name} fold {f}: {cache.n_parent_sets():,} parent sets in {time.monotonic() - t0:.1f} s")
            out[name, f] = {"cache": str(cache_path), "data": str(path), "train_rows": train.tolist(),
                            "test_rows": test.tolist()}
    return out


def _limit_memory(mb: int):
    def apply():
        os.setsid()  # own process group: a timeout kills the cell and its children
        limit = mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return apply


def run_cell(cell: Cell, config: Config, prepared: dict, work: Path) -> dict:
    """Run one cell in a child process; returns the row to store."""
    m = config.methods[cell.method]
    spec = {**prepared[cell.data, cell.fold], "treewidth": cell.treewidth, "method": m["method"],
            "solver": m["solver"], "warm_start": m["warm_start"], "time_limit": config.time_limit, "seed": cell.seed,
            "ess": config.ess}
    with tempfile.TemporaryDirectory(prefix="twbn-cell-", dir=work) as tmp:
        spec_path, out_path = Path(tmp) / "spec.json", Path(tmp) / "out.json"
        spec_path.write_text(json.dumps(spec), encoding="utf-8")
        t0 = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-m", "experiments.cell", str(spec_path), str(out_path)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                preexec_fn=_limit_memory(config.memory_limit_mb),
                                cwd=Path(__file__).resolve().parents[1])
        try:
            _, err = proc.communicate(timeout=config.time_limit + config.kill_margin)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return {"status": "timeout", "wall_time": round(time.monotonic() - t0, 2),
                    "error": f"killed after {config.time_limit + config.kill_margin:.0f} s"}
        if proc.returncode != 0 or not out_path.exists():
            lines = [ln for ln in (err or "").strip().splitlines() if ln.strip()]
            why = lines[-1] if lines else f"exit code {proc.returncode}"
            if proc.returncode < 0:
                why = f"killed by signal {-proc.returncode}" + (f": {why}" if lines else "")
            return {"status": "failed", "wall_time": round(time.monotonic() - t0, 2), "error": why[:2000]}
        out = json.loads(out_path.read_text(encoding="utf-8"))
    r = out["result"]
    return {"status": r["status"], "score": r.get("score"), "bound": r.get("bound"), "gap": r.get("gap"),
            "width": r.get("width"), "wall_time": out["wall_time"], "test_loglik": out["test_loglik"],
            "test_rows": out["test_rows"], "result": r, "trajectory": r.get("trajectory")}


def run_experiment(config: Config, store_path: Path, *, resume: bool = False, jobs: int = 1, log=print) -> dict:
    """Run the missing cells of the grid; returns counts by status of this invocation."""
    if jobs < 1:
        raise ExperimentError("--jobs must be at least 1")
    store_path = Path(store_path).resolve()  # cells run in the package's folder
    store = Store(store_path)
    try:
        done = store.done_keys()
        if done and not resume:
            raise ExperimentError(f"{store_path} already holds {len(done)} cells; use --resume to continue it "
                                  "or choose another --store")
        cells = [c for c in expand(config) if c.key not in done]
        work = store_path.parent / (store_path.stem + ".work")
        work.mkdir(exist_ok=True)
        prepared = prepare_caches(config, work, log)
        run_id = store.start_run(config.name, config.path.read_text(encoding="utf-8"))
        log(f"{len(cells)} cells to run ({len(done)} already in {store_path}), {jobs} at a time")
        counts: dict[str, int] = {}
        with ThreadPoolExecutor(jobs) as pool:
            pending = {pool.submit(run_cell, c, config, prepared, work): c for c in cells}
            while pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    cell = pending.pop(fut)
                    row = fut.result()
                    store.record(run_id, cell, row)
                    counts[row["status"]] = counts.get(row["status"], 0) + 1
                    score = "" if row.get("score") is None else f" score {row['score']:.2f}"
                    if row.get("test_loglik") is not None:
                        score += f", held-out log-likelihood {row['test_loglik'] / row['test_rows']:.4f}/row"
                    log(f"[{sum(counts.values())}/{len(cells)}] {cell.key}: {row['status']}{score}"
                        + (f" ({row['error']})" if row.get("error") else ""))
        return counts
    finally:
        store.close()
