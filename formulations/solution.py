"""Solvers' results, their certificates, and the result JSON (docs/design.md, "Files")."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Sequence

import networkx as nx

from twbn.formulations.graphs import (elimination_width, exact_treewidth, junction_tree_size, min_degree_order,
                                      min_fill_order, moral_graph)
from twbn.formulations.problem import Problem
from twbn.scoring.cache import ParentSet
from twbn.scoring.jkl import atomic_write_text
from twbn.scoring.errors import ParameterError

__all__ = ["SolverResult", "certificate_order", "make_solution", "start_or_nothing"]

STATUSES = ("optimal", "feasible", "infeasible", "unknown")


@dataclass
class SolverResult:
    """What a solver returns: a network (one parent set per variable, as indices, or none
    when status is infeasible/unknown) with its certificate, an elimination order of the
    moral graph and its width. It lives below the API, by index; the one solution class a
    user, the command line and the harness see is ``twbn.Solution`` (by name), made from
    it once, where ``twbn.learn`` or a model returns (``to_json``)."""

    parents: list[ParentSet] | None
    score: float | None
    bound: float | None
    status: str
    elimination_order: list[int] | None = None
    width: int | None = None
    method: str = ""
    solver: str | None = None
    seed: int | None = None
    time_limit: float | None = None
    wall_time: float = 0.0
    trajectory: list[dict] = field(default_factory=list)
    stats: dict = field(default_factory=dict)

    @property
    def gap(self) -> float | None:
        if self.bound is None or self.score is None:
            return None
        return (self.bound - self.score) / max(abs(self.score), 1e-12)

    def table_size(self, problem: Problem) -> int | None:
        """The junction tree's total table size on the certificate's order
        (``graphs.junction_tree_size``), or None without a network or where the cache
        does not know every arity (a jkl file from elsewhere)."""
        arities = problem.cache.arities
        if self.parents is None or self.elimination_order is None or arities is None or None in arities:
            return None
        return junction_tree_size(self.parents, self.elimination_order, arities)

    def to_json(self, problem: Problem) -> dict:
        names = problem.names
        return {
            "variables": list(names),
            "parents": None if self.parents is None else {names[v]: [names[p] for p in ps] for v, ps in enumerate(self.parents)},
            "score": self.score,
            "bound": self.bound,
            "gap": self.gap,
            "status": self.status,
            "treewidth_bound": problem.treewidth,
            "elimination_order": None if self.elimination_order is None else [names[v] for v in self.elimination_order],
            "width": self.width,
            "table_size": self.table_size(problem),
            "method": self.method,
            "solver": self.solver,
            "seed": self.seed,
            "time_limit": self.time_limit,
            "wall_time": self.wall_time,
            "trajectory": self.trajectory,
            "stats": self.stats,
            "forbidden": [[names[u], names[v]] for u, v in sorted(problem.forbidden)],
            "required": [[names[u], names[v]] for u, v in sorted(problem.required)],
        }

    @classmethod
    def from_json(cls, data: dict, problem: Problem) -> "SolverResult":
        """A SolverResult from a result file of the same variables (e.g. to warm-start)."""
        pos = {n: i for i, n in enumerate(problem.names)}
        if data.get("variables") != list(problem.names):
            raise ParameterError("the result file's variables differ from the cache's")
        parents = None
        if data.get("parents") is not None:
            parents = [tuple(sorted(pos[p] for p in data["parents"][n])) for n in problem.names]
        order = None if data.get("elimination_order") is None else [pos[n] for n in data["elimination_order"]]
        return cls(parents, data.get("score"), data.get("bound"), data.get("status", "unknown"), order,
                   data.get("width"), data.get("method", ""), data.get("solver"), data.get("seed"))

    def write(self, problem: Problem, path: str) -> None:
        atomic_write_text(path, json.dumps(self.to_json(problem), indent=2, allow_nan=False) + "\n")


def certificate_order(n: int, parents: Sequence[ParentSet], k: int | None, hint: Sequence[int] | None = None) -> tuple[list[int], int]:
    """An elimination order of the moral graph with width ≤ k (any order when k is None).

    Tries ``hint`` (e.g. from a solver's tree decomposition), then min-fill and
    min-degree, then the exact subset DP for n ≤ 18. Raises ValueError if none reaches k.
    """
    adj = moral_graph(parents)
    best = None
    # lazily: the greedy orders cost O(n²) and more, and a solver's hint usually suffices
    tries = ([lambda: list(hint)] if hint is not None else []) + [lambda: min_fill_order(adj),
                                                                  lambda: min_degree_order(adj)]
    for make in tries:
        order = make()
        w = elimination_width(adj, order)
        if best is None or w < best[1]:
            best = (order, w)
        if k is None or w <= k:
            return order, w
    if n <= 18:
        w, order = exact_treewidth(adj)
        if w <= k:
            return order, w
        raise ParameterError(f"the network has treewidth {w} > {k}")
    raise ParameterError(f"no elimination order of width <= {k} found (best {best[1]})")


def make_solution(
    problem: Problem,
    parents: Sequence[ParentSet],
    *,
    bound: float | None,
    status: str,
    method: str,
    order_hint: Sequence[int] | None = None,
    **info,
) -> SolverResult:
    """Certify a network for ``problem``: every parent set a candidate, acyclic, an
    elimination order of width ≤ k; the score recomputed from the cache (or, for a problem
    from data, a family the cache lacks scored from the data: ``Problem.score_of``)."""
    if status not in STATUSES:
        raise ParameterError(f"unknown status {status!r}")
    n = problem.n
    parents = [tuple(sorted(p)) for p in parents]
    if len(parents) != n:
        raise ParameterError(f"{len(parents)} parent sets for {n} variables")
    score = math.fsum(problem.score_of(v, ps) for v, ps in enumerate(parents))
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from((p, v) for v, ps in enumerate(parents) for p in ps)
    if not nx.is_directed_acyclic_graph(g):
        raise ParameterError("the network has a directed cycle")
    order, width = certificate_order(n, parents, problem.treewidth, order_hint)
    if bound is not None:
        if bound < score - 1e-7 * max(1.0, abs(score)):
            raise ParameterError(f"solver bound {bound!r} is below the network's score {score!r}")
        bound = max(bound, score)  # summation order must not leave bound a hair below score
    return SolverResult(list(parents), score, bound, status, order, width, method, **info)


def start_or_nothing(problem, start: "SolverResult | None", **info) -> "SolverResult":
    """The answer of a model that ran out of time before solving anything (not built in
    time, or its process overran): the ``start`` it was given, re-certified as
    ``feasible``, or no network (``unknown``). ``info``: method, wall_time, stats, …"""
    if start is None or start.parents is None:
        return SolverResult(None, None, None, "unknown", **info)
    return make_solution(problem, start.parents, bound=None, status="feasible", order_hint=start.elimination_order,
                         **info)
