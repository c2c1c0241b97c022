"""Issue 32.5/32.6: the three models as objects a researcher extends (twbn.models), each
checked against the exact DP; the documented valid inequality in a grid beside the stock
MILP, with gaps side by side."""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from pathlib import Path

import pytest

import twbn
from tests.conftest import BUNDLED
from tests.helpers import cp_no_arcs_into_first, random_cache
from twbn.formulations.problem import Problem
from twbn.models import ClusterCutIlp, KtreeCp, NieMilp
from twbn.solvers.registry import solve

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "extending.md").read_text()
PLUGIN = re.search(r"```python\n(\"\"\"The Nie et al. MILP with the arc bound.*?)```", DOC, re.S).group(1)
GRID = re.search(r"```toml\n(name = \"arcs\".*?)```", DOC, re.S).group(1)


def _plugin() -> dict:
    space: dict = {}
    exec(compile(PLUGIN, "docs/extending.md", "exec"), space)
    return space


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)])
def test_the_arc_bound_is_valid_the_extended_milp_reaches_the_dp_optimum(seed):
    cache = random_cache(7, seed, max_size=2, density=0.6)
    k = 2
    problem = Problem(cache, k)
    stock = NieMilp(problem).solve(budget=60)
    extended = NieMilp(problem).extend(_plugin()["arc_bound"]).solve(budget=60)
    optimum = solve(problem, "dp")
    assert stock.status == extended.status == "optimal"
    # a valid row cuts off no network of width <= k, so the optimum stays
    assert extended.score == pytest.approx(optimum.score) == pytest.approx(stock.score)
    assert len(extended.arcs) <= k * problem.n - k * (k + 1) // 2
    assert extended.check(cache) == [] and extended.stats["extended_by"] == ["arc_bound"]


def test_an_invalid_row_costs_optimality_not_the_certificate():
    # "at most one arc" is not valid: the network obeys it and is still certified, and the
    # trivial bound is never undercut by more than the model's claim
    cache = random_cache(6, 1, max_size=2, density=0.7)
    problem = Problem(cache, 2)

    def one_arc(model, milp):
        import pyomo.environ as pyo

        sizes = {(v, t): len(milp.problem.candidates.parent_sets[v][t]) for v, t in milp.pa_index}
        model.one_arc = pyo.Constraint(expr=sum(sizes[v, t] * model.Pa[v, t] for v, t in milp.pa_index) <= 1)

    sol = NieMilp(problem).extend(one_arc).solve(budget=60)
    assert len(sol.arcs) <= 1 and sol.check(cache) == []
    assert sol.score <= solve(problem, "dp").score


def test_a_cluster_ilp_row_and_a_cp_row_equal_the_dp_with_the_same_constraint():
    cache = random_cache(7, 4, max_size=2, density=0.6)
    into_first = frozenset((u, 0) for u in range(1, 7))
    for k in (None, 2):
        want = solve(Problem(cache, k, forbidden=into_first), "dp").score

        def empty_first(model, ilp):
            model.addCons(ilp.fam_vars[ilp.table.family(0, ())] == 1)

        ilp = ClusterCutIlp(Problem(cache, k)).extend(empty_first).solve(budget=60)
        assert ilp.status == "optimal" and ilp.score == pytest.approx(want) and ilp.parents["X0"] == ()
    cp = KtreeCp(Problem(cache, 2), {"workers": 1}).extend(cp_no_arcs_into_first).solve(budget=60)
    assert cp.score == pytest.approx(solve(Problem(cache, 2, forbidden=into_first), "dp").score)
    assert cp.parents["X0"] == () and cp.stats["extended_by"] == ["cp_no_arcs_into_first"]


def test_models_refuse_what_they_cannot_use():
    problem = Problem(random_cache(4, 0), 2)
    with pytest.raises(TypeError, match="twbn.Problem"):
        NieMilp("not a problem")
    with pytest.raises(twbn.OptionError, match="no option 'agregate' \\(did you mean aggregate\\?\\)"):
        NieMilp(problem, {"agregate": False})
    with pytest.raises(TypeError, match="an extension is a function"):
        NieMilp(problem).extend(3)
    with pytest.raises(ValueError, match="no backend 'gurobi'"):
        NieMilp(problem).solve(budget=5, backend="gurobi")
    cyclic = Problem(random_cache(4, 0), 2, required=frozenset({(0, 1), (1, 0)}))
    assert ClusterCutIlp(cyclic).solve(budget=5).status == "infeasible"


@pytest.mark.slow  # a grid of 4 cells in processes, with an entry-point plugin: 28 s
def test_the_documented_model_change_runs_in_a_grid_beside_the_stock_model(tmp_path):
    from tests.test_plugins import _install, _twbn

    env = _install(tmp_path, "milp_arcs", PLUGIN, {"milp-arcs": "milp_arcs:METHOD"})
    (tmp_path / "arcs.toml").write_text(GRID.replace('path = "zoo.csv.gz"', f'path = "{BUNDLED / "zoo.csv.gz"}"')
                                        .replace("time_limit = 10", "time_limit = 4"))
    grid = _twbn(env, "experiment", tmp_path / "arcs.toml", "--store", tmp_path / "arcs.sqlite", "-q")
    assert grid.returncode == 0, grid.stderr
    report = _twbn(env, "report", tmp_path / "arcs.sqlite", "-o", tmp_path / "rep")
    assert report.returncode == 0, report.stderr
    with open(tmp_path / "rep" / "cells.csv", newline="") as fh:
        cells = list(csv.DictReader(fh))
    by = {(c["method"], c["treewidth"]): c for c in cells}
    assert set(by) == {("milp", "2"), ("milp", "3"), ("milp-arcs", "2"), ("milp-arcs", "3")}
    for (method, k), c in by.items():
        assert c["status"] in ("optimal", "feasible") and c["gap"] != "", (method, k)
        assert float(c["bound"]) >= float(c["score"])
    # the extended model's bound is the engine's, and says what it rests on
    import json
    import sqlite3

    with sqlite3.connect(tmp_path / "arcs.sqlite") as db:
        results = [json.loads(r) for (r,) in db.execute("SELECT result FROM cells WHERE method = 'milp-arcs'")]
    assert all(r["stats"]["extended_by"] == ["arc_bound"] for r in results)
    assert all("extended by arc_bound" in r["stats"]["bound_source"] or "cluster LP" in r["stats"]["bound_source"]
               for r in results)


def test_an_extension_is_named_only_once_it_ran_on_a_built_model():
    """Issue 63.9: with a budget too short to build the model, the extension never ran,
    yet ``extended_by`` listed it."""
    calls: list[str] = []

    def marks(model, milp):
        calls.append("ran")

    problem = Problem(twbn.score(twbn.example_path("zoo"), max_parents=2), 2)
    short = NieMilp(problem).extend(marks).solve(budget=0.01)
    assert calls == [] and short.stats["extended_by"] == [] and short.stats["not_extended_by"] == ["marks"]
    assert short.stats["bound_source"] == "sum of each variable's best candidate score"
    built = NieMilp(Problem(random_cache(5, 1, max_size=1), 1)).extend(marks).solve(budget=20)
    assert calls == ["ran"] and built.stats["extended_by"] == ["marks"] and "not_extended_by" not in built.stats
