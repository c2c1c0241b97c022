"""Missing cells: exact inference on a learned network against brute-force enumeration,
posterior draws against the exact posterior, structural EM end to end."""

import itertools
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import twbn
from twbn.scoring.data import DataError, Dataset
from twbn.scoring.families import FamilyScores
from twbn.scoring.likelihood import em_cpts, fit_cpts, held_out_log_likelihood
from twbn.scoring.local_scores import local_score
from twbn.scoring.posterior import elimination_order, expected_counts, row_log_likelihood, sample_missing


def _random_network(n: int, seed: int):
    """A random DAG (parents among earlier variables, at most 2) with random tables."""
    rng = np.random.default_rng(seed)
    arities = rng.integers(2, 4, n)
    parents = [tuple(sorted(rng.choice(v, size=min(v, int(rng.integers(0, 3))), replace=False).tolist()))
               for v in range(n)]
    cpts = []
    for v, ps in enumerate(parents):
        q = int(np.prod([arities[p] for p in ps])) if ps else 1
        cpts.append(rng.dirichlet(np.ones(arities[v]), size=q))
    return arities, parents, cpts


def _row_of_table(x, arities, ps) -> int:
    """The row of a table for the parents' values in ``x`` (the first parent least
    significant, as fit_cpts)."""
    q, mult = 0, 1
    for u in ps:
        q += x[u] * mult
        mult *= int(arities[u])
    return q


def _joint(x, arities, parents, cpts) -> float:
    """P(x) of a full assignment, the product of its families' table entries."""
    p = 1.0
    for v, ps in enumerate(parents):
        p *= cpts[v][_row_of_table(x, arities, ps), x[v]]
    return p


def _brute(row, arities, parents, cpts):
    """By enumeration: P(observed cells) and the posterior of each completion."""
    holes = [v for v, c in enumerate(row) if c < 0]
    post = {}
    for fill in itertools.product(*[range(int(arities[v])) for v in holes]):
        x = list(row)
        for v, c in zip(holes, fill):
            x[v] = c
        post[fill] = _joint(x, arities, parents, cpts)
    total = sum(post.values())
    return total, holes, {k: p / total for k, p in post.items()}


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 6), seed=st.integers(0, 10**6), order_seed=st.integers(0, 10**6))
def test_row_likelihood_is_the_sum_over_completions(n, seed, order_seed):
    arities, parents, cpts = _random_network(n, seed)
    rng = np.random.default_rng(seed + 1)
    rows = np.array([rng.integers(0, a, 8) for a in arities])
    rows[rng.random(rows.shape) < 0.4] = -1
    # any elimination order is exact (only its cost depends on its width)
    order = np.random.default_rng(order_seed).permutation(n).tolist()
    got = row_log_likelihood(rows, arities, parents, cpts, order)
    want = [np.log(_brute(rows[:, i].tolist(), arities, parents, cpts)[0]) for i in range(rows.shape[1])]
    assert got == pytest.approx(want, abs=1e-9)


def _bucket_sizes(parents, arities, order) -> float:
    """The cost of elimination by brute force: each variable's bucket is itself and every
    variable, later in the order, that it reaches through variables eliminated before it
    (the fill-in graph's neighbours)."""
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(range(len(parents)))
    g.add_edges_from((a, b) for v, ps in enumerate(parents) for a, b in itertools.combinations([v, *ps], 2))
    pos = {v: i for i, v in enumerate(order)}
    cost = 0.0
    for v in order:
        earlier = [u for u in g if pos[u] < pos[v]]
        reach = set()
        for c in nx.connected_components(g.subgraph(earlier)):  # v's earlier components, then their later neighbours
            if any(g.has_edge(v, u) for u in c):
                reach |= {w for u in c for w in g[u] if pos[w] > pos[v]}
        reach |= {w for w in g[v] if pos[w] > pos[v]}
        cost += arities[v] * float(np.prod([arities[w] for w in reach]))
    return cost


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 7), seed=st.integers(0, 10**6), order_seed=st.integers(0, 10**6))
def test_the_cheapest_order_is_no_dearer_than_the_orders_it_is_given(n, seed, order_seed):
    from twbn.scoring.posterior import cheapest_order, order_cost

    arities, parents, _ = _random_network(n, seed)
    given_order = np.random.default_rng(order_seed).permutation(n).tolist()
    assert order_cost(parents, arities, given_order) == pytest.approx(_bucket_sizes(parents, arities, given_order))
    best = cheapest_order(parents, arities, given_order)
    assert sorted(best) == list(range(n))
    assert order_cost(parents, arities, best) <= min(order_cost(parents, arities, given_order),
                                                      order_cost(parents, arities, elimination_order(parents)))


def test_posterior_draws_follow_the_exact_posterior():
    arities, parents, cpts = _random_network(5, 7)
    row = [1, -1, 0, -1, -1]
    _, holes, post = _brute(row, arities, parents, cpts)
    codes = np.array(row)[:, None]
    draws = sample_missing(codes, arities, parents, cpts, elimination_order(parents), copies=20000, seed=3)
    assert (draws[[0, 2]] == np.array([[1], [0]])).all()  # the observed cells kept
    seen = {}
    for col in draws[holes].T.tolist():
        seen[tuple(col)] = seen.get(tuple(col), 0) + 1
    for fill, p in post.items():  # 20,000 draws: a frequency within 4 standard errors
        se = np.sqrt(p * (1 - p) / 20000)
        assert abs(seen.get(fill, 0) / 20000 - p) <= 4 * se + 1e-12


def test_expected_count_scores_are_the_average_over_copies():
    # two completions of three rows: BIC on the averaged counts, by hand, is LL/2 of the
    # stacked rows minus the penalty of three rows
    ds = Dataset(("a", "b"), (("0", "1"), ("0", "1")),
                 np.array([[0, 1, 1, 0, 1, 0], [0, 1, 0, 0, 1, 1]], np.int32))
    fs = FamilyScores(ds, "bic", copies=2)
    ll = local_score(ds, 1, (0,), "bic") + 0.5 * np.log(6) * 2  # the stacked rows' LL
    assert fs.score(1, (0,)) == pytest.approx(ll / 2 - 0.5 * np.log(3) * 2)
    with pytest.raises(ValueError, match="are bic, aic, not 'bdeu'"):
        FamilyScores(ds, "bdeu", copies=2)
    with pytest.raises(ValueError, match="divides the 6 rows"):
        FamilyScores(ds, "bic", copies=4)


def test_em_tables_approach_the_generating_ones():
    # a chain A -> B -> C sampled at 4,000 rows, 30 % of cells removed: EM's tables are
    # close to the complete data's, the available-case start is not what they stay at
    arities, parents = np.array([2, 2, 2]), [(), (0,), (1,)]
    cpts = [np.array([[0.3, 0.7]]), np.array([[0.9, 0.1], [0.2, 0.8]]), np.array([[0.75, 0.25], [0.1, 0.9]])]
    full = sample_missing(np.full((3, 4000), -1), arities, parents, cpts, [0, 1, 2], seed=1)
    gappy = np.where(np.random.default_rng(2).random(full.shape) < 0.3, -1, full)
    truth = fit_cpts(full, arities, parents)
    fitted = em_cpts(gappy, arities, parents)
    for a, b in zip(truth, fitted):
        assert np.abs(a - b).max() < 0.04


def test_em_tables_weigh_the_prior_against_the_rows():
    # A is complete and has no parent: its EM table is its complete-data table, (4 + 1/2) /
    # (5 + 1) with ess 1; B, independent of A, has two rows seen (0 and 1) and two missing:
    # EM keeps P(B) at (1 + 1/2) / (2 + 1) from the observed rows, the missing rows adding
    # their expected counts in the same proportion
    data = np.array([[0, 0, 0, 0, 1], [0, -1, 1, -1, -1]])
    fitted = em_cpts(data, np.array([2, 2]), [(), ()], 1.0, iterations=200, tolerance=0)
    assert fitted[0][0].tolist() == pytest.approx([4.5 / 6, 1.5 / 6])
    # the fixed point of p = (1 + 3p + 1/2) / (5 + 1): p = 1/2
    assert fitted[1][0].tolist() == pytest.approx([0.5, 0.5], abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 6), seed=st.integers(0, 10**6), order_seed=st.integers(0, 10**6))
def test_expected_counts_are_the_posterior_weighted_counts_over_completions(n, seed, order_seed):
    arities, parents, cpts = _random_network(n, seed)
    rng = np.random.default_rng(seed + 2)
    rows = np.array([rng.integers(0, a, 9) for a in arities])
    rows[rng.random(rows.shape) < 0.45] = -1
    want = [np.zeros_like(t) for t in cpts]
    want_ll = 0.0
    for i in range(rows.shape[1]):
        row = rows[:, i].tolist()
        total, holes, post = _brute(row, arities, parents, cpts)
        want_ll += np.log(total)
        for fill, p in post.items():
            x = list(row)
            for v, c in zip(holes, fill):
                x[v] = c
            for v, ps in enumerate(parents):
                want[v][_row_of_table(x, arities, ps), x[v]] += p
    order = np.random.default_rng(order_seed).permutation(n).tolist()
    got, ll = expected_counts(rows, arities, parents, cpts, order)
    assert ll == pytest.approx(want_ll, abs=1e-9)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        assert g == pytest.approx(w, abs=1e-9)


def test_em_for_the_tables_never_lowers_the_observed_likelihood():
    # exact EM with a vanishing prior is EM on the observed cells' likelihood: each round
    # raises it or leaves it (Dempster, Laird & Rubin 1977), here checked round by round
    arities, parents, cpts = _random_network(6, 3)
    full = sample_missing(np.full((6, 600), -1), arities, parents, cpts, list(range(6)), seed=4)
    gappy = np.where(np.random.default_rng(5).random(full.shape) < 0.35, -1, full)
    order = elimination_order(parents)
    lls = []
    for rounds in range(0, 6):
        tables = em_cpts(gappy, arities, parents, 1e-9, iterations=rounds, tolerance=0)
        lls.append(float(row_log_likelihood(gappy, arities, parents, tables, order).sum()))
    assert all(b >= a - 1e-7 for a, b in zip(lls, lls[1:]))
    assert lls[-1] > lls[0] + 1.0  # and EM moved from the available-case tables


def test_rows_are_eliminated_in_chunks_that_fit(monkeypatch):
    import twbn.scoring.posterior as posterior

    # A (2 states) -> B (3 states), order A, B: ψ_A over {A, B} holds 6 numbers a row, ψ_B
    # over {B} 3: 9 a row, so 18 numbers hold 2 rows
    monkeypatch.setattr(posterior, "CHUNK_ENTRIES", 18)
    assert posterior._chunk_rows(np.array([2, 3]), [(), (0,)], [0, 1]) == 2
    arities, parents, cpts = _random_network(5, 11)
    rows = np.array([np.random.default_rng(a).integers(0, a, 40) for a in arities])
    rows[np.random.default_rng(5).random(rows.shape) < 0.4] = -1
    order = elimination_order(parents)
    monkeypatch.setattr(posterior, "CHUNK_ENTRIES", 1 << 24)
    whole = (row_log_likelihood(rows, arities, parents, cpts, order),
             posterior.most_probable_missing(rows, arities, parents, cpts, order),
             expected_counts(rows, arities, parents, cpts, order))
    monkeypatch.setattr(posterior, "CHUNK_ENTRIES", 1)  # one row at a time
    assert posterior._chunk_rows(arities, parents, order) == 1
    assert row_log_likelihood(rows, arities, parents, cpts, order) == pytest.approx(whole[0], abs=1e-12)
    assert (posterior.most_probable_missing(rows, arities, parents, cpts, order) == whole[1]).all()
    counts, ll = expected_counts(rows, arities, parents, cpts, order)
    assert ll == pytest.approx(whole[2][1], abs=1e-9)
    assert all(a == pytest.approx(b, abs=1e-9) for a, b in zip(counts, whole[2][0]))


def test_a_test_row_with_missing_cells_counts_what_is_observed():
    train = Dataset(("a", "b"), (("0", "1"),) * 2, np.array([[0, 0, 1, 1, 1], [0, 1, 1, 1, 0]], np.int32))
    test = Dataset(("a", "b"), (("0", "1"),) * 2, np.array([[1, -1], [-1, 1]], np.int32))
    total, rows = held_out_log_likelihood(train, test, ["a", "b"], [(), (0,)])
    cpts = fit_cpts(train.data, train.arities, [(), (0,)])
    # row 1: P(a = 1); row 2: P(b = 1) = Σ_a P(a) P(b = 1 | a)
    want = np.log(cpts[0][0, 1]) + np.log(cpts[0][0, 0] * cpts[1][0, 1] + cpts[0][0, 1] * cpts[1][1, 1])
    assert rows == 2 and total == pytest.approx(want)


def _gappy_zoo(share: float, seed: int = 0):
    df = pd.read_csv(twbn.example_path("zoo"))
    return df, df.mask(np.random.default_rng(seed).random(df.shape) < share)


@pytest.mark.slow  # a process or a learn of seconds: the default run stays under 10 min
def test_learn_runs_structural_em_on_data_with_missing_cells():
    df, gappy = _gappy_zoo(0.15)
    said = []
    sol = twbn.learn(gappy, treewidth=2, method="localsearch", time_limit=6, seed=0, log=said.append)
    em = sol.stats["structural_em"]
    assert sol.is_network and sol.width <= 2 and sol.status == "feasible"
    assert said[0].startswith(f"{int(gappy.isna().to_numpy().sum()):,} of {df.size:,} cells missing")
    assert em["stopped"] in ("converged", "time", "iterations") and len(em["iterations"]) >= 2
    lls = [it["observed_log_likelihood"] for it in em["iterations"]]
    assert lls[-1] > lls[0]  # the tables and structure fit the observed cells better than the start
    # the model, its tables fitted by EM, answers queries in the data's own values
    model = sol.to_pgmpy(gappy)
    assert model.get_cpds("hair").state_names["hair"] == [False, True]
    # complete test rows: EM's network is far better than the network without arcs
    alone = twbn.learn(df, treewidth=0, time_limit=2)  # width 0: no arc
    assert sol.log_likelihood(gappy, df) > alone.log_likelihood(df, df)


@pytest.mark.slow  # 8 s of EM; the default run had reached 10:13 on a fresh clone
def test_auto_structural_em_climbs_by_localsearch_then_reruns_auto_once():
    from twbn.em import structural_em

    df, gappy = _gappy_zoo(0.15)
    ran = []

    def solve(problem, method, **kw):  # the registry's run, recording which method each M-step ran
        from twbn.solvers.registry import run

        ran.append(method)
        return run(problem, method, **kw)

    ds = twbn.scoring.data.as_dataset(gappy)
    sol, _, info = structural_em(ds, 2, method="auto", time_limit=8, seed=0, solve=solve, max_iterations=4)
    # first EM from the available cases (its start auto's, localsearch M-steps: the
    # policy's em_available_share), then the start: auto on the hot-deck fill; n = 17, k =
    # 2: auto would not run the exact DP, so the climb is localsearch's; the last iteration
    # is auto's own, over the last completions
    assert info["start"] == "hot-deck" and info["from_no_arcs"] is None
    scores = info["observed_scores"]  # the best of EM's end, its start and the other run's, by the observed cells' BIC
    assert not scores or info["chosen"] == max(scores, key=scores.get)
    other = info["from_available_cases"]["iterations"]
    assert ran == ["auto"] + ["localsearch"] * other + ["auto"] + ["localsearch"] * (len(info["iterations"]) - 1) \
        + ["auto"]
    assert sol.width <= 2


_CHAIN = [(), (0,), (1,)]  # A -> B -> C


def _gappy_chain(rows: int) -> tuple[np.ndarray, Dataset]:
    """``rows`` rows of the chain A -> B -> C, 30 % of cells removed: arities and data."""
    arities = np.array([2, 2, 2])
    cpts = [np.array([[0.3, 0.7]]), np.array([[0.9, 0.1], [0.2, 0.8]]), np.array([[0.75, 0.25], [0.1, 0.9]])]
    full = sample_missing(np.full((3, rows), -1), arities, _CHAIN, cpts, [0, 1, 2], seed=1)
    gappy = np.where(np.random.default_rng(2).random(full.shape) < 0.3, -1, full).astype(np.int32)
    return arities, Dataset(("A", "B", "C"), (("0", "1"),) * 3, gappy)


def test_structural_em_starts_from_a_given_network():
    from twbn.em import structural_em

    # the first E-step under the chain (tables from each family's fully observed rows)
    # explains the observed cells better than the network without arcs does
    _, ds = _gappy_chain(2000)
    parents = _CHAIN
    first = {}
    for start in ("empty", parents):
        _, _, info = structural_em(ds, 2, method="dp", time_limit=5, seed=0, start=start, max_iterations=1)
        first[start == "empty"] = info["iterations"][0]["observed_log_likelihood"]
        assert info["start"] == ("empty" if start == "empty" else "given")
    assert first[False] > first[True] + 100
    with pytest.raises(ValueError, match="parents of each of the 3 variables"):
        structural_em(ds, 2, time_limit=5, start=[(), (0,)])
    with pytest.raises(ValueError, match="parents of each of the 3 variables"):
        structural_em(ds, 2, time_limit=5, start=[(0,), (), ()])
    with pytest.raises(ValueError, match="start must be one of hot-deck, available, empty or the parents"):
        structural_em(ds, 2, time_limit=5, start="chow-liu")
    # the policy's em_start_share: 0 starts from no arcs, and leaves the hot-deck start no time
    from twbn.solvers.policy import Policy

    _, _, info = structural_em(ds, 2, method="dp", time_limit=5, seed=0, max_iterations=1,
                               policy=Policy(em_start_share=0))
    assert info["start"] == "empty" and info["iterations"][0]["observed_log_likelihood"] == first[True]
    with pytest.raises(ValueError, match="em_start_share is 0"):
        structural_em(ds, 2, time_limit=5, start="hot-deck", policy=Policy(em_start_share=0))


def test_the_hot_deck_start_is_learned_as_the_policy_says():
    from twbn.em import structural_em
    from twbn.solvers.registry import run

    # the start's search is the first one run (no EM from no arcs): localsearch over single
    # parents by default; with em_start_cache_share, auto over every family of up to k
    # parents of the fill (3 variables: every pair fits at once)
    _, ds = _gappy_chain(500)
    for share, method, most in ((0.0, "localsearch", 1), (0.5, "auto", 2)):
        seen = []

        def solve(problem, m, **kw):
            seen.append((m, max(len(ps) for sets in problem.cache.parent_sets for ps in sets)))
            return run(problem, m, **kw)

        policy = twbn.Policy(em_empty_share=0, em_start_cache_share=share)
        structural_em(ds, 2, method="localsearch", time_limit=3, seed=0, max_iterations=1, solve=solve, policy=policy)
        assert seen[0] == (method, most)


def test_learn_with_missing_cells_refuses_what_it_cannot_do():
    _, gappy = _gappy_zoo(0.1)
    with pytest.raises(ValueError, match="not 'bdeu'"):
        twbn.learn(gappy, treewidth=2, score="bdeu", time_limit=2)
    with pytest.raises(ValueError, match="arc hair->milk is both required and forbidden"):
        twbn.learn(gappy, treewidth=2, time_limit=2, require=[("hair", "milk")], forbid=[("hair", "milk")])
    with pytest.raises(ValueError, match="milk must have 3 parents, but treewidth <= 2 allows at most 2"):
        twbn.learn(gappy, treewidth=2, time_limit=2, require=[("hair", "milk"), ("eggs", "milk"), ("legs", "milk")])
    with pytest.raises(DataError, match="scoring a cache needs complete data"):
        twbn.score(gappy)
    assert twbn.score(gappy, missing="state").n_variables == 17


@pytest.mark.slow  # two learns of seconds each
def test_structural_em_keeps_required_arcs_and_never_a_forbidden_one():
    _, gappy = _gappy_zoo(0.1)
    free = twbn.learn(gappy, treewidth=2, method="localsearch", time_limit=3, seed=0)
    child = next(v for v, ps in free.parents.items() if ps)
    taken = (free.parents[child][0], child)  # an arc EM takes unless it is forbidden
    absent = next((u, v) for u in gappy.columns for v in gappy.columns
                  if u != v and u not in free.parents[v] and v not in free.parents[u])
    sol = twbn.learn(gappy, treewidth=2, method="localsearch", time_limit=3, seed=0, forbid=[taken],
                     require=[absent])
    assert taken[0] not in sol.parents[taken[1]] and absent[0] in sol.parents[absent[1]]
    assert sol.is_network and sol.width <= 2


def test_structural_em_ends_on_the_best_of_its_network_and_its_rivals():
    from twbn.em import network_order, observed_score, structural_em

    # the rivals of the chain's EM: no arcs, and A <- B <- C
    arities, ds = _gappy_chain(1000)
    gappy, chain = ds.data, _CHAIN
    rivals = [[(), (), ()], [(1,), (2,), ()]]
    sol, _, info = structural_em(ds, 1, method="dp", time_limit=5, seed=0, start="empty", max_iterations=1,
                                 rivals=rivals)
    compared = info["observed_scores"]
    assert info["chosen"] == max(compared, key=compared.get)
    assert compared["rival 1"] < compared[info["chosen"]] - 100  # no arcs explains the cells far worse
    # what is returned is the chosen network, its tables scoring what was compared: the
    # observed cells' log-likelihood less one a free parameter (the policy's em_end_penalty)
    kept = [tuple(p) for p in sol.parents]
    assert kept == (rivals[int(info["chosen"][-1]) - 1] if info["chosen"] != "em" else kept)
    got = observed_score(gappy, arities, kept, info["cpts"], network_order(kept), "aic")
    assert got == pytest.approx(compared[info["chosen"]], rel=1e-9)
    assert observed_score(gappy, arities, kept, info["cpts"], network_order(kept), penalty=1.0) == got
    with pytest.raises(ValueError, match="rival 1 has the forbidden arc A->B"):
        structural_em(ds, 1, time_limit=5, rivals=[chain], forbidden={(0, 1)})
    with pytest.raises(ValueError, match="start lacks the required arc B->C"):
        structural_em(ds, 1, time_limit=5, start=[(), (0,), ()], required={(1, 2)})


@pytest.mark.slow  # two structural EMs of seconds
def test_structural_em_from_no_arcs_is_a_contender_at_the_end():
    from twbn.em import structural_em
    from twbn.solvers.registry import run

    def keep_the_start(problem, method, *, time_limit, seed, warm_start=None):
        # M-steps keep their start: EM from no arcs ends where it began, the hot-deck start
        # (searched without a start) finds the chain's arcs
        return warm_start if warm_start is not None else run(problem, method, time_limit=time_limit, seed=seed)

    _, ds = _gappy_chain(1000)
    policy = twbn.Policy.from_mapping({"em_empty_share": 0.3})
    sol, _, info = structural_em(ds, 1, method="localsearch", time_limit=4, seed=0, max_iterations=2,
                                 solve=keep_the_start, policy=policy)
    compared = info["observed_scores"]
    assert info["from_no_arcs"]["iterations"] >= 1
    assert compared["EM from no arcs"] < compared["em"] - 100  # no arcs explains the cells far worse
    assert info["chosen"] == max(compared, key=compared.get) and sum(map(len, sol.parents)) == 2
    assert sol.wall_time >= info["from_no_arcs"]["seconds"]  # the whole call's, both runs
    with pytest.raises(ValueError, match="sum must be below 1"):
        structural_em(ds, 1, time_limit=4, policy=twbn.Policy.from_mapping({"em_empty_share": 0.8}))


def test_structural_em_from_the_available_cases_finds_the_chain():
    from twbn.em import structural_em
    from twbn.solvers.registry import run

    def keep_the_start(problem, method, *, time_limit, seed, warm_start=None):
        return warm_start if warm_start is not None else run(problem, method, time_limit=time_limit, seed=seed)

    # the start learned on each family's observed rows, kept by M-steps that keep their
    # start: the chain's skeleton (the optimum over 3 variables, dp), whichever way its arcs point
    _, ds = _gappy_chain(2000)
    sol, problem, info = structural_em(ds, 1, time_limit=4, seed=0, start="available", max_iterations=1,
                                       solve=keep_the_start)
    assert info["start"] == "available" and problem.cache.meta["source"] == "structural EM: expected counts"
    assert {frozenset((u, v)) for v, ps in enumerate(sol.parents) for u in ps} == {frozenset((0, 1)), frozenset((1, 2))}
    # as a second run beside the hot-deck one: a contender at the end, its run recorded
    policy = twbn.Policy(em_available_share=0.3, em_empty_share=0)
    sol, _, info = structural_em(ds, 1, method="localsearch", time_limit=4, seed=0, max_iterations=2,
                                 solve=keep_the_start, policy=policy)
    assert info["from_available_cases"]["iterations"] >= 1 and info["from_no_arcs"] is None
    compared = info["observed_scores"]  # empty where every network is EM's own end
    assert sum(map(len, sol.parents)) == 2
    assert info["chosen"] == (max(compared, key=compared.get) if compared else "em")
    if "EM from available cases" in compared:  # the chain too, reversed: one observed score
        assert compared["EM from available cases"] == pytest.approx(compared["em"], rel=1e-3)
    with pytest.raises(ValueError, match="start 'available' has no time"):
        structural_em(ds, 1, time_limit=4, start="available", policy=twbn.Policy(em_start_share=0))
    with pytest.raises(ValueError, match="sum must be below 1"):
        structural_em(ds, 1, time_limit=4, policy=twbn.Policy(em_available_share=0.3, em_empty_share=0.3))


@pytest.mark.slow  # two bounds of seconds each
def test_learn_under_several_bounds_with_missing_cells():
    _, gappy = _gappy_zoo(0.1)
    one, two = twbn.learn(gappy, treewidth=[1, 2], method="localsearch", time_limit=3, seed=0)
    assert one.width <= 1 and two.width <= 2 and one.treewidth == 1 and two.treewidth == 2
    em = two.stats["structural_em"]
    if two.parents != one.parents:  # the network of bound 1 was compared at bound 2's end
        assert "rival 1" in em["observed_scores"]
        assert em["observed_scores"][em["chosen"]] == max(em["observed_scores"].values())


@pytest.mark.slow  # a process or a learn of seconds: the default run stays under 10 min
def test_the_command_line_on_a_file_with_blank_cells(tmp_path):
    _, gappy = _gappy_zoo(0.1)
    data = tmp_path / "gappy.csv"
    gappy.to_csv(data, index=False)
    out = tmp_path / "r.json"
    run = subprocess.run([sys.executable, "-m", "twbn.experiments.cli", "learn", str(data), "--treewidth", "2",
                          "--method", "localsearch", "--time-limit", "5", "--seed", "0", "-o", str(out)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "cells missing" in run.stdout and "learned by structural EM" in run.stdout
    # the bound, where the summary line gives one, says what it is over
    assert "over the last E-step's expected counts" in run.stdout or "bound none" in run.stdout
    assert json.loads(out.read_text())["stats"]["structural_em"]["iterations"]
    score = subprocess.run([sys.executable, "-m", "twbn.experiments.cli", "score", str(data), "-o",
                            str(tmp_path / "c.jkl")], capture_output=True, text=True, timeout=120)
    assert score.returncode == 1 and "Traceback" not in score.stderr
    assert "cells missing" in score.stderr and not (tmp_path / "c.jkl").exists()


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 6), seed=st.integers(0, 10**6))
def test_the_most_probable_completion_is_the_enumerated_argmax(n, seed):
    from twbn.scoring.posterior import most_probable_missing

    arities, parents, cpts = _random_network(n, seed)
    rng = np.random.default_rng(seed + 2)
    rows = np.array([rng.integers(0, a, 6) for a in arities])
    rows[rng.random(rows.shape) < 0.5] = -1
    filled = most_probable_missing(rows, arities, parents, cpts, elimination_order(parents))
    for i in range(rows.shape[1]):
        _, holes, post = _brute(rows[:, i].tolist(), arities, parents, cpts)
        best = max(post.values())
        got = tuple(filled[holes, i].tolist())
        assert post[got] >= best * (1 - 1e-9)  # the argmax (ties: any of them)
        kept = [v for v in range(n) if v not in holes]
        assert (filled[kept, i] == rows[kept, i]).all()


@pytest.mark.slow  # a process or a learn of seconds: the default run stays under 10 min
def test_impute_and_check_from_the_command_line(tmp_path):
    df, gappy = _gappy_zoo(0.1, seed=4)
    data = tmp_path / "gappy.csv"
    gappy.to_csv(data, index=False)
    result = tmp_path / "r.json"
    twbn.learn(gappy, treewidth=2, method="localsearch", time_limit=4, seed=0).save(result)
    out = tmp_path / "filled.csv"
    cli = [sys.executable, "-m", "twbn.experiments.cli"]
    run = subprocess.run([*cli, "impute", str(data), str(result), "-o", str(out)], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    filled = pd.read_csv(out)
    assert filled.shape == df.shape and not filled.isna().to_numpy().any()

    def text(cells):  # 4.0 (a column with holes is float) and 4 are one state
        return np.array([str(int(x)) if isinstance(x, float) and x.is_integer() else str(x) for x in cells])

    seen = ~gappy.isna().to_numpy()
    truth, got = df.to_numpy(), filled.to_numpy()
    assert (text(got[seen]) == text(truth[seen])).all()  # observed cells kept
    # the filled cells agree with the truth more often than each column's mode does
    holes = ~seen
    mode = gappy.mode().iloc[0]
    by_mode = np.array([[mode[c]] * len(df) for c in df.columns], dtype=object).T
    right = (text(got[holes]) == text(truth[holes])).mean()
    baseline = (text(by_mode[holes]) == text(truth[holes])).mean()
    assert right > baseline
    check = subprocess.run([*cli, "check", str(data), str(result)], capture_output=True, text=True, timeout=120)
    assert check.returncode == 0 and "not re-scored from the data" in check.stdout, check.stdout + check.stderr
    assert "re-scored from the data," not in check.stdout and "recomputed" not in check.stdout  # nothing claims it was


def test_observed_score_is_the_enumerated_likelihood_of_the_observed_cells_minus_bic():
    import itertools

    from twbn.em import observed_score

    rng = np.random.default_rng(5)
    arities, parents = np.array([2, 3, 2]), [(), (0,), (0, 1)]
    cpts = [rng.dirichlet(np.ones(arities[v]), int(np.prod(arities[list(ps)], dtype=int)))
            for v, ps in enumerate(parents)]
    codes = np.array([rng.integers(0, a, 12) for a in arities])
    codes[rng.random(codes.shape) < 0.35] = -1
    want = 0.0
    for row in codes.T:
        holes = [v for v in range(3) if row[v] < 0]
        p = 0.0
        for fill in itertools.product(*[range(arities[v]) for v in holes]):
            x = row.copy()
            x[holes] = fill
            # a table's row: the parents' states, the first parent varying fastest
            rows = [sum(int(x[u]) * int(np.prod(arities[list(ps[:i])], dtype=int)) for i, u in enumerate(ps))
                    for ps in parents]
            p += np.prod([cpts[v][rows[v], x[v]] for v in range(3)])
        want += np.log(p)
    free = 1 * 1 + 2 * 2 + 1 * 6  # (r - 1)·q: A, B | A, C | A, B
    want -= np.log(12) / 2 * free
    assert observed_score(codes, arities, parents, cpts, [2, 1, 0], "bic") == pytest.approx(want, rel=1e-12)
    # a penalty of its own per free parameter: 2.5 here
    got = observed_score(codes, arities, parents, cpts, [2, 1, 0], penalty=2.5)
    assert got == pytest.approx(want + (np.log(12) / 2 - 2.5) * free, rel=1e-12)


def test_an_object_column_of_bools_reads_as_the_bool_column():
    # what dropping the rows with holes leaves of a bool column: objects, typed as bools
    from twbn.scoring.data import dataset_from_frame, state_values

    df = pd.DataFrame({"a": [True, False, True, True], "b": [1.0, 2.0, 1.0, 2.0]})
    as_objects = df.astype(object)
    assert dataset_from_frame(as_objects).states == dataset_from_frame(df).states == (("0", "1"), ("1", "2"))
    assert state_values(as_objects) == {"a": {"1": True, "0": False}, "b": {"1": 1.0, "2": 2.0}}
