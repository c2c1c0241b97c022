"""Methods by name: ``solve(problem, method, ...)`` returns a certified Solution.

One interface for every method (docs/design.md): a Problem and options in, a
Solution out, whose certificate ``make_solution`` checks before it is returned.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import time
from dataclasses import dataclass
from typing import Callable

from twbn.formulations.problem import InfeasibleError, Problem
from twbn.formulations.solution import Solution, make_solution
from twbn.solvers.heuristics.anytime import DEFAULT_TIME_LIMIT as HEURISTIC_TIME_LIMIT
from twbn.solvers.relaxation import BOUND_SHARE
from twbn.solvers.control import RunControl, cooperating
from twbn.solvers.method_options import (
    CpOptions,
    CutsOptions,
    DpOptions,
    ImproveOptions,
    KastarOptions,
    KgOptions,
    KmaxOptions,
    MilpOptions,
    OptionError,
    S2Options,
    parse_options,
)
from twbn.scoring.errors import TwbnError

#: Above this n the whole cluster-cut ILP's root LP may not finish in minutes (bounded,
#: n = 64: not in 60 s; unbounded baudio, n = 100: not in 120 s), so ``cuts`` keeps
#: BOUND_SHARE for the cluster LP's bound there and, given no start, runs ``improve`` first.
LARGE_N = 40
#: Share of the budget ``cuts`` gives ``improve`` above LARGE_N when no start is given
#: (option improve_share). Unbounded, 300 s, from an improve start of 81 s: SCIP's root
#: on plants (n = 69) reached −223,027 in the rest, where the cluster LP's 30 s gave
#: −227,412, and on baudio (n = 100) did not solve its first LP; improve alone for the
#: whole budget ended 2,867 and 4,079 ahead. Hence most of the budget goes to improve.
IMPROVE_START_SHARE = 0.6


class MethodUnavailable(TwbnError, ValueError):
    """The method (or an option of it) is not available; the message says why."""


def _solve_dp(problem: Problem, *, time_limit, seed, solver, warm_start, options, control) -> Solution:
    """Exact: Korhonen–Parviainen DP under a treewidth bound, Silander–Myllymäki without."""
    from twbn.solvers.exact.unbounded import unbounded_optimum
    from twbn.solvers.exact.kp_dp import DPTimeout, bounded_treewidth_optimum

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


def _solve_milp(problem, *, time_limit, seed, solver, warm_start, options, control) -> Solution:
    from twbn.solvers.models.milp import solve_milp

    return solve_milp(problem, solver=solver, time_limit=time_limit, seed=seed, warm_start=warm_start,
                      options=options, control=control)


def _solve_cp(problem, *, time_limit, seed, solver, warm_start, options, control) -> Solution:
    from twbn.solvers.models.cp import solve_cp

    return solve_cp(problem, time_limit=time_limit, seed=seed, warm_start=warm_start, control=control,
                    **dataclasses.asdict(options))


def _solve_cuts(problem, *, time_limit, seed, solver, warm_start, options, control) -> Solution:
    from twbn.solvers.cuts.branch_and_cut import solve_cuts

    kwargs = dataclasses.asdict(options)
    share = kwargs.pop("improve_share")
    if share is None:
        share = IMPROVE_START_SHARE if problem.n > LARGE_N else 0.0
    used, start_score = 0.0, None
    if warm_start is None and share > 0 and time_limit is not None:
        # SCIP's own heuristics find nothing worth having at this size and the LNS runs only
        # after the root's LP, which may not finish: the improver is the primal heuristic
        t0 = time.monotonic()
        start = solve(problem, "improve", time_limit=share * time_limit, seed=seed, control=control, _lp_bound=False)
        used = time.monotonic() - t0
        if start.parents is not None:
            warm_start, start_score = certified_start(problem, start), start.score
        if control is not None:
            if control.stop_requested() and warm_start is not None:
                warm_start.method, warm_start.time_limit, warm_start.seed = "cuts", time_limit, seed
                warm_start.stats = {**start.stats, "interrupted": True}
                return warm_start
            control.begin("cuts")
            control.report(incumbent=start_score)
    left = None if time_limit is None else max(0.1, time_limit - used)
    sol = solve_cuts(problem, time_limit=left, seed=seed, warm_start=warm_start, control=control, **kwargs)
    if used:  # its seconds, also in wall_time (solve() counts the whole call)
        sol.stats["warm_start"] = {"from": "improve", "score": start_score, "seconds": round(used, 4)}
    return sol


def _solve_kg(problem, *, time_limit, seed, solver, warm_start, options, control) -> Solution:
    from twbn.solvers.heuristics.kg import solve_kg

    return solve_kg(problem, time_limit=time_limit, seed=seed, control=control, **dataclasses.asdict(options))


def _solve_kmax(problem, *, time_limit, seed, solver, warm_start, options, control) -> Solution:
    from twbn.solvers.heuristics.kmax import solve_kmax

    return solve_kmax(problem, time_limit=time_limit, seed=seed, control=control, **dataclasses.asdict(options))


def _solve_improve(problem, *, time_limit, seed, solver, warm_start, options, control) -> Solution:
    from twbn.solvers.cuts.improve import improve

    used = 0.0
    if warm_start is None:
        # no start given: k-MAX on the warm-start share, as ``--warm-start kmax`` would;
        # unbounded (or k >= n - 1), k-MAX under a bound of UNBOUNDED_START_K: its network
        # is one of this problem's too, and k-MAX's first clique of k + 1 is solved exactly
        t0 = time.monotonic()
        budget = None if time_limit is None else WARM_START_SHARE * time_limit
        void = problem.treewidth is None or problem.treewidth >= problem.n - 1  # binds nothing
        bounded = problem if not void else Problem(
            problem.cache, min(problem.n - 1, UNBOUNDED_START_K) or None, problem.forbidden, problem.required)
        if bounded.treewidth is None:
            warm_start = solve(problem, "dp", control=control)  # n <= 1
        else:
            warm_start = solve(bounded, "kmax", time_limit=budget, seed=seed, control=control, _lp_bound=False)
            if warm_start.parents is not None:
                warm_start = certified_start(problem, warm_start)
        used = time.monotonic() - t0
        if warm_start.parents is None:
            return warm_start
    left = None if time_limit is None else max(0.1, time_limit - used)
    if control is not None and control.stop_requested():
        left = 0.0
    sol = improve(problem, warm_start, time_limit=left, seed=seed, control=control, **dataclasses.asdict(options))
    if used:
        sol.stats["warm_start"] = {"from": "kmax", "score": warm_start.score, "seconds": round(used, 4)}
    return sol


def _solve_kastar(problem, *, time_limit, seed, solver, warm_start, options, control) -> Solution:
    from twbn.solvers.heuristics.kastar import solve_kastar

    return solve_kastar(problem, time_limit=time_limit, seed=seed, control=control, **dataclasses.asdict(options))


def _s2(plus: bool):
    def run(problem, *, time_limit, seed, solver, warm_start, options, control) -> Solution:
        from twbn.solvers.heuristics.s2 import solve_s2

        return solve_s2(problem, plus=plus, time_limit=time_limit, seed=seed, phase2=solver or "auto", control=control,
                        **dataclasses.asdict(options))

    return run


@dataclass(frozen=True)
class Method:
    """What a method is and what it accepts: the registry checks every call against it."""

    name: str
    summary: str
    run: Callable[..., Solution]
    options: type
    backends: tuple[str, ...] = ()  #: the first is the default
    min_treewidth: int | None = None  #: None: unbounded allowed; else a bound k >= this is needed
    warm_start: bool = False  #: takes a start network
    default_time_limit: float | None = None  #: None: runs to the end (exact methods)
    anytime: bool = False  #: returns its best network when stopped early
    #: the smallest n at which BOUND_SHARE of the budget is kept for the cluster LP's bound
    #: (solvers/relaxation.py), computed after the method unless it proved optimality;
    #: None: never (the method's own bound is better wherever it runs)
    lp_bound_from: int | None = None
    plugin: bool = False  #: registered from outside twbn (solvers/plugins.py)


METHODS: dict[str, Method] = {m.name: m for m in (
    Method("dp", "exact DP: a maximum branching (k <= 1), Korhonen-Parviainen (bounded), Silander-Myllymaki "
                 "(unbounded)", _solve_dp, DpOptions),
    Method("milp", "the elimination-order MILP of Nie et al. (2014) in pyomo", _solve_milp, MilpOptions,
           backends=("highs", "scip", "cbc"), warm_start=True, anytime=True, lp_bound_from=0),
    Method("cuts", "the cluster-cut ILP (GOBNILP-style) on SCIP, bounded or unbounded; above n = 40 without a "
                   "start, improve first", _solve_cuts, CutsOptions,
           backends=("scip",), warm_start=True, anytime=True, lp_bound_from=LARGE_N + 1),
    Method("cp", "the CP-SAT k-tree model", _solve_cp, CpOptions, backends=("cpsat",),
           warm_start=True, anytime=True, lp_bound_from=0),
    Method("kg", "k-G (Scanagatta et al. 2016)", _solve_kg, KgOptions, min_treewidth=1,
           default_time_limit=HEURISTIC_TIME_LIMIT, anytime=True, lp_bound_from=0),
    Method("kmax", "k-MAX (Scanagatta et al. 2018): the variable of least normalised loss next", _solve_kmax,
           KmaxOptions, min_treewidth=1, default_time_limit=HEURISTIC_TIME_LIMIT, anytime=True, lp_bound_from=0),
    Method("improve", "exact-neighbourhood improvement: pieces of a start network re-solved by the cluster-cut "
                      "ILP, the rest held (k-MAX start unless one is given)", _solve_improve, ImproveOptions,
           warm_start=True, default_time_limit=HEURISTIC_TIME_LIMIT, anytime=True, lp_bound_from=0),
    Method("kastar", "k-A* (Scanagatta et al. 2016)", _solve_kastar, KastarOptions, min_treewidth=1,
           default_time_limit=HEURISTIC_TIME_LIMIT, anytime=True, lp_bound_from=0),
    Method("s2", "S2: sampled k-trees, phase 2 by DP or cuts", _s2(False), S2Options,
           backends=("auto", "dp", "cuts"), min_treewidth=1, default_time_limit=HEURISTIC_TIME_LIMIT, anytime=True, lp_bound_from=0),
    Method("s2plus", "S2+: k-trees by informative-score search, phase 2 by DP or cuts", _s2(True), S2Options,
           backends=("auto", "dp", "cuts"), min_treewidth=1, default_time_limit=HEURISTIC_TIME_LIMIT, anytime=True, lp_bound_from=0),
)}
#: Share of the time budget a method-name warm start may use.
WARM_START_SHARE = 0.2
#: ``improve`` without a start on an unbounded problem starts from k-MAX under this bound.
UNBOUNDED_START_K = 8


def get_method(name: str) -> Method:
    """The registered method ``name``; MethodUnavailable (with the names) otherwise."""
    from twbn.solvers.plugins import PLUGIN_FAILURES, load_plugins

    load_plugins()
    if name in PLUGIN_FAILURES and name not in METHODS:
        raise MethodUnavailable(f"method {name} is unavailable: {PLUGIN_FAILURES[name]}")
    if name not in METHODS:
        raise MethodUnavailable(f"unknown method {name!r}; available: {', '.join(METHODS)}")
    return METHODS[name]


def check_time_limit(time_limit) -> float | None:
    """A time limit in seconds: positive, or None / infinity for none."""
    if time_limit is None:
        return None
    if isinstance(time_limit, (str, bool)):  # '5' or True: a caller's slip, not a number of seconds
        raise ValueError(f"time limit must be a number of seconds, got {time_limit!r}")
    try:
        value = float(time_limit)
    except (TypeError, ValueError):
        raise ValueError(f"time limit must be a number of seconds, got {time_limit!r}") from None
    if math.isnan(value) or not value > 0:
        raise ValueError(f"time limit must be positive, got {time_limit}")
    return None if math.isinf(value) else value


def _required_cycle(problem: Problem) -> str | None:
    """The first cycle among the required arcs, as text, or None."""
    import networkx as nx

    g = nx.DiGraph(list(problem.required))
    try:
        cycle = nx.find_cycle(g)
    except nx.NetworkXNoCycle:
        return None
    names = problem.names
    return " -> ".join([names[u] for u, _ in cycle] + [names[cycle[0][0]]])


def infeasibility(problem: Problem) -> str | None:
    """Why no network can satisfy ``problem``, found before any solver runs; or None."""
    both = problem.forbidden & problem.required
    if both:
        u, v = sorted(both)[0]
        return f"arc {problem.names[u]}->{problem.names[v]} is both required and forbidden"
    cycle = _required_cycle(problem)
    if cycle is not None:
        return f"the required arcs form a cycle: {cycle}"
    if problem.treewidth is not None:
        from collections import Counter

        indeg = Counter(v for _, v in problem.required)
        for v, d in indeg.items():
            if d > problem.treewidth:
                return (f"{problem.names[v]} must have {d} parents, but treewidth <= {problem.treewidth} allows at "
                        f"most {problem.treewidth}")
    try:
        problem.candidates
    except InfeasibleError as exc:
        return str(exc)
    return None


def certified_start(problem: Problem, start: Solution) -> Solution:
    """``start`` re-certified for ``problem`` (its sets must be candidates here, acyclic, of
    width <= k); MethodUnavailable saying why it cannot be used."""
    if start.parents is None:
        raise MethodUnavailable(f"the warm start has no network (status {start.status})")
    if len(start.parents) != problem.n:
        raise MethodUnavailable(f"the warm start has {len(start.parents)} variables, the cache {problem.n}")
    try:
        return make_solution(problem, start.parents, bound=None, status="feasible", method=start.method or "start",
                             order_hint=start.elimination_order)
    except (KeyError, ValueError) as exc:
        reason = exc.args[0] if exc.args else exc
        raise MethodUnavailable(f"the warm start is not a network of this problem: {reason}") from None


def trivial_bound(problem: Problem) -> float:
    """The sum of each variable's best candidate score: an upper bound on every network
    (it drops acyclicity and the treewidth bound), at no cost."""
    return math.fsum(float(scores[0]) for scores in problem.candidates.scores)


def add_lp_bound(problem: Problem, sol: Solution, seconds: float) -> None:
    """Give ``sol`` the cluster LP relaxation's bound (solvers/relaxation.py), computed in
    about ``seconds``, where it is better than the bound it has; the time counts in its
    wall time and the bound in its last trajectory point."""
    from twbn.solvers.relaxation import cluster_lp_bound

    bound, stats = cluster_lp_bound(problem, time_limit=max(0.05, seconds))
    sol.wall_time = round(sol.wall_time + stats["seconds"], 4)
    sol.stats["lp_bound"] = stats
    if bound < stats["trivial"] and (sol.bound is None or bound < sol.bound):  # else floor_bound's
        sol.bound = bound if sol.score is None else max(bound, sol.score)
        sol.stats["bound_source"] = (f"cluster LP relaxation: a Lagrangian of {stats['rows']} cluster rows "
                                     f"(trivial bound {stats['trivial']:.6g})")
        sol.trajectory.append({"time": sol.wall_time, "incumbent": sol.score, "bound": sol.bound})


def floor_bound(problem: Problem, sol: Solution) -> None:
    """Never report a bound worse than :func:`trivial_bound` (nor none at all where a
    network exists): replace a missing, infinite or weaker bound by it, and call a network
    that reaches it optimal — it is then a proof."""
    if sol.status == "infeasible":
        return
    trivial = trivial_bound(problem)
    if sol.bound is None or not math.isfinite(sol.bound) or sol.bound > trivial:
        sol.bound = trivial if sol.score is None else max(trivial, sol.score)
        sol.stats["bound_source"] = "sum of each variable's best candidate score"
    if sol.score is not None and sol.status == "feasible" and sol.bound - sol.score <= 1e-9 * max(1.0, abs(sol.score)):
        sol.status = "optimal"


def solve(
    problem: Problem,
    method: str,
    *,
    solver: str | None = None,
    time_limit: float | None = None,
    seed: int | None = None,
    warm_start: Solution | None = None,
    options=None,
    control: "RunControl | None" = None,
    _lp_bound: bool = True,
) -> Solution:
    """Run ``method`` on ``problem`` and return its certified Solution.

    Everything is validated here, once, before any solver runs: the method and its
    backend (``solver``), its ``options`` (an options object of solvers/method_options.py
    or a mapping of names to values), whether it takes a warm start and a problem with or
    without a bound, and the time limit (seconds; None: the method's default — the
    heuristics stop after 10 s, exact methods run to the end). A problem that admits no
    network (required arcs in a cycle, more required parents than k, no candidate set
    left for a variable) gives an ``infeasible`` Solution whose ``stats["reason"]`` says
    why, whatever the method. The result's ``time_limit`` is the limit given, and its bound
    is never worse than the sum of each variable's best candidate score.

    Raises MethodUnavailable (a ValueError) naming the method and what it cannot take.
    """
    entered = time.monotonic()
    if method == "auto":
        raise MethodUnavailable("solve() runs a named method; run() chooses for auto")
    check_request(method, problem.treewidth, solver=solver, time_limit=time_limit, warm_start=warm_start,
                  options=options)
    spec = get_method(method)
    time_limit = check_time_limit(time_limit)
    opts = parse_options(method, spec.options, options)
    if warm_start is not None:
        warm_start = certified_start(problem, warm_start)
    why = infeasibility(problem)
    if why is not None:
        return Solution(None, None, None, "infeasible", method=method, solver=solver, seed=seed,
                        time_limit=time_limit, stats={"reason": why})
    limit = time_limit if time_limit is not None else spec.default_time_limit
    if limit is not None:
        # the checks above restrict the cache to the problem's candidates: seconds at
        # jester's 772,774 sets, and part of the caller's budget
        limit = max(0.1, limit - (time.monotonic() - entered))
    if control is not None:
        control.begin(method)
    share = BOUND_SHARE if _lp_bound and spec.lp_bound_from is not None and problem.n >= spec.lp_bound_from else 0.0
    t0 = time.monotonic()
    # an anytime method keeps its network on a signal however deep it is (between the
    # pieces of improve, in its k-MAX start, in the LP bound after it): a signal only sets
    # the stop flag, which its loops and engines' hooks read
    with cooperating(control) if spec.anytime else contextlib.nullcontext():
        sol = spec.run(problem, time_limit=None if limit is None else limit * (1.0 - share), seed=seed,
                       solver=solver, warm_start=warm_start, options=opts, control=control)
        if share and sol.status in ("feasible", "unknown") and not (control and control.stop_requested()):
            spent = time.monotonic() - t0
            add_lp_bound(problem, sol, limit - spent if limit is not None else max(0.5, share * spent))
    sol.time_limit = time_limit
    floor_bound(problem, sol)
    if sol.parents is None and not sol.stats.get("reason"):
        sol.stats["reason"] = ("no network found within the time limit" if sol.status == "unknown"
                               else "the method proved that no network satisfies the constraints")
    _finish(sol, entered, control)
    return sol


def _finish(sol: Solution, entered: float, control: "RunControl | None") -> None:
    """What every call reports alike: its wall time is all of it (a start a method made
    for itself, the LP bound, the checks), and a stop on request is marked."""
    sol.wall_time = round(time.monotonic() - entered, 4)
    if control is not None and control.stop_requested():
        sol.stats["interrupted"] = True


def check_request(
    method: str,
    treewidth: int | None,
    *,
    solver: str | None = None,
    time_limit: float | None = None,
    warm_start: "str | Solution | None" = None,
    options=None,
) -> None:
    """Refuse a request that cannot run, before any data is read or scored: an unknown
    method, ``solver``/``options`` with ``auto``, a backend or option the method does not
    have, a method or named warm start that needs a larger bound than ``treewidth``, a
    warm start for a method that takes none, a missing result file, a bad time limit.
    What needs the problem itself (its variables, feasibility) is checked by ``solve``.

    Raises MethodUnavailable (a ValueError), or ValueError for the time limit.
    """
    check_time_limit(time_limit)
    if method == "auto":
        if solver is not None:
            raise MethodUnavailable("a --solver needs a named method; auto picks its own")
        if options:
            raise MethodUnavailable("method options need a named method; auto picks its own")
    else:
        spec = get_method(method)
        if solver is not None and solver not in spec.backends:
            raise MethodUnavailable(f"method {method} has no backend {solver!r}" + (
                f"; choose one of {', '.join(spec.backends)}" if spec.backends else " (it has none)"))
        try:
            parse_options(method, spec.options, options)
        except OptionError as exc:
            raise MethodUnavailable(str(exc)) from None
        if spec.min_treewidth is not None and (treewidth is None or treewidth < spec.min_treewidth):
            raise MethodUnavailable(f"method {method} needs a treewidth bound k >= {spec.min_treewidth} "
                                    "(--treewidth K)")
        if warm_start is not None and not spec.warm_start:
            takers = ", ".join(m.name for m in METHODS.values() if m.warm_start)
            raise MethodUnavailable(f"method {method} takes no warm start (these do: {takers})")
    if isinstance(warm_start, str):
        _check_warm_spec(treewidth, warm_start)


def _check_warm_spec(treewidth: int | None, spec: str) -> None:
    """Refuse a warm-start name that cannot work, before any time is spent."""
    from twbn.solvers.plugins import load_plugins

    load_plugins()
    if spec == "tree":
        return
    if spec.endswith(".json"):
        import os

        if not os.path.isfile(spec):
            raise MethodUnavailable(f"warm start {spec}: no such file")
        return
    if spec not in METHODS:
        raise MethodUnavailable(f"warm start {spec!r} is neither tree, a result file (.json) nor a method "
                                f"({', '.join(METHODS)})")
    start = METHODS[spec]
    if start.min_treewidth is not None and (treewidth is None or treewidth < start.min_treewidth):
        raise MethodUnavailable(f"warm start {spec} needs a treewidth bound k >= {start.min_treewidth}")


def warm_start_solution(problem: Problem, spec: str, *, time_limit: float | None, seed: int | None,
                        control: "RunControl | None" = None) -> tuple[Solution, float]:
    """The start named by ``--warm-start``: ``tree`` (the optimal treewidth-1 network, a
    maximum branching: valid for every k), a result file, or a method run first on a
    ``WARM_START_SHARE`` of the budget. Returns it and the seconds it used."""
    _check_warm_spec(problem.treewidth, spec)
    t0 = time.monotonic()
    if spec == "tree":
        from twbn.solvers.exact.branching import optimal_forest

        parents = optimal_forest(problem)
        sol = make_solution(problem, parents, bound=None, status="feasible", method="tree")
    elif spec.endswith(".json"):
        import json

        try:
            with open(spec, encoding="utf-8") as fh:
                data = json.load(fh)
        except json.JSONDecodeError as exc:
            raise MethodUnavailable(f"warm start {spec}: not JSON ({exc})") from None
        if not isinstance(data, dict):
            raise MethodUnavailable(f"warm start {spec}: not a result object")
        try:
            sol = Solution.from_json(data, problem)
        except (KeyError, TypeError, ValueError) as exc:
            raise MethodUnavailable(f"warm start {spec}: not a result of this cache ({exc})") from None
    else:
        budget = None if time_limit is None else WARM_START_SHARE * time_limit
        sol = solve(problem, spec, time_limit=budget, seed=seed, control=control, _lp_bound=False)
    if sol.parents is None:
        raise MethodUnavailable(f"warm start {spec!r} has no network (status {sol.status})")
    return certified_start(problem, sol), time.monotonic() - t0


def run(
    problem: Problem,
    method: str = "auto",
    *,
    solver: str | None = None,
    time_limit: float | None = None,
    seed: int | None = None,
    warm_start: "str | Solution | None" = None,
    options=None,
    log=None,
    control: "RunControl | None" = None,
) -> Solution:
    """``solve`` with the choices of ``twbn learn``: ``method="auto"`` (solvers/auto.py),
    and a warm start given as a Solution, a result-file path, ``tree`` or a method name
    (run first on ``WARM_START_SHARE`` of ``time_limit``; the method gets what is left of
    the same deadline). Everything is validated before the warm start runs. The result
    records the limit given as ``time_limit`` and, in ``stats["warm_start"]``, where the
    start came from, its score and the seconds it took. ``log`` receives the one line
    saying what ``auto`` chose and why."""
    from twbn.solvers.auto import AUTO_TIME_LIMIT, choose_method

    entered = time.monotonic()
    check_request(method, problem.treewidth, solver=solver, time_limit=time_limit, warm_start=warm_start,
                  options=options)
    time_limit = check_time_limit(time_limit)
    choice = None
    if method == "auto":
        choice = choose_method(problem, time_limit)
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
    if choice is not None:  # auto's pick, checked as if named
        check_request(method, problem.treewidth, warm_start=warm_start)
    unbounded = None
    if choice is not None and method != "dp":
        unbounded = unbounded_optimum_bound(problem, time_limit, entered)
        if unbounded is not None and unbounded.width is not None and unbounded.width <= problem.treewidth:
            # the unbounded optimum has width <= k: it is this problem's optimum too
            sol = make_solution(problem, unbounded.parents, bound=unbounded.score, status="optimal", method="dp",
                                order_hint=unbounded.elimination_order, seed=seed, time_limit=time_limit,
                                stats={"algorithm": "Silander-Myllymaki DP (unbounded); its network has width "
                                                    f"{unbounded.width} <= {problem.treewidth}",
                                       "auto": choice.reason + "; the unbounded optimum fits the bound"})
            sol.trajectory = [{"time": round(time.monotonic() - entered, 4), "incumbent": sol.score,
                               "bound": sol.bound}]
            _finish(sol, entered, control)
            return sol
    spec = get_method(method)
    with cooperating(control) if spec.anytime else contextlib.nullcontext():  # as in solve()
        return _run_chosen(problem, method, spec, choice, unbounded, solver=solver, time_limit=time_limit, seed=seed,
                           warm_start=warm_start, options=options, control=control, entered=entered)


def _run_chosen(problem, method, spec, choice, unbounded, *, solver, time_limit, seed, warm_start, options, control,
                entered) -> Solution:
    """``run`` once the method is known: its warm start, then the method."""
    warm, used, label = None, 0.0, None
    if warm_start is not None and infeasibility(problem) is None:
        if isinstance(warm_start, Solution):
            warm, label = certified_start(problem, warm_start), warm_start.method or "a given network"
        else:
            warm, used = warm_start_solution(problem, warm_start, time_limit=time_limit, seed=seed, control=control)
            label = warm_start
    if control is not None and control.stop_requested() and warm is not None:
        # interrupted during the warm start: its network is the best there is, the result
        # of the method asked for, which had not begun
        warm.method, warm.solver, warm.time_limit, warm.seed = method, solver, time_limit, seed
        warm.stats = {"warm_start": {"from": label, "score": warm.score, "seconds": round(used, 4)}}
        floor_bound(problem, warm)
        if choice is not None:
            warm.stats["auto"] = choice.reason
        _finish(warm, entered, control)
        return warm
    # everything since entry counts, not only the start: restricting jester's 772,774 sets
    # to the problem's candidates (in ``infeasibility``) took 1.2 s before k-MAX's start
    remaining = None if time_limit is None else max(0.1, time_limit - (time.monotonic() - entered))
    sol = solve(problem, method, solver=solver, time_limit=remaining, seed=seed, warm_start=warm, options=options,
                control=control)
    sol.time_limit = time_limit
    if warm is not None:
        sol.stats["warm_start"] = {"from": label, "score": warm.score, "seconds": round(used, 4)}
    if choice is not None:
        sol.stats["auto"] = choice.reason
    if unbounded is not None:
        tighten_with_unbounded(sol, unbounded)
    _finish(sol, entered, control)
    return sol


#: The share of ``auto``'s budget the unbounded DP may take as a bound for a bounded
#: problem (its expected time, solvers/auto.dp_seconds, with auto's margin).
UNBOUNDED_BOUND_SHARE = 0.25


def unbounded_optimum_bound(problem: Problem, time_limit: float | None, entered: float) -> Solution | None:
    """The unbounded optimum, where the exact DP is expected to take at most
    ``UNBOUNDED_BOUND_SHARE`` of the budget (n <= 22). Every network of width <= k is a
    network without a bound, so its score bounds the bounded optimum from above: on
    mushroom (BDeu, 4 parents) the cluster LP left 17-22 % gaps at k >= 10 where the
    networks found were optimal. None where it would not fit or found nothing."""
    from twbn.solvers.auto import DP_SAFETY, DP_UNBOUNDED_MAX_N, dp_seconds

    if problem.treewidth is None or problem.treewidth >= problem.n - 1 or problem.n > DP_UNBOUNDED_MAX_N:
        return None
    expect = dp_seconds(problem.n, None) * DP_SAFETY
    left = None if time_limit is None else time_limit - (time.monotonic() - entered)
    if left is not None and expect > UNBOUNDED_BOUND_SHARE * left:
        return None
    relaxed = Problem(problem.cache, None, problem.forbidden, problem.required)
    if infeasibility(relaxed) is not None:
        return None
    sol = solve(relaxed, "dp", _lp_bound=False)
    return sol if sol.status == "optimal" else None


def tighten_with_unbounded(sol: Solution, unbounded: Solution) -> None:
    """Give ``sol`` the unbounded optimum as its bound where it is tighter, and call a
    network that reaches it optimal."""
    if sol.status == "infeasible" or unbounded.score is None:
        return
    if sol.bound is None or unbounded.score < sol.bound:
        sol.bound = unbounded.score if sol.score is None else max(unbounded.score, sol.score)
        sol.stats["bound_source"] = ("the unbounded optimum (exact DP): every network of width <= k is one "
                                     "without a bound")
        sol.trajectory.append({"time": sol.wall_time, "incumbent": sol.score, "bound": sol.bound})
    if sol.score is not None and sol.status == "feasible" and sol.bound - sol.score <= 1e-9 * max(1.0, abs(sol.score)):
        sol.status = "optimal"
