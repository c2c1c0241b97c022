"""Compiled width checks of the local search: the width of an elimination order on a
moral graph, and a greedy min-fill order that never eliminates a vertex of more than k
neighbours. Both stop as soon as the width passes k, since a move is only ever asked
"does the graph still fit in width k", never its exact width.

The graph is a square integer matrix of moral-edge counts (an edge where the count is
positive): the search keeps, for every pair, how many families contain both, so that a
family replaced takes away exactly its own edges.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["order_width", "order_table_size", "min_fill_within", "first_within"]


@njit(cache=True)
def _neighbours(g: np.ndarray, done: np.ndarray, v: int, nb: np.ndarray) -> int:
    """v's neighbours in ``g`` not yet eliminated (``done``) into ``nb``; how many."""
    c = 0
    for u in range(g.shape[0]):
        if g[v, u] and not done[u]:
            nb[c] = u
            c += 1
    return c


@njit(cache=True)
def _eliminate(g: np.ndarray, done: np.ndarray, v: int, nb: np.ndarray) -> int:
    """Eliminate v from the graph ``g`` (``done``: the vertices gone): its remaining
    neighbours into ``nb``, joined into a clique; returns how many there are."""
    c = _neighbours(g, done, v, nb)
    for i in range(c):
        a = nb[i]
        for j in range(i + 1, c):
            b = nb[j]
            g[a, b] = True
            g[b, a] = True
    done[v] = True
    return c


@njit(cache=True)
def order_width(counts: np.ndarray, order: np.ndarray, k: int) -> int:
    """The width of eliminating ``order`` on the graph of ``counts`` > 0, or the first
    width above ``k`` met (the true width is then at least that)."""
    n = counts.shape[0]
    g = counts > 0
    done = np.zeros(n, np.bool_)
    nb = np.empty(n, np.int64)
    width = 0
    for v in order:
        c = _eliminate(g, done, v, nb)
        if c > width:
            width = c
            if width > k:
                return width
    return width


@njit(cache=True)
def order_table_size(counts: np.ndarray, order: np.ndarray, arities: np.ndarray, limit: float) -> float:
    """The junction tree size of eliminating ``order`` on the graph of ``counts`` > 0 (the
    sum, over the maximal cliques, of the product of their arities), or a partial sum
    above ``limit`` once one is met (the size is then above it too).

    Eliminating v makes the clique C_v = {v} ∪ N+(v), its neighbours not yet eliminated.
    C_v lies inside no clique made later (v is gone by then); it lies inside an earlier
    one C_u exactly where v is the first of N+(u) to go (so N+(u) ∖ {v} ⊆ N+(v)) and
    |N+(u)| = |N+(v)| + 1, so C_v = N+(u). One pass therefore knows, at v, whether C_v is
    maximal: the largest |N+(u)| of the u whose first later neighbour is v."""
    n = counts.shape[0]
    g = counts > 0
    done = np.zeros(n, np.bool_)
    pos = np.empty(n, np.int64)
    for i in range(order.shape[0]):
        pos[order[i]] = i
    child_deg = np.full(n, -1, np.int64)
    nb = np.empty(n, np.int64)
    total = 0.0
    for v in order:
        c = _eliminate(g, done, v, nb)
        size = float(arities[v])
        first, first_pos = -1, n
        for i in range(c):
            u = nb[i]
            size *= arities[u]
            if pos[u] < first_pos:
                first, first_pos = u, pos[u]
        if child_deg[v] != c + 1:  # C_v is maximal
            total += size
            if total > limit:
                return total
        if first >= 0 and c > child_deg[first]:
            child_deg[first] = c
    return total


@njit(cache=True)
def _fill(g: np.ndarray, done: np.ndarray, v: int, nb: np.ndarray) -> int:
    """The fill of eliminating v now: the pairs of its remaining neighbours not joined."""
    c = _neighbours(g, done, v, nb)
    fill = 0
    for i in range(c):
        for j in range(i + 1, c):
            if not g[nb[i], nb[j]]:
                fill += 1
    return fill


@njit(cache=True)
def min_fill_within(counts: np.ndarray, k: int) -> np.ndarray:
    """A greedy min-fill elimination order (ties: fewer neighbours, then the lower index)
    among the vertices of at most ``k`` remaining neighbours; an empty array when at some
    step every remaining vertex has more (no order of width ≤ k found this way).

    Each vertex's fill is kept, and after an elimination counted again only where it can
    have changed: at the eliminated vertex's neighbours and theirs. Counting every fill at
    every step took 9.5 ms a call at pigs (n = 441), 2.7 of a 10 s command's 4 s of
    local search (2026-12-07)."""
    n = counts.shape[0]
    g = counts > 0
    done = np.zeros(n, np.bool_)
    deg = np.zeros(n, np.int64)
    for v in range(n):
        for u in range(n):
            if g[v, u]:
                deg[v] += 1
    order = np.empty(n, np.int64)
    nb = np.empty(n, np.int64)
    nb2 = np.empty(n, np.int64)
    fill = np.full(n, -1, np.int64)  # -1: not counted since it last could change
    for step in range(n):
        best, best_fill, best_deg = -1, 1 << 60, 1 << 60
        for v in range(n):
            if done[v] or deg[v] > k:
                continue
            if fill[v] < 0:
                fill[v] = _fill(g, done, v, nb)
            f = fill[v]
            if f < best_fill or (f == best_fill and deg[v] < best_deg):
                best, best_fill, best_deg = v, f, deg[v]
                if f == 0 and deg[v] <= 1:
                    break
        if best < 0:
            return np.empty(0, np.int64)
        c = _neighbours(g, done, best, nb)
        added = False
        for i in range(c):
            a = nb[i]
            for j in range(i + 1, c):
                b = nb[j]
                if not g[a, b]:
                    g[a, b] = True
                    g[b, a] = True
                    deg[a] += 1
                    deg[b] += 1
                    added = True
        for i in range(c):
            deg[nb[i]] -= 1
        done[best] = True
        order[step] = best
        for i in range(c):  # their neighbourhoods lost ``best`` (and may have gained)
            a = nb[i]
            fill[a] = -1
            if added:  # an edge joined two of them: every common neighbour's fill may drop
                m = _neighbours(g, done, a, nb2)
                for j in range(m):
                    fill[nb2[j]] = -1
    return order


@njit(cache=True)
def first_within(masks: np.ndarray, allowed: np.ndarray) -> int:
    """The first row of ``masks`` (sets as 64-bit words, best first) with no bit outside
    ``allowed``: the best cached set inside it; -1 where none is."""
    rows, words = masks.shape
    for i in range(rows):
        inside = True
        for w in range(words):
            if masks[i, w] & ~allowed[w]:
                inside = False
                break
        if inside:
            return i
    return -1
