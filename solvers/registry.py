"""Methods by name: ``solve(problem, method, ...)`` returns a certified Solution.

One interface for every method (docs/design.md): a Problem and options in, a
Solution out, whose certificate ``make_solution`` checks before it is returned.
"""

from __future__ import annotations

import math
import time

from twbn.formulations.problem import InfeasibleError, Problem
from twbn.formulations.solution import Solution, make_solution

class MethodUnavailable(ValueError):
    """The method (or an option of it) is not available; the message says why."""


def _solve_dp(problem: Problem, *, time_limit: float | None, seed: int | None, solver: str | None, **_) -> Solution:
    """Exact: Korhonen–Parviainen DP under a treewidth bound, Silander–Myllymäki without."""
    from twbn.solvers.exact.unbounded import unbounded_optimum
    from twbn.solvers.exact.kp_dp import DPTimeout, bounded_treewidth_optimum

    if solver not in (None, "dp"):
        raise MethodUnavailable(f"method dp has no backend {solver!r}")
    t0 = time.monotonic()
    info = dict(method="dp", solver=None, seed=seed, time_limit=time_limit)
    try:
        cand = problem.candidates
    except InfeasibleError as exc:
        return Solution(None, None, None, "infeasible", method="dp", time_limit=time_limit,
                        wall_time=round(time.monotonic() - t0, 4), stats={"reason": str(exc)})
    try:
        if problem.treewidth is None or problem.treewidth >= problem.n - 1:
            # every network on n variables has treewidth <= n - 1: the bound is void
            parents, value = unbounded_optimum(cand)
            order, stats = None, {"algorithm": "Silander-Myllymaki DP (unbounded)"}
        elif problem.treewidth <= 1 and not problem.required and all(() in ps for ps in cand.parent_sets):
            # treewidth <= 1 means at most one parent each and a forest: a maximum branching
            # (Edmonds), exact in polynomial time; the KP DP would take minutes from n = 17 on
            from twbn.solvers.exact.branching import optimal_forest

            parents = [()] * problem.n if problem.treewidth == 0 else optimal_forest(problem)
            value = math.fsum(cand.score_of(v, ps) for v, ps in enumerate(parents))
            order, stats = None, {"algorithm": "maximum branching (Edmonds), exact for k <= 1"}
        else:
            parents, value, order, stats = bounded_treewidth_optimum(cand, problem.treewidth, time_limit=time_limit)
    except DPTimeout as exc:
        wall = round(time.monotonic() - t0, 4)
        return Solution(None, None, None, "unknown", wall_time=wall, trajectory=[], stats={"reason": str(exc)}, **info)
    except ValueError as exc:
        if "no network" in str(exc) or "no acyclic" in str(exc) or "no cached parent set" in str(exc):
            return Solution(None, None, None, "infeasible", wall_time=round(time.monotonic() - t0, 4),
                            stats={"reason": str(exc)}, **info)
        raise
    wall = round(time.monotonic() - t0, 4)
    sol = make_solution(problem, parents, bound=value, status="optimal", order_hint=order,
                        wall_time=wall, stats=stats, **info)
    sol.trajectory = [{"time": wall, "incumbent": sol.score, "bound": sol.bound}]  # certified values
    return sol


def _solve_milp(problem: Problem, *, time_limit, seed, solver, warm_start=None, **_) -> Solution:
    from twbn.solvers.models.backends import BACKENDS
    from twbn.solvers.models.milp import solve_milp

    if solver not in (None, *BACKENDS):
        raise MethodUnavailable(f"method milp has no backend {solver!r}; choose one of {', '.join(BACKENDS)}")
    return solve_milp(problem, solver=solver, time_limit=time_limit, seed=seed, warm_start=warm_start)


def _solve_cp(problem: Problem, *, time_limit, seed, solver, warm_start=None, **_) -> Solution:
    from twbn.solvers.models.cp import solve_cp

    if solver not in (None, "cpsat"):
        raise MethodUnavailable(f"method cp has only the backend 'cpsat', not {solver!r}")
    return solve_cp(problem, time_limit=time_limit, seed=seed, warm_start=warm_start)


def _solve_cuts(problem: Problem, *, time_limit, seed, solver, warm_start=None, **_) -> Solution:
    from twbn.solvers.cuts.branch_and_cut import solve_cuts

    if solver not in (None, "scip"):
        raise MethodUnavailable(f"method cuts has only the backend 'scip' (it needs a constraint handler), not {solver!r}")
    return solve_cuts(problem, time_limit=time_limit, seed=seed, warm_start=warm_start)


def _solve_kg(problem: Problem, *, time_limit, seed, solver, **_) -> Solution:
    from twbn.solvers.heuristics.kg import solve_kg

    if solver is not None:
        raise MethodUnavailable("method kg has no backends")
    return solve_kg(problem, time_limit=time_limit, seed=seed)


def _solve_kastar(problem: Problem, *, time_limit, seed, solver, **_) -> Solution:
    from twbn.solvers.heuristics.kastar import solve_kastar

    if solver is not None:
        raise MethodUnavailable("method kastar has no backends")
    return solve_kastar(problem, time_limit=time_limit, seed=seed)


def _solve_s2(problem: Problem, *, time_limit, seed, solver, plus=False, **_) -> Solution:
    from twbn.solvers.heuristics.s2 import PHASE2, solve_s2

    if solver not in (None, *PHASE2):
        raise MethodUnavailable(f"method s2/s2plus takes as backend its phase 2: {', '.join(PHASE2)}; not {solver!r}")
    return solve_s2(problem, plus=plus, time_limit=time_limit, seed=seed, phase2=solver or "auto")


METHODS = {"dp": _solve_dp, "milp": _solve_milp, "cuts": _solve_cuts, "cp": _solve_cp, "kg": _solve_kg, "kastar": _solve_kastar,
           "s2": _solve_s2, "s2plus": lambda problem, **kw: _solve_s2(problem, plus=True, **kw)}
#: Share of the time budget a method-name warm start may use.
WARM_START_SHARE = 0.2


def solve(
    problem: Problem,
    method: str,
    *,
    solver: str | None = None,
    time_limit: float | None = None,
    seed: int | None = None,
    warm_start: Solution | None = None,
) -> Solution:
    if method not in METHODS:
        raise MethodUnavailable(f"unknown method {method!r}; available: {', '.join(METHODS)}")
    if time_limit is not None and not time_limit > 0:
        raise ValueError(f"time limit must be positive, got {time_limit}")
    return METHODS[method](problem, time_limit=time_limit, seed=seed, solver=solver, warm_start=warm_start)


def warm_start_solution(problem: Problem, spec: str, *, time_limit: float | None, seed: int | None) -> tuple[Solution, float]:
    """The start named by ``--warm-start``: ``tree`` (the optimal treewidth-1 network, a
    maximum branching: valid for every k), a result file, or a method run first on a
    ``WARM_START_SHARE`` of the budget. Returns it and the seconds it used."""
    t0 = time.monotonic()
    if spec == "tree":
        from twbn.solvers.exact.branching import optimal_forest

        parents = optimal_forest(problem)
        sol = make_solution(problem, parents, bound=None, status="feasible", method="tree")
    elif spec.endswith(".json"):
        import json

        with open(spec, encoding="utf-8") as fh:
            sol = Solution.from_json(json.load(fh), problem)
    else:
        budget = None if time_limit is None else WARM_START_SHARE * time_limit
        sol = solve(problem, spec, time_limit=budget, seed=seed)
    if sol.parents is None:
        raise ValueError(f"warm start {spec!r} has no network (status {sol.status})")
    return sol, time.monotonic() - t0


def run(
    problem: Problem,
    method: str = "auto",
    *,
    solver: str | None = None,
    time_limit: float | None = None,
    seed: int | None = None,
    warm_start: "str | Solution | None" = None,
    log=None,
) -> Solution:
    """``solve`` with the choices of ``twbn learn``: ``method="auto"`` (solvers/auto.py),
    and a warm start given as a Solution, a result-file path, ``tree`` or a method name
    (run first on a share of ``time_limit``, which the method's own limit then excludes).
    ``log`` receives the one line saying what ``auto`` chose and why."""
    from twbn.solvers.auto import AUTO_TIME_LIMIT, choose_method

    choice = None
    if method == "auto":
        if solver is not None:
            raise MethodUnavailable("a --solver needs a named method; auto picks its own")
        choice = choose_method(problem)
        method = choice.method
        reason = choice.describe()
        if method == "dp" and warm_start is not None:
            warm_start, reason = None, reason + "; the warm start is not used, the DP is exact"
        elif warm_start is None:
            warm_start = choice.warm_start
        if time_limit is None and method != "dp":
            time_limit = AUTO_TIME_LIMIT
            reason += f"; {AUTO_TIME_LIMIT:g} s budget"
        if log is not None:
            log(reason)
    elif method not in METHODS:
        raise MethodUnavailable(f"unknown method {method!r}; available: auto, {', '.join(METHODS)}")
    warm, used = None, 0.0
    if warm_start is not None:
        if method == "dp":
            raise MethodUnavailable("method dp is exact and takes no warm start")
        if isinstance(warm_start, Solution):
            warm = warm_start
        else:
            warm, used = warm_start_solution(problem, warm_start, time_limit=time_limit, seed=seed)
    limit = None if time_limit is None else max(0.1, time_limit - used)
    sol = solve(problem, method, solver=solver, time_limit=limit, seed=seed, warm_start=warm)
    if choice is not None:
        sol.stats["auto"] = choice.reason
    return sol
