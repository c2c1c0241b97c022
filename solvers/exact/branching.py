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

    Each vertex takes its best arc in; a cycle of those is contracted in place into one of
    its members (its row the best arc out of the cycle, its column the best arc in less
    the cycle arc it replaces), and only a cycle through that vertex can be new. At ad
    (n = 1,556) over a thousand cycles are contracted one by one: copying the smaller
    matrix at each, as a first version did, took 10 s of the k = 1 DP; in place, each
    costs the cycle's rows and columns. Expanding in the reverse order then resolves each
    contracted vertex to the member an arc really enters or leaves."""
    w = w.copy()
    m = w.shape[0]
    np.fill_diagonal(w, -np.inf)
    w[:, root] = -np.inf
    parent = w.argmax(axis=0)
    parent[root] = -1
    alive = np.ones(m, bool)
    levels = []
    queue = _cycles(parent, root)
    while queue:
        cycle = np.asarray(queue.pop())
        levels.append(_contract(w, parent, alive, cycle))
        again = _cycle_through(parent, int(cycle[0]))
        if again is not None:
            queue.append(again)
    sub = parent
    for cycle, cycle_parent, enter_at, leave_from, alive_then in reversed(levels):
        c = cycle[0]
        out = sub.copy()
        u = sub[c]
        out[cycle] = cycle_parent  # the cycle's arcs, but for the one the entering arc replaces
        out[cycle[enter_at[u]]] = u
        redirect = alive_then & (sub == c)
        redirect[cycle] = False
        out[redirect] = cycle[leave_from[redirect]]
        sub = out
    return sub


def _contract(w: np.ndarray, parent: np.ndarray, alive: np.ndarray, cycle: np.ndarray):
    """Contract ``cycle`` into its first member c, in place; what expanding it needs."""
    c, rest = cycle[0], cycle[1:]
    in_cycle = np.zeros(len(parent), bool)
    in_cycle[cycle] = True
    alive_then = alive.copy()
    cycle_parent = parent[cycle].copy()
    enter = w[:, cycle] - w[cycle_parent, cycle][None, :]  # into the cycle at v, less v's cycle arc
    enter_at = enter.argmax(axis=1)
    column = enter[np.arange(len(parent)), enter_at]
    leave_from = w[cycle, :].argmax(axis=0)
    row = w[cycle, :].max(axis=0)
    column[in_cycle], row[in_cycle] = -np.inf, -np.inf
    w[rest, :] = -np.inf
    w[:, rest] = -np.inf
    w[:, c], w[c, :] = column, row
    alive[rest] = False
    outside = alive & ~in_cycle & (parent >= 0)
    outside[outside] = in_cycle[parent[outside]]
    parent[outside] = c  # the cycle's best arc to them is c's row now, of the same weight
    parent[c] = int(column.argmax())
    return cycle, cycle_parent, enter_at, leave_from, alive_then


def _cycles(parent: np.ndarray, root: int) -> list[list[int]]:
    """Every cycle of the parent pointers (each a list of vertices in order)."""
    state = np.zeros(len(parent), np.int8)  # 0 unseen, 1 on the current walk, 2 done
    state[root] = 2
    found = []
    for s in range(len(parent)):
        walk, x = [], s
        while state[x] == 0:
            state[x] = 1
            walk.append(x)
            x = parent[x]
        if state[x] == 1:  # the walk came back to itself
            found.append(walk[walk.index(x):])
        for y in walk:
            state[y] = 2
    return found


def _cycle_through(parent: np.ndarray, c: int) -> list[int] | None:
    """The cycle of the parent pointers through ``c``, or None."""
    walk, seen, x = [c], {c}, int(parent[c])
    while x >= 0 and x not in seen:
        walk.append(x)
        seen.add(x)
        x = int(parent[x])
    return walk if x == c else None


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
