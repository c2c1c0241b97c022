"""``localsearch`` as a method: iterated hill climbing from the empty network, the best
branching (Chu-Liu/Edmonds over the single-parent families) or a given start, the best
network kept, anytime."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from twbn.formulations.problem import Problem
from twbn.formulations.solution import SolverResult, certificate_order
from twbn.solvers.budget import Budget
from twbn.solvers.control import RunControl, cooperating
from twbn.solvers.heuristics.anytime import Anytime, require_bound, whole_clique_solution
from twbn.solvers.localsearch.climb import Climber
from twbn.solvers.method import Method
from twbn.solvers.method_options import LocalSearchOptions
from twbn.solvers.policy import DEFAULT_POLICY, Policy
from twbn.scoring.errors import ParameterError

__all__ = ["solve_localsearch", "METHOD"]


def solve_localsearch(problem: Problem, options: LocalSearchOptions | None = None, *,
                      time_limit: float | None = None, seed: int | None = None,
                      control: RunControl | None = None, start: SolverResult | None = None,
                      policy: Policy = DEFAULT_POLICY) -> SolverResult:
    """Iterated best-improvement hill climbing over DAGs of treewidth ≤ k.

    From ``start`` (without one, where ``options.first`` says: the network of every
    variable's best set of required parents, the empty network without required arcs; the
    best branching over the single-parent families; or, by default, the second, then the
    first), climb
    until no move improves, keep the best network, perturb it (``options.kick`` variables
    back to their required parents) and climb again, until the time limit,
    ``options.max_iterations`` climbs or a stop. The kick is large by default (the policy's
    ``localsearch_kick_share`` of the variables): a climb from a network a few variables
    away from the best ends where it began.

    Parameters
    ----------
    problem : Problem
        With a treewidth bound k >= 1.
    options : LocalSearchOptions, optional
        ``reverse`` (arc reversals as moves), ``repair`` (a new min-fill order where the
        current one rejects a move), ``kick``, ``max_iterations``, ``soft_limit`` (no new
        climb after it: auto's start lets its first climb reach its hill top, since a climb
        cut short leaves most variables with one parent or none), ``first`` (empty, tree or
        both; by default both: the tree's climb first, whatever the limit, so that a longer
        run begins as a shorter one does).
    time_limit : float, optional
        Seconds (default ``policy.heuristic_time_limit`` unless ``max_iterations`` is given).
    seed : int, optional
        Seeds the perturbations; with ``max_iterations`` and no time limit the result is
        reproducible.
    control : RunControl, optional
        Stop requests (the best network so far is returned) and progress.
    start : SolverResult, optional
        A network of the problem (with its certificate) to start from.

    Returns
    -------
    SolverResult
        Status ``feasible``, the best network found, its elimination order as certificate.

    Raises
    ------
    ParameterError
        Without a treewidth bound k >= 1, or when the problem has no network of required
        parents only and no ``start`` is given.

    Examples
    --------
    At k = 1 A's best family {B, C} (two parents) is out; the search takes A's next best,
    {B}, then C's {B} and D's {A}:

    >>> from twbn.formulations.problem import Problem
    >>> from twbn.scoring.cache import ScoreCache
    >>> from twbn.solvers.method_options import LocalSearchOptions
    >>> cache = ScoreCache.from_mapping("ABCD", [{(): -10.0, (1,): -7.0, (1, 2): -4.0}, {(): -10.0},
    ...                                          {(): -10.0, (1,): -9.0}, {(): -10.0, (0,): -6.0}])
    >>> sol = solve_localsearch(Problem(cache, 1), LocalSearchOptions(max_iterations=5), seed=0)
    >>> sol.status, sol.score, sol.width
    ('feasible', -32.0, 1)
    """
    options = options or LocalSearchOptions()
    require_bound(problem, "localsearch")
    t0 = time.monotonic()
    info = dict(method="localsearch", seed=seed, time_limit=time_limit)
    if problem.n <= problem.treewidth + 1 and options.max_table_size is None:
        return whole_clique_solution(problem, t0, **info)
    if options.max_table_size is not None and (problem.cache.arities is None
                                               or any(a is None for a in problem.cache.arities)):
        raise ParameterError("localsearch's max_table_size needs the variables' arities, and this cache has "
                             "none (a jkl written elsewhere); score the data with twbn")
    climber = Climber(problem, reverse=options.reverse, repair=options.repair,
                      max_table_size=options.max_table_size,
                      first_parents=policy.data_localsearch_first_parents or None)
    limit = policy.heuristic_time_limit if time_limit is None and options.max_iterations is None else time_limit
    starts, how = _starts(problem, climber, options, start)
    climber.load(*starts.pop(0))
    run = Anytime(limit, options.max_iterations, t0, control)
    plan = _Plan(kick=options.kick or max(2, round(policy.localsearch_kick_share * problem.n)),
                 # from data: widen at the first hill top (1), after the first climb that does not
                 # beat the best (2, the narrow search stalled), or never (0)
                 widen=policy.data_localsearch_widen if problem.scorer is not None else 0,
                 soft_limit=options.soft_limit,
                 # the end a new first climb must fit before: auto's soft limit, else the limit
                 until=options.soft_limit if options.soft_limit is not None else limit)
    with cooperating(control):
        moves = _iterate(climber, run, starts, plan, random.Random(seed))
    return run.solution(problem, {"first": how, "moves": moves, "repairs": climber.repairs,
                                  "rejected": climber.rejected,
                                  "lookups": climber.lookups, "kick": plan.kick, "widened": climber.wide,
                                  "parents_tried": climber.tried,
                                  "max_table_size": options.max_table_size,
                                  **({"families_scored": climber.scored} if problem.scorer is not None else {})}, **info)


@dataclass(frozen=True)
class _Plan:
    """What the iterated climbs read besides the climber: the kick's size, when to widen
    (0, 1, 2 as ``Policy.data_localsearch_widen``), the soft limit and the end a first
    climb must fit before."""
    kick: int
    widen: int
    soft_limit: float | None
    until: float | None


def _iterate(climber: Climber, run: Anytime, starts: list, plan: _Plan, rng: random.Random) -> int:
    """Climb from the loaded start and each of ``starts``, then from the best network
    kicked, until ``run`` ends or, once there is a network, the soft limit; the moves made."""
    def stop() -> bool:
        return run.left() <= 0 or (run.control is not None and run.control.stop_requested())

    best, moves, began, first_took = None, 0, run.elapsed(), None
    while run.next_try():
        if best is not None and plan.soft_limit is not None and run.elapsed() >= plan.soft_limit:
            break
        moves += _climb(climber, plan.widen, stop)
        score = climber.score
        run.offer(score, climber.network(), climber.order.tolist())
        stalled = best is not None and score <= best[0]
        if best is None:
            first_took = run.elapsed() - began
        if best is None or score > best[0]:
            best = (score, climber.network(), climber.order.copy())
        if starts and plan.until is not None and plan.until - run.elapsed() < first_took:
            # a climb from the empty network takes at least the branching's time: one
            # begun before auto's soft limit ran past it and took a third of improve's
            # time at 10 s (andes k = 2: the start 3.1 s against 1.8 s, 2026-12-07)
            starts.clear()
        if starts:  # the next first climb's start
            climber.load(*starts.pop(0))
        else:
            _from_best(climber, best, stalled, plan, rng)
    return moves


def _climb(climber: Climber, widen: int, stop) -> int:
    """One climb to a hill top; under ``widen`` 1, on from each hill top over more parents
    (:meth:`Climber.widen`) until every variable is one. The moves made."""
    moves = climber.climb(stop)
    while widen == 1 and not climber.wide and not stop():
        climber.widen()
        moves += climber.climb(stop)
    return moves


def _from_best(climber: Climber, best: tuple, stalled: bool, plan: _Plan, rng: random.Random) -> None:
    """The next climb's start: the best network, widened where the narrow search stalled
    (``widen`` 2), else kicked (``plan.kick`` variables back to their required parents)."""
    if climber.score < best[0]:
        climber.load(best[1], best[2])
    if plan.widen == 2 and stalled and not climber.wide:  # on from the best, more parents
        climber.widen()
        return
    climber.kick(rng, plan.kick)


def _starts(problem: Problem, climber: Climber, options: LocalSearchOptions,
            start: SolverResult | None) -> tuple[list, str]:
    """The networks the first climbs begin at, each with an elimination order of width
    <= k (and within ``max_table_size``, where one is given), and how they were chosen.

    By default the branching's climb, then the empty network's: a rule that does not read
    the time limit, so the first seconds of a 60 s run are those of a 10 s run. Before, the
    branching began runs of at most 30 s and the empty network longer ones: munin's k = 5
    and 8 ended 0.78 and 0.81 % lower at 60 s than at 10 s (2026-12-07)."""
    if start is not None and start.parents is not None:
        starts, how = [(start.parents, start.elimination_order)], "given"
    else:
        required_only = _required_only(problem, climber)
        if required_only is None:
            raise ParameterError("localsearch needs a start: some variable has no cached set of its required "
                                 "parents only")
        starts = [(required_only, None)]
        how = options.first or "both"
        if how != "empty":
            tree = _tree(problem)
            if tree is None:  # required arcs no branching holds
                how = "empty"
            else:
                starts = [(tree, None)] if how == "tree" else [(tree, None)] + starts
    starts = [(ps, certificate_order(problem.n, ps, problem.treewidth)[0] if order is None else order)
              for ps, order in starts]
    if options.max_table_size is None:
        return starts, how
    return _within_size(problem, climber, starts, how, options.max_table_size)


def _within_size(problem: Problem, climber: Climber, starts: list, how: str, max_size: int) -> tuple[list, str]:
    """The starts whose junction tree is within ``max_size`` under their order or a
    min-fill one; where none is, the network of required parents only (every variable
    its best set of them), and an error where even that is over."""
    kept = [(ps, order) for ps, order in ((ps, _order_within(climber, ps, order)) for ps, order in starts)
            if order is not None]
    if kept:
        return kept, how
    ps = _required_only(problem, climber)
    if ps is None:
        raise ParameterError(f"no start within max_table_size {max_size:,}: the given network's junction tree "
                             "is over it, and some variable has no cached set of its required parents only")
    order = _order_within(climber, ps, certificate_order(problem.n, ps, problem.treewidth)[0])
    if order is None:
        raise ParameterError(f"no network within max_table_size {max_size:,}: the network of the required "
                             "arcs alone is over it")
    return [(ps, order)], "empty (the other starts were over max_table_size)"


def _order_within(climber: Climber, parents, order) -> list | None:
    """``order``, or else a min-fill order of width <= k, under which the network's junction
    tree is within the climber's size bound; None where neither is."""
    from twbn.solvers.localsearch.width import min_fill_within

    climber.load(parents, order)
    if climber.within_size(climber.order):
        return list(order)
    other = min_fill_within(climber.counts, climber.k)
    return other.tolist() if other.size and climber.within_size(other) else None


def _required_only(problem: Problem, climber: Climber) -> list | None:
    """Every variable's best cached set of its required parents only; None where some
    variable has none."""
    first = [climber.best_within(v, climber.required[v]) for v in range(problem.n)]
    return None if min(first) < 0 else [climber.sets[v][i] for v, i in enumerate(first)]


def _tree(problem: Problem) -> list[tuple[int, ...]] | None:
    """The best branching over the cached single-parent families (with the required arcs),
    or None where the arcs leave no network of one parent a variable."""
    from twbn.solvers.exact.branching import optimal_forest

    try:
        return optimal_forest(problem)
    except ValueError:
        return None


def _run(problem: Problem, options: LocalSearchOptions, budget: Budget, *, seed: int | None,
         start: SolverResult | None) -> SolverResult:
    return solve_localsearch(problem, options, time_limit=budget.limit(), seed=seed, control=budget.control,
                             start=start, policy=budget.policy)


#: The local search as the registry lists it.
METHOD = Method("localsearch", _run, options=LocalSearchOptions,
                summary="iterated hill climbing over DAGs (add, reverse), every move checked against an "
                        "elimination order of width <= k (after ETL, Benjumeda et al. 2019)",
                min_treewidth=1, seeded=True, warm_start=True)
