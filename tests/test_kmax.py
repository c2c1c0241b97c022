"""k-MAX (Scanagatta et al. 2018): each step by hand on a 6-variable cache, certified
results, reproducibility, and the exact optimum where the DP can check it."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import random_cache
from twbn.formulations.problem import Problem
from twbn.solvers.policy import Policy
from twbn.formulations.verify import verify_result
from twbn.scoring.cache import ScoreCache
from twbn.solvers.heuristics.kmax import _KMax, solve_kmax
from twbn.solvers.registry import solve
from twbn.solvers.method_options import KmaxOptions

A, B, C, D, E, F = range(6)


def _hand_cache() -> ScoreCache:
    """Worked out by hand (k = 1), starting from A:
    - first clique {A, B} (A's best set is {B}); its best DAG: A <- B (-1), B <- {} (-2): -3
      (the other way, B <- A and A <- {}, is -5.5);
    - losses (best - chosen)/(best - worst) with the 1-cliques {A}, {B} and {}:
      C {A}: (-1 + 2)/4 = 0.25; D {}: (-1 + 2)/1 = 1; E {B}: 0; F {A}: (-2 + 3)/2 = 0.5;
    - E (0) joins with {B}; {E} is new, so F's {E} is admissible: loss 0;
    - F (0) joins with {E}; then C (0.25) with {A}; {C} is new, D's {C}: loss 0;
    - D joins with {C}. Score -1 - 2 - 2 - 1 - 1 - 2 = -9.
    """
    fams = [
        {(B,): -1.0, (): -3.0},                    # A
        {(): -2.0, (A,): -2.5},                    # B
        {(D,): -1.0, (A,): -2.0, (): -5.0},        # C
        {(C,): -1.0, (): -2.0},                    # D
        {(B,): -1.0, (): -1.5},                    # E
        {(E,): -2.0, (A,): -3.0, (): -4.0},        # F
    ]
    return ScoreCache.from_mapping("ABCDEF", fams)


def test_each_step_takes_the_least_normalised_loss():
    problem = Problem(_hand_cache(), 1)
    parents, score, order = _KMax(problem, Policy()).network(A, random.Random(0))
    assert order == [A, B, E, F, C, D]
    assert parents == [(B,), (), (A,), (C,), (B,), (E,)]
    assert score == pytest.approx(-9.0)


def test_losses_by_hand():
    search = _KMax(Problem(_hand_cache(), 1), Policy())
    assert search.loss(C, 1) == pytest.approx(0.25)
    assert search.loss(D, 1) == pytest.approx(1.0)
    assert search.loss(F, 1) == pytest.approx(0.5)
    assert search.loss(E, 0) == 0.0


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("seed", [0, 1])
def test_results_are_certified_and_never_above_the_optimum(k, seed):
    cache = random_cache(8, seed, max_size=3, density=0.5)
    problem = Problem(cache, k)
    sol = solve(problem, "kmax", options={"max_iterations": 30}, seed=seed)
    assert sol.parents is not None and sol.width <= k
    assert verify_result(cache, sol.to_json(problem), k) == []
    assert sol.score <= solve(problem, "dp").score + 1e-9


def test_reproducible_from_the_seed():
    problem = Problem(random_cache(12, 3, max_size=2, density=0.4), 2)
    a = solve_kmax(problem, KmaxOptions(max_iterations=20), seed=7)
    b = solve_kmax(problem, KmaxOptions(max_iterations=20), seed=7)
    assert a.parents == b.parents and a.score == b.score and a.stats["iterations"] == 20


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 2))
def test_k1_and_k2_valid_on_random_caches(seed, k):
    cache = random_cache(7, seed, max_size=2, density=0.6)
    problem = Problem(cache, k)
    sol = solve_kmax(problem, KmaxOptions(max_iterations=5), seed=seed)
    assert verify_result(cache, sol.to_json(problem), k) == []
