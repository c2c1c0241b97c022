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
        ("a,b\n0,NA\n", "line 2: missing value 'NA' in column 'b'"),
        ("", "empty file"),
        ("a,b\n", "no data rows"),
        ("a,a\n0,1\n", "duplicate column name 'a'"),
        ("a,,c\n0,1,2\n", "column 2 has an empty name"),
    ],
)
def test_bad_data_names_the_problem(write_csv, text, fragment):
    with pytest.raises(DataError, match=fragment.replace("(", r"\(")):
        read_csv(write_csv(text))


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
