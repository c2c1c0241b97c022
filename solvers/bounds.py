"""Bounds every result gets: never worse than the trivial one, the cluster LP's where it
pays, and a network that reaches its bound proved optimal.

A bound is a proof: :func:`trivial_bound` (each variable's best candidate score) holds
for every network; the cluster LP relaxation (solvers/relaxation.py) for every network
under the problem's constraints.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from twbn.formulations.problem import Problem
from twbn.formulations.solution import SolverResult

if TYPE_CHECKING:
    from twbn.solvers.policy import Policy

__all__ = ["trivial_bound", "add_lp_bound", "floor_bound", "call_optimal_at_bound", "gap_sources",
           "covering_problem", "widened_bound", "bound_scope", "covers_every_family"]


def covering_problem(problem: Problem, parents) -> Problem:
    """The problem a bound on this network's problem must be computed over: ``problem``
    itself, or, where it was built from data and the network has families its cache lacks
    (scored on demand), ``problem`` with those families added, so that the bound covers
    the network it is reported beside."""
    if problem.scorer is None or parents is None:
        return problem
    return problem.with_families(parents)


def widened_bound(problem: Problem, bound: float, parents) -> tuple[Problem, float]:
    """A bound over ``problem`` carried to the problem that also holds ``parents``'
    families (:func:`covering_problem`): ``bound`` plus, for each variable whose family is
    new, what that family scores above the best of its subsets that ``problem`` allows.
    Any network of the grown problem, each new family cut back to that subset, is a
    network of ``problem`` (fewer arcs: still acyclic, no wider), so it scores at most
    ``bound`` plus those gains.

    Parameters
    ----------
    problem : Problem
        The problem ``bound`` was proved over (from data: it has a scorer).
    bound : float
        An upper bound on every network of ``problem``.
    parents : sequence of parent index tuples
        A network, possibly with families ``problem``'s cache lacks.

    Returns
    -------
    grown : Problem
        ``problem`` with the network's families added (``problem`` itself if none is new).
    bound : float
        An upper bound on every network of ``grown``.

    Examples
    --------
    >>> import twbn
    >>> from twbn.scoring.families import FamilyScores
    >>> from twbn.scoring.cache import ScoreCache
    >>> ds = twbn.read_csv(twbn.example_path("zoo"))
    >>> fs = FamilyScores(ds, "bic")
    >>> empty = ScoreCache.from_mapping(ds.names, [{(): fs.score(v, ())} for v in range(ds.n_variables)])
    >>> p = Problem(empty, 2, scorer=fs)
    >>> network = [()] * ds.n_variables
    >>> network[1] = (0,)  # feathers' parent hair: a family the cache lacks
    >>> grown, b = widened_bound(p, 0.0, network)
    >>> bool(abs(b - (fs.score(1, (0,)) - fs.score(1, ()))) < 1e-9), grown.n == p.n
    (True, True)
    """
    grown = covering_problem(problem, parents)
    if grown is problem:
        return problem, bound
    gain = 0.0
    for v, ps in enumerate(parents):
        family = frozenset(ps)
        own = [s for sub, s in problem.parent_sets(v) if set(sub) <= family]
        best = max(own) if own else -math.inf
        if not problem.cache.holds(v, ps):
            gain += max(0.0, grown.score_of(v, ps) - best)
    return grown, bound + gain


def covers_every_family(problem: Problem) -> bool:
    """Whether the cache holds every family a network here may have: scored exhaustively
    (``build_cache``) through at least :attr:`~Problem.family_max_parents` parents (k, or
    the data's cap), so that a family it lacks was pruned, and a cached subset of it scores
    better (de Campos & Ji's rules drop no set that can be optimal). A bound over such a
    problem bounds every network of the data under its treewidth bound."""
    through, cap = problem.cache.meta.get("complete_through"), problem.family_max_parents
    return through is not None and cap is not None and through >= cap


def bound_scope(problem: Problem) -> str:
    """What a bound computed over ``problem`` is a proof for, in words: every network of the
    data with at most k parents a family where the cache holds every such family
    (:func:`covers_every_family`); else the networks whose every family is one of its
    cache's parent sets (``families_added`` of them found by a search from the data),
    under its treewidth bound and background knowledge.

    Examples
    --------
    >>> import twbn
    >>> from twbn.scoring.parent_sets import build_cache
    >>> cache, _ = build_cache(twbn.read_csv(twbn.example_path("zoo")), max_parents=2, progress=False)
    >>> bound_scope(Problem(cache, 2))[:86]
    'every network of the data whose families have at most 2 parents: the cache holds every'
    >>> bound_scope(Problem(cache, 3))
    "every network whose families are the cache's parent sets"
    """
    if covers_every_family(problem):
        return (f"every network of the data whose families have at most {problem.family_max_parents} parents: the "
                "cache holds every such family its safe pruning kept (exhaustive through "
                f"{problem.cache.meta['complete_through']} parents)")
    added = problem.cache.meta.get("families_added", 0)
    what = "every network whose families are the cache's parent sets"
    if added:
        what += f" or one of the {added} families the search scored from the data"
    if problem.scorer is not None:
        cap = problem.family_max_parents
        what += (f"; not every network of families of at most {cap} parents, which the data may score"
                 if cap is not None else "; not every network the data may score")
    return what


def trivial_bound(problem: Problem) -> float:
    """The sum of each variable's best candidate score: an upper bound on every network
    (it drops acyclicity and the treewidth bound), at no cost."""
    return math.fsum(float(scores[0]) for scores in problem.candidates.scores)


def add_lp_bound(problem: Problem, sol: SolverResult, seconds: float, policy: "Policy | None" = None) -> None:
    """Give ``sol`` the cluster LP relaxation's bound (solvers/relaxation.py), computed in
    about ``seconds``, where it is better than the bound it has; the time counts in its
    wall time and the bound in its last trajectory point. ``policy``: the LP's knobs
    (default: the measured ones)."""
    from twbn.solvers.policy import DEFAULT_POLICY
    from twbn.solvers.relaxation import cluster_lp_bound

    policy = policy or DEFAULT_POLICY
    bound, stats = cluster_lp_bound(problem, time_limit=max(policy.min_engine_s, seconds), policy=policy)
    sol.wall_time = round(sol.wall_time + stats["seconds"], 4)
    take_lp_bound(sol, bound, stats)


def take_lp_bound(sol: SolverResult, bound: float, stats: dict) -> None:
    """Give ``sol`` the cluster LP's ``bound`` (``cluster_lp_bound``'s answer, here or in a
    process beside the method) where it is better than the bound it has."""
    sol.stats["lp_bound"] = stats
    if bound < stats["trivial"] and (sol.bound is None or bound < sol.bound):  # else floor_bound's
        sol.bound = bound if sol.score is None else max(bound, sol.score)
        rows = "its cluster rows" if stats.get("rows") is None else f"{stats['rows']} cluster rows"
        sol.stats["bound_source"] = (f"cluster LP relaxation: a Lagrangian of {rows} "
                                     f"(trivial bound {stats['trivial']:.6g})"
                                     + ("; its last round's, the LP had not ended" if stats.get("partial") else ""))
        sol.trajectory.append({"time": sol.wall_time, "incumbent": sol.score, "bound": sol.bound})


def floor_bound(problem: Problem, sol: SolverResult) -> None:
    """Never report a bound worse than :func:`trivial_bound` (nor none at all where a
    network exists): replace a missing, infinite or weaker bound by it, and call a network
    that reaches it optimal — it is then a proof."""
    if sol.status == "infeasible":
        return
    problem = covering_problem(problem, sol.parents)
    trivial = trivial_bound(problem)
    if sol.bound is None or not math.isfinite(sol.bound) or sol.bound > trivial:
        sol.bound = trivial if sol.score is None else max(trivial, sol.score)
        sol.stats["bound_source"] = "sum of each variable's best candidate score"
    call_optimal_at_bound(sol)


def call_optimal_at_bound(sol: SolverResult) -> None:
    """A feasible network whose score reaches its bound is proved optimal."""
    if sol.score is not None and sol.status == "feasible" and sol.bound is not None \
            and sol.bound - sol.score <= 1e-9 * max(1.0, abs(sol.score)):
        sol.status = "optimal"



def gap_sources(problem: Problem, sol: SolverResult) -> dict | None:
    """Where the proved gap comes from: how far the bound moved down from the trivial one
    (the relaxation's work) and how far the incumbent moved up from the first network the
    call had (the search's work); None without a network.

    Examples
    --------
    >>> from twbn.scoring.cache import ScoreCache
    >>> from twbn.formulations.solution import make_solution
    >>> cache = ScoreCache.from_mapping("AB", [{(): -2.0, (1,): -1.0}, {(): -2.0, (0,): -1.5}])
    >>> p = Problem(cache, 1)
    >>> sol = make_solution(p, [(1,), ()], bound=-2.75, status="feasible", method="x")
    >>> sol.trajectory = [{"time": 0.1, "incumbent": -4.0, "bound": None}]
    >>> gap_sources(p, sol)
    {'trivial_bound': -2.5, 'bound': -2.75, 'bound_moved': 0.25, 'first_incumbent': -4.0, 'incumbent': -3.0, 'incumbent_moved': 1.0}
    """
    if sol.score is None or sol.bound is None:
        return None
    trivial = trivial_bound(covering_problem(problem, sol.parents))
    # an engine without a network yet records its incumbent as -1e20 (SCIP's "none")
    firsts = [p["incumbent"] for p in sol.trajectory if p.get("incumbent") is not None and abs(p["incumbent"]) < 1e19]
    start = (sol.stats.get("warm_start") or {}).get("score")
    first = start if start is not None else (firsts[0] if firsts else sol.score)
    return {"trivial_bound": trivial, "bound": sol.bound, "bound_moved": round(trivial - sol.bound, 6),
            "first_incumbent": first, "incumbent": sol.score, "incumbent_moved": round(sol.score - first, 6)}
