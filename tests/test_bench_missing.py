"""benchmarks/bench_missing.py: the pgmpy baseline (its tables in twbn's layout) and the report's means over seeds."""

import numpy as np
import pandas as pd
import pytest

import twbn
from benchmarks.bench_missing import pgmpy_row, pgmpy_tables
from twbn.scoring.data import dataset_from_frame, state_order
from twbn.scoring.likelihood import held_out_log_likelihood


@pytest.mark.slow  # a learn and pgmpy's fit: seconds
def test_pgmpy_tables_give_back_the_likelihood_of_the_model_they_came_from():
    df = pd.read_csv(twbn.example_path("zoo"))
    train, test = df, df.iloc[70:]  # every test state seen in training: pgmpy's tables hold it
    sol = twbn.learn(train, treewidth=3, method="localsearch", time_limit=2, seed=0)
    assert any(len(ps) >= 2 for ps in sol.parents.values())  # the axes' order matters here
    names = list(df.columns)
    tr, te = dataset_from_frame(train), dataset_from_frame(test)
    states = [state_order(set(tr.states[tr.names.index(c)]) | set(te.states[te.names.index(c)])) for c in names]
    index = {c: i for i, c in enumerate(names)}
    parents = [tuple(index[p] for p in sol.parents[c]) for c in names]
    tables = pgmpy_tables(sol.to_pgmpy(train), names, states, parents)
    got, rows = held_out_log_likelihood(tr, te, names, parents, cpts=tables)
    assert rows == len(test)
    assert got == pytest.approx(sol.log_likelihood(train, test) * len(test), rel=1e-9)
    for v, t in enumerate(tables):
        assert t.shape == (int(np.prod([len(states[u]) for u in parents[v]])), len(states[v]))
    # pgmpy's EM on rows with holes keeps the complete ones: its tables are theirs
    gappy = df.mask(np.random.default_rng(0).random(df.shape) < 0.01)
    complete = gappy.dropna()
    row = pgmpy_row(sol, gappy, test, {"network": "zoo"})
    assert row["note"] == f"{len(complete)} complete rows" and 0 < len(complete) < len(df)
    alone = twbn.learn(complete, treewidth=3, method="localsearch", time_limit=0.5, seed=0)
    assert alone.is_network  # (only its variables' states matter below)
    mle = pgmpy_tables(sol.to_pgmpy(complete, ess=1e-9), names, states, parents)
    want, _ = held_out_log_likelihood(tr, te, names, parents, cpts=mle)
    assert row["loglik"] == pytest.approx(want / len(test), rel=1e-6)


@pytest.mark.slow  # pgmpy's import and a learn: seconds
def test_the_pgmpy_baseline_says_when_no_row_is_complete():
    df = pd.read_csv(twbn.example_path("zoo"))
    gappy = df.mask(np.eye(len(df), df.shape[1], dtype=bool) | np.eye(len(df), df.shape[1], k=-17, dtype=bool)
                    | np.eye(len(df), df.shape[1], k=-34, dtype=bool) | np.eye(len(df), df.shape[1], k=-51, dtype=bool)
                    | np.eye(len(df), df.shape[1], k=-68, dtype=bool) | np.eye(len(df), df.shape[1], k=-85, dtype=bool))
    assert len(gappy.dropna()) == 0
    sol = twbn.learn(df, treewidth=1, method="localsearch", time_limit=1, seed=0)
    row = pgmpy_row(sol, gappy, df, {"network": "zoo", "k": 1, "loglik": -7.0, "seconds": 3.0, "imputed": 0.5})
    assert "none left" in row["error"] and row["note"] == "0 complete rows"
    assert row == {"network": "zoo", "k": 1, "method": "pgmpy", "note": row["note"], "error": row["error"]}


def test_the_report_averages_each_method_over_the_seeds():
    """Two seeds of one cell: EM's mean -12.0 against the complete rows' mean -11.0 is
    1/11 = 9.09 % behind; the best baseline's mean -12.5 (hot deck, above mode's -13) puts
    EM +0.5 ahead; each range printed beside its mean."""
    from benchmarks.bench_missing import report

    cell = {"network": "net", "mechanism": "mcar", "fraction": 0.2, "k": 2}
    got = {("complete", 1): -10.0, ("complete", 2): -12.0, ("em", 1): -11.5, ("em", 2): -12.5,
           ("hotdeck", 1): -12.0, ("hotdeck", 2): -13.0, ("mode", 1): -13.0, ("mode", 2): -13.0}
    text = report([{**cell, "method": m, "seed": s, "loglik": v} for (m, s), v in got.items()], 60)
    assert "seeds 1, 2" in text
    row = next(line for line in text.splitlines() if line.startswith("| net | mcar | 0.2 | 2 | em | -11"))
    assert row.split(" | ")[5:10] == ["-11.0000 (-12.0000 to -10.0000)", "-12.0000 (-12.5000 to -11.5000)", "9.09 %",
                                      "-12.5000 (-13.0000 to -12.0000)", "+0.5000 (hotdeck) |"]
