"""Separation of the minor density rows: valid inequalities for the triangulation of the
bounded cluster-cut ILP (formulations/cluster_ilp.py), which the elimination-order rows
8b–8d alone enforce only through their weak big-M link.

Every graph G of treewidth ≤ k with m' ≥ k vertices has at most k·m' − k(k+1)/2 edges
(a k-tree has exactly that many, and every such graph is a subgraph of one), and so has
every minor of G, since minors do not raise treewidth. Take a vertex set U split into m
branch sets B_1 … B_m (m ≥ k), a spanning tree T_i of each, and one edge e_ij between
each of q chosen pairs (B_i, B_j). If G has all those edges, contracting each B_i gives
a minor with m vertices and q edges; if it lacks d_T tree edges and d_X pair edges, the
branch sets fall into m + d_T connected parts, and the minor on them keeps q − d_X
edges. So q − d_X ≤ k(m + d_T) − k(k+1)/2, which is, with t_e = 1 for the edges of G
and |U| = m + Σ_i |T_i|:

    Σ_{pairs} t_{e_ij} + k · Σ_i Σ_{e ∈ T_i} t_e  ≤  k·|U| − k(k+1)/2            (6)

With singleton branch sets, (6) is the density row of U: G[U] has at most
k·|U| − k(k+1)/2 edges. Contraction is what makes (6) strong on sparse graphs of large
treewidth: for k = 2, a subdivided K4 (treewidth 3, and as sparse as a cycle) violates
(6) by 1 once its paths are contracted, while every density row holds. For k = 2 the
rows (6) with a K4 minor characterise the integral points (treewidth ≤ 2 is exactly "no
K4 minor"); for k ≥ 3 they are necessary only.

In twbn the row is written on t_e = y_ij + y_ji, the triangulation's edges: a graph of
treewidth ≤ k containing the moral graph, so (6) is valid for every feasible point. It is
separated at the moral edges that the family variables force (solvers/cuts/branch_and_cut.py says why),
which 8g and 8h put below y_ij + y_ji.

``minor_density_rows`` looks for violated rows by alternating two greedy steps on the
graph of branch sets (the parts), weighted by P_ab = the largest t_e between parts a and
b: contracting, while some merge raises the violation, the pair whose merge raises it
most, by (k − 1)·P_ab − Σ_h min(P_ah, P_bh) (one part fewer gives k, the merged edge
moves from the pair sum into a tree at weight k, and parallel edges to common neighbours
keep only their maximum), series reductions first; then peeling (drop the part whose
removal raises the violation most, keep the best set seen — the greedy densest-subgraph
heuristic); again until neither changes anything. O(m³) numpy work per contraction for
m parts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from twbn.solvers.cuts.cluster_separation import MIN_VIOLATION
from twbn.scoring.errors import ParameterError
from twbn.solvers.budget import passed

__all__ = ["MinorRow", "minor_density_rows"]

#: How much a merge's smaller part degree counts against its gain when choosing merges.
SERIES_WEIGHT = 1.0
#: Searches after the first, each from V less one vertex of the first row: at wdbc k = 2's
#: root (n = 31; rows then separated at y + yᵀ) the bound reached −11,664 with them and
#: −11,652 with the first search only.
MINOR_RESTARTS = 32


@dataclass(frozen=True)
class MinorRow:
    """Row (6): Σ_{(a, b) ∈ pairs} t_ab + k·Σ_{(a, b) ∈ tree} t_ab ≤ rhs."""

    pairs: tuple[tuple[int, int], ...]
    tree: tuple[tuple[int, int], ...]
    rhs: float
    violation: float

    def lhs(self, t: np.ndarray, k: int) -> float:
        return _lhs(self.pairs, self.tree, t, k)


def _lhs(pairs, tree, t: np.ndarray, k: int) -> float:
    return float(sum(t[a, b] for a, b in pairs) + k * sum(t[a, b] for a, b in tree))


def _peel(p: np.ndarray, cost: np.ndarray, k: int) -> tuple[np.ndarray, float]:
    """The subset S of parts (at least k + 1) with the largest value
    Σ_{a<b ∈ S} P_ab − k·|S| − k·Σ_{a ∈ S} cost_a + k(k+1)/2 met while peeling off, one
    at a time, the part whose removal raises the value most. Returns (mask, value)."""
    m = len(p)
    alive = np.ones(m, dtype=bool)
    deg = p.sum(axis=1)
    value = deg.sum() / 2 - k * m - k * cost.sum() + k * (k + 1) / 2
    best_mask, best = alive.copy(), value
    for _ in range(m - k - 1):  # down to k + 1 parts
        contrib = np.where(alive, deg - k - k * cost, np.inf)
        a = int(np.argmin(contrib))
        value -= contrib[a]
        alive[a] = False
        deg -= p[:, a]
        if value > best + 1e-12:
            best_mask, best = alive.copy(), value
    return best_mask, float(best)


class _Minor:
    """Branch sets (parts) over a vertex subset, with P, the edge behind each P_ab
    ({ru, rv}) and each part's tree and tree cost Σ (1 − t_e)."""

    def __init__(self, t: np.ndarray, verts: np.ndarray):
        self.t = t
        self.parts = [[int(v)] for v in verts]
        self.trees: list[list[tuple[int, int]]] = [[] for _ in verts]
        self.p = t[np.ix_(verts, verts)].copy()
        np.fill_diagonal(self.p, 0.0)
        self.ru, self.rv = np.meshgrid(verts, verts, indexing="ij")
        self.cost = np.zeros(len(verts))

    def keep(self, mask: np.ndarray) -> None:
        idx = np.flatnonzero(mask)
        self.parts = [self.parts[i] for i in idx]
        self.trees = [self.trees[i] for i in idx]
        sub = np.ix_(idx, idx)
        self.p, self.cost, self.ru, self.rv = self.p[sub], self.cost[idx], self.ru[sub], self.rv[sub]

    def contract_best(self, k: int) -> bool:
        """Merge the two adjacent parts whose merge raises the value most; False if none does."""
        p = self.p
        m = len(p)
        if m <= k + 1:
            return False
        common = np.minimum(p[:, None, :], p[None, :, :]).sum(axis=2)
        gain = np.where(p > 0, (k - 1) * p - common, -np.inf)
        np.fill_diagonal(gain, -np.inf)
        if gain.max() <= 1e-9:
            return False
        # among the merges that gain, series reductions first: merging a part of small
        # degree into a neighbour keeps the minors that merging two branch parts destroys
        # (on a subdivided K4, gain alone merged two corners and lost the K4)
        deg = p.sum(axis=1)
        key = np.where(gain > 1e-9, gain - SERIES_WEIGHT * np.minimum(deg[:, None], deg[None, :]), -np.inf)
        a, b = np.unravel_index(int(np.argmax(key)), key.shape)
        a, b = int(min(a, b)), int(max(a, b))
        u, v = int(self.ru[a, b]), int(self.rv[a, b])
        self.parts[a] = self.parts[a] + self.parts[b]
        self.trees[a] = self.trees[a] + self.trees[b] + [(u, v)]
        self.cost[a] += self.cost[b] + 1.0 - self.t[u, v]
        heavier = p[b] > p[a]  # the merged part keeps the heavier edge to each neighbour
        heavier[[a, b]] = False
        p[a, heavier] = p[heavier, a] = p[b, heavier]
        self.ru[a, heavier], self.rv[a, heavier] = self.ru[b, heavier], self.rv[b, heavier]
        self.ru[heavier, a], self.rv[heavier, a] = self.ru[heavier, b], self.rv[heavier, b]
        mask = np.ones(m, dtype=bool)
        mask[b] = False
        self.keep(mask)
        return True

    def row(self, k: int) -> MinorRow:
        m = len(self.parts)
        ru, rv = self.ru, self.rv
        pairs = tuple(sorted((int(min(ru[a, b], rv[a, b])), int(max(ru[a, b], rv[a, b])))
                             for a in range(m) for b in range(a + 1, m) if self.p[a, b] > 0))
        tree = tuple(sorted((min(e), max(e)) for tr in self.trees for e in tr))
        size = sum(len(part) for part in self.parts)
        rhs = k * size - k * (k + 1) / 2
        return MinorRow(pairs, tree, rhs, _lhs(pairs, tree, self.t, k) - rhs)


def _search(t: np.ndarray, k: int, start: np.ndarray, deadline: float | None = None) -> MinorRow | None:
    """One greedy search from the vertex set ``start``: contract while a merge raises the
    violation, peel, and again until neither changes anything, or until ``deadline`` (the
    branch sets reached then still give a valid row)."""
    verts = np.flatnonzero(start)
    if len(verts) < k + 2:
        return None
    minor = _Minor(t, verts)
    late = False
    while True:
        while minor.contract_best(k):
            late = passed(deadline)
            if late:
                break
        mask, _ = _peel(minor.p, minor.cost, k)
        if mask.all():
            break
        minor.keep(mask)
        if late:
            break
    return minor.row(k) if len(minor.parts) >= k + 2 else None


def minor_density_rows(t: np.ndarray, k: int, *, restarts: int = MINOR_RESTARTS, max_rows: int = 10,
                       deadline: float | None = None) -> list[MinorRow]:
    """Violated rows (6) at the point ``t`` (symmetric n×n, t_ab ∈ [0, 1], the weight of
    edge {a, b}): one greedy search (``_search``) from all of V, then up to ``restarts``
    more, each from V without one vertex of the first row found, for other minors near
    it, while time.monotonic() < ``deadline``. Returns distinct rows, most violated
    first; may miss violated rows. O(n⁴) per search."""
    t = np.asarray(t, dtype=float)
    n = len(t)
    if t.shape != (n, n) or k < 1:
        raise ParameterError("t must be a square matrix and k ≥ 1")
    found: dict[tuple, MinorRow] = {}
    first = _search(t, k, np.ones(n, dtype=bool), deadline)
    starts = []
    if first is not None:
        used = sorted({v for e in first.pairs + first.tree for v in e})
        starts = [np.arange(n) != v for v in used[:restarts]]
    for row in [first, *(_search(t, k, s, deadline) for s in starts if not passed(deadline))]:
        if row is not None and row.violation > MIN_VIOLATION:
            found.setdefault((row.pairs, row.tree), row)
    return sorted(found.values(), key=lambda r: -r.violation)[:max_rows]
