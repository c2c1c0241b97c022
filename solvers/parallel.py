"""Work beside this process: a method run alone in a spawned process, and the Dask
cluster that ``improve``'s pieces may go to.

``auto`` runs its start method alone for the whole budget beside the method it chose
(never worse than that method alone, issue 33.4); ``improve`` runs extra k-MAX starts
beside its own when it has jobs to spare (the best start wins); a method whose bound is
the cluster LP's, given two jobs or more, has that LP computed beside it for the whole
budget by one of them (``BoundAlone``) instead of after it on a share. The child dies with its
parent, ignores Ctrl-C (the parent hears it and ends the child) and is ended, not waited
for, when its answer is no longer wanted.

Past one machine (issue 33.2), a method that declares ``distributed`` takes a Dask
scheduler's address (``twbn learn --scheduler``, ``twbn.learn(scheduler=)``), the same
kind of cluster ``twbn experiment --executor dask`` runs its cells on: ``improve`` then
sends its pieces there, ``jobs`` of them at a time. :func:`check_scheduler` refuses, once
at the boundary, an address that cannot be used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from twbn.formulations.problem import Problem
from twbn.scoring.errors import TwbnError
from twbn.formulations.solution import SolverResult
from twbn.solvers.budget import Budget, deadline_in, limit_until
from twbn.solvers.policy import DEFAULT_POLICY, Policy

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

__all__ = ["Alone", "BoundAlone", "SchedulerUnavailable", "check_scheduler",
           "dask_client", "end_pool"]

#: At most this long to wait for an ended pool's own thread (it ends in milliseconds once
#: the children are killed).
POOL_THREAD_WAIT_S = 0.5


def end_pool(pool: "ProcessPoolExecutor") -> None:
    """End a local ``ProcessPoolExecutor`` now: cancel what has not started, kill its
    children (their answers are no longer wanted; waiting for a child to free its memory
    and exit took 1-2 s with CP-SAT at n = 100, past the time limit), and wait for the
    pool's own thread to end. That thread closes a wake-up pipe as it ends; still ending
    when the interpreter exits, it races the exit hook of concurrent.futures writing to that
    pipe (Python 3.11: "Exception ignored in threading._shutdown", OSError), as seen after a
    valid result of ``improve`` with 2 jobs at munin5000.

    Parameters
    ----------
    pool : concurrent.futures.ProcessPoolExecutor
        The pool; its pending work is dropped.

    Returns
    -------
    None
        Once the children are killed and the pool's thread has ended (or
        ``POOL_THREAD_WAIT_S`` has passed).

    Examples
    --------
    >>> from concurrent.futures import ProcessPoolExecutor
    >>> pool = ProcessPoolExecutor(max_workers=1)
    >>> end_pool(pool)
    >>> pool.submit(print)
    Traceback (most recent call last):
    ...
    RuntimeError: cannot schedule new futures after shutdown
    """
    children = list((pool._processes or {}).values())
    thread = pool._executor_manager_thread
    pool.shutdown(wait=False, cancel_futures=True)
    for p in children:
        p.terminate()
    if thread is not None:
        thread.join(timeout=POOL_THREAD_WAIT_S)


class SchedulerUnavailable(TwbnError, ValueError):
    """A Dask scheduler that cannot be used: dask distributed not installed, or the address
    not reached."""


def dask_client(scheduler: str, policy: Policy = DEFAULT_POLICY):
    """A ``distributed.Client`` of the scheduler at ``scheduler``; SchedulerUnavailable if
    dask distributed is missing or the scheduler is not reached within
    ``policy.dask_connect_timeout_s``."""
    try:
        from distributed import Client
    except ImportError:
        raise SchedulerUnavailable("a Dask scheduler needs dask distributed: pip install 'twbn[dask]'") from None
    try:
        return Client(scheduler, timeout=f"{policy.dask_connect_timeout_s:g}s")
    except (OSError, TimeoutError, ValueError, TypeError) as e:
        raise SchedulerUnavailable(f"cannot reach the dask scheduler at {scheduler}: {e}") from None


def check_scheduler(scheduler, jobs: int, method: str, distributed: bool, *, reach: bool = False,
                    policy: Policy = DEFAULT_POLICY) -> None:
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
        dask_client(scheduler, policy).close()


def _alone(subsolver, problem: Problem, method: str, seconds: float, seed: int | None, policy: Policy) -> SolverResult:
    """``method`` alone on ``problem`` for ``seconds``, in the child process, by
    ``subsolver`` (the parent budget's registry, pickled by name)."""
    import signal

    from twbn.solvers.control import die_with_parent

    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent hears Ctrl-C and ends this process
    budget = Budget(seconds, policy=policy)
    budget.subsolver = subsolver
    return budget.solve(problem, method, seed=seed, lp_bound=False)


def _lp_alone(problem: Problem, until: float, so_far, answer, policy: Policy) -> None:
    """The cluster LP's bound on ``problem`` until the ``time.monotonic()`` instant
    ``until`` (one clock for every process of the machine), in the child process: each
    better bound into the shared value ``so_far`` as it is proved, the last (bound, stats)
    sent through the pipe end ``answer``."""
    import signal

    from twbn.solvers.control import die_with_parent, one_core
    from twbn.solvers.relaxation import cluster_lp_bound

    die_with_parent()
    one_core()  # this process is one job
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent hears Ctrl-C and ends this process

    def proved(bound: float) -> None:
        so_far.value = bound

    answer.send(cluster_lp_bound(problem, time_limit=limit_until(until, policy), on_bound=proved, policy=policy))
    answer.close()


class Alone:
    """``method`` on ``problem`` in a spawned process for what is left of ``budget`` less
    the policy's ``parallel_margin_s``; ``result`` gives its SolverResult."""

    def __init__(self, problem: Problem, method: str, budget: Budget, seed: int | None) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.method = method
        self.pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
        self.seconds = budget.left() - budget.policy.parallel_margin_s
        self.future = self.pool.submit(_alone, budget.registry(), problem, method, self.seconds, seed, budget.policy)

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
        end_pool(self.pool)


class BoundAlone:
    """The cluster LP's bound on ``problem`` in a spawned process for what is left of
    ``budget`` less the policy's ``beside_return_s`` (or ``seconds``, if fewer), beside the method (a job
    of its own, issue 33.2).
    ``result`` gives ``cluster_lp_bound``'s (bound, stats), or, if its answer is late, the
    last bound it had proved (``stats["partial"]``): a bound is proved round by round, so
    a late or failed LP costs its last rounds, not the bound."""

    def __init__(self, problem: Problem, budget: Budget, seconds: float | None = None) -> None:
        import math
        import multiprocessing
        import threading
        import time

        from twbn.solvers.bounds import trivial_bound

        ctx = multiprocessing.get_context("spawn")
        self.trivial = trivial_bound(problem)
        self.so_far = ctx.Value("d", math.inf, lock=False)  # one double: written whole
        self.answer, send = ctx.Pipe(duplex=False)
        until = deadline_in(min(budget.left() - budget.policy.beside_return_s,
                                     math.inf if seconds is None else seconds))
        self.process = ctx.Process(target=_lp_alone, args=(problem, until, self.so_far, send, budget.policy),
                                   daemon=True)
        # start() writes the problem down a pipe that the child reads as it starts (0.5 s
        # at plants and munin5000, 1.3 s at jester): in a thread, so the method begins now.
        # The thread lives as long as the child: Linux's parent-death signal
        # (die_with_parent) follows the thread that started a process, not the process.
        self._send = send
        self._started, self._ended = threading.Event(), threading.Event()
        self._starting = threading.Thread(target=self._start, daemon=True)
        self._starting.start()

    def _start(self) -> None:
        try:
            self.process.start()
            self._send.close()  # the child's end: EOF here once the child has ended
        finally:
            self._started.set()
        self._ended.wait()

    def result(self, budget: Budget) -> tuple[float, dict] | None:
        """(bound, stats), waited for until the budget ends; None without a bound. After a
        stop request it does not wait: the last bound proved, at once."""
        import math

        try:
            if not budget.stop_requested():
                try:
                    self._started.wait(limit_until(budget.deadline, budget.policy))
                    if self.answer.poll(limit_until(budget.deadline, budget.policy)):
                        return self.answer.recv()
                except (EOFError, OSError):  # the child died without answering
                    pass
            bound = self.so_far.value
            if not math.isfinite(bound):
                return None
            return bound, {"trivial": self.trivial, "rows": None, "partial": True}
        finally:
            self.close()

    def close(self) -> None:
        """End the child, whatever it is doing."""
        self._started.wait()
        if self.process.is_alive():
            self.process.terminate()
        self._ended.set()
        self.answer.close()
