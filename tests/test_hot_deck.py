"""Nearest-neighbour hot deck (``twbn.scoring.hot_deck``) against a row-by-row brute force."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twbn.scoring.hot_deck import hot_deck


def brute_force(codes, arities, neighbours):
    """Each row's donors ranked by the share of co-observed cells that differ (rows with no
    co-observed cell last), ties to the lower row; a missing cell from the first ranked
    donor that has it, else the column's mode."""
    n, rows = codes.shape
    out = codes.copy()
    for i in range(rows):
        if (codes[:, i] >= 0).all():
            continue
        ranked = []
        for j in range(rows):
            if j == i:
                continue
            both = [v for v in range(n) if codes[v, i] >= 0 and codes[v, j] >= 0]
            d = 2.0 if not both else sum(codes[v, i] != codes[v, j] for v in both) / len(both)
            ranked.append((d, j))
        ranked.sort()
        near = [j for _, j in ranked[:neighbours]]
        for v in range(n):
            if codes[v, i] >= 0:
                continue
            got = [codes[v, j] for j in near if codes[v, j] >= 0]
            if got:
                out[v, i] = got[0]
            else:
                seen = codes[v][codes[v] >= 0]
                out[v, i] = np.bincount(seen, minlength=arities[v]).argmax()
    return out


@st.composite
def gappy(draw):
    n = draw(st.integers(1, 4))
    rows = draw(st.integers(2, 12))
    arities = [draw(st.integers(2, 3)) for _ in range(n)]
    codes = np.array([[draw(st.integers(-1, arities[v] - 1)) for _ in range(rows)] for v in range(n)])
    for v in range(n):  # every column observed somewhere
        if (codes[v] < 0).all():
            codes[v, draw(st.integers(0, rows - 1))] = 0
    return codes, arities, draw(st.integers(1, rows))


@settings(max_examples=150, deadline=None)
@given(gappy())
def test_hot_deck_equals_the_row_by_row_brute_force(case):
    codes, arities, neighbours = case
    got = hot_deck(codes, arities, neighbours=neighbours)
    assert got.tolist() == brute_force(codes, arities, neighbours).tolist()
    assert (got >= 0).all() and (got[codes >= 0] == codes[codes >= 0]).all()


def test_a_row_takes_its_cells_from_the_nearest_row_that_has_them():
    # row 0 agrees with row 1 on a and b, with row 2 on a only; row 1 lacks c, row 2 has it
    codes = np.array([[0, 0, 0, 1],
                      [1, 1, 0, 0],
                      [-1, -1, 1, 0]])
    got = hot_deck(codes, [2, 2, 2], neighbours=2)
    # row 0: donors ranked 1 (distance 0), 2 (1/2); row 1 lacks c, so c comes from row 2.
    # row 1: ranked 0 (0, but lacks c), 2 (1/2): c = 1.
    assert got[2].tolist() == [1, 1, 1, 0]
    # with one neighbour, row 0's only donor (row 1) lacks c: the column's mode (0 and 1 once each: 0)
    assert hot_deck(codes, [2, 2, 2], neighbours=1)[2].tolist() == [0, 0, 1, 0]


def test_a_capped_donor_pool_fills_from_its_rows_only():
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 3, (5, 200))
    codes[:, ::2][rng.random((5, 100)) < 0.3] = -1  # the even rows have holes
    got = hot_deck(codes, [3] * 5, donors=1, seed=4)
    mode = [np.bincount(codes[v][codes[v] >= 0]).argmax() for v in range(5)]
    # one donor row r: each hole is r's value where r has the cell, else the mode
    fits = [r for r in range(200)
            if all(got[v, i] == (codes[v, r] if codes[v, r] >= 0 and r != i else mode[v])
                   for v in range(5) for i in range(200) if codes[v, i] < 0)]
    assert fits and (got[codes >= 0] == codes[codes >= 0]).all()


def test_complete_data_comes_back_as_it_is():
    codes = np.array([[0, 1], [1, 0]])
    assert hot_deck(codes, [2, 2]).tolist() == codes.tolist()


@pytest.mark.parametrize("codes, arities, kw, match", [
    (np.array([[-1, -1], [0, 1]]), [2, 2], {}, "column 0 has no observed cell"),
    (np.array([[0, 2]]), [2], {}, "a state below the variable's arity"),
    (np.array([[0, -1]]), [2, 2], {}, "one arity a variable"),
    (np.array([[0, -1]]), [2], {"neighbours": 0}, "neighbours must be an integer >= 1"),
    (np.array([[0, -1]]), [2], {"donors": 1.5}, "donors must be an integer >= 1"),
])
def test_bad_input_is_refused_in_one_line(codes, arities, kw, match):
    with pytest.raises(ValueError, match=match):
        hot_deck(codes, arities, **kw)
