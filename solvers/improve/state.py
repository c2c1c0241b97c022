"""The network improve works on: its families, a width-<= k elimination order σ and its
triangulation H, patched piece by piece, and H redrawn when its pieces are stuck."""

from __future__ import annotations

import math
import random

from twbn.formulations.graphs import elimination_width, fill_in, is_acyclic, moral_graph, random_greedy_order
from twbn.formulations.problem import Problem
from twbn.formulations.solution import SolverResult
from twbn.scoring.cache import ParentSet
from twbn.solvers.policy import Policy
from twbn.solvers.improve.pieces import random_peo


__all__ = ["State"]

class State:
    """The current network, a width-≤ k elimination order of it and its triangulation,
    patched piece by piece."""

    def __init__(self, problem: Problem, start: SolverResult, policy: Policy):
        self.problem, self.policy = problem, policy
        self.k = problem.treewidth
        self.parents = [tuple(sorted(p)) for p in start.parents]
        self.order = list(start.elimination_order)
        self.tri = None if self.k is None else fill_in(moral_graph(self.parents), self.order)
        self.width = None if self.k is None else elimination_width(self.tri, self.order)
        self._narrow: int | None = None  # the current network's min-fill width (None: not known)
        # problem.score_of: from data a family may be one the cache lacks, scored on demand
        self.family_score = [problem.score_of(v, ps) for v, ps in enumerate(self.parents)]
        self.score = math.fsum(self.family_score)
        self.glued: list[tuple[list[int], list[int]]] = []  # (F, B) of each piece glued in, in turn

    def accept(self, free: list[int], boundary: list[int], local: list[int], sub: SolverResult,
               check_acyclic: bool = False, moral: bool = False) -> bool:
        """Glue the sub-solution in (module docstring); False, changing nothing, if its
        local triangulation with the boundary as a clique is wider than k (it never should
        be: the sub-model holds that clique) or, with ``check_acyclic`` (pieces glued in
        since this one was cut may have made paths its ancestry rows did not know), if the
        network would have a cycle."""
        k = self.k
        fset = set(free)
        new_parents = {local[i]: tuple(sorted(local[p] for p in ps)) for i, ps in enumerate(sub.parents)
                       if local[i] in fset}
        if check_acyclic and not is_acyclic([new_parents.get(v, ps) for v, ps in enumerate(self.parents)]):
            return False
        if k is None:  # unbounded: only the families change (the ancestry rows kept it acyclic)
            self._set(new_parents)
            self.glued.append((free, boundary))
            return True
        if moral:
            return self._accept_moral(free, boundary, new_parents)
        local_parents = [() for _ in local]
        index = {v: i for i, v in enumerate(local)}
        for i, v in enumerate(local):
            ps = new_parents[v] if v in fset else self.parents[v]
            local_parents[i] = tuple(index[p] for p in ps if p in index)
        g = moral_graph(local_parents)
        bl = [index[b] for b in boundary]
        for a in bl:
            g[a].update(x for x in bl if x != a)
        tri = fill_in(g, sub.elimination_order)
        peo = random_peo(tri, random.Random(0), first=bl)
        pos = {v: i for i, v in enumerate(peo)}
        if any(sum(1 for u in tri[v] if pos[u] > pos[v]) > k for v in tri):
            return False
        # the new triangulation: H outside F, the piece's inside
        for v in free:
            for u in self.tri.pop(v):
                if u not in fset:
                    self.tri[u].discard(v)
        for i, nb in tri.items():
            v = local[i]
            self.tri.setdefault(v, set()).update(local[j] for j in nb)
        self.order = [local[i] for i in peo if local[i] in fset] + [v for v in self.order if v not in fset]
        self.width = elimination_width(self.tri, self.order)
        self._set(new_parents)
        self.glued.append((free, boundary))
        return True

    def _accept_moral(self, free: list[int], boundary: list[int], new_parents: dict[int, ParentSet]) -> bool:
        """A moral piece's families, if the whole new network has a triangulation of width
        ≤ k: σ's fill-in of its moral graph, else a min-fill one. H and σ become it. With
        σ kept, a piece cut before is stale only if H changed at a vertex of its F ∪ B (its
        edges at F, its clique B and σ are then as they were); with a new σ, every one is."""
        parents = [new_parents.get(v, ps) for v, ps in enumerate(self.parents)]
        g = moral_graph(parents)
        order, kept = self.order, True
        width = elimination_width(g, order)  # also the width of its fill-in along the same order
        if width > self.k:
            order, kept = random_greedy_order(g, random.Random(0), fill=self.problem.n <= self.policy.redraw_fill_max_n), False
            width = elimination_width(g, order)
            if width > self.k:
                return False
        tri = fill_in(g, order)
        changed = [v for v in tri if tri[v] != self.tri[v]] if kept else list(range(self.problem.n))
        self.tri, self.order, self.width = tri, list(order), width
        self._set(new_parents)
        self.glued.append((free, boundary))
        if changed:
            self.glued.append((changed, []))
        return True

    def redraw(self, rng: random.Random) -> bool:
        """A new width-≤ k triangulation of the network's moral graph (random greedy orders:
        the one with the fewest edges that differs from H), so that later pieces see
        other boundaries. False, changing nothing, if no draw fits the bound or differs."""
        g = moral_graph(self.parents)
        edges = lambda adj: sum(len(nb) for nb in adj.values())  # noqa: E731
        best = None
        for _ in range(self.policy.redraw_tries):
            order = random_greedy_order(g, rng, fill=self.problem.n <= self.policy.redraw_fill_max_n)
            if elimination_width(g, order) > self.k:
                continue
            tri = fill_in(g, order)
            if tri != self.tri and (best is None or edges(tri) < edges(best[0])):
                best = (tri, order)
        if best is None:
            return False
        self.tri, self.order = best
        self.width = elimination_width(self.tri, self.order)
        self.glued.append((list(range(self.problem.n)), []))  # every piece cut before is stale
        return True

    def narrow_width(self) -> int:
        """The width of H, or of a min-fill triangulation of the network's moral graph if
        narrower (k-MAX's start fills H up to a k-tree: width k, however narrow the network)."""
        if self._narrow is None:
            g = moral_graph(self.parents)
            order = random_greedy_order(g, random.Random(0), fill=self.problem.n <= self.policy.redraw_fill_max_n)
            self._narrow = elimination_width(g, order)
        return min(self.width, self._narrow)

    def _set(self, new_parents: dict[int, ParentSet]) -> None:
        self._narrow = None
        for v, ps in new_parents.items():
            self.parents[v] = ps
            self.family_score[v] = self.problem.score_of(v, ps)
        self.score = math.fsum(self.family_score)
