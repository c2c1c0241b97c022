import itertools

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twbn.formulations.graphs import (
    elimination_width, exact_treewidth, fill_in, is_k_tree, is_tree_decomposition, k_cliques,
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
