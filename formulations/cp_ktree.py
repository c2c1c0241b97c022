"""A CP-SAT model of the DAGs (over cached parent sets) whose moral graph lies in some
k-tree, i.e. has treewidth ≤ k (OR-tools CP-SAT; ``--method cp``).

Encoding
--------
- parent choice: a Boolean x[i,t] per candidate parent set t of i, ``ExactlyOne`` per i;
  arc literals a[j,i] = Σ_{t: j∈F_it} x[i,t] (a sum of literals of which at most one is
  true, so a Boolean);
- acyclicity: an integer topological rank q_i ∈ [0, n−1]; a[j,i] ⇒ q_j < q_i (a DAG has
  a topological order; a ranked graph has no cycle); a[i,j] + a[j,i] ≤ 1 (redundant);
- treewidth ≤ k: an elimination order, integer positions p_i with ``AllDifferent``
  (a permutation); a Boolean e{i,j} per pair for the edges of a chordal supergraph H of
  the moral graph; b[i,j] ⇔ p_i < p_j (reified); l[i,j] ⇔ e{i,j} ∧ b[i,j] ("j is a later
  neighbour of i"); then
    moral edges   a[j,i] ⇒ e{i,j};  Σ_{t ⊇ {j,k}} x[i,t] ⇒ e{j,k}   (co-parents)
    fill-in       l[i,j] ∧ l[i,k] ⇒ e{j,k}   for all i and j < k
    width         Σ_j l[i,j] ≤ k   for all i.
Soundness: in any solution, eliminating in the order p never adds an edge to H (the
fill-in clauses), so p is a perfect elimination order of the chordal graph H whose
largest later-neighbourhood is ≤ k: H, hence the moral graph ⊆ H, has treewidth ≤ k.
Completeness: for a DAG of treewidth ≤ k take an order of width ≤ k, H its fill-in
graph and q a topological order; every constraint holds. This is Nie et al.'s MILP
logic in CP form: the implications propagate on literals instead of big-M rows.

Redundant constraints: a[i,j] + a[j,i] ≤ 1; Σ_j l[i,j] + Σ_j l[j,i] = degree in H.
Symmetry: p is a permutation (AllDifferent) rather than ties as in the MILP's z.

Objective: CP-SAT needs integers. With s_it the scores, best_i = max_t s_it and a scale
S, the coefficient is c_it = ⌈S·(s_it − best_i)⌉ ≥ S·(s_it − best_i). So
Σ_i best_i + B/S, with B CP-SAT's bound on Σ c·x, is a valid upper bound on the real
optimum; the reported score is always recomputed from the cache. Rounding can make the
integer optimum differ from the real one by at most n/S, which is why "optimal" is only
reported when the real gap is within 1e-6.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from dataclasses import dataclass

from twbn.formulations.problem import Problem

__all__ = ["KTreeCp", "build_ktree_cp", "add_hint"]

SCALE = 1e6


@dataclass
class KTreeCp:
    model: object
    problem: Problem
    x: dict  # (i, t) -> literal
    p: list | None  # elimination positions
    q: list  # topological ranks
    arc: dict  # (j, i) -> literal of the arc j -> i
    e: dict | None  # frozenset{i,j} -> literal
    l: dict | None  # (i, j) -> literal
    b: dict | None
    offset: float  # Σ best_i
    scale: float
    coef: dict  # (i, t) -> int

    def score_bound(self, int_bound: float) -> float:
        """A valid upper bound on the real score from a bound on the integer objective."""
        return self.offset + math.floor(int_bound) / self.scale


def build_ktree_cp(problem: Problem, scale: float = SCALE, *, redundant: bool = True, permutation: bool = True) -> KTreeCp:
    """Build the model. ``redundant``: the a[i,j] + a[j,i] ≤ 1 and degree rows;
    ``permutation``: positions p all different. Off, ties are allowed (as for the MILP's
    z) and ordered by index — (p, −index) lexicographically, still a total order, so the
    model stays sound and complete; on, the equivalent tied orders are gone."""
    from ortools.sat.python import cp_model

    cand = problem.candidates
    n, k = problem.n, problem.treewidth
    m = cp_model.CpModel()
    x, coef = {}, {}
    best = [float(cand.scores[i][0]) for i in range(n)]  # sorted best first
    for i in range(n):
        lits = []
        for t, s in enumerate(cand.scores[i].tolist()):
            lit = m.new_bool_var(f"x_{i}_{t}")
            x[i, t] = lit
            coef[i, t] = math.ceil(scale * (s - best[i]))
            lits.append(lit)
        m.add_exactly_one(lits)
    m.maximize(sum(c * x[it] for it, c in coef.items() if c != 0))

    with_j: dict[tuple[int, int], list[int]] = defaultdict(list)
    with_jk: dict[tuple[int, int, int], list[int]] = defaultdict(list)
    for i in range(n):
        for t, ps in enumerate(cand.parent_sets[i]):
            for j in ps:
                with_j[i, j].append(t)
            for j, kk in itertools.combinations(ps, 2):
                with_jk[i, j, kk].append(t)

    q = [m.new_int_var(0, n - 1, f"q_{i}") for i in range(n)]
    arc = {}
    for (i, j), ts in with_j.items():  # arc j -> i
        lit = m.new_bool_var(f"a_{j}_{i}")
        m.add(sum(x[i, t] for t in ts) == lit)
        m.add(q[j] < q[i]).only_enforce_if(lit)
        arc[j, i] = lit
    if redundant:
        for (j, i), lit in arc.items():
            if (i, j) in arc and j < i:
                m.add(lit + arc[i, j] <= 1)

    p = e = l = b = None
    if k is not None:
        p = [m.new_int_var(0, n - 1, f"p_{i}") for i in range(n)]
        if permutation:
            m.add_all_different(p)
        e = {frozenset((i, j)): m.new_bool_var(f"e_{i}_{j}") for i, j in itertools.combinations(range(n), 2)}
        b, l = {}, {}
        for i, j in itertools.permutations(range(n), 2):
            if i < j:
                b[i, j] = m.new_bool_var(f"b_{i}_{j}")
                m.add(p[i] < p[j]).only_enforce_if(b[i, j])
                m.add(p[i] >= p[j]).only_enforce_if(~b[i, j])
            else:
                b[i, j] = ~b[j, i]
        for i, j in itertools.permutations(range(n), 2):
            lit = m.new_bool_var(f"l_{i}_{j}")
            eij = e[frozenset((i, j))]
            m.add_implication(lit, eij)
            m.add_implication(lit, b[i, j])
            m.add_bool_or([~eij, ~b[i, j], lit])
            l[i, j] = lit
        for (j, i), lit in arc.items():
            m.add_implication(lit, e[frozenset((i, j))])
        for (i, j, kk), ts in with_jk.items():
            for t in ts:
                m.add_implication(x[i, t], e[frozenset((j, kk))])
        for i in range(n):
            others = [j for j in range(n) if j != i]
            for j, kk in itertools.combinations(others, 2):
                m.add_bool_or([~l[i, j], ~l[i, kk], e[frozenset((j, kk))]])
            m.add(sum(l[i, j] for j in others) <= k)
            if redundant:  # every edge of H at i is a later or an earlier neighbour
                m.add(sum(l[i, j] + l[j, i] for j in others) == sum(e[frozenset((i, j))] for j in others))
    return KTreeCp(m, problem, x, p, q, arc, e, l, b, math.fsum(best), scale, coef)


def add_hint(cp: KTreeCp, parents, elimination_order) -> None:
    """Hint every variable from a network and an elimination order of width ≤ k."""
    import networkx as nx

    from twbn.formulations.graphs import fill_in, moral_graph

    problem = cp.problem
    cand = problem.candidates
    n = problem.n
    m = cp.model
    m.clear_hints()
    index = {(i, ps): t for i in range(n) for t, ps in enumerate(cand.parent_sets[i])}
    chosen = {(i, index[i, tuple(sorted(ps))]) for i, ps in enumerate(parents)}
    for it, lit in cp.x.items():
        m.add_hint(lit, it in chosen)
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from((pp, i) for i, ps in enumerate(parents) for pp in ps)
    for rank, i in enumerate(nx.lexicographical_topological_sort(g)):
        m.add_hint(cp.q[i], rank)
    arcs = {(pp, i) for i, ps in enumerate(parents) for pp in ps}
    for ji, lit in cp.arc.items():
        m.add_hint(lit, ji in arcs)
    if problem.treewidth is not None:
        pos = {v: r for r, v in enumerate(elimination_order)}
        tri = fill_in(moral_graph(parents), elimination_order)
        for i in range(n):
            m.add_hint(cp.p[i], pos[i])
        for pair, lit in cp.e.items():
            i, j = tuple(pair)
            m.add_hint(lit, j in tri[i])
        for (i, j), lit in cp.b.items():
            if i < j:
                m.add_hint(lit, pos[i] < pos[j])
        for (i, j), lit in cp.l.items():
            m.add_hint(lit, j in tri[i] and pos[i] < pos[j])
