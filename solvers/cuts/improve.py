"""Exact-neighbourhood improvement of a bounded-treewidth network at any size.

The problem: given a network of treewidth ≤ k (a start from k-G, k-MAX or a result
file), find a better one by re-solving one piece of it exactly while everything else —
the other variables' families *and* the triangulation outside the piece — stays as it is.
This is the idea of BN-SLIM (Peruvemba Ramaswamy & Szeider, "Turbocharging treewidth-bounded
Bayesian network structure learning", AAAI 2021), with twbn's cluster-cut ILP
(formulations/cluster_ilp.py) on the piece instead of MaxSAT. No model over all n
variables is ever built, so it runs at n = 1,041.

The piece. Let H be the network's triangulation (the fill-in of its moral graph along a
width-≤ k elimination order σ, a perfect elimination order of H) and T σ's elimination
tree (the parent of v is its earliest later neighbour). F, the free variables, is a
subtree D(u) of T, or several sibling subtrees under one vertex p. Two facts make F a
closed piece:

- every neighbour of F outside F lies in C_p = {p} ∪ (p's later neighbours), so the
  boundary B = N_H(F) \\ F is a clique of H with at most k + 1 vertices;
- F is closed under earlier neighbours, so eliminating F first (in σ's order) creates no
  edge outside H.

The sub-problem over L = F ∪ B: each v ∈ F takes any cached parent set inside L (its
current one is one of them, since its family is a clique of H); each b ∈ B keeps its
family (restricted to L: its moral edges outside L lie among B ∪ outside, untouched); the
triangulation must hold B as a clique (``fixed_y``: y_ij = 1 for i before j in B), width
≤ k (8b–8h); and ``ancestry`` pairs (a, b) of B, a an ancestor of b along a path through
V \\ F, which no new path b ⇝ a may close into a cycle (build_cluster_ilp).

Why the glued network is valid: a new triangulation H_L of L with B a clique and width
≤ k and H restricted to V \\ F meet in the clique B, so their union is chordal with
cliques of ≤ k + 1 vertices (a perfect elimination order of H_L ending with B, then σ on
V \\ F); every moral edge of a new family lies in H_L, and every other family is unchanged.
Any cycle would have to leave L through B and come back, along a path through V \\ F that
an ancestry pair records. The current families (with σ restricted to F, then B) are a
feasible point of the sub-problem, so its optimum is never worse.

Without a treewidth bound there is no triangulation to keep: F is a connected set of the
moral graph (grown breadth-first, solvers/cuts/lns.py), B its moral neighbours (parents,
children, co-parents), F's families any cached set inside F ∪ B, B's held, and the
ancestry pairs alone keep the network acyclic. This is the primal heuristic that unbounded
``cuts`` lacked at n = 100, where its root LP does not finish in minutes.

Moral pieces. Tree pieces keep the network inside H, and k-MAX's start fills H up to a
k-tree however narrow the network: at audiology (n = 70) with k = 20 they ended 46 below
unbounded ``cuts`` at width 13. While the network is narrower than k (H's width, or a
min-fill triangulation of its moral graph), some pieces are cut as without a bound — F
connected in the moral graph, B its moral neighbours, no treewidth model — and glued in
only if the whole new network has a triangulation of width ≤ k (σ's fill-in of its moral
graph, else a min-fill one), which then becomes H and σ. The ancestry rows keep it acyclic
as above. With σ kept, a piece cut before it (``jobs`` ≥ 2) whose F ∪ B meets no vertex
where H changed still has its edges at F, its clique B and σ, so it stays valid. A moral piece's share follows its record: (1 + glued) / (2 + glued + too wide).
A piece with |L| ≤ k + 1 (tree or moral) carries no treewidth model at all: no network on
L is wider than k, and L's complete graph is a valid H_L with B a clique.

Piece size adapts to what solves: a sub-problem solved to optimality in under a quarter
of its time limit grows the next piece by one variable, one cut short shrinks it by two.

Pieces only re-solve what H allows: the boundary cliques and the closure of F are H's.
After ``stuck_pieces`` pieces in a row without a gain, H is redrawn: random greedy
elimination orders of the current network's moral graph, the one of width ≤ k with the
fewest edges that differs from H (any width-≤ k triangulation of the moral graph is a
valid H, with the order as its perfect elimination order).

Restarts (issue 33.3). At the largest piece limit a search can still stall: at plants,
k = 8, 1,800 s, its last gain came 559 s into 1,008 s. Once ``stall_pieces`` pieces in a
row at that limit gained nothing (or, once k-trees have taken over, ``stall_pieces``
k-tree pieces: their limit no longer grows), the method goes on from another k-MAX
network (the next seed, its start stage capped at ``restart_start_max_s``) with what is left,
while at least ``restart_min_s`` is, and keeps the best network of all its searches.
Where k-MAX gives back a network already searched from (at plants every seed's best was
seed 1's), that restart is dropped and the next ones start from k-G's networks, whose
random orders differ.

K-tree pieces (issue 33.3). A tree piece carries the treewidth model (8b–8h), which only
solves for pieces of about a dozen variables. Fix instead a k-tree H* that contains H (H
filled up along σ, formulations/graphs.fill_to_k_tree, the vertices added at random):
every network whose families are cliques of H* has its moral graph inside H*, so width ≤ k
with σ as the certificate, whatever the families. A k-tree piece is cut as a moral piece
(F connected in the moral graph, B its moral neighbours, the ancestry rows) with F's
candidate sets only those whose family is a clique of H*, and no treewidth model: at
plants (k = 5) they solved at 20–25 free variables where tree pieces reached 10–13. Glued
in as a moral piece (σ kept, H the fill-in of the new moral graph along σ, inside H*).
They only search networks inside H*, so H's pieces come first (a k-MAX start already
holds the best families of its own k-tree). At k >= ``ktree_only_min_k``, once H's pieces
are stuck (``ktree_after_pieces`` without a gain) the piece limit doubles and k-trees take
over for the rest of the search: one ends after ``ktree_stuck_pieces`` of its pieces in a
row without a gain or after ``ktree_seconds``, and the next is drawn from a redrawn H.
Below that k they take turns: H's pieces are stuck after ``stuck_pieces``; when a k-tree's
pieces give out, H is redrawn, and another k-tree is drawn only if that one gained, else
H's pieces go on. H* is drawn anew when σ changes or a family of the
network stops being a clique of it (a piece cut before it, with ``jobs`` >= 2).
From auto's 60 s network at plants k = 5 (−249,433.7) the best network inside one such
k-tree was −248,111.1, which k-tree pieces reached in 6.7 s (the unbounded `cuts` ILP on
the cache cut down to the k-tree's cliques proved it optimal there); a search of whole
k-trees, one after another, gained 1,600–2,600 in 60 s from there, where H's pieces
first, then one k-tree's, gained 850.

Larger pieces once the small ones give out (issue 33.3). Each time the search is stuck
(``stuck_pieces`` pieces without a gain, with or without a bound), a piece's time limit
doubles, up to ``max_piece_time_limit`` (8 × ``piece_time_limit`` by default), and the
adapted size grows with it. Where every small piece is locally optimal (at plants, k = 2,
where every redraw of H is H itself) only a larger one can gain; where small pieces keep
gaining, the limit never moves (munin). Measured in docs/auto.md.

In parallel (``jobs`` ≥ 2), worker processes solve pieces while this process cuts the
next ones and glues in each as it returns. A piece P = (F, B) cut before pieces P' =
(F', B') were glued in is still glued in if no F' meets L = F ∪ B and F meets no L'
(otherwise it is counted ``stale`` and dropped). Then F's families, B's families and every
edge of H at F are as they were when P was cut (glueing P' changes only F's families and
the edges at F'), so B is still a clique separating F and the union argument above holds.
Only the ancestry pairs may be out of date (P' may have made a new path between two
vertices of B), so such a piece is glued in only if the network stays acyclic (checked).

Jobs may join partway (``joining``): the job that computed the cluster LP's bound beside
this method (registry.solve) comes back when the LP has had its share, and the loop goes
on with one more worker process (from one job: two workers, this process cutting).

On a Dask cluster (``scheduler``, issue 33.2), the pieces go to its workers instead of
local processes, ``jobs`` at a time, by the same loop. A worker's clock is not this
machine's, so each piece takes its time limit (what is left of the budget, at most
``piece_time_limit``) when it is sent; a piece still out when the budget ends is cancelled
and not waited for (a piece that had begun runs to its own limit on its worker, unseen).
The extra k-MAX starts stay on this machine's cores and are not run beside a cluster.

The knobs in double back-quotes are fields of the search's
:class:`~twbn.solvers.policy.Policy` (``budget.policy``), with their measurements.
"""

from __future__ import annotations

import logging
import math
import random
import time
from typing import Sequence

from twbn.formulations.graphs import (Adjacency, elimination_width, fill_in, fill_to_k_tree, is_acyclic, moral_graph,
                                      random_greedy_order)
from twbn.solvers.cuts.lns import neighbourhood
from twbn.formulations.problem import Problem
from twbn.formulations.solution import SolverResult, make_solution
from twbn.scoring.cache import ParentSet, ScoreCache
from twbn.scoring.errors import TwbnError
from twbn.solvers.budget import Budget, limit_until
from twbn.solvers.policy import DEFAULT_POLICY, Policy
from twbn.solvers.control import RunControl
from twbn.solvers.method import Method
from twbn.solvers.method_options import CutsOptions, ImproveOptions
from twbn.solvers.parallel import Alone, end_pool

__all__ = ["improve", "choose_piece", "piece_problem", "METHOD"]

#: The sub-solves separate the cluster rows (3) only, exactly at their root (as the LNS
#: of ``cuts``, solvers/cuts/branch_and_cut.py, measured on wdbc).
SUB_OPTIONS = CutsOptions(exact="root", cluster_k=1, matroid=False, minor=True, lns=False)

LOG = logging.getLogger("twbn")


def random_peo(adj: Adjacency, rng: random.Random, first: Sequence[int] = ()) -> list[int]:
    """A perfect elimination order of the chordal graph ``adj``: maximum cardinality search
    (Tarjan & Yannakakis 1984) with random ties, reversed. The vertices of ``first`` (a
    clique) are visited first, so they come last in the order. O(n + edges)."""
    n = len(adj)
    weight = dict.fromkeys(adj, 0)
    buckets: list[set[int]] = [set(adj)]
    visited: list[int] = []
    done: set[int] = set()
    top = 0
    forced = list(first)
    while len(visited) < n:
        if forced or not visited:
            v = forced.pop(0) if forced else rng.choice(sorted(adj))
            buckets[weight[v]].discard(v)
        else:
            while not buckets[top]:
                top -= 1
            v = rng.choice(tuple(buckets[top])) if len(buckets[top]) < 64 else buckets[top].pop()
            buckets[top].discard(v)
        visited.append(v)
        done.add(v)
        for u in adj[v]:
            if u not in done:
                buckets[weight[u]].discard(u)
                weight[u] += 1
                if weight[u] == len(buckets):
                    buckets.append(set())
                buckets[weight[u]].add(u)
                top = max(top, weight[u])
    return visited[::-1]


def choose_piece(adj: Adjacency, order: Sequence[int], size: int, rng: random.Random) -> tuple[list[int], list[int]]:
    """Free variables F and boundary B for one sub-problem: F a subtree of the elimination
    tree of ``order`` (a perfect elimination order of the chordal graph ``adj``) grown from
    a random vertex with a small enough subtree while it has at most ``size`` vertices, topped up with sibling
    subtrees (the roots of the forest count as siblings); B = N(F) \\ F, a clique (module
    docstring). O(n + edges)."""
    pos = {v: i for i, v in enumerate(order)}
    up = {v: min((u for u in adj[v] if pos[u] > pos[v]), key=pos.__getitem__, default=None) for v in order}
    children: dict[int, list[int]] = {v: [] for v in order}
    for v, p in up.items():
        if p is not None:
            children[p].append(v)
    weight = {}
    for v in order:  # children come before their parent
        weight[v] = 1 + sum(weight[c] for c in children[v])

    def subtree(r: int) -> list[int]:
        out, stack = [], [r]
        while stack:
            v = stack.pop()
            out.append(v)
            stack.extend(children[v])
        return out

    u = rng.choice([v for v in order if weight[v] <= size])  # leaves always qualify
    while up[u] is not None and weight[up[u]] <= size:
        u = up[u]
    free = subtree(u)
    p = up[u]
    if len(free) < size:
        # the roots of a forest are siblings under no vertex: their subtrees share no edge
        siblings = [c for c in (children[p] if p is not None else [v for v in order if up[v] is None]) if c != u]
        rng.shuffle(siblings)
        for c in siblings:
            if len(free) + weight[c] <= size:
                free += subtree(c)
    fset = set(free)
    boundary = sorted({w for v in free for w in adj[v]} - fset)
    return sorted(free), boundary


def _ancestry(parents: Sequence[ParentSet], free: set[int], boundary: Sequence[int]) -> list[tuple[int, int]]:
    """Pairs (a, b) of ``boundary``, a ≠ b, with a path a ⇝ b whose vertices all lie
    outside ``free`` (the arcs that stay whatever the sub-problem does)."""
    children: dict[int, list[int]] = {}
    for v, ps in enumerate(parents):
        if v in free:
            continue
        for p in ps:
            if p not in free:
                children.setdefault(p, []).append(v)
    bset = set(boundary)
    pairs = []
    for a in boundary:
        seen, stack = {a}, [a]
        while stack:
            for c in children.get(stack.pop(), ()):
                if c not in seen:
                    seen.add(c)
                    stack.append(c)
        pairs += [(a, b) for b in sorted(seen & bset) if b != a]
    return pairs


def piece_problem(problem: Problem, parents: Sequence[ParentSet], free: Sequence[int], boundary: Sequence[int],
                  loose: bool = False, within: Adjacency | None = None
                  ) -> tuple[Problem, list[int], list[tuple[int, int]], dict[tuple[int, int], int]]:
    """The sub-problem over L = free ∪ boundary, in local indices 0 … |L|−1: its Problem
    (free variables: their candidate sets inside L — and, with ``within`` (a graph), whose
    family is a clique of it; boundary variables: their family restricted to L, scored as
    in the cache when it lies in L and 0 otherwise — a constant), L in local order, the
    ancestry pairs and the fixed y making the boundary a clique. ``loose`` (a moral or
    k-tree piece), or |L| ≤ k + 1: no treewidth bound inside L.
    Raises ValueError if a free variable's current family is not inside L (or ``within``)."""
    local = sorted(set(free) | set(boundary))
    index = {v: i for i, v in enumerate(local)}
    cand = problem.candidates
    fset = set(free)
    families = []
    for v in local:
        if v in fset:
            fam = {tuple(index[p] for p in ps): s for ps, s in zip(cand.parent_sets[v], cand.scores[v].tolist())
                   if all(p in index for p in ps) and (within is None or _clique_with(within, v, ps))}
            if tuple(sorted(parents[v])) not in {tuple(local[i] for i in ps) for ps in fam}:
                raise ValueError(f"the family of {problem.names[v]!r} is not inside its piece")
        else:
            inside = tuple(index[p] for p in parents[v] if p in index)
            fam = {inside: cand.score_of(v, parents[v]) if len(inside) == len(parents[v]) else 0.0}
        families.append(fam)
    cache = ScoreCache.from_mapping([problem.names[v] for v in local], families,
                                    None if cand.arities is None else [cand.arities[v] for v in local], dict(cand.meta))
    ancestry = [(index[a], index[b]) for a, b in _ancestry(parents, fset, boundary)]
    b_local = [index[b] for b in boundary]
    if loose or problem.treewidth is None or len(local) <= problem.treewidth + 1:
        # a loose piece: no network on |L| <= k + 1 variables is wider than k, and H_L may
        # be L's complete graph (B a clique in it), so the sub-problem has no treewidth
        # model (8b-8h) to carry: the ancestry rows alone keep it acyclic
        return Problem(cache, None), local, ancestry, {}
    fixed = {(a, b): int(i < j) for i, a in enumerate(b_local) for j, b in enumerate(b_local) if a != b}
    return Problem(cache, problem.treewidth), local, ancestry, fixed


def _clique_with(adj: Adjacency, v: int, ps: ParentSet) -> bool:
    """Whether {v} ∪ ``ps`` is a clique of ``adj``."""
    nv = adj[v]
    return all(p in nv and all(q in adj[p] for q in ps[i + 1:]) for i, p in enumerate(ps))


class _State:
    """The current network, a width-≤ k elimination order of it and its triangulation,
    patched piece by piece."""

    def __init__(self, problem: Problem, start: SolverResult, policy: Policy = DEFAULT_POLICY):
        self.problem, self.policy = problem, policy
        self.k = problem.treewidth
        self.parents = [tuple(sorted(p)) for p in start.parents]
        self.order = list(start.elimination_order)
        self.tri = None if self.k is None else fill_in(moral_graph(self.parents), self.order)
        self.width = None if self.k is None else elimination_width(self.tri, self.order)
        self._narrow: int | None = None  # the current network's min-fill width (None: not known)
        cand = problem.candidates
        self.family_score = [cand.score_of(v, ps) for v, ps in enumerate(self.parents)]
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
        cand = self.problem.candidates
        for v, ps in new_parents.items():
            self.parents[v] = ps
            self.family_score[v] = cand.score_of(v, ps)
        self.score = math.fsum(self.family_score)


class _Piece:
    """One sub-problem as it was cut from the network: F, B, L in local order, the
    sub-problem with its start (the current families), its fixed y and ancestry pairs, and
    how many pieces had been glued in when it was cut (for ``jobs`` >= 2)."""

    __slots__ = ("free", "boundary", "local", "problem", "start", "fixed", "ancestry", "glued_before", "moral",
                 "ktree")

    def __init__(self, state: "_State", free: list[int], boundary: list[int], peo: list[int] | None,
                 moral: bool = False, ktree: Adjacency | None = None) -> None:
        self.free, self.boundary, self.moral, self.ktree = free, boundary, moral, ktree is not None
        self.problem, self.local, self.ancestry, self.fixed = piece_problem(
            state.problem, state.parents, free, boundary, loose=moral or ktree is not None, within=ktree)
        index = {v: i for i, v in enumerate(self.local)}
        fset = set(free)
        order = None if peo is None else [index[v] for v in peo if v in fset] + [index[b] for b in boundary]
        self.start = make_solution(self.problem, [tuple(index[p] for p in state.parents[v] if p in index)
                                                  for v in self.local],
                                   bound=None, status="feasible", method="start", order_hint=order)
        self.glued_before = len(state.glued)


def _solve_piece(piece_problem_: Problem, start: SolverResult, fixed, ancestry, deadline: float | None,
                 piece_time_limit: float, seed: int, control: RunControl | None = None,
                 policy: Policy = DEFAULT_POLICY) -> tuple[SolverResult, float, float]:
    """One piece's sub-problem solved by the cluster-cut ILP (its root): (result, seconds it
    took, its time limit). ``deadline`` is a ``time.monotonic()`` instant, the same in
    every process of the machine."""
    from twbn.solvers.cuts.branch_and_cut import solve_cuts

    t1 = time.monotonic()
    limit = limit_until(deadline, policy, at_most=piece_time_limit)
    found = solve_cuts(piece_problem_, time_limit=limit, seed=seed, warm_start=start, fixed_y=fixed or None,
                       ancestry=ancestry, control=control, _report=False, options=SUB_OPTIONS, policy=policy)
    return found, time.monotonic() - t1, limit


def _worker_start(parent: int) -> None:
    """A piece worker: dies with its parent, leaves Ctrl-C to it (the parent keeps the network)."""
    import signal

    from twbn.solvers.control import die_with_parent, one_core

    die_with_parent(parent)
    one_core()  # this process is one job
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class _Search:
    """The piece loop's state shared by one process and several: the network, the adapted
    piece size, the counts and the trajectory."""

    def __init__(self, problem: Problem, start: SolverResult, options: ImproveOptions, seed: int | None,
                 control: RunControl | None, stop_when_stalled: bool = False, policy: Policy = DEFAULT_POLICY) -> None:
        self.problem, self.options, self.control, self.policy = problem, options, control, policy
        self.t0 = time.monotonic()
        self.rng = random.Random(seed)
        self.state = _State(problem, start, policy)
        self.size = max(1, min(options.start_size, problem.n))
        self.piece_limit = options.piece_time_limit  # doubled while stuck, up to the next
        self.max_piece_limit = options.max_piece_time_limit or policy.piece_limit_growth * options.piece_time_limit
        self.overrun = 0.0  # the most a piece ran past its limit: later pieces end that much early
        self.proved = False
        self.since_gain = 0
        self.dry = 0  # pieces in a row at the largest piece limit without a gain
        self.stop_when_stalled = stop_when_stalled
        self.stalled_at: float | None = None
        self.counts = {"pieces": 0, "improvements": 0, "rejected": 0, "timed_out": 0, "sub_seconds": 0.0,
                       "moral_pieces": 0, "moral_gains": 0, "too_wide": 0}
        # k-tree pieces (module docstring): the current k-tree H* (None: H's pieces' turn),
        # their own adapted size (with no treewidth model they solve at about twice a tree
        # piece's), their own count of pieces in a row without a gain, and whether H* gained
        self.ktree: Adjacency | None = None
        self.ktree_size = self.size
        self.ktree_since_gain = 0
        self.ktree_turns = options.ktree_pieces and self.state.tri is not None and problem.treewidth < problem.n - 1
        self.ktree_only = self.ktree_turns and problem.treewidth >= policy.ktree_only_min_k  # after H's first stall
        self.ktree_gained = False
        self.trajectory = [{"time": round(time.monotonic() - self.t0, 4), "incumbent": self.state.score,
                            "bound": None}]
        if control is not None:
            control.report(incumbent=self.state.score)

    def _ktree_for_next(self) -> Adjacency | None:
        """H* if the next piece is a k-tree piece (their turn), else None. H* is drawn anew
        when σ changed or a family of the network stopped being a clique of it (a piece cut
        before it, with ``jobs`` >= 2)."""
        if self.ktree is None or self.size >= self.problem.n:  # a tree piece of every variable proves
            return None
        state = self.state
        # σ must stay H*'s perfect elimination order: a k-tree piece is glued in along σ
        if state.order != self._ktree_order \
                or not all(_clique_with(self.ktree, v, ps) for v, ps in enumerate(state.parents)):
            self._draw_ktree()
        return self.ktree

    def _draw_ktree(self) -> None:
        """H*: a k-tree containing H, the vertices it adds drawn at random."""
        state = self.state
        self.ktree = fill_to_k_tree(state.tri, state.order, state.k, self.rng)
        self._ktree_order = list(state.order)
        self._ktree_t0 = time.monotonic()
        self.ktree_since_gain = 0
        self.ktree_gained = False
        self.counts["ktrees"] = self.counts.get("ktrees", 0) + 1

    def cut(self, busy: Sequence[_Piece] = ()) -> _Piece:
        """The next piece; with pieces out for solving (``busy``), one that shares no
        variable with theirs where a few tries find one (a clash is caught when it returns)."""
        state, n = self.state, self.problem.n
        ktree = self._ktree_for_next()
        # a tree piece of every variable solves the whole problem bounded: a moral piece of it
        # only finds the unbounded optimum
        moral = ktree is None and state.tri is not None and self.size < n and self._moral_turn()
        size = self.ktree_size if ktree is not None else self.size
        for _ in range(8 if busy else 1):
            if state.tri is None or moral or ktree is not None:
                # unbounded (or a k-tree piece): a piece connected in the moral graph; its
                # neighbours there (its parents, children and co-parents) are the boundary
                free = neighbourhood(state.parents, min(size, n), self.rng)
                fset = set(free)
                mg = moral_graph(state.parents)
                boundary = sorted({u for v in free for u in mg[v]} - fset)
                peo = None
            else:
                peo = random_peo(state.tri, self.rng)
                free, boundary = choose_piece(state.tri, peo, self.size, self.rng)
            if not any(_clash(free, boundary, p.free, p.boundary) for p in busy):
                break
        return _Piece(state, free, boundary, peo, moral, ktree)

    def _moral_turn(self) -> bool:
        """Whether the next piece of a bounded problem is a moral piece: only while the
        network is narrower than k, at random, more often the more of them were glued in
        and the fewer came back too wide."""
        state = self.state
        # H's width first: the min-fill one costs 0.1 s at n = 1,041 (min-degree there)
        if state.k is None or (state.width >= state.k and state.narrow_width() >= state.k):
            return False
        ok, wide = self.counts["moral_gains"], self.counts["too_wide"]
        return self.rng.random() < (1 + ok) / (2 + ok + wide)

    def take(self, piece: _Piece, found: SolverResult, took: float, limit: float) -> None:
        """Glue in a solved piece if it gains (after checking it against what was glued in
        since it was cut), adapt the piece size, count."""
        counts, state = self.counts, self.state
        counts["pieces"] += 1
        self.overrun = max(self.overrun, took - limit)
        counts["moral_pieces"] += piece.moral
        if piece.ktree:
            counts["ktree_pieces"] = counts.get("ktree_pieces", 0) + 1
        counts["sub_seconds"] += took
        gain = -math.inf if found.parents is None else found.score - piece.start.score
        if gain > 1e-9 * max(1.0, abs(state.score)):
            later = state.glued[piece.glued_before:]
            if any(_clash(piece.free, piece.boundary, f, b) for f, b in later):
                counts["stale"] = counts.get("stale", 0) + 1
            elif state.accept(piece.free, piece.boundary, piece.local, found, check_acyclic=bool(later),
                              moral=piece.moral or piece.ktree):
                counts["improvements"] += 1
                if piece.ktree:
                    counts["ktree_gains"] = counts.get("ktree_gains", 0) + 1
                    self.ktree_since_gain = -1
                    self.ktree_gained = True
                else:
                    self.since_gain = -1
                self.dry = -1
                self.trajectory.append({"time": round(time.monotonic() - self.t0, 4), "incumbent": state.score,
                                        "bound": None})
                if self.control is not None:
                    self.control.report(incumbent=state.score)
                counts["moral_gains"] += piece.moral
            elif piece.moral:
                counts["too_wide"] += 1  # (or a cycle through pieces glued in since)
                gain = math.nan  # an unbounded optimum wider than k proves nothing
            else:  # (a k-tree piece: a cycle through pieces glued in since; it fits k)
                counts["rejected"] += 1
        size = self.ktree_size if piece.ktree else self.size
        if found.status == "optimal" and len(piece.free) == self.problem.n and not math.isnan(gain) \
                and not piece.ktree:
            self.proved = True  # the piece was the whole problem: the network is optimal (gain or not)
        elif found.status == "optimal":
            if took < limit / 4:
                size = min(self.policy.piece_max_size, self.problem.n, size + 1)
        else:
            counts["timed_out"] += 1
            size = max(self.policy.piece_min_size, size - 2)
        if piece.ktree:
            self.ktree_size = size
            self.ktree_since_gain += 1
        else:
            self.size = size
            self.since_gain += 1
        self.dry = self.dry + 1 if self.dry < 0 or self.piece_limit >= self.max_piece_limit else 0
        if self.dry >= self.policy.stall_pieces and self.stalled_at is None:
            self.stalled_at = math.floor(100 * (time.monotonic() - self.t0)) / 100  # never past the wall time
        policy = self.policy
        if self.ktree is not None and (self.ktree_since_gain >= policy.ktree_stuck_pieces or (
                self.ktree_only and time.monotonic() - self._ktree_t0 > policy.ktree_seconds)):
            # H*'s pieces gave out or had their time: another H* of a redrawn H (below
            # ktree_only_min_k, only if this one gained; else H's pieces)
            if state.redraw(self.rng):
                counts["redrawn"] = counts.get("redrawn", 0) + 1
            if self.ktree_only or self.ktree_gained:
                self._draw_ktree()
            else:
                self.ktree = None
                self.since_gain = 0
        elif self.since_gain >= (policy.ktree_after_pieces if self.ktree_only else policy.stuck_pieces) \
                and not self.proved:
            self.since_gain = 0
            # larger pieces (module docstring)
            self.piece_limit = min(self.max_piece_limit, 2 * self.piece_limit)
            if self.ktree_turns:  # then H*'s pieces (module docstring)
                self._draw_ktree()
                if self.ktree_only:
                    # k-trees keep this limit for the rest of the search: it is the cap, so
                    # their pieces count toward a stall (else no search here could restart)
                    self.max_piece_limit = self.piece_limit
            elif state.tri is not None and state.redraw(self.rng):
                counts["redrawn"] = counts.get("redrawn", 0) + 1
        if self.control is not None:
            self.control.report(iterations=counts["pieces"])

    def piece_deadline(self, deadline: float | None) -> float | None:
        """When the next piece must end: the search's deadline less the most a piece has
        overrun its limit (SCIP stops between LP solves; a large piece's take seconds)."""
        return None if deadline is None else deadline - self.overrun

    def result(self, start: SolverResult, seed: int | None, time_limit: float | None, jobs: int) -> SolverResult:
        counts, state = self.counts, self.state
        counts["sub_seconds"] = round(counts["sub_seconds"], 2)
        counts["last_piece_size"] = self.size
        counts["overrun"] = round(self.overrun, 2)
        if self.piece_limit > self.options.piece_time_limit:
            counts["piece_time_limit"] = self.piece_limit
        counts["start_score"] = start.score
        counts["jobs"] = jobs
        if self.stalled_at is not None:  # seconds into the search
            counts["stalled"] = self.stalled_at
        return make_solution(self.problem, state.parents, bound=state.score if self.proved else None,
                             status="optimal" if self.proved else "feasible", order_hint=state.order,
                             method="improve", wall_time=round(time.monotonic() - self.t0, 4),
                             trajectory=self.trajectory, stats=counts, seed=seed, time_limit=time_limit,
                             solver="scip")


def _clash(free_a: Sequence[int], boundary_a: Sequence[int], free_b: Sequence[int], boundary_b: Sequence[int]) -> bool:
    """Whether two pieces may not both be glued in from the same network: one's free
    variables meet the other's L = F ∪ B (module docstring, "In parallel")."""
    fa, fb = set(free_a), set(free_b)
    return bool(fa & fb or fa & set(boundary_b) or fb & set(boundary_a))


def improve(
    problem: Problem,
    start: SolverResult,
    options: ImproveOptions | None = None,
    *,
    time_limit: float | None,
    seed: int | None = None,
    control: RunControl | None = None,
    jobs: int = 1,
    scheduler: str | None = None,
    joining: tuple[float, int] | None = None,
    stop_when_stalled: bool = False,
    policy: Policy = DEFAULT_POLICY,
) -> SolverResult:
    """Improve ``start`` by re-solving pieces of it exactly (module docstring) until
    ``time_limit`` seconds have passed or ``options.max_pieces`` pieces were tried (or,
    with ``stop_when_stalled``, the search stalled).

    Parameters
    ----------
    problem : Problem
        Bounded or not. Unbounded, a piece is a neighbourhood in the moral graph, its
        boundary its moral neighbours, and only the ancestry rows bind.
    start : SolverResult
        A certified network of ``problem`` with its elimination order.
    options : ImproveOptions, optional
        ``piece_time_limit`` (seconds one sub-problem may take at first; doubled each
        time the search is stuck, up to ``max_piece_time_limit``), ``start_size`` (free
        variables in the first piece, adapted afterwards), ``max_pieces`` (stop after this
        many sub-problems); the defaults when None.
    time_limit : float or None
        Seconds for the whole search, sub-problems' model building included; None: until
        ``max_pieces`` or a stop request.
    seed : int, optional
        Seeds the choice of pieces and SCIP. With ``jobs`` = 1 the same seed and the same
        number of pieces give the same network.
    control : RunControl, optional
        Stop requests and progress.
    jobs : int, default 1
        Processes solving pieces at once. With ``jobs`` >= 2 this process cuts pieces
        that share no variable and glues each in as it returns (module docstring, "In
        parallel"); which pieces gain then depends on timing, so runs are not repeatable.
    scheduler : str, optional
        A Dask scheduler's address (``tcp://host:8786``): the pieces, ``jobs`` at a time,
        are solved by its workers (which need twbn installed) instead of local processes.
        A cluster that cannot be reached or whose workers fail leaves the pieces to this
        process (``stats["workers_failed"]`` says why).
    joining : (float, int), optional
        ``(when, extra)``: from ``time.monotonic()`` ``when`` on, ``extra`` more processes
        solve pieces (the job the LP's bound had beside it comes back, registry.solve);
        ignored with a ``scheduler``. ``stats["joined"]`` says when they joined.
    policy : Policy, optional
        Its knobs (``stuck_pieces``, ``stall_pieces``, ``ktree_*``, piece sizes, ...);
        default: the measured ones.
    stop_when_stalled : bool, default False
        Return once ``policy.stall_pieces`` pieces in a row at the largest piece time limit (or
        k-tree pieces, once k-trees took over) gained nothing (``stats["stalled"]``: seconds
        into the search, recorded either way).

    Returns
    -------
    SolverResult
        Never worse than ``start``. Status ``feasible`` (the registry adds the bound), or
        ``optimal`` when a piece held every variable and was solved to optimality.
        ``stats`` counts pieces, improvements, rejected glue-ups (``stale``: pieces solved
        in parallel that a piece glued in meanwhile overlapped), the last piece size and,
        once it grew, the last piece time limit (``piece_time_limit``).

    Raises
    ------
    ValueError
        Without a start network with its elimination order, or ``jobs`` < 1.

    Examples
    --------
    >>> from twbn.formulations.problem import Problem
    >>> from twbn.formulations.solution import make_solution
    >>> from twbn.scoring.cache import ScoreCache
    >>> cache = ScoreCache.from_mapping("ABC", [{(): -5.0, (1,): -1.0}, {(): -5.0}, {(): -5.0, (0,): -4.0}])
    >>> problem = Problem(cache, 1)
    >>> empty = make_solution(problem, [(), (), ()], bound=None, status="feasible", method="start")
    >>> improve(problem, empty, ImproveOptions(max_pieces=3), time_limit=None, seed=0).score
    -10.0
    """
    if start.parents is None or start.elimination_order is None:
        raise ValueError("improve needs a start network with its elimination order")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be an integer >= 1, got {jobs!r}")
    options = options or ImproveOptions()
    search = _Search(problem, start, options, seed, control, stop_when_stalled, policy)
    deadline = None if time_limit is None else search.t0 + time_limit
    if scheduler is not None or (joining is not None and deadline is not None and joining[0] >= deadline - 0.2):
        joining = None
    joined = None
    if jobs >= 2 and problem.n > options.start_size:
        joined = _in_parallel(search, deadline, jobs, scheduler, joining)
        joining = None  # joined there, or the workers failed: this process goes on alone
    while not search.proved and not _over(search, deadline):
        if joining is not None and time.monotonic() >= joining[0] and problem.n > options.start_size:
            joined = {"seconds": round(time.monotonic() - search.t0, 2), "jobs": jobs + joining[1]}
            _in_parallel(search, deadline, jobs + joining[1])
            joining = None
            continue
        piece = search.cut()
        found, took, limit = _solve_piece(piece.problem, piece.start, piece.fixed, piece.ancestry,
                                          search.piece_deadline(deadline), search.piece_limit,
                                          search.rng.randrange(2**31), control, policy)
        search.take(piece, found, took, limit)
    sol = search.result(start, seed, time_limit, jobs)
    if joined is not None:
        sol.stats["joined"] = joined
    if scheduler is not None:
        sol.stats["scheduler"] = scheduler
    return sol


def _over(search: _Search, deadline: float | None) -> bool:
    """Whether the loop ends: enough pieces, a stop request or (almost) no time left."""
    max_pieces = search.options.max_pieces
    if max_pieces is not None and search.counts["pieces"] >= max_pieces:
        return True
    if search.control is not None and search.control.stop_requested():
        return True
    if search.stop_when_stalled and search.stalled_at is not None \
            and (deadline is None or deadline - time.monotonic() >= search.policy.restart_min_s):
        search.counts["ended_stalled"] = True  # the caller restarts
        return True
    return deadline is not None and deadline - time.monotonic() < 0.2


class _WorkersFailed(TwbnError):
    """A piece worker raised or died (its cause says how); caught in this module."""


class _Workers:
    """Where pieces are solved beside this process: ``jobs`` spawned local processes, or a
    Dask cluster's workers (``scheduler``)."""

    def __init__(self, jobs: int, scheduler: str | None, policy: Policy) -> None:
        self.client, self.policy = None, policy
        if scheduler is None:
            import multiprocessing
            import os
            from concurrent.futures import ProcessPoolExecutor

            self.pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                                            initializer=_worker_start, initargs=(os.getpid(),))
        else:
            from twbn.solvers.parallel import dask_client

            self.client = dask_client(scheduler, policy)
            self.pool = self.client.get_executor(pure=False)

    def submit(self, piece: _Piece, deadline: float | None, piece_time_limit: float, seed: int):
        if self.client is not None:  # another machine's clock: the limit is fixed when sent
            piece_time_limit = limit_until(deadline, self.policy, at_most=piece_time_limit)
            deadline = None
        return self.pool.submit(_solve_piece, piece.problem, piece.start, piece.fixed, piece.ancestry, deadline,
                                piece_time_limit, seed, None, self.policy)

    def close(self) -> None:
        if self.client is not None:
            self.pool.shutdown(wait=False)  # cancels the pieces still out
            self.client.close()
            return
        end_pool(self.pool)


def _in_parallel(search: _Search, deadline: float | None, jobs: int, scheduler: str | None = None,
                 joining: tuple[float, int] | None = None) -> dict | None:
    """Pieces solved by ``jobs`` worker processes (or a Dask cluster's workers) while this
    one cuts and glues, ``joining[1]`` more from ``joining[0]`` on; returns when the loop
    is over, or early (the caller goes on in this process) if the workers cannot run.
    Returns when the jobs joined and how many there were then (None: they did not)."""
    import pickle
    from concurrent.futures import FIRST_COMPLETED, BrokenExecutor, wait

    from twbn.solvers.parallel import SchedulerUnavailable

    out: dict = {}
    workers, joined = None, None
    extra = 0 if joining is None else joining[1]
    try:
        # a local pool starts its processes as pieces need them: the joining ones only then
        workers = _Workers(jobs + extra, scheduler, search.policy)
        while not search.proved and not _over(search, deadline):
            max_pieces = search.options.max_pieces
            now_jobs = jobs
            if joining is not None and time.monotonic() >= joining[0]:
                now_jobs += extra
                if joined is None:
                    joined = {"seconds": round(time.monotonic() - search.t0, 2), "jobs": now_jobs}
            while len(out) < now_jobs and (max_pieces is None or search.counts["pieces"] + len(out) < max_pieces):
                piece = search.cut([p for p in out.values()])
                out[workers.submit(piece, search.piece_deadline(deadline), search.piece_limit,
                                   search.rng.randrange(2**31))] = piece
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            done, _ = wait(list(out), timeout=0.25 if left is None else min(0.25, left), return_when=FIRST_COMPLETED)
            for future in done:
                piece = out.pop(future)
                try:
                    found, took, limit = future.result()
                except Exception as exc:  # noqa: BLE001 - raised in (or by the loss of) a worker
                    raise _WorkersFailed(exc) from exc
                search.take(piece, found, took, limit)  # a failure here is this process's: raised
    except (_WorkersFailed, SchedulerUnavailable, OSError, pickle.PicklingError, BrokenExecutor) as failed:
        # a worker that cannot start or died (or a cluster out of reach) leaves the work to
        # this process
        exc = failed.__cause__ if isinstance(failed, _WorkersFailed) else failed
        search.counts["workers_failed"] = f"{type(exc).__name__}: {exc}"
        LOG.info(f"improve: the piece workers stopped ({type(exc).__name__}: {exc}); going on in one process")
    finally:
        if workers is not None:
            workers.close()
    return joined


def _start_network(problem: Problem, budget: Budget, seed: int | None, jobs: int, scheduler: str | None,
                   name: str, method: str = "kmax", at_most: float | None = None) -> tuple[SolverResult, dict]:
    """k-MAX's network (or ``method``'s: a restart's may be k-G's) on a stage of the
    policy's ``improve_start_share`` of ``budget`` (at most ``at_most`` seconds, default its
    ``start_max_s``), as ``--warm-start kmax`` would give; with jobs to spare, more runs
    (seeds ``seed`` + 1 …) beside it, the best kept. Without a bound (or k >= n - 1), the
    network at the policy's ``unbounded_start_k``,
    certified as one of the unbounded problem. Returns the start (its parents None if none
    was found) and what the runs reached."""
    from twbn.solvers.registry import solve

    void = problem.treewidth is None or problem.treewidth >= problem.n - 1  # binds nothing
    bounded = problem if not void else Problem(
        problem.cache, min(problem.n - 1, budget.policy.unbounded_start_k), problem.forbidden, problem.required)
    info: dict = {}
    at_most = budget.policy.start_max_s if at_most is None else at_most
    with budget.stage(name, budget.policy.improve_start_share, at_most=at_most) as stage:
        side = [Alone(bounded, method, stage, None if seed is None else seed + i)
                for i in range(1, jobs)] if jobs >= 2 and scheduler is None \
            and stage.left() > 2 * budget.policy.parallel_margin_s else []
        try:
            start = solve(bounded, method, budget=stage, seed=seed, _lp_bound=False)
        finally:
            others = [a.result(stage) for a in side]
        if side:  # what each k-MAX run beside this one reached (None: nothing in time)
            info = {"side_scores": [None if o is None or o.parents is None else o.score for o in others],
                    "own_score": start.score}
        for other in others:
            if other is not None and other.parents is not None and (start.parents is None
                                                                    or other.score > start.score):
                start = other
    if void and start.parents is not None:
        start = make_solution(problem, start.parents, bound=None, status="feasible", method=method,
                              order_hint=start.elimination_order)
    return start, info


#: Counts that add up over a method's searches (its first and its restarts).
_SUMMED = ("pieces", "improvements", "rejected", "timed_out", "sub_seconds", "moral_pieces", "moral_gains",
           "too_wide", "stale", "redrawn")


def _run(problem: Problem, options: ImproveOptions, budget: Budget, *, seed: int | None,
         start: SolverResult | None, jobs: int = 1, scheduler: str | None = None) -> SolverResult:
    """``improve`` as a method: from ``start``, or else from k-MAX's network (``_start_network``);
    once the search stalls with the policy's ``restart_min_s`` left, again from another k-MAX network
    (``options.restarts``, with a time limit and no ``max_pieces``), the best kept; once
    k-MAX gives a network already searched from, from k-G's networks instead."""
    from twbn.solvers.registry import solve

    if problem.n <= 1:
        return solve(problem, "dp", budget=budget)
    used, label, info = 0.0, None, {}
    if start is None:
        t0 = time.monotonic()
        start, info = _start_network(problem, budget, seed, jobs, scheduler, "k-MAX start")
        if start.parents is None:
            return start
        used, label = time.monotonic() - t0, ("kmax", start.score)
    restarts = options.restarts and budget.deadline is not None and options.max_pieces is None
    began = time.monotonic()
    policy = budget.policy
    sol = improve(problem, start, options,
                  time_limit=policy.min_engine_s if budget.stop_requested() else budget.limit(),
                  seed=seed, control=budget.control, jobs=jobs, scheduler=scheduler, joining=budget.joining,
                  stop_when_stalled=restarts, policy=policy)
    best, runs, trajectory, searches, first_score = sol, [], list(sol.trajectory), [sol.stats], sol.score
    searched, start_method, repeated = {tuple(start.parents)}, "kmax", 0
    while sol.stats.get("ended_stalled") and not budget.expired():
        # another start network (seeds apart from the first start's side runs), searched anew
        r = len(runs) + repeated + 1
        r_seed = None if seed is None else seed + 1000 * r
        stage = {"kmax": "k-MAX", "kg": "k-G"}[start_method] + f" restart {r}"
        other, _ = _start_network(problem, budget, r_seed, jobs, scheduler, stage, start_method,
                                  at_most=policy.restart_start_max_s)
        if other.parents is None or budget.expired():
            break
        if tuple(other.parents) in searched and start_method == "kmax":
            # k-MAX's best of its random first cliques is the same network whatever the
            # seed where it samples them all (plants, n = 69: seeds 1, 1001, 2001, 3001):
            # the next starts are k-G's, whose random orders differ
            repeated, start_method = repeated + 1, "kg"
            continue
        searched.add(tuple(other.parents))
        offset = time.monotonic() - began
        sol = improve(problem, other, options, time_limit=budget.limit(), seed=r_seed, control=budget.control,
                      jobs=jobs, scheduler=scheduler, joining=budget.joining, stop_when_stalled=True, policy=policy)
        searches.append(sol.stats)
        runs.append({"at": round(offset, 2), "from": start_method, "start": other.score, "score": sol.score,
                     "pieces": sol.stats["pieces"], "improvements": sol.stats["improvements"]})
        for point in sol.trajectory:  # the best network over the method's clock
            if point["incumbent"] > trajectory[-1]["incumbent"]:
                trajectory.append({**point, "time": round(point["time"] + offset, 4)})
        if sol.score > best.score:
            best = sol
    if runs:
        for key in _SUMMED:  # the counts over every search; the rest are the best one's
            total = sum(st.get(key) or 0 for st in searches)
            if total or key in best.stats:
                best.stats[key] = round(total, 2) if isinstance(total, float) else total
        best.stats["restarts"] = runs
        best.stats["first_score"] = first_score  # where the first search stalled
    if repeated:
        best.stats["repeated_starts"] = repeated  # k-MAX restarts not searched: the network of an earlier one
    best.trajectory = trajectory
    best.stats.pop("ended_stalled", None)  # the signal to restart, not part of the result
    if label is not None:
        best.stats["warm_start"] = {"from": label[0], "score": label[1], "seconds": round(used, 4), **info}
    return best


#: Exact-neighbourhood improvement as the registry lists it.
METHOD = Method("improve", _run, options=ImproveOptions,
                summary="exact-neighbourhood improvement: pieces of a start network re-solved by the cluster-cut "
                        "ILP, the rest held (k-MAX start unless one is given)",
                warm_start=True, seeded=True, parallel=True, distributed=True)
