"""The front door: twbn.score / twbn.learn / Solution, method auto, learning from data,
the data folder, and the docstring examples (run as doctests, output checked)."""

from __future__ import annotations

import doctest
import gzip
import importlib
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import twbn
from tests.conftest import BUNDLED
from tests.helpers import random_cache
from twbn.experiments.cli import main
from twbn.formulations.problem import Problem
from twbn.solvers.auto import choose_method
from twbn.solvers.policy import DEFAULT_POLICY, Policy

DOCTEST_MODULES = ["twbn", "twbn.learning", "twbn.scoring_phase", "twbn.solution", "twbn.solvers.auto", "twbn.scoring.datasets",
                   "twbn.scoring.errors", "twbn.scoring.classify", "twbn.testing", "twbn.solvers.method", "twbn.models", "twbn.solvers.sweep", "twbn.solvers.bounds",
                   "twbn.solvers.budget", "twbn.formulations.problem",
                   "twbn.scoring.jkl", "twbn.scoring.data", "twbn.scoring.posterior", "twbn.scoring.missingness",
                   "twbn.em", "twbn.scoring.families", "twbn.which_k", "twbn.which_k.folds", "twbn.which_k.rule",
                   "twbn.scoring.discretize", "twbn.scoring.likelihood", "twbn.formulations.graphs",
                   "twbn.scoring.identity", "twbn.solvers.lp_rows", "twbn.solvers.cluster_lp",
                   "twbn.solvers.relaxation"]


# twbn.models builds and solves each model (30 s): behind the slow marker
@pytest.mark.parametrize("name", [pytest.param(m, marks=pytest.mark.slow) if m == "twbn.models" else m
                                  for m in DOCTEST_MODULES])
def test_docstring_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    if name != "twbn.solution":  # the Solution class documents attributes, not examples
        assert result.attempted > 0


@pytest.mark.slow  # 12 s: out of the default run, which must stay under 10 min
def test_readme_python_example_runs_and_prints_what_it_says(capsys):
    """The README's first Python block, run as written, prints the lines shown under it."""
    text = (BUNDLED.parents[1] / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```\n```\n(.*?)```", text, re.S)
    assert block, "the README has a Python example followed by its output"
    code, shown = block.group(1), block.group(2)
    exec(compile(code, "README.md", "exec"), {})
    printed = capsys.readouterr().out
    assert printed.strip().splitlines() == shown.strip().splitlines()


def _string_frame() -> pd.DataFrame:
    """Housing with every state written as text ('lo0', 'lo1', …)."""
    df = pd.read_csv(BUNDLED / "housing.csv.gz")
    return df.apply(lambda col: "lo" + col.astype(str))


@pytest.mark.slow  # 9-18 s; moved out of the default run to keep it under 10 min
def test_learn_from_a_dataframe_with_string_states(tmp_path, capsys):
    df = _string_frame()
    train, test = df.iloc[:400], df.iloc[400:]
    sol = twbn.learn(train, treewidth=2, time_limit=60, seed=0)
    assert sol.status == "optimal" and sol.width <= 2
    assert set(sol.parents) == set(df.columns)
    assert all(isinstance(p, str) and p in df.columns for ps in sol.parents.values() for p in ps)
    cache = twbn.score(train)
    assert sol.check(cache) == []
    # the DP on the same cache reaches the same optimum (the auto choice was the DP: n = 14, k = 2)
    assert sol.method == "dp" and sol.score == pytest.approx(twbn.learn(cache, 2, "cuts", time_limit=60).score)

    model = sol.to_pgmpy(train)
    assert sorted(model.edges()) == sorted(sol.arcs)
    assert set(model.nodes()) == set(df.columns)
    # log-likelihood of the test rows under pgmpy's CPTs, row by row, against `twbn evaluate`
    cpds = {c.variable: c for c in model.get_cpds()}
    ours = 0.0
    for _, row in test.iterrows():
        for v, cpd in cpds.items():
            ours += math.log(cpd.get_value(**{u: row[u] for u in cpd.scope()}))
    res, trn, tst = tmp_path / "r.json", tmp_path / "train.csv", tmp_path / "test.csv"
    sol.save(res)
    train.to_csv(trn, index=False)
    test.to_csv(tst, index=False)
    capsys.readouterr()
    assert main(["evaluate", str(res), "--train", str(trn), "--test", str(tst)]) == 0
    per_row = float(re.search(r"log-likelihood: (-?[\d.]+) per sample", capsys.readouterr().out).group(1))
    assert ours / len(test) == pytest.approx(per_row, abs=1e-6)
    assert sol.log_likelihood(train, test) == pytest.approx(per_row, abs=1e-6)


def test_dataframe_and_csv_give_the_same_cache():
    df = pd.read_csv(BUNDLED / "zoo.csv.gz")
    a, b = twbn.score(df), twbn.score(BUNDLED / "zoo.csv.gz")
    assert a.names == b.names and a.families() == b.families()


def test_dataframe_with_missing_values_is_refused():
    # a cache is scored from complete data: missing cells are named, in one line
    df = pd.DataFrame({"A": ["x", "y", None], "B": ["1", "2", "3"]})
    with pytest.raises(twbn.DataError, match=r"1 of 6 cells missing \(16.7 %\): A 1; scoring a cache needs"):
        twbn.score(df)
    with pytest.raises(twbn.DataError, match="missing value in column 'A' at row 2"):
        twbn.score(df, missing="error")


def test_learn_refuses_a_bad_request_before_scoring():
    # the DataFrame has a missing value: scored first, that would be the error
    df = pd.DataFrame({"A": ["x", "y", None], "B": ["1", "2", "3"]})
    with pytest.raises(ValueError, match="method kg needs a treewidth bound"):
        twbn.learn(df, method="kg")
    with pytest.raises(ValueError, match="method dp takes no warm start"):
        twbn.learn(df, treewidth=2, method="dp", warm_start="kg")
    with pytest.raises(twbn.DataError, match="missing value"):
        twbn.learn(df, treewidth=2, method="kg", missing="error")


def test_solution_round_trip_networkx_and_background_knowledge(tmp_path):
    cache = twbn.score(BUNDLED / "zoo.csv.gz", max_parents=2)
    sol = twbn.learn(cache, treewidth=1, forbid=[("eggs", "milk")], require=["hair,milk"])
    assert "hair" in sol.parents["milk"] and "eggs" not in sol.parents["milk"]
    assert sol.check(cache) == []
    sol.save(tmp_path / "s.json")
    again = twbn.Solution.from_json(tmp_path / "s.json")
    assert again == sol and again.to_json() == json.loads((tmp_path / "s.json").read_text())
    g = sol.to_networkx()
    assert set(g.nodes) == set(cache.names) and sorted(g.edges) == sorted(sol.arcs)
    with pytest.raises(ValueError, match="not a variable"):
        twbn.learn(cache, treewidth=1, forbid=[("eggs", "nope")])
    with pytest.raises(ValueError, match="not a twbn result"):
        twbn.Solution.from_json({"variables": []})


def test_k1_dp_is_the_maximum_branching_on_the_cache():
    """k = 1 by the branching in dp equals the KP DP (the independent bounded DP)."""
    from twbn.solvers.exact.kp_dp import bounded_treewidth_optimum

    cache = random_cache(9, seed=4, max_size=2)
    sol = twbn.learn(cache, treewidth=1, method="dp")
    assert sol.score == pytest.approx(bounded_treewidth_optimum(cache, 1)[1], abs=1e-9)
    assert sol.check(cache) == [] and sol.width <= 1


def _sized_cache(n: int, seed: int = 0) -> "twbn.ScoreCache":
    """n variables, each with ∅ and four random parent sets of one or two parents."""
    rng = np.random.default_rng(seed)
    families = []
    for v in range(n):
        others = [u for u in range(n) if u != v]
        fam = {(): -10.0 - 5 * rng.random()}
        for _ in range(4):
            ps = tuple(sorted(rng.choice(others, size=int(rng.integers(1, 3)), replace=False).tolist()))
            fam[ps] = fam[()] + rng.uniform(-1.0, 4.0)
        families.append(fam)
    return twbn.ScoreCache.from_mapping([f"X{i}" for i in range(n)], families)


@pytest.mark.parametrize("n,k,method", [(10, 2, "dp"), (14, 2, "dp"), (13, 3, "cuts"), (20, None, "dp"),
                                        (30, 3, "cuts"), (45, 2, "improve"), (30, None, "cuts"), (45, None, "improve"),
                                        (200, 1, "dp")])
def test_auto_rule(n, k, method):
    choice = choose_method(Problem(_sized_cache(n), k))
    assert choice.method == method
    start = None if k is None else "localsearch" if k >= DEFAULT_POLICY.localsearch_start_min_k \
        and n <= DEFAULT_POLICY.localsearch_max_n else "kmax"
    assert choice.warm_start == {"cuts": "kg" if k is not None else None, "improve": start}.get(method)


@pytest.mark.parametrize("min_k,start", [(2, "localsearch"), (3, "kmax")])
def test_auto_improve_start_follows_the_policy(min_k, start):
    policy = twbn.Policy(localsearch_start_min_k=min_k)
    choice = choose_method(Problem(_sized_cache(DEFAULT_POLICY.cuts_max_n + 5), 2), policy=policy)
    assert (choice.method, choice.warm_start) == ("improve", start)
    small = twbn.Policy(localsearch_start_min_k=min_k, localsearch_max_n=DEFAULT_POLICY.cuts_max_n + 4)
    assert choose_method(Problem(_sized_cache(DEFAULT_POLICY.cuts_max_n + 5), 2), policy=small).warm_start == "kmax"


def test_auto_from_data_runs_localsearch_up_to_its_own_bound():
    """Issue 84: from data the suite measured localsearch ahead of the k-MAX start at n =
    135-1,556 (29 of 30 cells), from a cache not (munin5000's anchor cache): two fields,
    the one from data without a bound unless given one."""
    from twbn.scoring.cache import ScoreCache
    from twbn.scoring.families import FamilyScores

    rng = np.random.default_rng(0)
    n = DEFAULT_POLICY.localsearch_max_n + 20
    ds = twbn.scoring.data.as_dataset(pd.DataFrame(rng.integers(0, 2, (50, n)), columns=[f"X{i}" for i in range(n)]))
    cache = _sized_cache(n)
    from_data = Problem(ScoreCache.from_mapping(ds.names, [dict(zip(cache.parent_sets[v], cache.scores[v].tolist()))
                                                           for v in range(n)]), 5, scorer=FamilyScores(ds, "bic", 1.0))
    assert choose_method(from_data).method == "localsearch"
    assert choose_method(Problem(cache, 5)).warm_start == "kmax"  # from a cache: k-MAX's start above 100
    capped = twbn.Policy(data_localsearch_max_n=n - 1)
    assert (choose_method(from_data, policy=capped).method, choose_method(from_data, policy=capped).warm_start) == \
        ("improve", "kmax")


@pytest.mark.parametrize("n,k,expected", [(12, 2, "dp"), pytest.param(24, 2, "cuts", marks=pytest.mark.slow),  # 8 s
                                          (DEFAULT_POLICY.cuts_max_n + 5, 3, "improve")])
def test_auto_small_middle_large_results_pass_check(tmp_path, capsys, n, k, expected):
    from twbn.scoring.jkl import write_jkl

    cache = _sized_cache(n, seed=n)
    jkl, out = tmp_path / "c.jkl", tmp_path / "r.json"
    write_jkl(cache, jkl)
    assert main(["learn", str(jkl), "--treewidth", str(k), "--time-limit", "8", "--seed", "1", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith(f"auto: {expected}")
    result = json.loads(out.read_text())
    assert result["method"] == expected and result["stats"]["auto"]
    assert main(["check", str(jkl), str(out)]) == 0


@pytest.mark.slow  # 17 s
def test_auto_starts_cuts_from_improve_where_the_unbounded_optimum_already_bounds_the_problem():
    """Where the unbounded DP ran first (n <= 22) and its optimum is wider than k >= 3,
    the cluster-cut ILP starts from improve's network, not k-G's: at mushroom (k = 3-5)
    cuts from k-G had ended below k-G alone in 40 of 90 study cells, with the DP's bound.
    At k = 2 k-G's start stays (letter, insurance, water: better or faster with it).
    Checked against the optimum the exact cluster-cut ILP proves at each k."""
    from twbn.formulations.verify import verify_result
    from twbn.solvers.registry import run, solve

    cache = random_cache(14, 1, max_size=2, density=0.3)
    assert solve(Problem(cache), "dp").width == 5  # the unbounded optimum fits neither k
    for k, start in ((3, "improve"), (2, "kg")):
        problem = Problem(cache, k)
        exact = solve(problem, "cuts", time_limit=60)
        assert exact.status == "optimal"
        sol = run(problem, "auto", time_limit=8, seed=0)
        assert sol.method == "cuts" and sol.stats["warm_start"]["from"] == start
        assert ("starts from improve's network" in sol.stats["auto"]) == (start == "improve")
        assert sol.stats["warm_start"]["score"] - 1e-9 <= sol.score <= exact.score + 1e-9 <= sol.bound + 2e-9
        assert verify_result(cache, sol.to_json(problem), k) == []


def test_auto_unbounded_uses_dp_up_to_its_limit():
    at = DEFAULT_POLICY.dp_unbounded_max_n
    assert choose_method(Problem(_sized_cache(at))).method == "dp"
    assert choose_method(Problem(_sized_cache(at + 1))).method == "cuts"
    # the thresholds are the policy's: a lower one moves the rule
    assert choose_method(Problem(_sized_cache(at)), policy=Policy(dp_unbounded_max_n=at - 1)).method == "cuts"
    assert choose_method(Problem(_sized_cache(30), 3), policy=Policy(cuts_max_n=29)).method == "improve"
    # a bound k >= n - 1 binds nothing
    assert choose_method(Problem(_sized_cache(20), 19)).method == "dp"


@pytest.mark.slow  # 9-18 s; moved out of the default run to keep it under 10 min
def test_learn_cli_scores_data_first_and_keeps_the_cache(tmp_path, capsys):
    out, jkl = tmp_path / "r.json", tmp_path / "h.jkl"
    assert main(["learn", str(BUNDLED / "housing.csv.gz"), "--treewidth", "2", "--max-parents", "2",
                 "--save-cache", str(jkl), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "BIC cache: 14 variables" in printed and "auto: dp (n = 14, k = 2" in printed
    assert main(["check", str(jkl), str(out)]) == 0
    # the same as scoring and learning in two steps
    jkl2, out2 = tmp_path / "h2.jkl", tmp_path / "r2.json"
    assert main(["score", str(BUNDLED / "housing.csv.gz"), "--max-parents", "2", "-o", str(jkl2), "-q"]) == 0
    assert main(["learn", str(jkl2), "--treewidth", "2", "--method", "dp", "-o", str(out2), "-q"]) == 0
    assert json.loads(out.read_text())["score"] == pytest.approx(json.loads(out2.read_text())["score"], abs=1e-9)


def test_learn_from_data_scores_no_family_wider_than_its_bound(tmp_path, capsys):
    """A family of p parents has width >= p: at k = 1 the cache learn scores from data is
    the one `twbn score --max-parents 1` writes, not the default 3 (plants at k = 2 spent
    93 s of 600 on triples). A sweep with an unbounded bound keeps the default."""
    from twbn.scoring.jkl import read_jkl

    zoo = str(BUNDLED / "zoo.csv.gz")
    got, want = tmp_path / "learn.jkl", tmp_path / "score.jkl"
    assert main(["learn", zoo, "--treewidth", "1", "--time-limit", "5", "--save-cache", str(got),
                 "-o", str(tmp_path / "r.json"), "-q"]) == 0
    assert main(["score", zoo, "--max-parents", "1", "-o", str(want), "-q"]) == 0
    a, b = read_jkl(got), read_jkl(want)
    assert max(len(ps) for sets in a.parent_sets for ps in sets) == 1
    assert a.families() == b.families()
    swept = tmp_path / "swept.jkl"
    assert main(["learn", zoo, "--treewidth", "1,unbounded", "--time-limit", "5", "--save-cache", str(swept),
                 "-o", str(tmp_path / "{k}.json"), "-q"]) == 0
    assert max(len(ps) for sets in read_jkl(swept).parent_sets for ps in sets) == 3


def test_learn_cli_refuses_scoring_options_with_a_cache(tmp_path, capsys):
    jkl = tmp_path / "z.jkl"
    assert main(["score", str(BUNDLED / "zoo.csv.gz"), "--max-parents", "1", "-o", str(jkl), "-q"]) == 0
    capsys.readouterr()
    assert main(["learn", str(jkl), "--max-parents", "2", "-o", str(tmp_path / "r.json")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["twbn: error: --max-parents apply when learning from data, not from a cache"]
    assert not (tmp_path / "r.json").exists()


def test_data_folder_download_and_missing_message(tmp_path, monkeypatch, capsys):
    from twbn.scoring.datasets import DataMissing, dataset_path

    monkeypatch.delenv("TWBN_DATA", raising=False)
    with pytest.raises(DataMissing, match="TWBN_DATA"):
        dataset_path("nltcs")
    src = tmp_path / "src" / "nltcs"
    src.mkdir(parents=True)
    rows = {"train": "0,1,1\n1,0,0\n", "valid": "1,1,1\n", "test": "0,0,0\n0,1,0\n"}
    for split, text in rows.items():
        (src / f"nltcs.{split}.data").write_text(text)
    folder = tmp_path / "data"
    folder.mkdir()
    with pytest.raises(DataMissing, match="twbn data download-debd nltcs --data-dir"):
        dataset_path("nltcs", folder)
    assert main(["data", "download-debd", "nltcs", "--data-dir", str(folder),
                 "--base-url", (tmp_path / "src").as_uri()]) == 0
    path = dataset_path("nltcs", folder)
    assert gzip.decompress(path.read_bytes()).decode() == "X0,X1,X2\n0,1,1\n1,0,0\n"
    ds = twbn.read_csv(folder / "debd" / "nltcs_test.csv.gz")
    assert ds.names == ("X0", "X1", "X2") and ds.n_rows == 2
    monkeypatch.setenv("TWBN_DATA", str(folder))
    assert dataset_path("nltcs") == path
    capsys.readouterr()
    assert main(["data", "download-debd", "nope", "--data-dir", str(folder)]) == 1
    assert "unknown DEBD set 'nope'" in capsys.readouterr().err


def test_bundled_sets_are_all_there():
    for name in twbn.EXAMPLES:
        ds = twbn.read_csv(twbn.example_path(name))
        assert ds.n_rows > 100 and np.all(ds.arities >= 1)


@pytest.mark.parametrize("kw,text", [
    # issue 31.16: what used to slip through, refused at the boundary with the parameter's name
    ({"treewidth": True}, "treewidth must be an integer >= 0"),
    ({"treewidth": 2.0}, "treewidth must be an integer >= 0"),
    ({"treewidth": 1, "time_limit": "5"}, "time limit must be a number of seconds, got '5'"),
    ({"treewidth": 1, "time_limit": True}, "time limit must be a number of seconds"),
    ({"treewidth": 1, "seed": "x"}, "seed must be an integer >= 0"),
    ({"treewidth": 1, "seed": -1}, "seed must be an integer >= 0"),
    ({"treewidth": 1, "score": "bik"}, "unknown score 'bik'"),
    ({"treewidth": 1, "max_parents": 1.5}, "max_parents must be an integer >= 0"),
    ({"treewidth": 1, "ess": 0}, "ess must be a positive number"),
])
def test_learn_refuses_ill_typed_parameters(kw, text):
    df = pd.DataFrame({"A": [0, 1] * 5, "B": [0, 0, 1, 1, 0] * 2})
    with pytest.raises(ValueError, match=re.escape(text)):
        twbn.learn(df, **kw)


def test_learn_takes_the_local_structure_scores_the_cli_offers(tmp_path):
    """pcart and ft from a DataFrame with continuous columns reach the same optimum as the
    command line's `twbn score --score pcart` on the same columns."""
    df = pd.read_csv(BUNDLED / "housing.csv.gz").iloc[:, :4]
    csv = tmp_path / "h4.csv"
    df.to_csv(csv, index=False)
    for name in ("pcart", "ft"):
        sol = twbn.learn(df, treewidth=1, score=name, max_parents=1, method="dp")
        assert main(["score", str(csv), "--score", name, "--max-parents", "1", "-o", str(tmp_path / "c.jkl"),
                     "-q"]) == 0
        ref = twbn.learn(str(tmp_path / "c.jkl"), treewidth=1, method="dp")
        assert sol.status == ref.status == "optimal"
        assert sol.score == pytest.approx(ref.score, rel=1e-12) and sol.parents == ref.parents


def test_contradictory_arcs_are_one_behaviour():
    """Issue 31.16: a required cycle and an arc both required and forbidden are both an
    infeasible result with the reason, from Python and from the command line alike."""
    df = pd.DataFrame({"A": [0, 1] * 6, "B": [0, 0, 1] * 4, "C": [1, 0, 0, 1] * 3})
    cyc = twbn.learn(df, treewidth=2, require=[("A", "B"), ("B", "A")])
    both = twbn.learn(df, treewidth=2, require=[("A", "B")], forbid=[("A", "B")])
    assert (cyc.status, both.status) == ("infeasible", "infeasible")
    assert cyc.stats["reason"] == "the required arcs form a cycle: A -> B -> A"
    assert both.stats["reason"] == "arc A->B is both required and forbidden"


@pytest.mark.parametrize("n,k,limit,method", [(14, 2, 5, "cuts"), (14, 2, 20, "dp"), (12, 3, 10, "cuts"),
                                              (12, 3, 30, "dp"), (22, None, 3, "improve"), (22, None, 10, "dp"),
                                              (200, 1, 0.5, "dp"), (1000, 3, 5, "improve"),
                                              (1000, None, 5, "improve")])
def test_auto_fits_the_dp_to_the_budget(n, k, limit, method):
    """Issue 31.9: the DP only where its measured time (dp.md) fits the limit."""
    assert choose_method(Problem(_sized_cache(n), k), limit).method == method


def test_auto_on_housing_k2_with_5_s_returns_a_network_in_time(tmp_path, capsys):
    """Issue 31.9: `learn housing --treewidth 2 --time-limit 5` used to pick the DP (about
    14 s here), stop at 5 s with no network and exit 3."""
    import time

    out = tmp_path / "r.json"
    t0 = time.monotonic()
    assert main(["learn", str(BUNDLED / "housing.csv.gz"), "--treewidth", "2", "--time-limit", "5", "-o", str(out),
                 "-q"]) == 0
    assert time.monotonic() - t0 < 5 + 2.5
    result = json.loads(out.read_text())
    assert result["method"] == "cuts" and result["parents"] is not None and result["width"] <= 2


def test_the_newcomer_names_bundled_data_and_configs_from_any_folder(tmp_path, monkeypatch, capsys):
    """Issue 31: after `pip install`, with no clone, `twbn learn housing` and `twbn score
    zoo` read the bundled sets and `twbn experiment quick` the bundled config; a file of
    that name in the folder wins; download-debd makes its folder (and removes it again if
    nothing could be fetched)."""
    from twbn.experiments.cli import config_arg, data_arg

    monkeypatch.chdir(tmp_path)
    assert main(["learn", "housing", "--treewidth", "1", "-o", "h.json", "-q"]) == 0
    assert json.loads((tmp_path / "h.json").read_text())["variables"][-1] == "class"
    assert main(["score", "zoo.csv.gz", "--max-parents", "1", "-q"]) == 0 and (tmp_path / "zoo.jkl").exists()
    assert Path(config_arg("quick")).read_text().startswith((BUNDLED.parent / "configs" / "quick.toml").read_text()[:20])
    (tmp_path / "housing").write_text("A,B\n0,1\n1,0\n")
    assert data_arg("housing") == "housing"  # the user's own file
    assert data_arg("sub/zoo") == "sub/zoo"  # a path is a path
    src = tmp_path / "src" / "nltcs"
    src.mkdir(parents=True)
    for split in ("train", "valid", "test"):
        (src / f"nltcs.{split}.data").write_text("0,1\n1,0\n")
    assert main(["data", "download-debd", "nltcs", "--data-dir", str(tmp_path / "new" / "dir"), "--base-url",
                 (tmp_path / "src").as_uri()]) == 0
    assert (tmp_path / "new" / "dir" / "debd" / "nltcs_train.csv.gz").exists()
    assert main(["data", "download-debd", "nltcs", "--data-dir", str(tmp_path / "other"), "--base-url",
                 (tmp_path / "nowhere").as_uri()]) == 1
    assert not (tmp_path / "other").exists()


def test_every_error_class_derives_from_twbn_error_and_the_user_facing_ones_are_exported():
    """Issue 32.7 (in part): one exception base; what twbn.learn/score can raise is in
    twbn's namespace."""
    import inspect
    import pkgutil

    found = []
    packages = [importlib.import_module(f"twbn.{p}") for p in ("scoring", "formulations", "solvers", "experiments")]
    modules = [m for pkg in [twbn, *packages] for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")]
    for mod in modules:
        if mod.name.endswith("__main__"):
            continue
        module = importlib.import_module(mod.name)
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseException) and obj.__module__ == mod.name:
                found.append(obj)
    assert len(found) >= 18
    # the one interruption raised inside a method (like KeyboardInterrupt, no Exception, so
    # that a method's ``except Exception`` cannot keep it), caught where the method is called
    assert [c.__name__ for c in found if not issubclass(c, Exception)] == ["MethodOverran"]
    assert [c.__name__ for c in found if issubclass(c, Exception) and not issubclass(c, (twbn.TwbnError, Warning))] == []
    for name in ("DataError", "CacheError", "JklError", "OutputError", "ScoringTooLarge", "InfeasibleError",
                 "MethodUnavailable", "OptionError", "BackendUnavailable"):
        assert name in twbn.__all__ and issubclass(getattr(twbn, name), (twbn.TwbnError, ValueError))
    with pytest.raises(twbn.MethodUnavailable):
        twbn.learn(random_cache(4, seed=0, max_size=1), treewidth=1, method="nope")


def test_auto_bounds_a_small_bounded_problem_by_the_unbounded_optimum():
    """Issue 33.1 (in part): at n <= 22 the unbounded optimum bounds every k from above
    (a network of width <= k is one without a bound); where its network fits k it is the
    answer, proved optimal."""
    from twbn.formulations.verify import verify_result
    from twbn.solvers.registry import run, solve

    cache = _sized_cache(12, seed=4)
    relaxed = solve(Problem(cache), "dp")
    assert relaxed.width >= 2
    for k in (relaxed.width, relaxed.width + 1):
        problem = Problem(cache, k)
        sol = run(problem, "auto", time_limit=4, seed=0)
        assert sol.bound <= relaxed.score + 1e-9 and sol.score <= sol.bound
        if k >= relaxed.width:
            assert sol.status == "optimal" and sol.score == pytest.approx(relaxed.score) and sol.width <= k
            assert sol.stats["auto"].endswith("the unbounded optimum fits the bound")
        assert verify_result(cache, sol.to_json(problem), k) == []


def test_the_bound_from_the_dp_keeps_at_most_k_parents_and_agrees_with_brute_force():
    """A network of width <= k has at most k parents a variable, so the DP's bound drops
    the larger cached sets: on a cache whose best families have 3 parents it is the best
    acyclic network of families of at most k = 2 parents (brute force), below the optimum
    over every cached set, and above the bounded optimum (brute force under k = 2)."""
    from twbn.solvers.auto import unbounded_optimum_bound
    from twbn.solvers.budget import Budget
    from twbn.solvers.exact.brute_force import brute_force_optimum

    cache = random_cache(5, 3, max_size=3, density=0.6)
    problem = Problem(cache, 2)
    small = problem.candidates
    assert max(len(ps) for sets in cache.parent_sets for ps in sets) == 3
    assert max(len(ps) for sets in small.parent_sets for ps in sets) == 2
    _, families_of_two = brute_force_optimum(small)
    _, every_set = brute_force_optimum(cache)
    _, bounded = brute_force_optimum(cache, 2)
    from twbn.solvers.registry import REGISTRY

    budget = Budget(30.0)
    budget.subsolver = REGISTRY  # as the registry's own budgets carry it: the DP runs through it
    sol = unbounded_optimum_bound(problem, budget)
    assert sol.score == pytest.approx(families_of_two)
    assert bounded - 1e-9 <= sol.score < every_set - 1e-6


def test_auto_between_the_dp_and_forty_variables_solves_the_unbounded_problem_first():
    """At 22 < n <= 40 the DP does not run; the cluster-cut ILP proves the unbounded
    optimum (width 4 here), which is the answer at k = 4."""
    from twbn.formulations.verify import verify_result
    from twbn.solvers.registry import run, solve

    cache = _sized_cache(26, seed=1)
    relaxed = solve(Problem(cache), "cuts", time_limit=30, seed=0)
    assert relaxed.status == "optimal" and relaxed.width == 4
    problem = Problem(cache, 4)
    sol = run(problem, "auto", time_limit=20, seed=0)
    assert sol.status == "optimal" and sol.score == pytest.approx(relaxed.score) and sol.width <= 4
    assert sol.stats["auto"].endswith("the unbounded optimum fits the bound")
    assert sol.wall_time < 10
    assert verify_result(cache, sol.to_json(problem), 4) == []


def test_an_unproved_unbounded_problem_gives_its_bound_not_its_network_score():
    """Where cuts does not prove the problem without the treewidth bound in its share, its
    bound (not its network's score, which is no bound) tightens the result's; a looser
    one changes nothing, and a network that reaches the bound is optimal."""
    from twbn.formulations.solution import SolverResult
    from twbn.solvers.auto import tighten_with_unbounded

    unproved = SolverResult([], -120.0, -100.0, "feasible", method="cuts")
    sol = SolverResult([], -110.0, -95.0, "feasible", method="cuts")
    tighten_with_unbounded(sol, unproved)
    assert sol.bound == -100.0 and "not proved optimal" in sol.stats["bound_source"]
    assert sol.status == "feasible"
    looser = SolverResult([], -110.0, -105.0, "feasible", method="cuts")
    tighten_with_unbounded(looser, unproved)
    assert looser.bound == -105.0 and "bound_source" not in looser.stats
    reached = SolverResult([], -100.0, -90.0, "feasible", method="cuts")
    tighten_with_unbounded(reached, unproved)
    assert reached.bound == -100.0 and reached.status == "optimal"


@pytest.mark.slow
def test_auto_between_the_dp_and_forty_variables_bounds_a_narrower_k_by_the_unbounded_optimum():
    """Below its width the unbounded optimum bounds the problem and cuts starts from
    improve's network; the result never passes the bound, which never passes the
    unbounded optimum."""
    from twbn.formulations.verify import verify_result
    from twbn.solvers.registry import run, solve

    cache = _sized_cache(26, seed=1)
    relaxed = solve(Problem(cache), "cuts", time_limit=30, seed=0)
    problem = Problem(cache, 3)
    sol = run(problem, "auto", time_limit=6, seed=0)
    assert "starts from improve's network" in sol.stats["auto"]
    assert sol.score <= sol.bound <= relaxed.score + 1e-9
    assert verify_result(cache, sol.to_json(problem), 3) == []


@pytest.mark.slow
def test_the_unbounded_optimum_bound_holds_against_the_bounded_dp():
    """Below the unbounded network's width, auto's bound (the better of the cluster LP's
    and the unbounded optimum) is above the bounded DP's optimum."""
    from twbn.solvers.registry import run, solve

    cache = _sized_cache(12, seed=4)
    for k in (2, 3, 4):
        problem = Problem(cache, k)
        sol = run(problem, "auto", time_limit=4, seed=0)
        assert solve(problem, "dp", time_limit=120).score <= sol.bound + 1e-9
