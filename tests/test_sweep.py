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
    assert "a folder or a pattern" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


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
