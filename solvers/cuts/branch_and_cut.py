"""``--method cuts``: the cluster-cut ILP of formulations/cluster_ilp.py on SCIP, with the
cluster constraints (3) enforced by a constraint handler, as GOBNILP does.

Why SCIP: lazy cluster rows need an engine that lets a callback add rows at every node.
We measured the three routes on 20 alarm variables (docs/cuts.md): a SCIP
constraint handler 4 s; HiGHS (no cut callbacks: add rows and re-solve) 48 s; python-mip
with CBC lazy callbacks 6.8% gap at 150 s. The benchmark in benchmarks/
bench_cuts.py gives our own figures.

The handler (``ClusterHandler``, solvers/cuts/handlers.py):
- separation (``conssepalp``, every node): the greedy heuristic for (3), local search for
  the k-cluster rows (4), k = 2 … ``cluster_k``, and local search for the matroid rows (5)
  of rank 2 … ``cluster_k`` (``matroid``; backing off after fruitless searches,
  ``Backoff``); if all find nothing, the exact sub-IPs of
  Bartlett & Cussens for (3), then (4) (``exact=`` "always" | "root" | "never"). Each row
  goes in in its sparser form (``FamilyTable.sparse_form``): mushroom's 600 s bound moved
  from −90,878 to −90,942 (two runs side by side; optimum −91,074).
  The k-cluster rows close letter's and nltcs's gaps at the root (letter: root gap 0.19%
  without them) and move mushroom's root bound from −88,379 to −88,583 (optimum −91,074).
  The matroid rows then made letter's exact calls unnecessary (142 s → 41 s, each run
  beside one other solve) and moved mushroom's root bound to −90,510 and its 600 s bound
  from −89,761 to −90,847;
- enforcement (``consenfolp`` / ``consenfops``, called only at integral points since its
  priority is below the integrality handler's): the strongly connected components of the
  chosen network are violated clusters; their rows are added, or the point is rejected;
- check (``conscheck``): a solution from any heuristic is feasible iff acyclic;
- locks (``conslock``): raising a family variable with parents can create a cycle, so each
  gets an up-lock; without them SCIP's dual presolving could fix variables to 1.
- heuristic (``SinkHeuristic``, every LP node): the LP point rounded to a DAG, within the
  treewidth bound when there is one (``sink_heuristic``);
- heuristic (``LnsHeuristic``, bounded mode by default): large-neighbourhood search on
  the incumbent, a sub-``cuts`` over ~8 variables with the rest fixed
  (solvers/cuts/lns.py), within the option ``lns_share`` of the elapsed time.
Branching: with ``edges`` (the default) the skeleton's edge variables e_{uv} of
formulations/cluster_ilp.py are branched on before the family variables. Fixing one
family says little (hundreds of others remain), while e_{uv} = 0 removes both
orientations at once, the natural split for score-equivalent scores such as BIC; SCIP's
clique and zero-half separators also find cuts on them (letter's root bound: gap to the
optimum 0.47% → 0.31%).
The root bound (SCIP's dual bound after the root's cutting loop) goes into ``stats``.
"""

from __future__ import annotations

import functools
import os
import time
from typing import Sequence

import numpy as np

from twbn.formulations.cluster_ilp import BuildTimeout, build_cluster_ilp, restrict_to_graph, start_values
from twbn.formulations.graphs import Adjacency
from twbn.formulations.problem import InfeasibleError, Problem
from twbn.formulations.solution import SolverResult, certificate_order, make_solution, start_or_nothing
from twbn.solvers.cuts.cluster_separation import MIN_VIOLATION
from twbn.solvers.control import RunControl, cooperating
from twbn.solvers.budget import Budget
from twbn.solvers.policy import DEFAULT_POLICY, Policy
from twbn.solvers.method import Method
from twbn.solvers.method_options import CutsOptions
from twbn.solvers.models.backends import _finite, record_scip_trajectory, root_bound, scip_interrupt, scip_model

from twbn.solvers.cuts.rounding import Backoff, _z_order, sink_heuristic  # noqa: E402 (re-exported)
from twbn.scoring.errors import ParameterError

__all__ = ["sink_heuristic", "Backoff", "solve_cuts", "METHOD"]

EXACT_MODES = ("always", "root", "never")
# The time and search knobs of the handlers below (matroid_seeds, matroid_max_skip,
# wind_down, exact_call_limit_s, minor_call_limit_s, lns_*) are the Policy's fields,
# with their measurements (solvers/policy.py).
#: The sub-solves separate the cluster rows (3) only, exactly at their root: on eight
#: 10-variable neighbourhoods of wdbc k = 4's −11,772.51 network, all of them timed out
#: at 10 s either way, but with twbn's full separation none found a better network and
#: with this one four did (+28 to +39).
LNS_SUB_OPTIONS = CutsOptions(exact="root", cluster_k=1, matroid=False, lns=False)
#: Bounded: a neighbourhood may also hold the triangulation between its fixed variables
#: (solvers/cuts/lns.py, ``fixed_fill``). 600 s from k-G on wdbc (150 s of k-G), before
#: the sparse rows: k = 2 reached −11,893.61 with neighbourhoods free of it and −11,850.08
#: held; k = 4 −11,651.73 free and −11,698.10 held; alternating, −11,919.71 and −11,651.73
#: (one run each: at k = 2 the free sub-solves hit their time limit, 20 calls instead of
#: 54). Hence the choice by gain per second (``_held_next``).
_DIVING = ("farkasdiving", "conflictdiving", "adaptivediving", "guideddiving", "distributiondiving", "fracdiving",
           "linesearchdiving", "pscostdiving", "veclendiving", "coefdiving", "actconsdiving", "objpscostdiving",
           "rootsoldiving")
#: SCIP settings measured on letter, nltcs and msnbc (unbounded, BIC, 3 parents): the
#: cluster rows are dense (thousands of families each), so LP iterations are dear.
#: Steepest-edge pricing doubled the root's cutting rounds per second on nltcs (bounded
#: models keep SCIP's default, see ``solve_cuts``); the diving
#: heuristics spent 30% of the LP time and found nothing the sink heuristic had not; full
#: strong branching took 44 of letter's first 60 s. With them (before the k-cluster rows)
#: nltcs was solved in 159 s and letter in 272 s (both > 600 s before).
#: SCIP's root cutting loop is left at its default of 10 stalled rounds: with 50, mushroom's
#: root bound improved (−88,583 → −89,381; optimum −91,074) and msnbc was solved in 206 s
#: instead of 342 s, but letter's root then spent 450–500 s closing its gap in hundreds of
#: exact separations (179 s with 10); pass ``{"separating/maxstallroundsroot": 50}`` to try.
#: Best-first node selection (no plunging) and no restart after the root: mushroom's bound
#: after 300 s (two solves at a time) was −90,611 with SCIP's defaults, −90,668 best-first,
#: −90,695 best-first without restarts (a restart after the root re-ran 60–70 s of
#: cutting rounds; optimum −91,074); devex (−90,552) and quickstart steepest-edge pricing
#: (−90,630) were worse.
TUNED_PARAMS = {"lp/pricing": "s", "branching/relpscost/sbiterquot": 0.05, "branching/relpscost/sbiterofs": 1000,
                **{f"heuristics/{h}/freq": -1 for h in _DIVING},
                "nodeselection/bfs/stdpriority": 1_000_000, "nodeselection/bfs/maxplungedepth": 0,
                "presolving/maxrestarts": 0}


def solve_cuts(
    problem: Problem,
    options: CutsOptions | None = None,
    *,
    time_limit: float | None = None,
    seed: int | None = None,
    warm_start: SolverResult | None = None,
    within: Adjacency | None = None,
    fixed_y: dict[tuple[int, int], int] | None = None,
    ancestry: Sequence[tuple[int, int]] = (),
    scip_params: dict | None = None,
    control: "RunControl | None" = None,
    extend: Sequence = (),
    policy: Policy = DEFAULT_POLICY,
    _report: bool = True,
) -> SolverResult:
    """The best network by the cluster-cut ILP (formulations/cluster_ilp.py) in SCIP,
    with the cluster rows (3) and their strengthenings separated as cuts: unbounded when
    ``problem.treewidth`` is None, bounded otherwise, or, with ``within``, over the DAGs
    whose moral graph lies inside a given chordal graph.

    Parameters
    ----------
    problem : Problem
        Bounded or not.
    options : CutsOptions, optional
        The defaults when None. ``exact``: when to separate cluster rows by a sub-IP;
        ``edges``: the 2-cluster rows up front; ``cluster_k``: the largest k of the
        k-cluster rows (4) separated (1: cluster rows (3) only); ``matroid``: the matroid
        rows (5) of rank 2 … ``cluster_k`` too; ``minor``: the minor density rows (6);
        ``lns``: improve the incumbent by large-neighbourhood search (solvers/cuts/lns.py),
        None meaning in the bounded mode only; ``lns_share``: the largest share of the
        elapsed time it may take (more finds better networks in long runs, at the bound's
        expense).
    time_limit : float, optional
        Seconds, the model's build included; None: until SCIP proves the optimum.
    seed : int, optional
        SCIP's random seed shift and the LNS's choices.
    warm_start : SolverResult, optional
        A network of ``problem``: SCIP's first incumbent, and the answer when the model is
        not built in time.
    within : dict of sets, optional
        A chordal graph (adjacency by index) no wider than the bound; the networks'
        moral graphs must lie inside it (S2's phase 2).
    fixed_y : dict, optional
        Values for triangulation variables y_ij of the bounded model (the LNS fixes those
        between variables it holds fixed; a start's values there are taken as given).
    ancestry : sequence of (int, int)
        Pairs (a, b), a an ancestor of b through variables outside the problem, which no
        network may close into a cycle (build_cluster_ilp).
    scip_params : dict, optional
        SCIP parameters by name, set after twbn's own (e.g.
        ``{"separating/maxrounds": 5}``).
    policy : Policy, optional
        The handlers' and the build's knobs (``cuts_build_share``, ``wind_down``,
        ``exact_call_limit_s``, ``lns_*``, ...); default: the measured ones.
    control : RunControl, optional
        Stop requests (SCIP's incumbent is kept) and progress.
    extend : sequence of callables
        Functions ``f(model, ilp)`` called on the built pyscipopt model (and twbn's
        ClusterIlp, which maps its variables back) before it is solved: a researcher's
        rows, constraint handlers or objective terms (twbn.models.ClusterCutIlp).

    Returns
    -------
    SolverResult
        ``optimal`` when SCIP proved it, else ``feasible`` with SCIP's bound,
        ``infeasible``, or ``unknown``; ``stats`` counts the rows of each kind separated,
        the nodes and the root bound.

    Raises
    ------
    ParameterError
        ``fixed_y`` without a treewidth bound or with ``within``.

    Examples
    --------
    >>> from twbn.scoring.cache import ScoreCache
    >>> cache = ScoreCache.from_mapping("ABCD", [{(): -10.0, (1,): -7.0, (1, 2): -4.0}, {(): -10.0},
    ...                                          {(): -10.0, (1,): -9.0}, {(): -10.0, (0,): -6.0}])
    >>> sol = solve_cuts(Problem(cache, 1), time_limit=30, seed=0)
    >>> sol.status, sol.score, sol.width
    ('optimal', -32.0, 1)
    >>> solve_cuts(Problem(cache, None), time_limit=30, seed=0).score  # A takes {B, C}
    -29.0
    """
    options = options or CutsOptions()  # which validated its values
    if fixed_y and (problem.treewidth is None or within is not None):
        raise ParameterError("fixed_y applies to the bounded model only (a treewidth bound and no within graph)")
    t0 = time.monotonic()
    info = dict(method="cuts", solver="scip", seed=seed, time_limit=time_limit)
    try:
        model_problem, peo = (problem, None) if within is None else restrict_to_graph(problem, within)
        model_problem.candidates
    except InfeasibleError as exc:
        return SolverResult(None, None, None, "infeasible", wall_time=round(time.monotonic() - t0, 4),
                        stats={"reason": str(exc)}, **info)
    m = scip_model(quiet=not os.environ.get("TWBN_SCIP_LOG"))
    deadline = None if time_limit is None else t0 + time_limit
    try:
        ilp = build_cluster_ilp(model_problem, m, edges=options.edges, ancestry=ancestry,
                                deadline=None if time_limit is None else t0 + policy.cuts_build_share * time_limit)
    except BuildTimeout as exc:
        # the model alone outlasts the budget (bounded, n ≳ 100): the start is the answer
        wall = round(time.monotonic() - t0, 4)
        return start_or_nothing(problem, warm_start, wall_time=wall, stats={"reason": str(exc), "build_seconds": wall},
                                **info)
    for fn in extend:
        fn(m, ilp)
    _fix(m, ilp, fixed_y)
    build_s = time.monotonic() - t0
    _set_params(m, ilp, time_limit, build_s, seed, scip_params, policy)
    lns = options.lns if options.lns is not None else problem.treewidth is not None and within is None
    plugins = _include_plugins(m, ilp, model_problem, options, lns, t0, deadline, seed, control, policy)
    traj = record_scip_trajectory(m, None if control is None or not _report else
                                  lambda inc, bound: control.report(incumbent=inc, bound=bound))
    start_score = _add_start(m, ilp, model_problem, problem.n, warm_start)
    with cooperating(control, scip_interrupt(m)):
        if control is not None and control.stop_requested():
            # stopped before solving: SCIP's statistics of an unsolved model are an error
            # (pyscipopt crashed on getDualbound), so the start is the answer
            wall = round(time.monotonic() - t0, 4)
            return start_or_nothing(problem, warm_start, wall_time=wall,
                                    stats={"reason": "stopped before solving", "build_seconds": round(build_s, 4)},
                                    **info)
        m.optimize()
    if os.environ.get("TWBN_SCIP_STATISTICS"):  # a developer's view of where SCIP spent its time
        m.writeStatistics(os.environ["TWBN_SCIP_STATISTICS"])
    stats = _stats(m, ilp, problem, within, build_s, options, plugins, start_score)
    return _result(m, ilp, problem, peo, traj, build_s, stats, {**info, "wall_time": round(time.monotonic() - t0, 4)})


def _fix(m, ilp, fixed_y) -> None:
    """Edge variables branched on first; the triangulation variables of ``fixed_y`` fixed."""
    for var in ilp.edges.values():
        m.chgVarBranchPriority(var, 10)
    ilp.fixed_y = dict(fixed_y or {})
    for arc, value in ilp.fixed_y.items():
        m.chgVarLb(ilp.y[arc], float(value))
        m.chgVarUb(ilp.y[arc], float(value))


def _set_params(m, ilp, time_limit, build_s: float, seed, scip_params, policy) -> None:
    """SCIP's limits and twbn's settings, then the caller's ``scip_params``."""
    if time_limit is not None:
        m.setParam("limits/time", max(0.1, time_limit - (1.0 + policy.wind_down) * build_s))
    if seed is not None:
        m.setParam("randomization/randomseedshift", int(seed) % 2**31)
    # the components presolver would split the problem by the linear rows alone, unaware
    # that (3) ties the variables together
    m.setParam("constraints/components/maxprerounds", 0)
    m.setParam("constraints/components/propfreq", -1)
    # SCIP's aggregation separator (c-MIR, flow cover, knapsack cover) found no cut on
    # letter and mushroom but took a third of the root's time
    m.setParam("separating/aggregation/freq", -1)
    for name, value in TUNED_PARAMS.items():
        m.setParam(name, value)
    if ilp.treewidth is not None:
        # the elimination-order rows make other LPs: wdbc k = 2's root took 74 s with SCIP's
        # default pricing and 128 s with steepest edge, for the same bound
        m.setParam("lp/pricing", "l")
    for name, value in (scip_params or {}).items():
        m.setParam(name, value)


def _include_plugins(m, ilp, model_problem, options: CutsOptions, lns: bool, t0: float, deadline, seed, control,
                     policy):
    """The cluster rows' handler, the sink rounding and (with ``lns``) the LNS heuristic,
    included in ``m``: (handler, sink heuristic, LNS heuristic or None)."""
    import pyscipopt

    from twbn.solvers.cuts.handlers import ClusterHandler, LnsHeuristic, SinkHeuristic

    handler = ClusterHandler(ilp, options.exact, deadline, options.cluster_k, options.matroid, options.minor, policy)
    m.includeConshdlr(handler, "twbn_cluster", "cluster constraints: the chosen families form a DAG",
                      sepapriority=100, enfopriority=-100, chckpriority=-100, sepafreq=1, needscons=False)
    heur = SinkHeuristic(ilp, handler)
    m.includeHeur(heur, "twbn_sink", "sink-finding rounding of the LP point", "S", priority=100000, freq=1,
                  timingmask=pyscipopt.SCIP_HEURTIMING.AFTERLPNODE)
    lns_heur = None
    if lns:
        lns_heur = LnsHeuristic(ilp, model_problem, handler, t0, deadline, seed, options.lns_share, policy,
                                functools.partial(solve_cuts, _report=False, options=LNS_SUB_OPTIONS))
        lns_heur.control = control
        # after each node's LP, not inside the root's cutting loop: there it took 31 s of
        # wdbc k = 2's 96 s (after k-G) and the root bound was −11,583 instead of −11,656.
        # Its share counts from the start, so it catches up once the root is done
        m.includeHeur(lns_heur, "twbn_lns", "large-neighbourhood search on the incumbent", "L", priority=-100000,
                      freq=1, timingmask=pyscipopt.SCIP_HEURTIMING.AFTERLPNODE)
    return handler, heur, lns_heur


def _add_start(m, ilp, model_problem, n: int, warm_start) -> float | None:
    """``warm_start``'s network as SCIP's first incumbent; its score (None without one)."""
    if warm_start is None or warm_start.parents is None:
        return None
    order = None
    if ilp.treewidth is not None:
        order = warm_start.elimination_order
        if order is None or warm_start.width is None or warm_start.width > ilp.treewidth:
            order, _ = certificate_order(n, warm_start.parents, ilp.treewidth)
    vals = start_values(ilp, warm_start.parents, order)
    sol = m.createSol()
    for var in m.getVars():
        m.setSolVal(sol, var, vals.get(var.name, 0.0))
    m.addSol(sol, free=True)
    return sum(model_problem.candidates.score_of(v, p) for v, p in enumerate(warm_start.parents))


def _stats(m, ilp, problem, within, build_s: float, options: CutsOptions, plugins, start_score) -> dict:
    """The rows of each kind separated, the nodes, the root bound, the heuristics' counts."""
    handler, heur, lns_heur = plugins
    mode = "unbounded" if problem.treewidth is None else ("within graph" if within is not None else "bounded")
    stats = {"mode": mode, "model": ilp.size, "build_seconds": round(build_s, 4), "nodes": int(m.getNNodes()),
             "engine_status": m.getStatus(), "root_bound": root_bound(m), "exact_separation": options.exact,
             "cluster_k": options.cluster_k, "matroid_rows": options.matroid, "min_violation": MIN_VIOLATION,
             **handler.counts}
    stats["sink_heuristic_solutions"] = heur.found
    stats["sink_heuristic_stuck"] = heur.stuck
    if lns_heur is not None:
        stats.update(lns_heur.counts)
    if start_score is not None:
        stats["warm_start_score"] = start_score
    return stats


def _result(m, ilp, problem, peo, traj: list, build_s: float, stats: dict, info: dict) -> SolverResult:
    """SCIP's best network with its certificate, or its status without one."""
    status = m.getStatus()
    bound = _finite(m.getDualbound())
    traj.append({"time": round(m.getSolvingTime(), 4), "incumbent": _finite(m.getPrimalbound()) if m.getNSols() else None,
                 "bound": bound})
    trajectory = [{"time": round(p["time"] + build_s, 4), "incumbent": p["incumbent"], "bound": p["bound"]} for p in traj]
    info = {**info, "trajectory": trajectory, "stats": stats}
    if m.getNSols() == 0:
        st = "infeasible" if status == "infeasible" else "unknown"
        return SolverResult(None, None, bound if st == "unknown" else None, st, **info)
    best = m.getBestSol()
    x = np.array([m.getSolVal(best, v) for v in ilp.fam_vars])
    parents = ilp.table.network(x)
    hint = peo if peo is not None else _z_order(m, best, ilp)
    st = "optimal" if status == "optimal" else "feasible"
    return make_solution(problem, parents, bound=bound, status=st, order_hint=hint, **info)


def _run(problem: Problem, options: CutsOptions, budget: Budget, *, seed: int | None, solver: str,
         start: SolverResult | None) -> SolverResult:
    """``solve_cuts`` as a method: above the policy's ``cuts_max_n`` without a start,
    ``improve`` first (the whole ILP's root LP may not finish in minutes there)."""
    share = options.improve_share
    if share is None:  # by default only without a start: a given one is used as it is
        share = budget.policy.cuts_improve_share if problem.n > budget.policy.cuts_max_n and start is None else 0.0
    used, start_score, given = 0.0, None, start
    if share > 0 and budget.seconds is not None:
        # SCIP's own heuristics find nothing worth having at this size and the LNS runs only
        # after the root's LP, which may not finish: the improver is the primal heuristic.
        # Asked for with a start (auto at n <= 22 in a sweep), it improves that start: cuts
        # left a start unimproved where improve did not (mushroom, docs/auto.md section 6)
        t0 = time.monotonic()
        with budget.stage("improve start", share) as stage:
            found = stage.solve(problem, "improve", seed=seed, warm_start=given, lp_bound=False)
        used = time.monotonic() - t0
        if found.parents is not None and (given is None or found.score >= given.score):
            start = found
        start_score = None if start is None else start.score
        if budget.stop_requested() and start is not None:
            start.method, start.seed = "cuts", seed
            start.stats = {**start.stats, "interrupted": True}
            return start
        if budget.control is not None:
            budget.control.begin("cuts")
            budget.control.report(incumbent=start_score)
    if start is not None and start is not given:
        # from data, improve's pieces may have scored families beyond the cache (the registry
        # grows the problem by a start it is given, not by one made here): the ILP must hold
        # them to take the start (KeyError on alarm from data, k = 5, before)
        from twbn.solvers.bounds import covering_problem

        problem = covering_problem(problem, start.parents)
    sol = solve_cuts(problem, options, time_limit=budget.limit(), seed=seed, warm_start=start,
                     control=budget.control, policy=budget.policy)
    if used:  # its seconds, also in wall_time (solve() counts the whole call)
        sol.stats["warm_start"] = {"from": "improve" if given is None else "improve from the given start",
                                   "score": start_score, "seconds": round(used, 4)}
    return sol


#: The cluster-cut ILP as the registry lists it.
METHOD = Method("cuts", _run, options=CutsOptions,
                summary=f"the cluster-cut ILP (GOBNILP-style) on SCIP, bounded or unbounded; above n = "
                        f"{DEFAULT_POLICY.cuts_max_n} "
                        "without a start, improve first",
                backends=("scip",), warm_start=True, seeded=True, lp_bound_from="cuts_max_n",
                default_time_limit=None)
