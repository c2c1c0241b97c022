"""The collection of methods, and the one way to run one: ``solve(problem, method, ...)``
returns a certified SolverResult.

Every method is a :class:`~twbn.solvers.method.Method` declared beside its code:
``BUILTIN`` names where twbn's own are (as entry points name a plugin's), and plugins come
from ``register_method`` and the entry-point group ``twbn.methods`` (solvers/plugins.py).
Nothing here knows any method by name. ``solve`` validates a request once, makes the
call's :class:`~twbn.solvers.budget.Budget`, runs the method with what it declares, keeps
``policy.bound_share_at(n)`` of the budget for the cluster LP's bound where the method asks for it, and
never reports a bound worse than the trivial one (solvers/bounds.py). ``run`` adds the
warm starts ``--warm-start`` names (solvers/warm_start.py).
"""

from __future__ import annotations

import importlib
import logging
import math
import time

from twbn.formulations.problem import Problem
from twbn.formulations.solution import SolverResult
from twbn.solvers.bounds import (add_lp_bound, bound_scope, call_optimal_at_bound, covering_problem,
                                 covers_every_family, floor_bound, gap_sources, take_lp_bound, widened_bound)
from twbn.solvers.budget import Budget, deadline_in
from twbn.solvers.control import RunControl, cooperating, one_core, uncooperative
from twbn.solvers.method import Method, MethodUnavailable, NoOptions, call_method
from twbn.solvers.parallel import BoundAlone, check_scheduler
from twbn.solvers.method_options import OptionError, parse_options
from twbn.solvers.plugins import METHODS, PLUGIN_FAILURES, load_plugins
from twbn.solvers.policy import DEFAULT_POLICY, Policy
from twbn.solvers import warm_start as _warm
from twbn.solvers.warm_start import certified_start, check_warm_spec, infeasibility
from twbn.scoring.errors import ParameterError, ParameterTypeError

__all__ = ["BUILTIN", "METHODS", "all_methods", "get_method", "is_builtin", "solve", "run", "check_request",
           "check_time_limit", "MethodUnavailable"]

#: Where twbn's own methods are declared, in the order ``twbn methods`` lists them.
BUILTIN = (
    "twbn.solvers.auto:METHOD",
    "twbn.solvers.exact.dp:METHOD",
    "twbn.solvers.models.milp:METHOD",
    "twbn.solvers.cuts.branch_and_cut:METHOD",
    "twbn.solvers.models.cp:METHOD",
    "twbn.solvers.heuristics.kg:METHOD",
    "twbn.solvers.heuristics.kmax:METHOD",
    "twbn.solvers.improve:METHOD",
    "twbn.solvers.localsearch:METHOD",
    "twbn.solvers.heuristics.kastar:METHOD",
    "twbn.solvers.heuristics.s2:METHOD",
    "twbn.solvers.heuristics.s2:METHOD_PLUS",
)


def _load_builtin() -> dict[str, Method]:
    out = {}
    for where in BUILTIN:
        module, attr = where.split(":")
        method = getattr(importlib.import_module(module), attr)
        out[method.name] = method
    return out


#: Every registered method by name: twbn's own, then plugins as they are registered (the
#: dict is solvers/plugins.py's, which register_method adds to).
METHODS.update(_load_builtin())
_BUILTIN_NAMES = frozenset(METHODS)


class _Registry:
    """The registry as a method sees it on its Budget (``twbn.solvers.method.Subsolver``):
    other methods as stages of its own, and the list of them. Stateless, so that it pickles
    to a child process by name."""

    def solve(self, problem: Problem, method: str, *, budget: Budget, seed: int | None = None,
              warm_start: SolverResult | None = None, options=None, jobs: int = 1, scheduler: str | None = None,
              lp_bound: bool = True) -> SolverResult:
        return solve(problem, method, budget=budget, seed=seed, warm_start=warm_start, options=options, jobs=jobs,
                     scheduler=scheduler, _lp_bound=lp_bound)

    def method(self, name: str) -> Method:
        return get_method(name)

    def methods(self) -> dict[str, Method]:
        return all_methods()


#: What every Budget the registry makes carries as ``budget.subsolver``.
REGISTRY = _Registry()


def warm_start_solution(problem: Problem, spec: str, *, budget: Budget | None = None, time_limit: float | None = None,
                        seed: int | None = None, control: RunControl | None = None) -> tuple[SolverResult, float]:
    """The start ``--warm-start`` names (solvers/warm_start.py), on ``budget`` or on a budget
    of ``time_limit`` seconds made here. Returns it and the seconds it used."""
    if budget is None:
        budget = Budget(time_limit, control=control)
    if budget.subsolver is None:
        budget.subsolver = REGISTRY
    return _warm.warm_start_solution(problem, spec, budget=budget, seed=seed)


def is_builtin(name: str) -> bool:
    """Whether ``name`` is one of twbn's own methods (whose Solutions carry their own
    certificate) rather than a plugin (whose networks twbn certifies)."""
    return name in _BUILTIN_NAMES


def all_methods() -> dict[str, Method]:
    """Every method, the installed plugins' included."""
    load_plugins()
    return METHODS


def get_method(name: str) -> Method:
    """The registered method ``name``; MethodUnavailable (with the names) otherwise."""
    methods = all_methods()
    if name in PLUGIN_FAILURES and name not in methods:
        raise MethodUnavailable(f"method {name} is unavailable: {PLUGIN_FAILURES[name]}")
    if name not in methods:
        raise MethodUnavailable(f"unknown method {name!r}; available: {', '.join(methods)}")
    return methods[name]


def check_policy(policy, budget: Budget | None = None) -> Policy:
    """The policy a call runs under: ``policy``, else the budget's, else the defaults; a
    TypeError for anything that is not a twbn.Policy, a ValueError for a policy that
    differs from the budget's it is given with."""
    if policy is not None and not isinstance(policy, Policy):
        raise ParameterTypeError(f"policy is a twbn.Policy, got {type(policy).__name__}")
    if budget is not None:
        if policy is not None and policy != budget.policy:
            raise ParameterError("give the policy on the budget, not beside it")
        return budget.policy
    return policy if policy is not None else DEFAULT_POLICY


def check_time_limit(time_limit) -> float | None:
    """A time limit in seconds: positive, or None / infinity for none."""
    if time_limit is None:
        return None
    if isinstance(time_limit, (str, bool)):  # '5' or True: a caller's slip, not a number of seconds
        raise ParameterError(f"time limit must be a number of seconds, got {time_limit!r}")
    try:
        value = float(time_limit)
    except (TypeError, ValueError):
        raise ParameterError(f"time limit must be a number of seconds, got {time_limit!r}") from None
    if math.isnan(value) or not value > 0:
        raise ParameterError(f"time limit must be positive, got {time_limit}")
    return None if math.isinf(value) else value


def _endless(time_limit) -> bool:
    """Whether the caller asked for no limit at all (``inf``), not for the method's default
    (None)."""
    return isinstance(time_limit, (int, float)) and not isinstance(time_limit, bool) and math.isinf(time_limit)


def check_jobs(jobs) -> int:
    """A number of processes: an integer >= 1."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ParameterError(f"jobs must be an integer >= 1, got {jobs!r}")
    return jobs


def solve(
    problem: Problem,
    method: str,
    *,
    solver: str | None = None,
    time_limit: float | None = None,
    seed: int | None = None,
    warm_start: SolverResult | None = None,
    options=None,
    control: "RunControl | None" = None,
    budget: Budget | None = None,
    jobs: int = 1,
    scheduler: str | None = None,
    policy: Policy | None = None,
    _lp_bound: bool = True,
) -> SolverResult:
    """Run ``method`` on ``problem`` and return its certified SolverResult.

    Everything is validated here, once, before any solver runs: the method and its
    backend (``solver``), its ``options`` (an instance of its options dataclass or a
    mapping of names to values), whether it takes a warm start and a problem with or
    without a bound, and the time limit (seconds; None: the method's default — the
    heuristics stop after 10 s, exact methods run to the end; ``inf``: no limit at all,
    until the method ends or is stopped). A problem that admits no
    network (required arcs in a cycle, more required parents than k, no candidate set
    left for a variable) gives an ``infeasible`` SolverResult whose ``stats["reason"]`` says
    why, whatever the method. The result's ``time_limit`` is the limit given, its wall
    time the whole call, and its bound never worse than the sum of each variable's best
    candidate score. ``jobs``: the processes a method that declares ``parallel`` may use
    (``auto`` runs its start method alone beside its chosen one); ``scheduler``: a Dask
    scheduler's address a method that declares ``distributed`` sends that work to
    (solvers/parallel.py). ``budget``: a stage of a caller's Budget instead of ``time_limit``
    (a method's own start, a warm start): time is then divided, never converted back and
    forth, and the stages are recorded in the caller's result. A call that made its own
    budget records ``stats["budget"]``: the limit and each stage's allotment and spend.
    ``policy``: the methods' time shares and search knobs (twbn.Policy; default: the
    measured ones), or the one ``budget`` carries; the result records in
    ``stats["policy"]`` the fields that differ from the defaults.

    Raises MethodUnavailable (a ValueError) naming the method and what it cannot take.
    """
    entered = time.monotonic()
    check_request(method, problem.treewidth, solver=solver, time_limit=time_limit, warm_start=warm_start,
                  options=options)
    check_jobs(jobs)
    policy = check_policy(policy, budget)
    spec = get_method(method)
    check_scheduler(scheduler, jobs, method, spec.distributed)
    opts = None if spec.options is None else parse_options(method, spec.options, options)
    if warm_start is not None:
        warm_start = certified_start(problem, warm_start)
        # from data, a start may hold families scored beyond the cache: the method (improve's
        # pieces, the ILPs) searches a cache that holds them
        problem = covering_problem(problem, warm_start.parents)
    why = infeasibility(problem)
    if why is not None:
        return SolverResult(None, None, None, "infeasible", method=method, solver=solver, seed=seed,
                        time_limit=time_limit, stats={"reason": why})
    endless = _endless(time_limit)
    time_limit = check_time_limit(time_limit)
    own = budget is None
    budget = _budget_of(budget, spec, time_limit, endless, control, entered, policy)
    control = control if control is not None else budget.control
    limit = budget.seconds
    if control is not None:
        control.begin(method)
    share = policy.bound_share_at(problem.n) if _lp_bound and spec.needs_lp_bound(problem.n, policy) else 0.0
    beside, share, jobs, joining = _bound_beside(problem, spec, budget, share, jobs, scheduler, limit, policy)
    # an anytime method keeps its network on a signal however deep it is (between the
    # pieces of improve, in its k-MAX start, in the LP bound after it): a signal only sets
    # the stop flag, which its loops and engines' hooks read
    with cooperating(control) if spec.anytime else uncooperative(control), one_core():
        try:
            with budget.stage(method, 1.0 - share) as stage:
                stage.joining = joining or stage.joining
                sol = call_method(spec, problem, opts, stage, seed=seed, solver=solver, start=warm_start, jobs=jobs,
                                  scheduler=scheduler, trusted=is_builtin(method))
        except BaseException:
            if beside is not None:
                beside.close()
            raise
        outside = covering_problem(problem, sol.parents)
        if outside is not problem:
            # the network has families the cache lacked: every bound from here on is over
            # a cache that holds them (the LP beside it saw the cache without them)
            problem = outside
            if beside is not None:
                beside.close()
                beside = None
                sol.stats["lp_bound_dropped"] = "computed beside the method over a cache without its network's families"
        if share and sol.status in ("feasible", "unknown") and not budget.stop_requested():
            problem = _bound_after(problem, spec, opts, budget, sol, share, limit, policy, seed=seed, solver=solver,
                                   jobs=jobs, scheduler=scheduler)
        _collect_beside(beside, sol, budget)  # (after a stop too: the bound proved so far costs nothing to keep)
    _mark(problem, sol, time_limit, seed)
    _finish(sol, entered, control, budget if own else None)
    return sol


def _budget_of(budget: Budget | None, spec: Method, time_limit, endless: bool, control, entered: float,
               policy: Policy) -> Budget:
    """The call's Budget: its own from ``time_limit`` (the method's default without one),
    made at entry, or the caller's stage (with the method's default where it is unlimited)."""
    if budget is None:
        limit = math.inf if endless else time_limit if time_limit is not None else spec.default_seconds(policy)
        # made at entry: the checks above restrict the cache to the problem's candidates
        # (seconds at jester's 772,774 sets), which is part of the caller's budget
        budget = Budget(limit, control=control, started=entered, policy=policy)
    elif budget.deadline is None and not budget.endless and spec.default_seconds(policy) is not None:
        log, origin = budget.log, budget.origin  # an unlimited stage: the method's own default
        budget = Budget(spec.default_seconds(policy), control=budget.control, policy=policy)
        budget.log, budget.origin = log, origin
    budget.subsolver = REGISTRY  # the method's sub-solves and starts come through it
    return budget


def _bound_beside(problem: Problem, spec: Method, budget: Budget, share: float, jobs: int, scheduler, limit,
                  policy: Policy):
    """(the LP's bound in a process of its own or None, the share left for a bound after
    the method, the method's jobs, when the bound's job joins the method or None)."""
    if not (share and jobs >= 2 and limit is not None and budget.left() > 2 * policy.parallel_margin_s
            and not budget.stop_requested()):
        return None, share, jobs, None
    # a job of its own: the LP's bound in a second process, rather than jobs idle while
    # the LP has the last share (issue 33.2). Beside a method that takes jobs it gets its
    # share of all the jobs' time, as a one-job run given jobs times the budget would:
    # share × jobs × the budget on one core (the whole budget from 4 jobs on at a 30 %
    # share); then its job returns to the method (``budget.joining``). Beside any other
    # method it has the whole budget, since its job would come back to nobody.
    lp_seconds = share * jobs * budget.left() if spec.parallel and scheduler is None else math.inf
    beside, joining = BoundAlone(problem, budget, seconds=lp_seconds), None
    if scheduler is None:  # with a Dask cluster the method keeps all the jobs
        jobs -= 1
        if lp_seconds < budget.left() - policy.beside_return_s - policy.join_min_s:
            joining = (deadline_in(lp_seconds), 1)
    return beside, 0.0, jobs, joining


def _bound_after(problem: Problem, spec: Method, opts, budget: Budget, sol: SolverResult, share: float, limit,
                 policy: Policy, *, seed, solver, jobs: int, scheduler) -> Problem:
    """The cluster LP's bound on what the method left of the budget; where the LP ended
    with no violated row and time is left, the method again from its network."""
    with budget.stage("cluster LP bound") as stage:
        add_lp_bound(problem, sol, stage.left() if limit is not None else max(0.5, share * budget.elapsed()), policy)
    call_optimal_at_bound(sol)  # (then nothing is left to gain)
    # at its bound over a cache the search may still grow (families scored from the
    # data on demand) the network is optimal over that cache only: the search goes on
    growable = problem.scorer is not None and not covers_every_family(problem)
    if (sol.stats.get("lp_bound") or {}).get("complete") and spec.warm_start \
            and (sol.status == "feasible" or (sol.status == "optimal" and growable)) \
            and spec.anytime and limit is not None and budget.left() >= policy.resume_min_s \
            and not budget.stop_requested():
        sol.status = "feasible"  # until the search has had its time (a better network may widen the bound)
        problem = _resume(problem, spec, opts, budget, sol, seed=seed, solver=solver, jobs=jobs, scheduler=scheduler)
        call_optimal_at_bound(sol)
    return problem


def _collect_beside(beside, sol: SolverResult, budget: Budget) -> None:
    """The bound computed beside the method into ``sol``; closed unasked where ``sol`` is
    optimal or infeasible."""
    if beside is None:
        return
    if sol.status not in ("feasible", "unknown"):
        beside.close()  # optimal or infeasible: no bound is wanted
        return
    got = beside.result(budget)
    if got is not None:
        take_lp_bound(sol, *got)
        sol.stats["lp_bound"]["beside"] = True  # in a second process, on its own job


def _mark(problem: Problem, sol: SolverResult, time_limit, seed) -> None:
    """The result's limit and seed, its bound floored and scoped, and no 'optimal' a
    bound over a growable cache cannot back."""
    sol.time_limit = time_limit
    if sol.seed is None:
        sol.seed = seed
    floor_bound(problem, sol)
    if sol.bound is not None:
        sol.stats["bound_scope"] = bound_scope(problem)
    if (problem.scorer is not None or problem.cache.meta.get("families_added")) and sol.status == "optimal" \
            and not covers_every_family(problem):
        # reaching a bound over the cache (grown by the network's own families or not) proves
        # nothing about the families the data may score: not a status a user should read as optimal
        sol.status = "feasible"
        sol.stats["reaches_its_bound"] = ("the bound over the cache and the families the search scored into it; "
                                          "not a proof over every family the data may score")
    if sol.parents is None and not sol.stats.get("reason"):
        sol.stats["reason"] = ("no network found within the time limit" if sol.status == "unknown"
                               else "the method proved that no network satisfies the constraints")
    _record_gap_sources(problem, sol)


def _resume(problem: Problem, spec: Method, opts, budget: Budget, sol: SolverResult, *, seed: int | None,
            solver: str | None, jobs: int, scheduler: str | None) -> Problem:
    """The method again, from its own network ``sol``, for what the cluster LP left of the
    budget (it ended with no violated row: more time would not move its bound). ``sol``
    takes the better network, keeps its bound (or the method's, if tighter) and records
    ``stats["resumed"]``. From data the better network may hold families the LP's cache
    lacked: its bound is then widened to cover them (:func:`~twbn.solvers.bounds.widened_bound`).
    Returns the problem ``sol``'s bound is over."""
    at, t0 = sol.wall_time, time.monotonic()
    with budget.stage(f"{spec.name} again (the LP bound had ended)") as stage:
        more = call_method(spec, problem, opts, stage, seed=seed, solver=solver, start=sol, jobs=jobs,
                           scheduler=scheduler, trusted=is_builtin(spec.name))
    spent = time.monotonic() - t0
    resumed = {"at": round(at, 4), "seconds": round(spent, 4), "from": sol.score, "score": more.score,
               **{key: more.stats[key] for key in ("pieces", "improvements") if key in more.stats}}
    if more.parents is not None and more.score > sol.score:
        sol.parents, sol.score, sol.elimination_order, sol.width = (more.parents, more.score, more.elimination_order,
                                                                     more.width)
        grown = covering_problem(problem, more.parents)
        if sol.bound is not None and grown is not problem:
            _, widened = widened_bound(problem, sol.bound, more.parents)
            resumed["bound_widened"] = round(widened - sol.bound, 6)
            sol.bound = widened
        # the method's own bound, where it gives one, is over the problem it was handed:
        # not a bound for a network beyond that problem's cache
        if more.bound is not None and grown is problem and (sol.bound is None or more.bound < sol.bound):
            sol.bound, sol.stats["bound_source"] = more.bound, more.stats.get("bound_source", spec.name)
        if sol.bound is not None:
            sol.bound = max(sol.bound, sol.score)
        sol.trajectory += [{**p, "time": round(p["time"] + at, 4), "bound": sol.bound} for p in more.trajectory
                           if p.get("incumbent") is not None and p["incumbent"] > resumed["from"]]
        problem = grown
    sol.wall_time = round(at + spent, 4)
    sol.stats["resumed"] = resumed
    return problem


def _finish(sol: SolverResult, entered: float, control: "RunControl | None", budget: Budget | None = None) -> None:
    """What every call reports alike: its wall time is all of it (a start a method made
    for itself, the LP bound, the checks), a stop on request is marked, and the call that
    made the budget records how it was spent."""
    sol.wall_time = round(time.monotonic() - entered, 4)
    if control is not None and control.stop_requested():
        sol.stats["interrupted"] = True
    if budget is not None and budget.policy.changed():
        sol.stats["policy"] = budget.policy.changed()
    if budget is not None:
        sol.stats["budget"] = {"limit": sol.time_limit, "seconds": budget.seconds, "stages": list(budget.log)}


def _record_gap_sources(problem: Problem, sol: SolverResult) -> None:
    sources = gap_sources(problem, sol)
    if sources is not None:
        sol.stats["gap_sources"] = sources


def check_request(
    method: str,
    treewidth: int | None,
    *,
    solver: str | None = None,
    time_limit: float | None = None,
    warm_start: "str | SolverResult | None" = None,
    options=None,
) -> None:
    """Refuse a request that cannot run, before any data is read or scored: an unknown
    method, a backend or option the method does not have, a method or named warm start
    that needs a larger bound than ``treewidth``, a warm start for a method that takes
    none, a missing result file, a bad time limit. What needs the problem itself (its
    variables, feasibility) is checked by ``solve``.

    Raises MethodUnavailable (a ValueError), or ValueError for the time limit.
    """
    check_time_limit(time_limit)
    spec = get_method(method)
    if solver is not None and solver not in spec.backends:
        raise MethodUnavailable(f"method {method} has no backend {solver!r}" + (
            f"; choose one of {', '.join(spec.backends)}" if spec.backends else " (it has none)"))
    if options:
        try:  # a method without options refuses any by name, as a misspelt one
            parse_options(method, spec.options or NoOptions, options)
        except OptionError as exc:
            raise MethodUnavailable(str(exc)) from None
    if spec.min_treewidth is not None and (treewidth is None or treewidth < spec.min_treewidth):
        raise MethodUnavailable(f"method {method} needs a treewidth bound k >= {spec.min_treewidth} "
                                "(--treewidth K)")
    if warm_start is not None and not spec.warm_start:
        takers = ", ".join(m.name for m in METHODS.values() if m.warm_start)
        raise MethodUnavailable(f"method {method} takes no warm start (these do: {takers})")
    if isinstance(warm_start, str):
        check_warm_spec(treewidth, warm_start, all_methods())


class _Forward(logging.Handler):
    """Hands the ``twbn`` logger's lines (what ``auto`` chose) to a ``log`` callable."""

    def __init__(self, log) -> None:
        super().__init__(logging.INFO)
        self.log = log

    def emit(self, record: logging.LogRecord) -> None:
        self.log(record.getMessage())


def run(
    problem: Problem,
    method: str = "auto",
    *,
    solver: str | None = None,
    time_limit: float | None = None,
    seed: int | None = None,
    warm_start: "str | SolverResult | None" = None,
    options=None,
    log=None,
    control: "RunControl | None" = None,
    jobs: int = 1,
    scheduler: str | None = None,
    started: float | None = None,
    policy: Policy | None = None,
) -> SolverResult:
    """``solve`` with a warm start given as a SolverResult, a result-file path, ``tree`` or a
    method name (run first on ``policy.warm_start_share`` of ``time_limit``; the method gets what
    is left of the same deadline), as ``twbn learn`` takes it. Everything is validated
    before the warm start runs. The result records the limit given as ``time_limit`` and,
    in ``stats["warm_start"]``, where the start came from, its score and the seconds it
    took. ``log`` receives what the methods say on the ``twbn`` logger (``auto``'s
    choice and why). ``started``: the ``time.monotonic()`` the limit counts from (default:
    now); ``twbn learn`` gives its process's start, so that the limit covers the command."""
    entered = time.monotonic() if started is None else min(started, time.monotonic())
    check_request(method, problem.treewidth, solver=solver, time_limit=time_limit, warm_start=warm_start,
                  options=options)
    endless = _endless(time_limit)
    time_limit = check_time_limit(time_limit)
    check_jobs(jobs)
    check_scheduler(scheduler, jobs, method, get_method(method).distributed)
    policy = check_policy(policy)
    handler = None
    if log is not None:
        handler = _Forward(log)
        logger = logging.getLogger("twbn")
        logger.addHandler(handler)
        old_level = logger.level
        if logger.getEffectiveLevel() > logging.INFO:
            logger.setLevel(logging.INFO)
    try:
        spec = get_method(method)
        with cooperating(control) if spec.anytime else uncooperative(control):  # as in solve()
            return _run_with_start(problem, method, solver=solver, time_limit=math.inf if endless else time_limit,
                                   seed=seed,
                                   warm_start=warm_start, options=options, control=control, entered=entered,
                                   jobs=jobs, scheduler=scheduler, policy=policy)
    finally:
        if handler is not None:
            logger.removeHandler(handler)
            logger.setLevel(old_level)


def _run_with_start(problem, method, *, solver, time_limit, seed, warm_start, options, control,
                    entered, jobs, scheduler, policy) -> SolverResult:
    """``run`` once checked: the warm start, then the method on what is left of one budget
    (``time_limit`` inf: none, not even the method's default)."""
    root = Budget(time_limit, control=control, started=entered, policy=policy)
    root.subsolver = REGISTRY
    time_limit = check_time_limit(time_limit)
    warm, used, label = None, 0.0, None
    if warm_start is not None and infeasibility(problem) is None:
        if isinstance(warm_start, SolverResult):
            warm, label = certified_start(problem, warm_start), warm_start.method or "a given network"
        else:
            warm, used = _warm.warm_start_solution(problem, warm_start, budget=root, seed=seed)
            label = warm_start
    if control is not None and control.stop_requested() and warm is not None:
        # interrupted during the warm start: its network is the best there is, the result
        # of the method asked for, which had not begun
        warm.method, warm.solver, warm.time_limit, warm.seed = method, solver, time_limit, seed
        warm.stats = {"warm_start": {"from": label, "score": warm.score, "seconds": round(used, 4)}}
        floor_bound(problem, warm)
        _finish(warm, entered, control, root)
        return warm
    sol = solve(problem, method, solver=solver, seed=seed, warm_start=warm, options=options, control=control,
                budget=root, jobs=jobs, scheduler=scheduler)
    sol.time_limit = time_limit
    if warm is not None:
        sol.stats["warm_start"] = {"from": label, "score": warm.score, "seconds": round(used, 4)}
        _record_gap_sources(problem, sol)  # the incumbent moved from the start's score
    _finish(sol, entered, control, root)
    return sol
