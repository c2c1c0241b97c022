"""The optimal network of treewidth 1: a maximum-weight branching.

A DAG has treewidth ≤ 1 iff its moral graph is a forest, i.e. every variable has at most
one parent and the skeleton has no cycle: a directed forest (branching). With arc weights
f_v({u}) − f_v(∅) over the cached singleton sets, the best such network is a
maximum-weight branching (Chu & Liu 1965; Edmonds 1967; networkx), in O(m·n).
It is exact for k = 1 and a valid start for every k ≥ 1 (and unbounded).
"""

from __future__ import annotations

import networkx as nx

from twbn.formulations.problem import Problem
from twbn.scoring.cache import ParentSet

__all__ = ["optimal_forest"]


def optimal_forest(problem: Problem) -> list[ParentSet]:
    """Parents of the best treewidth-≤1 network over ``problem.candidates``.

    A variable without ∅ among its candidates (a required arc removes it) must take a
    parent: its arcs weigh more than every other arc together can (``forced``), so a
    maximum branching parents as many such variables as any branching can, and among
    those is the best. Where one is left without a parent, no network satisfies the
    constraints: ValueError ("no network ...")."""
    cand = problem.candidates
    singles = [[(ps[0], s) for ps, s in zip(cand.parent_sets[v], cand.scores[v].tolist()) if len(ps) == 1]
               for v in range(problem.n)]
    has_empty = [() in cand.parent_sets[v] for v in range(problem.n)]
    # more than any sum of the other arcs' weights: each is below a variable's score range
    forced = 1.0 + sum(float(sc.max() - sc.min()) for sc in cand.scores)
    g = nx.DiGraph()
    g.add_nodes_from(range(problem.n))
    for v in range(problem.n):
        if has_empty[v]:
            empty = cand.score_of(v, ())
            base = empty
        else:
            base = min((s for _, s in singles[v]), default=0.0) - forced
        for u, s in singles[v]:
            if s > base:
                g.add_edge(u, v, weight=s - base)
    forest = nx.algorithms.tree.branchings.maximum_branching(g, attr="weight")
    parents: list[ParentSet] = [()] * problem.n
    for u, v in forest.edges:
        parents[v] = (u,)
    for v in range(problem.n):
        if not has_empty[v] and not parents[v]:
            raise ValueError(f"no network of treewidth <= 1 gives {problem.names[v]!r} one of its required parents")
    return parents
