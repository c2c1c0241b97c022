"""k-G against exact methods and by hand."""

import pytest

from twbn.formulations.problem import Problem
from twbn.solvers.policy import Policy
from twbn.formulations.verify import verify_result
from twbn.scoring.cache import ScoreCache
from twbn.solvers.heuristics.kg import _KG, solve_kg
from twbn.solvers.registry import solve
from twbn.solvers.method_options import KgOptions
from tests.helpers import random_cache
from tests.test_exact import branching_optimum


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("seed", range(4))
def test_kg_is_certified_and_never_beats_the_optimum(k, seed):
    cache = random_cache(8, seed, max_size=3, density=0.4)
    problem = Problem(cache, k)
    sol = solve_kg(problem, KgOptions(max_iterations=300), seed=seed)
    assert verify_result(cache, sol.to_json(problem), k) == []
    assert sol.width <= k and sol.score <= solve(problem, "dp").score + 1e-9
    st = sol.stats
    assert st["iterations"] == 300 and st["max_score"] == pytest.approx(sol.score) and st["median_score"] <= sol.score


def test_k1_reaches_the_branching_oracle_often():
    hits = 0
    for seed in range(10):
        cache = random_cache(7, seed, max_size=2, density=0.6)
        sol = solve_kg(Problem(cache, 1), KgOptions(max_iterations=400), seed=seed)
        oracle = branching_optimum(cache)
        assert sol.score <= oracle + 1e-9
        hits += sol.score == pytest.approx(oracle, abs=1e-9)
    assert hits >= 5


def test_reproducible_from_seed():
    cache = random_cache(9, 4, max_size=3, density=0.4)
    a = solve_kg(Problem(cache, 2), KgOptions(max_iterations=50), seed=7)
    b = solve_kg(Problem(cache, 2), KgOptions(max_iterations=50), seed=7)
    assert a.parents == b.parents and a.stats["median_score"] == b.stats["median_score"]


def test_greedy_step_by_hand():
    """k = 1, order 0,1,2. The first clique {0,1}: 1 <- 0 (−1 beats −3 plus the
    alternatives). Variable 2's best set {0,1} is no subset of a 1-clique; of the sets
    that are, {1} (−2) beats {0} (−4) and ∅ (−5): k-G takes {1}."""
    fams = [
        {(): -2.0},
        {(): -3.0, (0,): -1.0},
        {(): -5.0, (0,): -4.0, (1,): -2.0, (0, 1): -0.5},
    ]
    cache = ScoreCache.from_mapping(["a", "b", "c"], fams)
    parents, score, _ = _KG(Problem(cache, 1), Policy()).network([0, 1, 2])
    assert parents == [(), (0,), (1,)] and score == pytest.approx(-2 - 1 - 2)


def test_needs_a_bound():
    with pytest.raises(ValueError, match="needs a treewidth bound"):
        solve(Problem(random_cache(4, 1), None), "kg")


@pytest.mark.parametrize("method", ["kg", "kmax"])
def test_a_large_bound_still_gives_a_network_within_the_limit(method):
    # wdbc (n = 31) at k = 25: the first clique of 26 was past the exact DP (k-G: no network
    # in 60 s) and k-MAX enumerated every subset of its k-cliques; now the clique's DAG is
    # greedy above the policy's kg_first_clique_exact_max and only subsets as large as a
    # candidate are kept
    import time

    from twbn.solvers.policy import DEFAULT_POLICY

    cache = random_cache(31, 1, max_size=4, density=0.3)
    problem = Problem(cache, 25)
    assert problem.treewidth + 1 > DEFAULT_POLICY.kg_first_clique_exact_max
    t0 = time.monotonic()
    sol = solve(problem, method, time_limit=1.5, seed=0)
    assert time.monotonic() - t0 < 1.5 + 2.5
    assert sol.parents is not None and verify_result(cache, sol.to_json(problem), 25) == []
    # and below the threshold the first clique is still solved exactly: k-G's network at
    # k = n - 1 with one order is the unbounded optimum of its first clique, the whole set
    small = random_cache(10, 2, max_size=3, density=0.5)
    one = solve(Problem(small, 9), "kg", options={"max_iterations": 1}, seed=0)
    assert one.score == pytest.approx(solve(Problem(small), "dp").score)
