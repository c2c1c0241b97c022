import itertools

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twbn.formulations.graphs import (
    degeneracy, elimination_width, exact_treewidth, fill_in, fill_to_k_tree, is_k_tree, is_tree_decomposition, k_cliques,
    k_tree_from_construction, min_degree_order, min_fill_order, moral_graph, perfect_elimination_order,
    tree_decomposition,
)


def adj_of(g: nx.Graph):
    return {v: set(g[v]) for v in g.nodes}


def test_moral_graph_marries_parents():
    # 0 -> 2 <- 1, 2 -> 3: moralising adds 0-1
    adj = moral_graph([(), (), (0, 1), (2,)])
    assert adj == {0: {1, 2}, 1: {0, 2}, 2: {0, 1, 3}, 3: {2}}


def test_elimination_width_by_hand():
    cycle = adj_of(nx.cycle_graph(5))
    assert elimination_width(cycle, [0, 1, 2, 3, 4]) == 2
    star = adj_of(nx.star_graph(4))  # centre 0
    assert elimination_width(star, [0, 1, 2, 3, 4]) == 4  # the centre first: its 4 leaves become a clique
    assert elimination_width(star, [1, 2, 3, 4, 0]) == 1
    with pytest.raises(ValueError):
        elimination_width(star, [0, 1])


@pytest.mark.parametrize("graph, tw", [
    (nx.path_graph(6), 1), (nx.cycle_graph(6), 2), (nx.complete_graph(5), 4),
    (nx.grid_2d_graph(3, 3), 3), (nx.petersen_graph(), 4), (nx.empty_graph(3), 0),
])
def test_exact_treewidth_known_values(graph, tw):
    g = nx.convert_node_labels_to_integers(graph)
    w, order = exact_treewidth(adj_of(g))
    assert w == tw and elimination_width(adj_of(g), order) == tw
    assert elimination_width(adj_of(g), min_fill_order(adj_of(g))) >= tw
    assert elimination_width(adj_of(g), min_degree_order(adj_of(g))) >= tw


@pytest.mark.parametrize("graph, d", [
    (nx.path_graph(6), 1), (nx.cycle_graph(6), 2), (nx.complete_graph(5), 4), (nx.grid_2d_graph(3, 3), 2),
    (nx.petersen_graph(), 3), (nx.empty_graph(3), 0), (nx.star_graph(5), 1),
])
def test_degeneracy_known_values(graph, d):
    # by hand: a tree always has a leaf; every vertex of a cycle or of the Petersen graph
    # has degree 2 or 3, and so on in each subgraph; a grid's corner has degree 2
    assert degeneracy(adj_of(nx.convert_node_labels_to_integers(graph))) == d


@settings(max_examples=80, deadline=None)
@given(n=st.integers(0, 9), edges=st.lists(st.tuples(st.integers(0, 8), st.integers(0, 8)), max_size=24))
def test_degeneracy_bounds_the_treewidth_and_every_edge_count(n, edges):
    """networkx's core numbers agree; the treewidth is at least the degeneracy d; and every
    set of m >= d + 1 vertices spans at most d·m - d(d+1)/2 edges (brute force)."""
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from((a, b) for a, b in edges if a < n and b < n and a != b)
    adj = adj_of(g)
    d = degeneracy(adj)
    assert d == max(nx.core_number(g).values(), default=0)
    if n:
        assert exact_treewidth(adj)[0] >= d
    for m in range(d + 1, n + 1):
        for subset in itertools.combinations(range(n), m):
            assert g.subgraph(subset).number_of_edges() <= d * m - d * (d + 1) // 2


def test_perfect_elimination_orders():
    chordal = {0: {1, 2}, 1: {0, 2, 3}, 2: {0, 1, 3}, 3: {1, 2}}
    order = perfect_elimination_order(chordal)
    assert order is not None and fill_in(chordal, order) == chordal
    assert perfect_elimination_order(adj_of(nx.cycle_graph(4))) is None


def test_k_trees_build_validate_and_cliques():
    k = 2
    adj = k_tree_from_construction(k, [0, 1, 2], [(3, [0, 1]), (4, [1, 3]), (5, [1, 3])])
    assert is_k_tree(adj, 2) and not is_k_tree(adj, 1)
    n = len(adj)
    assert sum(len(v) for v in adj.values()) // 2 == k * n - k * (k + 1) // 2
    cl = k_cliques(adj, k)
    assert len(cl) == (k + 1) + (n - k - 1) * k  # each new vertex adds k new k-cliques
    assert all(all(b in adj[a] for a, b in itertools.combinations(c, 2)) for c in cl)
    with pytest.raises(ValueError, match="not a k-clique"):
        k_tree_from_construction(2, [0, 1, 2], [(3, [0, 4])])
    assert not is_k_tree(adj_of(nx.cycle_graph(5)), 2)


def test_tree_decomposition_from_order():
    g = nx.convert_node_labels_to_integers(nx.grid_2d_graph(3, 4))
    adj = adj_of(g)
    order = min_fill_order(adj)
    bags, edges = tree_decomposition(adj, order)
    assert is_tree_decomposition(adj, bags, edges)
    assert max(len(b) for b in bags) - 1 == elimination_width(adj, order)
    disconnected = {0: {1}, 1: {0}, 2: set()}
    assert is_tree_decomposition(disconnected, *tree_decomposition(disconnected, [0, 1, 2]))


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 8), arcs=st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=14))
def test_is_acyclic_agrees_with_networkx(n, arcs):
    from twbn.formulations.graphs import is_acyclic

    arcs = [(a, b) for a, b in arcs if a < n and b < n]
    parents = [tuple(sorted({a for a, b in arcs if b == v})) for v in range(n)]
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(arcs)
    assert is_acyclic(parents) == nx.is_directed_acyclic_graph(g)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 9), k=st.integers(1, 4), seed=st.integers(0, 10**6),
       edges=st.lists(st.tuples(st.integers(0, 8), st.integers(0, 8)), max_size=16))
def test_a_graph_filled_to_a_k_tree_keeps_its_edges_and_its_order(n, k, seed, edges):
    """Any graph's fill-in along an order of width <= k, filled up: a k-tree (n >= k + 1)
    holding every edge, with the order still perfect (width exactly k), drawn or not."""
    import random

    g = {v: set() for v in range(n)}
    for a, b in edges:
        if a < n and b < n and a != b:
            g[a].add(b)
            g[b].add(a)
    order = list(range(n))
    random.Random(seed).shuffle(order)
    if elimination_width(g, order) > k:
        with pytest.raises(ValueError, match="width above"):
            fill_to_k_tree(fill_in(g, order), order, k)
        return
    tri = fill_in(g, order)
    for rng in (None, random.Random(seed)):
        tree = fill_to_k_tree(tri, order, k, rng)
        assert all(tri[v] <= tree[v] for v in tri)
        assert perfect_elimination_order(tree) is not None
        assert elimination_width(tree, order) == min(k, n - 1)
        assert fill_in(tree, order) == tree  # the order adds no edge: it is perfect
        if n >= k + 1:
            assert is_k_tree(tree, k)


def test_filling_to_a_k_tree_refuses_an_order_that_is_not_perfect():
    # 0's later neighbours 1 and 4 are not adjacent, and 1's filled clique {1, 2, 3} misses 4
    g = {0: {1, 4}, 1: {0}, 2: set(), 3: set(), 4: {0}}
    with pytest.raises(ValueError, match="not a perfect elimination order"):
        fill_to_k_tree(g, [0, 1, 2, 3, 4], 2)
    with pytest.raises(ValueError, match="every vertex"):
        fill_to_k_tree(g, [0, 1, 2, 3], 2)


def _scan_order(adj, cost):
    """The greedy order by its definition: each step, a scan of every vertex left for the
    least (cost, vertex)."""
    g = {v: set(nb) for v, nb in adj.items()}
    order = []
    while g:
        v = min(g, key=lambda x: (cost(g, x), x))
        nb = g.pop(v)
        for a in nb:
            g[a].discard(v)
            g[a].update(nb - {a})
        order.append(v)
    return order


def _fill(g, v):
    return sum(1 for a, b in itertools.combinations(g[v], 2) if b not in g[a])


@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 14), edges=st.lists(st.tuples(st.integers(0, 13), st.integers(0, 13)), max_size=40),
       seed=st.integers(0, 10**6))
def test_greedy_orders_are_the_scan_by_definition(n, edges, seed):
    # the heap only recomputes costs near the vertex eliminated: it must pick what a full
    # scan picks at every step, ties included
    import random

    from twbn.formulations.graphs import random_greedy_order

    adj = {v: set() for v in range(n)}
    for a, b in edges:
        if a < n and b < n and a != b:
            adj[a].add(b)
            adj[b].add(a)
    assert min_fill_order(adj) == _scan_order(adj, _fill)
    assert min_degree_order(adj) == _scan_order(adj, lambda g, v: len(g[v]))
    rng = random.Random(seed)
    draws = {v: rng.random() for v in adj}
    assert random_greedy_order(adj, random.Random(seed)) == _scan_order(adj, lambda g, v: (_fill(g, v), draws[v]))
    assert random_greedy_order(adj, random.Random(seed), fill=False) == \
        _scan_order(adj, lambda g, v: (len(g[v]), draws[v]))
