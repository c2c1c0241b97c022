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


def optimal_forest(problem: Problem) -> list[ParentSet]:
    """Parents of the best treewidth-≤1 network over ``problem.candidates``.

    Needs ∅ among every variable's candidates (a required arc removes it: then raise)."""
    cand = problem.candidates
    g = nx.DiGraph()
    g.add_nodes_from(range(problem.n))
    for v in range(problem.n):
        try:
            empty = cand.score_of(v, ())
        except KeyError:
            raise ValueError(f"{problem.names[v]!r} has no empty parent set: the branching start needs one") from None
        for ps, s in zip(cand.parent_sets[v], cand.scores[v].tolist()):
            if len(ps) == 1 and s > empty:
                g.add_edge(ps[0], v, weight=s - empty)
    forest = nx.algorithms.tree.branchings.maximum_branching(g, attr="weight")
    parents: list[ParentSet] = [()] * problem.n
    for u, v in forest.edges:
        parents[v] = (u,)
    return parents
