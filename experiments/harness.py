"""``twbn experiment``: expand a config's grid, score each (data, fold) once, run every
cell in its own process with a hard time limit and a memory limit, and record each
finished cell in the SQLite store.

A cell that crashes, runs out of memory or overruns costs that cell only: it is stored
with status ``failed`` or ``timeout`` and the error text. ``resume`` runs only the cells
the store lacks.

In a sweep (the config's ``sweep``, on by default) the cells of one (data, fold, method,
seed) run their bounds in increasing order, each starting from the best network stored
for the smaller ones and never storing a worse one (solvers/sweep.py).

Executors: ``local`` keeps ``jobs`` cell processes running on this machine; ``dask``
submits each cell to a Dask distributed cluster (``scheduler`` address, or a LocalCluster
of ``jobs`` single-threaded workers when none is given), where a worker runs the same
isolated cell process. Either way only this process writes the store, as results come
back, so a killed run loses at most the cells in flight. With a remote cluster the
workers must see the store's work folder (caches) and the data files at the same paths,
i.e. a shared file system, and have twbn installed. With a remote cluster and
``cell_jobs`` ≥ 2, cells of methods that solve pieces send them to the same cluster, and
only as many cells run at once as leave their pieces free threads.
"""

from __future__ import annotations

import csv
import fnmatch
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import math
from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path

import numpy as np

from twbn.experiments.config import Cell, Config, expand
from twbn.experiments.store import Store
from twbn.scoring.local_structure import LOCAL_STRUCTURE_SCORES
from twbn.scoring.errors import ScoringStopped, TwbnError
from twbn.solvers.registry import get_method
from twbn.solvers.budget import passed, seconds_to

__all__ = ["ExperimentError", "fold_rows", "file_sha256", "cache_key", "prepare_caches", "run_cell",
           "predecessors", "work_folder", "run_experiment"]

EXECUTORS = ("local", "dask")
#: How long to keep trying to reach a Dask scheduler before giving up.

#: Seed of the fold split: folds must not change with the cells' seeds.
FOLD_SEED = 0


class ExperimentError(TwbnError, ValueError):
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


def _score(config: Config, train, stop=None):
    """(cache, stats) of one fold's training rows, by the config's score and exploration;
    :class:`ScoringStopped` once ``stop()`` is true."""
    import twbn

    local = config.score in LOCAL_STRUCTURE_SCORES
    return twbn.score(train, config.score, config.max_parents, ess=config.ess, pruning=config.pruning,
                      approximate=config.approximate,
                      candidates=config.candidates if config.approximate else None,
                      time_per_variable=config.time_per_variable if config.approximate else None,
                      max_splits=config.max_splits if local else None, max_bins=config.max_bins if local else None,
                      return_stats=True, stop=stop)


#: Everything that determines a (data, fold)'s cache, besides the data's bytes and the
#: fold: a cache is reused only when all of them match (see ``cache_key``).
SCORING_FIELDS = ("score", "ess", "max_parents", "pruning", "approximate", "candidates", "time_per_variable",
                  "max_splits", "max_bins")


def file_sha256(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def cache_key(config: Config, data_sha256: str, fold: int) -> dict:
    """What a (data, fold)'s cache depends on: the data's content, the fold split and the
    config's scoring settings. Two caches with the same key are the same cache."""
    return {"data_sha256": data_sha256, "folds": config.folds, "fold": fold, "fold_seed": FOLD_SEED,
            **{f: getattr(config, f) for f in SCORING_FIELDS}}


def _key_digest(key: dict) -> str:
    import hashlib

    return hashlib.sha256(json.dumps(key, sort_keys=True).encode("utf-8")).hexdigest()


def _reusable(cache_path: Path, stats_path: Path, key: dict) -> bool:
    """A cache written earlier for exactly this key, unchanged since (its bytes' hash)."""
    if not cache_path.exists() or not stats_path.exists():
        return False
    try:
        stats = json.loads(stats_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return False
    return (isinstance(stats, dict) and stats.get("cache_key") == key
            and stats.get("cache_sha256") == file_sha256(cache_path))


def prepare_caches(config: Config, work: Path, log, stop=None,
                   needed: set[tuple[str, int]] | None = None) -> dict[tuple[str, int], dict]:
    """Score every (data, fold)'s training rows once (only those in ``needed``, when given:
    the folds of the cells left to run); reuse a cache already written only
    when its key (data content, fold split, scoring settings) matches and its file is
    unchanged. The key is in the file name too, so caches of other settings stay apart.
    Once ``stop()`` is true, scoring ends with :class:`ScoringStopped`; the folds scored
    before stay in ``work`` for the next run."""
    from twbn.scoring.data import read_csv
    from twbn.scoring.jkl import atomic_write_text, write_jkl
    from twbn.scoring.local_structure import LOCAL_STRUCTURE_SCORES
    from twbn.scoring.mixed_data import read_mixed_csv

    out = {}
    for name, path in config.data.items():
        ds = read_mixed_csv(path) if config.score in LOCAL_STRUCTURE_SCORES else \
            read_csv(path, missing=config.read_missing)
        learned_by_em = config.missing is not None or (config.score not in LOCAL_STRUCTURE_SCORES and ds.n_missing > 0)
        if learned_by_em and config.score not in ("bic", "aic"):
            raise ExperimentError(f"{name}: {ds.n_missing:,} cells are missing, learned by structural EM, which "
                                  f"scores bic or aic, not {config.score!r} (or missing = \"state\")")
        data_sha = file_sha256(path)
        for f in range(config.folds):
            if needed is not None and (name, f) not in needed:
                continue
            if learned_by_em:
                # structural EM scores each iteration's completions itself: no cache; the
                # cell removes the training rows' cells (a seeded mechanism) and learns
                train, test = fold_rows(ds.n_rows, config.folds, f)
                out[name, f] = {"cache": None, "data": str(path), "train_rows": train.tolist(),
                                "test_rows": test.tolist(), "stats": {"missing": config.missing or "the data's own"},
                                "em": True}
                continue
            key = cache_key(config, data_sha, f)
            cache_path = work / f"{name}.fold{f}.{config.score}.{_key_digest(key)[:16]}.jkl"
            stats_path = cache_path.with_name(cache_path.name + ".stats.json")
            train, test = fold_rows(ds.n_rows, config.folds, f)
            if not _reusable(cache_path, stats_path, key):
                if cache_path.exists():
                    log(f"rescoring {name} fold {f}: its cache was changed since it was written")
                cache, stats = _score(config, ds.subset_rows(train), stop)
                write_jkl(cache, str(cache_path))
                stats = {**stats, "cache_key": key, "cache_sha256": file_sha256(cache_path)}
                atomic_write_text(stats_path, json.dumps(stats))  # after the cache: its presence means both
                log(f"scored {name} fold {f}: {cache.n_parent_sets():,} parent sets in {stats['seconds']:.1f} s")
            out[name, f] = {"cache": str(cache_path), "data": str(path), "train_rows": train.tolist(),
                            "test_rows": test.tolist(), "stats": json.loads(stats_path.read_text(encoding="utf-8"))}
    return out


#: Seconds between looks at the stop flag while a cell runs.
POLL_S = 0.2
#: Seconds a stopped cell has to exit after SIGTERM before it is killed.
STOP_GRACE_S = 2.0


def _stop_process_group(proc: subprocess.Popen, grace: float) -> None:
    """SIGTERM the cell's process group, SIGKILL it if it has not exited after ``grace``."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    except ProcessLookupError:
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run_cell(cell: Cell, config: Config, prepared: dict, work: Path, start: dict | None = None,
             stop=None, scheduler: str | None = None) -> dict | None:
    """Run one cell in a child process; returns the row to store, or None when ``stop``
    (a ``threading.Event``-like object with ``is_set``) was set while it ran: the cell was
    stopped, its folder removed, and nothing of it is to be stored (``--resume`` reruns it).
    ``start``: in a sweep, the best result of the smaller bounds of the cell's chain, which
    the cell starts from (where its method takes a start) and never scores below.
    ``scheduler``: a Dask scheduler the cell's method sends its pieces to, if it is a
    method that does (``distributed``); the others solve on the cell's machine."""
    m = config.methods[cell.method]
    if scheduler is not None and not get_method(m["method"]).distributed:
        scheduler = None
    missing = [p for p in (prepared[cell.data, cell.fold]["cache"], prepared[cell.data, cell.fold]["data"])
               if p is not None and not Path(p).exists()]
    if missing:  # a remote worker without the shared file system
        return {"status": "failed", "wall_time": 0.0, "error": f"not visible on this worker: {', '.join(missing)}"}
    spec = {**{k: v for k, v in prepared[cell.data, cell.fold].items() if k != "stats"},
            "discrete": config.score not in LOCAL_STRUCTURE_SCORES, "treewidth": cell.treewidth, "method": m["method"],
            "solver": m["solver"], "warm_start": m["warm_start"], "options": m.get("options") or {}, "policy": m.get("policy") or {}, "time_limit": config.time_limit, "seed": cell.seed,
            "ess": config.ess, "memory_limit_mb": config.memory_limit_mb,
            "inference": config.inference, "class_variable": config.classes.get(cell.data), "start": start,
            "jobs": config.cell_jobs, "scheduler": scheduler, "missing": config.missing,
            "read_missing": config.read_missing, "network": config.networks.get(cell.data), "score": config.score}
    with tempfile.TemporaryDirectory(prefix="twbn-cell-", dir=work) as tmp:
        spec_path, out_path = Path(tmp) / "spec.json", Path(tmp) / "out.json"
        spec_path.write_text(json.dumps(spec), encoding="utf-8")
        t0 = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-m", "twbn.experiments.cell", str(spec_path), str(out_path),
                                 str(os.getpid())],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                start_new_session=True,  # own process group: a timeout kills its children too
                                cwd=tmp)  # a neutral folder: the cell imports the installed twbn
        deadline = t0 + config.time_limit + config.kill_margin
        while True:
            try:
                _, err = proc.communicate(timeout=max(0.0, min(POLL_S, seconds_to(deadline))))
                break
            except subprocess.TimeoutExpired:
                if stop is not None and stop.is_set():
                    _stop_process_group(proc, STOP_GRACE_S)
                    proc.communicate()
                    return None
                if passed(deadline):
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
            **(out.get("inference") or {}), **(out.get("classification") or {}), **(out.get("missing") or {})}


def _bound_rank(k: int | None) -> float:
    return math.inf if k is None else k


def predecessors(cells: list[Cell], sweep: bool) -> dict[int, int]:
    """In a sweep, each cell waits for the next smaller bound of its chain among ``cells``
    (index -> index); nothing waits otherwise."""
    if not sweep:
        return {}
    chains: dict[tuple, list[int]] = defaultdict(list)
    for i, c in enumerate(cells):
        chains[c.chain].append(i)
    out = {}
    for members in chains.values():
        members.sort(key=lambda i: _bound_rank(cells[i].treewidth))
        out.update({b: a for a, b in zip(members, members[1:])})
    return out


def _schedule(n: int, after: dict[int, int], submit, capacity: float, stop, cancel) -> Iterator[tuple[int, object]]:
    """Submit calls ``0 … n-1`` as they become ready (``after[i]`` finished), at most
    ``capacity`` at a time; yield each (index, finished future). The caller handles one
    before the next is submitted, so a successor sees its predecessor's result. Once
    ``stop`` is set no call is submitted and ``cancel`` gets the pending futures."""
    pending: dict = {}
    started: set[int] = set()
    finished: set[int] = set()
    while True:
        if not stop.is_set():
            for i in range(n):
                if len(pending) >= capacity:
                    break
                if i not in started and (after.get(i) is None or after[i] in finished):
                    started.add(i)
                    pending[submit(i)] = i
        elif cancel is not None and pending:
            cancel(list(pending))
            return
        if not pending:
            return
        done = [f for f in pending if f.done()]
        if not done:  # a short sleep, so that the main thread gets to run its signal handlers
            time.sleep(POLL_S)
            continue
        for fut in done:
            i = pending.pop(fut)
            finished.add(i)
            yield i, fut


def _row_of(fut) -> dict | None:
    """A finished future's row (a dask error becomes a failed cell)."""
    if getattr(fut, "status", None) == "error":
        return {"status": "failed", "wall_time": None, "error": f"dask: {fut.exception()!r}"[:2000]}
    return fut.result()


@contextmanager
def _dask_client(scheduler: str | None, jobs: int, policy: dict | None = None):
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ExperimentError("the dask executor needs dask distributed: pip install 'twbn[dask]'") from None
    if scheduler is None:
        # processes, one thread each: a worker only waits on its cell's child process;
        # no memory limit, since the cell's own RLIMIT_AS is what bounds it
        import logging

        # silence_logs: the workers' warnings (a cancelled cell on Ctrl-C) are no news
        with LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, memory_limit=0,
                          dashboard_address=None, silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
            yield client
    else:
        from twbn.solvers.parallel import SchedulerUnavailable, dask_client
        from twbn.solvers.policy import Policy

        try:
            client = dask_client(scheduler, Policy.from_mapping(policy or {}))
        except SchedulerUnavailable as e:
            raise ExperimentError(str(e)) from None
        with client:
            yield client


def work_folder(store_path: str | Path) -> Path:
    """The folder of a store's caches and running cells: its full file name plus ``.work``,
    so that two stores never share one (``same.sqlite`` and ``same.db`` included)."""
    store_path = Path(store_path)
    return store_path.parent / (store_path.name + ".work")


def run_experiment(config: Config, store_path: Path, *, resume: bool = False, jobs: int = 1,
                   executor: str = "local", scheduler: str | None = None, log=print,
                   stop: threading.Event | None = None, only: list[str] | None = None) -> dict:
    """Run the missing cells of the grid; returns counts by status of this invocation.

    ``only``: shell-style patterns over the cells' keys (``wdbc|fold=4|*``); just the cells
    matching one of them run. A pattern that matches no cell of the grid is refused.

    Once ``stop`` is set (the command line sets it on SIGINT and SIGTERM), no new cell
    starts and running ones are stopped; every finished cell is in the store and the
    counts hold ``"stopped"``: the cells stopped or not started, which ``resume`` runs."""
    grid = _refuse_early(config, jobs, executor, scheduler, only)
    stop = stop if stop is not None else threading.Event()
    store_path = Path(store_path).resolve()  # cells run in their own folders
    with ExitStack() as stack:
        store = Store(store_path, writer=True)
        stack.callback(store.close)
        done = store.done_keys()
        if done and not resume:
            raise ExperimentError(f"{store_path} already holds {len(done)} cells; use --resume to continue it "
                                  "or choose another --store")
        work = work_folder(store_path)
        # on a stop, once the cluster has closed (its callback runs after the client's exit,
        # registered before it): the folders of cells its workers took down with them
        stack.callback(lambda: stop.is_set() and [shutil.rmtree(d, ignore_errors=True)
                                                  for d in work.glob("twbn-cell-*")])
        # reach the cluster before scoring anything or starting a run
        client = stack.enter_context(_dask_client(scheduler, jobs, config.policy)) if executor == "dask" else None
        cells = [c for c in grid if c.key not in done
                 and (only is None or any(fnmatch.fnmatchcase(c.key, p) for p in only))]
        work.mkdir(exist_ok=True)
        # cell folders left by a run that was killed (we hold the store's lock: none is live)
        for stale in work.glob("twbn-cell-*"):
            shutil.rmtree(stale, ignore_errors=True)
        try:
            prepared = prepare_caches(config, work, log, stop=stop.is_set,
                                      needed={(c.data, c.fold) for c in cells})
        except ScoringStopped:  # a signal while scoring: at once, not when the fold is done
            return {"stopped": len(cells)}
        for (name, fold), p in prepared.items():
            store.record_cache(name, fold, p["stats"])
        run_id = store.start_run(config.name, config.path.read_text(encoding="utf-8"))
        where = f"{jobs} at a time" if client is None else f"on dask ({scheduler or f'local cluster, {jobs} workers'})"
        if config.cell_jobs > 1:
            where += f", {config.cell_jobs} processes each"
        log(f"{len(cells)} cells to run ({len(done)} already in {store_path}), {where}")
        pieces_to, cells_at_once = _pieces_plan(client, scheduler, config, log)
        cores = os.cpu_count() or 1
        if client is None and jobs * config.cell_jobs > cores:
            log(f"note: {jobs} cells × {config.cell_jobs} processes is more than this machine's {cores} cores: "
                "the cells' methods share them and reach less in their time")
        counts: dict[str, int] = {}
        # a sweep's cells start from the best network of their chain's smaller bounds: those
        # stored before (a resumed run) and those finished in this run
        networks = _stored_networks(config, store)

        def start_of(cell: Cell) -> dict | None:
            if not config.sweep:
                return None
            smaller = [(score, result) for k, score, result in networks[cell.chain]
                       if _bound_rank(k) < _bound_rank(cell.treewidth)]
            return max(smaller, key=lambda t: t[0])[1] if smaller else None

        with ExitStack() as pool_stack:
            if client is None:
                pool = pool_stack.enter_context(ThreadPoolExecutor(jobs))
                submit = lambda i: pool.submit(run_cell, cells[i], config, prepared, work,  # noqa: E731
                                               start_of(cells[i]), stop)
                capacity, cancel = jobs, None
            else:
                # pure=False: two cells never share a result, even with equal arguments
                submit = lambda i: client.submit(  # noqa: E731
                    run_cell, cells[i], config, prepared, work, start_of(cells[i]), None, pieces_to, pure=False,
                    key=f"twbn-cell-{i}-{os.getpid()}-{time.time_ns()}")
                # on a local cluster a running cell's process dies with its worker when the
                # cluster closes (on a remote one it finishes unseen)
                capacity, cancel = (math.inf if pieces_to is None else cells_at_once), client.cancel
            yield_rows = ((i, _row_of(fut)) for i, fut in _schedule(len(cells), predecessors(cells, config.sweep),
                                                                    submit, capacity, stop, cancel))
            counts = _record_rows(yield_rows, cells, store, run_id, networks, log)
        if stop.is_set():
            counts["stopped"] = len(cells) - sum(counts.values())
        return counts


def _refuse_early(config: Config, jobs: int, executor: str, scheduler, only) -> list:
    """The grid, after every refusal that can be made before the store exists (so that a
    refusal leaves no file): the arguments, ``only``'s patterns, dask, pgmpy, class columns."""
    if jobs < 1:
        raise ExperimentError("--jobs must be at least 1")
    if executor not in EXECUTORS:
        raise ExperimentError(f"unknown executor {executor!r}; choose from {', '.join(EXECUTORS)}")
    if scheduler is not None and executor != "dask":
        raise ExperimentError("--scheduler goes with --executor dask")
    grid = expand(config)
    for pattern in only or ():
        if not any(fnmatch.fnmatchcase(c.key, pattern) for c in grid):
            raise ExperimentError(f"--cells {pattern!r} matches no cell of {config.name}; its keys look like "
                                  f"{grid[0].key!r}")
    if executor == "dask":
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise ExperimentError("the dask executor needs dask distributed: pip install 'twbn[dask]'") from None
    if config.inference:  # fail now, not in every cell
        from twbn.scoring.inference import InferenceUnavailable, require_pgmpy

        try:
            require_pgmpy()
        except InferenceUnavailable as exc:
            raise ExperimentError(f"{config.path}: inference = true, but {exc}") from None
    from twbn.scoring.data import _open_text

    for name, target in config.classes.items():
        with _open_text(config.data[name]) as fh:
            header = [h.strip().lstrip("\ufeff") for h in next(csv.reader(fh), [])]
        if target not in header:
            raise ExperimentError(f"{config.path}: data {name!r} has no column {target!r} (its class)")
    return grid


def _pieces_plan(client, scheduler, config: Config, log) -> tuple:
    """(a remote cluster's address when the cells send their pieces to it, else None; how
    many cells run at once there)."""
    if client is None or scheduler is None or config.cell_jobs <= 1:
        return None, None
    threads = sum(client.nthreads().values())
    # a cell holds a worker thread (its process computes the bound beside) and sends
    # cell_jobs pieces at a time: so many cells at once leave its pieces free threads,
    # which they would otherwise queue behind waiting cells for
    per_cell = config.cell_jobs + 1
    if threads < per_cell:
        log(f"note: the cluster has {threads} threads, fewer than a cell and its {config.cell_jobs} "
            "pieces need: the cells solve their pieces on their workers' machines")
        return None, None
    cells_at_once = threads // per_cell
    plural = "s" * (cells_at_once > 1)
    log(f"pieces of distributed methods on the cluster: {cells_at_once} cell{plural} at a time on its "
        f"{threads} threads (each cell 1 + {config.cell_jobs} for its pieces)")
    return scheduler, cells_at_once


def _stored_networks(config: Config, store: Store) -> dict:
    """A sweep's cells start from the best network of their chain's smaller bounds: those
    stored before (a resumed run); this run's are added as they finish."""
    networks: dict[tuple, list[tuple[int | None, float, dict]]] = defaultdict(list)
    if config.sweep:
        by_key = {c.key: c for c in expand(config)}
        for row in store.cells():
            cell = by_key.get(row["key"])
            if cell is not None and row["score"] is not None and row["result"]:
                networks[cell.chain].append((cell.treewidth, row["score"], json.loads(row["result"])))
    return networks


def _record_rows(rows, cells: list[Cell], store: Store, run_id: int, networks: dict, log) -> dict[str, int]:
    """Store each finished cell as it comes, and keep its network for its chain's larger
    bounds; returns the counts by status."""
    counts: dict[str, int] = {}
    for i, row in rows:
        if row is None:  # stopped while running: nothing to keep
            continue
        cell = cells[i]
        if row.get("score") is not None and row.get("result"):
            networks[cell.chain].append((cell.treewidth, row["score"], row["result"]))
        store.record(run_id, cell, row)
        counts[row["status"]] = counts.get(row["status"], 0) + 1
        score = "" if row.get("score") is None else f" score {row['score']:.2f}"
        if row.get("test_loglik") is not None:
            score += f", held-out log-likelihood {row['test_loglik'] / row['test_rows']:.4f}/row"
        log(f"[{sum(counts.values())}/{len(cells)}] {cell.key}: {row['status']}{score}"
            + (f" ({row['error']})" if row.get("error") else ""))
    return counts
