"""Start networks: a SolverResult re-certified for the problem at hand, and the starts
``--warm-start`` names — ``tree`` (the optimal treewidth-1 network, valid for every k), a
result file, or a method run first on the policy's ``warm_start_share`` of the budget — plus what makes
a problem infeasible before any method runs.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from twbn.formulations.problem import InfeasibleError, Problem
from twbn.formulations.solution import SolverResult, certificate_order, make_solution
from twbn.scoring.errors import TwbnError

if TYPE_CHECKING:
    from twbn.solvers.budget import Budget
    from twbn.solvers.method import Method

from twbn.solvers.method import MethodUnavailable  # noqa: E402 (re-exported)

__all__ = ["MethodUnavailable", "certified_start", "start_order_and_score", "check_warm_spec", "warm_start_solution", "infeasibility"]


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


def certified_start(problem: Problem, start: SolverResult) -> SolverResult:
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


def start_order_and_score(problem: Problem, start: SolverResult) -> tuple[list | None, float]:
    """A start network's elimination order (its own where that certifies the bound, else
    a new one of width <= k; None without a bound and without its own) and its score:
    what a model's start values read (milp, cp).

    Examples
    --------
    A chain A → B → C has width 1; under k = 1 it gets an order of width 1:

    >>> from twbn.scoring.cache import ScoreCache
    >>> cache = ScoreCache.from_mapping("ABC", [{(): -5.0}, {(): -5.0, (0,): -2.0}, {(): -5.0, (1,): -3.0}])
    >>> problem = Problem(cache, 1)
    >>> order, score = start_order_and_score(problem, SolverResult([(), (0,), (1,)], None, None, "feasible"))
    >>> sorted(order), score
    ([0, 1, 2], -10.0)
    """
    order = start.elimination_order
    if problem.treewidth is not None and (order is None or start.width is None or start.width > problem.treewidth):
        order, _ = certificate_order(problem.n, start.parents, problem.treewidth)
    return order, sum(problem.candidates.score_of(v, p) for v, p in enumerate(start.parents))


def check_warm_spec(treewidth: int | None, spec: str, methods: "dict[str, Method]") -> None:
    """Refuse a warm-start name that cannot work, before any time is spent (``methods``:
    every registered method by name)."""
    if spec == "tree":
        return
    if spec.endswith(".json"):
        import os

        if not os.path.isfile(spec):
            raise MethodUnavailable(f"warm start {spec}: no such file")
        return
    if spec not in methods or spec == "auto":
        raise MethodUnavailable(f"warm start {spec!r} is neither tree, a result file (.json) nor a method "
                                f"({', '.join(m for m in methods if m != 'auto')})")
    start = methods[spec]
    if start.min_treewidth is not None and (treewidth is None or treewidth < start.min_treewidth):
        raise MethodUnavailable(f"warm start {spec} needs a treewidth bound k >= {start.min_treewidth}")


def warm_start_solution(problem: Problem, spec: str, *, budget: "Budget",
                        seed: int | None = None, share: float | None = None,
                        options=None) -> tuple[SolverResult, float]:
    """The start named by ``--warm-start``: ``tree`` (the optimal treewidth-1 network, a
    maximum branching: valid for every k), a result file, or a method run first on a
    ``warm_start_share`` stage of ``budget`` (or ``share``), of at most ``start_max_s``
    seconds (the budget's policy), through the registry that made the budget, with the
    method's ``options`` (a mapping or its options instance). Returns it and the seconds it
    used."""
    check_warm_spec(problem.treewidth, spec, budget.methods())
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
            sol = SolverResult.from_json(data, problem)
        except (KeyError, TypeError, ValueError) as exc:
            raise MethodUnavailable(f"warm start {spec}: not a result of this cache ({exc})") from None
    else:
        policy = budget.policy
        with budget.stage(f"warm start {spec}", policy.warm_start_share if share is None else share,
                          at_most=policy.start_max_s) as stage:
            sol = stage.solve(problem, spec, seed=seed, lp_bound=False, options=options)
    if sol.parents is None:
        raise MethodUnavailable(f"warm start {spec!r} has no network (status {sol.status})")
    return certified_start(problem, sol), time.monotonic() - t0


