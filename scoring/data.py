"""Discrete data: reading CSV / CSV.gz and encoding states per column.

Every column becomes integer codes ``0 … r−1`` where ``r`` is the column's arity (the
number of distinct states observed, or declared). States are kept as strings in one
canonical form (:func:`canonical_state`: ``true``/``True``/a bool read as ``1``,
``4.0``/``04``/a whole float as ``4``), whatever read them (a CSV, a DataFrame of any
dtypes), so that a network learned from one file meets the rows of another in the same
states; integer states are ordered numerically, others lexicographically, so codes are
reproducible.

Missing cells (empty, ``NA``, ``NaN``, ``?`` and the other ``MISSING_TOKENS``, or a
token the user names) are not a state. What becomes of them is the reader's ``missing``
(``MISSING_MODES``):

- ``"em"`` (the default): kept missing, code −1; ``twbn.learn`` fits them by structural
  EM, and whatever needs complete data (scoring a cache) refuses them in one line;
- ``"state"``: a state of their own, named ``missing``;
- ``"complete-rows"``: the rows with a missing cell are dropped;
- ``"error"``: the first missing cell is an error naming its line and column.

A column with no observed cell, or (under ``"em"``) a row with none, is an error.
"""

from __future__ import annotations

import csv
import gzip
import io
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from twbn.scoring.errors import ParameterError, TwbnError, TwbnWarning
from twbn.scoring.identity import data_identity, identity_differences  # noqa: F401  (their home before)

__all__ = ["DataError", "Dataset", "MISSING_MODES", "check_missing", "state_order", "encode_columns", "read_csv",
           "read_csv_columns", "state_values", "canonical_state", "dataset_from_frame", "as_dataset", "missing_summary", "data_identity", "identity_differences",
           "read_as_recorded"]

#: Cell texts that mean "missing" (never a state: treating "NA" as one would change every
#: score). Not "None": it is a state of child, hailfinder and insurance (bnlearn), so data
#: sampled from them would lose it (a DataFrame's None object still counts as missing).
MISSING_TOKENS = frozenset({"", "?", "NA", "N/A", "NaN", "nan", "null", "NULL"})

#: What a reader does with missing cells (module docstring).
MISSING_MODES = ("em", "state", "complete-rows", "error")

#: The state label of a missing cell under ``missing="state"``.
MISSING_STATE = "missing"

#: A column of numbers with more distinct values than this, and at least half as many as
#: it has observed cells, is named as looking continuous (an undiscretised measurement or
#: an identifier): learned, every value is a state of its own (issue 87: 40 rows of
#: normal().round(3) learned as 40 states without a word). No column of the suite comes
#: near: the most states are adult's 41 in 30,162 rows, audiology's 24 in 226 (text), the
#: bnlearn networks' 21 (diabetes, munin; sampled at 5,000 rows), DEBD's 2.
CONTINUOUS_MIN_STATES = 10

#: Default limit on states per column; a column over it is almost always an identifier
#: or an undiscretised number, and would make every parent set containing it useless.
DEFAULT_MAX_STATES = 64


class DataError(TwbnError, ValueError):
    """Bad input data; the message names the file, row and column where it can.

    Examples
    --------
    >>> import twbn
    >>> twbn.read_csv("no-such-file.csv")
    Traceback (most recent call last):
    ...
    twbn.scoring.data.DataError: no-such-file.csv: no such file
    """


@dataclass(frozen=True)
class Dataset:
    """Encoded discrete data.

    Attributes
    ----------
    names : variable names, in column order.
    states : for each variable, its state labels; code ``i`` means ``states[v][i]``.
    data : int32 array of shape (n_variables, n_rows), C-contiguous, so that one
        variable's column is contiguous memory (the counting kernels read it row-wise).

    Parameters
    ----------
    names, states, data
        As the attributes; :func:`read_csv` makes one from a file.

    Examples
    --------
    >>> import twbn
    >>> ds = twbn.read_csv(twbn.example_path("zoo"))
    >>> len(ds.names), ds.data.shape, ds.names[0]
    (17, (17, 101), 'hair')
    """

    names: tuple[str, ...]
    states: tuple[tuple[str, ...], ...]
    data: np.ndarray

    @property
    def n_variables(self) -> int:
        return len(self.names)

    @property
    def missing_counts(self) -> np.ndarray:
        """Missing cells (code −1) per variable."""
        return (self.data < 0).sum(axis=1)

    @property
    def n_missing(self) -> int:
        """Missing cells in all (0: complete data)."""
        return int((self.data < 0).sum())

    def require_complete(self, what: str) -> None:
        """Raise DataError, in one line, if any cell is missing: ``what`` needs complete data."""
        if self.n_missing:
            raise DataError(f"{missing_summary(self)}; {what} needs complete data (read it with missing='state' or "
                            "'complete-rows', or learn, which fits them by structural EM)")

    @property
    def n_rows(self) -> int:
        return int(self.data.shape[1])

    @property
    def arities(self) -> np.ndarray:
        return np.array([len(s) for s in self.states], dtype=np.int64)

    def subset_rows(self, rows: np.ndarray) -> "Dataset":
        """The same variables and state labels on a subset of rows (e.g. a fold)."""
        return Dataset(self.names, self.states, np.ascontiguousarray(self.data[:, rows]))


#: The texts ``pandas.read_csv`` reads as booleans (its ``true_values``/``false_values``).
TRUE_TEXTS, FALSE_TEXTS = frozenset({"True", "TRUE", "true"}), frozenset({"False", "FALSE", "false"})

_INTEGER = re.compile(r"[+-]?\d+")
_DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def canonical_state(text: str) -> str:
    """The one text a state has wherever it was read: booleans as ``1``/``0``, whole
    numbers as integers, other decimals as Python writes the float, anything else as it is.

    A column that holds ``?`` reads (pandas) as the strings ``'True'``/``'False'``, the same
    column of a file without ``?`` as bools: both must be the same states, or a network
    learned on one scores the other's rows as never seen (issue 87: −55.28 a row against
    −7.44 on zoo).

    Parameters
    ----------
    text : str
        A cell's text, stripped.

    Returns
    -------
    str

    Examples
    --------
    >>> [canonical_state(t) for t in ("true", "False", "4.0", "04", "-0", "2.50", "1e-3", "yes", "None")]
    ['1', '0', '4', '4', '0', '2.5', '0.001', 'yes', 'None']
    """
    if text in TRUE_TEXTS:
        return "1"
    if text in FALSE_TEXTS:
        return "0"
    if _INTEGER.fullmatch(text):
        return str(int(text))
    if _DECIMAL.fullmatch(text):
        f = float(text)
        return str(int(f)) if f.is_integer() and abs(f) < 2 ** 53 else repr(f)
    return text


def state_order(labels: Iterable[str]) -> list[str]:
    labels = list(labels)
    try:
        return sorted(labels, key=lambda s: (int(s), s))
    except ValueError:
        return sorted(labels)


def check_missing(missing: str) -> str:
    """``missing`` if it is one of ``MISSING_MODES``, else ValueError."""
    if missing not in MISSING_MODES:
        raise ParameterError(f"missing must be one of {', '.join(MISSING_MODES)}, got {missing!r}")
    return missing


def encode_columns(
    names: Sequence[str],
    columns: Sequence[np.ndarray],
    *,
    max_states: int = DEFAULT_MAX_STATES,
    source: str = "data",
    missing: str = "em",
) -> Dataset:
    """Encode string columns (equal lengths) into a :class:`Dataset`; an empty text is a
    missing cell, handled as ``missing`` says (module docstring; under ``"error"`` the
    reader has refused them already, with their line)."""
    check_missing(missing)
    if len(set(names)) != len(names):
        seen: set[str] = set()
        dup = next(n for n in names if n in seen or seen.add(n))
        raise DataError(f"{source}: duplicate column name {dup!r}")
    n_rows = len(columns[0]) if columns else 0
    holes = np.zeros((len(names), n_rows), dtype=bool)
    for v, col in enumerate(columns):
        holes[v] = np.asarray(col) == ""
    if holes.any():
        empty = np.flatnonzero(holes.all(axis=1))
        if len(empty):
            raise DataError(f"{source}: column {names[int(empty[0])]!r} has no observed value")
        if missing == "error":
            v, i = np.argwhere(holes)[0]
            raise DataError(f"{source}: row {int(i) + 1}: missing value in column {names[int(v)]!r}; "
                            "twbn needs complete data here")
        if missing == "complete-rows":
            keep = ~holes.any(axis=0)
            if not keep.any():
                raise DataError(f"{source}: no row without a missing value (missing='complete-rows' keeps none)")
            columns = [np.asarray(col)[keep] for col in columns]
            holes = holes[:, keep]
        elif missing == "state":
            columns = [np.where(h, _missing_label(np.asarray(col)[~h]), col) for col, h in zip(columns, holes)]
            holes[:] = False
        elif missing == "em":
            blank = np.flatnonzero(holes.all(axis=0))
            if len(blank):
                raise DataError(f"{source}: row {int(blank[0]) + 1} has no observed value")
    codes = np.empty((len(names), len(columns[0]) if columns else 0), dtype=np.int32)
    states = []
    for v, (name, col) in enumerate(zip(names, columns)):
        seen = ~holes[v]
        uniq, inverse = np.unique(np.asarray(col)[seen], return_inverse=True)
        canon = [canonical_state(t) for t in uniq.tolist()]
        order = state_order(set(canon))
        if len(order) > max_states:
            raise DataError(
                f"{source}: column {name!r} has {len(order)} states, more than the limit "
                f"of {max_states} (discretise it, drop it, or raise --max-states)"
            )
        # np.unique sorts lexicographically; remap to the numeric-aware order (and two
        # spellings of one state, "1" and "1.0", to one code)
        rank = {s: i for i, s in enumerate(order)}
        remap = np.array([rank[s] for s in canon], dtype=np.int32)
        codes[v] = -1
        codes[v, seen] = remap[inverse]
        states.append(tuple(order))
    _say_continuous(names, states, holes, source)
    return Dataset(tuple(names), tuple(states), np.ascontiguousarray(codes))


def looks_continuous(states: Sequence[str], observed: int) -> bool:
    """True for a column of numbers with more than ``CONTINUOUS_MIN_STATES`` distinct values
    and at least half as many as its ``observed`` cells.

    Examples
    --------
    >>> looks_continuous([f"{x / 7:.3f}" for x in range(40)], 40), looks_continuous(["1", "2", "3"], 3)
    (True, False)
    >>> looks_continuous([f"s{i}" for i in range(40)], 40)  # text: categories, however many
    False
    """
    if len(states) <= CONTINUOUS_MIN_STATES or 2 * len(states) < observed:
        return False
    return all(_DECIMAL.fullmatch(t) for t in states)


def _say_continuous(names: Sequence[str], states: Sequence[Sequence[str]], holes: np.ndarray, source: str) -> None:
    """One warning naming the columns that look continuous (:func:`looks_continuous`)."""
    import warnings

    rows = holes.shape[1] - holes.sum(axis=1)
    named = [f"{name!r} ({len(st)} values in {int(n)} rows)" for name, st, n in zip(names, states, rows)
             if looks_continuous(st, int(n))]
    if named:
        warnings.warn(f"{source}: column{'s' if len(named) > 1 else ''} {', '.join(named[:5])}"
                      + (f" and {len(named) - 5} more" if len(named) > 5 else "")
                      + f" look{'' if len(named) > 1 else 's'} continuous: learned as one state per value; "
                        "discretise it first (e.g. pandas.qcut), or refuse such columns with a lower --max-states "
                        "(max_states)", TwbnWarning, stacklevel=2)


def _missing_label(observed: np.ndarray) -> str:
    """The state name of a missing cell: ``missing``, or with underscores added where the
    column already has a state of that name."""
    label = MISSING_STATE
    taken = set(np.unique(observed).tolist())
    while label in taken:
        label += "_"
    return label


def missing_summary(data: Dataset) -> str:
    """One line on the missing cells: how many in all and per column (the most first).

    Examples
    --------
    >>> import numpy as np
    >>> ds = Dataset(("a", "b", "c"), (("0", "1"),) * 3, np.array([[0, -1, 1], [-1, -1, 0], [1, 0, 1]], np.int32))
    >>> missing_summary(ds)
    '3 of 9 cells missing (33.3 %): b 2, a 1'
    """
    counts = data.missing_counts
    total, cells = int(counts.sum()), data.n_variables * data.n_rows
    if not total:
        return "no cell missing"
    by = sorted(((int(c), name) for name, c in zip(data.names, counts.tolist()) if c), key=lambda t: (-t[0], t[1]))
    shown = ", ".join(f"{name} {c:,}" for c, name in by[:8]) + (f", … ({len(by) - 8} more columns)" if len(by) > 8 else "")
    return f"{total:,} of {cells:,} cells missing ({100 * total / cells:.1f} %): {shown}"


def read_as_recorded(data, recorded) -> Dataset:
    """``data`` read as a result read its own, so that a result learned with
    ``missing="state"`` is compared with its own data, not with that data read the
    default way.

    Parameters
    ----------
    data : path, DataFrame or Dataset
        What :func:`as_dataset` reads.
    recorded : dict or None
        The result's ``stats["data"]``: its ``missing`` mode (``"em"`` where it records
        none) and ``missing_token``. (Its ``discretize`` cuts are applied before, by
        ``twbn.scoring.discretize.recorded_rows``.)

    Returns
    -------
    Dataset

    Raises
    ------
    DataError, ParameterError
        As :func:`as_dataset`.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"a": ["0", "?", "1"], "b": ["1", "0", "0"]})
    >>> read_as_recorded(df, {"missing": "state"}).states[0], read_as_recorded(df, None).n_missing
    (('0', '1', 'missing'), 1)
    """
    recorded = recorded if isinstance(recorded, dict) else {}
    return as_dataset(data, missing=recorded.get("missing", "em"), missing_token=recorded.get("missing_token"))


def _open_text(path: Path):
    with open(path, "rb") as fh:
        magic = fh.read(2)
    # utf-8-sig: a byte-order mark (as spreadsheet programs write) is not part of a name
    if magic == b"\x1f\x8b":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8-sig", newline="")
    return open(path, encoding="utf-8-sig", newline="")


def read_csv(path: str | Path, *, max_states: int = DEFAULT_MAX_STATES, missing: str = "em",
             missing_token: str | None = None) -> Dataset:
    """Read a CSV (or gzip-compressed CSV) with a header of variable names.

    Parameters
    ----------
    path : str or Path
        The file; ``.gz`` files are decompressed.
    max_states : int
        The most states a column may have (a continuous column is refused, not split).
    missing : {"em", "state", "complete-rows", "error"}, default "em"
        What becomes of missing cells (module docstring): kept as code −1, a state named
        ``missing``, their rows dropped, or an error.
    missing_token : str, optional
        One more cell text that means missing (e.g. ``"-"``, ``"unknown"``), besides
        ``MISSING_TOKENS``.

    Returns
    -------
    Dataset
        The columns encoded as state indices, with their labels.

    Raises
    ------
    DataError
        Naming the line and column for ragged rows, a missing value (``missing="error"``),
        an empty file, duplicate names, a column over ``max_states`` states, a column with
        no observed value, or (``"em"``) a row with none. Line numbers are the file's (the
        header is line 1).

    Examples
    --------
    >>> import twbn
    >>> ds = read_csv(twbn.example_path("housing"))
    >>> ds.n_rows, ds.states[ds.names.index("CHAS")], ds.n_missing
    (506, ('0', '1'), 0)
    """
    check_missing(missing)
    header, columns = read_csv_columns(path, missing=missing, missing_token=missing_token)
    return encode_columns(header, columns, max_states=max_states, source=str(path), missing=missing)


def read_csv_columns(path: str | Path, *, missing: str = "error",
                     missing_token: str | None = None) -> tuple[list[str], list[np.ndarray]]:
    """The header and the cell texts (one string array per column) of a CSV, with the
    checks of :func:`read_csv` except the one on states; a missing cell is an error
    naming its line (``missing="error"``) or the empty text."""
    tokens = MISSING_TOKENS | ({missing_token.strip()} if missing_token is not None else set())
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: no such file")
    try:
        with _open_text(path) as fh:
            reader = csv.reader(fh)
            try:
                header = next(reader)
            except StopIteration:
                raise DataError(f"{path}: empty file (no header)") from None
            header = [h.strip() for h in header]
            if not header or header == [""]:
                raise DataError(f"{path}: empty header line")
            if len(header) == 1:
                for sep, what in (("\t", "tabs"), (";", "semicolons"), ("|", "bars")):
                    if sep in header[0]:
                        raise DataError(f"{path}: the header has one column and its name contains {what}: "
                                        "twbn reads comma-separated files (convert it, e.g. with pandas)")
            for j, h in enumerate(header):
                if h == "":
                    raise DataError(f"{path}: line 1: column {j + 1} has an empty name")
            width = len(header)
            rows, lines = [], []
            for row in reader:
                if not row:  # blank line
                    continue
                if len(row) != width:
                    raise DataError(
                        f"{path}: line {reader.line_num}: {len(row)} fields, expected {width} "
                        f"(the header has {width} columns)"
                    )
                rows.append(row)
                lines.append(reader.line_num)
    except (UnicodeDecodeError, gzip.BadGzipFile, EOFError, csv.Error, zlib.error) as exc:
        raise DataError(f"{path}: cannot read as CSV: {exc}") from None
    if not rows:
        raise DataError(f"{path}: no data rows after the header")
    # stripped and matched against the tokens a column at a time: cell by cell in Python,
    # munin's 5,000 x 1,041 cells took 2.5 of the command's first 5 s
    table = np.array(rows, dtype=str)
    columns, first = [], None  # first: (row, column) of the first missing cell in the file
    for j in range(width):
        column = np.char.strip(table[:, j])
        holes = np.isin(column, list(tokens))
        if holes.any():
            i = int(np.argmax(holes))
            if first is None or i < first[0]:
                first = (i, j)
            column[holes] = ""
        columns.append(column)
    if missing == "error" and first is not None:
        i, j = first
        raise DataError(f"{path}: line {lines[i]}: missing value {str(table[i, j]).strip()!r} in column "
                        f"{header[j]!r}; twbn needs complete data here (missing='error')")
    return header, columns


def _frame_texts(col) -> np.ndarray:
    """A DataFrame column's values as the state texts twbn uses (whole floats and bools
    as integers)."""
    values = col.to_numpy()
    if values.dtype.kind == "f" and np.all(np.mod(values, 1) == 0):
        values = values.astype(np.int64)
    if values.dtype.kind == "b":
        values = values.astype(np.int64)
    return np.array([str(x).strip() for x in values.tolist()], dtype=str)


def state_values(data, *, missing_token: str | None = None) -> dict[str, dict[str, object]]:
    """For each variable, its (canonical) state texts mapped to the values the user's data
    holds, so that a model fitted through twbn speaks in the data's own values and types.

    A DataFrame gives its cells' own values (``0`` stays the int 0, ``"yes"`` a str); a
    CSV gives what ``pandas.read_csv`` would: a bool where every cell of the column is one
    of its boolean texts, else an int where every state is one, else a float, else the
    text; a Dataset, whose texts are canonical already, the same without the bools.

    Examples
    --------
    >>> import pandas as pd
    >>> state_values(pd.DataFrame({"a": [True, False], "b": ["x", "y"]}))
    {'a': {'1': True, '0': False}, 'b': {'x': 'x', 'y': 'y'}}
    """
    if hasattr(data, "columns") and hasattr(data, "isna"):
        out = {}
        for label in data.columns:
            col = data[label]
            col = col[~col.isna().to_numpy()].infer_objects()  # the observed cells, typed as without holes
            seen: dict[str, object] = {}
            for text, value in zip(_frame_texts(col).tolist(), col.tolist()):
                seen.setdefault(canonical_state(text), value.item() if hasattr(value, "item") else value)
            out[str(label).strip()] = seen
        return out
    if isinstance(data, (str, Path)):
        header, columns = read_csv_columns(data, missing="em", missing_token=missing_token)
        return {name: _typed(np.unique(col[col != ""]).tolist()) for name, col in zip(header, columns)}
    ds = as_dataset(data)
    return {name: _typed(list(states)) for name, states in zip(ds.names, ds.states)}


def _typed(texts: list[str]) -> dict[str, object]:
    """Canonical text → typed value of a column's distinct texts, as pandas types a column."""
    kinds = [int, float, str]
    if texts and all(t in TRUE_TEXTS or t in FALSE_TEXTS for t in texts):
        kinds = [lambda t: t in TRUE_TEXTS]
    for kind in kinds:
        try:
            typed = [kind(t) for t in texts]
        except ValueError:
            continue
        out: dict[str, object] = {}
        for t, value in zip(texts, typed):
            out.setdefault(canonical_state(t), value)
        return out
    raise AssertionError("str takes every text")


def dataset_from_frame(frame, *, max_states: int = DEFAULT_MAX_STATES, source: str = "DataFrame",
                       missing: str = "em", missing_token: str | None = None) -> Dataset:
    """Encode a pandas DataFrame (one column per variable, discrete) as a Dataset.

    States become strings as in :func:`read_csv`: integer columns (and float columns
    whose values are all whole numbers) as their integers, everything else by ``str``.
    Missing cells (NaN, None, the texts of ``MISSING_TOKENS`` and ``missing_token``) are
    handled as ``missing`` says (:func:`read_csv`); under ``"error"`` the first is a
    DataError naming its column and row label.
    """
    check_missing(missing)
    if not hasattr(frame, "columns") or not hasattr(frame, "isna"):
        raise DataError(f"{source}: expected a pandas DataFrame, got {type(frame).__name__}")
    if frame.shape[0] == 0 or frame.shape[1] == 0:
        raise DataError(f"{source}: no data ({frame.shape[0]} rows, {frame.shape[1]} columns)")
    tokens = list(MISSING_TOKENS | ({missing_token.strip()} if missing_token is not None else set()))
    names = [str(c).strip() for c in frame.columns]
    for j, name in enumerate(names):
        if not name:
            raise DataError(f"{source}: column {j + 1} has an empty name")
    columns = []
    for name, label in zip(names, frame.columns):
        col = frame[label]
        absent = col.isna().to_numpy().copy()
        # the observed cells as the column would be without its holes (a NaN turns a bool
        # column into objects and an int column into floats: True must still read "1"), and
        # typed so even where none is left (rows with holes dropped leave an object column
        # of bools), as state_values types them
        texts = _frame_texts(col[~absent].infer_objects())
        full = np.full(len(col), "", dtype=object)
        full[~absent] = texts
        full = full.astype(str)
        absent |= np.isin(full, tokens)
        if absent.any() and missing == "error":
            raise DataError(f"{source}: missing value in column {name!r} at row {col.index[absent.argmax()]!r}; "
                            "twbn needs complete data here (missing='error')")
        full[absent] = ""
        columns.append(full)
    return encode_columns(names, columns, max_states=max_states, source=source, missing=missing)


def as_dataset(data, *, max_states: int = DEFAULT_MAX_STATES, missing: str = "em",
               missing_token: str | None = None) -> Dataset:
    """A Dataset from a Dataset, a CSV path (str or Path) or a pandas DataFrame; missing
    cells as ``missing`` says (:func:`read_csv`; a Dataset's own −1 codes are kept under
    ``"em"``)."""
    check_missing(missing)
    if isinstance(data, Dataset):
        if data.n_missing and missing != "em":
            return _resolve_missing(data, missing)
        return data
    if isinstance(data, (str, Path)):
        return read_csv(data, max_states=max_states, missing=missing, missing_token=missing_token)
    return dataset_from_frame(data, max_states=max_states, missing=missing, missing_token=missing_token)


def _resolve_missing(data: Dataset, missing: str) -> Dataset:
    """A Dataset with missing cells (−1) under another mode than ``"em"``."""
    columns = [np.where(codes < 0, "", np.asarray(states, dtype=object)[np.maximum(codes, 0)]).astype(str)
               for codes, states in zip(data.data, data.states)]
    return encode_columns(list(data.names), columns, max_states=max(len(s) for s in data.states) + 1,
                          source="data", missing=missing)
