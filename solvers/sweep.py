"""A sweep over treewidth bounds whose score never drops as k grows.

A network of width ≤ k is one of width ≤ k' for every k' > k, so the best network found
under the smaller bounds is a lower bound on the optimum under a larger one. ``sweep``
solves the bounds in increasing order (unbounded last), hands each method that takes a
start the best network so far, and returns, for every bound, the better of the method's
own network and that one — with the method's bound for that k, which holds for every
network of width ≤ k. Machado et al.'s curves and issue 33's measurements dipped at
larger k where each bound started from nothing.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

from twbn.formulations.problem import Problem
from twbn.formulations.solution import SolverResult, make_solution
from twbn.solvers.bounds import call_optimal_at_bound, floor_bound
from twbn.solvers.warm_start import MethodUnavailable

__all__ = ["sweep", "sorted_bounds", "keep_better"]


def sorted_bounds(bounds: Sequence[int | None]) -> list[int | None]:
    """``bounds`` in the order a sweep runs them: increasing, unbounded (None) last.

    Raises
    ------
    MethodUnavailable
        An empty list, a repeated bound, or a bound that is not an integer >= 0.

    Examples
    --------
    >>> sorted_bounds([8, None, 2, 5])
    [2, 5, 8, None]
    """
    bounds = list(bounds)
    if not bounds:
        raise MethodUnavailable("a sweep needs at least one treewidth bound")
    for k in bounds:
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 0):
            raise MethodUnavailable(f"a treewidth bound is an integer >= 0 (or None: unbounded), got {k!r}")
    if len(set(bounds)) != len(bounds):
        raise MethodUnavailable(f"treewidth bounds repeat: {bounds}")
    return sorted((k for k in bounds if k is not None)) + ([None] if None in bounds else [])


def keep_better(problem: Problem, sol: SolverResult, best: SolverResult | None, best_k: int | None,
                key: str = "kept_from_smaller_bound") -> SolverResult:
    """``sol``, or ``best`` (found under the smaller bound ``best_k``) where it scores
    more, certified for ``problem`` and carrying ``sol``'s bound, which holds for every
    network of this problem."""
    if best is None or best.parents is None:
        return sol
    tol = 1e-9 * max(1.0, abs(best.score))
    if sol.parents is not None and sol.score >= best.score - tol:
        return sol
    kept = make_solution(problem, best.parents, bound=None, status="feasible", method=sol.method,
                         order_hint=best.elimination_order, solver=sol.solver, seed=sol.seed,
                         time_limit=sol.time_limit, wall_time=sol.wall_time, trajectory=list(sol.trajectory),
                         stats={**sol.stats, key: {
                             "treewidth": best_k, "from": best.method, "score": best.score,
                             "method_score": sol.score}})
    if sol.bound is not None and math.isfinite(sol.bound):
        kept.bound = max(sol.bound, kept.score)
    floor_bound(problem, kept)
    call_optimal_at_bound(kept)
    return kept


def sweep(problems: Sequence[Problem], solve_one: Callable[[Problem, SolverResult | None], SolverResult], *,
          takes_start: bool, on_result: Callable[[Problem, SolverResult], None] | None = None,
          stopped: Callable[[], bool] = lambda: False, best: SolverResult | None = None,
          best_k: int | None = None) -> list[SolverResult]:
    """Solve ``problems`` (one cache and constraints, bounds in :func:`sorted_bounds`
    order) in turn; ``solve_one(problem, start)`` runs the method, ``start`` being the
    best network so far when ``takes_start`` (else None). Each result is never worse than
    any before it. ``on_result`` sees each as it comes (to write it at once); a stop
    request (``stopped()``) ends the sweep after the bound that was running. ``best``
    (found under the bound ``best_k``, below the first of ``problems``): a sweep begun
    elsewhere, one bound at a time.

    Examples
    --------
    >>> from twbn.scoring.cache import ScoreCache
    >>> from twbn.solvers.registry import solve
    >>> cache = ScoreCache.from_mapping("ABC", [{(): -5.0, (1, 2): -1.0}, {(): -5.0}, {(): -5.0, (1,): -4.0}])
    >>> out = sweep([Problem(cache, k) for k in (1, 2)], lambda p, s: solve(p, "dp"), takes_start=False)
    >>> [s.score for s in out]
    [-14.0, -10.0]
    """
    out: list[SolverResult] = []
    for problem in problems:
        sol = solve_one(problem, best if takes_start else None)
        sol = keep_better(problem, sol, best, best_k)
        out.append(sol)
        if on_result is not None:
            on_result(problem, sol)
        if sol.parents is not None and (best is None or sol.score > best.score):
            best, best_k = sol, problem.treewidth
        if stopped():
            break
    return out
