"""The elimination-order MILP of Nie, de Campos & Ji (2014), as written in Fig. 6 of
Machado et al., "bounded-treewidth MILP performance" (constraints 8a–8l, with
the typos of that figure fixed: Pa_it ∈ {0,1}; v is a reverse topological order; z the
elimination order; y_ij = 1 iff {i,j} is an edge of the triangulated moral graph and i is
eliminated before j).

    max  Σ_it s_i(F_it)·Pa_it                                          (8a)
    s.t. Σ_j y_ij ≤ w                                  ∀ i              (8b)
         (n+1)·y_ij ≤ n + z_j − z_i                    ∀ i ≠ j          (8c)
         y_ij + y_ik − y_jk − y_kj ≤ 1                 ∀ i, j < k       (8d)
         Σ_t Pa_it = 1                                 ∀ i              (8e)
         (n+1)·Pa_it ≤ n + v_j − v_i                   ∀ i, t, j ∈ F_it (8f)
         Pa_it ≤ y_ij + y_ji                           ∀ i, t, j ∈ F_it (8g)
         Pa_it ≤ y_jk + y_kj                           ∀ i, t, j,k ∈ F_it (8h)
         z_i ∈ [0, n], v_i ∈ [0, n], y_ij ∈ {0,1}, Pa_it ∈ {0,1}      (8i–8l)

Without a treewidth bound only 8a, 8e, 8f and 8l remain (acyclicity by the order v).

Strengthening (``MilpOptions``; each can be switched off, and the benchmark measures them):
- ``tight_big_m``: z, v ∈ [0, n−1] and big-M n instead of n+1 (8c, 8f): the same integer
  points, a smaller LP polytope.
- ``aggregate``: 8f/8g/8h summed over the parent sets of i that contain j (or j and k):
  valid because at most one Pa_it is 1 (8e), far fewer rows, never a weaker LP.
- ``two_cycles``: Σ_{t∋j} Pa_it + Σ_{t∋i} Pa_jt ≤ 1, the cluster constraints of
  Jaakkola et al. (2010) / Cussens (2011) for clusters of size 2 (no 2-cycles).
- ``order_pairs``: y_ij + y_ji ≤ 1 (implied by 8c for integers, not for the LP).
Not done: symmetry breaking on z. Many elimination orders certify one network, but
fixing any part of the order (e.g. z of the lowest-index vertex) cuts off networks
whose every good order puts that vertex elsewhere, so no simple fixing is valid.
Variable fixing from the cache: pairs that never occur together in a family need no 8g
or 8h row (that happens by construction); their y may still be needed as fill-in edges,
so y is never fixed to 0 — that would cut off valid triangulations.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable

from twbn.formulations.cluster_ilp import MAX_ROWS_8D, BuildTimeout
from twbn.formulations.problem import Problem

__all__ = ["MilpOptions", "EliminationMilp", "build_elimination_milp", "start_values"]


@dataclass(frozen=True)
class MilpOptions:
    """The strengthenings of the model (all on by default; ``plain()`` is Fig. 6 as published)."""

    tight_big_m: bool = True  #: z, v in [0, n−1] and big-M n (8c, 8f)
    aggregate: bool = True  #: 8f/8g/8h summed over the parent sets that contain j (or j and k)
    two_cycles: bool = True  #: no 2-cycles: the cluster rows of size 2
    order_pairs: bool = True  #: y_ij + y_ji <= 1

    @classmethod
    def plain(cls) -> "MilpOptions":
        """Fig. 6 exactly as published (no strengthening)."""
        return cls(tight_big_m=False, aggregate=False, two_cycles=False, order_pairs=False)


@dataclass
class EliminationMilp:
    """The pyomo model and the maps from its variables back to the problem."""

    model: object
    problem: Problem
    options: MilpOptions
    pa_index: list[tuple[int, int]]  # (i, t) in the order of model.Pa's index set
    size: dict = field(default_factory=dict)




@contextlib.contextmanager
def _rules_checked(deadline: float | None, stopped: Callable[[], bool] | None = None):
    """A wrapper for constraint rules that raises BuildTimeout once ``deadline`` has passed
    (8d alone has n·(n−1)·(n−2)/2 rows: 485,100 at n = 100), with pyomo's "rule failed"
    log silenced while it is in force, since that failure is the expected way out."""
    if deadline is None and stopped is None:
        yield lambda rule: rule
        return
    log = logging.getLogger("pyomo.core")
    disabled, log.disabled = log.disabled, True

    def timed(rule):
        def checked(m, *index):
            if deadline is not None and time.monotonic() > deadline:
                raise BuildTimeout("the MILP was not built within the time limit")
            if stopped is not None and stopped():
                raise BuildTimeout("stopped while the MILP was being built")
            return rule(m, *index)

        return checked

    try:
        yield timed
    finally:
        log.disabled = disabled


def build_elimination_milp(problem: Problem, options: MilpOptions | None = None,
                           deadline: float | None = None,
                           stopped: Callable[[], bool] | None = None) -> EliminationMilp:
    """Build Fig. 6 over ``problem.candidates`` (already restricted to ≤ k parents and to
    the background knowledge). ``deadline`` (time.monotonic()): raise BuildTimeout once it
    has passed, checked per row; ``stopped``: likewise once it returns True (a stop
    request: the build of 8d alone takes seconds at n = 69)."""
    with _rules_checked(deadline, stopped) as timed:
        return _build(problem, options, timed)


def _build(problem: Problem, options: MilpOptions | None, timed) -> EliminationMilp:
    import pyomo.environ as pyo

    options = options or MilpOptions()
    cand = problem.candidates
    n = problem.n
    k = problem.treewidth
    bounded = k is not None
    big = n if options.tight_big_m else n + 1
    top = n - 1 if options.tight_big_m else n

    if bounded and n * (n - 1) * (n - 2) // 2 > MAX_ROWS_8D:
        raise BuildTimeout(f"the MILP would have {n * (n - 1) * (n - 2) // 2:,} rows 8d (n = {n}), more than the "
                           f"{MAX_ROWS_8D:,} that can be built in memory")
    m = pyo.ConcreteModel(name="nie_elimination_milp")
    pa_index = [(i, t) for i in range(n) for t in range(len(cand.parent_sets[i]))]
    m.PA = pyo.Set(initialize=pa_index, dimen=2, ordered=True)
    m.Pa = pyo.Var(m.PA, domain=pyo.Binary)  # 8l
    m.v = pyo.Var(range(n), bounds=(0, top))  # 8j
    score = {(i, t): float(cand.scores[i][t]) for i, t in pa_index}
    m.obj = pyo.Objective(expr=sum(score[it] * m.Pa[it] for it in pa_index), sense=pyo.maximize)  # 8a
    m.c8e = pyo.Constraint(range(n), rule=timed(lambda m, i: sum(m.Pa[i, t] for t in range(len(cand.parent_sets[i]))) == 1))

    # which parent sets of i contain j, and contain both j and k
    with_j: dict[tuple[int, int], list[int]] = defaultdict(list)
    with_jk: dict[tuple[int, int, int], list[int]] = defaultdict(list)
    for i, t in pa_index:
        ps = cand.parent_sets[i][t]
        for j in ps:
            with_j[i, j].append(t)
        for j, kk in itertools.combinations(ps, 2):
            with_jk[i, j, kk].append(t)

    if options.aggregate:
        keys8f = sorted(with_j)
        m.c8f = pyo.Constraint(keys8f, rule=timed(lambda m, i, j: big * sum(m.Pa[i, t] for t in with_j[i, j]) <= big - 1 + m.v[j] - m.v[i]))
    else:
        keys8f = [(i, t, j) for (i, j), ts in sorted(with_j.items()) for t in ts]
        m.c8f = pyo.Constraint(keys8f, rule=timed(lambda m, i, t, j: big * m.Pa[i, t] <= big - 1 + m.v[j] - m.v[i]))

    if options.two_cycles:
        pairs = sorted({(min(i, j), max(i, j)) for (i, j) in with_j if (j, i) in with_j})
        m.c2cycle = pyo.Constraint(
            pairs, rule=timed(lambda m, a, b: sum(m.Pa[a, t] for t in with_j[a, b]) + sum(m.Pa[b, t] for t in with_j[b, a]) <= 1)
        )

    if bounded:
        arcs = [(i, j) for i in range(n) for j in range(n) if i != j]
        m.y = pyo.Var(arcs, domain=pyo.Binary)  # 8k
        m.z = pyo.Var(range(n), bounds=(0, top))  # 8i
        m.c8b = pyo.Constraint(range(n), rule=timed(lambda m, i: sum(m.y[i, j] for j in range(n) if j != i) <= k))
        m.c8c = pyo.Constraint(arcs, rule=timed(lambda m, i, j: big * m.y[i, j] <= big - 1 + m.z[j] - m.z[i]))
        triples = [(i, j, kk) for i in range(n) for j, kk in itertools.combinations([x for x in range(n) if x != i], 2)]
        m.c8d = pyo.Constraint(triples, rule=timed(lambda m, i, j, kk: m.y[i, j] + m.y[i, kk] - m.y[j, kk] - m.y[kk, j] <= 1))
        if options.aggregate:
            m.c8g = pyo.Constraint(sorted(with_j), rule=timed(lambda m, i, j: sum(m.Pa[i, t] for t in with_j[i, j]) <= m.y[i, j] + m.y[j, i]))
            m.c8h = pyo.Constraint(sorted(with_jk), rule=timed(lambda m, i, j, kk: sum(m.Pa[i, t] for t in with_jk[i, j, kk]) <= m.y[j, kk] + m.y[kk, j]))
        else:
            m.c8g = pyo.Constraint(keys8f, rule=timed(lambda m, i, t, j: m.Pa[i, t] <= m.y[i, j] + m.y[j, i]))
            keys8h = [(i, t, j, kk) for (i, j, kk), ts in sorted(with_jk.items()) for t in ts]
            m.c8h = pyo.Constraint(keys8h, rule=timed(lambda m, i, t, j, kk: m.Pa[i, t] <= m.y[j, kk] + m.y[kk, j]))
        if options.order_pairs:
            m.cpairs = pyo.Constraint([(i, j) for i, j in arcs if i < j], rule=timed(lambda m, i, j: m.y[i, j] + m.y[j, i] <= 1))

    n_vars = sum(len(v) for v in m.component_objects(pyo.Var, active=True))
    n_cons = sum(len(c) for c in m.component_objects(pyo.Constraint, active=True))
    size = {"variables": n_vars, "binaries": len(pa_index) + (n * (n - 1) if bounded else 0), "constraints": n_cons}
    size["constraint_families"] = {c.name: len(c) for c in m.component_objects(pyo.Constraint, active=True)}
    return EliminationMilp(m, problem, options, pa_index, size)


def start_values(milp: EliminationMilp, parents, elimination_order) -> dict[str, float]:
    """Values of every model variable (by pyomo name) for a network and an elimination
    order of width ≤ k: Pa from the parents, v from a topological order (parents get the
    larger v, 8f), z = position in the order, y = the fill-in edges of that order
    directed from the earlier to the later vertex (so 8b–8d, 8g, 8h hold)."""
    import networkx as nx

    from twbn.formulations.graphs import fill_in, moral_graph

    problem = milp.problem
    cand = problem.candidates
    n = problem.n
    vals: dict[str, float] = {}
    index = {(i, ps): t for i in range(n) for t, ps in enumerate(cand.parent_sets[i])}
    for i, t in milp.pa_index:
        vals[f"Pa[{i},{t}]"] = 0.0
    for i, ps in enumerate(parents):
        vals[f"Pa[{i},{index[i, tuple(sorted(ps))]}]"] = 1.0
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from((p, i) for i, ps in enumerate(parents) for p in ps)
    for pos, i in enumerate(nx.lexicographical_topological_sort(g)):
        vals[f"v[{i}]"] = float(n - 1 - pos)
    if problem.treewidth is not None:
        pos = {v: p for p, v in enumerate(elimination_order)}
        tri = fill_in(moral_graph(parents), elimination_order)
        for i in range(n):
            vals[f"z[{i}]"] = float(pos[i])
            for j in range(n):
                if i != j:
                    vals[f"y[{i},{j}]"] = 1.0 if (j in tri[i] and pos[i] < pos[j]) else 0.0
    return vals
