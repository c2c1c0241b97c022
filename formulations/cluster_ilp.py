"""The family-variable ILP with cluster constraints: GOBNILP's formulation (Jaakkola,
Sontag, Globerson & Meila 2010; Cussens 2011; Bartlett & Cussens 2017), in three modes.

One binary I(W→v) per variable v and cached parent set W ("family variable"):

    max  Σ_{v,W} f_v(W)·I(W→v)                                            (1)
    s.t. Σ_W I(W→v) = 1                          ∀ v                      (2) convexity
         Σ_{v∈C} Σ_{W: W∩C≠∅} I(W→v) ≤ |C| − 1   ∀ C ⊆ V, |C| ≥ 2         (3) cluster
         I ∈ {0, 1}

Given (2), constraint (3) says that some member of C takes a parent set disjoint from C.
Its generalisation, the k-cluster inequalities of Cussens, Järvisalo, Korhonen & Bartlett
(2017, JAIR 58, Sec. 5), are valid for every 1 ≤ k < |C|:

         Σ_{v∈C} Σ_{W: |W∩C| ≥ k} I(W→v) ≤ |C| − k                            (4)

(the first k members of C in a topological order have fewer than k parents in C); (3) is
(4) at k = 1. Both are cases of the matroid rows of Studený (2015, "How matroids occur in
the context of learning Bayesian network structure", UAI): for a matroid M on C with rank
r_M and closure cl_M,

         Σ_{v∈C} Σ_{W: v ∈ cl_M(W∩C)} I(W→v) ≤ |C| − r_M(C)                   (5)

valid because g(S) = |S| − r_M(S) is supermodular: along a topological order of C with
predecessors P_v ⊇ W∩C, [v ∈ cl_M(W∩C)] = g(W∩C+v) − g(W∩C) ≤ g(P_v+v) − g(P_v), and the
right-hand terms sum to g(C) − g(∅). (4) is M = U_{k,|C|}. twbn uses the matroids made
from U_{r,m} by replacing its elements with parallel classes: C split into m ≥ r + 1
classes, v ∈ cl(P) iff P meets v's class or meets ≥ r classes, r_M(C) = r. On mushroom's
converged root LP (no violated (3) or (4) left) such rows are violated by up to 0.82.
All enter as cuts only (solvers/cuts/cluster_separation.py).
The integer points of (2)–(3) are exactly the DAGs with cached parent sets: the vertex set
of a directed cycle violates (3) (each member has a parent in the cycle), and if the graph
is acyclic every C has a member that is a source of the induced subgraph. There are
2^n − n − 1 cluster rows, so they enter as cutting planes (solvers/cuts/branch_and_cut.py); the rows for
|C| = 2 (no 2-cycles) are added up front, one per pair that can form a 2-cycle.

Modes:
- unbounded: (1)–(3); the W-score reference of the literature.
- bounded by k: (1)–(3) plus the elimination-order rows of Nie et al. (2014; as written in Fig. 6
  of Machado et al., "bounded-treewidth MILP performance"), linked to the family
  variables as in formulations/elimination_milp.py with its strengthening: 8b, 8c (big-M n,
  z ∈ [0, n−1]), 8d, 8g summed over the parent sets that contain j and over both
  directions (j → i and i → j), 8h summed over the parent sets that contain j and k, and
  y_ij + y_ji ≤ 1. Acyclicity comes from (3), so 8f and the order v are not needed. The
  minor density rows (6) of solvers/cuts/minor_separation.py bound the triangulation y + yᵀ
  further, as cuts.
  The n·C(n−1, 2) rows 8d are held out of the LP and added by SCIP where violated.
  Sound and complete because every network of treewidth ≤ k has an elimination order of
  width ≤ k whose fill-in y satisfies 8b–8d (the argument of Nie et al.), and 8g/8h put
  every moral edge of the chosen families into that triangulation.
- within a chordal graph H (e.g. a k-tree): only the families whose {v} ∪ W is a clique of
  H are kept, so every DAG of the model has its moral graph inside H and treewidth
  ≤ ω(H) − 1; a perfect elimination order of H is the certificate. This is the exact
  second phase of S2 / S2+ and a cross-check of the super-structure DP.
"""

from __future__ import annotations

import functools
import itertools
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Sequence

import networkx as nx
import numpy as np
from numba import njit

from twbn.formulations.graphs import Adjacency, fill_in, fits_in_graph, moral_graph, perfect_elimination_order
from twbn.formulations.problem import InfeasibleError, Problem
from twbn.scoring.cache import ParentSet, ScoreCache
from twbn.scoring.errors import ParameterError, TwbnError

__all__ = ["FamilyTable", "cycle_clusters", "restrict_to_graph", "ClusterIlp", "BuildTimeout",
           "build_cluster_ilp", "start_values", "triangulation_arcs"]


@dataclass
class FamilyTable:
    """The family variables as flat arrays: family f is I(parents[f] → child[f])."""

    n: int
    child: np.ndarray  # (F,) int
    parents: list[ParentSet]
    scores: np.ndarray  # (F,) float
    start: np.ndarray  # (n+1,) families of v are start[v]:start[v+1]

    @classmethod
    def from_cache(cls, cache: ScoreCache) -> "FamilyTable":
        n = cache.n_variables
        child, parents, scores = [], [], []
        start = [0]
        for v in range(n):
            for ps, s in zip(cache.parent_sets[v], cache.scores[v].tolist()):
                child.append(v)
                parents.append(ps)
                scores.append(s)
            start.append(len(child))
        return cls(n, np.asarray(child, dtype=np.int64), parents, np.asarray(scores, dtype=float),
                   np.asarray(start, dtype=np.int64))

    @property
    def size(self) -> int:
        return len(self.parents)

    def family(self, child: int, parents: Sequence[int]) -> int:
        """The index of family ``parents → child`` (its variable is ``fam_vars[index]``
        of the ILP); KeyError if it is not a candidate."""
        want = tuple(sorted(parents))
        for f in range(int(self.start[child]), int(self.start[child + 1])):
            if self.parents[f] == want:
                return f
        raise KeyError(f"no candidate family {want} -> {child}")

    @functools.cached_property
    def parent_index(self) -> tuple[np.ndarray, np.ndarray]:
        """Each family's parents as (ptr, idx): family f's are ``idx[ptr[f]:ptr[f + 1]]``,
        ascending. The table's one representation of who is a parent: it grows with the
        cache, where the dense ``member`` matrix grows with the cache times n (at n =
        10,000 with 138,000 families, 1.4 GB)."""
        ptr = np.zeros(self.size + 1, dtype=np.int64)
        np.cumsum([len(ps) for ps in self.parents], out=ptr[1:])
        idx = np.fromiter(itertools.chain.from_iterable(self.parents), dtype=np.int64, count=int(ptr[-1]))
        return ptr, idx

    @functools.cached_property
    def n_parents(self) -> np.ndarray:
        """(F,) |W| per family; read by separation and rounding at every node."""
        return np.diff(self.parent_index[0])

    @functools.cached_property
    def member(self) -> np.ndarray:
        """(F, n) bool, member[f, u] iff u ∈ parents[f]: for the models of small
        problems (the ILP, its separation and rounding), whose products it serves; the LP
        bound, which runs at any n, reads ``parent_index`` and ``member_sparse``."""
        return self.member_rows(np.arange(self.size))

    def _rows(self, families: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rows ``families`` of ``member`` in CSR form: (row pointers, columns)."""
        families = np.asarray(families, dtype=np.int64)
        ptr, idx = self.parent_index
        lens = ptr[families + 1] - ptr[families]
        rptr = np.zeros(len(families) + 1, dtype=np.int64)
        np.cumsum(lens, out=rptr[1:])
        take = np.repeat(ptr[families] - rptr[:-1], lens) + np.arange(int(rptr[-1]))
        return rptr, idx[take]

    def member_rows(self, families: np.ndarray) -> np.ndarray:
        """The rows ``families`` of ``member``, built from ``parent_index`` (the whole
        matrix is never made for it)."""
        rptr, cols = self._rows(families)
        out = np.zeros((len(rptr) - 1, self.n), dtype=bool)
        out[np.repeat(np.arange(len(rptr) - 1), np.diff(rptr)), cols] = True
        return out

    def member_sparse(self, families: np.ndarray):
        """The rows ``families`` of ``member`` as a float32 scipy CSR matrix (len(families), n)."""
        from scipy.sparse import csr_matrix

        rptr, cols = self._rows(families)
        return csr_matrix((np.ones(len(cols), dtype=np.float32), cols, rptr), shape=(len(rptr) - 1, self.n))

    def cluster_families(self, cluster: Sequence[int], k: int = 1) -> np.ndarray:
        """Indices of the families on the left of (3) for C — child in C, a parent in C —
        or of (4) for k > 1: child in C, at least k parents in C; by child, then family."""
        members = np.asarray(sorted(cluster), dtype=np.int64)
        in_c = np.zeros(self.n, dtype=np.bool_)
        in_c[members] = True
        # compiled, over C's children's families and their few parents: by numpy slices of
        # the member matrix it took 1.8 ms a row, half of the LP's 30 s at munin (n = 1,041)
        ptr, idx = self.parent_index
        return _cluster_families(self.start, ptr, idx, members, in_c, k)

    def cluster_violation(self, x: np.ndarray, cluster: Sequence[int], k: int = 1) -> float:
        """LHS − RHS of (3) (k = 1) or of the k-cluster row (4) at the point x (positive:
        violated)."""
        return float(x[self.cluster_families(cluster, k)].sum()) - (len(cluster) - k)

    def matroid_families(self, classes: np.ndarray, r: int) -> tuple[np.ndarray, int]:
        """The families on the left of the matroid row (5) for C = {u : classes[u] ≥ 0}
        split into parallel classes, and its right-hand side: family W → v (v ∈ C) counts
        iff W meets v's class or meets at least r classes; rhs |C| − min(m, r) for m classes."""
        inc = classes >= 0
        m = int(classes.max()) + 1
        onehot = np.zeros((self.n, m), dtype=np.float32)  # float: a BLAS product, exact for counts ≤ n
        onehot[np.flatnonzero(inc), classes[inc]] = 1
        hits = (self.member.astype(np.float32) @ onehot) > 0.5  # (F, m): classes W meets
        of_c = np.flatnonzero(inc[self.child])
        own = np.zeros(self.size, dtype=bool)
        own[of_c] = hits[of_c, classes[self.child[of_c]]]
        counted = inc[self.child] & (own | (hits.sum(axis=1) >= r))
        return np.flatnonzero(counted), int(inc.sum()) - min(m, r)

    def sparse_form(self, families: np.ndarray, rhs: float, cluster: Sequence[int]) -> tuple[np.ndarray, float | None, float | None]:
        """The row Σ_{f ∈ families} I_f ≤ rhs over families of the children of C =
        ``cluster`` — (3), (4) or (5) — as (families, lhs, rhs) in whichever of two forms has
        fewer entries: as given, or, since C's children take one family each (2), as
        Σ_{f ∉ families, child in C} I_f ≥ |C| − rhs. For a large C nearly every family
        of its children has a parent in C, and the first form fills the LP: on mushroom
        (n = 22, 10,245 families) 600 s of cuts made 25.5 M entries as given and 15.2 M
        in the sparser form."""
        c = np.asarray(cluster)
        if 2 * len(families) <= int((self.start[c + 1] - self.start[c]).sum()):
            return families, None, rhs  # counted from ``start``: no pass over all families
        of_c = np.flatnonzero(np.isin(self.child, c))
        return np.setdiff1d(of_c, families, assume_unique=True), len(cluster) - rhs, None

    @functools.cached_property
    def _moral_index(self) -> tuple[np.ndarray, ...]:
        """The arcs (family, parent, child), and the co-parent pairs {a, b} of every family
        grouped by (child, a, b): their families, group ids, and each group's a, b and child."""
        ptr, par = self.parent_index
        sizes = np.diff(ptr)
        fam = np.repeat(np.arange(self.size), sizes)
        # by family size, the pairs of each family's (ascending) parents as whole columns: a
        # Python loop over every family took about 1 s at 10^6 families
        co = [np.zeros((0, 3), dtype=np.int64)]
        for m in np.unique(sizes[sizes >= 2]).tolist():
            fs = np.flatnonzero(sizes == m)
            block = par[ptr[fs][:, None] + np.arange(m)]
            co += [np.stack([fs, block[:, i], block[:, j]], axis=1) for i, j in itertools.combinations(range(m), 2)]
        co = np.concatenate(co)
        n = self.n
        groups, group_of = np.unique((self.child[co[:, 0]] * n + co[:, 1]) * n + co[:, 2], return_inverse=True)
        return fam, par, self.child[fam], co[:, 0], group_of, groups // n % n, groups % n, groups // (n * n)

    def moral_rules(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each pair {u, v}, the rule that reads a network's moral edge between them
        from its families for certain, and the weight the point ``x`` puts on it: the arcs
        between them in both directions (at most one is chosen, by (3) for pairs), or the
        families of one child that hold both, whichever weighs more (the arcs on a tie).

        Parameters
        ----------
        x : array of the table's size
            A point over the families.

        Returns
        -------
        t : (n, n) array
            Symmetric, in [0, 1]: the weight of each pair's rule. At an integral point, the
            moral graph's adjacency matrix.
        rule : (n, n) int array
            Symmetric: −1 for the arcs between u and v, w ≥ 0 for the families of child w.

        Examples
        --------
        >>> from twbn.scoring.cache import ScoreCache
        >>> # C's parents {A, B}: the arcs A-C, B-C, and A, B married in child C
        >>> table = FamilyTable.from_cache(ScoreCache.from_mapping("ABC", [{(): -1.0}, {(): -1.0},
        ...                                                                 {(): -5.0, (0, 1): -1.0}]))
        >>> x = np.zeros(table.size); x[[0, 1, table.family(2, (0, 1))]] = 1.0
        >>> t, rule = table.moral_rules(x)
        >>> t.tolist(), rule[0].tolist()
        ([[0.0, 1.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 0.0]], [-1, 2, -1])
        """
        fam, par, child, co_f, group_of, co_a, co_b, co_child = self._moral_index
        n = self.n
        arcs = np.zeros((n, n))
        np.add.at(arcs, (par, child), x[fam])
        arcs = arcs + arcs.T
        t, rule = arcs.copy(), np.full((n, n), -1, dtype=np.int64)
        if len(co_a):
            weight = np.bincount(group_of, weights=x[co_f], minlength=len(co_a))  # per (child, a, b)
            key = co_a * n + co_b
            order = np.lexsort((weight, key))  # by pair, the heaviest child last
            last = order[np.r_[key[order][1:] != key[order][:-1], True]]
            last = last[weight[last] > arcs[co_a[last], co_b[last]]]
            a, b = co_a[last], co_b[last]
            t[a, b] = t[b, a] = weight[last]
            rule[a, b] = rule[b, a] = co_child[last]
        return np.clip(t, 0.0, 1.0), rule

    def moral_weights(self, x: np.ndarray) -> np.ndarray:
        """(n, n) symmetric: the weight the point x puts on each pair's moral edge for
        certain (``moral_rules``' t). O(n² + entries), no (n, n, n) array: this runs in
        every separation round of the bounded mode."""
        return self.moral_rules(x)[0]

    def network(self, x: np.ndarray) -> list[ParentSet]:
        """The parent sets chosen by an integral point (the largest value per variable)."""
        return [self.parents[self.start[v] + int(np.argmax(x[self.start[v]:self.start[v + 1]]))] for v in range(self.n)]


def cycle_clusters(parents: Sequence[ParentSet]) -> list[list[int]]:
    """The strongly connected components with ≥ 2 vertices of a network: each one is a
    cluster that violates (3) (every member has a parent inside it). Empty iff acyclic."""
    g = nx.DiGraph()
    g.add_nodes_from(range(len(parents)))
    g.add_edges_from((p, v) for v, ps in enumerate(parents) for p in ps)
    return [sorted(c) for c in nx.strongly_connected_components(g) if len(c) >= 2]


def restrict_to_graph(problem: Problem, adj: Adjacency) -> tuple[Problem, list[int]]:
    """The unbounded problem over the families that fit in the chordal graph ``adj``, and
    a perfect elimination order of ``adj`` (the certificate). Raises ValueError if ``adj``
    is not chordal or is wider than the problem's bound, InfeasibleError if a variable
    keeps no family."""
    n = problem.n
    if sorted(adj) != list(range(n)):
        raise ParameterError("the graph must have the problem's variables 0..n-1 as vertices")
    peo = perfect_elimination_order(adj)
    if peo is None:
        raise ParameterError("the graph to learn within is not chordal")
    pos = {v: i for i, v in enumerate(peo)}
    width = max((sum(1 for u in adj[v] if pos[u] > pos[v]) for v in range(n)), default=0)
    if problem.treewidth is not None and width > problem.treewidth:
        raise ParameterError(f"the graph has treewidth {width} > {problem.treewidth}")
    cand = problem.candidates
    families = []
    for v in range(n):
        fam = {}
        for ps, s in zip(cand.parent_sets[v], cand.scores[v].tolist()):
            if fits_in_graph(adj, v, ps):
                fam[ps] = s
        if not fam:
            raise InfeasibleError(f"no cached parent set of {problem.names[v]!r} fits in the given graph")
        families.append(fam)
    cache = ScoreCache.from_mapping(problem.names, families, cand.arities, dict(cand.meta))
    return Problem(cache, None, problem.forbidden, problem.required), peo


@dataclass
class ClusterIlp:
    """The SCIP model of (1), (2), the pair rows of (3) and, when bounded, 8b–8h; the
    cluster rows for |C| ≥ 3 are the constraint handler's job."""

    model: object
    table: FamilyTable
    fam_vars: list
    treewidth: int | None
    y: dict = field(default_factory=dict)
    z: dict = field(default_factory=dict)
    edges: dict = field(default_factory=dict)
    size: dict = field(default_factory=dict)
    ancestry: tuple = ()
    position: dict = field(default_factory=dict)
    fixed_y: dict = field(default_factory=dict)  #: y values the caller fixed (start values keep them)

    def variables(self) -> list:
        return [*self.fam_vars, *self.edges.values(), *self.y.values(), *self.z.values(), *self.position.values()]


class BuildTimeout(TwbnError, RuntimeError):
    """The model was not built by the deadline given to ``build_cluster_ilp``."""


#: The most rows 8d (n·(n−1)·(n−2)/2) a bounded model is built with, in either library:
#: 5.5 million at n = 223; at n = 1,041 there would be 562 million, tens of GB as pyomo
#: objects, and at n = 1,000 SCIP took 9.4 s of a 5 s budget creating its y variables.
MAX_ROWS_8D = 6_000_000


def _family_pairs(table: FamilyTable) -> tuple[dict, dict, list]:
    """The families by (child i, parent j) and by (child i, parents j < k), and the pairs
    some family joins."""
    with_j: dict[tuple[int, int], list[int]] = defaultdict(list)
    with_jk: dict[tuple[int, int, int], list[int]] = defaultdict(list)
    for f, ps in enumerate(table.parents):
        i = int(table.child[f])
        for j in ps:
            with_j[i, j].append(f)
        for j, kk in itertools.combinations(ps, 2):
            with_jk[i, j, kk].append(f)
    return with_j, with_jk, sorted({(min(i, j), max(i, j)) for (i, j) in with_j})


def _between(with_j: dict, a: int, b: int) -> list[int]:
    """The families with an arc between a and b."""
    return with_j.get((a, b), []) + with_j.get((b, a), [])


def _add_ancestry(ilp: ClusterIlp, with_j: dict, ancestry, counts: dict) -> None:
    """Positions p, Nie et al.'s 8f summed over the sets holding j, and p_a + 1 <= p_b per
    ancestry pair (build_cluster_ilp says why)."""
    from pyscipopt import quicksum

    model, fam_vars, n = ilp.model, ilp.fam_vars, ilp.table.n
    p = ilp.position = {i: model.addVar(name=f"p[{i}]", vtype="C", lb=0, ub=n - 1) for i in range(n)}
    for (i, j), fs in sorted(with_j.items()):  # 8f: j is a parent of i
        model.addCons(n * quicksum(fam_vars[f] for f in fs) <= n - 1 + p[i] - p[j], name=f"c8f[{i},{j}]")
    for a, b in ancestry:
        model.addCons(p[a] + 1 <= p[b], name=f"anc[{a},{b}]")
    counts.update({"c8f": len(with_j), "ancestry": len(ancestry)})


def _add_width_rows(ilp: ClusterIlp, with_j: dict, with_jk: dict, joined: list, check, counts: dict) -> None:
    """The treewidth's variables and rows, as in Nie et al.'s MILP: y (the triangulation's
    arcs), z (the elimination order), rows 8b-8d, 8g, 8h and the y pairs."""
    from pyscipopt import quicksum

    model, fam_vars, n, k = ilp.model, ilp.fam_vars, ilp.table.n, ilp.treewidth
    arcs = [(i, j) for i in range(n) for j in range(n) if i != j]
    ilp.y = {a: model.addVar(name=f"y[{a[0]},{a[1]}]", vtype="B") for a in arcs}
    ilp.z = {i: model.addVar(name=f"z[{i}]", vtype="C", lb=0, ub=n - 1) for i in range(n)}
    y, z = ilp.y, ilp.z
    for i in range(n):  # 8b
        model.addCons(quicksum(y[i, j] for j in range(n) if j != i) <= k, name=f"c8b[{i}]")
    check()
    for a, (i, j) in enumerate(arcs):  # 8c
        if a % 4096 == 0:
            check()
        model.addCons(n * y[i, j] <= n - 1 + z[j] - z[i], name=f"c8c[{i},{j}]")
    n8d = 0
    # 8d enters the LP only where violated (SCIP separates the linear rows it holds
    # back): its n·C(n−1, 2) rows made 13,485 of wdbc's 18,593 and slowed each LP
    # 4-fold; at k = 6 the root bound after 96 s went from −11,446 to −11,600
    # (optimum −11,605.89)
    for i in range(n):  # 8d
        check()
        for j, kk in itertools.combinations([x for x in range(n) if x != i], 2):
            if n8d % 4096 == 0:
                check()
            model.addCons(y[i, j] + y[i, kk] - y[j, kk] - y[kk, j] <= 1, name=f"c8d[{i},{j},{kk}]",
                           initial=False, separate=True, dynamic=True, removable=True)
            n8d += 1
    # 8g, summed over the sets holding j and over both directions: at most one of
    # j → i and i → j is chosen (the pair rows), and either puts the edge in the
    # triangulation. Per direction, as in the MILP, the root LP of wdbc k = 2 kept
    # 4.4 units of arc weight above y_ij + y_ji summed over 24 pairs
    for a, b in joined:
        model.addCons(quicksum(fam_vars[f] for f in _between(with_j, a, b)) <= y[a, b] + y[b, a], name=f"c8g[{a},{b}]")
    for (i, j, kk), fs in sorted(with_jk.items()):  # 8h
        model.addCons(quicksum(fam_vars[f] for f in fs) <= y[j, kk] + y[kk, j], name=f"c8h[{i},{j},{kk}]")
    for i, j in arcs:
        if i < j:
            model.addCons(y[i, j] + y[j, i] <= 1, name=f"ypair[{i},{j}]")
    counts.update({"c8b": n, "c8c": len(arcs), "c8d": n8d, "c8g": len(joined), "c8h": len(with_jk),
                   "ypair": len(arcs) // 2})


def build_cluster_ilp(problem: Problem, model, *, edges: bool = False,
                      ancestry: Sequence[tuple[int, int]] = (), deadline: float | None = None) -> ClusterIlp:
    """Add the variables and the static rows to an empty ``pyscipopt.Model``. With
    ``edges``, one binary e_{uv} per pair that some family joins, defined by
    e_{uv} = Σ_{W∋u} I(W→v) + Σ_{W∋v} I(W→u) (the pair row of (3) makes it ≤ 1): the
    skeleton's edges, for branching (solvers/cuts/branch_and_cut.py says why).

    ``ancestry``: pairs (a, b) such that a is an ancestor of b through variables the
    model does not hold (the rest of a network around a piece, solvers/improve/).
    Such a path is not an arc: it joins no moral edge, so it cannot be a family. It enters
    as a topological position p per variable, Nie et al.'s row 8f summed over the sets
    holding j (n·Σ_{W∋j} I(W→i) ≤ n − 1 + p_i − p_j) and p_a + 1 ≤ p_b per pair: a
    network satisfies them iff its arcs and the pairs together are acyclic.

    ``deadline`` (time.monotonic()): raise BuildTimeout once it has passed, checked per
    variable in the loops over rows; at n = 100 the n·C(n−1, 2) rows 8d alone take
    SCIP tens of seconds to add."""

    def check() -> None:
        if deadline is not None and time.monotonic() > deadline:
            raise BuildTimeout("the model was not built within the time limit")

    from pyscipopt import quicksum

    cand = problem.candidates
    table = FamilyTable.from_cache(cand)
    n = table.n
    k = problem.treewidth
    if k is not None and n * (n - 1) * (n - 2) // 2 > MAX_ROWS_8D:
        raise BuildTimeout(f"the cluster ILP would have {n * (n - 1) * (n - 2) // 2:,} rows 8d (n = {n}), more than "
                           f"the {MAX_ROWS_8D:,} that can be built in time and memory")
    check()
    fam_vars = [model.addVar(name=f"I[{table.child[f]},{f - table.start[table.child[f]]}]", vtype="B",
                             obj=float(table.scores[f])) for f in range(table.size)]
    model.setMaximize()
    for v in range(n):  # (2)
        model.addCons(quicksum(fam_vars[f] for f in range(table.start[v], table.start[v + 1])) == 1, name=f"conv[{v}]")
    with_j, with_jk, joined = _family_pairs(table)
    pairs = [(a, b) for a, b in joined if (a, b) in with_j and (b, a) in with_j]
    for a, b in pairs:  # (3) for |C| = 2
        model.addCons(quicksum(fam_vars[f] for f in _between(with_j, a, b)) <= 1, name=f"pair[{a},{b}]")
    counts = {"conv": n, "pair": len(pairs)}
    ilp = ClusterIlp(model, table, fam_vars, k, ancestry=tuple(ancestry))
    if ancestry:
        _add_ancestry(ilp, with_j, ancestry, counts)
    if edges:
        for a, b in joined:
            e = model.addVar(name=f"e[{a},{b}]", vtype="B")
            model.addCons(e == quicksum(fam_vars[f] for f in _between(with_j, a, b)), name=f"edge[{a},{b}]")
            ilp.edges[a, b] = e
        counts["edge"] = len(joined)
    if k is not None:
        _add_width_rows(ilp, with_j, with_jk, joined, check, counts)
    ilp.size = {"family_variables": table.size, "variables": len(ilp.variables()),
                "constraint_families": counts, "constraints": sum(counts.values())}
    return ilp


def start_values(ilp: ClusterIlp, parents: Sequence[ParentSet], elimination_order: Sequence[int] | None) -> dict:
    """A value for every model variable (keyed by the variable object's name) for a
    network in the model and, when bounded, an elimination order of width ≤ k: y is the
    fill-in of that order directed from earlier to later vertex, z the position."""
    table = ilp.table
    vals = {}
    chosen = {(v, tuple(sorted(ps))) for v, ps in enumerate(parents)}
    for f, var in enumerate(ilp.fam_vars):
        vals[var.name] = 1.0 if (int(table.child[f]), table.parents[f]) in chosen else 0.0
    for (a, b), var in ilp.edges.items():
        vals[var.name] = 1.0 if (a in parents[b] or b in parents[a]) else 0.0
    if ilp.position:
        g = nx.DiGraph()
        g.add_nodes_from(range(table.n))
        g.add_edges_from([(p, v) for v, ps in enumerate(parents) for p in ps] + list(ilp.ancestry))
        for p, i in enumerate(nx.lexicographical_topological_sort(g)):  # raises if the pairs close a cycle
            vals[ilp.position[i].name] = float(p)
    if ilp.treewidth is not None:
        arcs = triangulation_arcs(parents, elimination_order)
        for p, i in enumerate(elimination_order):
            vals[ilp.z[i].name] = float(p)
        for arc, var in ilp.y.items():
            vals[var.name] = float(ilp.fixed_y.get(arc, arc in arcs))
    return vals


def triangulation_arcs(parents: Sequence[ParentSet], elimination_order: Sequence[int]) -> set[tuple[int, int]]:
    """The arcs (i, j) with y_ij = 1 for a network eliminated in ``elimination_order``: the
    edges of the fill-in of its moral graph, directed from the earlier vertex."""
    pos = {v: p for p, v in enumerate(elimination_order)}
    tri = fill_in(moral_graph(parents), elimination_order)
    return {(i, j) for i in tri for j in tri[i] if pos[i] < pos[j]}


@njit(cache=True, nogil=True)
def _cluster_families(start, ptr, idx, members, in_c, k):
    """FamilyTable.cluster_families: the families of C's members with at least k parents in C."""
    out = np.empty(start[members[-1] + 1] - start[members[0]] if len(members) else 0, dtype=np.int64)
    m = 0
    for v in members:
        for f in range(start[v], start[v + 1]):
            inside = 0
            for q in range(ptr[f], ptr[f + 1]):
                if in_c[idx[q]]:
                    inside += 1
            if inside >= k:
                out[m] = f
                m += 1
    return out[:m]
