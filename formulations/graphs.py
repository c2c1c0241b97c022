"""Graph utilities for treewidth certificates: moral graphs, elimination orders, k-trees,
tree decompositions.

Undirected graphs are ``dict[int, set[int]]`` adjacency maps over vertices 0 … n−1 (or
networkx graphs where a function says so); a DAG is given by its parent sets,
``parents[v]`` a sorted tuple. Facts used (Korhonen & Parviainen 2013, Sec. 2): the treewidth
of a DAG is that of its moral graph; a graph has treewidth ≤ k iff some elimination
order has width ≤ k iff it is a subgraph of a k-tree.
"""

from __future__ import annotations

import heapq
import itertools
from typing import Iterable, Sequence
from twbn.scoring.errors import ParameterError

__all__ = ["structural_hamming_distance", "moral_graph", "is_acyclic", "fits_in_graph", "copy_adjacency", "elimination_width", "fill_in",
           "random_greedy_order", "min_fill_order", "min_degree_order", "perfect_elimination_order",
           "exact_treewidth", "degeneracy", "tree_decomposition", "is_tree_decomposition", "k_tree_from_construction",
           "fill_to_k_tree", "is_k_tree", "k_cliques", "junction_tree_size"]

Adjacency = dict[int, set[int]]


def moral_graph(parents: Sequence[Iterable[int]]) -> Adjacency:
    """The moral graph of a DAG: its skeleton plus an edge between every two parents of a
    common child. O(Σ |Π_v|²)."""
    n = len(parents)
    adj: Adjacency = {v: set() for v in range(n)}
    for v, ps in enumerate(parents):
        ps = list(ps)
        for p in ps:
            adj[v].add(p)
            adj[p].add(v)
        for a, b in itertools.combinations(ps, 2):
            adj[a].add(b)
            adj[b].add(a)
    return adj


def is_acyclic(parents: Sequence[Iterable[int]]) -> bool:
    """Whether the directed graph with these parent sets has no directed cycle (Kahn's
    algorithm). O(n + arcs)."""
    n = len(parents)
    children: list[list[int]] = [[] for _ in range(n)]
    indegree = [0] * n
    for v, ps in enumerate(parents):
        for p in ps:
            children[p].append(v)
            indegree[v] += 1
    ready = [v for v in range(n) if indegree[v] == 0]
    seen = 0
    while ready:
        v = ready.pop()
        seen += 1
        for c in children[v]:
            indegree[c] -= 1
            if indegree[c] == 0:
                ready.append(c)
    return seen == n


def fits_in_graph(adj: Adjacency, v: int, parents: Iterable[int]) -> bool:
    """Whether the family {v} ∪ parents is a clique of the graph, i.e. whether its moral
    edges all lie in it."""
    parents = tuple(parents)
    return all(u in adj[v] for u in parents) and all(b in adj[a] for a, b in itertools.combinations(parents, 2))


def copy_adjacency(adj: Adjacency) -> Adjacency:
    return {v: set(nb) for v, nb in adj.items()}


def elimination_width(adj: Adjacency, order: Sequence[int]) -> int:
    """Width of an elimination order: the largest number of not-yet-eliminated neighbours
    a vertex has when it is eliminated (its neighbours then become a clique).
    O(n·Δ²) with Δ the largest degree met. Raises ValueError if ``order`` is not a
    permutation of the vertices."""
    if sorted(order) != sorted(adj):
        raise ParameterError("the elimination order is not a permutation of the vertices")
    g = copy_adjacency(adj)
    width = 0
    for v in order:
        nb = g.pop(v)
        width = max(width, len(nb))
        for a in nb:
            g[a].discard(v)
            g[a].update(nb - {a})
    return width if adj else -1


def fill_in(adj: Adjacency, order: Sequence[int]) -> Adjacency:
    """The triangulation (chordal supergraph) that eliminating in ``order`` produces."""
    g = copy_adjacency(adj)
    tri = copy_adjacency(adj)
    for v in order:
        nb = g.pop(v)
        for a in nb:
            g[a].discard(v)
            for b in nb:
                if a != b:
                    g[a].add(b)
                    tri[a].add(b)
    return tri


def _greedy_order(adj: Adjacency, cost, reach: int) -> list[int]:
    """Eliminate, each step, the vertex of least ``(cost(g, v), v)`` in the graph left.

    A heap with lazy deletion: after v goes, only the costs that can have changed are
    recomputed, those of the vertices within ``reach`` of it (1: its neighbours, whose
    degree changed; 2: also theirs, for fill-in, since an edge among v's neighbours can
    join two neighbours of theirs). A scan of every vertex each step (the first version)
    was O(n²): 20 s of improve's 60 at n = 10,000, in one uninterruptible call."""
    g = copy_adjacency(adj)
    current = {v: cost(g, v) for v in g}
    heap = [(c, v) for v, c in current.items()]
    heapq.heapify(heap)
    order = []
    while g:
        c, v = heapq.heappop(heap)
        if v not in g or current[v] != c:
            continue  # a stale entry: v is gone or its cost has changed since
        nb = g.pop(v)
        for a in nb:
            g[a].discard(v)
            g[a].update(nb - {a})
        order.append(v)
        touched = set(nb)
        if reach > 1:
            for a in nb:
                touched |= g[a]
        for u in touched:
            c = cost(g, u)
            if c != current[u]:
                current[u] = c
                heapq.heappush(heap, (c, u))
    return order


def _fill_count(g: Adjacency, v: int) -> int:
    nb = list(g[v])
    return sum(1 for a, b in itertools.combinations(nb, 2) if b not in g[a])


def random_greedy_order(adj: Adjacency, rng, fill: bool = True) -> list[int]:
    """Greedy min-fill (``fill``) or min-degree elimination order with random ties (``rng``:
    a ``random.Random``): a different triangulation each draw."""
    key = {v: rng.random() for v in adj}
    if fill:
        return _greedy_order(adj, lambda g, v: (_fill_count(g, v), key[v]), 2)
    return _greedy_order(adj, lambda g, v: (len(g[v]), key[v]), 1)


def min_fill_order(adj: Adjacency) -> list[int]:
    """Greedy min-fill elimination order (ties by index). O(n·Δ⁴ log n): each step recounts
    the fill of the vertices within two steps of the one eliminated."""
    return _greedy_order(adj, _fill_count, 2)


def min_degree_order(adj: Adjacency) -> list[int]:
    """Greedy min-degree elimination order (ties by index)."""
    return _greedy_order(adj, lambda g, v: len(g[v]), 1)


def perfect_elimination_order(adj: Adjacency) -> list[int] | None:
    """A perfect elimination order of a chordal graph (eliminating a vertex adds no edge),
    or None if the graph is not chordal. Maximum cardinality search (Tarjan &
    Yannakakis 1984), reversed; O(n²) here."""
    n = len(adj)
    weight = {v: 0 for v in adj}
    visited: list[int] = []
    remaining = set(adj)
    while remaining:
        v = max(remaining, key=lambda x: (weight[x], -x))
        remaining.remove(v)
        visited.append(v)
        for a in adj[v]:
            if a in remaining:
                weight[a] += 1
    order = visited[::-1]
    # verify: each vertex's later neighbours form a clique
    pos = {v: i for i, v in enumerate(order)}
    for v in order:
        later = [a for a in adj[v] if pos[a] > pos[v]]
        if later:
            first = min(later, key=pos.get)
            if any(a != first and a not in adj[first] for a in later):
                return None
    return order if len(order) == n else None


def exact_treewidth(adj: Adjacency) -> tuple[int, list[int]]:
    """Exact treewidth and an optimal elimination order, by dynamic programming over
    vertex subsets (Bodlaender, Fomin, Koster, Kratsch & Thilikos 2006): TW(S) =
    min_{v∈S} max(TW(S∖v), |Q(S∖v, v)|), Q(S, v) the vertices outside S ∪ {v} reachable
    from v through S. O(2^n · n²); for small graphs (tests, certificates)."""
    verts = sorted(adj)
    n = len(verts)
    if n == 0:
        return -1, []
    idx = {v: i for i, v in enumerate(verts)}
    nbm = [0] * n
    for v in verts:
        for a in adj[v]:
            nbm[idx[v]] |= 1 << idx[a]

    def q(s: int, v: int) -> int:
        seen, stack, out = 1 << v, [v], 0
        while stack:
            x = stack.pop()
            nb = nbm[x] & ~seen
            seen |= nb
            while nb:
                low = nb & -nb
                y = low.bit_length() - 1
                nb ^= low
                if (s >> y) & 1:
                    stack.append(y)
                else:
                    out += 1
        return out

    full = (1 << n) - 1
    tw = {0: -1}
    choice = {}
    for s in range(1, full + 1):
        best, arg = None, None
        rest = s
        while rest:
            low = rest & -rest
            v = low.bit_length() - 1
            rest ^= low
            val = max(tw[s ^ low], q(s ^ low, v))
            if best is None or val < best:
                best, arg = val, v
        tw[s] = best
        choice[s] = arg
    order = []
    s = full
    while s:
        v = choice[s]
        order.append(verts[v])
        s ^= 1 << v
    return tw[full], order[::-1]


def degeneracy(adj: Adjacency) -> int:
    """The degeneracy of a graph: the largest, over its subgraphs, of the smallest degree
    in it: the largest k whose k-core is not empty (networkx's core numbers; Matula & Beck 1983).

    It is a lower bound on the treewidth: the first vertex of a width-k elimination order
    of any subgraph has at most k neighbours in it. And a d-degenerate graph has at most
    d·m − d(d+1)/2 edges on any m ≥ d + 1 of its vertices, whatever its treewidth, so a
    count of edges (the cluster LP's width rows at k ≥ d, solvers/relaxation.py) never
    cuts it off.

    Parameters
    ----------
    adj : dict[int, set[int]]
        An undirected graph.

    Returns
    -------
    int
        Its degeneracy; 0 for a graph without edges (and for no vertices).

    Examples
    --------
    >>> degeneracy({0: {1, 2}, 1: {0, 2}, 2: {0, 1, 3}, 3: {2}})  # a triangle with a pendant
    2
    >>> degeneracy({0: {1}, 1: {0, 2}, 2: {1}})
    1
    """
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(adj)
    g.add_edges_from((v, u) for v, nb in adj.items() for u in nb)
    return max(nx.core_number(g).values(), default=0)  # the largest k with a nonempty k-core


def tree_decomposition(adj: Adjacency, order: Sequence[int]) -> tuple[list[frozenset[int]], list[tuple[int, int]]]:
    """Tree decomposition from an elimination order: bag i is the i-th eliminated vertex
    with its later neighbours in the triangulation; its parent is the bag of the earliest
    eliminated of those neighbours. Returns (bags, tree edges); width = max bag − 1 =
    the order's width. A forest (disconnected graph) is joined into one tree."""
    tri = fill_in(adj, order)
    pos = {v: i for i, v in enumerate(order)}
    bags, edges = [], []
    for i, v in enumerate(order):
        later = {a for a in tri[v] if pos[a] > i}
        bags.append(frozenset(later | {v}))
        if later:
            edges.append((i, pos[min(later, key=pos.get)]))
        elif i + 1 < len(order):
            edges.append((i, i + 1))  # join components; the empty separator is fine
    return bags, edges


def junction_tree_size(parents: Sequence[Iterable[int]], order: Sequence[int], arities: Sequence[int]) -> int:
    """The entries of a junction tree's clique tables: the sum, over the maximal cliques
    that eliminating the moral graph in ``order`` creates, of the product of their
    variables' arities. What exact inference on that tree stores and touches per
    message pass (Lauritzen & Spiegelhalter 1988); the width bounds only its largest term.

    Examples
    --------
    >>> junction_tree_size([(), (0,), (1,)], [0, 1, 2], [2, 3, 4])  # cliques {0,1}, {1,2}: 6 + 12
    18
    >>> junction_tree_size([(), (), (0, 1)], [2, 0, 1], [2, 2, 2])  # moral: one clique {0,1,2}
    8
    """
    bags, _ = tree_decomposition(moral_graph(parents), order)
    maximal = [b for b in set(bags) if not any(b < c for c in bags)]
    total = 0
    for bag in maximal:
        size = 1
        for v in bag:
            size *= int(arities[v])
        total += size
    return total


def is_tree_decomposition(adj: Adjacency, bags: Sequence[frozenset[int]], edges: Sequence[tuple[int, int]]) -> bool:
    """Checks the three conditions: bags cover the vertices, every edge lies in a bag,
    the bags holding each vertex form a connected subtree (and the edges form a tree)."""
    import networkx as nx

    t = nx.Graph()
    t.add_nodes_from(range(len(bags)))
    t.add_edges_from(edges)
    if len(bags) and not nx.is_tree(t):
        return False
    if set().union(*bags) != set(adj) if bags else bool(adj):
        return False
    for v, nb in adj.items():
        for a in nb:
            if not any(v in b and a in b for b in bags):
                return False
    for v in adj:
        holding = [i for i, b in enumerate(bags) if v in b]
        if not nx.is_connected(t.subgraph(holding)):
            return False
    return True


# ---------------------------------------------------------------- k-trees


def k_tree_from_construction(k: int, first_clique: Sequence[int], attachments: Sequence[tuple[int, Sequence[int]]]) -> Adjacency:
    """Build a k-tree: a (k+1)-clique, then each new vertex joined to an existing k-clique.
    ``attachments`` is a list of (new vertex, k-clique it attaches to)."""
    if len(first_clique) != k + 1:
        raise ParameterError(f"a k-tree starts from a (k+1)-clique; got {len(first_clique)} vertices for k = {k}")
    adj: Adjacency = {v: set(first_clique) - {v} for v in first_clique}
    cliques = {frozenset(c) for c in itertools.combinations(first_clique, k)}
    for v, clique in attachments:
        c = frozenset(clique)
        if v in adj:
            raise ParameterError(f"vertex {v} is added twice")
        if c not in cliques:
            raise ParameterError(f"{sorted(c)} is not a k-clique of the k-tree built so far")
        adj[v] = set(c)
        for a in c:
            adj[a].add(v)
        cliques.update(frozenset(s) | {v} for s in itertools.combinations(c, k - 1))
    return adj


def fill_to_k_tree(adj: Adjacency, order: Sequence[int], k: int, rng=None) -> Adjacency:
    """A k-tree containing the chordal graph ``adj``, with ``order`` (a perfect elimination
    order of ``adj`` of width ≤ k) a perfect elimination order of it too.

    From the last vertex back, each vertex's later neighbours grow to k (or to all the
    vertices after it) with vertices of {p} ∪ (p's later neighbours), p its earliest later
    neighbour (the next vertex if it has none), or of the last k + 1 vertices if p is one of
    them: a clique once p's turn is done that holds the later neighbours already there, so
    they stay a clique and the order stays perfect. The vertices added are the
    nearest in the order, or drawn at random with ``rng`` (a ``random.Random``). With
    n ≥ k + 1 the result is a k-tree (:func:`is_k_tree`). O(n·k²).

    Parameters
    ----------
    adj : Adjacency
        A chordal graph (it is not changed).
    order : sequence of int
        A perfect elimination order of ``adj`` of width ≤ k.
    k : int
        The k-tree's k.
    rng : random.Random, optional
        Draws the vertices added; None adds the nearest in the order.

    Returns
    -------
    Adjacency
        The k-tree (a new graph), ``order`` a perfect elimination order of it.

    Raises
    ------
    ParameterError
        If ``order`` is not a perfect elimination order of ``adj`` of width ≤ k.

    Examples
    --------
    >>> path = {0: {1}, 1: {0, 2}, 2: {1}, 3: {2}}
    >>> tree = fill_to_k_tree(path, [0, 1, 2, 3], 2)
    >>> tree[0], is_k_tree(tree, 2)
    ({1, 2}, True)
    """
    pos = {v: i for i, v in enumerate(order)}
    if len(pos) != len(adj) or set(pos) != set(adj):
        raise ParameterError("the order must hold every vertex of the graph once")
    out = copy_adjacency(adj)
    later: dict[int, set[int]] = {}
    for i in range(len(order) - 1, -1, -1):
        v = order[i]
        mine = {u for u in adj[v] if pos[u] > i}
        if len(mine) > k:
            raise ParameterError(f"the order has width above {k}")
        if i < len(order) - 1:
            p = min(mine, key=pos.__getitem__) if mine else order[i + 1]
            if not mine <= {p} | later[p]:
                raise ParameterError("the order is not a perfect elimination order of the graph")
            # p's clique has k + 1 vertices unless p is one of the last k + 1, which are a clique
            clique = {p} | later[p] if pos[p] < len(order) - k - 1 else set(order[max(i + 1, len(order) - k - 1):])
            pool = sorted(clique - mine, key=pos.__getitem__)
            if rng is not None:
                rng.shuffle(pool)
            for u in pool[: max(0, k - len(mine))]:
                mine.add(u)
                out[v].add(u)
                out[u].add(v)
        later[v] = mine
    return out


def is_k_tree(adj: Adjacency, k: int) -> bool:
    """A graph with n ≥ k+1 vertices is a k-tree iff it is connected, has
    k·n − k(k+1)/2 edges, and is chordal with clique number k+1 (equivalently: repeatedly
    removing a vertex whose neighbourhood is a k-clique reduces it to a (k+1)-clique)."""
    n = len(adj)
    if n < k + 1:
        return False
    g = copy_adjacency(adj)
    while len(g) > k + 1:
        v = next((x for x in sorted(g) if len(g[x]) == k and all(b in g[a] for a, b in itertools.combinations(g[x], 2))), None)
        if v is None:
            return False
        for a in g.pop(v):
            g[a].discard(v)
    return all(len(nb) == k for nb in g.values())


def k_cliques(adj: Adjacency, k: int) -> list[frozenset[int]]:
    """All k-cliques of a chordal graph of clique number ≤ k+1 (e.g. a k-tree), from the
    maximal cliques of a perfect elimination order. O(n·C(k+1, k))."""
    order = perfect_elimination_order(adj)
    if order is None:
        raise ParameterError("the graph is not chordal")
    pos = {v: i for i, v in enumerate(order)}
    out: set[frozenset[int]] = set()
    for v in order:
        clique = frozenset({v} | {a for a in adj[v] if pos[a] > pos[v]})
        for s in itertools.combinations(sorted(clique), k):
            out.add(frozenset(s))
    return sorted(out, key=sorted)


def structural_hamming_distance(learned: Iterable[tuple], truth: Iterable[tuple]) -> int:
    """Arcs to add, remove or reverse to turn one DAG into the other, a reversal counted
    once; each DAG as its arcs (parent, child), by index or name.

    Examples
    --------
    >>> structural_hamming_distance([("A", "B"), ("B", "C")], [("B", "A"), ("B", "C"), ("C", "D")])
    2
    """
    a, b = set(learned), set(truth)
    flipped = {(p, c) for p, c in a - b if (c, p) in b}
    return len(a - b - flipped) + len(b - a - {(c, p) for p, c in flipped}) + len(flipped)
