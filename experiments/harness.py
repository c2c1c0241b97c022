"""``twbn experiment``: expand a config's grid, score each (data, fold) once, run every
cell in its own process with a hard time limit and a memory limit, and record each
finished cell in the SQLite store.

A cell that crashes, runs out of memory or overruns costs that cell only: it is stored
with status ``failed`` or ``timeout`` and the error text. ``resume`` runs only the cells
the store lacks.

Executors: ``local`` keeps ``jobs`` cell processes running on this machine; ``dask``
submits each cell to a Dask distributed cluster (``scheduler`` address, or a LocalCluster
of ``jobs`` single-threaded workers when none is given), where a worker runs the same
isolated cell process. Either way only this process writes the store, as results come
back, so a killed run loses at most the cells in flight. With a remote cluster the
workers must see the store's work folder (caches) and the data files at the same paths,
i.e. a shared file system, and have twbn installed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from contextlib import ExitStack, contextmanager
from pathlib import Path

import numpy as np

from twbn.experiments.config import Cell, Config, expand
from twbn.experiments.store import Store
from twbn.scoring.local_structure import LOCAL_STRUCTURE_SCORES

EXECUTORS = ("local", "dask")
#: How long to keep trying to reach a Dask scheduler before giving up.
DASK_CONNECT_TIMEOUT_S = 10

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


def _score(config: Config, train):
    """The cache of one fold's training rows, by the config's score and exploration."""
    from twbn.scoring.explore import explore_cache
    from twbn.scoring.local_structure import LOCAL_STRUCTURE_SCORES, build_local_structure_cache
    from twbn.scoring.parent_sets import build_cache

    if config.score in LOCAL_STRUCTURE_SCORES:
        return build_local_structure_cache(train, score=config.score, max_parents=config.max_parents,
                                           max_splits=config.max_splits, max_bins=config.max_bins, progress=False)
    if config.approximate:
        return explore_cache(train, score=config.score, ess=config.ess, max_parents=config.max_parents,
                             candidates=config.candidates, time_per_variable=config.time_per_variable,
                             pruning=config.pruning != "none", progress=False)
    return build_cache(train, score=config.score, max_parents=config.max_parents, pruning=config.pruning,
                       ess=config.ess, progress=False)


def prepare_caches(config: Config, work: Path, log) -> dict[tuple[str, int], dict]:
    """Score every (data, fold)'s training rows once; reuse caches already written."""
    from twbn.scoring.data import read_csv
    from twbn.scoring.jkl import atomic_write_text, write_jkl
    from twbn.scoring.local_structure import LOCAL_STRUCTURE_SCORES
    from twbn.scoring.mixed_data import read_mixed_csv

    out = {}
    for name, path in config.data.items():
        ds = read_mixed_csv(path) if config.score in LOCAL_STRUCTURE_SCORES else read_csv(path)
        for f in range(config.folds):
            cache_path = work / f"{name}.fold{f}.{config.score}.jkl"
            stats_path = cache_path.with_name(cache_path.name + ".stats.json")
            train, test = fold_rows(ds.n_rows, config.folds, f)
            if not cache_path.exists() or not stats_path.exists():
                cache, stats = _score(config, ds.subset_rows(train))
                write_jkl(cache, str(cache_path))
                atomic_write_text(stats_path, json.dumps(stats))  # after the cache: its presence means both
                log(f"scored {name} fold {f}: {cache.n_parent_sets():,} parent sets in {stats['seconds']:.1f} s")
            out[name, f] = {"cache": str(cache_path), "data": str(path), "train_rows": train.tolist(),
                            "test_rows": test.tolist(), "stats": json.loads(stats_path.read_text(encoding="utf-8"))}
    return out


def run_cell(cell: Cell, config: Config, prepared: dict, work: Path) -> dict:
    """Run one cell in a child process; returns the row to store."""
    m = config.methods[cell.method]
    missing = [p for p in (prepared[cell.data, cell.fold]["cache"], prepared[cell.data, cell.fold]["data"])
               if not Path(p).exists()]
    if missing:  # a remote worker without the shared file system
        return {"status": "failed", "wall_time": 0.0, "error": f"not visible on this worker: {', '.join(missing)}"}
    spec = {**{k: v for k, v in prepared[cell.data, cell.fold].items() if k != "stats"},
            "discrete": config.score not in LOCAL_STRUCTURE_SCORES, "treewidth": cell.treewidth, "method": m["method"],
            "solver": m["solver"], "warm_start": m["warm_start"], "options": m.get("options") or {}, "time_limit": config.time_limit, "seed": cell.seed,
            "ess": config.ess, "memory_limit_mb": config.memory_limit_mb,
            "inference": config.inference}
    with tempfile.TemporaryDirectory(prefix="twbn-cell-", dir=work) as tmp:
        spec_path, out_path = Path(tmp) / "spec.json", Path(tmp) / "out.json"
        spec_path.write_text(json.dumps(spec), encoding="utf-8")
        t0 = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-m", "twbn.experiments.cell", str(spec_path), str(out_path),
                                 str(os.getpid())],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                start_new_session=True,  # own process group: a timeout kills its children too
                                cwd=tmp)  # a neutral folder: the cell imports the installed twbn
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
            "test_rows": out["test_rows"], "result": r, "trajectory": r.get("trajectory"),
            **(out.get("inference") or {})}


def _run_local(calls: list, jobs: int) -> Iterator[tuple[int, dict]]:
    with ThreadPoolExecutor(jobs) as pool:
        pending = {pool.submit(f, *a): i for i, (f, a) in enumerate(calls)}
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                yield pending.pop(fut), fut.result()


@contextmanager
def _dask_client(scheduler: str | None, jobs: int):
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ExperimentError("the dask executor needs dask distributed: pip install 'twbn[dask]'") from None
    if scheduler is None:
        # processes, one thread each: a worker only waits on its cell's child process;
        # no memory limit, since the cell's own RLIMIT_AS is what bounds it
        with LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, memory_limit=0,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            yield client
    else:
        try:
            client = Client(scheduler, timeout=f"{DASK_CONNECT_TIMEOUT_S}s")
        except (OSError, TimeoutError) as e:
            raise ExperimentError(f"cannot reach the dask scheduler at {scheduler}: {e}") from None
        with client:
            yield client


def _run_dask(calls: list, client) -> Iterator[tuple[int, dict]]:
    from distributed import as_completed

    # pure=False: two cells never share a result, even with equal arguments
    futures = {client.submit(f, *a, pure=False, key=f"twbn-cell-{i}-{os.getpid()}-{time.time_ns()}"): i
               for i, (f, a) in enumerate(calls)}
    for fut in as_completed(futures):
        i = futures[fut]
        if fut.status == "error":
            yield i, {"status": "failed", "wall_time": None, "error": f"dask: {fut.exception()!r}"[:2000]}
        else:
            yield i, fut.result()


def run_experiment(config: Config, store_path: Path, *, resume: bool = False, jobs: int = 1,
                   executor: str = "local", scheduler: str | None = None, log=print) -> dict:
    """Run the missing cells of the grid; returns counts by status of this invocation."""
    if jobs < 1:
        raise ExperimentError("--jobs must be at least 1")
    if executor not in EXECUTORS:
        raise ExperimentError(f"unknown executor {executor!r}; choose from {', '.join(EXECUTORS)}")
    if scheduler is not None and executor != "dask":
        raise ExperimentError("--scheduler goes with --executor dask")
    if config.inference:  # fail now, not in every cell
        from twbn.experiments.inference import InferenceUnavailable, require_pgmpy

        try:
            require_pgmpy()
        except InferenceUnavailable as exc:
            raise ExperimentError(f"{config.path}: inference = true, but {exc}") from None
    store_path = Path(store_path).resolve()  # cells run in their own folders
    with ExitStack() as stack:
        store = Store(store_path, writer=True)
        stack.callback(store.close)
        done = store.done_keys()
        if done and not resume:
            raise ExperimentError(f"{store_path} already holds {len(done)} cells; use --resume to continue it "
                                  "or choose another --store")
        # reach the cluster before scoring anything or starting a run
        client = stack.enter_context(_dask_client(scheduler, jobs)) if executor == "dask" else None
        cells = [c for c in expand(config) if c.key not in done]
        work = store_path.parent / (store_path.stem + ".work")
        work.mkdir(exist_ok=True)
        # cell folders left by a run that was killed (we hold the store's lock: none is live)
        for stale in work.glob("twbn-cell-*"):
            shutil.rmtree(stale, ignore_errors=True)
        prepared = prepare_caches(config, work, log)
        for (name, fold), p in prepared.items():
            store.record_cache(name, fold, p["stats"])
        run_id = store.start_run(config.name, config.path.read_text(encoding="utf-8"))
        where = f"{jobs} at a time" if client is None else f"on dask ({scheduler or f'local cluster, {jobs} workers'})"
        log(f"{len(cells)} cells to run ({len(done)} already in {store_path}), {where}")
        counts: dict[str, int] = {}
        calls = [(run_cell, (c, config, prepared, work)) for c in cells]
        results = _run_local(calls, jobs) if client is None else _run_dask(calls, client)
        for i, row in results:
            cell = cells[i]
            store.record(run_id, cell, row)
            counts[row["status"]] = counts.get(row["status"], 0) + 1
            score = "" if row.get("score") is None else f" score {row['score']:.2f}"
            if row.get("test_loglik") is not None:
                score += f", held-out log-likelihood {row['test_loglik'] / row['test_rows']:.4f}/row"
            log(f"[{sum(counts.values())}/{len(cells)}] {cell.key}: {row['status']}{score}"
                + (f" ({row['error']})" if row.get("error") else ""))
        return counts
