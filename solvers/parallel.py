"""Work beside this process: a method run alone in a spawned process, and the Dask
cluster that ``improve``'s pieces may go to.

``auto`` runs its start method alone for the whole budget beside the method it chose
(never worse than that method alone, issue 33.4); ``improve`` runs extra k-MAX starts
beside its own when it has jobs to spare (the best start wins). The child dies with its
parent, ignores Ctrl-C (the parent hears it and ends the child) and is ended, not waited
for, when its answer is no longer wanted.

Past one machine (issue 33.2), a method that declares ``distributed`` takes a Dask
scheduler's address (``twbn learn --scheduler``, ``twbn.learn(scheduler=)``), the same
kind of cluster ``twbn experiment --executor dask`` runs its cells on: ``improve`` then
sends its pieces there, ``jobs`` of them at a time. :func:`check_scheduler` refuses, once
at the boundary, an address that cannot be used.
"""

from __future__ import annotations

from twbn.formulations.problem import Problem
from twbn.scoring.errors import TwbnError
from twbn.formulations.solution import SolverResult
from twbn.solvers.budget import Budget

__all__ = ["Alone", "PARALLEL_MARGIN", "DASK_CONNECT_TIMEOUT_S", "SchedulerUnavailable", "check_scheduler",
           "dask_client"]

#: Seconds a method run alone keeps back from the budget for its process's start (a
#: spawned interpreter importing twbn: 1.5-2 s here) and for sending its network back.
PARALLEL_MARGIN = 2.5
#: Seconds to wait for a Dask scheduler before saying it cannot be reached.
DASK_CONNECT_TIMEOUT_S = 10


class SchedulerUnavailable(TwbnError, ValueError):
    """A Dask scheduler that cannot be used: dask distributed not installed, or the address
    not reached."""


def dask_client(scheduler: str):
    """A ``distributed.Client`` of the scheduler at ``scheduler``; SchedulerUnavailable if
    dask distributed is missing or the scheduler is not reached within
    ``DASK_CONNECT_TIMEOUT_S``."""
    try:
        from distributed import Client
    except ImportError:
        raise SchedulerUnavailable("a Dask scheduler needs dask distributed: pip install 'twbn[dask]'") from None
    try:
        return Client(scheduler, timeout=f"{DASK_CONNECT_TIMEOUT_S}s")
    except (OSError, TimeoutError, ValueError, TypeError) as e:
        raise SchedulerUnavailable(f"cannot reach the dask scheduler at {scheduler}: {e}") from None


def check_scheduler(scheduler, jobs: int, method: str, distributed: bool, *, reach: bool = False) -> None:
    """Refuse a ``scheduler`` that ``method`` cannot use: not a non-empty string, a method
    that does not declare ``distributed``, fewer than 2 ``jobs`` (the pieces sent at
    once), and with ``reach`` a scheduler that does not answer (connected to, then left)."""
    if scheduler is None:
        return
    if not isinstance(scheduler, str) or not scheduler.strip():
        raise SchedulerUnavailable(f"scheduler must be a Dask scheduler's address, e.g. tcp://host:8786, "
                                   f"got {scheduler!r}")
    if not distributed:
        raise SchedulerUnavailable(f"method {method} runs on this machine only; a Dask scheduler is for methods "
                                   "that solve pieces (improve, auto)")
    if jobs < 2:
        raise SchedulerUnavailable("a Dask scheduler needs jobs >= 2: the pieces sent to it at once")
    if reach:
        dask_client(scheduler).close()


def _alone(problem: Problem, method: str, seconds: float, seed: int | None) -> SolverResult:
    """``method`` alone on ``problem`` for ``seconds``, in the child process."""
    import signal

    from twbn.solvers.control import die_with_parent
    from twbn.solvers.registry import solve

    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent hears Ctrl-C and ends this process
    return solve(problem, method, time_limit=seconds, seed=seed, _lp_bound=False)


class Alone:
    """``method`` on ``problem`` in a spawned process for what is left of ``budget`` less
    ``PARALLEL_MARGIN``."""

    def __init__(self, problem: Problem, method: str, budget: Budget, seed: int | None) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.method = method
        self.pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
        self.seconds = budget.left() - PARALLEL_MARGIN
        self.future = self.pool.submit(_alone, problem, method, self.seconds, seed)

    def result(self, budget: Budget) -> SolverResult | None:
        """Its network, waited for until the budget ends (None if it has none, or a stop
        was asked for: it is then ended, not waited for)."""
        from concurrent.futures import TimeoutError as FutureTimeout

        try:
            if budget.stop_requested():
                return None
            return self.future.result(timeout=max(0.1, budget.left()))
        except (FutureTimeout, Exception):  # noqa: BLE001 - the side run is optional
            return None
        finally:
            self.close()

    def close(self) -> None:
        """End the child, whatever it is doing (its result, if any, is not needed)."""
        children = list((self.pool._processes or {}).values())
        self.pool.shutdown(wait=False, cancel_futures=True)
        for p in children:
            p.terminate()
