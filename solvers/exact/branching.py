"""The optimal network of treewidth 1: a maximum-weight branching.

A DAG has treewidth ≤ 1 iff its moral graph is a forest, i.e. every variable has at most
one parent and the skeleton has no cycle: a directed forest (branching). With arc weights
f_v({u}) − f_v(∅) over the cached singleton sets, the best such network is a
maximum-weight branching (Chu & Liu 1965; Edmonds 1967), found here on a dense weight
matrix by contracting cycles (:func:`maximum_branching`, O(n³) at worst, vectorised: at
n = 100 with every pair an arc, 6 s in networkx's, milliseconds here). It is exact for
k = 1 and a valid start for every k ≥ 1 (and unbounded).
"""

from __future__ import annotations

import numpy as np

from twbn.formulations.problem import Problem
from twbn.scoring.cache import ParentSet
from twbn.scoring.errors import ParameterError

__all__ = ["optimal_forest", "maximum_branching"]


def maximum_branching(weights: np.ndarray) -> np.ndarray:
    """A maximum-weight branching of the complete digraph with arc weights ``weights[u, v]``
    (u → v; ``-inf``: no arc; arcs of weight ≤ 0 are never needed).

    Parameters
    ----------
    weights : ndarray of shape (n, n)
        The diagonal is ignored.

    Returns
    -------
    ndarray of int
        Each vertex's parent in the branching, −1 for a root.

    Examples
    --------
    Two arcs into 2: the branching keeps the heavier, and 0 → 1 → 2 is no better than
    0 → 1 plus 0 → 2 only if 1 → 2 weighs less than 0 → 2:

    >>> w = np.full((3, 3), -np.inf)
    >>> w[0, 1], w[1, 2], w[0, 2], w[2, 0] = 5.0, 4.0, 3.0, 1.0
    >>> maximum_branching(w).tolist()
    [-1, 0, 1]
    """
    w = np.asarray(weights, dtype=float)
    n = w.shape[0]
    if w.shape != (n, n):
        raise ParameterError(f"weights must be a square matrix, got shape {w.shape}")
    # a virtual root (index n) with an arc of weight 0 to every vertex: a maximum spanning
    # arborescence from it is a maximum branching, its children the roots
    full = np.full((n + 1, n + 1), -np.inf)
    full[:n, :n] = np.where(w > 0, w, -np.inf)
    full[n, :n] = 0.0
    parent = _arborescence(full, n)
    return np.where(parent[:n] == n, -1, parent[:n])


def _arborescence(w: np.ndarray, root: int) -> np.ndarray:
    """Chu-Liu/Edmonds: the parents of a maximum spanning arborescence from ``root`` (every
    vertex must have a finite arc in from somewhere).

    One cycle is contracted per level, and a level may leave only one vertex fewer: at
    ad (n = 1,556) over a thousand levels. So the levels are a loop, not a recursion (it
    hit Python's recursion limit there), and each keeps only its vectors: the recursion
    kept every level's weight matrix alive, 18.5 GB before it failed."""
    levels = []  # (parent, cycle, rest, enter_at, leave_from) of each contracted level
    w = w.copy()
    while True:
        m = w.shape[0]
        np.fill_diagonal(w, -np.inf)
        w[:, root] = -np.inf
        parent = w.argmax(axis=0)
        parent[root] = -1
        cycle = _a_cycle(parent, root)
        if cycle is None:
            break
        in_cycle = np.zeros(m, bool)
        in_cycle[cycle] = True
        rest = np.flatnonzero(~in_cycle)
        c = len(rest)  # the contracted cycle's index in the smaller graph
        small = np.full((c + 1, c + 1), -np.inf)
        small[:c, :c] = w[np.ix_(rest, rest)]
        # into the cycle at v: the arc's weight less the cycle arc it replaces
        enter = w[np.ix_(rest, cycle)] - w[parent[cycle], cycle][None, :]
        enter_at = enter.argmax(axis=1)
        small[:c, c] = enter[np.arange(c), enter_at]
        leave = w[np.ix_(cycle, rest)]
        leave_from = leave.argmax(axis=0)
        small[c, :c] = leave[leave_from, np.arange(c)]
        levels.append((parent, np.asarray(cycle), rest, enter_at, leave_from))
        w, root = small, int(np.searchsorted(rest, root))
    sub = parent
    for parent, cycle, rest, enter_at, leave_from in reversed(levels):
        c = len(rest)
        out = parent.copy()  # the cycle's arcs, but for the one the entering arc replaces
        p = sub[:c]
        out[rest] = np.where(p < 0, -1, np.where(p == c, cycle[leave_from], rest[np.clip(p, 0, c - 1)]))  # clip: indices where np.where discards them
        out[cycle[enter_at[sub[c]]]] = rest[sub[c]]
        sub = out
    return sub


def _a_cycle(parent: np.ndarray, root: int) -> list[int] | None:
    """A cycle of the parent pointers (vertices in order), or None."""
    state = np.zeros(len(parent), np.int8)  # 0 unseen, 1 on the current walk, 2 done
    state[root] = 2
    for s in range(len(parent)):
        walk, x = [], s
        while state[x] == 0:
            state[x] = 1
            walk.append(x)
            x = parent[x]
        if state[x] == 1:  # the walk came back to itself
            return walk[walk.index(x):]
        for y in walk:
            state[y] = 2
    return None


def optimal_forest(problem: Problem) -> list[ParentSet]:
    """Parents of the best treewidth-≤1 network over ``problem.candidates``.

    A variable without ∅ among its candidates (a required arc removes it) must take a
    parent: its arcs weigh more than every other arc together can (``forced``), so a
    maximum branching parents as many such variables as any branching can, and among
    those is the best. Where one is left without a parent, no network satisfies the
    constraints: ValueError ("no network ...")."""
    cand = problem.candidates
    # by the sets' sizes, not a loop over every set (plants' exhaustive cache: 2.7 M)
    sizes = [np.fromiter(map(len, cand.parent_sets[v]), np.int64, len(cand.parent_sets[v])) for v in range(problem.n)]
    singles = [[(cand.parent_sets[v][i][0], float(cand.scores[v][i])) for i in np.flatnonzero(sizes[v] == 1).tolist()]
               for v in range(problem.n)]
    has_empty = [bool((sizes[v] == 0).any()) for v in range(problem.n)]
    # more than any sum of the other arcs' weights: each is below a variable's score range
    forced = 1.0 + sum(float(sc.max() - sc.min()) for sc in cand.scores)
    weights = np.full((problem.n, problem.n), -np.inf)
    for v in range(problem.n):
        if has_empty[v]:
            base = cand.score_of(v, ())
        else:
            base = min((s for _, s in singles[v]), default=0.0) - forced
        for u, s in singles[v]:
            if s > base:
                weights[u, v] = s - base
    branching = maximum_branching(weights)
    parents: list[ParentSet] = [() if u < 0 else (int(u),) for u in branching.tolist()]
    for v in range(problem.n):
        if not has_empty[v] and not parents[v]:
            raise ParameterError(f"no network of treewidth <= 1 gives {problem.names[v]!r} one of its required parents")
    return parents
