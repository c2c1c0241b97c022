"""The best DAG whose moral graph lies inside a given undirected graph G.

Korhonen & Parviainen (2013), Theorem 2 / Theorem 8 and Sec. 4, equations (1)–(4):
dynamic programming over a nice tree decomposition of G. For a node i with bag X_i,
a permutation σ of X_i and S ⊆ X_i, g_i(σ, S) is the best S-score of a DAG on the
vertices below i that is compatible with σ, in which bag vertices outside S have no
parents, and whose moral graph lies inside G. Leaf: g(v, ∅) = 0, g(v, {v}) = f_v(∅).
Introduce v (eq. 3): g_i(σ,S) = max_{Z⊆S∖v} g_j(σ∖v, Z) + Σ_{u∈S∖Z} f̂_u(P_{σ,u}).
Forget v (eq. 2): g_i(σ,S) = max over positions of v in σ of g_j(σ+v, S∪{v}).
Join (eq. 4): g_i(σ,S) = max_{Z⊆S} g_j(σ,Z) + g_l(σ,S∖Z).
The root bag is empty, so the answer is g_root((), ∅). Parent sets incompatible with G
(a parent not adjacent to the child, or two non-adjacent parents) are dropped first.

Time O((w+1)!·w·3^w·n) for a decomposition of width w; this is the exact phase 2 of
S2/S2+ (best DAG inside a k-tree) and the first-clique step of k-G.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Sequence

from twbn.formulations.graphs import (Adjacency, elimination_width, fits_in_graph, min_fill_order,
                                     perfect_elimination_order, tree_decomposition)
from twbn.scoring.cache import ParentSet, ScoreCache
from twbn.scoring.errors import ParameterError
from twbn.solvers.budget import passed

__all__ = ["NiceNode", "nice_tree_decomposition", "greedy_dag_in_chordal_graph", "best_dag_in_graph"]

NEG = float("-inf")


@dataclass
class NiceNode:
    kind: str  # "leaf", "introduce", "forget", "join"
    bag: tuple[int, ...]
    vertex: int | None
    children: tuple[int, ...]


def nice_tree_decomposition(adj: Adjacency, order: Sequence[int]) -> list[NiceNode]:
    """A nice tree decomposition (Kloks 1994) built from the tree decomposition of an
    elimination order; nodes in post-order (children first), the last one the root with
    an empty bag. Width = the order's width."""
    bags, edges = tree_decomposition(adj, order)
    m = len(bags)
    kids: list[list[int]] = [[] for _ in range(m)]
    for child, parent in edges:
        kids[parent].append(child)
    nodes: list[NiceNode] = []

    def add(kind, bag, vertex, children) -> int:
        nodes.append(NiceNode(kind, tuple(sorted(bag)), vertex, tuple(children)))
        return len(nodes) - 1

    def morph(idx: int, target: frozenset) -> int:
        bag = set(nodes[idx].bag)
        for v in sorted(bag - target):
            bag.discard(v)
            idx = add("forget", bag, v, [idx])
        for v in sorted(target - bag):
            bag.add(v)
            idx = add("introduce", bag, v, [idx])
        return idx

    built: dict[int, int] = {}
    has_parent = {c for c, _ in edges}
    roots = [i for i in range(m) if i not in has_parent]
    # iterative post-order over the decomposition tree
    stack = [(r, False) for r in roots]
    while stack:
        t, done = stack.pop()
        if not done:
            stack.append((t, True))
            stack.extend((c, False) for c in kids[t])
            continue
        target = bags[t]
        parts = [morph(built[c], target) for c in kids[t]]
        if not parts:
            first = min(target)
            parts = [morph(add("leaf", {first}, first, []), target)]
        idx = parts[0]
        for other in parts[1:]:
            idx = add("join", target, None, [idx, other])
        built[t] = idx
    if not roots:
        return nodes
    assert len(roots) == 1, "tree_decomposition returns one tree"
    morph(built[roots[0]], frozenset())
    return nodes


def _bag_states(bag: tuple[int, ...]):
    """Every (σ, S, bitmask of S) of a bag: σ a permutation, S a subset."""
    for sigma in itertools.permutations(bag):
        for r in range(len(bag) + 1):
            for S in itertools.combinations(bag, r):
                yield sigma, S, sum(1 << u for u in S)


def _compatible(cache: ScoreCache, adj: Adjacency) -> list[list[tuple[int, float, ParentSet]]]:
    out = []
    for v in range(cache.n_variables):
        keep = []
        for ps, s in zip(cache.parent_sets[v], cache.scores[v].tolist()):
            if fits_in_graph(adj, v, ps):
                mask = 0
                for p in ps:
                    mask |= 1 << p
                keep.append((mask, s, ps))
        out.append(keep)
    return out


def greedy_dag_in_chordal_graph(cache: ScoreCache, adj: Adjacency) -> tuple[list[ParentSet], float, list[int]]:
    """A good DAG inside the chordal graph ``adj`` in O(n + sets): in the reverse of a
    perfect elimination order each vertex's earlier neighbours form a clique, so each
    takes its best cached set among them; parents come earlier (acyclic) and every
    family lies in a clique (its moral edges are in G). Not the best DAG in G: a vertex
    may not take a later one as parent. Returns (parents, score, the order); ValueError
    if G is not chordal or some vertex has no cached set inside it."""
    n = cache.n_variables
    order = perfect_elimination_order(adj)
    if order is None:
        raise ParameterError("the graph is not chordal")
    pos = {v: i for i, v in enumerate(order)}  # eliminated later = placed earlier
    parents: list[ParentSet] = []
    total = 0.0
    for v in range(n):
        earlier = {u for u in adj[v] if pos[u] > pos[v]}
        for ps, s in zip(cache.parent_sets[v], cache.scores[v].tolist()):  # best first
            if earlier.issuperset(ps):
                parents.append(ps)
                total += s
                break
        else:
            raise ParameterError(f"no cached parent set of variable {v} fits inside the graph")
    return parents, total, list(order)


def best_dag_in_graph(
    cache: ScoreCache, adj: Adjacency, order: Sequence[int] | None = None, deadline: float | None = None
) -> tuple[list[ParentSet], float, list[int]]:
    """The best DAG over ``cache`` whose moral graph is a subgraph of ``adj``.

    ``order``: an elimination order of ``adj`` (default: a perfect one where the graph is
    chordal, as k-trees are, found by maximum cardinality search in 0.04 s at n = 1,000;
    min-fill, 0.85 s there, otherwise); its width sets the cost. Returns (parents, score,
    order); the order is a certificate of width ≤ its width on G for the result.
    Raises ValueError if no DAG inside G uses cached parent sets only, and TimeoutError
    once ``deadline`` (time.monotonic()) has passed (at n = 1,000, k = 3 the DP takes 3 s).
    """
    n = cache.n_variables
    if sorted(adj) != list(range(n)):
        raise ParameterError("the graph must have the cache's variables 0..n-1 as vertices")
    if order is None:
        order = perfect_elimination_order(adj) or min_fill_order(adj)
    elimination_width(adj, order)  # validates the order
    fhat = _BestFamily(_compatible(cache, adj))
    nodes = nice_tree_decomposition(adj, order)
    tables: list[dict] = []
    backs: list[dict] = []
    for i_node, node in enumerate(nodes):
        if i_node % 32 == 0 and passed(deadline):
            raise TimeoutError("the DP inside the graph did not finish by its deadline")
        table, back = _NODE_TABLES[node.kind](node, [tables[c] for c in node.children], fhat)
        tables.append(table)
        backs.append(back)
        for c in node.children:  # children are used once: free them
            tables[c] = None  # type: ignore[call-overload]
    total = tables[-1].get(((), 0), NEG) if nodes else NEG
    if total == NEG:
        raise ParameterError("no DAG with cached parent sets fits inside the given graph")
    return _trace_back(nodes, backs, fhat, n), total, list(order)


class _BestFamily:
    """f̂(u, allowed): u's best cached family inside the graph whose parents are all in the
    bit set ``allowed``, as (score, parents), memoised; (NEG, None) where none is."""

    def __init__(self, cands):
        self.cands, self.memo = cands, {}

    def __call__(self, u: int, allowed: int) -> tuple[float, ParentSet | None]:
        key = (u, allowed)
        got = self.memo.get(key)
        if got is None:
            got = (NEG, None)
            for mask, s, ps in self.cands[u]:  # best first
                if mask & ~allowed == 0:
                    got = (s, ps)
                    break
            self.memo[key] = got
        return got


# Each node's table maps (sigma, S) -- the bag's vertices in topological order, and the bit
# set of those whose family is chosen already -- to the best score below the node; ``back``
# keeps the choice that gave it, for the trace back.

def _leaf_table(node, children, fhat):
    v = node.vertex
    return {((v,), 0): 0.0, ((v,), 1 << v): fhat(v, 0)[0]}, {}


def _introduce_table(node, children, fhat):
    v, bag, child = node.vertex, node.bag, children[0]
    table, back = {}, {}
    for sigma in itertools.permutations(bag):
        csigma = tuple(x for x in sigma if x != v)
        pre = 0
        f = {}
        for u in sigma:
            f[u] = fhat(u, pre)[0]
            pre |= 1 << u
        for r in range(len(bag) + 1):
            for S in itertools.combinations(bag, r):
                smask = sum(1 << u for u in S)
                rest = [u for u in S if u != v]
                best, arg = NEG, None
                for zr in range(len(rest) + 1):
                    for Z in itertools.combinations(rest, zr):
                        zmask = sum(1 << u for u in Z)
                        base = child.get((csigma, zmask), NEG)
                        if base == NEG:
                            continue
                        val = base + sum(f[u] for u in S if not (zmask >> u) & 1)
                        if val > best:
                            best, arg = val, zmask
                _keep(table, back, (sigma, smask), best, arg)
    return table, back


def _forget_table(node, children, fhat):
    v, child = node.vertex, children[0]
    table, back = {}, {}
    for sigma, _, smask in _bag_states(node.bag):
        best, arg = NEG, None
        for t in range(len(sigma) + 1):
            val = child.get((sigma[:t] + (v,) + sigma[t:], smask | (1 << v)), NEG)
            if val > best:
                best, arg = val, t
        _keep(table, back, (sigma, smask), best, arg)
    return table, back


def _join_table(node, children, fhat):
    left, right = children
    table, back = {}, {}
    for sigma, S, smask in _bag_states(node.bag):
        best, arg = NEG, None
        for zr in range(len(S) + 1):
            for Z in itertools.combinations(S, zr):
                zmask = sum(1 << u for u in Z)
                val = left.get((sigma, zmask), NEG) + right.get((sigma, smask ^ zmask), NEG)
                if val > best:
                    best, arg = val, zmask
        _keep(table, back, (sigma, smask), best, arg)
    return table, back


def _keep(table: dict, back: dict, key, best: float, arg) -> None:
    """A state's best value and the choice that gave it, where any choice gave one."""
    if best > NEG:
        table[key] = best
        back[key] = arg


_NODE_TABLES = {"leaf": _leaf_table, "introduce": _introduce_table, "forget": _forget_table, "join": _join_table}


def _trace_back(nodes, backs, fhat, n: int) -> list[ParentSet]:
    """Each variable's family, from the root's state down the choices kept in ``backs``."""
    parents: list[ParentSet | None] = [None] * n
    stack = [(len(nodes) - 1, (), 0)]
    while stack:
        i, sigma, smask = stack.pop()
        node = nodes[i]
        if node.kind == "leaf":
            if smask:
                parents[node.vertex] = fhat(node.vertex, 0)[1]
        elif node.kind == "introduce":
            zmask = backs[i][(sigma, smask)]
            pre = 0
            for u in sigma:
                if (smask >> u) & 1 and not (zmask >> u) & 1:
                    parents[u] = fhat(u, pre)[1]
                pre |= 1 << u
            stack.append((node.children[0], tuple(x for x in sigma if x != node.vertex), zmask))
        elif node.kind == "forget":
            t = backs[i][(sigma, smask)]
            stack.append((node.children[0], sigma[:t] + (node.vertex,) + sigma[t:], smask | (1 << node.vertex)))
        else:
            zmask = backs[i][(sigma, smask)]
            stack.append((node.children[0], sigma, zmask))
            stack.append((node.children[1], sigma, smask ^ zmask))
    assert all(p is not None for p in parents)
    return parents  # type: ignore[return-value]
