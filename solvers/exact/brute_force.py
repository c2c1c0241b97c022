"""Brute force over every combination of cached parent sets, for tiny instances (tests).

Enumerates the product of the candidate lists with early acyclicity checks, and checks
the treewidth of each acyclic network's moral graph exactly (subset DP, memoised by edge
set). Exponential in everything: for n ≤ 7 with a handful of candidates per variable.
"""

from __future__ import annotations

import itertools

from twbn.formulations.graphs import exact_treewidth, moral_graph
from twbn.scoring.cache import ScoreCache
from twbn.scoring.errors import ParameterError

__all__ = ["brute_force_optimum"]


def _acyclic(parents) -> bool:
    n = len(parents)
    state = [0] * n

    def visit(v):
        state[v] = 1
        for p in parents[v]:
            if state[p] == 1 or (state[p] == 0 and not visit(p)):
                return False
        state[v] = 2
        return True

    return all(state[v] or visit(v) for v in range(n))


def brute_force_optimum(cache: ScoreCache, treewidth: int | None = None, allowed_edges=None, max_combinations: int = 2_000_000):
    """(parents, score) of the best network; ``allowed_edges`` (a set of frozenset pairs)
    restricts to networks whose moral graph lies inside that graph."""
    total = 1
    for ps in cache.parent_sets:
        total *= len(ps)
    if total > max_combinations:
        raise ParameterError(f"{total} combinations is too many for brute force")
    tw_memo: dict[frozenset, int] = {}
    best, best_parents = -float("inf"), None
    for combo in itertools.product(*[range(len(p)) for p in cache.parent_sets]):
        parents = [cache.parent_sets[v][i] for v, i in enumerate(combo)]
        score = sum(cache.scores[v][i] for v, i in enumerate(combo))
        if score <= best or not _acyclic(parents):
            continue
        adj = moral_graph(parents)
        edges = frozenset(frozenset((a, b)) for a in adj for b in adj[a] if a < b)
        if allowed_edges is not None and not edges <= allowed_edges:
            continue
        if treewidth is not None:
            if edges not in tw_memo:
                tw_memo[edges] = exact_treewidth(adj)[0]
            if tw_memo[edges] > treewidth:
                continue
        best, best_parents = score, parents
    return best_parents, best
