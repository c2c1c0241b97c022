"""S2 and S2+: the Informative Score by hand, S2+'s A* against all k-trees, certified
results that never beat the exact optimum, and both phase-2 engines agreeing."""

import itertools
import random

import numpy as np
import pytest

from twbn.formulations.graphs import is_k_tree
from twbn.formulations.ktree_codes import decode_k_tree, random_k_tree
from twbn.formulations.problem import Problem
from twbn.solvers.policy import Policy
from twbn.formulations.verify import verify_result
from twbn.scoring.cache import ScoreCache
from twbn.solvers.registry import solve
from twbn.solvers.heuristics.s2 import _best_k_tree, _phase2, informative_score, pair_weights, solve_s2
from twbn.solvers.method_options import S2Options
from tests.helpers import random_cache
from tests.test_exact import branching_optimum


def _hand_cache():
    # a: ∅ −10, {b} −6 (gain 4);  b: ∅ −8, {a} −7 (gain 1), {c} −9 (loss);  c: ∅ −5
    return ScoreCache.from_mapping(["a", "b", "c"], [{(): -10.0, (1,): -6.0}, {(): -8.0, (0,): -7.0, (2,): -9.0},
                                                     {(): -5.0}])


def test_pair_weights_by_hand():
    w = pair_weights(_hand_cache())
    assert w.tolist() == [[0, 4, 0], [4, 0, 0], [0, 0, 0]]  # max of the two gains; losses count 0


def test_informative_score_by_hand():
    cache = _hand_cache()
    w = pair_weights(cache)
    path_ab_bc = {0: {1}, 1: {0, 2}, 2: {1}}  # a 1-tree
    # S_mi = w_ab + w_bc = 4; S_l = −6 (a←b) −7 (b←a; no acyclicity) −5 = −18
    assert informative_score(path_ab_bc, w, cache) == pytest.approx(4 / 18)
    path_ac_cb = {0: {2}, 2: {0, 1}, 1: {2}}
    # S_mi = 0; S_l = −10 − 8 − 5
    assert informative_score(path_ac_cb, w, cache) == 0.0


@pytest.mark.parametrize("n,k", [(5, 1), (5, 2), (6, 2)])
def test_s2plus_search_finds_the_k_tree_of_largest_s_mi(n, k):
    rng = np.random.default_rng(n * 10 + k)
    w = rng.random((n, n))
    w = np.triu(w, 1) + np.triu(w, 1).T
    first = tuple(range(k + 1))
    best = -1.0
    for root in itertools.combinations(range(n), k):  # all k-trees, through their codes
        for code in itertools.product(range(k * (n - k) + 1), repeat=n - k - 1):
            adj = decode_k_tree(n, k, root, code)
            if all(b in adj[a] for a, b in itertools.combinations(first, 2)):
                best = max(best, sum(w[a, b] for a in adj for b in adj[a] if a < b))
    adj, proven = _best_k_tree(w, k, first, max_expansions=10**6)
    assert proven and is_k_tree(adj, k)
    assert sum(w[a, b] for a in adj for b in adj[a] if a < b) == pytest.approx(best)


def test_s2plus_search_with_its_open_list_cut_is_a_k_tree_not_called_best():
    n, k = 7, 2
    rng = np.random.default_rng(3)
    w = rng.random((n, n))
    w = np.triu(w, 1) + np.triu(w, 1).T
    first = (0, 1, 2)
    exact, proven = _best_k_tree(w, k, first, max_expansions=10**6)
    assert proven
    # an open list of at most 12: the first expansion alone pushes 4 × 3
    adj, proven = _best_k_tree(w, k, first, max_expansions=10**6, max_open=12)
    s_mi = sum(w[a, b] for a in adj for b in adj[a] if a < b)
    assert not proven and is_k_tree(adj, k) and all(b in adj[a] for a, b in itertools.combinations(first, 2))
    assert s_mi <= sum(w[a, b] for a in exact for b in exact[a] if a < b) + 1e-9


@pytest.mark.parametrize("plus", [False, True])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_s2_results_are_certified_and_never_beat_the_optimum(plus, k):
    cache = random_cache(8, k, max_size=3, density=0.5)
    problem = Problem(cache, k)
    sol = solve_s2(problem, S2Options(max_iterations=30), plus=plus, seed=1)
    assert sol.parents is not None
    assert verify_result(cache, sol.to_json(problem), k) == []
    assert sol.score <= solve(problem, "dp").score + 1e-9
    st = sol.stats
    assert st["max_score"] == pytest.approx(sol.score) and st["median_score"] <= sol.score
    assert solve_s2(problem, S2Options(max_iterations=30), plus=plus, seed=1).parents == sol.parents


def test_k1_never_beats_the_branching_oracle():
    for seed in range(4):
        cache = random_cache(7, seed, max_size=2, density=0.6)
        problem = Problem(cache, 1)
        oracle = branching_optimum(cache)
        for method in ("s2", "s2plus"):
            sol = solve(problem, method, seed=seed, time_limit=0.5)
            assert sol.score <= oracle + 1e-9


def test_phase2_engines_agree():
    cache = random_cache(9, 3, max_size=2, density=0.6)
    problem = Problem(cache, 2)
    rng = random.Random(0)
    for _ in range(3):
        adj = random_k_tree(9, 2, rng)
        a, b = _phase2(problem, adj, "dp", policy=Policy()), _phase2(problem, adj, "cuts", policy=Policy())
        assert (a is None) == (b is None)
        if a is not None:
            assert a[1] == pytest.approx(b[1], abs=1e-6)


@pytest.mark.slow  # 7 s: out of the default run, which must stay under 10 min
def test_s2_keeps_its_time_limit_when_phase2_is_the_ilp():
    """Phase 2 by the cluster-cut ILP gets the time left, so a short budget is kept
    (within start-up and the last ILP's wind-down), and its networks still verify."""
    import time

    from twbn.formulations.verify import verify_result
    from twbn.scoring.networks import random_network, sample
    from twbn.scoring.parent_sets import build_cache

    ds = sample(random_network(40, seed=3), 400, seed=4)
    cache, _ = build_cache(ds, score="bic", max_parents=3, progress=False)
    problem = Problem(cache, 5)
    t0 = time.monotonic()
    sol = solve_s2(problem, time_limit=1.0, seed=0, phase2="cuts")
    assert time.monotonic() - t0 < 6.0
    assert sol.parents is not None and verify_result(cache, sol.to_json(problem), 5) == []
    assert sol.stats["phase2_unproven"] <= sol.stats["iterations"]
