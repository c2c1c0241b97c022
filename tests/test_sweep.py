"""Issue 33.4: a sweep over treewidth bounds never scores lower at a larger bound, each
bound's network certified for that bound; twbn.learn and `twbn learn --treewidth 2,5,8`."""

import json

import pytest

import twbn
from twbn.experiments.cli import main
from twbn.formulations.problem import Problem
from twbn.formulations.verify import verify_result
from twbn.scoring.jkl import write_jkl
from twbn.solvers.registry import solve
from twbn.solvers.sweep import sorted_bounds, sweep
from tests.helpers import random_cache


@pytest.mark.parametrize("seed", range(3))
def test_a_sweep_of_the_exact_method_is_the_optimum_at_every_bound(seed):
    cache = random_cache(8, seed, max_size=3, density=0.4)
    problems = [Problem(cache, k) for k in (1, 2, 3, None)]
    out = sweep(problems, lambda p, s: solve(p, "dp"), takes_start=False)
    for problem, sol in zip(problems, out):
        alone = solve(Problem(cache, problem.treewidth), "dp")  # each bound solved on its own
        assert sol.score == pytest.approx(alone.score)
        assert sol.status == "optimal"


def test_a_heuristic_sweep_keeps_the_smaller_bound_s_network_where_its_own_is_worse():
    # k-G with one order is a weak method: at a larger bound its one network is often worse
    # than the one before it; the sweep returns the better, certified for the larger bound
    kept = 0
    for seed in range(12):
        cache = random_cache(9, seed, max_size=3, density=0.5)
        problems = [Problem(cache, k) for k in (1, 2, 3)]
        own = {}

        def one(problem, start, seed=seed):
            sol = solve(problem, "kg", options={"max_iterations": 1}, seed=seed + problem.treewidth)
            own[problem.treewidth] = sol.score
            return sol

        out = sweep(problems, one, takes_start=False)
        scores = [s.score for s in out]
        assert scores == sorted(scores)
        for problem, sol in zip(problems, out):
            assert sol.score >= own[problem.treewidth] - 1e-9
            assert verify_result(cache, sol.to_json(problem), problem.treewidth) == []
            assert sol.bound >= sol.score
            if sol.stats.get("kept_from_smaller_bound"):
                kept += 1
                assert sol.stats["kept_from_smaller_bound"]["method_score"] == own[problem.treewidth]
                assert sol.score > own[problem.treewidth]
    assert kept > 0  # the rule was needed at least once in these twelve sweeps


def test_bounds_are_sorted_with_unbounded_last_and_repeats_refused():
    assert sorted_bounds([8, None, 2, 5]) == [2, 5, 8, None]
    with pytest.raises(ValueError, match="repeat"):
        sorted_bounds([2, 2])
    with pytest.raises(ValueError, match="at least one"):
        sorted_bounds([])


def test_learn_with_a_list_of_bounds_returns_one_solution_each_never_lower():
    cache = random_cache(8, 5, max_size=3, density=0.5)
    sols = twbn.learn(cache, treewidth=[3, 1, 2], method="kg", time_limit=1, seed=0)
    assert [s.treewidth for s in sols] == [1, 2, 3]
    assert [s.score for s in sols] == sorted(s.score for s in sols)
    for s in sols:
        assert s.check(cache) == [] and s.width <= s.treewidth
    # one bound still gives one Solution, as before
    assert isinstance(twbn.learn(cache, treewidth=2, method="dp"), twbn.Solution)


def test_cli_sweep_writes_one_checked_result_per_bound(tmp_path, capsys):
    cache = random_cache(8, 3, max_size=3, density=0.5)
    jkl = tmp_path / "c.jkl"
    write_jkl(cache, jkl)
    out = tmp_path / "out"
    out.mkdir()
    assert main(["learn", str(jkl), "--treewidth", "2,1,unbounded", "--time-limit", "2", "-o", str(out), "-q"]) == 0
    files = sorted(p.name for p in out.iterdir())
    assert files == ["c.auto.k1.json", "c.auto.k2.json", "c.auto.kunbounded.json"]
    scores = []
    for k in ("1", "2", "unbounded"):
        path = out / f"c.auto.k{k}.json"
        assert main(["check", str(jkl), str(path)]) == 0
        result = json.loads(path.read_text())
        assert result["treewidth_bound"] == (None if k == "unbounded" else int(k))
        scores.append(result["score"])
    assert scores == sorted(scores)
    # unbounded: the exact optimum (n = 8), which no bounded network beats
    assert scores[-1] == pytest.approx(solve(Problem(cache), "dp").score)
    # a pattern names the files
    assert main(["learn", str(jkl), "--treewidth", "1,2", "--method", "dp", "-o", str(tmp_path / "r-{k}.json"),
                 "-q"]) == 0
    assert (tmp_path / "r-1.json").exists() and (tmp_path / "r-2.json").exists()
    capsys.readouterr()
    # -o neither a folder nor a pattern: refused before anything runs
    assert main(["learn", str(jkl), "--treewidth", "1,2", "-o", str(tmp_path / "x.json")]) == 1
    assert "a folder (a new one: end it with /) or a pattern" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()
    # issue 63.6: a trailing slash names a folder to make, as the README's sweep does
    assert main(["learn", str(jkl), "--treewidth", "1,2", "--method", "dp", "-o", f"{tmp_path / 'new'}/", "-q"]) == 0
    assert sorted(p.name for p in (tmp_path / "new").iterdir()) == ["c.dp.k1.json", "c.dp.k2.json"]
    # ... but not one whose parent is missing, and none is left behind when nothing is written
    assert main(["learn", str(jkl), "--treewidth", "1,2", "-o", f"{tmp_path / 'a' / 'b'}/"]) == 1
    assert "cannot make the folder" in capsys.readouterr().err and not (tmp_path / "a").exists()
    assert main(["learn", str(tmp_path / "missing.jkl"), "--treewidth", "1,2", "-o", f"{tmp_path / 'left'}/"]) == 1
    assert not (tmp_path / "left").exists()


def test_ctrl_c_in_twbn_learn_returns_the_best_network_so_far():
    """The Python front door keeps the contract of the command line: SIGINT during an
    anytime method gives its best certified network, marked interrupted; in a sweep the
    larger bounds are not run."""
    import os
    import signal
    import threading
    import time

    cache = random_cache(12, 4, max_size=3, density=0.5)
    # Python's own handler, or SIG_IGN where the test run was started in the background
    # by a shell (which then ignores SIGINT for it): learn catches SIGINT either way
    before = signal.getsignal(signal.SIGINT)
    threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT)).start()
    t0 = time.monotonic()
    sols = twbn.learn(cache, treewidth=[2, 3, 4], method="kg", time_limit=30, seed=0)
    assert time.monotonic() - t0 < 5.0
    assert len(sols) == 1 and sols[0].treewidth == 2
    assert sols[0].stats["interrupted"] is True and sols[0].check(cache) == []
    # the handler is put back: a later Ctrl-C does what it did before
    assert signal.getsignal(signal.SIGINT) is before


def test_a_larger_bound_s_proof_tightens_a_smaller_bound_s_and_is_reported_again():
    """k = 2 by k-G (its bound: the cluster LP's, which on this cache stops above the
    unbounded optimum) and the unbounded problem by the exact DP: every network of width
    <= 2 is one without a bound, so the unbounded optimum bounds k = 2 too; sweep lends it
    down and hands the tightened result to on_result again. Checked against the DP
    optimum at k = 2, which the lent bound must not cut."""
    from twbn.solvers.sweep import lend_bounds

    cache = random_cache(8, 5, max_size=2, density=0.6)
    problems = [Problem(cache, 2), Problem(cache, None)]
    seen = []
    out = sweep(problems, lambda p, s: solve(p, "kg" if p.treewidth else "dp", seed=0, time_limit=1.0),
                takes_start=False, on_result=lambda p, s: seen.append((p.treewidth, s.bound)))
    unbounded = solve(problems[1], "dp").score
    own = seen[0][1]  # k-G's own bound, as first reported
    assert out[1].status == "optimal" and out[1].bound == pytest.approx(unbounded)
    assert unbounded < own - 1e-6  # the lent bound is tighter than k-G's own
    assert out[0].bound == pytest.approx(max(unbounded, out[0].score))
    assert out[0].stats["bound_from_larger_bound"] == {"treewidth": None, "bound": pytest.approx(unbounded),
                                                       "own_bound": pytest.approx(own)}
    assert out[0].bound >= solve(problems[0], "dp").score - 1e-6  # still a bound
    assert verify_result(cache, out[0].to_json(problems[0]), 2) == []
    assert [k for k, _ in seen] == [2, None, 2] and seen[-1][1] == out[0].bound
    assert lend_bounds(problems, out) == []  # nothing more to lend


def test_a_bound_is_lent_only_downwards_and_never_to_an_optimal_result():
    from twbn.formulations.solution import make_solution
    from twbn.solvers.sweep import lend_bounds

    cache = random_cache(6, 1, max_size=2, density=0.6)
    ps = [Problem(cache, k) for k in (1, 2, 3)]
    empty = [make_solution(p, [()] * 6, bound=None, status="feasible", method="x") for p in ps]
    top = sum(s.score for s in empty[:1])
    loose, tight = top + 5.0, top + 1.0
    empty[0].bound, empty[1].bound, empty[2].bound = tight, loose, loose  # k = 1 is the tightest
    assert lend_bounds(ps, empty) == [] and [s.bound for s in empty] == [tight, loose, loose]
    empty[0].bound, empty[2].bound = loose, tight  # now k = 3 is: it reaches k = 1 and 2
    assert lend_bounds(ps, empty) == [0, 1] and [s.bound for s in empty] == [tight, tight, tight]
    done = make_solution(ps[0], [()] * 6, bound=top, status="optimal", method="x")
    assert lend_bounds(ps, [done, empty[1], empty[2]]) == [] and done.bound == top


def test_cli_sweep_bounds_never_loosen_as_k_shrinks_and_a_lent_one_is_rewritten(tmp_path, capsys):
    """After a sweep each file's bound is at most every larger bound's (a bound under k'
    holds under k < k'). On this cache k-G's cluster LP at k = 3 usually ends below k = 2's;
    then k = 2's file is rewritten with the lent bound, said on one line, and checks."""
    jkl = tmp_path / "c.jkl"
    write_jkl(random_cache(8, 5, max_size=2, density=0.6), jkl)
    out = tmp_path / "out"
    out.mkdir()
    assert main(["learn", str(jkl), "--treewidth", "1,2,3", "--method", "kg", "--time-limit", "1", "--seed", "0",
                 "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    results = [json.loads((out / f"c.kg.k{k}.json").read_text()) for k in (1, 2, 3)]
    bounds = [r["bound"] for r in results]
    assert all(a <= b + 1e-9 for a, b in zip(bounds, bounds[1:])), bounds
    lent = [r["treewidth_bound"] for r in results if "bound_from_larger_bound" in r["stats"]]
    assert printed.count("bound tightened") == len(lent)
    for k in lent:
        assert f"k = {k}: bound tightened to" in printed and main(["check", str(jkl), str(out / f"c.kg.k{k}.json")]) == 0
