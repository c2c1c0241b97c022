"""Issue 87: silent wrong answers where a model meets rows it was not learned from.

Each test here failed before its fix: a held-out likelihood off by a factor of seven when
the two files were typed differently by pandas, a test value never seen in training scored
without a word, ``check`` saying "valid" for a structural-EM result against other rows, a
real-valued column learned as 40 states without a word, and bad arguments raised as plain
``ValueError``.
"""

import ast
import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import twbn
from twbn.experiments.cli import main
from twbn.scoring.data import as_dataset, canonical_state, data_identity

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def zoo_split(tmp_path_factory):
    """zoo's rows shuffled, 80 to train with 15 % of their cells '?', 21 complete to test:
    pandas reads a training column with '?' as the strings 'True'/'False' and the test
    column as bool."""
    folder = tmp_path_factory.mktemp("zoo")
    df = pd.read_csv(twbn.example_path("zoo")).sample(frac=1, random_state=0)
    train = df[:80].astype(object).mask(np.random.default_rng(0).random((80, df.shape[1])) < 0.15, "?")
    train.to_csv(folder / "train.csv", index=False)
    df[80:].to_csv(folder / "test.csv", index=False)
    sol = twbn.learn(folder / "train.csv", treewidth=2, method="localsearch", time_limit=3, seed=0)
    sol.save(folder / "zoo.json")
    return folder, sol


def _evaluate(capsys, *args) -> tuple[int, str, str]:
    code = main(["evaluate", *map(str, args)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_python_and_evaluate_agree_whatever_pandas_typed_the_columns(zoo_split, capsys):
    folder, sol = zoo_split
    train, test = pd.read_csv(folder / "train.csv"), pd.read_csv(folder / "test.csv")
    assert train["hair"].dtype != test["hair"].dtype  # the trap: strings against bools
    code, out, _ = _evaluate(capsys, folder / "zoo.json", "--train", folder / "train.csv", "--test", folder / "test.csv")
    assert code == 0
    cli = float(out.split("held-out log-likelihood: ")[1].split()[0])
    # before: -46.96 from the frames against -6.88 from the files
    assert sol.log_likelihood(train, test) == pytest.approx(cli, abs=1e-6)
    assert sol.log_likelihood(folder / "train.csv", folder / "test.csv") == pytest.approx(cli, abs=1e-6)


def test_one_state_however_it_was_spelled_or_typed():
    frame = pd.DataFrame({"b": [True, False, True], "n": [4.0, 2.0, 4.0]})
    texts = pd.DataFrame({"b": ["true", "False", "TRUE"], "n": ["4", "02", "4.0"]})
    a, b = as_dataset(frame), as_dataset(texts)
    assert a.states == b.states == (("0", "1"), ("2", "4"))
    assert a.data.tolist() == b.data.tolist() == [[1, 0, 1], [1, 0, 1]]
    assert [canonical_state(t) for t in ("1.50", "-0.0", "x")] == ["1.5", "0", "x"]


def test_a_test_value_never_seen_in_training_is_refused_by_name(tmp_path, capsys):
    df = pd.read_csv(twbn.example_path("zoo"))
    train, test = df[df["legs"] != 5], df[df["legs"] == 5]
    assert len(test) == 1  # the one five-legged animal (a starfish)
    sol = twbn.learn(train, treewidth=1)
    with pytest.raises(twbn.DataError, match=r"legs 5 \(1 row\).*allow_unseen"):
        sol.log_likelihood(train, test)
    allowed = sol.log_likelihood(train, test, allow_unseen=True)
    assert np.isfinite(allowed)
    train.to_csv(tmp_path / "train.csv", index=False)
    test.to_csv(tmp_path / "test.csv", index=False)
    sol.save(tmp_path / "r.json")
    code, out, err = _evaluate(capsys, tmp_path / "r.json", "--train", tmp_path / "train.csv", "--test",
                               tmp_path / "test.csv")
    assert code == 1 and out == "" and err.count("\n") == 1 and "legs 5" in err
    code, out, err = _evaluate(capsys, tmp_path / "r.json", "--train", tmp_path / "train.csv", "--test",
                               tmp_path / "test.csv", "--allow-unseen")
    assert code == 0 and "legs 5 (1 row)" in err
    assert float(out.split(": ")[1].split()[0]) == pytest.approx(allowed, abs=1e-6)


def test_check_says_whether_a_structural_em_result_belongs_to_the_data(zoo_split, tmp_path, capsys):
    folder, sol = zoo_split
    assert sol.stats["structural_em"] and sol.stats["data"]["rows"] == 80
    train = pd.read_csv(folder / "train.csv")
    assert sol.check(train) == []
    assert sol.check(train.sample(frac=1, random_state=3)) == []  # the rows' order is not the data
    other = train.copy()
    i = int(np.flatnonzero(other["hair"].astype(str) != "?")[0])
    other.loc[other.index[i], "hair"] = {"True": "False", "False": "True"}[str(other["hair"].iloc[i])]
    assert sol.check(other)[0].startswith("the data's rows or states differ from those the result was learned from")
    fewer = train[:70]
    assert sol.check(fewer)[0] == "the result was learned from 80 rows, the data has 70"
    fewer.to_csv(tmp_path / "fewer.csv", index=False)
    assert main(["check", str(tmp_path / "fewer.csv"), str(folder / "zoo.json")]) == 1
    assert "learned from 80 rows, the data has 70" in capsys.readouterr().out


def test_data_identity_is_the_rows_not_their_order_or_spelling():
    df = pd.read_csv(twbn.example_path("zoo"))
    base = data_identity(as_dataset(df))
    assert data_identity(as_dataset(df.iloc[::-1])) == base
    assert data_identity(as_dataset(df.astype(str))) == base  # 'True' is the bool True
    changed = df.copy()
    changed.loc[0, "legs"] = 2 if changed.loc[0, "legs"] != 2 else 4
    assert data_identity(as_dataset(changed))["digest"] != base["digest"]


def test_check_names_the_variable_that_differs(tmp_path, capsys):
    df = pd.read_csv(twbn.example_path("zoo"))
    sol = twbn.learn(df, treewidth=1)
    assert sol.check(df.drop(columns=["legs"])) == [
        "the result's variables differ from the data's columns: not in the data's columns: 'legs'"]
    assert "position 1" in sol.check(df[df.columns[::-1]])[0]


def test_a_column_that_looks_continuous_is_named(tmp_path, capsys):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=40).round(3), "y": rng.integers(0, 2, 40)})
    with pytest.warns(twbn.TwbnWarning, match=r"'x' \(40 values in 40 rows\) looks continuous"):
        twbn.learn(df, treewidth=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the suite's data: no warning
        for name in ("zoo", "housing", "audiology"):
            as_dataset(twbn.example_path(name))
    df.to_csv(tmp_path / "c.csv", index=False)
    assert main(["learn", str(tmp_path / "c.csv"), "--treewidth", "1", "-o", str(tmp_path / "c.json"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("twbn: warning: ") and "'x' (40 values" in err


@pytest.mark.parametrize("kwargs", [{"treewidth": -1}, {"treewidth": 2, "time_limit": 0}, {"treewidth": "two"},
                                    {"treewidth": 1, "seed": -1}, {"treewidth": 1, "score": "mdl"},
                                    {"treewidth": 1, "policy": "fast"}])
def test_every_bad_argument_of_learn_is_a_twbn_error(kwargs):
    with pytest.raises(twbn.TwbnError):
        twbn.learn(twbn.example_path("zoo"), **kwargs)


def test_the_package_raises_no_bare_value_or_type_error():
    """Every error twbn raises is a TwbnError (the README): a bare ValueError or TypeError
    raised by the package's own code would escape ``except twbn.TwbnError``."""
    bare = []
    for folder in ("twbn", "scoring", "formulations", "solvers", "experiments"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and \
                        getattr(node.exc.func, "id", None) in ("ValueError", "TypeError"):
                    bare.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert bare == []


def test_a_bundled_config_copied_elsewhere_runs(tmp_path):
    from twbn.experiments.config import load_config

    for source in (ROOT / "experiments" / "configs").glob("*.toml"):
        if "$" in source.read_text():
            continue  # data under $TWBN_DATA: not bundled
        copy = tmp_path / source.name
        shutil.copy(source, copy)
        config = load_config(copy)
        assert all(Path(p).exists() for p in config.data.values()), source.name


def test_structural_em_results_say_what_they_searched(zoo_split):
    _, sol = zoo_split
    held, total = map(int, sol.stats["families_in_cache"].split(" of "))
    assert total == 17 and 0 <= held <= total
    assert "bound" not in sol.stats["search_space"] and "structural EM" in sol.stats["search_space"]


def test_treewidth_zero_says_no_arcs(tmp_path):
    sol = twbn.learn(twbn.example_path("zoo"), treewidth=0)
    assert sol.arcs == [] and "one parent" not in sol.stats["auto"] and "no arcs" in sol.stats["auto"]


def test_the_docs_name_from_json_and_the_default_output():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "Solution.from_json" in readme and "DATA.METHOD.json" in readme


def test_check_reads_the_data_as_learn_did(zoo_split, tmp_path, capsys):
    """A result learned with ``--missing state`` ('?' a state of its own) is checked against
    its own file read the same way: read the default way (missing cells, structural EM's
    reading) the file has other states and missing cells, and check refused it."""
    folder, _ = zoo_split
    out = tmp_path / "state.json"
    assert main(["learn", str(folder / "train.csv"), "--treewidth", "2", "--missing", "state", "--time-limit", "3",
                 "--seed", "0", "-o", str(out), "-q"]) == 0
    assert twbn.Solution.from_json(out).stats["data"]["missing"] == "state"
    capsys.readouterr()
    assert main(["check", str(folder / "train.csv"), str(out)]) == 0
    assert "valid network: every family re-scored from the data" in capsys.readouterr().out
    assert twbn.Solution.from_json(out).check(folder / "train.csv") == []
    em = tmp_path / "em.json"
    twbn.Solution.from_json(folder / "zoo.json").save(em)
    assert main(["check", str(folder / "train.csv"), str(em)]) == 0  # structural EM: read the default way
    capsys.readouterr()
