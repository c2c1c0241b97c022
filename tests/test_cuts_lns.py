"""Large-neighbourhood search for ``cuts`` (solvers/cuts/lns.py): its neighbourhoods, its
sub-problems against brute force, and the bounded solve that uses it."""

import random

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twbn.formulations.graphs import moral_graph
from twbn.formulations.problem import Problem
from twbn.formulations.solution import make_solution
from twbn.formulations.verify import verify_result
from twbn.solvers.exact.brute_force import brute_force_optimum
from twbn.solvers.cuts.branch_and_cut import solve_cuts
from twbn.solvers.cuts.lns import fixed_fill, fixed_outside, neighbourhood
from twbn.solvers.registry import solve
from twbn.solvers.method_options import CutsOptions
from tests.helpers import random_cache


def _connected_network(n: int, rng: random.Random) -> list[tuple[int, ...]]:
    """A random DAG whose moral graph is connected: each v > 0 has a parent before it."""
    parents = [()]
    for v in range(1, n):
        extra = rng.sample(range(v), min(v, rng.randint(0, 2)))
        parents.append(tuple(sorted({rng.randrange(v), *extra})))
    return parents


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 12), seed=st.integers(0, 10**6), data=st.data())
def test_neighbourhood_is_connected_and_reproducible(n, seed, data):
    rng = random.Random(seed)
    parents = _connected_network(n, rng)
    size = data.draw(st.integers(1, n))
    free = neighbourhood(parents, size, random.Random(seed))
    assert free == sorted(set(free)) and len(free) == size and all(0 <= v < n for v in free)
    g = nx.Graph()
    g.add_nodes_from(free)
    adj = moral_graph(parents)
    g.add_edges_from((u, w) for u in free for w in adj[u] if w in free)
    assert nx.is_connected(g)
    assert neighbourhood(parents, size, random.Random(seed)) == free


def test_neighbourhood_tops_up_a_small_component():
    # moral graph: the path 0 - 1 - 2 and the edge 3 - 4. Starting in the path, three
    # variables are the path; starting at 3 or 4, the edge and one random variable.
    parents = [(), (0,), (1,), (), (3,)]
    seen = set()
    for seed in range(40):
        free = neighbourhood(parents, 3, random.Random(seed))
        assert free == [0, 1, 2] or ({3, 4} <= set(free) and len(free) == 3)
        seen.add(tuple(free))
    assert (0, 1, 2) in seen and len(seen) > 1
    with pytest.raises(ValueError, match="1 to 5 variables"):
        neighbourhood(parents, 6, random.Random(0))


@pytest.mark.parametrize("seed", range(6))
def test_sub_problem_optimum_equals_brute_force(seed):
    cache = random_cache(7, seed, max_size=3, density=0.5)
    k = 2
    problem = Problem(cache, k)
    start = solve(problem, "kg", seed=seed, time_limit=1.0)
    free = neighbourhood(start.parents, 3, random.Random(seed))
    sub = fixed_outside(problem, start.parents, free)
    for v in range(problem.n):
        if v in free:
            assert sub.candidates.parent_sets[v] == problem.candidates.parent_sets[v]
        else:
            assert sub.candidates.parent_sets[v] == [start.parents[v]]
    _, best = brute_force_optimum(sub.candidates, k)
    sol = solve_cuts(sub, CutsOptions(lns=False))
    assert sol.status == "optimal"
    assert sol.score == pytest.approx(best, abs=1e-6)
    assert sol.score >= start.score - 1e-9  # the incumbent is a point of the sub-problem
    assert verify_result(cache, sol.to_json(problem), k) == []
    # with the triangulation between fixed variables held too: still no worse than the
    # start, no better than the looser sub-problem, and certified
    held = solve_cuts(sub, CutsOptions(lns=False), warm_start=start, fixed_y=fixed_fill(start.parents, start.elimination_order, free))
    assert held.status == "optimal"
    assert start.score - 1e-9 <= held.score <= sol.score + 1e-9
    assert verify_result(cache, held.to_json(problem), k) == []


def test_fixed_fill_by_hand():
    # 2 <- 0 and 1 <- 2: the path 0 - 2 - 1; eliminating 2 first joins 0 and 1
    parents = [(), (2,), (0,)]
    assert fixed_fill(parents, [2, 0, 1], []) == {(0, 1): 1, (1, 0): 0, (0, 2): 0, (2, 0): 1, (1, 2): 0, (2, 1): 1}
    # eliminating 0 first leaves no fill; with 2 free only the pair {0, 1} is held
    assert fixed_fill(parents, [0, 2, 1], [2]) == {(0, 1): 0, (1, 0): 0}
    with pytest.raises(ValueError, match="bounded model only"):
        solve_cuts(Problem(random_cache(3, 0)), fixed_y={(0, 1): 0})


def test_bounded_cuts_with_lns_reports_it_and_stays_exact():
    cache = random_cache(8, 3, max_size=3, density=0.5)
    problem = Problem(cache, 2)
    sol = solve_cuts(problem, seed=0)
    assert sol.status == "optimal"
    assert sol.score == pytest.approx(solve(problem, "dp").score, abs=1e-6)
    assert {"lns_calls", "lns_improvements", "lns_seconds"} <= set(sol.stats)
    assert verify_result(cache, sol.to_json(problem), 2) == []
    assert "lns_calls" not in solve_cuts(Problem(cache), seed=0).stats  # unbounded: off by default


@pytest.mark.slow  # 7 s: out of the default run, which must stay under 10 min
def test_lns_improves_a_poor_start():
    # from the empty network, the first neighbourhood (8 of the 10 variables) is re-solved
    # after the root LP, and this cache's root does not close (3 nodes), so the search must
    # store a better network; the result is still the optimum
    cache = random_cache(10, 0, max_size=3, density=0.5)
    problem = Problem(cache, 2)
    empty = make_solution(problem, [()] * 10, bound=None, status="feasible", method="start")
    sol = solve_cuts(problem, seed=0, warm_start=empty)
    assert sol.stats["lns_improvements"] >= 1
    assert sol.score == pytest.approx(solve(problem, "dp").score, abs=1e-6)
    assert verify_result(cache, sol.to_json(problem), 2) == []
