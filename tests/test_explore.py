"""Approximate parent-set exploration: with every candidate and no budget it equals the
exhaustive cache; under a budget its caches are valid with correct scores."""

import math
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twbn.scoring.data import read_csv
from twbn.scoring.explore import candidate_parents, explore_cache, pairwise_mutual_information
from twbn.scoring.local_scores import Scorer
from twbn.scoring.networks import random_network, sample
from twbn.scoring.parent_sets import build_cache
from tests.conftest import BUNDLED


def _families(cache):
    return [dict(zip(cache.parent_sets[v], cache.scores[v].tolist())) for v in range(cache.n_variables)]


def _same(a, b):
    fa, fb = _families(a), _families(b)
    assert [sorted(f) for f in fa] == [sorted(f) for f in fb]
    for x, y in zip(fa, fb):
        for s in x:
            assert x[s] == pytest.approx(y[s], rel=1e-12, abs=1e-9)


@pytest.mark.parametrize("name", ["housing", "zoo"])
@pytest.mark.parametrize("score", ["bic", "bdeu"])
def test_generous_budget_equals_the_exhaustive_cache(name, score):
    ds = read_csv(BUNDLED / f"{name}.csv.gz")
    exhaustive, _ = build_cache(ds, score=score, max_parents=3, pruning="all", progress=False)
    approx, stats = explore_cache(ds, score=score, max_parents=3, candidates=ds.n_variables - 1,
                                  time_per_variable=None, jobs=2, progress=False)
    _same(approx, exhaustive)
    assert stats["complete"] and not stats["approximate"]
    assert [exhaustive.parent_sets[v][0] for v in range(ds.n_variables)] == \
        [approx.parent_sets[v][0] for v in range(ds.n_variables)]


@settings(max_examples=15, deadline=None)
@given(n=st.integers(3, 7), rows=st.integers(20, 300), seed=st.integers(0, 10**6),
       score=st.sampled_from(["bic", "aic", "bdeu"]), d=st.integers(1, 3))
def test_random_networks_equal_exhaustive(n, rows, seed, score, d):
    ds = sample(random_network(n, seed=seed, max_parents=3), rows, seed=seed + 1)
    exhaustive, _ = build_cache(ds, score=score, max_parents=d, pruning="all", progress=False)
    approx, _ = explore_cache(ds, score=score, max_parents=d, candidates=n - 1, time_per_variable=None, jobs=1,
                              progress=False)
    _same(approx, exhaustive)


def test_budgeted_cache_is_valid_with_correct_scores():
    ds = sample(random_network(60, seed=4), 800, seed=5)
    cache, stats = explore_cache(ds, score="bic", max_parents=3, candidates=8, time_per_variable=0.01, jobs=2,
                                 progress=False)
    assert stats["approximate"] and not stats["complete"] and cache.meta["approximate"]
    mi = pairwise_mutual_information(ds)
    cands = candidate_parents(mi, 8)
    fresh = Scorer(ds, "bic")
    for v in range(ds.n_variables):
        fam = _families(cache)[v]
        assert () in fam  # the empty set is always scored, so every variable has a choice
        for ps, s in fam.items():
            assert len(ps) <= 3 and v not in ps and set(ps) <= set(cands[v].tolist())
            assert s == pytest.approx(fresh.local_score(v, ps), rel=1e-12)
        # subset dominance: no kept set is matched by a kept strict subset
        for ps, s in fam.items():
            assert all(fam[t] < s for t in fam if set(t) < set(ps))


def test_one_and_two_processes_agree():
    ds = sample(random_network(40, seed=7), 500, seed=8)
    a, _ = explore_cache(ds, max_parents=2, candidates=6, time_per_variable=None, jobs=1, progress=False)
    b, _ = explore_cache(ds, max_parents=2, candidates=6, time_per_variable=None, jobs=2, progress=False)
    _same(a, b)


def test_pairwise_mutual_information_matches_log_likelihoods():
    """N·I(X;Y) = LL(X | Y) − LL(X), the likelihoods counted directly by the scorer."""
    ds = read_csv(BUNDLED / "housing.csv.gz")
    mi = pairwise_mutual_information(ds, block=5)  # several blocks
    sc = Scorer(ds, "bic")
    for x in range(ds.n_variables):
        assert math.isinf(mi[x, x]) and mi[x, x] < 0
        for y in range(ds.n_variables):
            if x != y:
                want = sc.log_likelihood(x, (y,)) - sc.log_likelihood(x, ())
                assert mi[x, y] == pytest.approx(want, rel=1e-4, abs=1e-2)
    top = candidate_parents(mi, 3)
    for x in range(ds.n_variables):
        order = np.sort(mi[x])[::-1][:3]
        np.testing.assert_allclose(mi[x, top[x]], order)


def test_bad_arguments():
    ds = read_csv(BUNDLED / "housing.csv.gz")
    for kw, msg in (({"candidates": -1}, "candidates"), ({"time_per_variable": 0}, "time_per_variable"),
                    ({"jobs": 0}, "jobs"), ({"score": "nope"}, "unknown score")):
        with pytest.raises(ValueError, match=msg):
            explore_cache(ds, progress=False, **kw)


@pytest.mark.slow  # two interpreters importing twbn: 7 s
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs a system where a process chooses its cores, and two of them")
def test_the_default_processes_are_the_cores_a_process_may_use():
    # pinned to one core, two processes would take turns and overrun the time planned
    # for them: the default is then one; unpinned, two
    code = ("import twbn; _, s = twbn.score(twbn.example_path('zoo'), approximate=True, return_stats=True, "
            "time_per_variable=0.01); print(s['jobs'])")
    core = min(os.sched_getaffinity(0))
    pinned = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            preexec_fn=lambda: os.sched_setaffinity(0, {core}))
    free = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert (pinned.stdout.split()[-1], free.stdout.split()[-1]) == ("1", "2")


def test_with_another_thread_alive_the_work_runs_here_and_agrees():
    """A fork beside a live thread may copy a lock that thread holds (a hang for good):
    then fork_map runs the variables in this process, with the same answer."""
    import threading

    from twbn.scoring import parallel

    ds = sample(random_network(12, seed=3), 300, seed=4)
    a, _ = explore_cache(ds, max_parents=2, candidates=5, time_per_variable=None, jobs=1, progress=False)
    release = threading.Event()
    waiter = threading.Thread(target=release.wait, name="someone-else")
    waiter.start()
    try:
        assert not parallel._may_fork()
        b, _ = explore_cache(ds, max_parents=2, candidates=5, time_per_variable=None, jobs=2, progress=False)
    finally:
        release.set()
        waiter.join()
    _same(a, b)
