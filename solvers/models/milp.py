"""``--method milp``: the Nie et al. elimination-order MILP (formulations/elimination_milp.py)
on a MIP engine (solvers/models/backends.py), with warm start, time limit and trajectory."""

from __future__ import annotations

import os
import tempfile
import time
from typing import Callable, Sequence

from twbn.formulations.cluster_ilp import BuildTimeout
from twbn.formulations.elimination_milp import MilpOptions, build_elimination_milp, start_values
from twbn.formulations.problem import InfeasibleError, Problem
from twbn.formulations.solution import SolverResult, make_solution, start_or_nothing
from twbn.solvers.control import MethodOverran, abandoning
from twbn.solvers.budget import Budget, seconds_to
from twbn.solvers.policy import DEFAULT_POLICY, Policy
from twbn.solvers.method import Method
from twbn.solvers.models.backends import solve_lp_file
from twbn.solvers.warm_start import start_order_and_score

__all__ = ["write_lp", "solve_milp", "METHOD"]



def write_lp(milp, path: str) -> dict[str, str]:
    """Write the model as an LP file with symbolic names; map pyomo name → LP name."""
    import pyomo.environ as pyo

    _, smap_id = milp.model.write(path, io_options={"symbolic_solver_labels": True})
    smap = milp.model.solutions.symbol_map[smap_id]
    out = {}
    for var in milp.model.component_data_objects(pyo.Var):
        label = smap.byObject.get(id(var))
        if label is not None:
            out[var.name] = label
    return out


def solve_milp(
    problem: Problem,
    *,
    solver: str | None = "highs",
    time_limit: float | None = None,
    seed: int | None = None,
    warm_start: SolverResult | None = None,
    options: MilpOptions | None = None,
    control=None,
    extend: Sequence[Callable] = (),
    policy: Policy = DEFAULT_POLICY,
) -> SolverResult:
    """The best network by the elimination-order MILP of Nie et al. (2014), Fig. 6
    (formulations/elimination_milp.py), built in pyomo within ``policy.milp_build_share`` of
    ``time_limit``, written as an LP file and solved by a MIP engine in the rest.

    Parameters
    ----------
    problem : Problem
        Bounded or not (without a bound the order constraints alone keep it acyclic).
    solver : {"highs", "scip", "cbc"}, default "highs"
        The MIP engine.
    time_limit : float, optional
        Seconds for building, writing and solving; None: until the engine proves the
        optimum.
    seed : int, optional
        The engine's random seed.
    warm_start : SolverResult, optional
        A network of ``problem``: the engine's first incumbent (its elimination order is
        recomputed when it does not certify the bound).
    options : MilpOptions, optional
        The model's strengthenings (8c/8f's tight big-M, the aggregated 8f–8h, the
        2-cycle and order-pair rows); all on when None, ``MilpOptions.plain()`` for Fig. 6
        as published.
    control : RunControl, optional
        Stop requests (the engine's incumbent is kept) and progress.
    extend : sequence of callables
        Functions ``f(model, milp)`` called on the built pyomo model (and twbn's
        EliminationMilp, which maps its variables back) before it is written: a
        researcher's constraints, cuts or objective terms (twbn.models.NieMilp).

    Returns
    -------
    SolverResult
        ``optimal`` when the engine proved it, else ``feasible`` with the engine's bound,
        ``infeasible``, or ``unknown`` (no network in time; the warm start if given); the
        trajectory of (time, incumbent, bound) counts the build.

    Raises
    ------
    BackendUnavailable
        For an engine that is not one of the three or not installed.

    Examples
    --------
    >>> from twbn.scoring.cache import ScoreCache
    >>> cache = ScoreCache.from_mapping("ABCD", [{(): -10.0, (1,): -7.0, (1, 2): -4.0}, {(): -10.0},
    ...                                          {(): -10.0, (1,): -9.0}, {(): -10.0, (0,): -6.0}])
    >>> sol = solve_milp(Problem(cache, 1), solver="highs", time_limit=30)
    >>> sol.status, sol.score, sol.width
    ('optimal', -32.0, 1)
    """
    solver = solver or "highs"
    t0 = time.monotonic()
    deadline = None if time_limit is None else t0 + policy.milp_build_share * time_limit

    def unsolved(reason: str, interrupted: bool = True) -> SolverResult:
        wall = round(time.monotonic() - t0, 4)
        return start_or_nothing(problem, warm_start, method="milp", solver=solver, seed=seed, time_limit=time_limit,
                                wall_time=wall, stats={"reason": reason, "build_seconds": wall,
                                                       **({"interrupted": True} if interrupted else {})})

    try:
        milp = build_elimination_milp(problem, options, deadline=deadline,
                                      stopped=None if control is None else control.stop_requested)
    except InfeasibleError as exc:
        return SolverResult(None, None, None, "infeasible", method="milp", solver=solver, seed=seed,
                        time_limit=time_limit, stats={"reason": str(exc)})
    except BuildTimeout as exc:  # the start, if any, is the answer: nothing was solved
        return unsolved(str(exc), interrupted=False)
    for fn in extend:
        fn(milp.model, milp)
    build_s = time.monotonic() - t0
    start, start_score = _start_values(problem, milp, warm_start)
    if control is not None and control.stop_requested():  # built, but writing it out takes as long again
        return unsolved("stopped before the model was solved")
    try:
        out, names = _write_and_solve(milp, start, solver, None if time_limit is None else t0 + time_limit,
                                      seed=seed, control=control)
    except MethodOverran:
        return unsolved("stopped while the model was written out")
    trajectory, stats = _record(milp, out, build_s, start_score, control)
    info = dict(method="milp", solver=solver, seed=seed, time_limit=time_limit,
                wall_time=round(time.monotonic() - t0, 4), trajectory=trajectory, stats=stats)
    if out.values is None:
        status = out.status if out.status in ("infeasible", "unknown") else "unknown"
        return SolverResult(None, None, out.bound if status == "unknown" else None, status, **info)
    return _network(problem, milp, out, names, info)


def _write_and_solve(milp, start: dict | None, solver: str, deadline: float | None, *, seed, control):
    """(the engine's answer, the LP file's names of the model's variables): the model
    written as an LP file, solved from ``start`` until ``deadline``. MethodOverran where a
    stop came while it was written."""
    with tempfile.TemporaryDirectory(prefix="twbn-milp-") as tmp:
        path = os.path.join(tmp, "model.lp")
        # pyomo's writer takes as long as the build (5 s at n = 70, k = 3) and reads no
        # stop flag: a stop request is raised inside it at once
        with abandoning(None, control, grace=0.0):
            names = write_lp(milp, path)
        lp_start = None if start is None else {names[k]: v for k, v in start.items() if k in names}
        remaining = None if deadline is None else max(0.1, seconds_to(deadline))
        return solve_lp_file(path, solver, time_limit=remaining, seed=seed, start=lp_start, control=control), names


def _start_values(problem: Problem, milp, warm_start: SolverResult | None) -> tuple[dict | None, float | None]:
    """The model's values at ``warm_start`` (with an elimination order of width <= k) and
    its score; (None, None) without a start."""
    if warm_start is None or warm_start.parents is None:
        return None, None
    order, score = start_order_and_score(problem, warm_start)
    return start_values(milp, warm_start.parents, order), score


def _record(milp, out, build_s: float, start_score: float | None, control) -> tuple[list, dict]:
    """The run's trajectory (the engine's, shifted by the build; the start first) and stats."""
    # engine times start after building and writing the model
    trajectory = [{"time": round(p["time"] + build_s, 4), "incumbent": p["incumbent"], "bound": p["bound"]} for p in out.trajectory]
    stats = {"model": milp.size, "build_seconds": round(build_s, 4), "options": vars(milp.options), **out.stats}
    if control is not None and control.stop_requested():
        stats["interrupted"] = True
    if start_score is not None:
        stats["warm_start_score"] = start_score
        # the start is an incumbent from the moment the model exists, whether or not the
        # engine reports it (CBC reports only its final point)
        if not trajectory or trajectory[0]["incumbent"] is None or abs(trajectory[0]["incumbent"] - start_score) > 1e-6:
            trajectory.insert(0, {"time": round(build_s, 4), "incumbent": start_score, "bound": None})
    return trajectory, stats


def _network(problem: Problem, milp, out, names: dict, info: dict) -> SolverResult:
    """The engine's point as a certified network: the chosen parent sets, the order of the
    z variables as the elimination order's hint."""
    cand = problem.candidates
    parents = [None] * problem.n
    for i, t in milp.pa_index:
        if out.values.get(names[f"Pa[{i},{t}]"], 0.0) > 0.5:
            parents[i] = cand.parent_sets[i][t]
    hint = None
    if problem.treewidth is not None:
        z = {i: out.values.get(names[f"z[{i}]"], 0.0) for i in range(problem.n)}
        hint = sorted(range(problem.n), key=lambda i: (z[i], i))
    sol = make_solution(problem, parents, bound=out.bound, status="feasible", order_hint=hint, **info)
    # an engine's "optimal" is within its own gap tolerance; claim it only when the bound
    # closes the gap to the verifier's tolerance (formulations/verify.py, OPTIMAL_GAP)
    if out.status == "optimal" and sol.bound is not None and sol.bound - sol.score <= 1e-6 * max(1.0, abs(sol.score)):
        sol.status = "optimal"
    elif out.status == "optimal":
        sol.stats["engine_said_optimal"] = True
    return sol


def _run(problem: Problem, options: MilpOptions, budget: Budget, *, seed: int | None, solver: str,
         start: SolverResult | None) -> SolverResult:
    return solve_milp(problem, solver=solver, time_limit=budget.limit(), seed=seed, warm_start=start,
                      options=options, control=budget.control, policy=budget.policy)


#: The elimination-order MILP as the registry lists it.
METHOD = Method("milp", _run, options=MilpOptions, summary="the elimination-order MILP of Nie et al. (2014) in pyomo",
                backends=("highs", "scip", "cbc"), warm_start=True, seeded=True, default_time_limit=None)
