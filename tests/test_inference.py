"""Learned networks through pgmpy: BIF export read back by pgmpy's own reader, junction
trees built from the certificate checked against pgmpy's variable elimination, and the
inference columns of the harness and the report."""

import sqlite3

import numpy as np
import pytest

pytest.importorskip("pgmpy")

from twbn.experiments.cli import main  # noqa: E402
from twbn.scoring.inference import inference_time, junction_trees, learned_model, write_bif  # noqa: E402
from twbn.formulations.problem import Problem  # noqa: E402
from twbn.scoring.data import read_csv  # noqa: E402
from twbn.scoring.parent_sets import build_cache  # noqa: E402
from twbn.solvers.registry import solve  # noqa: E402
from tests.conftest import BUNDLED  # noqa: E402


@pytest.fixture(scope="module")
def housing():
    ds = read_csv(BUNDLED / "housing.csv.gz")
    cache = build_cache(ds, score="bic", max_parents=3, progress=False)[0]
    return ds, cache


def _learn(cache, k):
    problem = Problem(cache, k)
    sol = solve(problem, "kg", time_limit=1, seed=0)
    return list(problem.names), sol


def test_tiny_network_cpts_by_hand(tmp_path):
    """A → B on six rows, ess 1: A has a = ess/(q·r) = 1/2, so P(A=1) = (2 + 1/2) / (6 + 1);
    B has a = 1/(2·2), so P(B=1 | A=1) = (2 + 1/4) / (2 + 1/2) and
    P(B=1 | A=0) = (1 + 1/4) / (4 + 1/2)."""
    from pgmpy.readwrite import BIFReader

    p = tmp_path / "t.csv"
    p.write_text("A,B\n0,0\n0,0\n0,1\n0,0\n1,1\n1,1\n")
    ds = read_csv(p)
    model = learned_model(ds, ["A", "B"], [[], [0]])
    write_bif(model, tmp_path / "t.bif")
    back = BIFReader(str(tmp_path / "t.bif")).get_model()
    pa = back.get_cpds("A").to_factor()
    assert pa.get_value(A="1") == pytest.approx(2.5 / 7)
    pb = back.get_cpds("B").to_factor()
    assert pb.get_value(A="1", B="1") == pytest.approx(2.25 / 2.5)
    assert pb.get_value(A="0", B="1") == pytest.approx(1.25 / 4.5)


def test_bif_round_trip_keeps_the_likelihood(housing, tmp_path):
    """pgmpy's reader recovers the network and CPTs: the log-likelihood of the data under
    the BIF it reads equals twbn's own computation with its fitted CPTs."""
    from pgmpy.readwrite import BIFReader

    from twbn.scoring.likelihood import align, fit_cpts, log_likelihood

    ds, cache = housing
    names, sol = _learn(cache, 2)
    write_bif(learned_model(ds, names, sol.parents), tmp_path / "h.bif")
    back = BIFReader(str(tmp_path / "h.bif")).get_model()
    assert set(back.edges()) == {(names[p], names[v]) for v, ps in enumerate(sol.parents) for p in ps}
    codes, _, arities = align(ds, ds, names)
    cpts = fit_cpts(codes, arities, sol.parents)
    rows = range(0, ds.n_rows, 25)
    states = [ds.states[ds.names.index(n)] for n in names]
    theirs = 0.0
    for r in rows:
        x = {n: states[v][ds.data[ds.names.index(n), r]] for v, n in enumerate(names)}
        for n in names:
            cpd = back.get_cpds(n)
            theirs += np.log(cpd.to_factor().get_value(**{y: x[y] for y in cpd.scope()}))
    ours = log_likelihood(codes[:, list(rows)], arities, sol.parents, cpts)
    assert theirs == pytest.approx(ours, rel=1e-9)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_junction_tree_from_the_certificate(housing, k):
    """Cliques are at most the certified width + 1, and the calibrated marginals, with and
    without evidence, equal pgmpy's variable elimination."""
    from pgmpy.inference import BeliefPropagation, VariableElimination

    ds, cache = housing
    names, sol = _learn(cache, k)
    model = learned_model(ds, names, sol.parents)
    order = [names[v] for v in sol.elimination_order]
    trees = junction_trees(model, order)
    assert max(len(c) for t in trees for c in t.nodes()) == sol.width + 1 <= k + 1
    assert sorted(v for t in trees for v in set().union(*map(set, t.nodes()))) == sorted(names)
    ve = VariableElimination(model)
    for evidence in ({}, {names[0]: "1"}):
        for t in trees:
            bp = BeliefPropagation(t)
            for x in sorted(set().union(*map(set, t.nodes()))):
                if x in evidence:
                    continue
                ev = {e: s for e, s in evidence.items() if any(e in c for c in t.nodes())}
                got = bp.query([x], evidence=ev, show_progress=False).values
                want = ve.query([x], evidence=evidence, show_progress=False).values
                np.testing.assert_allclose(got, want, rtol=1e-9)
    # queries in the certificate's order, with 3 variables of evidence: pgmpy accepts the
    # order it is given (it refuses one that names a query or evidence variable, or misses one)
    t = inference_time(model, order, queries=12, evidence=3)
    assert t["max_clique"] == sol.width + 1 and t["junction_tree_s"] > 0 and t["ve_query_s"] > 0
    assert t["table_entries"] == sum(int(np.prod([model.get_cardinality(v) for v in c])) for tr in trees
                                     for c in tr.nodes())
    # above the entry cap nothing is built, but the size is still reported
    skip = inference_time(model, order, max_entries=t["table_entries"] - 1)
    assert skip["junction_tree_s"] is None and skip["ve_query_s"] is None
    assert skip["table_entries"] == t["table_entries"] and skip["max_clique"] == t["max_clique"]
    # the queries alone (which-k's curve): no junction tree calibrated, the same cliques
    alone = inference_time(model, order, queries=3, junction_tree=False)
    assert alone["junction_tree_s"] is None and alone["ve_query_s"] > 0
    assert alone["max_clique"] == t["max_clique"] and alone["table_entries"] == t["table_entries"]


def test_export_command(housing, tmp_path, capsys):
    ds, cache = housing
    jkl, res = tmp_path / "h.jkl", tmp_path / "r.json"
    assert main(["score", str(BUNDLED / "housing.csv.gz"), "--max-parents", "2", "-o", str(jkl), "-q"]) == 0
    assert main(["learn", str(jkl), "--treewidth", "2", "--method", "kg", "--time-limit", "1", "-o", str(res),
                 "-q"]) == 0
    capsys.readouterr()
    bif = tmp_path / "n.bif"
    assert main(["export", str(res), "--data", str(BUNDLED / "housing.csv.gz"), "-o", str(bif),
                 "--time-inference"]) == 0
    out = capsys.readouterr().out
    assert "14 variables" in out and "largest clique" in out and bif.read_text().startswith("network twbn")
    # data without the network's columns: one line, no file
    bad = tmp_path / "bad.bif"
    assert main(["export", str(res), "--data", str(BUNDLED / "zoo.csv.gz"), "-o", str(bad)]) == 1
    assert "not a column" in capsys.readouterr().err
    assert not bad.exists() and [p.name for p in tmp_path.iterdir() if "bad" in p.name] == []


@pytest.mark.slow  # 9-18 s; moved out of the default run to keep it under 10 min
def test_harness_times_inference_and_reports_it(tmp_path):
    cfg = tmp_path / "inf.toml"
    cfg.write_text('name = "inf"\nscore = "bic"\nmax_parents = 2\nfolds = 1\nseeds = [0]\ntreewidths = [1, 3]\n'
                   f'time_limit = 2\ninference = true\n[[data]]\nname = "housing"\npath = "{BUNDLED / "housing.csv.gz"}"\n'
                   '[[methods]]\nname = "kg"\n')
    store = tmp_path / "inf.sqlite"
    assert main(["experiment", str(cfg), "--store", str(store), "-q"]) == 0
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT treewidth, width, max_clique, junction_tree_s, ve_query_s FROM cells").fetchall()
    assert len(rows) == 2
    for k, width, clique, jt, ve in rows:
        assert clique == width + 1 <= k + 1 and jt > 0 and ve > 0
    assert main(["report", str(store), "-o", str(tmp_path / "rep")]) == 0
    text = (tmp_path / "rep" / "report.md").read_text()
    assert "## Exact inference" in text and (tmp_path / "rep" / "inference_by_treewidth.png").exists()


def test_old_store_gains_the_inference_columns(tmp_path):
    from twbn.experiments.store import Store

    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:  # the cells table as the first stores had it
        db.execute("CREATE TABLE cells (key TEXT PRIMARY KEY, run_id INTEGER NOT NULL, data TEXT NOT NULL, "
                   "fold INTEGER NOT NULL, treewidth INTEGER, method TEXT NOT NULL, seed INTEGER NOT NULL, "
                   "status TEXT NOT NULL, score REAL, bound REAL, gap REAL, width INTEGER, wall_time REAL, "
                   "test_loglik REAL, test_rows INTEGER, error TEXT, result TEXT, trajectory TEXT, "
                   "finished REAL NOT NULL)")
        db.execute("INSERT INTO cells (key, run_id, data, fold, method, seed, status, finished) "
                   "VALUES ('a', 1, 'd', 0, 'kg', 0, 'feasible', 0)")
    s = Store(path)
    try:
        (cell,) = s.cells()
        assert cell["key"] == "a" and cell["junction_tree_s"] is None and "ve_query_s" in cell
    finally:
        s.close()


def test_to_pgmpy_keeps_the_data_s_values_and_types():
    """Issue 31.10: from a DataFrame of integers, the model's states are those integers:
    a query with evidence {'LSTAT': 0} and predict() on a test frame work, and agree with
    pgmpy's own fit (BDeu pseudo-counts, ESS 1) of the same structure on the same rows."""
    import pandas as pd
    from pgmpy.inference import VariableElimination
    from pgmpy.models import DiscreteBayesianNetwork
    from pgmpy.parameter_estimator import DiscreteBayesianEstimator

    import twbn

    df = pd.read_csv(twbn.example_path("housing"))
    train, test = df.iloc[:400], df.iloc[400:]
    sol = twbn.learn(train, treewidth=1)
    model = sol.to_pgmpy(train)
    ref = DiscreteBayesianNetwork(sol.arcs)
    ref.add_nodes_from(df.columns)
    ref.fit(train, estimator=DiscreteBayesianEstimator(prior_type="BDeu", equivalent_sample_size=1.0))
    ours = VariableElimination(model).query(["class"], evidence={"LSTAT": 0}, show_progress=False)
    theirs = VariableElimination(ref).query(["class"], evidence={"LSTAT": 0}, show_progress=False)
    assert ours.state_names["class"] == [0, 1, 2] and all(type(s) is int for s in ours.state_names["class"])
    for s in (0, 1, 2):
        assert ours.get_value(**{"class": s}) == pytest.approx(theirs.get_value(**{"class": s}), rel=1e-9)
    got = model.predict(test.drop(columns=["class"]).iloc[:30], n_jobs=1)
    want = ref.predict(test.drop(columns=["class"]).iloc[:30], n_jobs=1)
    assert got["class"].tolist() == want["class"].tolist() and got["class"].dtype.kind == "i"
    # from the CSV, integer states as pandas.read_csv gives them
    assert sol.to_pgmpy(twbn.example_path("housing")).get_cpds("class").state_names["class"] == [0, 1, 2]


@pytest.mark.parametrize("k", [1, 3])
def test_every_result_reports_its_junction_tree_s_table_size(k):
    """A result's ``table_size`` is the entries of the junction tree on its certificate:
    recounted here from pgmpy's own moral graph of the fitted model and its cardinalities
    (``elimination_cliques``, ``table_entries``), not from twbn's graph code."""
    import twbn
    from twbn.scoring.inference import elimination_cliques, table_entries

    sol = twbn.learn(BUNDLED / "housing.csv.gz", treewidth=k, method="kg", time_limit=1, seed=0)
    model = sol.to_pgmpy(BUNDLED / "housing.csv.gz")
    order = list(sol.elimination_order)
    cliques = elimination_cliques(model, order)
    assert max(len(c) for c in cliques) <= k + 1
    assert sol.table_size == table_entries(model, cliques)
    assert twbn.Solution.from_json(sol.to_json()).table_size == sol.table_size


def test_a_cache_without_arities_reports_no_table_size():
    """A cache that does not know its arities (a jkl from elsewhere) gives None, not a guess."""
    import twbn
    from tests.helpers import random_cache

    cache = random_cache(6, seed=3)
    assert cache.arities is None
    sol = twbn.learn(cache, treewidth=2, method="kg", time_limit=1, seed=0)
    assert sol.is_network and sol.table_size is None
