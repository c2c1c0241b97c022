"""A proved upper bound at any size: the cluster LP relaxation, certified as a Lagrangian.

The problem: every network of a bounded (or unbounded) problem is an integer point of
the cluster ILP (formulations/cluster_ilp.py, (1)–(3)); a treewidth bound only removes
points, so any upper bound on the unbounded problem over the same candidate sets bounds
the bounded one too. Relaxing the cluster rows (3) with multipliers λ_C ≥ 0 gives, for
*every* λ ≥ 0 and every set of clusters (weak duality; Jaakkola, Sontag, Globerson & Meila
2010 bound the same LP through its dual),

    L(λ) = Σ_C λ_C·(|C| − 1) + Σ_v max_W [ f_v(W) − Σ_{C ∋ v, W ∩ C ≠ ∅} λ_C ]

because each variable's family is one of its candidates (2) and a network satisfies every
row (3). With λ = 0 it is the trivial bound Σ_v max_W f_v(W).

The multipliers come from HiGHS solving the LP of (1), (2) and a growing set of cluster
rows (the pairs that can form a 2-cycle first, then rows (3) violated at the LP point,
found by ``greedy_clusters``), within a time limit. The LP starts with each variable's
best few families and takes in others as their reduced cost under the current duals makes
them better than every family already in (column generation): jester's 772,774 families
did not let the first LP finish in 10 s. Rows are separated at every LP point, priced or
not, and a row whose multiplier stays 0 for ``policy.lp_row_idle_rounds`` solves leaves the LP.
L(λ) is evaluated over all families, so a bound from a restricted LP is still a bound,
and so is one after rows left; the bound reported is L(λ) recomputed
here from the rows' duals, so it is a proof whatever the LP solver's tolerances, and it
never exceeds the trivial bound (λ = 0 is tried too). References: Cussens (2011),
Bartlett & Cussens (2017) for the rows and their separation.

Width rows (W): what only a bounded problem's networks satisfy. A treewidth bound k is
otherwise used only through the candidate sets (|W| ≤ k), so with at most 4 parents the
LP was the same at k = 5 and k = 8. For a vertex set C with |C| = m ≥ k + 2 and an
assignment c of each pair {a, b} ⊆ C to one variable c(a, b) (the child whose family
may cover it), the row

    Σ_{W → w} a_C(W → w)·x(W → w) ≤ k·m − k(k+1)/2,
    a_C(W → w) = #{ {a, b} ⊆ C : c(a, b) = w, {a, b} ⊆ {w} ∪ W }

holds for every network of treewidth ≤ k. Proof: its moral graph M has treewidth ≤ k, so
M[C] does too and is k-degenerate (the first vertex of a width-≤ k elimination order of
M[C] has at most k neighbours; remove it and repeat down to k + 1 vertices), so M[C] has
at most k(m − k − 1) + k(k+1)/2 = k·m − k(k+1)/2 edges. Each variable w has exactly one
family; a pair assigned to w counts 1 only if that family holds both ends, and then the
pair is an edge of M (an arc, or two parents of w married). Distinct pairs are distinct
edges, so the left side is at most |E(M[C])|. It does not hold without the bound: an
unbounded network's moral graph on C may be complete (m(m − 1)/2 > k·m − k(k+1)/2 for
m ≥ k + 2). In L(λ) a width row enters as λ·(k·m − k(k+1)/2) plus λ·a_C in each
family's penalty; a family with a_C = 0 is untouched. ``separate_width_rows`` finds them at
the LP point: each pair goes to the child whose families cover it with most weight, and
dense sets C of that weighted graph come from greedy peeling (Charikar 2000).

Minor rows (M): the width rows after contraction. Treewidth does not grow under taking
minors, so for branch sets B_1 … B_m of a vertex set U, a spanning tree T_i in each and
one pair e_ij between each of q chosen pairs of branch sets, every graph of treewidth ≤ k
satisfies Σ_pairs t(e_ij) + k·Σ_i Σ_{e ∈ T_i} t(e) ≤ k·|U| − k(k+1)/2 (row (6) of
solvers/cuts/minor_separation.py, which proves it; with singleton branch sets it is a
width row). For k = 2 they are exactly the rows that cut a K4 minor, which the width rows
miss once its paths are subdivided (a subdivided K4 is as sparse as a 2-tree). The LP has
no edge variables, so each edge e = {a, b} of a row is read through one rule that puts a
network's indicator of e below its moral edge: the arcs between a and b in either
direction (Σ x(W → a), b ∈ W, plus Σ x(W → b), a ∈ W: acyclicity allows at most one), or
the families of one third child w that hold both (a married pair). A family's coefficient
is the sum of the coefficients of the edges it covers under their rules; with coefficients
≥ 0 the row holds for every network of width ≤ k. ``FamilyTable.moral_rules`` chooses, for each pair,
the rule with the most weight at the LP point, and ``MinorRows`` finds violated rows on
that weighted graph with ``minor_density_rows`` (greedy contraction and peeling).
"""

from __future__ import annotations

import math
import time
from typing import Callable, NamedTuple, Protocol, Sequence

import numpy as np
from numba import njit

from twbn.formulations.cluster_ilp import FamilyTable
from twbn.formulations.problem import Problem

from twbn.solvers.policy import DEFAULT_POLICY, Policy

__all__ = ["lagrangian_bound", "cluster_lp_bound", "Row", "RowFamily", "LpPoint", "ClusterRows", "WidthRows",
           "MinorRows", "rule_row", "minor_regions", "DEFAULT_ROWS"]

# The LP's knobs (rows and columns per round, when idle rows leave, the set-up cost per
# family) are the Policy's ``lp_*`` fields, with their measurements (solvers/policy.py).


class Row(NamedTuple):
    """One row Σ_f a_f·x_f ≤ ``rhs`` of the LP: ``families`` (indices into the FamilyTable,
    every family the row counts, whether in the LP yet or not), ``coefficients`` (None:
    all 1) and, for a cluster row (3), its vertex set ``cluster`` (then its families are
    found by membership as columns enter, which is faster than by list)."""

    families: np.ndarray
    coefficients: "np.ndarray | None"
    rhs: float
    cluster: "list[int] | None" = None


class LpPoint(NamedTuple):
    """What a row family sees each round: the FamilyTable, the LP point ``x`` over all
    families (0 outside the LP), the bound ``k`` (None: unbounded), the policy, the
    deadline (a ``time.monotonic()``), whether the LP still prices columns (``priced``) and
    the rows the families before it found this round (``earlier``)."""

    table: FamilyTable
    x: np.ndarray
    k: "int | None"
    policy: Policy
    deadline: float
    priced: bool
    earlier: "list[Row]"


class RowFamily(Protocol):
    """A family of valid rows for the cluster LP: ``separate`` returns rows violated at an
    LP point (none: nothing to add this round). Every row must hold for every network of
    the problem's cached parent sets (of width ≤ k where k is given): then L(λ) stays a
    bound (module docstring), whatever the rows. A round where no family finds a row and
    no column enters ends the LP (``complete``). docs/extending.md shows one."""

    name: str

    def separate(self, point: LpPoint) -> "list[Row]":
        ...


class ClusterRows:
    """The cluster rows (3), Σ_{v ∈ C} Σ_{W ∩ C ≠ ∅} x(W → v) ≤ |C| − 1: at most
    ``policy.lp_rows_per_round`` violated ones a round, by ``greedy_clusters``."""

    name = "cluster"

    def separate(self, point: LpPoint) -> "list[Row]":
        from twbn.solvers.cuts.cluster_separation import greedy_clusters

        # (greedy_clusters returns only rows violated by more than MIN_VIOLATION)
        found = greedy_clusters(point.table, point.x, max_cuts=point.policy.lp_rows_per_round,
                                deadline=point.deadline)
        return [Row(point.table.cluster_families(c), None, len(c) - 1.0, list(c)) for c in found]


class WidthRows:
    """The width rows (W) of a bounded problem (module docstring), at most
    ``policy.lp_width_rows_per_round`` a round: each round up to
    ``policy.lp_width_rows_each_round_max_k`` (at n = 69-1,041 the cluster rows were still
    being found when the LP's time ran out, and the width rows tightened the bound by
    31-1,820), else only once no cluster row is violated (each round at k = 5 they slowed
    the LP: bounds 419-790 looser; results/field-width-rows.md); never while the LP still
    prices (taken in pricing rounds too, at plants k = 2 they left the bound after 18 s 270
    looser: 356 width rows against 65)."""

    name = "width"

    def separate(self, point: LpPoint) -> "list[Row]":
        from twbn.solvers.cuts.cluster_separation import MIN_VIOLATION

        k, table = point.k, point.table
        if k is None or k + 2 > table.n or point.priced:
            return []
        if point.earlier and k > point.policy.lp_width_rows_each_round_max_k:
            return []
        wide = separate_width_rows(table, point.x, k, max_rows=point.policy.lp_width_rows_per_round,
                                   min_violation=MIN_VIOLATION)
        return [Row(*width_row(table, a), width_rhs(len(c), k)) for c, a, _ in wide]


class MinorRows:
    """The minor rows (M) of a bounded problem with k ≤ ``policy.lp_minor_rows_max_k``
    (module docstring): at most ``policy.lp_minor_rows_per_round`` a round, from a search
    of at most ``policy.lp_minor_s_per_round`` seconds, at every point whose pricing is
    done. The search runs on the variables the point gives a moral edge; above
    ``policy.lp_minor_max_n`` of them, on regions of that many grown around the heaviest
    variables not yet in one (:func:`minor_regions`), as the round's time allows. At k = 2
    `learn` from data at 600 s ended with bounds 505–1,407 tighter with them (plants,
    baudio, jester; results/field-data-600-policies-nominor.md).

    Examples
    --------
    A K4 on A, B, C, D with the pair A-B subdivided by E: every width row holds, and the
    minor row with A-E contracted (tree edge, counted k = 2 times) is violated by 1.

    >>> import math
    >>> from twbn.scoring.cache import ScoreCache
    >>> chosen = [(2, 3), (4,), (1, 3), (), (0,)]  # A <- {C, D}, B <- {E}, C <- {B, D}, E <- {A}
    >>> table = FamilyTable.from_cache(ScoreCache.from_mapping(
    ...     "ABCDE", [{(): -9.0, ps: -1.0} if ps else {(): -1.0} for ps in chosen]))
    >>> x = np.zeros(table.size); x[[table.family(v, ps) for v, ps in enumerate(chosen)]] = 1.0
    >>> [row] = MinorRows().separate(LpPoint(table, x, 2, DEFAULT_POLICY, math.inf, False, []))
    >>> float(row.coefficients @ x[row.families]), row.rhs
    (8.0, 7.0)
    """

    name = "minor"

    def separate(self, point: LpPoint) -> "list[Row]":
        from twbn.solvers.cuts.minor_separation import minor_density_rows

        k, table, policy = point.k, point.table, point.policy
        if k is None or k > policy.lp_minor_rows_max_k or k + 2 > table.n or point.priced:
            return []
        deadline = min(point.deadline, time.monotonic() + policy.lp_minor_s_per_round)
        t, rule = table.moral_rules(point.x)
        found = []
        for region in minor_regions(t, k, policy.lp_minor_max_n):
            if time.monotonic() >= deadline:
                break
            local = minor_density_rows(t[np.ix_(region, region)], k, restarts=policy.lp_minor_restarts,
                                       max_rows=policy.lp_minor_rows_per_round, deadline=deadline)
            found += [(r.violation, [(int(region[a]), int(region[b])) for a, b in r.pairs],
                       [(int(region[a]), int(region[b])) for a, b in r.tree], r.rhs) for r in local]
        rows = []
        for _, pairs, tree, rhs in sorted(found, key=lambda f: -f[0])[:policy.lp_minor_rows_per_round]:
            weights: dict[tuple[int, int], float] = {}
            for (a, b), c in [*((e, 1.0) for e in pairs), *((e, float(k)) for e in tree)]:
                e = (min(a, b), max(a, b))
                weights[e] = weights.get(e, 0.0) + c
            rows.append(Row(*rule_row(table, weights, rule), float(rhs)))
        return rows


def minor_regions(t: np.ndarray, k: int, size: int) -> "list[np.ndarray]":
    """Vertex sets to search for minor rows in. The search's contraction holds an
    (m, m, m) array for m variables: 8 GB at m = 1,000.

    Parameters
    ----------
    t : (n, n) array
        Symmetric edge weights (``FamilyTable.moral_rules``).
    k : int
        The treewidth bound: a region has at least k + 2 variables.
    size : int
        The most variables of a region.

    Returns
    -------
    list of int arrays
        The variables with an edge of weight > 0, whole if at most ``size``; else regions
        of at most ``size``, each grown from the heaviest variable (by weighted degree) not
        yet in a region by adding the variable most strongly joined to it (Prim's order).

    Examples
    --------
    >>> t = np.zeros((7, 7)); t[0, 1] = t[1, 2] = t[2, 0] = t[4, 5] = t[5, 6] = 1.0; t[4, 6] = 0.5
    >>> t = t + t.T
    >>> [r.tolist() for r in minor_regions(t, 1, 6)], [r.tolist() for r in minor_regions(t, 1, 3)]
    ([[0, 1, 2, 4, 5, 6]], [[0, 1, 2], [4, 5, 6]])
    """
    touched = np.flatnonzero((t > 1e-9).any(axis=1))
    if len(touched) < k + 2:
        return []
    if len(touched) <= size:
        return [touched]
    degree = t.sum(axis=1)
    free = np.zeros(len(t), dtype=bool)
    free[touched] = True
    regions = []
    while free.any():
        seed = int(np.flatnonzero(free)[np.argmax(degree[free])])
        inside = np.zeros(len(t), dtype=bool)
        inside[seed] = True
        join = t[seed].copy()
        for _ in range(size - 1):
            join[inside] = -1.0
            nxt = int(np.argmax(join))
            if join[nxt] <= 1e-9:
                break
            inside[nxt] = True
            join += t[nxt]
        free &= ~inside
        if inside.sum() >= k + 2:
            regions.append(np.flatnonzero(inside))
    return regions


#: The row families of the LP, in the order they are separated each round.
DEFAULT_ROWS: "tuple[RowFamily, ...]" = (ClusterRows(), WidthRows(), MinorRows())


def _reduced(table: FamilyTable, row_families: list[np.ndarray], lam: np.ndarray,
             row_coefficients: list[np.ndarray | None] | None = None, out: "np.ndarray | None" = None) -> np.ndarray:
    """f_v(W) − Σ_r λ_r·a_r(W → v) for every family (the inner term of L(λ)); a cluster
    row's coefficients are 1 (None), a width row's the pairs it counts. ``out``: a buffer
    of the table's size to write into (the LP's rounds reuse one: each new 22 MB array at
    2.7 M families is a fresh mapping, faulted in page by page)."""
    if out is None:
        penalty = np.zeros(table.size)
    else:
        penalty = out
        penalty.fill(0.0)
    coefficients = row_coefficients if row_coefficients is not None else [None] * len(row_families)
    for fams, coef, mu in zip(row_families, coefficients, lam):
        if mu > 0:
            if coef is None:
                _add_at(penalty, fams, float(mu))
            else:
                penalty[fams] += mu * coef
    return np.subtract(table.scores, penalty, out=penalty)


@njit(cache=True, nogil=True)
def _add_at(penalty, fams, mu):  # pragma: no cover - compiled
    """penalty[fams] += mu in one pass over the (int32, distinct) indices: numpy's fancy
    ``+=`` converts them to intp and reads, adds and writes in three (at 2.7 M families,
    55 M entries a round, the LP lost a tenth of its rounds to it)."""
    for i in range(len(fams)):
        penalty[fams[i]] += mu


def _value(table: FamilyTable, rhs: np.ndarray, lam: np.ndarray, reduced: np.ndarray) -> float:
    """L(λ) from the reduced scores and the rows' right-hand sides."""
    return math.fsum((lam * rhs).tolist()) + math.fsum(np.maximum.reduceat(reduced, table.start[:-1]).tolist())


def lagrangian_bound(table: FamilyTable, clusters: list[list[int]], multipliers) -> float:
    """L(λ) of the module docstring for the given clusters and multipliers (negative
    ones count as 0). O(F + Σ row sizes) numpy work."""
    lam = np.maximum(np.asarray(multipliers, dtype=float), 0.0)
    rhs = np.array([len(c) - 1.0 for c in clusters])
    return _value(table, rhs, lam, _reduced(table, [table.cluster_families(c) for c in clusters], lam))


def width_rhs(m: int, k: int) -> float:
    """The most edges a graph on ``m`` ≥ k + 1 vertices of treewidth ≤ k has: k·m − k(k+1)/2
    (it is k-degenerate: a vertex of degree ≤ k, removed in turn, down to a (k+1)-clique)."""
    return float(k * m - k * (k + 1) // 2)


def _child_pairs_row(table: FamilyTable, by_child: "dict[int, list[tuple[int, int, float]]]") -> tuple[np.ndarray, np.ndarray]:
    """Families and coefficients (sorted by family) of a row that gives each child w's
    pairs (a, b, c): a family W → w counts c for each of its pairs inside {w} ∪ W."""
    fams, coefs = [], []
    for w, items in sorted(by_child.items()):
        lo, hi = int(table.start[w]), int(table.start[w + 1])
        inside = table.member_rows(np.arange(lo, hi))
        inside[:, w] = True  # the child is in its own family
        a, b, c = (np.array(col) for col in zip(*items))
        count = (inside[:, a] & inside[:, b]).astype(float) @ c.astype(float)
        hit = np.flatnonzero(count)
        fams.append(lo + hit)
        coefs.append(count[hit])
    if not fams:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    return np.concatenate(fams), np.concatenate(coefs)


def width_row(table: FamilyTable, assignment: dict[int, list[tuple[int, int]]]) -> tuple[np.ndarray, np.ndarray]:
    """The families of a width row (W) and their coefficients: family W → w counts the pairs
    {a, b} assigned to w that lie inside {w} ∪ W (module docstring)."""
    return _child_pairs_row(table, {w: [(a, b, 1.0) for a, b in pairs] for w, pairs in assignment.items() if pairs})


def rule_row(table: FamilyTable, weights: "dict[tuple[int, int], float]",
             rule: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The row Σ_e c_e·(e's rule) ≤ rhs over families, for the minor rows (module docstring).

    Parameters
    ----------
    table : FamilyTable
    weights : dict
        c_e > 0 for each pair e = (a, b), a < b.
    rule : (n, n) int array
        Each pair's rule (``FamilyTable.moral_rules``): −1 for the arcs between a and b
        (a's families holding b, b's holding a), w ≥ 0 for child w's families holding both.

    Returns
    -------
    families, coefficients : arrays
        Sorted by family; a family's coefficient is the sum of c_e over the pairs it covers.

    Examples
    --------
    >>> from twbn.scoring.cache import ScoreCache
    >>> table = FamilyTable.from_cache(ScoreCache.from_mapping("ABC", [{(): -1.0}, {(): -1.0, (0,): -2.0},
    ...                                                                 {(): -5.0, (0, 1): -1.0}]))
    >>> rule = np.full((3, 3), -1); rule[0, 1] = rule[1, 0] = 2  # A-B read as married in C
    >>> fams, coefs = rule_row(table, {(0, 1): 1.0, (1, 2): 2.0}, rule)
    >>> [(int(table.child[f]), table.parents[f], c) for f, c in zip(fams.tolist(), coefs.tolist())]
    [(2, (0, 1), 3.0)]
    """
    by_child: dict[int, list[tuple[int, int, float]]] = {}
    for (a, b), c in weights.items():
        w = int(rule[a, b])
        for child in ((a, b) if w < 0 else (w,)):  # an arc either way, or a married pair
            by_child.setdefault(child, []).append((a, b, c))
    return _child_pairs_row(table, by_child)


def separate_width_rows(table: FamilyTable, x: np.ndarray, k: int, max_rows: int = 20,
                        min_violation: float = 1e-4) -> list[tuple[list[int], dict[int, list[tuple[int, int]]], float]]:
    """Width rows (W) violated at the LP point ``x``: each pair {a, b} gets the child w whose
    families cover it with the most weight e_ab = Σ x(W → w), {a, b} ⊆ {w} ∪ W; then dense
    vertex sets of the graph weighted by e are found by greedy peeling (the smallest weighted
    degree removed in turn, Charikar 2000), from the whole graph and from each heavy
    vertex's neighbourhood. Returns (C, assignment, violation) for each distinct C found with
    Σ_{ab ⊆ C} e_ab − (k·|C| − k(k+1)/2) > ``min_violation``, the most violated first."""
    support = np.flatnonzero(x > 1e-9)
    cover: dict[tuple[int, int], dict[int, float]] = {}
    for f in support.tolist():
        w = int(table.child[f])
        family = sorted(set(table.parents[f]) | {w})
        if len(family) < 2:
            continue
        xf = float(x[f])
        for a_i in range(len(family)):
            for b_i in range(a_i + 1, len(family)):
                by = cover.setdefault((family[a_i], family[b_i]), {})
                by[w] = by.get(w, 0.0) + xf
    if not cover:
        return []
    weight: dict[tuple[int, int], float] = {}
    child: dict[tuple[int, int], int] = {}
    for p, by in cover.items():
        w = max(by, key=lambda u: (by[u], -u))
        weight[p], child[p] = by[w], w
    vertices = sorted({v for p in weight for v in p})
    if len(vertices) < k + 2:
        return []
    pos = {v: i for i, v in enumerate(vertices)}
    m = len(vertices)
    e = np.zeros((m, m))
    for (a, b), wt in weight.items():
        e[pos[a], pos[b]] = e[pos[b], pos[a]] = wt

    def peel(start: np.ndarray) -> tuple[float, np.ndarray] | None:
        alive = start.copy()
        deg = e[:, alive].sum(axis=1)
        total = deg[alive].sum() / 2.0
        best, best_set = min_violation, None
        size = int(alive.sum())
        while size >= k + 2:
            viol = total - width_rhs(size, k)
            if viol > best:
                best, best_set = viol, alive.copy()
            i = int(np.flatnonzero(alive)[np.argmin(deg[alive])])
            alive[i] = False
            total -= deg[i]
            deg -= e[:, i]
            size -= 1
        return None if best_set is None else (best, best_set)

    starts = [np.ones(m, dtype=bool)]
    strength = e.sum(axis=1)
    for i in np.argsort(-strength)[:max_rows].tolist():
        around = e[i] > 0
        around[i] = True
        if around.sum() >= k + 2:
            starts.append(around)
    found: dict[tuple[int, ...], float] = {}
    for start in starts:
        got = peel(start)
        if got is not None:
            key = tuple(vertices[i] for i in np.flatnonzero(got[1]).tolist())
            found[key] = got[0]
    rows = []
    for c, viol in sorted(found.items(), key=lambda kv: -kv[1])[:max_rows]:
        cset = set(c)
        assignment: dict[int, list[tuple[int, int]]] = {}
        for p, w in child.items():
            if p[0] in cset and p[1] in cset:
                assignment.setdefault(w, []).append(p)
        rows.append((list(c), assignment, viol))
    return rows


def _pairs(table: FamilyTable) -> list[list[int]]:
    """The clusters {a, b} whose row (3) some pair of families can violate (a 2-cycle)."""
    ptr, par = table.parent_index
    arcs = set(zip(par.tolist(), np.repeat(table.child, np.diff(ptr)).tolist()))
    return [[a, b] for a, b in sorted(arcs) if a < b and (b, a) in arcs]


@njit(cache=True, nogil=True)
def _column_rows(vptr, vrows, flipped, child, lo, hi, parents):  # pragma: no cover - compiled
    """For family b (child ``child[b]``, parents ``parents[lo[b]:hi[b]]``), the cluster
    rows that count it, ascending: ``rows[edges[b]:edges[b + 1]]``. A row as written (3)
    counts it when its cluster holds the child and one of the parents; a ``flipped`` row
    (the complement form) when it holds the child and none of them.
    ``vrows[vptr[u]:vptr[u + 1]]`` are the rows whose cluster holds u, ascending."""
    n_rows = len(flipped)
    stamp = np.zeros(n_rows, np.int64)
    edges = np.zeros(len(child) + 1, np.int64)
    for b in range(len(child)):  # counting pass
        for q in range(lo[b], hi[b]):
            u = parents[q]
            for j in range(vptr[u], vptr[u + 1]):
                stamp[vrows[j]] = b + 1
        c = child[b]
        found = 0
        for j in range(vptr[c], vptr[c + 1]):
            if (stamp[vrows[j]] == b + 1) != flipped[vrows[j]]:
                found += 1
        edges[b + 1] = edges[b] + found
    rows = np.empty(edges[-1], np.int64)
    stamp[:] = 0
    for b in range(len(child)):
        for q in range(lo[b], hi[b]):
            u = parents[q]
            for j in range(vptr[u], vptr[u + 1]):
                stamp[vrows[j]] = b + 1
        c = child[b]
        at = edges[b]
        for j in range(vptr[c], vptr[c + 1]):
            if (stamp[vrows[j]] == b + 1) != flipped[vrows[j]]:
                rows[at] = vrows[j]
                at += 1
    return edges, rows


def cluster_lp_bound(problem: Problem, *, time_limit: float = 10.0, width: bool = True,
                     on_bound: "Callable[[float], None] | None" = None,
                     policy: Policy = DEFAULT_POLICY, rows: "Sequence[RowFamily] | None" = None) -> tuple[float, dict]:
    """An upper bound on every network of ``problem`` from the cluster LP (module
    docstring), within about ``time_limit`` seconds.

    Parameters
    ----------
    problem : Problem
        Its candidate sets (bounded or not) define the LP.
    time_limit : float
        Seconds for the LP solves and separation; the last LP solved gives the bound.
    width : bool, default True
        Separate the width rows (W) and minor rows (M) of a bounded problem (with the
        default ``rows``).
    rows : sequence of RowFamily, optional
        The row families separated each round, in order (default ``DEFAULT_ROWS``: the
        cluster rows (3), the width rows (W), then the minor rows (M)); a researcher's own
        family is valid if each of its rows holds for every network of the cached parent sets.
    on_bound : callable, optional
        Called with each better bound as it is proved (round by round): a caller that
        cannot wait for the end (the LP in a process beside the method) keeps the last.
    policy : Policy, optional
        Its ``lp_*`` knobs; default: the measured ones.

    Returns
    -------
    bound : float
        L(λ), never above the trivial bound Σ_v max_W f_v(W).
    stats : dict
        ``trivial``, ``lp_value`` (the last LP's optimum), ``rows`` (rows in the last
        LP), ``dropped`` (rows taken out after ``policy.lp_row_idle_rounds`` solves without a multiplier),
        ``rounds``, ``seconds``, ``complete`` (no violated row left: the bound is the LP
        relaxation's optimum), ``entries`` (the last LP's nonzeros) and
        ``complement_rows`` (its cluster rows written as their complement).

    Examples
    --------
    >>> from twbn.scoring.cache import ScoreCache
    >>> # each of A, B prefers the other as parent (-1 each) to none (-5 each)
    >>> cache = ScoreCache.from_mapping("AB", [{(): -5.0, (1,): -1.0}, {(): -5.0, (0,): -1.0}])
    >>> bound, stats = cluster_lp_bound(Problem(cache))
    >>> stats["trivial"], bound
    (-2.0, -6.0)
    """
    import highspy
    from scipy.sparse import csr_matrix, vstack

    from twbn.solvers.models.backends import quiet_highs

    t0 = time.monotonic()
    families = problem.candidates.n_parent_sets()
    if time_limit < policy.lp_setup_s_per_family * families:
        # the first LP would not even be built in time: the trivial bound, now, rather than
        # the same bound after the limit (jester at 1.1 s: 1.9 s, no LP solved)
        trivial = math.fsum(float(sc[0]) for sc in problem.candidates.scores)
        return trivial, {"trivial": trivial, "lp_value": None, "rows": 0, "rounds": 0,
                         "seconds": round(time.monotonic() - t0, 3), "complete": False, "columns": 0,
                         "skipped": f"{families:,} families need about {policy.lp_setup_s_per_family * families:.1f} s "
                                    f"to set up, more than the {time_limit:.2f} s given"}
    table = FamilyTable.from_cache(problem.candidates)
    n, size = table.n, table.size
    k = problem.treewidth
    if rows is None:
        rows = DEFAULT_ROWS if width else tuple(f for f in DEFAULT_ROWS if not isinstance(f, (WidthRows, MinorRows)))
    trivial = math.fsum(np.maximum.reduceat(table.scores, table.start[:-1]).tolist())
    h = quiet_highs()
    h.setOptionValue("threads", 1)
    h.addRows(n, np.ones(n), np.ones(n), 0, np.zeros(n, dtype=np.int32), np.zeros(0, dtype=np.int32),
              np.zeros(0))  # (2), filled as columns arrive
    in_lp = np.zeros(size, dtype=bool)
    columns: list[np.ndarray] = []  # LP column j is family order[j]
    kinds: list[str] = []  # each row's family (RowFamily.name)
    row_families: list[np.ndarray] = []  # all families each row counts (sorted)
    row_coefficients: list[np.ndarray | None] = []  # a row's coefficients; None: all 1
    rhs: list[float] = []
    # cluster rows as vertex sets (a listed row: empty), sparse: dense (rows, n) matrices and
    # their products with the columns' parents took 1.3 GB at n = 5,000 in one round
    cmat = csr_matrix((0, n), dtype=np.float32)
    listed: list[int] = []  # the rows whose families are found by list, not by a vertex set
    idle = np.zeros(0, dtype=np.int64)  # solves since each row last had a multiplier
    # rows written as their complement, Σ_{f ∉ row, child in C} x_f ≥ |C| − rhs (equal given
    # (2), and sparser for a large cluster: at n = 1,000 the LP reached 2.6 M entries, 550 MB
    # in HiGHS, as written); L(λ) still reads every row as written, with λ its dual
    flipped = np.zeros(0, dtype=np.bool_)
    dropped = 0  # rows taken out

    def add_columns(fams: np.ndarray) -> None:
        """Families as LP columns, with their entries in (2) and in every row."""
        nonlocal cmat
        fams = np.asarray(fams, dtype=np.int64)
        child = table.child[fams]
        # a row counts a family whose child is in its cluster and some parent too; found
        # from the rows of each vertex (cmat by column), in time and memory of the entries
        # themselves: the product of cmat with the families' parents (sparse or not) also
        # counts the rows that miss the child, 420 MB at n = 1,000 after 20 rounds
        by_vertex = cmat.tocsc()
        by_vertex.sort_indices()
        ptr, idx = table.parent_index
        edges, hit_r = _column_rows(by_vertex.indptr.astype(np.int64), by_vertex.indices.astype(np.int64),
                                    flipped, child, ptr[fams], ptr[fams + 1], idx)
        extra: list[list[tuple[int, float]]] = [[] for _ in fams]
        for r in listed:
            at = np.searchsorted(row_families[r], fams)
            at = np.minimum(at, max(0, len(row_families[r]) - 1))
            for b in np.flatnonzero(row_families[r][at] == fams).tolist() if len(row_families[r]) else []:
                coef = row_coefficients[r]
                extra[b].append((n + r, 1.0 if coef is None else float(coef[at[b]])))
        starts, index, value = [], [], []
        for b, f in enumerate(fams):
            starts.append(len(index))
            index.append(int(child[b]))
            rows_b = (n + hit_r[edges[b]:edges[b + 1]]).tolist()
            index.extend(rows_b)
            value.extend([1.0] * (1 + len(rows_b)))
            index.extend(r for r, _ in extra[b])
            value.extend(c for _, c in extra[b])
        h.addCols(len(fams), -table.scores[fams], np.zeros(len(fams)), np.ones(len(fams)), len(index),
                  np.array(starts, dtype=np.int32), np.array(index, dtype=np.int32), np.array(value))
        in_lp[fams] = True
        columns.append(fams)

    def add_rows(new_rows: list[tuple[str, Row]]) -> None:
        """Rows (each with its family's name) into the LP and the bookkeeping: a cluster
        row's families come by its vertex set, any other's by its list."""
        nonlocal cmat, idle, flipped
        lp_cols = np.concatenate(columns)
        position = np.full(size, -1, dtype=np.int64)
        position[lp_cols] = np.arange(len(lp_cols))
        by_child = lp_cols[np.argsort(table.child[lp_cols], kind="stable")]  # the LP's families, by child
        child_at = np.searchsorted(table.child[by_child], np.arange(n + 1))
        idx, val, lower, upper, flips = [], [], [], [], []
        extra_rows: list[int] = []
        extra_cols: list[int] = []
        for r, (kind, row) in enumerate(new_rows):
            fams = np.asarray(row.families, dtype=np.int64)
            coef = None if row.coefficients is None else np.asarray(row.coefficients, dtype=float)
            order = np.argsort(fams, kind="stable")
            fams, coef = fams[order], None if coef is None else coef[order]
            if row.cluster is None:
                listed.append(len(row_families))
            else:
                members = sorted(set(int(u) for u in row.cluster))
                extra_rows += [r] * len(members)
                extra_cols += members
            kinds.append(kind)
            row_families.append(fams.astype(np.int32))
            row_coefficients.append(coef)
            rhs.append(float(row.rhs))
            mine = fams[in_lp[fams]]
            flip = False
            if row.cluster is not None and coef is None:
                # the LP's families of C's children, ``mine`` among them: counted per child,
                # listed only for a row that flips (25,000 pair rows at n = 10,000)
                flip = 2 * len(mine) > int((child_at[np.add(members, 1)] - child_at[members]).sum())
            if flip:
                of_c = np.concatenate([by_child[child_at[v]:child_at[v + 1]] for v in members])
                mine = np.setdiff1d(of_c, mine)
                lower.append(len(members) - float(row.rhs))
                upper.append(highspy.kHighsInf)
            else:
                lower.append(-highspy.kHighsInf)
                upper.append(float(row.rhs))
            flips.append(flip)
            idx.append(position[mine].astype(np.int32))
            val.append(np.ones(len(mine)) if coef is None else coef[in_lp[fams]])
        lens = np.array([len(i) for i in idx], dtype=np.int64)
        st = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int32)
        allidx = np.concatenate(idx).astype(np.int32) if idx else np.zeros(0, dtype=np.int32)
        allval = np.concatenate(val) if val else np.zeros(0)
        h.addRows(len(new_rows), np.array(lower), np.array(upper), len(allidx), st, allidx, allval)
        extra = csr_matrix((np.ones(len(extra_cols), dtype=np.float32), (extra_rows, extra_cols)),
                           shape=(len(new_rows), n))
        cmat = vstack([cmat, extra], format="csr")
        cmat.sort_indices()
        idle = np.concatenate([idle, np.zeros(len(new_rows), dtype=np.int64)])
        flipped = np.concatenate([flipped, np.array(flips, dtype=np.bool_)])

    def drop_rows(drop: np.ndarray) -> int:
        """Take the rows ``drop`` (a mask over the rows) out of the LP and the bookkeeping;
        returns how many."""
        nonlocal cmat, idle, flipped
        gone = np.flatnonzero(drop)
        if not len(gone):
            return 0
        h.deleteRows(len(gone), (n + gone).astype(np.int32))
        keep_r = np.flatnonzero(~drop)
        new_index = np.full(len(drop), -1, dtype=np.int64)
        new_index[keep_r] = np.arange(len(keep_r))
        kinds[:] = [kinds[r] for r in keep_r]
        rhs[:] = [rhs[r] for r in keep_r]
        row_families[:] = [row_families[r] for r in keep_r]
        row_coefficients[:] = [row_coefficients[r] for r in keep_r]
        listed[:] = [int(new_index[r]) for r in listed if not drop[r]]
        cmat = cmat[keep_r]
        cmat.sort_indices()
        idle = idle[keep_r]
        flipped = flipped[keep_r]
        return len(gone)

    # the best policy.lp_initial_columns families of each variable first (stored best first); the
    # rest enter when their reduced cost says so (column generation)
    # and every empty parent set, which keeps the restricted LP feasible (a variable
    # without one — a required parent — brings all its families)
    empty = table.n_parents == 0
    first = np.concatenate([np.arange(table.start[v], min(table.start[v + 1], table.start[v] + policy.lp_initial_columns))
                            if empty[table.start[v]:table.start[v + 1]].any() else
                            np.arange(table.start[v], table.start[v + 1]) for v in range(n)])
    first = np.union1d(first, np.flatnonzero(empty))
    add_columns(first)
    pairs = _pairs(table)
    if pairs:
        add_rows([("cluster", Row(table.cluster_families(c), None, len(c) - 1.0, list(c))) for c in pairs])
    best, lp_value, rounds, complete = trivial, None, 0, False
    # what reading a solve's bound took last round (L(λ) over every family: 0.2-0.3 s at
    # 2.7 M): kept back from the next solve's time, which else ended at the limit and the
    # bound after it (plants k = 5 at 250 s: 0.2 s past)
    reading = 0.0
    buffer, spare = np.empty(size), np.empty(size)  # the reduced scores, and pricing's copy
    while True:
        left = time_limit - (time.monotonic() - t0) - reading
        if left <= 0.05:
            break
        h.setOptionValue("time_limit", h.getRunTime() + float(left))  # HiGHS's clock runs across solves
        h.run()
        status = h.getModelStatus()
        if status not in (highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kTimeLimit):
            # a warm-started simplex can end "unknown" after rows and columns were added
            # (jester k = 5, round 29); from scratch it solves
            h.clearSolver()
            h.run()
            status = h.getModelStatus()
        if status != highspy.HighsModelStatus.kOptimal:
            break
        rounds += 1
        sol = h.getSolution()
        lp_value = -h.getInfo().objective_function_value
        # HiGHS's row duals of a minimisation: ≤ 0 on a binding ≤ row; λ = −dual
        # (a flipped row's dual is ≥ 0 where binding: it is the row as written times −1
        # plus convexity rows (2), whose duals absorb the rest)
        dual = np.asarray(sol.row_dual)[n:]
        began = time.monotonic()
        lam = np.maximum(np.where(flipped, dual, -dual), 0.0)
        reduced = _reduced(table, row_families, lam, row_coefficients, out=buffer)
        value = _value(table, np.array(rhs), lam, reduced)
        reading = time.monotonic() - began
        idle = np.where(lam > 0, 0, idle + 1)
        if value < best:
            best = value
            if on_bound is not None:
                on_bound(best)
        if time.monotonic() - t0 >= time_limit:
            break
        # pricing: families outside the LP that beat every LP family of their variable
        np.copyto(spare, reduced)
        spare[~in_lp] = -np.inf
        in_best = np.maximum.reduceat(spare, table.start[:-1])
        above = in_best + 1e-9 * np.maximum(1.0, np.abs(in_best))  # per variable, then by family
        better = ~in_lp & (reduced > above[table.child])
        priced = None
        if better.any():
            cand = np.flatnonzero(better)
            keep = []
            for v in np.unique(table.child[cand]):  # the few best of each variable
                of_v = cand[table.child[cand] == v]
                keep.append(of_v[np.argsort(-reduced[of_v])[:policy.lp_columns_per_round]])
            priced = np.concatenate(keep)
        order = np.concatenate(columns)
        x = np.zeros(size)  # its own each round: a row family may keep the point it was shown
        x[order] = np.clip(np.asarray(sol.col_value), 0.0, 1.0)
        # Rows are separated at every LP point, also one whose pricing is not done: a row
        # violated there is still a valid row, and the round saves an LP solve (before,
        # rounds that took columns took no rows: at plants k = 5 three solves in four were
        # pricing ones, and 26.5 of 30 s were HiGHS's). After 18-20 s the bound is 141-873
        # tighter at plants, baudio and munin5000, the same at jester.
        found: list[tuple[str, Row]] = []
        for family in rows:
            point = LpPoint(table, x, k, policy, t0 + time_limit, priced is not None, [r for _, r in found])
            found += [(family.name, r) for r in family.separate(point)]
        if time.monotonic() - t0 >= time_limit:
            # rows help only an LP solved after them, and building them took up to 1.8 s at
            # munin (60 s, k = 5: the call ended at 61.4 s); nor is a search the deadline
            # cut short a proof that no row is violated
            break
        if priced is None and not found:
            complete = True
            break
        if rounds % policy.lp_row_drop_every == 0:
            # L(λ) counts only rows with λ > 0, so a row left out costs no bound; the
            # separator finds it again if the point comes back to violate it
            dropped += drop_rows(idle >= policy.lp_row_idle_rounds)
        if priced is not None:
            add_columns(priced)
        if found:
            add_rows(found)
    stats = {"trivial": trivial, "lp_value": lp_value, "rows": len(kinds), "width_rows": kinds.count("width"),
             "minor_rows": kinds.count("minor"),
             "rounds": rounds, "seconds": round(time.monotonic() - t0, 3), "complete": complete,
             "columns": int(in_lp.sum()), "dropped": dropped, "entries": int(h.getNumNz()),
             "complement_rows": int(flipped.sum())}
    return best, stats
