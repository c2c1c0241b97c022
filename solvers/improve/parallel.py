"""Pieces solved by worker processes (or a Dask cluster's workers) while this process cuts
the next ones and glues each in as it returns (the package docstring, "In parallel")."""

from __future__ import annotations

import logging
import time

from twbn.scoring.errors import TwbnError
from twbn.solvers.budget import limit_until, seconds_to
from twbn.solvers.policy import Policy
from twbn.solvers.parallel import end_pool
from twbn.solvers.improve.pieces import Piece, solve_piece
from twbn.solvers.improve.search import Search, over
__all__ = ["in_parallel"]

LOG = logging.getLogger("twbn")


def _worker_start(parent: int) -> None:
    """A piece worker: dies with its parent, leaves Ctrl-C to it (the parent keeps the network)."""
    import signal

    from twbn.solvers.control import die_with_parent, one_core

    die_with_parent(parent)
    one_core()  # this process is one job
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class _WorkersFailed(TwbnError):
    """A piece worker raised or died (its cause says how); caught in this module."""


class _Workers:
    """Where pieces are solved beside this process: ``jobs`` spawned local processes, or a
    Dask cluster's workers (``scheduler``)."""

    def __init__(self, jobs: int, scheduler: str | None, policy: Policy) -> None:
        self.client, self.policy = None, policy
        if scheduler is None:
            import multiprocessing
            import os
            from concurrent.futures import ProcessPoolExecutor

            self.pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                                            initializer=_worker_start, initargs=(os.getpid(),))
        else:
            from twbn.solvers.parallel import dask_client

            self.client = dask_client(scheduler, policy)
            self.pool = self.client.get_executor(pure=False)

    def submit(self, piece: Piece, deadline: float | None, piece_time_limit: float, seed: int):
        if self.client is not None:  # another machine's clock: the limit is fixed when sent
            piece_time_limit = limit_until(deadline, self.policy, at_most=piece_time_limit)
            deadline = None
        return self.pool.submit(solve_piece, piece.problem, piece.start, piece.fixed, piece.ancestry, deadline,
                                piece_time_limit, seed, None, self.policy)

    def close(self) -> None:
        if self.client is not None:
            self.pool.shutdown(wait=False)  # cancels the pieces still out
            self.client.close()
            return
        end_pool(self.pool)


def in_parallel(search: Search, deadline: float | None, jobs: int, scheduler: str | None = None,
                 joining: tuple[float, int] | None = None) -> dict | None:
    """Pieces solved by ``jobs`` worker processes (or a Dask cluster's workers) while this
    one cuts and glues, ``joining[1]`` more from ``joining[0]`` on; returns when the loop
    is over, or early (the caller goes on in this process) if the workers cannot run.
    Returns when the jobs joined and how many there were then (None: they did not)."""
    import pickle
    from concurrent.futures import FIRST_COMPLETED, BrokenExecutor, wait

    from twbn.solvers.parallel import SchedulerUnavailable

    out: dict = {}
    workers, joined = None, None
    extra = 0 if joining is None else joining[1]
    try:
        # a local pool starts its processes as pieces need them: the joining ones only then
        workers = _Workers(jobs + extra, scheduler, search.policy)
        while not search.proved and not over(search, deadline):
            max_pieces = search.options.max_pieces
            now_jobs = jobs
            if joining is not None and time.monotonic() >= joining[0]:
                now_jobs += extra
                if joined is None:
                    joined = {"seconds": round(time.monotonic() - search.t0, 2), "jobs": now_jobs}
            while len(out) < now_jobs and (max_pieces is None or search.counts["pieces"] + len(out) < max_pieces):
                piece = search.cut([p for p in out.values()])
                out[workers.submit(piece, search.piece_deadline(deadline), search.piece_limit,
                                   search.rng.randrange(2**31))] = piece
            left = None if deadline is None else max(0.0, seconds_to(deadline))
            done, _ = wait(list(out), timeout=0.25 if left is None else min(0.25, left), return_when=FIRST_COMPLETED)
            for future in done:
                piece = out.pop(future)
                try:
                    found, took, limit = future.result()
                except Exception as exc:  # noqa: BLE001 - raised in (or by the loss of) a worker
                    raise _WorkersFailed(exc) from exc
                search.take(piece, found, took, limit)  # a failure here is this process's: raised
    except (_WorkersFailed, SchedulerUnavailable, OSError, pickle.PicklingError, BrokenExecutor) as failed:
        # a worker that cannot start or died (or a cluster out of reach) leaves the work to
        # this process
        exc = failed.__cause__ if isinstance(failed, _WorkersFailed) else failed
        search.counts["workers_failed"] = f"{type(exc).__name__}: {exc}"
        LOG.info(f"improve: the piece workers stopped ({type(exc).__name__}: {exc}); going on in one process")
    finally:
        if workers is not None:
            workers.close()
    return joined
