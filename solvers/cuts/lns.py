"""Large-neighbourhood search for ``cuts``: re-solve a piece of the incumbent network
exactly, the rest held fixed.

SCIP's own neighbourhood heuristics (RINS, crossover, local branching, …) solve sub-MIPs
that copy every constraint handler; a Python handler such as the cluster constraints of
solvers/cuts/branch_and_cut.py is not copied, so they never run on this model. This module is twbn's
stand-in, after the LNS scheme of Shaw (1998) and the sub-MIP idea of RINS (Danna,
Rothberg & Le Pape 2005): pick a set S of variables that are close in the incumbent's
moral graph, keep every other variable's family as it is, and solve the remaining
problem — S's families, acyclicity and, when bounded, the treewidth rows 8b–8h — with
the same cluster-cut ILP. When bounded, the triangulation between the fixed variables is
held as well (``fixed_fill``), so the sub-problem only fits S into the incumbent's
triangulation: with the elimination order free, even 4-variable neighbourhoods of wdbc
k = 2 timed out at 10 s (9 of 10), since all 31 positions stay open; held, ten
5-variable ones were all solved, in 0.4–5.9 s, and four of them gained 22–39. The incumbent is
feasible in the sub-problem, so its optimum is never worse; any better network it finds
is a new incumbent of the main solve.

Figures (wdbc, BIC, 3 parents, k = 4, from the −11,772.51 network of a 600 s ``cuts``
run): twelve 10-variable neighbourhoods of ≤ 10 s each reached −11,652.28 in 122 s; the
root bound is −11,605.89.
"""

from __future__ import annotations

import random
from collections import deque
from typing import Sequence

from twbn.formulations.cluster_ilp import triangulation_arcs
from twbn.formulations.graphs import moral_graph
from twbn.formulations.problem import Problem
from twbn.scoring.cache import ParentSet, ScoreCache
from twbn.scoring.errors import ParameterError

__all__ = ["neighbourhood", "fixed_outside", "fixed_fill"]


def neighbourhood(parents: Sequence[ParentSet], size: int, rng: random.Random) -> list[int]:
    """``size`` variables that hang together: breadth-first from a random variable through
    the moral graph of ``parents`` (neighbours in random order), topped up with random
    variables when its component is smaller. O(n + edges)."""
    n = len(parents)
    if not 1 <= size <= n:
        raise ParameterError(f"a neighbourhood has 1 to {n} variables, got {size}")
    adj = moral_graph(parents)
    start = rng.randrange(n)
    chosen, seen, queue = [start], {start}, deque([start])
    while queue and len(chosen) < size:
        u = queue.popleft()
        nbrs = sorted(adj[u])
        rng.shuffle(nbrs)
        for w in nbrs:
            if w not in seen and len(chosen) < size:
                seen.add(w)
                chosen.append(w)
                queue.append(w)
    rest = [v for v in range(n) if v not in seen]
    rng.shuffle(rest)
    chosen += rest[: size - len(chosen)]
    return sorted(chosen)


def fixed_outside(problem: Problem, parents: Sequence[ParentSet], free: Sequence[int]) -> Problem:
    """``problem`` with every variable outside ``free`` held to its family in ``parents``
    (its only candidate); the variables in ``free`` keep all their candidates."""
    cand = problem.candidates
    free_set = set(free)
    families = []
    for v in range(problem.n):
        if v in free_set:
            families.append(dict(zip(cand.parent_sets[v], cand.scores[v].tolist())))
        else:
            ps = tuple(sorted(parents[v]))
            families.append({ps: cand.score_of(v, ps)})
    cache = ScoreCache.from_mapping(problem.names, families, cand.arities, dict(cand.meta))
    return Problem(cache, problem.treewidth, problem.forbidden, problem.required)


def fixed_fill(parents: Sequence[ParentSet], order: Sequence[int], free: Sequence[int]) -> dict[tuple[int, int], int]:
    """The triangulation variables y_ij (formulations/cluster_ilp.py, 8b–8d) between two
    variables outside ``free``, at their values for ``parents`` eliminated in ``order``:
    1 iff {i, j} is an edge of the fill-in and i comes first. Fixing them keeps the
    incumbent feasible and leaves the sub-problem to place ``free`` in that triangulation.
    O(n²) pairs."""
    arcs = triangulation_arcs(parents, order)
    free_set = set(free)
    out = [v for v in range(len(parents)) if v not in free_set]
    return {(i, j): int((i, j) in arcs) for i in out for j in out if i != j}
