"""Held-out log-likelihood (``twbn evaluate``): by hand on a two-variable network, with a
test-only state, and through the command line."""

import json
import math

import numpy as np
import pytest

from twbn.experiments.cli import main
from twbn.scoring.data import encode_columns
from twbn.scoring.likelihood import fit_cpts, held_out_log_likelihood


def _ds(rows, names=("A", "B")):
    cols = list(zip(*rows))
    return encode_columns(list(names), [np.array([str(x) for x in c]) for c in cols], source="test")


TRAIN = [(0, 0), (0, 0), (0, 1), (1, 1)]


def test_cpts_by_hand():
    """A → B, binary, ess 1. A: a = 1/2, θ_A = (3.5, 1.5)/5. B|A: a = 1/4;
    A=0: (2.25, 1.25)/3.5; A=1: (0.25, 1.25)/1.5."""
    data = np.array(TRAIN).T
    cpts = fit_cpts(data, np.array([2, 2]), [(), (0,)], ess=1.0)
    assert cpts[0] == pytest.approx(np.array([[0.7, 0.3]]))
    assert cpts[1] == pytest.approx(np.array([[2.25 / 3.5, 1.25 / 3.5], [1 / 6, 5 / 6]]))


def test_held_out_log_likelihood_by_hand():
    ll, rows = held_out_log_likelihood(_ds(TRAIN), _ds([(0, 1), (1, 0)]), ["A", "B"], [(), (0,)])
    assert rows == 2
    assert ll == pytest.approx(math.log(0.7) + math.log(1.25 / 3.5) + math.log(0.3) + math.log(1 / 6))
    # the empty network: A as before, B: a = 1/2, counts (2, 2) → θ_B = (2.5, 2.5)/5
    ll0, _ = held_out_log_likelihood(_ds(TRAIN), _ds([(0, 1), (1, 0)]), ["A", "B"], [(), ()])
    assert ll0 == pytest.approx(math.log(0.7) + math.log(0.5) + math.log(0.3) + math.log(0.5))


def test_a_state_seen_only_in_the_test_data_gets_the_pseudo_count():
    # B now has 3 states: a_B = 1/(2·3); θ(B=2 | A=0) = (1/6) / (3 + 3/6)
    ll, _ = held_out_log_likelihood(_ds(TRAIN), _ds([(0, 2)]), ["A", "B"], [(), (0,)])
    assert ll == pytest.approx(math.log(0.7) + math.log((1 / 6) / 3.5))


def test_evaluate_from_the_command_line(tmp_path, capsys):
    train, test = tmp_path / "train.csv", tmp_path / "test.csv"
    train.write_text("A,B\n" + "".join(f"{a},{b}\n" for a, b in TRAIN))
    test.write_text("B,A\n1,0\n0,1\n")  # columns in another order
    res = tmp_path / "r.json"
    res.write_text(json.dumps({"variables": ["A", "B"], "parents": {"A": [], "B": ["A"]}}))
    assert main(["evaluate", str(res), "--train", str(train), "--test", str(test)]) == 0
    expected = (math.log(0.7) + math.log(1.25 / 3.5) + math.log(0.3) + math.log(1 / 6)) / 2
    assert f"{expected:.6f} per sample" in capsys.readouterr().out
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"variables": ["A", "C"], "parents": {"A": [], "C": []}}))
    assert main(["evaluate", str(bad), "--train", str(train), "--test", str(test)]) == 1
    assert "'C'" in capsys.readouterr().err


def test_cpts_match_pgmpy_bdeu_estimator():
    pd = pytest.importorskip("pandas")
    from pgmpy.estimators import BayesianEstimator
    from pgmpy.models import DiscreteBayesianNetwork

    rng = np.random.default_rng(0)
    a = rng.integers(0, 3, 200)
    b = (a + rng.integers(0, 2, 200)) % 3
    c = rng.integers(0, 2, 200)
    df = pd.DataFrame({"A": a, "B": b, "C": c}).astype(str)
    model = DiscreteBayesianNetwork([("A", "B"), ("C", "B")])
    pg = BayesianEstimator(model, df).estimate_cpd("B", prior_type="BDeu", equivalent_sample_size=2.0)
    cpts = fit_cpts(np.array([a, b, c]), np.array([3, 3, 2]), [(), (0, 2), ()], ess=2.0)
    # pgmpy: rows = states of B, columns = parent configurations with the first evidence slowest
    order = pg.state_names
    evidence = pg.variables[1:]  # pgmpy's column order: the first evidence variable slowest
    assert set(evidence) == {"A", "C"}
    ours = []
    for y in order["B"]:
        row = []
        for e1 in order[evidence[0]]:
            for e2 in order[evidence[1]]:
                x, z = (e1, e2) if evidence[0] == "A" else (e2, e1)
                row.append(cpts[1][int(x) + 3 * int(z), int(y)])
        ours.append(row)
    assert pg.get_values() == pytest.approx(np.array(ours))
