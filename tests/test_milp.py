"""The Nie et al. MILP on every installed backend against the exact DP, the branching
oracle and the verifier; warm starts, time limits, model size, strengthening."""

import importlib.util
import time

import pytest

from twbn.formulations.elimination_milp import MilpOptions, build_elimination_milp
from twbn.formulations.problem import Problem
from twbn.formulations.solution import make_solution
from twbn.formulations.verify import verify_result
from twbn.solvers.exact.branching import optimal_forest
from twbn.solvers.models.milp import solve_milp
from twbn.solvers.registry import solve
from tests.helpers import random_cache
from tests.test_exact import _binarised_cache, branching_optimum

BACKENDS = [b for b, mod in (("highs", "highspy"), ("scip", "pyscipopt"), ("cbc", "mip"))
            if importlib.util.find_spec(mod) is not None]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("k", [1, 2, 3, None])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_milp_reaches_the_dp_optimum(backend, k, seed):
    cache = random_cache(6, seed, max_size=3, density=0.4)
    problem = Problem(cache, k)
    exact = solve(problem, "dp")
    sol = solve(problem, "milp", solver=backend)
    assert sol.status == "optimal"
    assert sol.score == pytest.approx(exact.score, abs=1e-6)
    assert verify_result(cache, sol.to_json(problem), k) == []


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_milp_k1_on_real_data_equals_branching_oracle(backend):
    from tests.conftest import BUNDLED

    cache = _binarised_cache(BUNDLED / "housing.csv.gz")
    problem = Problem(cache, 1)
    sol = solve(problem, "milp", solver=backend)
    assert sol.score == pytest.approx(branching_optimum(cache), abs=1e-6)
    assert verify_result(cache, sol.to_json(problem), 1) == []
    # the branching start is that same optimum
    assert sum(cache.score_of(v, p) for v, p in enumerate(optimal_forest(problem))) == pytest.approx(sol.score, abs=1e-6)


@pytest.mark.parametrize("backend", [pytest.param(b, marks=pytest.mark.slow) if b == "cbc" else b  # cbc: 6.5 s
                                     for b in BACKENDS])
def test_warm_start_is_the_first_incumbent(backend):
    cache = random_cache(8, 3, max_size=3, density=0.4)
    problem = Problem(cache, 2)
    start = make_solution(problem, [()] * 8, bound=None, status="feasible", method="test")
    sol = solve(problem, "milp", solver=backend, warm_start=start)
    first = next(p["incumbent"] for p in sol.trajectory if p["incumbent"] is not None)
    assert first == pytest.approx(start.score, abs=1e-6)
    assert sol.score >= start.score and sol.stats["warm_start_score"] == pytest.approx(start.score)


@pytest.mark.parametrize("backend", BACKENDS)
def test_time_limit_is_honoured_and_the_result_certified(backend):
    from tests.conftest import BUNDLED
    from twbn.scoring.data import read_csv
    from twbn.scoring.parent_sets import build_cache

    cache, _ = build_cache(read_csv(BUNDLED / "zoo.csv.gz"), score="bic", max_parents=3, progress=False)
    problem = Problem(cache, 3)
    t = time.monotonic()
    sol = solve(problem, "milp", solver=backend, time_limit=3)
    assert time.monotonic() - t < 3 + 10  # model building and LP writing included
    assert sol.status in ("feasible", "optimal", "unknown")
    assert verify_result(cache, sol.to_json(problem), 3) == []
    if sol.bound is not None and sol.score is not None:
        assert sol.bound >= sol.score - 1e-6
    assert sol.trajectory and sol.trajectory[-1]["time"] <= sol.wall_time + 1e-6


def test_model_size_and_named_families():
    cache = random_cache(6, 4, max_size=2, density=0.5)
    milp = build_elimination_milp(Problem(cache, 2))
    fams = milp.size["constraint_families"]
    n = 6
    assert {"c8b", "c8c", "c8d", "c8e", "c8f", "c8g", "c8h"} <= set(fams)
    assert fams["c8b"] == n and fams["c8c"] == n * (n - 1) and fams["c8d"] == n * (n - 1) * (n - 2) // 2
    assert milp.size["binaries"] == cache.n_parent_sets() + n * (n - 1)
    plain = build_elimination_milp(Problem(cache, 2), MilpOptions.plain())
    assert "c2cycle" not in plain.size["constraint_families"]
    assert plain.size["constraint_families"]["c8f"] >= fams["c8f"]  # aggregation never adds rows
    unb = build_elimination_milp(Problem(cache, None))
    assert "c8b" not in unb.size["constraint_families"]


@pytest.mark.parametrize("k", [1, 2, 3])
def test_published_and_strengthened_models_agree(k):
    cache = random_cache(7, 8, max_size=3, density=0.35)
    problem = Problem(cache, k)
    a = solve_milp(problem, options=MilpOptions.plain())
    b = solve_milp(problem, options=MilpOptions())
    assert a.score == pytest.approx(b.score, abs=1e-6) == solve(problem, "dp").score


def test_background_knowledge_in_the_milp():
    cache = random_cache(6, 5, max_size=2, density=0.7)
    problem = Problem(cache, 2, forbidden={(2, 0)}, required={(1, 3)})
    sol = solve(problem, "milp")
    assert sol.score == pytest.approx(solve(problem, "dp").score, abs=1e-6)
    assert verify_result(cache, sol.to_json(problem), 2) == []


def test_missing_backend_names_the_package(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "mip", None)  # as where python-mip is not installed: import fails
    cache = random_cache(4, 1)
    with pytest.raises(ValueError, match=r"pip install 'twbn\[cbc\]'"):
        solve(Problem(cache, 2), "milp", solver="cbc")


def test_cli_warm_start_from_file_and_tree(tmp_path, capsys):
    import json

    from twbn.experiments.cli import main
    from twbn.scoring.jkl import write_jkl

    cache = random_cache(7, 9, max_size=2, density=0.5)
    jkl = tmp_path / "c.jkl"
    write_jkl(cache, jkl)
    first = tmp_path / "tree.json"
    assert main(["learn", str(jkl), "--treewidth", "1", "--method", "milp", "-o", str(first), "-q"]) == 0
    second = tmp_path / "milp.json"
    assert main(["learn", str(jkl), "--treewidth", "2", "--method", "milp", "--warm-start", str(first),
                 "-o", str(second), "-q"]) == 0
    r = json.loads(second.read_text())
    assert r["stats"]["warm_start_score"] == pytest.approx(json.loads(first.read_text())["score"])
    assert main(["check", str(jkl), str(second)]) == 0
    third = tmp_path / "t.json"
    assert main(["learn", str(jkl), "--treewidth", "2", "--method", "milp", "--warm-start", "tree",
                 "-o", str(third), "-q"]) == 0
    assert json.loads(third.read_text())["score"] == pytest.approx(r["score"])
