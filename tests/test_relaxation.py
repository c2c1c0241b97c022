"""The cluster LP bound (solvers/relaxation.py): valid for every multiplier, never below
an optimum the DP finds, never above the trivial bound, and no weaker than the full LP
with every cluster row (solved independently with scipy)."""

import itertools
import math

import numpy as np

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from tests.conftest import BUNDLED
from tests.helpers import random_cache
from twbn.formulations.cluster_ilp import FamilyTable
from twbn.formulations.problem import Problem
from twbn.scoring.cache import ScoreCache
from twbn.scoring.data import read_csv
from twbn.scoring.parent_sets import build_cache
from twbn.solvers.policy import Policy
from twbn.solvers.registry import solve
from twbn.formulations.graphs import exact_treewidth, moral_graph
from twbn.solvers.relaxation import (cluster_lp_bound, lagrangian_bound, separate_width_rows, width_rhs,
                                     width_row)


def _trivial(problem: Problem) -> float:
    return math.fsum(max(s.tolist()) for s in problem.candidates.scores)


def _full_lp(problem: Problem) -> float:
    """max Σ f·x over (2) and the cluster row (3) of every C, |C| >= 2, by scipy's HiGHS."""
    cand = problem.candidates
    fams = [(v, set(ps), s) for v in range(problem.n) for ps, s in zip(cand.parent_sets[v], cand.scores[v].tolist())]
    a_eq = [[1.0 if v == u else 0.0 for v, _, _ in fams] for u in range(problem.n)]
    a_ub, b_ub = [], []
    for size in range(2, problem.n + 1):
        for c in itertools.combinations(range(problem.n), size):
            a_ub.append([1.0 if v in c and ps & set(c) else 0.0 for v, ps, _ in fams])
            b_ub.append(size - 1.0)
    res = linprog([-s for _, _, s in fams], A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=[1.0] * problem.n, bounds=(0, 1),
                  method="highs")
    assert res.status == 0
    return -res.fun


def test_two_cycle_by_hand():
    # A and B each prefer the other as parent: the trivial bound -2 takes both arcs; the
    # pair row allows one, so the LP (and the optimum) is -1 + -5 = -6
    cache = ScoreCache.from_mapping("AB", [{(): -5.0, (1,): -1.0}, {(): -5.0, (0,): -1.0}])
    bound, stats = cluster_lp_bound(Problem(cache))
    assert stats["trivial"] == -2.0 and bound == pytest.approx(-6.0) and stats["complete"]
    table = FamilyTable.from_cache(cache)
    # L(λ) by hand for the pair row: λ + max(-5, -1 - λ) + max(-5, -1 - λ)
    for lam in (0.0, 1.0, 4.0, 6.0):
        assert lagrangian_bound(table, [[0, 1]], [lam]) == pytest.approx(lam + 2 * max(-5.0, -1.0 - lam))
    assert lagrangian_bound(table, [[0, 1]], [-3.0]) == -2.0  # negative multipliers count as 0


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(1, 3), data=st.data())
def test_every_multiplier_gives_a_bound_above_the_optimum(seed, k, data):
    problem = Problem(random_cache(7, seed % 1000, max_size=3, density=0.5), k)
    optimum = solve(problem, "dp").score
    table = FamilyTable.from_cache(problem.candidates)
    clusters = [sorted(data.draw(st.sets(st.integers(0, 6), min_size=2, max_size=7))) for _ in range(data.draw(st.integers(0, 6)))]
    lam = [data.draw(st.floats(0.0, 10.0)) for _ in clusters]
    assert lagrangian_bound(table, clusters, lam) >= optimum - 1e-9
    assert lagrangian_bound(table, clusters, [0.0] * len(clusters)) == pytest.approx(_trivial(problem))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [1, 2, 3, None])
def test_lp_bound_between_the_full_lp_and_the_trivial_bound(seed, k):
    problem = Problem(random_cache(6, seed, max_size=3, density=0.6), k)
    bound, stats = cluster_lp_bound(problem, time_limit=20, width=False)
    full = _full_lp(problem)
    assert stats["complete"] and stats["width_rows"] == 0  # six variables: the separation ends
    assert full - 1e-6 <= bound <= _trivial(problem) + 1e-9
    optimum = solve(problem, "dp").score
    assert bound >= optimum - 1e-6
    # the width rows only cut: below the cluster LP, still above every network of width <= k
    tighter, stats = cluster_lp_bound(problem, time_limit=20)
    assert stats["complete"] and optimum - 1e-6 <= tighter <= bound + 1e-6


def _complement_case(seed: int) -> dict:
    # dense caches (every pair of parents): a cluster's children mostly have a parent in it,
    # so its row enters the LP as its complement (Σ of the families outside it ≥ |C| − rhs);
    # at the end the bound L(λ), read with those rows' duals, is the LP's optimum, the
    # full LP's (every cluster row, by scipy) to 1e-6, as with every row as written
    problem = Problem(random_cache(6, 100 + seed, max_size=2, density=1.0), None)
    bound, stats = cluster_lp_bound(problem, time_limit=20, width=False)
    assert stats["complete"]
    assert bound == pytest.approx(_full_lp(problem), abs=1e-6)
    assert bound == pytest.approx(stats["lp_value"], abs=1e-6)
    return stats


def test_rows_written_as_their_complement_give_the_full_lp():
    flipped = [_complement_case(seed)["complement_rows"] for seed in range(8)]
    assert sum(flipped) > 0  # else the complement form went untested


@pytest.mark.parametrize("k", [1, pytest.param(2, marks=pytest.mark.slow)])  # k = 2: 9 s
def test_lp_bound_on_a_real_cache_against_the_dp(k):
    cache = build_cache(read_csv(BUNDLED / "housing.csv.gz"), score="bic", max_parents=3, progress=False)[0]
    problem = Problem(cache, k)
    bound, stats = cluster_lp_bound(problem, time_limit=20)
    optimum = solve(problem, "dp").score
    assert optimum - 1e-6 <= bound < _trivial(problem) - 1.0


@pytest.mark.parametrize("k", [1, None])
def test_rows_taken_out_of_the_lp_keep_the_bound_a_bound(k):
    # every row without a multiplier leaves at once: the bound is still between the DP's
    # optimum and the trivial bound, and no looser than the full LP of 6 variables
    import twbn.solvers.relaxation as relaxation
    from twbn.solvers.policy import Policy

    cache = build_cache(read_csv(BUNDLED / "housing.csv.gz"), score="bic", max_parents=3, progress=False)[0]
    problem = Problem(cache, k)
    bound, stats = relaxation.cluster_lp_bound(problem, time_limit=20,
                                               policy=Policy(lp_row_idle_rounds=1, lp_row_drop_every=1))
    assert stats["dropped"] > 0
    optimum = solve(problem, "dp").score
    assert optimum - 1e-6 <= bound < _trivial(problem) - 1.0
    for seed in range(3):
        small = Problem(random_cache(6, seed, max_size=3, density=0.6), k)
        got, _ = relaxation.cluster_lp_bound(small, time_limit=20, width=False)
        assert _full_lp(small) - 1e-6 <= got <= _trivial(small) + 1e-9


@pytest.mark.parametrize("m", [3, 4, 5])
def test_width_rhs_is_the_most_edges_a_graph_of_treewidth_k_has(m):
    # every graph on m vertices, by brute force: the most edges among those of treewidth <= k
    pairs = list(itertools.combinations(range(m), 2))
    most: dict[int, int] = {}
    for mask in range(1 << len(pairs)):
        adj = {v: set() for v in range(m)}
        for i, (a, b) in enumerate(pairs):
            if mask >> i & 1:
                adj[a].add(b)
                adj[b].add(a)
        tw = exact_treewidth(adj)[0]
        edges = bin(mask).count("1")
        for k in range(tw, m):
            most[k] = max(most.get(k, 0), edges)
    for k in range(1, m - 1):  # m >= k + 2: the rows (W) are used there
        assert width_rhs(m, k) == most[k]


def test_a_width_row_counts_the_pairs_a_family_covers():
    # families of C = {0, 1, 2, 3}; pairs {0,1}, {0,2} assigned to child 2, {2,3} to child 3
    cache = ScoreCache.from_mapping("ABCD", [{(): -1.0}, {(): -1.0}, {(): -1.0, (0,): -1.0, (0, 1): -1.0, (1,): -1.0},
                                             {(): -1.0, (2,): -1.0}])
    table = FamilyTable.from_cache(cache)
    fams, coefs = width_row(table, {2: [(0, 1), (0, 2)], 3: [(2, 3)]})
    got = {(int(table.child[f]), table.parents[f]): c for f, c in zip(fams.tolist(), coefs.tolist())}
    # {0,1} -> 2 covers {0,1} and {0,2}; {0} -> 2 covers {0,2}; {1} -> 2 and {} -> 2 cover none
    assert got == {(2, (0, 1)): 2.0, (2, (0,)): 1.0, (3, (2,)): 1.0}


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(1, 3))
def test_width_rows_hold_for_the_optimum_and_the_bound_stays_above_it(seed, k):
    problem = Problem(random_cache(8, seed % 1000, max_size=3, density=0.6), k)
    best = solve(problem, "dp")
    table = FamilyTable.from_cache(problem.candidates)
    # rows separated at the trivial point (each variable's best family: often too wide)
    x = np.zeros(table.size)
    x[[int(table.start[v] + np.argmax(table.scores[table.start[v]:table.start[v + 1]])) for v in range(table.n)]] = 1.0
    at_opt = np.zeros(table.size)
    at_opt[[table.family(v, ps) for v, ps in enumerate(best.parents)]] = 1.0
    assert exact_treewidth(moral_graph(best.parents))[0] <= k
    for c, assignment, violation in separate_width_rows(table, x, k):
        fams, coefs = width_row(table, assignment)
        assert float(coefs @ x[fams]) - width_rhs(len(c), k) == pytest.approx(violation)
        assert float(coefs @ at_opt[fams]) <= width_rhs(len(c), k) + 1e-9  # valid for a width-<= k network
    bound, _ = cluster_lp_bound(problem, time_limit=10)
    assert bound >= best.score - 1e-6


def _three_cycle() -> Problem:
    """A, B, C each prefer one parent, round a 3-cycle (-1 each, -5 alone): the pair rows
    the LP starts with allow the cycle; only the cluster row over {A, B, C} cuts it."""
    cache = ScoreCache.from_mapping("ABC", [{(): -5.0, (2,): -1.0}, {(): -5.0, (0,): -1.0}, {(): -5.0, (1,): -1.0}])
    return Problem(cache)


class _ThreeCycleRow:
    """A researcher's row family, as docs/extending.md writes one: the cluster row over
    every variable, given as a list of families (no vertex set), valid for every DAG."""

    name = "all-variables"

    def separate(self, point):
        from twbn.solvers.relaxation import Row

        table = point.table
        with_parents = np.flatnonzero(table.n_parents > 0)
        violated = point.x[with_parents].sum() > table.n - 1 + 1e-6
        return [Row(with_parents, None, table.n - 1.0)] if violated else []


def test_a_row_family_of_ones_own_tightens_the_bound_as_the_cluster_rows_do():
    from twbn.solvers.relaxation import DEFAULT_ROWS

    problem = _three_cycle()
    optimum = solve(problem, "dp").score  # two arcs of the cycle: -1 - 1 - 5
    assert optimum == pytest.approx(-7.0) and _trivial(problem) == pytest.approx(-3.0)
    none, _ = cluster_lp_bound(problem, rows=())  # the pair rows alone: the cycle stays
    assert none == pytest.approx(-3.0)
    own, stats = cluster_lp_bound(problem, rows=(_ThreeCycleRow(),))
    assert own == pytest.approx(optimum) and stats["complete"] and stats["rows"] >= 1
    default, _ = cluster_lp_bound(problem, rows=DEFAULT_ROWS)
    assert default == pytest.approx(own)


def test_a_minor_row_cuts_a_subdivided_k4_that_no_width_row_cuts():
    # the moral graph of these families (cyclic: the LP point need not be a DAG) is K4 on
    # A, B, C, D with A-B subdivided by E: A <- {C, D} (A-C, A-D, C-D), B <- {E}, C <- {B, D}
    # (C-B, C-D, and B-D married), E <- {A}. 7 edges on 5 vertices = 2·5 − 3, and 5 on
    # {A, B, C, D} = 2·4 − 3: every width row (k = 2) holds. Contracting A-E gives K4: the
    # row (6) with tree edge A-E (×2) and six pairs, 8 ≤ 2·5 − 3 = 7, is violated by 1.
    from twbn.solvers.policy import DEFAULT_POLICY
    from twbn.solvers.relaxation import LpPoint, MinorRows

    chosen = [(2, 3), (4,), (1, 3), (), (0,)]
    cache = ScoreCache.from_mapping("ABCDE", [{(): -9.0, ps: -1.0} if ps else {(): -1.0} for ps in chosen])
    table = FamilyTable.from_cache(cache)
    x = np.zeros(table.size)
    x[[table.family(v, ps) for v, ps in enumerate(chosen)]] = 1.0
    assert separate_width_rows(table, x, 2) == []
    rows = MinorRows().separate(LpPoint(table, x, 2, DEFAULT_POLICY, math.inf, False, []))
    assert len(rows) == 1
    got = {(int(table.child[f]), table.parents[f]): c for f, c in zip(rows[0].families.tolist(),
                                                                      rows[0].coefficients.tolist())}
    # A <- {C, D}: the arcs C-A, D-A; B <- {E}: the pair E-B; C <- {B, D}: the arcs B-C,
    # D-C and the married B-D; E <- {A}: the tree edge, k = 2
    assert got == {(0, (2, 3)): 2.0, (1, (4,)): 1.0, (2, (1, 3)): 3.0, (4, (0,)): 2.0}
    assert rows[0].rhs == 7.0
    # at k = 3 the same graph has width 3 and no row is violated
    assert MinorRows().separate(LpPoint(table, x, 3, Policy(lp_minor_rows_max_k=3), math.inf, False, [])) == []


def _random_networks(cache: ScoreCache, k: int, rng, tries: int = 300) -> list[list[tuple[int, ...]]]:
    """Networks of the cache's families of width <= k, from random orders (each variable a
    random family inside its predecessors), with their width checked exactly."""
    out = []
    for _ in range(tries):
        order = rng.permutation(cache.n_variables)
        before: set[int] = set()
        parents: list[tuple[int, ...]] = [()] * cache.n_variables
        for v in order.tolist():
            fits = [ps for ps in cache.parent_sets[v] if set(ps) <= before]
            if not fits:
                break
            parents[v] = tuple(fits[rng.integers(len(fits))])
            before.add(v)
        else:
            if exact_treewidth(moral_graph(parents))[0] <= k:
                out.append(parents)
    return out


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(1, 2))
def test_minor_rows_hold_for_every_network_of_width_k(seed, k):
    # rows separated at the trivial point and at a random fractional one must hold at every
    # network of width <= k (sampled, and the DP's optimum); each violated where it was found
    from twbn.solvers.policy import DEFAULT_POLICY
    from twbn.solvers.relaxation import LpPoint, MinorRows

    problem = Problem(random_cache(8, seed % 1000, max_size=3, density=0.6), k)
    table = FamilyTable.from_cache(problem.candidates)
    rng = np.random.default_rng(seed)
    trivial = np.zeros(table.size)
    trivial[[int(table.start[v] + np.argmax(table.scores[table.start[v]:table.start[v + 1]])) for v in range(table.n)]] = 1.0
    fractional = np.zeros(table.size)
    for v in range(table.n):
        lo, hi = int(table.start[v]), int(table.start[v + 1])
        fractional[lo:hi] = rng.dirichlet(np.ones(hi - lo))
    networks = _random_networks(problem.candidates, k, rng) + [solve(problem, "dp").parents]
    for x in (trivial, fractional):
        for row in MinorRows().separate(LpPoint(table, x, k, DEFAULT_POLICY, math.inf, False, [])):
            assert float(row.coefficients @ x[row.families]) > row.rhs
            for parents in networks:
                at = np.zeros(table.size)
                at[[table.family(v, ps) for v, ps in enumerate(parents)]] = 1.0
                assert float(row.coefficients @ at[row.families]) <= row.rhs + 1e-9


def test_minor_rows_tighten_the_bound_at_k2_on_real_data():
    # letter (17 variables, every pair scored): the LP without minor rows ends complete at
    # a looser bound; with them it stays above every network found
    from twbn.solvers.relaxation import ClusterRows, WidthRows

    cache, _ = build_cache(read_csv(BUNDLED / "letter.csv.gz"), max_parents=2, progress=False)
    problem = Problem(cache, 2)
    without, s0 = cluster_lp_bound(problem, time_limit=30, rows=(ClusterRows(), WidthRows()))
    with_minor, s1 = cluster_lp_bound(problem, time_limit=30)
    assert s0["complete"] and s1["complete"] and s0["minor_rows"] == 0 < s1["minor_rows"]
    assert with_minor < without - 100
    assert solve(problem, "improve", time_limit=5, seed=1).score <= with_minor + 1e-6


def test_minor_rows_are_found_in_regions_of_a_large_point():
    # two copies of the subdivided K4 above (variables 0-4 and 5-9); with regions of at
    # most 5 variables each copy is searched on its own and each gives the row by hand
    from twbn.solvers.relaxation import LpPoint, MinorRows, minor_regions

    chosen = [(2, 3), (4,), (1, 3), (), (0,)]
    chosen += [tuple(p + 5 for p in ps) for ps in chosen]
    cache = ScoreCache.from_mapping("ABCDEFGHIJ", [{(): -9.0, ps: -1.0} if ps else {(): -1.0} for ps in chosen])
    table = FamilyTable.from_cache(cache)
    x = np.zeros(table.size)
    x[[table.family(v, ps) for v, ps in enumerate(chosen)]] = 1.0
    t, _ = table.moral_rules(x)
    assert sorted(map(list, minor_regions(t, 2, 5))) == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    assert [list(r) for r in minor_regions(t, 2, 10)] == [list(range(10))]
    rows = MinorRows().separate(LpPoint(table, x, 2, Policy(lp_minor_max_n=5), math.inf, False, []))
    got = sorted(sorted((int(table.child[f]), table.parents[f], c) for f, c in zip(r.families.tolist(),
                                                                                 r.coefficients.tolist()))
                 for r in rows)
    want = [(0, (2, 3), 2.0), (1, (4,), 1.0), (2, (1, 3), 3.0), (4, (0,), 2.0)]
    assert got == [want, [(v + 5, tuple(p + 5 for p in ps), c) for v, ps, c in want]]
    assert all(r.rhs == 7.0 for r in rows)
