"""``--method cp``: the CP-SAT k-tree model (formulations/cp_ktree.py) solved by OR-tools
CP-SAT with all cores, a time limit, solution hints and a trajectory of (time,
incumbent, bound) in real score units.

OR-tools ships its own build of HiGHS, and it and highspy's cannot be loaded in one
process (whichever comes second fails with an undefined symbol). So all CP-SAT work runs
in a spawned child process that never imports highspy; the parent only pickles the
problem across and certifies the network that comes back.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
import multiprocessing

from twbn.formulations.problem import InfeasibleError, Problem
from twbn.formulations.solution import SolverResult, make_solution, start_or_nothing
from twbn.solvers.budget import Budget, deadline_in, limit_until
from twbn.solvers.method import Method
from twbn.solvers.method_options import CpOptions
from twbn.solvers.parallel import end_pool
from twbn.solvers.policy import DEFAULT_POLICY, Policy
from twbn.solvers.warm_start import start_order_and_score
from twbn.scoring.errors import ParameterError

__all__ = ["run_isolated", "solve_cp", "hint_check", "METHOD"]



def _cp_worker(problem: Problem, deadline, seed, hint, workers, options, fix_hint=False, channel=None,
               extend=(), return_s: float = DEFAULT_POLICY.cp_return_s) -> dict:
    """Runs in the child: build, hint, solve; plain data back. ``deadline`` is a
    ``time.monotonic()`` instant (the clock is system-wide), or None: the spawn, the
    imports and the build all count against it. ``channel``: two queues of a
    multiprocessing manager, (progress, stop): each solution's (incumbent, bound) goes to
    the first; a message on the second stops the search, which then returns its best."""
    import signal
    import threading

    from ortools.sat.python import cp_model

    from twbn.formulations.cp_ktree import add_hint, build_ktree_cp

    from twbn.solvers.control import die_with_parent

    die_with_parent()
    if channel is not None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the parent, which says stop
    stopped = threading.Event()
    solver = cp_model.CpSolver()
    if channel is not None:
        def listen():
            channel[1].get()
            stopped.set()
            solver.stop_search()  # CP-SAT allows it from another thread

        threading.Thread(target=listen, daemon=True).start()
    t0 = time.monotonic()
    cp = build_ktree_cp(problem, **options)
    for fn in extend:
        fn(cp.model, cp)
    build_s = time.monotonic() - t0
    if hint is not None:
        add_hint(cp, *hint)
        if fix_hint:  # used by tests: the hint must be a complete feasible assignment
            proto = cp.model.proto
            for idx, val in zip(list(proto.solution_hint.vars), list(proto.solution_hint.values)):
                cp.model.add(cp.model.get_int_var_from_proto_index(idx) == val)
    if deadline is not None:
        solver.parameters.max_time_in_seconds = limit_until(deadline - return_s)
    solver.parameters.num_workers = workers or os.cpu_count() or 1
    if seed is not None:
        solver.parameters.random_seed = int(seed) % 2**31
    trajectory: list[dict] = []

    class Recorder(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self):
            trajectory.append({
                "time": round(build_s + self.wall_time, 4),
                "incumbent": cp.offset + self.objective_value / cp.scale,
                "bound": cp.score_bound(self.best_objective_bound),
            })
            if channel is not None:
                channel[0].put((trajectory[-1]["incumbent"], trajectory[-1]["bound"]))

    if stopped.is_set():  # asked to stop while the model was being built: nothing to search
        solver.parameters.max_time_in_seconds = 0.0
    status = solver.solve(cp.model, Recorder())
    out = {
        "status": {cp_model.OPTIMAL: "optimal", cp_model.FEASIBLE: "feasible",
                   cp_model.INFEASIBLE: "infeasible"}.get(status, "unknown"),
        "trajectory": trajectory,
        "bound": cp.score_bound(solver.best_objective_bound) if status in (cp_model.OPTIMAL, cp_model.FEASIBLE) else None,
        "objective": None,
        "choice": None,
        "order": None,
        "stats": {"build_seconds": round(build_s, 4), "scale": cp.scale, "engine_status": solver.status_name(status),
                  **({"interrupted": True} if stopped.is_set() else {}),
                  "branches": int(solver.num_branches), "conflicts": int(solver.num_conflicts),
                  "workers": int(solver.parameters.num_workers),
                  "model": {"variables": len(cp.model.proto.variables), "constraints": len(cp.model.proto.constraints)}},
    }
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        out["objective"] = cp.offset + solver.objective_value / cp.scale
        out["choice"] = [(i, t) for (i, t), lit in cp.x.items() if solver.boolean_value(lit)]
        if cp.p is not None:
            out["order"] = sorted(range(problem.n), key=lambda i: (solver.value(cp.p[i]), -i))
    return out


@contextlib.contextmanager
def _listening(control):
    """The (progress, stop) queues for ``_cp_worker`` when there is a RunControl: a thread
    passes the child's points to it, and a stop request is sent down; None otherwise."""
    if control is None:
        yield None
        return
    from twbn.solvers.control import cooperating

    with multiprocessing.get_context("spawn").Manager() as manager:
        progress, stop = manager.Queue(), manager.Queue()

        def relay():
            while (point := progress.get()) is not None:
                control.report(incumbent=point[0], bound=point[1])

        thread = threading.Thread(target=relay, daemon=True)
        thread.start()
        try:
            with cooperating(control, lambda: stop.put("stop")):
                if control.stop_requested():  # asked before the hook was in place
                    stop.put("stop")
                yield progress, stop
        finally:
            progress.put(None)
            thread.join(timeout=5.0)


def run_isolated(fn, *args, timeout: float | None):
    """``fn(*args)`` in a fresh spawned interpreter (see module doc)."""
    pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
    try:
        return pool.submit(fn, *args).result(timeout=timeout)
    finally:
        end_pool(pool)  # the answer is in (or the child overran)


def solve_cp(
    problem: Problem,
    options: CpOptions | None = None,
    *,
    time_limit: float | None = None,
    seed: int | None = None,
    warm_start: SolverResult | None = None,
    control=None,
    extend=(),
    policy: Policy = DEFAULT_POLICY,
) -> SolverResult:
    """The best network by CP-SAT on the k-tree model (formulations/cp_ktree.py), solved
    in a spawned child process within ``time_limit``, the spawn and the build included.

    Parameters
    ----------
    problem : Problem
        Bounded or not (without a bound only the ancestry order keeps it acyclic).
    options : CpOptions, optional
        Search ``workers`` (default one per core), the ``redundant`` clique-count
        constraints, the order as a ``permutation``; the defaults when None.
    time_limit : float, optional
        Seconds; None: until CP-SAT proves the optimum.
    seed : int, optional
        CP-SAT's random seed.
    warm_start : SolverResult, optional
        A network of ``problem``: CP-SAT's hint, and the answer when the model is not
        built in time.
    control : RunControl, optional
        The child's solutions reach its live line; a stop request ends the search with its
        best solution.
    extend : sequence of callables
        Functions ``f(model, cp)`` called in the child on the built OR-tools CpModel (and
        twbn's k-tree model, which maps its variables back) before it is solved; they
        must be importable module-level functions, since they are pickled to the child
        (twbn.models.KtreeCp).

    Returns
    -------
    SolverResult
        ``optimal`` when CP-SAT proved it, else ``feasible`` with its bound,
        ``infeasible``, or ``unknown`` (no network in time; the warm start if given).

    Raises
    ------
    ParameterError
        Without OR-tools installed.

    Examples
    --------
    >>> from twbn.scoring.cache import ScoreCache
    >>> cache = ScoreCache.from_mapping("ABCD", [{(): -10.0, (1,): -7.0, (1, 2): -4.0}, {(): -10.0},
    ...                                          {(): -10.0, (1,): -9.0}, {(): -10.0, (0,): -6.0}])
    >>> sol = solve_cp(Problem(cache, 1), CpOptions(workers=1), time_limit=30, seed=0)
    >>> sol.status, sol.score, sol.width
    ('optimal', -32.0, 1)
    """
    options = options or CpOptions()
    workers = options.workers
    import importlib.util

    if importlib.util.find_spec("ortools") is None:
        raise ParameterError("method cp needs OR-tools (pip install ortools)")
    t0 = time.monotonic()
    info = dict(method="cp", solver="cpsat", seed=seed, time_limit=time_limit)
    try:
        problem.candidates  # noqa: B018 (built here: required arcs may leave a variable none)
    except InfeasibleError as exc:
        return SolverResult(None, None, None, "infeasible", stats={"reason": str(exc)}, **info)
    hint, start_score = None, None
    if warm_start is not None and warm_start.parents is not None:
        order, start_score = start_order_and_score(problem, warm_start)
        hint = (warm_start.parents, order if order is not None else list(range(problem.n)))
    model_options = {"redundant": options.redundant, "permutation": options.permutation}
    timeout = None if time_limit is None else time_limit + policy.cp_margin_s
    deadline = None if time_limit is None else t0 + time_limit
    try:
        with _listening(control) as channel:
            out = run_isolated(_cp_worker, problem, deadline, seed, hint, workers, model_options, False, channel,
                               tuple(extend), policy.cp_return_s,
                               timeout=timeout)
    except FutureTimeout:
        # the model took longer to build than the budget: the start, if any, is the answer
        return start_or_nothing(problem, warm_start, wall_time=round(time.monotonic() - t0, 4),
                                stats={"reason": "the CP-SAT model was not built and solved within the time limit"},
                                **info)
    if start_score is not None:
        out["stats"]["warm_start_score"] = start_score
    return _network(problem, out, round(time.monotonic() - t0, 4), info)


def _network(problem: Problem, out: dict, wall: float, info: dict) -> SolverResult:
    """CP-SAT's answer as a certified network (or its status where it has none)."""
    cand, stats = problem.candidates, out["stats"]
    if out["choice"] is None:
        status = "infeasible" if out["status"] == "infeasible" else "unknown"
        return SolverResult(None, None, None, status, wall_time=wall, trajectory=out["trajectory"], stats=stats, **info)
    parents = [None] * problem.n
    for i, t in out["choice"]:
        parents[i] = cand.parent_sets[i][t]
    trajectory = out["trajectory"] + [{"time": wall, "incumbent": None, "bound": out["bound"]}]
    sol = make_solution(problem, parents, bound=out["bound"], status="feasible", order_hint=out["order"],
                        wall_time=wall, trajectory=trajectory, stats=stats, **info)
    # integer rounding may leave a hair of gap even when CP-SAT proves optimality
    if out["status"] == "optimal" and sol.bound - sol.score <= 1e-6 * max(1.0, abs(sol.score)):
        sol.status = "optimal"
    sol.trajectory[-1]["incumbent"] = sol.score
    return sol


def hint_check(problem: Problem, parents, order) -> tuple[str, float | None]:
    """Solve with every variable fixed to its hint: (status, objective). For tests."""
    out = run_isolated(_cp_worker, problem, deadline_in(60.0), 0, (parents, order), None, {}, True, timeout=180)
    return out["status"], out["objective"]


def _run(problem: Problem, options: CpOptions, budget: Budget, *, seed: int | None, solver: str,
         start: SolverResult | None) -> SolverResult:
    return solve_cp(problem, options, time_limit=budget.limit(), seed=seed, warm_start=start, control=budget.control,
                    policy=budget.policy)


#: The CP-SAT k-tree model as the registry lists it.
METHOD = Method("cp", _run, options=CpOptions, summary="the CP-SAT k-tree model", backends=("cpsat",),
                warm_start=True, seeded=True, default_time_limit=None)
