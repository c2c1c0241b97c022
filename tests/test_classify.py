"""Predicting the class from the other variables: the Markov-blanket posterior against
pgmpy's exact inference, Naive Bayes against counts by hand, smoothing of unseen states."""

import numpy as np
import pandas as pd
import pytest

import twbn
from twbn.scoring.classify import class_posterior, classification_scores, naive_bayes_parents
from twbn.scoring.data import dataset_from_frame


@pytest.mark.slow  # 9-18 s; moved out of the default run to keep it under 10 min
def test_posterior_equals_pgmpy_variable_elimination():
    from pgmpy.inference import VariableElimination

    df = pd.read_csv(twbn.example_path("housing"))
    train, test = df.iloc[:400], df.iloc[400:420]
    sol = twbn.learn(train, treewidth=2, method="kmax", time_limit=2, seed=0)
    names = list(sol.variables)
    pos = {n: i for i, n in enumerate(names)}
    parents = [tuple(sorted(pos[p] for p in sol.parents[n])) for n in names]
    probs, truth = class_posterior(dataset_from_frame(train), dataset_from_frame(test), names, parents, "class")
    ve = VariableElimination(sol.to_pgmpy(train))
    for i, (_, row) in enumerate(test.iterrows()):
        q = ve.query(["class"], evidence={k: int(v) for k, v in row.items() if k != "class"}, show_progress=False)
        assert probs[i] == pytest.approx([q.get_value(**{"class": s}) for s in (0, 1, 2)], abs=1e-9)
        assert truth[i] == int(row["class"])


def test_naive_bayes_by_hand():
    """C in {a, b}; F in {x, y}; ess 1: P(C) = (n_c + 1/2) / (6 + 1), P(F | C) = (n + 1/4) / (n_c + 1/2)."""
    df = pd.DataFrame({"C": list("aaabbb"), "F": list("xxyyyx")})
    ds = dataset_from_frame(df)
    probs, truth = class_posterior(ds, ds, ["C", "F"], naive_bayes_parents(["C", "F"], "C"), "C")
    pa, pb = 3.5 / 7, 3.5 / 7
    fx_a, fx_b = 2.25 / 3.5, 1.25 / 3.5
    want_x = pa * fx_a / (pa * fx_a + pb * fx_b)
    assert probs[0, 0] == pytest.approx(want_x) and list(truth) == [0, 0, 0, 1, 1, 1]
    got = classification_scores(ds, ds, ["C", "F"], naive_bayes_parents(["C", "F"], "C"), "C")
    # x -> a (rows 0, 1 right, row 5 wrong); y -> b (rows 3, 4 right, row 2 wrong)
    assert got["accuracy"] == pytest.approx(4 / 6)
    p_y_a = 1.25 / 3.5 * pa
    p_y_b = 2.25 / 3.5 * pb
    want_loss = -(3 * np.log(want_x) + np.log(p_y_a / (p_y_a + p_y_b)) + np.log(p_y_b / (p_y_a + p_y_b))
                  + np.log(1 - want_x)) / 6
    assert got["log_loss"] == pytest.approx(want_loss)


def test_a_state_never_seen_in_training_keeps_the_log_loss_finite():
    train = dataset_from_frame(pd.DataFrame({"C": list("aabb"), "F": list("xxyy")}))
    test = dataset_from_frame(pd.DataFrame({"C": ["c", "a"], "F": ["z", "x"]}))
    got = classification_scores(train, test, ["C", "F"], [(), (0,)], "C")
    assert np.isfinite(got["log_loss"]) and got["rows"] == 2
