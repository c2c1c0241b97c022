"""A piece of the network (F, B): cutting it from a triangulation or the moral graph, its
sub-problem with the rest held, and its exact solve by the cluster-cut ILP (the package
docstring says why a glued-in piece keeps the network acyclic and of width <= k)."""

from __future__ import annotations

import random
import time
from typing import TYPE_CHECKING, Sequence

from twbn.formulations.graphs import Adjacency
from twbn.formulations.problem import Problem
from twbn.formulations.solution import SolverResult, make_solution
from twbn.scoring.cache import ParentSet, ScoreCache
from twbn.solvers.budget import limit_until
from twbn.solvers.policy import Policy
from twbn.solvers.control import RunControl
from twbn.solvers.method_options import CutsOptions
from twbn.scoring.errors import ParameterError

if TYPE_CHECKING:
    from twbn.solvers.improve.state import State

__all__ = ["random_peo", "choose_piece", "piece_problem", "clique_with", "Piece", "solve_piece", "SUB_OPTIONS"]

#: The sub-solves separate the cluster rows (3) only, exactly at their root (as the LNS
#: of ``cuts``, solvers/cuts/branch_and_cut.py, measured on wdbc).
SUB_OPTIONS = CutsOptions(exact="root", cluster_k=1, matroid=False, minor=True, lns=False)


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


def neighbour_families(problem: Problem, v: int, family: ParentSet, inside: Sequence[int]) -> dict:
    """From data (``problem.scorer``): v's families one step from ``family`` with every
    parent in ``inside`` (a parent added, removed, or swapped for another), scored from the
    data (memoised; every addition to one base in one pass), those the problem allows:
    what a piece of a network whose families the cache lacks may choose beyond its cache."""
    cap = problem.family_max_parents
    cur = tuple(sorted(family))
    pool = [u for u in inside if u != v]
    bases = [cur] + [tuple(p for p in cur if p != x) for x in cur]
    out: dict = {}
    for base in bases:
        if problem.allows(v, base):
            out[base] = problem.score_of(v, base)
        if cap is not None and len(base) >= cap:
            continue
        problem.scorer.score_additions(v, base, [u for u in pool if u not in base])
        for u in pool:
            if u in base:
                continue
            ps = tuple(sorted(base + (u,)))
            if ps not in out and problem.allows(v, ps):
                out[ps] = problem.score_of(v, ps)
    return out


def piece_problem(problem: Problem, parents: Sequence[ParentSet], free: Sequence[int], boundary: Sequence[int],
                  loose: bool = False, within: Adjacency | None = None, neighbours: bool = True
                  ) -> tuple[Problem, list[int], list[tuple[int, int]], dict[tuple[int, int], int]]:
    """The sub-problem over L = free ∪ boundary, in local indices 0 … |L|−1: its Problem
    (free variables: their candidate sets inside L — and, with ``within`` (a graph), whose
    family is a clique of it; boundary variables: their family restricted to L, scored as
    in the cache when it lies in L and 0 otherwise — a constant), L in local order, the
    ancestry pairs and the fixed y making the boundary a clique. ``loose`` (a moral or
    k-tree piece), or |L| ≤ k + 1: no treewidth bound inside L. From data
    (``problem.scorer``) a free variable's current family is always a candidate, and with
    ``neighbours`` so are those one step from it inside L (:func:`neighbour_families`).
    Raises ValueError if a free variable's current family is not inside L (or ``within``)."""
    local = sorted(set(free) | set(boundary))
    index = {v: i for i, v in enumerate(local)}
    cand = problem.candidates
    fset = set(free)
    families = []
    for v in local:
        if v in fset:
            fam = {tuple(index[p] for p in ps): s for ps, s in zip(cand.parent_sets[v], cand.scores[v].tolist())
                   if all(p in index for p in ps) and (within is None or clique_with(within, v, ps))}
            if problem.scorer is not None:
                cur = tuple(sorted(parents[v]))
                near = neighbour_families(problem, v, cur, local) if neighbours else {}
                if all(p in index for p in cur):
                    near[cur] = problem.score_of(v, cur)
                fam.update({tuple(index[p] for p in ps): s for ps, s in near.items()
                            if within is None or clique_with(within, v, ps)})
            if tuple(sorted(parents[v])) not in {tuple(local[i] for i in ps) for ps in fam}:
                raise ParameterError(f"the family of {problem.names[v]!r} is not inside its piece")
        else:
            inside = tuple(index[p] for p in parents[v] if p in index)
            fam = {inside: problem.score_of(v, parents[v]) if len(inside) == len(parents[v]) else 0.0}
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


def clique_with(adj: Adjacency, v: int, ps: ParentSet) -> bool:
    """Whether {v} ∪ ``ps`` is a clique of ``adj``."""
    nv = adj[v]
    return all(p in nv and all(q in adj[p] for q in ps[i + 1:]) for i, p in enumerate(ps))


class Piece:
    """One sub-problem as it was cut from the network: F, B, L in local order, the
    sub-problem with its start (the current families), its fixed y and ancestry pairs, and
    how many pieces had been glued in when it was cut (for ``jobs`` >= 2)."""

    __slots__ = ("free", "boundary", "local", "problem", "start", "fixed", "ancestry", "glued_before", "moral",
                 "ktree")

    def __init__(self, state: "State", free: list[int], boundary: list[int], peo: list[int] | None,
                 moral: bool = False, ktree: Adjacency | None = None) -> None:
        self.free, self.boundary, self.moral, self.ktree = free, boundary, moral, ktree is not None
        self.problem, self.local, self.ancestry, self.fixed = piece_problem(
            state.problem, state.parents, free, boundary, loose=moral or ktree is not None, within=ktree,
            neighbours=bool(state.policy.piece_neighbours))
        index = {v: i for i, v in enumerate(self.local)}
        fset = set(free)
        order = None if peo is None else [index[v] for v in peo if v in fset] + [index[b] for b in boundary]
        self.start = make_solution(self.problem, [tuple(index[p] for p in state.parents[v] if p in index)
                                                  for v in self.local],
                                   bound=None, status="feasible", method="start", order_hint=order)
        self.glued_before = len(state.glued)


def solve_piece(piece_problem_: Problem, start: SolverResult, fixed, ancestry, deadline: float | None,
                 piece_time_limit: float, seed: int, control: RunControl | None,
                 policy: Policy) -> tuple[SolverResult, float, float]:
    """One piece's sub-problem solved by the cluster-cut ILP (its root): (result, seconds it
    took, its time limit). ``deadline`` is a ``time.monotonic()`` instant, the same in
    every process of the machine."""
    from twbn.solvers.cuts.branch_and_cut import solve_cuts

    t1 = time.monotonic()
    limit = limit_until(deadline, policy, at_most=piece_time_limit)
    found = solve_cuts(piece_problem_, time_limit=limit, seed=seed, warm_start=start, fixed_y=fixed or None,
                       ancestry=ancestry, control=control, _report=False, options=SUB_OPTIONS, policy=policy)
    return found, time.monotonic() - t1, limit
