import re

import numpy as np
import pytest

from twbn.scoring.data import DataError, read_csv


def test_encodes_string_and_integer_states(write_csv):
    p = write_csv("a,b,c\nx,10,1\ny,2,1\nx,10,1\n")
    ds = read_csv(p)
    assert ds.names == ("a", "b", "c")
    assert ds.states == (("x", "y"), ("2", "10"), ("1",))  # integers ordered numerically
    assert ds.arities.tolist() == [2, 2, 1]
    assert ds.data.tolist() == [[0, 1, 0], [1, 0, 1], [0, 0, 0]]
    assert ds.data.flags["C_CONTIGUOUS"] and ds.n_rows == 3


def test_gzip_is_read_transparently(write_csv):
    p = write_csv("a,b\n0,1\n1,1\n", gz=True)
    assert read_csv(p).data.tolist() == [[0, 1], [0, 0]]


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("a,b\n0,1\n1,0,1\n", "line 3: 3 fields, expected 2"),
        ("a,b\n0,1\n1,\n", "line 3: missing value '' in column 'b'"),
        ("a,b\n0,NA\n1,0\n", "line 2: missing value 'NA' in column 'b'"),
        # the first in the file, line by line then column by column; spaces around a token
        ("a,b,c\n0,1,1\n1, NA ,?\n?,0,1\n", "line 3: missing value 'NA' in column 'b'"),
        # a quoted cell over two lines: the line is the file's
        ('a,b\n"x\ny",1\n\n0,?\n', "line 5: missing value '?' in column 'b'"),
        ("", "empty file"),
        ("a,b\n", "no data rows"),
        ("a,a\n0,1\n", "duplicate column name 'a'"),
        ("a,,c\n0,1,2\n", "column 2 has an empty name"),
    ],
)
def test_bad_data_names_the_problem(write_csv, text, fragment):
    with pytest.raises(DataError, match=re.escape(fragment)):
        read_csv(write_csv(text), missing="error")


MISSING = "a,b,c\n1,x,NA\n2,,y\n?,x,y\n1,y,z\n2,-,z\n"


def test_missing_cells_are_kept_missing_by_default(write_csv):
    ds = read_csv(write_csv(MISSING))
    # NA, the empty cell and ? are missing (code -1); "-" is a state unless named
    assert ds.states == (("1", "2"), ("-", "x", "y"), ("y", "z"))
    assert ds.data.tolist() == [[0, 1, -1, 0, 1], [1, -1, 1, 2, 0], [-1, 0, 0, 1, 1]]
    assert ds.missing_counts.tolist() == [1, 1, 1] and ds.n_missing == 3
    named = read_csv(write_csv(MISSING), missing_token="-")
    assert named.states[1] == ("x", "y") and named.missing_counts.tolist() == [1, 2, 1]
    from twbn.scoring.data import missing_summary

    assert missing_summary(named) == "4 of 15 cells missing (26.7 %): b 2, a 1, c 1"


def test_missing_as_a_state_or_complete_rows(write_csv):
    state = read_csv(write_csv(MISSING), missing="state")
    assert state.states[0] == ("1", "2", "missing") and state.n_missing == 0
    assert state.data[0].tolist() == [0, 1, 2, 0, 1]
    # a column with a state named "missing" already: the missing cells' state is another
    clash = read_csv(write_csv("a,b\nmissing,0\n,1\nx,0\n"), missing="state")
    assert clash.states[0] == ("missing", "missing_", "x")
    rows = read_csv(write_csv(MISSING), missing="complete-rows")
    assert rows.n_rows == 2 and rows.data.tolist() == [[0, 1], [1, 0], [0, 0]]  # rows "1,y,z" and "2,-,z"
    assert rows.states == (("1", "2"), ("-", "y"), ("z",))


@pytest.mark.parametrize("text, mode, fragment", [
    ("a,b\nNA,1\n,0\n", "em", "column 'a' has no observed value"),
    ("a,b\nNA,1\n,0\n", "state", "column 'a' has no observed value"),
    ("a,b\n0,1\nNA,?\n1,1\n", "em", "row 2 has no observed value"),
    ("a,b\n0,NA\nNA,1\n", "complete-rows", "no row without a missing value"),
])
def test_missing_data_that_cannot_be_used_is_one_clear_error(write_csv, text, mode, fragment):
    with pytest.raises(DataError, match=fragment):
        read_csv(write_csv(text), missing=mode)


def test_an_unknown_missing_mode_is_refused(write_csv):
    with pytest.raises(ValueError, match="missing must be one of em, state, complete-rows, error"):
        read_csv(write_csv("a\n0\n"), missing="drop")


def test_a_data_frame_with_nan_and_none(write_csv):
    import pandas as pd

    from twbn.scoring.data import dataset_from_frame

    df = pd.DataFrame({"a": [1.0, 2.0, None, 1.0], "b": ["x", None, "x", "NA"]})
    ds = dataset_from_frame(df)
    assert ds.states == (("1", "2"), ("x",)) and ds.data.tolist() == [[0, 1, -1, 0], [0, -1, 0, -1]]
    with pytest.raises(DataError, match="missing value in column 'a' at row 2"):
        dataset_from_frame(df, missing="error")


def test_scoring_refuses_missing_cells_in_one_line(write_csv):
    import twbn

    with pytest.raises(DataError, match=r"3 of 15 cells missing \(20.0 %\): a 1, b 1, c 1; scoring a cache needs complete"):
        twbn.score(read_csv(write_csv(MISSING)))


def test_state_limit(write_csv):
    rows = "\n".join(f"{i},0" for i in range(5))
    with pytest.raises(DataError, match="column 'id' has 5 states, more than the limit of 4"):
        read_csv(write_csv("id,b\n" + rows + "\n"), max_states=4)
    assert read_csv(write_csv("id,b\n" + rows + "\n"), max_states=5).arities.tolist() == [5, 1]


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        read_csv(tmp_path / "nope.csv")


def test_real_set_shape():
    from tests.conftest import BUNDLED

    ds = read_csv(BUNDLED / "housing.csv.gz")
    assert (ds.n_variables, ds.n_rows) == (14, 506)
    assert ds.arities.max() == 9  # RAD keeps its 9 values (MANIFEST.md)
    assert np.all(ds.data >= 0) and np.all(ds.data < ds.arities[:, None])
