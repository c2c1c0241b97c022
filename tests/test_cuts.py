"""The cluster-cut ILP (``--method cuts``): its separation against brute force over all
clusters, and its optima against the exact DPs in all three modes."""

import itertools
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twbn.formulations.cluster_ilp import FamilyTable, cycle_clusters, restrict_to_graph
from twbn.formulations.graphs import elimination_width, k_tree_from_construction, moral_graph
from twbn.formulations.problem import InfeasibleError, Problem
from twbn.formulations.verify import verify_result
from twbn.scoring.cache import ScoreCache
from twbn.solvers.cuts.cluster_separation import MIN_VIOLATION, exact_clusters, greedy_clusters, local_kclusters, local_matroid_rows
from twbn.solvers.cuts.branch_and_cut import Backoff, sink_heuristic, solve_cuts
from twbn.solvers.registry import solve
from twbn.solvers.exact.superstructure_dp import best_dag_in_graph
from twbn.solvers.method_options import CutsOptions
from tests.helpers import random_cache


def _random_point(table: FamilyTable, rng: random.Random) -> np.ndarray:
    """A point of the convexity polytope (2): random weights per variable, normalised,
    with most mass on few families so that clusters get violated."""
    x = np.zeros(table.size)
    for v in range(table.n):
        lo, hi = table.start[v], table.start[v + 1]
        w = np.array([rng.random() ** 4 for _ in range(hi - lo)])
        x[lo:hi] = w / w.sum()
    return x


def _max_violation(table: FamilyTable, x: np.ndarray, k: int = 1) -> float:
    return max((table.cluster_violation(x, c, k) for r in range(k + 1, table.n + 1)
                for c in itertools.combinations(range(table.n), r)), default=-np.inf)


def _dag_point(table: FamilyTable, rng: random.Random) -> np.ndarray:
    """The 0/1 point of a random DAG of cached families: a random order, each variable
    taking a random family whose parents all precede it (∅ is always cached)."""
    order = list(range(table.n))
    rng.shuffle(order)
    pos = {v: i for i, v in enumerate(order)}
    x = np.zeros(table.size)
    for v in range(table.n):
        fits = [f for f in range(table.start[v], table.start[v + 1]) if all(pos[u] < pos[v] for u in table.parents[f])]
        x[rng.choice(fits)] = 1.0
    return x


def test_cluster_row_by_hand():
    # a: {b}, {} ; b: {a}, {a,c} ; c: {} — C = {a, b} counts I(b→a), I(a→b), I(ac→b)
    cache = ScoreCache.from_mapping(["a", "b", "c"], [{(1,): -1.0, (): -2.0}, {(0,): -1.0, (0, 2): -0.5}, {(): 0.0}])
    table = FamilyTable.from_cache(cache)
    fams = {(int(table.child[f]), table.parents[f]) for f in table.cluster_families([0, 1])}
    assert fams == {(0, (1,)), (1, (0,)), (1, (0, 2))}
    x = np.zeros(table.size)
    for f in range(table.size):
        if (int(table.child[f]), table.parents[f]) in {(0, (1,)), (1, (0, 2))}:
            x[f] = 1.0
    x[[f for f in range(table.size) if table.child[f] == 2]] = 1.0
    assert table.cluster_violation(x, [0, 1]) == pytest.approx(1.0)  # 2 − (2 − 1): the 2-cycle a ⇄ b
    assert cycle_clusters(table.network(x)) == [[0, 1]]


def test_sparse_form_by_hand():
    # C = {a, b} of the case above: the row I(b→a) + I(a→b) + I(ac→b) ≤ 1 has 3 of the 4
    # families of a and b; the other form keeps the fourth: I(∅→a) ≥ 2 − 1 (b's families
    # both hold a, so a must come first, with no parent)
    cache = ScoreCache.from_mapping(["a", "b", "c"], [{(1,): -1.0, (): -2.0}, {(0,): -1.0, (0, 2): -0.5}, {(): 0.0}])
    table = FamilyTable.from_cache(cache)
    fams, lhs, rhs = table.sparse_form(table.cluster_families([0, 1]), 1, [0, 1])
    assert [(int(table.child[f]), table.parents[f]) for f in fams] == [(0, ())]
    assert (lhs, rhs) == (1, None)
    # a row with fewer entries than its complement stays as it is
    fams, lhs, rhs = table.sparse_form(np.array([0]), 0, [0])
    assert fams.tolist() == [0] and (lhs, rhs) == (None, 0)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(3, 7), seed=st.integers(0, 10**6))
def test_sparse_form_has_the_same_slack_on_the_convexity_polytope(n, seed):
    # the two forms of a row (3), (4) or (5) are one constraint wherever each variable's
    # family weights sum to 1 (2): the slack is the same at every such point, fractional ones too
    rng = random.Random(seed)
    table = FamilyTable.from_cache(random_cache(n, seed=seed))
    for _ in range(10):
        members = sorted(rng.sample(range(n), rng.randint(2, n)))
        k = rng.randint(1, len(members) - 1)
        classes = _random_classes(n, rng)
        rows = [(table.cluster_families(members, k), len(members) - k, members),
                (*table.matroid_families(classes, k), np.flatnonzero(classes >= 0).tolist())]
        for fams, rhs, cluster in rows:
            sparse, lo, hi = table.sparse_form(fams, rhs, cluster)
            of_c = sum(table.start[v + 1] - table.start[v] for v in cluster)
            assert len(sparse) == min(len(fams), of_c - len(fams))
            x = _random_point(table, rng)
            given_slack = rhs - x[fams].sum()
            slack = hi - x[sparse].sum() if lo is None else x[sparse].sum() - lo
            assert slack == pytest.approx(given_slack, abs=1e-9)


def test_cycle_clusters_are_the_strong_components():
    parents = [(2,), (0,), (1,), (2,), (5,), (4,)]  # 0→1→2→0, 3 hangs off 2, 4 ⇄ 5
    assert sorted(cycle_clusters(parents)) == [[0, 1, 2], [4, 5]]
    assert cycle_clusters([(), (0,), (0, 1)]) == []


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 6), seed=st.integers(0, 10**6))
def test_exact_separation_finds_the_most_violated_cluster(n, seed):
    table = FamilyTable.from_cache(random_cache(n, seed, max_size=3, density=0.6))
    x = _random_point(table, random.Random(seed))
    best = _max_violation(table, x)
    found, complete = exact_clusters(table, x)
    assert complete
    if best > MIN_VIOLATION + 1e-9:
        assert found and table.cluster_violation(x, found[0]) == pytest.approx(best, abs=1e-9)
    elif best < MIN_VIOLATION - 1e-9:
        assert found == []
    for c in found + greedy_clusters(table, x):  # every reported cluster is violated
        assert table.cluster_violation(x, c) > MIN_VIOLATION


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 12), seed=st.integers(0, 10**6), k=st.integers(1, 3), data=st.data())
def test_cluster_families_are_those_with_the_child_and_k_parents_in_the_cluster(n, seed, k, data):
    table = FamilyTable.from_cache(random_cache(n, seed, max_size=3, density=0.7))
    cluster = data.draw(st.lists(st.integers(0, n - 1), min_size=1, unique=True))
    want = [f for f in range(table.size)
            if table.child[f] in cluster and len(set(table.parents[f]) & set(cluster)) >= k]
    assert table.cluster_families(cluster, k).tolist() == sorted(want, key=lambda f: (table.child[f], f))


def _greedy_by_definition(table: FamilyTable, x: np.ndarray, max_cuts: int = 50) -> dict:
    """greedy_clusters as its docstring states it, each gain summed again over the support
    at every step (in the same fixed-point units, so that ties break alike): clusters to
    violations."""
    supp = np.flatnonzero((x > 1e-6) & (table.n_parents >= 1))
    member, child, n = table.member[supp], table.child[supp], table.n
    w, one = np.rint(x[supp] * 2.0 ** 32), 2.0 ** 32
    found = {}
    for s in np.unique(child):
        in_c = np.zeros(n, dtype=bool)
        in_c[s] = True
        hit, value = member[:, s].copy(), 0.0
        for _ in range(n - 1):
            gain = np.bincount(child, weights=w * hit, minlength=n) + w[in_c[child] & ~hit] @ member[in_c[child] & ~hit]
            gain -= one
            gain[in_c] = -np.inf
            u = int(np.argmax(gain))
            value += gain[u]
            if value < -one:
                break
            in_c[u] = True
            hit |= member[:, u]
            if value > round(MIN_VIOLATION * one):
                found[frozenset(np.flatnonzero(in_c).tolist())] = table.cluster_violation(x, np.flatnonzero(in_c))
                break
    best = sorted(found.items(), key=lambda kv: -kv[1])[:max_cuts]
    return {c: v for c, v in best if v > MIN_VIOLATION}


@settings(max_examples=60, deadline=None)
@given(n=st.integers(3, 14), seed=st.integers(0, 10**6), size=st.integers(1, 4))
def test_greedy_separation_grows_the_clusters_its_definition_grows(n, seed, size):
    """The compiled greedy (gains kept up to date as C grows) finds exactly the clusters
    of the plain one that sums every gain again, each reported at its violation."""
    table = FamilyTable.from_cache(random_cache(n, seed, max_size=size, density=0.7))
    x = _random_point(table, random.Random(seed))
    want = _greedy_by_definition(table, x)
    got = greedy_clusters(table, x)
    assert {frozenset(c) for c in got} == set(want)
    viol = [table.cluster_violation(x, c) for c in got]
    assert viol == sorted(viol, reverse=True) or np.allclose(viol, sorted(viol, reverse=True), atol=1e-9)
    assert all(v > MIN_VIOLATION for v in viol)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 8), seed=st.integers(0, 10**6), k=st.sampled_from([None, 1, 2, 3]))
def test_sink_rounding_gives_a_dag_and_an_order_within_the_bound(n, seed, k):
    table = FamilyTable.from_cache(random_cache(n, seed, max_size=3, density=0.5))
    chosen, order = sink_heuristic(table, _random_point(table, random.Random(seed)), k)
    if not chosen:  # allowed to give up, but only under a bound
        assert k is not None
        return
    assert [int(table.child[f]) for f in chosen] == list(range(n))
    parents = [table.parents[f] for f in chosen]
    assert cycle_clusters(parents) == []
    pos = {v: i for i, v in enumerate(order)}
    assert sorted(order) == list(range(n))
    assert all(pos[p] > pos[v] for v in range(n) for p in parents[v])  # sinks first
    if k is not None:
        assert elimination_width(moral_graph(parents), order) <= k


def test_sink_rounding_by_hand():
    # x is the integral triangle a → b, {a, b} → c (families f0 a←∅, f1 b←{a}, f3 c←{a,b}).
    cache = ScoreCache.from_mapping(["a", "b", "c"], [{(): -1.0}, {(0,): -1.0, (): -2.0},
                                                       {(0, 1): -1.0, (0,): -2.0, (): -3.0}], [2, 2, 2], {})
    table = FamilyTable.from_cache(cache)
    x = np.zeros(table.size)
    x[[0, 1, 3]] = 1.0
    # Unbounded: weight − blocked mass is a 1 − 2, b 1 − 1, c 1 − 0, so c is the first
    # sink and keeps {a, b}; then b (1 − 0) beats a (1 − 1): the triangle comes back.
    chosen, order = sink_heuristic(table, x, None)
    assert [table.parents[f] for f in chosen] == [(), (0,), (0, 1)]
    assert order == [2, 1, 0]
    # k = 1: c ← {a, b} has |W ∪ N| = 2 and is not allowed, so c's best weight is 0 and
    # b (1 − 0) goes first, keeping {a}; then a (1 − 0, c ← {a} has x = 0) beats c (0),
    # takes ∅ and blocks c ← {a}: c ← ∅.
    chosen, order = sink_heuristic(table, x, 1)
    assert [table.parents[f] for f in chosen] == [(), (0,), ()]
    assert order == [1, 0, 2]


@settings(max_examples=40, deadline=None)
@given(n=st.integers(3, 7), seed=st.integers(0, 10**6))
def test_k_cluster_rows_hold_on_every_dag(n, seed):
    # (4) must be valid: no cluster and no k cuts off a DAG
    table = FamilyTable.from_cache(random_cache(n, seed, max_size=3, density=0.6))
    x = _dag_point(table, random.Random(seed))
    assert cycle_clusters(table.network(x)) == []
    for k in (1, 2, 3):
        assert _max_violation(table, x, k) <= 1e-9


@settings(max_examples=40, deadline=None)
@given(n=st.integers(3, 6), seed=st.integers(0, 10**6), k=st.sampled_from([2, 3]))
def test_k_cluster_separation_against_brute_force(n, seed, k):
    table = FamilyTable.from_cache(random_cache(n, seed, max_size=3, density=0.6))
    x = _random_point(table, random.Random(seed))
    best = _max_violation(table, x, k)
    found, complete = exact_clusters(table, x, k=k)
    assert complete
    if best > MIN_VIOLATION + 1e-9:
        assert found and table.cluster_violation(x, found[0], k) == pytest.approx(best, abs=1e-9)
    elif best < MIN_VIOLATION - 1e-9:
        assert found == []
    local = local_kclusters(table, x, k, greedy_clusters(table, x))
    for c in found + local:  # every reported cluster is violated, and has more than k members
        assert len(c) > k and table.cluster_violation(x, c, k) > MIN_VIOLATION


def _random_classes(n: int, rng: random.Random) -> np.ndarray:
    """A random cluster of ≥ 2 variables split into random parallel classes (−1 outside)."""
    size = rng.randint(2, n)
    members = rng.sample(range(n), size)
    classes = np.full(n, -1)
    for u in members:
        classes[u] = rng.randrange(size)
    _, classes[members] = np.unique(classes[members], return_inverse=True)
    return classes


@settings(max_examples=60, deadline=None)
@given(n=st.integers(3, 7), seed=st.integers(0, 10**6), r=st.sampled_from([1, 2, 3]))
def test_matroid_rows_hold_on_every_dag(n, seed, r):
    # (5) for any partition into parallel classes and any r: no DAG of cached families
    # violates it, and some DAG meets it with equality when C's members can take any parents
    rng = random.Random(seed)
    table = FamilyTable.from_cache(random_cache(n, seed=seed))
    for _ in range(10):
        classes = _random_classes(n, rng)
        fams, rhs = table.matroid_families(classes, r)
        for _ in range(5):
            x = _dag_point(table, rng)
            assert x[fams].sum() <= rhs + 1e-9


def test_matroid_row_with_singleton_classes_is_the_k_cluster_row():
    table = FamilyTable.from_cache(random_cache(6, seed=3))
    for k in (1, 2, 3):
        for c in ([0, 1, 2], [1, 3, 4, 5], list(range(6))):
            classes = np.full(6, -1)
            classes[c] = np.arange(len(c))
            fams, rhs = table.matroid_families(classes, k)
            assert sorted(fams.tolist()) == sorted(table.cluster_families(c, k).tolist())
            assert rhs == len(c) - min(k, len(c))


def test_matroid_row_by_hand():
    # C = {a, b, c, d} with a ∥ b, r = 2, rhs 4 − 2: W → v counts iff W meets v's class or
    # meets two classes. Counted: b → a, a → b, {a, d} → c, {a, c} → d; not counted: c → a,
    # c → b, d → c, {a, b} → d (one class, not d's), b → d, and every ∅.
    sets = [{(1,): 0.0, (2,): 0.0, (): 0.0}, {(0,): 0.0, (2,): 0.0, (): 0.0},
            {(0, 3): 0.0, (3,): 0.0, (): 0.0}, {(1,): 0.0, (0, 1): 0.0, (0, 2): 0.0, (): 0.0}]
    table = FamilyTable.from_cache(ScoreCache.from_mapping(list("abcd"), sets))
    fams, rhs = table.matroid_families(np.array([0, 0, 1, 2]), 2)
    assert {(int(table.child[f]), table.parents[f]) for f in fams} == {(0, (1,)), (1, (0,)), (2, (0, 3)), (3, (0, 2))}
    assert rhs == 2
    # the DAG a ← ∅, b ← {a}, d ← {a, b}, c ← {a, d} meets it with equality (b and c count)
    dag = {(0, ()), (1, (0,)), (3, (0, 1)), (2, (0, 3))}
    x = np.array([1.0 if (int(table.child[f]), table.parents[f]) in dag else 0.0 for f in range(table.size)])
    assert cycle_clusters(table.network(x)) == [] and x[fams].sum() == 2


@settings(max_examples=40, deadline=None)
@given(n=st.integers(4, 7), seed=st.integers(0, 10**6), r=st.sampled_from([2, 3]))
def test_matroid_separation_returns_violated_rows(n, seed, r):
    rng = random.Random(seed)
    table = FamilyTable.from_cache(random_cache(n, seed=seed))
    x = _random_point(table, rng)
    for classes in local_matroid_rows(table, x, r, [list(range(n))]):
        fams, rhs = table.matroid_families(classes, r)
        assert x[fams].sum() - rhs > MIN_VIOLATION
        assert len(np.unique(classes[classes >= 0])) >= r + 1


def test_two_cluster_row_cuts_a_point_no_cluster_row_does():
    # each of a, b, c takes the other two as parents at 1/2, else ∅: (3) holds for every
    # cluster ({a,b,c}: 1.5 ≤ 2; a pair: 1/2 + 1/2 ≤ 1), but (4) with k = 2 for {a,b,c}
    # counts the three two-parent families: 1.5 > 3 − 2
    fams = [{(1, 2): -1.0, (): -2.0}, {(0, 2): -1.0, (): -2.0}, {(0, 1): -1.0, (): -2.0}]
    table = FamilyTable.from_cache(ScoreCache.from_mapping(["a", "b", "c"], fams))
    x = np.full(table.size, 0.5)
    assert _max_violation(table, x, 1) <= 0
    assert greedy_clusters(table, x) == [] and exact_clusters(table, x)[0] == []
    assert table.cluster_violation(x, [0, 1, 2], 2) == pytest.approx(0.5)
    assert exact_clusters(table, x, k=2)[0] == [[0, 1, 2]]
    assert local_kclusters(table, x, 2, []) == [[0, 1, 2]]
    with pytest.raises(ValueError, match="k ≥ 1"):
        exact_clusters(table, x, k=0)


def test_greedy_separation_finds_a_fractional_three_cycle():
    # 0 ← 2, 1 ← 0, 2 ← 1 each at 0.7, else ∅: C = {0,1,2} has 2.1 > 2, no pair is violated
    fams = [{(2,): -1.0, (): -2.0}, {(0,): -1.0, (): -2.0}, {(1,): -1.0, (): -2.0}]  # noqa: E501
    table = FamilyTable.from_cache(ScoreCache.from_mapping(["a", "b", "c"], fams))
    x = np.where(np.array([bool(p) for p in table.parents]), 0.7, 0.3)
    assert table.cluster_violation(x, [0, 1]) < 0
    assert greedy_clusters(table, x) == [[0, 1, 2]]
    assert exact_clusters(table, x)[0] == [[0, 1, 2]]


@pytest.mark.parametrize("n,seed", [(8, 0), (10, 1), (12, 2), (14, 3), (14, 4)])
def test_unbounded_cuts_equals_unbounded_dp(n, seed):
    cache = random_cache(n, seed, max_size=2, density=0.3)
    problem = Problem(cache)
    exact = solve(problem, "dp")
    sol = solve(problem, "cuts")
    assert sol.status == "optimal"
    assert sol.score == pytest.approx(exact.score, abs=1e-6)
    assert sol.bound == pytest.approx(exact.score, abs=1e-6)
    assert sol.stats["root_bound"] >= exact.score - 1e-6
    assert verify_result(cache, sol.to_json(problem), None) == []


@pytest.mark.parametrize("cluster_k,matroid", [(1, False), (4, False), (3, True)])
def test_unbounded_cuts_with_and_without_k_cluster_rows(cluster_k, matroid):
    # the k-cluster and matroid rows only cut fractional points: either way the DP's optimum
    cache = random_cache(12, 7, max_size=3, density=0.4)
    problem = Problem(cache)
    sol = solve_cuts(problem, CutsOptions(cluster_k=cluster_k, matroid=matroid))
    assert sol.status == "optimal" and sol.stats["cluster_k"] == cluster_k
    assert sol.score == pytest.approx(solve(problem, "dp").score, abs=1e-6)
    if cluster_k == 1:
        assert sol.stats["kcluster_cuts"] == 0
    if not matroid:
        assert sol.stats["matroid_cuts"] == 0
    with pytest.raises(ValueError, match="cluster_k"):
        solve_cuts(problem, CutsOptions(cluster_k=0))


def test_backoff_sits_out_optional_rounds_after_fruitless_calls():
    # worked by hand: fruitless calls sit out 1, 2, 4, then 4 (the limit) optional rounds;
    # a round with nothing else found runs anyway; a fruitful call ends the backoff
    b = Backoff(4)
    ran = []
    script = iter([False, False, False, False, True, False, False])  # what each call finds
    for optional in [True] * 13 + [False] + [True] * 3:
        due = b.due(optional)
        ran.append(due)
        if due:
            b.record(next(script))
    #           call  sit 1  call  sit 2        call  sit 4                     call  sit 4 …
    assert ran == [True, False, True, False, False, True, False, False, False, False, True, False, False,
                   # not optional: runs though waiting and finds rows; after it, sit 1 again
                   True, True, False, True]


@pytest.mark.parametrize("name", ["housing", "zoo"])
def test_unbounded_cuts_on_real_caches(name):
    from twbn.scoring.data import read_csv
    from twbn.scoring.parent_sets import build_cache
    from tests.conftest import BUNDLED

    cache = build_cache(read_csv(BUNDLED / f"{name}.csv.gz"), score="bic", max_parents=3, pruning="all", progress=False)[0]
    problem = Problem(cache)
    exact = solve(problem, "dp")
    sol = solve(problem, "cuts")
    assert sol.status == "optimal"
    assert sol.score == pytest.approx(exact.score, rel=1e-9)
    assert verify_result(cache, sol.to_json(problem), None) == []


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("seed", [0, 1])
def test_bounded_cuts_equals_dp(k, seed):
    cache = random_cache(6, seed, max_size=3, density=0.4)
    problem = Problem(cache, k)
    exact = solve(problem, "dp")
    sol = solve(problem, "cuts")
    assert sol.status == "optimal"
    assert sol.score == pytest.approx(exact.score, abs=1e-6)
    assert sol.width <= k
    assert verify_result(cache, sol.to_json(problem), k) == []


def test_bounded_cuts_enforces_the_fill_rows_it_holds_back():
    """The 8d rows enter the LP only where violated, and must still bind. Without them the
    model asks only for an order in which each vertex has ≤ k later moral neighbours
    (degeneracy ≤ k), and here the only network of score 0 has a moral graph of
    degeneracy 2 but treewidth 3: 2 ← 0, 3 ← {0, 1}, 4 ← {1, 3}, 5 ← {2, 4} (found by
    enumerating the 6-vertex DAGs). Each variable may also take ∅ at a cost of 10, so the
    best network of treewidth ≤ 2 drops one family: −10."""
    from twbn.formulations.graphs import exact_treewidth

    target = [(), (), (0,), (0, 1), (1, 3), (2, 4)]
    adj = moral_graph(target)
    assert exact_treewidth(adj)[0] == 3
    order = [5, 2, 0, 1, 3, 4]  # each vertex has ≤ 2 later neighbours (no fill-in counted)
    assert max(sum(order.index(u) > order.index(v) for u in adj[v]) for v in adj) == 2
    families = [{(): 0.0} if not ps else {(): -10.0, ps: 0.0} for ps in target]
    cache = ScoreCache.from_mapping([f"v{i}" for i in range(6)], families, None, {})
    problem = Problem(cache, 2)
    sol = solve_cuts(problem)
    assert sol.status == "optimal"
    assert sol.score == pytest.approx(-10.0) == solve(problem, "dp").score
    assert verify_result(cache, sol.to_json(problem), 2) == []


def _random_k_tree(n: int, k: int, rng: random.Random):
    verts = list(range(n))
    rng.shuffle(verts)
    cliques = [tuple(c) for c in itertools.combinations(verts[:k + 1], k)]
    attachments = []
    for v in verts[k + 1:]:
        c = rng.choice(cliques)
        attachments.append((v, c))
        cliques += [tuple(sorted(set(s) | {v})) for s in itertools.combinations(c, k - 1)]
    return k_tree_from_construction(k, verts[:k + 1], attachments)


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_within_a_k_tree_equals_the_superstructure_dp(k, seed):
    rng = random.Random(seed)
    cache = random_cache(10, seed, max_size=3, density=0.7)
    adj = _random_k_tree(10, k, rng)
    problem = Problem(cache, k)
    _, expected, _ = best_dag_in_graph(problem.candidates, adj)
    sol = solve_cuts(problem, within=adj)
    assert sol.status == "optimal"
    assert sol.score == pytest.approx(expected, abs=1e-6)
    assert sol.stats["mode"] == "within graph"
    assert verify_result(cache, sol.to_json(problem), k) == []


def test_within_rejects_graphs_that_are_not_chordal_or_too_wide():
    problem = Problem(random_cache(4, 0), 1)
    cycle = {0: {1, 3}, 1: {0, 2}, 2: {1, 3}, 3: {2, 0}}
    with pytest.raises(ValueError, match="not chordal"):
        restrict_to_graph(problem, cycle)
    triangle_plus = {0: {1, 2}, 1: {0, 2}, 2: {0, 1, 3}, 3: {2}}
    with pytest.raises(ValueError, match="treewidth 2 > 1"):
        restrict_to_graph(problem, triangle_plus)
    # every variable must keep a family: here 1 needs a parent, and is isolated
    cache = ScoreCache.from_mapping(["a", "b"], [{(): 0.0}, {(0,): 0.0}])
    with pytest.raises(InfeasibleError, match="'b'"):
        restrict_to_graph(Problem(cache, 1), {0: set(), 1: set()})


def test_warm_start_is_used_and_never_lost():
    cache = random_cache(10, 5, max_size=2, density=0.4)
    problem = Problem(cache, 2)
    start = solve(problem, "kg", seed=0, time_limit=1.0)
    sol = solve_cuts(problem, warm_start=start, time_limit=0.5)
    assert sol.stats["warm_start_score"] == pytest.approx(start.score)
    assert sol.score >= start.score - 1e-9
    assert verify_result(cache, sol.to_json(problem), 2) == []


def test_cuts_rejects_other_backends():
    from twbn.solvers.registry import MethodUnavailable

    with pytest.raises(MethodUnavailable, match="method cuts has no backend 'highs'; choose one of scip"):
        solve(Problem(random_cache(3, 0)), "cuts", solver="highs")
