"""Book-keeping shared by the anytime heuristics (k-G, k-MAX, k-A*, S2, S2+): the best
candidate so far, every candidate's score for the statistics of Tables 2, 3 and 7 of
Scanagatta et al. (2016), the trajectory, and the stopping rule; and :func:`search`, the
loop of the k-tree builders (k-G, k-MAX, k-A*), which differ only in how they make one
network."""

from __future__ import annotations

import math
import random
import statistics
import time
from typing import Callable

from twbn.formulations.problem import Problem
from twbn.formulations.solution import SolverResult, make_solution
from twbn.solvers.control import cooperating
from twbn.solvers.policy import Policy
from twbn.scoring.errors import ParameterError

__all__ = ["whole_clique_solution", "require_bound", "search", "Anytime"]

def whole_clique_solution(problem: Problem, t0: float, **info) -> SolverResult:
    """With n ≤ k+1 every DAG fits in one (k+1)-clique: the unbounded optimum is the
    answer, reported as one candidate."""
    from twbn.solvers.exact.unbounded import unbounded_optimum

    parents, score = unbounded_optimum(problem.candidates)
    return make_solution(problem, parents, bound=None, status="feasible", wall_time=round(time.monotonic() - t0, 4),
                         stats={"iterations": 1, "median_score": score, "max_score": score}, **info)


def require_bound(problem: Problem, method: str) -> None:
    """ValueError unless ``problem`` has a treewidth bound k >= 1 (the k-tree builders)."""
    if problem.treewidth is None or problem.treewidth < 1:
        raise ParameterError(f"method {method} needs a treewidth bound k >= 1 (--treewidth)")


#: One network from a k-tree builder: (parents, score, insertion order), or None.
Built = "tuple[list, float, list[int]] | None"


def search(problem: Problem, method: str, build: "Callable[[random.Random, float | None], Built]", *, t0: float,
           time_limit: float | None, seed: int | None, max_iterations: int | None, control,
           stats: Callable[[], dict] = dict, policy: Policy) -> SolverResult:
    """Call ``build(rng, deadline)`` until ``time_limit`` (default ``policy.heuristic_time_limit``
    when no ``max_iterations`` is given either), ``max_iterations`` calls or a stop
    request, and return the best network as a SolverResult whose certificate is the reverse
    of its insertion order (a perfect elimination order of the k-tree). ``t0``: when the
    method started (its set-up counts in the limit); ``stats()``: the method's own
    statistics, added at the end. With n ≤ k + 1 the unbounded optimum is the answer."""
    info = dict(method=method, seed=seed, time_limit=time_limit)
    if problem.n <= problem.treewidth + 1:
        return whole_clique_solution(problem, t0, **info)
    limit = policy.heuristic_time_limit if time_limit is None and max_iterations is None else time_limit
    rng = random.Random(seed)
    run = Anytime(limit, max_iterations, t0, control)
    with cooperating(control):
        while run.next_try():
            got = build(rng, run.deadline)
            if got is not None:
                run.offer(got[1], got[0], got[2][::-1])
    return run.solution(problem, stats(), **info)


class Anytime:
    def __init__(self, limit: float | None, max_iterations: int | None, t0: float | None = None, control=None):
        self.t0 = time.monotonic() if t0 is None else t0
        self.control = control  # a RunControl (solvers/control.py) or None
        self.limit = limit
        self.max_iterations = max_iterations
        self.tries = 0
        self.best = None  # (score, parents, order hint)
        self.scores: list[float] = []
        self.trajectory: list[dict] = []

    @property
    def deadline(self) -> float | None:
        return None if self.limit is None else self.t0 + self.limit

    def elapsed(self) -> float:
        """Seconds since the start."""
        return time.monotonic() - self.t0

    def left(self) -> float:
        """Seconds to the deadline (``inf`` without one; negative once past it)."""
        return math.inf if self.limit is None else self.t0 + self.limit - time.monotonic()

    def offer(self, score: float, parents, order_hint) -> None:
        """Record one candidate solution (a network and an elimination-order hint)."""
        self.scores.append(score)
        if self.control is not None:
            self.control.report(iterations=self.tries)
        if self.best is None or score > self.best[0]:
            if self.control is not None:
                self.control.report(incumbent=score)
            self.best = (score, parents, order_hint)
            self.trajectory.append({"time": round(time.monotonic() - self.t0, 4), "incumbent": score, "bound": None})

    def next_try(self) -> bool:
        """Count a try; False once the time limit or the iteration limit is reached, or a
        stop asked for, but never before the first try: a heuristic stopped before it had a
        network makes one (k-MAX's start inside auto, interrupted during auto's unbounded
        bound, returned no network before this)."""
        if self.tries and self.control is not None and self.control.stop_requested():
            return False
        if self.tries and ((self.limit is not None and time.monotonic() - self.t0 >= self.limit)
                           or (self.max_iterations is not None and self.tries >= self.max_iterations)):
            return False
        self.tries += 1
        return True

    def solution(self, problem: Problem, extra_stats: dict, **info) -> SolverResult:
        stats = {"iterations": len(self.scores), **({"interrupted": True} if self.control is not None and
                                                     self.control.stop_requested() else {}), "median_score": statistics.median(self.scores) if self.scores else None,
                 "max_score": max(self.scores) if self.scores else None, **extra_stats}
        wall = round(time.monotonic() - self.t0, 4)
        if self.best is None:
            return SolverResult(None, None, None, "unknown", wall_time=wall, trajectory=self.trajectory, stats=stats, **info)
        _, parents, hint = self.best
        return make_solution(problem, parents, bound=None, status="feasible", order_hint=hint, wall_time=wall,
                             trajectory=self.trajectory, stats=stats, **info)
