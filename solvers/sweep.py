"""A sweep over treewidth bounds whose score never drops as k grows.

A network of width ≤ k is one of width ≤ k' for every k' > k, so the best network found
under the smaller bounds is a lower bound on the optimum under a larger one. ``sweep``
solves the bounds in increasing order (unbounded last), hands each method that takes a
start the best network so far, and returns, for every bound, the better of the method's
own network and that one — with the method's bound for that k, which holds for every
network of width ≤ k. Machado et al.'s curves and issue 33's measurements dipped at
larger k where each bound started from nothing.

Bounds flow the other way: a bound proved under k' holds under every k < k' (each network
of width ≤ k is one of width ≤ k'), so once the sweep is done each result takes the
tightest bound proved at its k or above (:func:`lend_bounds`); the cluster LP does not
always converge best at the smallest k (munin, 60 s: k = 5's bound was 1,995 below k = 2's).
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

from twbn.formulations.problem import Problem
from twbn.formulations.solution import SolverResult, make_solution
from twbn.solvers.bounds import call_optimal_at_bound, floor_bound, gap_sources
from twbn.solvers.method import MethodUnavailable

__all__ = ["sweep", "sorted_bounds", "keep_better", "lend_bounds"]


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


def lend_bounds(problems: Sequence[Problem], results: Sequence[SolverResult]) -> list[int]:
    """Give each result with a network the tightest bound proved at its bound or a larger
    one (``problems`` in :func:`sorted_bounds` order, one cache and constraints); returns
    the indices of the results whose bound this tightened (in place, with
    ``stats["bound_from_larger_bound"]``; one that then reaches its bound is optimal).

    Examples
    --------
    >>> from twbn.scoring.cache import ScoreCache
    >>> cache = ScoreCache.from_mapping("AB", [{(): -2.0, (1,): -1.0}, {(): -2.0}])
    >>> ps = [Problem(cache, 0), Problem(cache, 1)]
    >>> small = make_solution(ps[0], [(), ()], bound=-3.5, status="feasible", method="x")
    >>> large = make_solution(ps[1], [(1,), ()], bound=-3.0, status="optimal", method="x")
    >>> lend_bounds(ps, [small, large]), small.bound
    ([], -3.5)
    >>> small.bound = -2.5  # looser than what k = 1 proved
    >>> lend_bounds(ps, [small, large]), small.bound, small.stats["bound_from_larger_bound"]["treewidth"]
    ([0], -3.0, 1)
    """
    tightened = []
    tight = tight_k = None
    for i in range(len(results) - 1, -1, -1):
        sol, problem = results[i], problems[i]
        own = sol.bound if sol.bound is not None and math.isfinite(sol.bound) else None
        if tight is not None and sol.parents is not None and sol.status == "feasible" \
                and (own is None or tight < own - 1e-9 * max(1.0, abs(own))):
            sol.bound = max(tight, sol.score)
            where = "without a bound" if tight_k is None else f"under treewidth <= {tight_k}"
            sol.stats["bound_from_larger_bound"] = {"treewidth": tight_k, "bound": tight, "own_bound": own}
            sol.stats["bound_source"] = (f"the bound proved {where}: every network of width <= "
                                         f"{problem.treewidth} is one there too")
            call_optimal_at_bound(sol)
            sources = gap_sources(problem, sol)
            if sources is not None:
                sol.stats["gap_sources"] = sources
            tightened.append(i)
            own = sol.bound
        if own is not None and (tight is None or own < tight):
            tight, tight_k = own, problem.treewidth
    return sorted(tightened)


def sweep(problems: Sequence[Problem], solve_one: Callable[[Problem, SolverResult | None], SolverResult], *,
          takes_start: bool, on_result: Callable[[Problem, SolverResult], None] | None = None,
          stopped: Callable[[], bool] = lambda: False, best: SolverResult | None = None,
          best_k: int | None = None) -> list[SolverResult]:
    """Solve ``problems`` (one cache and constraints, bounds in :func:`sorted_bounds`
    order) in turn; ``solve_one(problem, start)`` runs the method, ``start`` being the
    best network so far when ``takes_start`` (else None). Each result is never worse than
    any before it. ``on_result`` sees each as it comes (to write it at once), and once
    more, at the end, each result whose bound a larger bound's proof tightened
    (:func:`lend_bounds`); a stop request (``stopped()``) ends the sweep after the bound
    that was running. ``best``
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
    for i in lend_bounds(problems[:len(out)], out):
        if on_result is not None:
            on_result(problems[i], out[i])
    return out
