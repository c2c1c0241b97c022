"""k-A* against brute force over clique choices, against k-G on the same order, and
the k-G class optimum."""

import itertools

import pytest

from twbn.formulations.problem import Problem
from twbn.solvers.policy import Policy
from twbn.formulations.verify import verify_result
from twbn.solvers.heuristics.kastar import _KAStar, solve_kastar
from twbn.solvers.registry import solve
from twbn.solvers.method_options import KastarOptions
from tests.helpers import random_cache


def _brute_force_for_order(search: _KAStar, order: list[int]) -> float | None:
    """Best score over every sequence of clique choices (the k-G class for this order)."""
    k = search.k
    head = tuple(sorted(order[: k + 1]))
    first = search.first_clique(head)
    if first is None:
        return None
    best = [None]

    def rec(j, cliques, g):
        if j == len(order):
            best[0] = g if best[0] is None else max(best[0], g)
            return
        v = order[j]
        for c in cliques:
            got = search._best_inside(v, sum(1 << u for u in c))
            if got is not None:
                rec(j + 1, cliques + [tuple(sorted(set(c) - {u} | {v})) for u in c], g + got[0])

    rec(k + 1, [tuple(sorted(set(head) - {u})) for u in head], first[1])
    return best[0]


@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("seed", range(5))
def test_kastar_finds_the_best_network_for_its_order(k, seed):
    cache = random_cache(7, seed, max_size=2, density=0.7)
    search = _KAStar(Problem(cache, k), Policy())
    for rot in range(3):
        order = list(range(7))[rot:] + list(range(7))[:rot]
        expected = _brute_force_for_order(search, order)
        got = search.network_astar(order, max_expansions=10**7)
        if expected is None:
            assert got is None
            continue
        parents, score, _, truncated = got
        assert not truncated
        assert score == pytest.approx(expected, abs=1e-9)
        assert sum(cache.score_of(v, p) for v, p in enumerate(parents)) == pytest.approx(score, abs=1e-9)
        kg = search.network(order)  # k-G's greedy path is one of the clique choices
        assert kg is None or kg[1] <= score + 1e-9


@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("seed", range(3))
def test_best_order_of_the_class_gives_the_class_optimum(k, seed):
    """Over all orders, the best k-A* network is the optimum of the k-G class; it can
    never beat the bounded-treewidth optimum (the DP), and k-A* run on that order finds
    it again."""
    n = 6
    cache = random_cache(n, seed, max_size=2, density=0.7)
    problem = Problem(cache, k)
    search = _KAStar(problem, Policy())
    best = None
    for order in itertools.permutations(range(n)):
        got = search.network_astar(list(order), max_expansions=10**7)
        if got is not None and (best is None or got[1] > best[1]):
            best = got
    assert best[1] <= solve(problem, "dp").score + 1e-9
    assert best[1] == pytest.approx(_brute_force_for_order(search, best[2]), abs=1e-9)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_kastar_results_are_certified_and_reproducible(k):
    cache = random_cache(9, k, max_size=3, density=0.4)
    problem = Problem(cache, k)
    sol = solve_kastar(problem, KastarOptions(max_iterations=40), seed=3)
    assert verify_result(cache, sol.to_json(problem), k) == []
    st = sol.stats
    assert st["iterations"] == 40 and st["max_score"] == pytest.approx(sol.score) and st["median_score"] <= sol.score
    assert sol.score <= solve(problem, "dp").score + 1e-9
    again = solve_kastar(problem, KastarOptions(max_iterations=40), seed=3)
    assert again.parents == sol.parents


def test_truncated_search_still_returns_a_valid_network():
    cache = random_cache(12, 1, max_size=2, density=0.5)
    problem = Problem(cache, 2)
    sol = solve_kastar(problem, KastarOptions(max_iterations=5, max_expansions=3), seed=0)
    assert sol.stats["truncated_orders"] >= 1
    assert verify_result(cache, sol.to_json(problem), 2) == []


def _class_optimum_orders(cache, k):
    search = _KAStar(Problem(cache, k), Policy())
    res = {}
    for order in itertools.permutations(range(cache.n_variables)):
        got = search.network_astar(list(order), max_expansions=10**7)
        kg = search.network(list(order))
        res[order] = (None if got is None else got[1], None if kg is None else kg[1])
    best = max(a for a, _ in res.values() if a is not None)
    return best, {o: g for o, (a, g) in res.items() if a is not None and abs(a - best) < 1e-9}


def test_kg_on_an_optimal_order_of_its_class_usually_but_not_always_finds_the_optimum():
    """Issue 7 asks that k-G, given the order of an optimal network of the k-G class,
    find it. Brute force over all 720 orders says: often (here on every optimal order),
    but not always — on the second instance k-G's greedy clique choice misses the class
    optimum on every one of its optimal orders, which only k-A* recovers. Over 30 random
    instances (n = 6, k = 1, 2) k-G reached it on some optimal order in 28."""
    best, kg_on_opt = _class_optimum_orders(random_cache(6, 14, max_size=2, density=0.7), 2)
    assert kg_on_opt and all(g is not None and g == pytest.approx(best, abs=1e-9) for g in kg_on_opt.values())
    best, kg_on_opt = _class_optimum_orders(random_cache(6, 13, max_size=2, density=0.7), 2)
    assert kg_on_opt and all(g is None or g < best - 1e-6 for g in kg_on_opt.values())


def test_k1_never_beats_and_often_reaches_the_branching_oracle():
    from tests.test_exact import branching_optimum

    hits = 0
    for seed in range(10):
        cache = random_cache(7, seed, max_size=2, density=0.6)
        sol = solve_kastar(Problem(cache, 1), KastarOptions(max_iterations=100), seed=seed)
        oracle = branching_optimum(cache)
        assert sol.score <= oracle + 1e-9
        hits += sol.score == pytest.approx(oracle, abs=1e-9)
    assert hits >= 5
