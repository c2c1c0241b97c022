"""The minor density rows (6) of solvers/cuts/minor_separation.py: by hand, validity on every
graph of treewidth ≤ k (against formulations/graphs.exact_treewidth), and inside the
bounded cluster-cut ILP against the exact DP."""

import itertools
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twbn.formulations.graphs import exact_treewidth
from twbn.formulations.ktree_codes import random_k_tree
from twbn.formulations.problem import Problem
from twbn.formulations.verify import verify_result
from twbn.solvers.cuts.branch_and_cut import solve_cuts
from twbn.solvers.cuts.minor_separation import MinorRow, minor_density_rows
from twbn.solvers.registry import solve
from twbn.solvers.method_options import CutsOptions
from tests.helpers import random_cache


def _weights(n, edges, value=1.0):
    t = np.zeros((n, n))
    for a, b in edges:
        t[a, b] = t[b, a] = value
    return t


def test_k4_violates_its_density_row_by_one():
    rows = minor_density_rows(_weights(4, itertools.combinations(range(4), 2)), 2)
    # 6 edges on 4 vertices, at most 2·4 − 3 = 5 in a graph of treewidth 2
    assert rows == [MinorRow(tuple(itertools.combinations(range(4), 2)), (), 5.0, 1.0)]


def test_subdivided_k4_is_found_by_contraction():
    """K4 on 0–3 with 0–1 replaced by the path 0–4–5–1 and 2–3 by 2–6–3: 9 edges on 7
    vertices (≤ 2·7 − 3 = 11, so no density row is violated), treewidth 3. Contracting the
    two paths gives K4: pairs + 2·tree = 6 + 2·3 = 12 > 2·7 − 3 = 11."""
    edges = [(0, 4), (4, 5), (5, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 6), (6, 3)]
    t = _weights(7, edges)
    assert exact_treewidth({v: {b for a, b in edges if a == v} | {a for a, b in edges if b == v} for v in range(7)})[0] == 3
    rows = minor_density_rows(t, 2)
    assert len(rows) >= 1
    row = rows[0]
    assert row.violation == pytest.approx(1.0)
    assert row.rhs == 11.0
    assert len(row.pairs) == 6 and len(row.tree) == 3
    assert set(row.pairs) | set(row.tree) == {tuple(sorted(e)) for e in edges}


def test_no_row_on_a_graph_of_treewidth_two():
    # an 8-cycle with one chord: treewidth 2
    edges = [(i, (i + 1) % 8) for i in range(8)] + [(0, 4)]
    assert minor_density_rows(_weights(8, edges), 2) == []


def test_fractional_k4_minor_row_by_hand():
    """K4 with every edge at 0.9: 5.4 > 5, violated by 0.4; at 0.8: 4.8, not violated."""
    k4 = list(itertools.combinations(range(4), 2))
    assert minor_density_rows(_weights(4, k4, 0.9), 2)[0].violation == pytest.approx(0.4)
    assert minor_density_rows(_weights(4, k4, 0.8), 2) == []


def _adjacency(n, edges):
    adj = {v: set() for v in range(n)}
    for a, b in edges:
        adj[a].add(b)
        adj[b].add(a)
    return adj


@settings(max_examples=60, deadline=None)
@given(n=st.integers(5, 9), k=st.sampled_from([1, 2, 3]), seed=st.integers(0, 10**6))
def test_rows_hold_on_every_graph_of_treewidth_at_most_k(n, k, seed):
    """Rows separated at random fractional points, checked on random subgraphs of random
    k-trees (treewidth ≤ k, confirmed exactly): the row's validity, not the search, is
    under test, so the points are unrelated to the graphs."""
    rng = random.Random(seed)
    if n < k + 2:
        return
    w = np.array([[rng.random() for _ in range(n)] for _ in range(n)])
    w = np.triu(w, 1) + np.triu(w, 1).T
    rows = minor_density_rows(w, k)
    for row in rows:
        assert row.violation == pytest.approx(row.lhs(w, k) - row.rhs)
        assert row.violation > 0
    for _ in range(10):
        tree = random_k_tree(n, k, rng)
        edges = [(a, b) for a in tree for b in tree[a] if a < b and rng.random() < 0.8]
        assert exact_treewidth(_adjacency(n, edges))[0] <= k
        t = _weights(n, edges)
        for row in rows:
            assert row.lhs(t, k) <= row.rhs + 1e-9


@settings(max_examples=40, deadline=None)
@given(n=st.integers(5, 8), seed=st.integers(0, 10**6))
def test_every_k4_subdivision_violates_a_found_row(n, seed):
    """For k = 2 a graph has treewidth > 2 iff it has a K4 minor, so an integral point of
    treewidth 3 violates some row (6). Random subdivisions of K4 (each edge a path through
    0–2 extra vertices, n vertices in all), relabelled: the search must find a row."""
    rng = random.Random(seed)
    corners = [0, 1, 2, 3]
    edges, nxt = [], 4
    spare = n - 4
    for a, b in itertools.combinations(corners, 2):
        extra = min(spare, rng.randint(0, 2))
        spare -= extra
        path = [a, *range(nxt, nxt + extra), b]
        nxt += extra
        edges += list(zip(path, path[1:]))
    m = nxt
    perm = rng.sample(range(m), m)
    edges = [(perm[a], perm[b]) for a, b in edges]
    assert exact_treewidth(_adjacency(m, edges))[0] == 3
    rows = minor_density_rows(_weights(m, edges), 2)
    assert rows and rows[0].violation == pytest.approx(1.0)


@pytest.mark.parametrize("seed", [pytest.param(0, marks=pytest.mark.slow), 1, 2])  # seed 0: 8 s, the rest < 1 s
def test_bounded_cuts_with_minor_rows_equals_dp(seed):
    cache = random_cache(7, seed, max_size=2, density=0.6)
    problem = Problem(cache, 2)
    exact = solve(problem, "dp")
    for minor in (True, False):
        sol = solve_cuts(problem, CutsOptions(minor=minor), seed=0)
        assert sol.status == "optimal"
        assert sol.score == pytest.approx(exact.score, abs=1e-6)
        assert verify_result(cache, sol.to_json(problem), 2) == []


@pytest.mark.slow  # 10-13 s
def test_minor_rows_strengthen_the_root_on_a_dense_cache():
    """A cache whose unbounded optimum is dense: the rows must fire, and the root bound with
    them must be at least as strong (≤) as without, and at or above the optimum."""
    cache = random_cache(8, 3, max_size=2, density=0.9)
    problem = Problem(cache, 2)
    exact = solve(problem, "dp")
    with_rows = solve_cuts(problem, CutsOptions(minor=True), seed=0)
    without = solve_cuts(problem, CutsOptions(minor=False), seed=0)
    assert with_rows.stats["minor_cuts"] > 0
    assert with_rows.score == pytest.approx(exact.score, abs=1e-6)
    # with them the root closes at the optimum; without them SCIP branches, and its root
    # bound, where it reports one (not always: at 1,068 nodes it reported none), is no tighter
    assert with_rows.stats["root_bound"] == pytest.approx(exact.score, abs=1e-6)
    assert without.stats["root_bound"] is None or without.stats["root_bound"] >= with_rows.stats["root_bound"] - 1e-6


def test_moral_weights_by_hand_and_on_integral_points():
    """Families of a 4-variable cache: 2 ← {0, 1} at 0.5 and 2 ← {0} at 0.5; 0 ← {2} at
    0.3; 3 ← {0, 1} at 0.6. Pair {0, 2}: arcs 0.5 + 0.5 + 0.3 = 1.3, clipped to 1. Pair
    {0, 1}: co-parents of 2 (0.5) or of 3 (0.6): 0.6, not their sum (two children may
    share both parents). Pair {1, 2}: 0.5. At an integral point: the moral graph."""
    from twbn.formulations.cluster_ilp import FamilyTable
    from twbn.formulations.graphs import moral_graph
    from twbn.scoring.cache import ScoreCache

    fams = [{(): -1.0, (2,): -0.5}, {(): -1.0}, {(): -1.0, (0, 1): -0.2, (0,): -0.4}, {(): -1.0, (0, 1): -0.3}]
    table = FamilyTable.from_cache(ScoreCache.from_mapping(["a", "b", "c", "d"], fams, [2, 2, 2, 2], {}))
    x = np.zeros(table.size)
    pick = {(0, (2,)): 0.3, (0, ()): 0.7, (1, ()): 1.0, (2, (0, 1)): 0.5, (2, (0,)): 0.5, (3, (0, 1)): 0.6, (3, ()): 0.4}
    for f in range(table.size):
        x[f] = pick.get((int(table.child[f]), table.parents[f]), 0.0)
    w = table.moral_weights(x)
    assert w[0, 2] == w[2, 0] == 1.0
    assert w[0, 1] == pytest.approx(0.6)
    assert w[1, 2] == pytest.approx(0.5)
    assert w[0, 3] == pytest.approx(0.6) and w[1, 3] == pytest.approx(0.6)
    assert w[2, 3] == 0.0
    rng = random.Random(4)
    for _ in range(20):
        chosen = [rng.randrange(table.start[v], table.start[v + 1]) for v in range(table.n)]
        xi = np.zeros(table.size)
        xi[chosen] = 1.0
        adj = moral_graph([table.parents[f] for f in chosen])
        expect = np.array([[1.0 if b in adj[a] else 0.0 for b in range(4)] for a in range(4)])
        assert np.array_equal(table.moral_weights(xi), expect)
