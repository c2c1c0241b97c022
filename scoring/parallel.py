"""Per-variable work on several processes: a fork pool whose workers read shared,
read-only state (the data) inherited copy-on-write, with a progress bar and clean-up."""

from __future__ import annotations

import multiprocessing as mp
import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from twbn.scoring.errors import ScoringStopped

__all__ = ["shared", "fork_map", "usable_cores"]

_STATE: dict = {}


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the system says, else the
    machine's): more processes than these only take turns, and a time per variable
    planned for them is overrun (munin at 10 s, two commands of 2 processes each on 2
    cores: 11.4-12.0 s)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _may_fork() -> bool:
    """Fork only while this process runs no other thread: a fork copies whatever lock
    another thread holds at that instant, and a worker blocked on it hangs the pool for
    good (a Dask client's IO loop stays alive in the process that used it: pytest's,
    after the Dask tests). With another thread alive the work runs here, one variable
    after another: slower, never stuck. twbn's own watchers (threads named ``twbn-...``)
    wait on an event or a signal pipe and hold no lock a worker would need."""
    return all(t is threading.main_thread() or t.name.startswith("twbn-") for t in threading.enumerate())


def shared() -> dict:
    """The state given to the running ``fork_map``, as a worker sees it."""
    return _STATE


def fork_map(fn: Callable[[Any], Any], items: Iterable, *, state: dict, jobs: int, total: int, desc: str,
             progress: bool | None = None, count: Callable[[Any], int] = lambda _r: 1,
             stop: Callable[[], bool] | None = None) -> Iterator:
    """Yield ``fn(item)`` for every item, in completion order, on ``jobs`` forked
    processes (in this process when ``jobs`` is 1). ``state`` is what ``shared()``
    returns in the workers; ``count(result)`` advances the progress bar (default: when
    stderr is a terminal) by that many of ``total``. Once ``stop()`` is true (looked at
    as each result comes), the workers are ended and :class:`ScoringStopped` raised."""
    items = list(items)
    _STATE.clear()
    _STATE.update(state)
    if progress is None:
        progress = sys.stderr.isatty()
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=total, desc=desc, unit="var", file=sys.stderr, leave=False)
    pool = None
    try:
        if jobs == 1 or len(items) <= 1 or not _may_fork():
            results: Iterable = map(fn, items)
        else:
            pool = mp.get_context("fork").Pool(jobs)
            results = pool.imap_unordered(fn, items)
        for r in results:
            if stop is not None and stop():
                raise ScoringStopped("scoring stopped on request")
            yield r
            if bar is not None:
                bar.update(count(r))
        if pool is not None:
            pool.close()
            pool.join()
            pool = None
    finally:
        if pool is not None:
            pool.terminate()
        _STATE.clear()
        if bar is not None:
            bar.close()
