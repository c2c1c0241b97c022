"""A method run alone in a spawned process beside the work of this one.

``auto`` runs its start method alone for the whole budget beside the method it chose
(never worse than that method alone, issue 33.4); ``improve`` runs extra k-MAX starts
beside its own when it has jobs to spare (the best start wins). The child dies with its
parent, ignores Ctrl-C (the parent hears it and ends the child) and is ended, not waited
for, when its answer is no longer wanted.
"""

from __future__ import annotations

from twbn.formulations.problem import Problem
from twbn.formulations.solution import SolverResult
from twbn.solvers.budget import Budget

__all__ = ["Alone", "PARALLEL_MARGIN"]

#: Seconds a method run alone keeps back from the budget for its process's start (a
#: spawned interpreter importing twbn: 1.5-2 s here) and for sending its network back.
PARALLEL_MARGIN = 2.5


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
