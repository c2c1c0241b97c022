"""The cluster LP's row families: rows every network of the problem satisfies, separated
at each LP point by ``solvers/relaxation.py``'s ``cluster_lp_bound``.

Cluster rows (3) of the cluster ILP (formulations/cluster_ilp.py): Σ_{v ∈ C} Σ_{W ∩ C ≠ ∅}
x(W → v) ≤ |C| − 1 for every vertex set C: acyclicity.

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

from typing import NamedTuple, Protocol

import numpy as np

from twbn.formulations.cluster_ilp import FamilyTable
from twbn.solvers.policy import DEFAULT_POLICY, Policy  # noqa: F401  (DEFAULT_POLICY: the doctests)
from twbn.solvers.budget import deadline_in, passed

__all__ = ["Row", "LpPoint", "RowFamily", "ClusterRows", "WidthRows", "MinorRows", "DEFAULT_ROWS", "minor_regions",
           "width_rhs", "width_row", "rule_row", "separate_width_rows"]


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
        deadline = min(point.deadline, deadline_in(policy.lp_minor_s_per_round))
        t, rule = table.moral_rules(point.x)
        found = []
        for region in minor_regions(t, k, policy.lp_minor_max_n):
            if passed(deadline):
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
