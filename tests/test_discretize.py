"""Continuous columns cut into states (twbn.scoring.discretize): cuts checked against
numpy's own quantiles and the arithmetic of equal widths, Hartemink's merges against a
column whose one informative cut is known, and the cuts applied wherever a learned
network meets raw rows again."""

import numpy as np
import pandas as pd
import pytest

import twbn
from twbn.scoring.data import DataError
from twbn.scoring.discretize import Discretizer, fit_discretizer, parse_spec


def _table(rows: int = 800, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, rows)
    y = np.where(rng.random(rows) < 0.95, x > 0.5, x <= 0.5).astype(int)  # y tells which half x is in
    z = rng.normal(size=rows)  # independent of both
    return pd.DataFrame({"x": x, "y": y, "z": z, "w": rng.choice(["a", "b"], rows)})


def test_quantile_and_uniform_cuts_by_hand():
    df = _table()
    q = fit_discretizer(df, "x=quantile:4").cuts["x"]
    # averaged inverted CDF at 1/4, 1/2, 3/4: with 800 rows, the mean of the 200th and 201st order statistics, …
    s = np.sort(df["x"].to_numpy())
    assert np.allclose(q, [(s[199] + s[200]) / 2, (s[399] + s[400]) / 2, (s[599] + s[600]) / 2])
    u = fit_discretizer(df, "z=uniform:5").cuts["z"]
    lo, hi = df["z"].min(), df["z"].max()
    assert np.allclose(u, [lo + i * (hi - lo) / 5 for i in range(1, 5)])


def test_a_spec_for_all_cuts_only_numeric_columns_with_many_values():
    cuts = fit_discretizer(_table(), "quantile:3").cuts
    assert set(cuts) == {"x", "z"}  # y has 2 values, w is text


def test_information_keeps_the_cut_that_tells_y():
    """x matters to y only through x > 0.5: merging 20 quantile bins down to 2 must keep
    the cut nearest 0.5 (the median), the one of the 19 that carries y's information."""
    df = _table(2000)
    (cut,) = fit_discretizer(df, "x=information:2").cuts["x"]
    assert abs(cut - np.median(df["x"])) < 1e-9


def test_missing_cells_stay_missing_and_new_values_fall_in_the_end_bins():
    d = Discretizer({"x": (0.25, 0.5, 0.75)}, {"x": "quantile:4"})
    out = d.apply(pd.DataFrame({"x": [-3.0, 0.25, None, "?", 0.6, 99.0]}))["x"]
    labels = d.labels("x")
    assert out[[0, 1, 4, 5]].tolist() == [labels[0], labels[1], labels[2], labels[3]]
    assert out.isna()[[2, 3]].all()


@pytest.mark.parametrize("frame, spec, message", [
    (pd.DataFrame({"a": [2.0] * 20}), "a=quantile:3", "'a' cannot be discretized: all its 20 values are equal"),
    (pd.DataFrame({"a": [None] * 5, "b": [1] * 5}), "a=quantile:3", "'a' cannot be discretized: all its cells"),
    (pd.DataFrame({"a": [1.0, "low", 3.0]}), "a=uniform:2", "row 2 holds 'low', not a number"),
    (pd.DataFrame({"a": [1.0, 2.0]}), "b=uniform:2", "no column 'b'"),
])
def test_columns_that_cannot_be_cut_are_named(frame, spec, message):
    with pytest.raises(DataError, match=message):
        fit_discretizer(frame, spec)


@pytest.mark.parametrize("spec", ["median:3", "quantile:1", "quantile:x", ""])
def test_bad_specs_are_refused(spec):
    with pytest.raises(twbn.ParameterError):
        parse_spec(spec)


def test_a_network_learned_on_cuts_meets_raw_rows_with_them(tmp_path):
    """Learned from the raw table: its held-out likelihood on raw test rows equals that of
    the same network on rows cut by hand with the recorded cuts, and check accepts the raw
    data."""
    df = _table(600)
    train, test = df[:500], df[500:]
    sol = twbn.learn(train, treewidth=1, discretize="quantile:4", seed=0)
    cuts = sol.discretization.cuts
    assert set(cuts) == {"x", "z"} and sol.check(train) == []

    def by_hand(frame):
        out = frame.copy()
        for c, cs in cuts.items():
            labels = np.array(sol.discretization.labels(c), dtype=object)
            out[c] = labels[np.searchsorted(cs, frame[c].to_numpy(), side="right")]
        return out

    assert sol.log_likelihood(train, test, allow_unseen=True) == \
        pytest.approx(sol.log_likelihood(by_hand(train), by_hand(test), allow_unseen=True), rel=1e-12)
    assert ("x", "y") in sol.arcs or ("y", "x") in sol.arcs


def test_command_line_cuts_and_applies(tmp_path, capsys):
    from twbn.experiments.cli import main

    df = _table(500)
    df.loc[3, "z"] = None
    raw = tmp_path / "raw.csv"
    df.to_csv(raw, index=False)
    out = tmp_path / "r.json"
    assert main(["learn", str(raw), "--treewidth", "1", "--discretize", "x=information:2",
                 "--discretize", "z=quantile:3", "-o", str(out), "--seed", "0", "-q"]) == 0
    assert set(twbn.Solution.from_json(out).discretization.cuts) == {"x", "z"}
    assert main(["check", str(raw), str(out)]) == 0
    assert main(["evaluate", str(out), "--train", str(raw), "--test", str(raw)]) == 0
    assert "held-out log-likelihood" in capsys.readouterr().out
    assert main(["learn", str(raw), "--treewidth", "1", "--discretize", "w=quantile:3", "-o",
                 str(tmp_path / "w.json")]) != 0
    assert "'w' cannot be discretized: row 1 holds" in capsys.readouterr().err
    assert not (tmp_path / "w.json").exists()
