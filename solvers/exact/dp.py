"""``dp``: the exact method, by the problem's bound.

- k ≤ 1: a maximum branching (Edmonds), exact in polynomial time (solvers/exact/branching.py);
- bounded: the Korhonen–Parviainen DP over k-trees (solvers/exact/kp_dp.py);
- unbounded (or k ≥ n − 1, which binds nothing): the Silander–Myllymäki DP
  (solvers/exact/unbounded.py).
"""

from __future__ import annotations

import math
import time

from twbn.formulations.problem import InfeasibleError, Problem
from twbn.formulations.solution import SolverResult, make_solution
from twbn.solvers.budget import Budget
from twbn.solvers.method import Method
from twbn.scoring.errors import ParameterError

__all__ = ["solve_dp", "METHOD"]


def solve_dp(problem: Problem, *, time_limit: float | None = None) -> SolverResult:
    """The optimum of ``problem``, proved: a maximum branching for k <= 1 (Chu–Liu /
    Edmonds), the Korhonen–Parviainen DP over k-trees for a larger bound, the
    Silander–Myllymäki DP over subsets without one.

    Parameters
    ----------
    problem : Problem
        Any problem. The tables grow as 2^n (unbounded: at most 24 variables) and as
        C(n, k + 1)·(k + 1)!·2^n (bounded, k >= 2): tables past the memory limit are
        refused.
    time_limit : float, optional
        Seconds the bounded DP may run; None: until it ends.

    Returns
    -------
    SolverResult
        Status ``optimal`` with the bound equal to the score; ``unknown`` if the DP passed
        ``time_limit``; ``infeasible`` when no network satisfies the constraints.

    Raises
    ------
    ParameterError
        When the DP's tables would not fit in memory (the message gives their size).

    Examples
    --------
    >>> from twbn.scoring.cache import ScoreCache
    >>> cache = ScoreCache.from_mapping("AB", [{(): -2.0, (1,): -1.0}, {(): -1.5, (0,): -1.4}])
    >>> sol = solve_dp(Problem(cache, 1))
    >>> sol.status, sol.parents, sol.score
    ('optimal', [(1,), ()], -2.5)
    """
    from twbn.solvers.exact.kp_dp import DPTimeout, bounded_treewidth_optimum
    from twbn.solvers.exact.unbounded import unbounded_optimum

    t0 = time.monotonic()
    info = dict(method="dp", solver=None, time_limit=time_limit)
    try:
        cand = problem.candidates
    except InfeasibleError as exc:
        return SolverResult(None, None, None, "infeasible", wall_time=round(time.monotonic() - t0, 4),
                        stats={"reason": str(exc)}, **info)
    try:
        if problem.treewidth is None or problem.treewidth >= problem.n - 1:
            # every network on n variables has treewidth <= n - 1: the bound is void
            parents, value = unbounded_optimum(cand)
            order, stats = None, {"algorithm": "Silander-Myllymaki DP (unbounded)"}
        elif problem.treewidth <= 1:
            # treewidth <= 1 means at most one parent each and a forest: a maximum branching
            # (Edmonds), exact in polynomial time, required arcs included; the KP DP took
            # 27 s at n = 17 with one required arc, and minutes from there on
            from twbn.solvers.exact.branching import optimal_forest

            if problem.treewidth == 0 and not all(() in ps for ps in cand.parent_sets):
                raise ParameterError("no network of treewidth 0 (no arcs) has the required arcs")
            parents = [()] * problem.n if problem.treewidth == 0 else optimal_forest(problem)
            value = math.fsum(cand.score_of(v, ps) for v, ps in enumerate(parents))
            order, stats = None, {"algorithm": "maximum branching (Edmonds), exact for k <= 1"}
        else:
            parents, value, order, stats = bounded_treewidth_optimum(cand, problem.treewidth, time_limit=time_limit)
    except DPTimeout as exc:
        wall = round(time.monotonic() - t0, 4)
        return SolverResult(None, None, None, "unknown", wall_time=wall, trajectory=[], stats={"reason": str(exc)}, **info)
    except ValueError as exc:
        if "no network" in str(exc) or "no acyclic" in str(exc) or "no cached parent set" in str(exc):
            return SolverResult(None, None, None, "infeasible", wall_time=round(time.monotonic() - t0, 4),
                            stats={"reason": str(exc)}, **info)
        raise
    wall = round(time.monotonic() - t0, 4)
    sol = make_solution(problem, parents, bound=value, status="optimal", order_hint=order,
                        wall_time=wall, stats=stats, **info)
    sol.trajectory = [{"time": wall, "incumbent": sol.score, "bound": sol.bound}]  # certified values
    return sol


def _run(problem: Problem, options: None, budget: Budget) -> SolverResult:
    return solve_dp(problem, time_limit=budget.limit())


#: The exact DPs as the registry lists them.
METHOD = Method("dp", _run, summary="exact DP: a maximum branching (k <= 1), Korhonen-Parviainen (bounded), "
                                    "Silander-Myllymaki (unbounded)",
                anytime=False, lp_bound=False, default_time_limit=None)
