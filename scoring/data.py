"""Complete discrete data: reading CSV / CSV.gz and encoding states per column.

Every column becomes integer codes ``0 … r−1`` where ``r`` is the column's arity (the
number of distinct states observed, or declared). States are kept as strings; integer
states are ordered numerically, others lexicographically, so codes are reproducible.
"""

from __future__ import annotations

import csv
import gzip
import io
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from twbn.scoring.errors import TwbnError

__all__ = ["DataError", "Dataset", "state_order", "encode_columns", "read_csv", "read_csv_columns",
           "state_values", "dataset_from_frame", "as_dataset"]

#: Cell texts that mean "missing". Missing values are an error: the scores assume
#: complete data, and silently treating "NA" as a state would change every score. Not
#: "None": it is a state of child, hailfinder and insurance (bnlearn), so data sampled
#: from them would be refused (a DataFrame's None object still counts as missing).
MISSING_TOKENS = frozenset({"", "?", "NA", "N/A", "NaN", "nan", "null", "NULL"})

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
    def n_rows(self) -> int:
        return int(self.data.shape[1])

    @property
    def arities(self) -> np.ndarray:
        return np.array([len(s) for s in self.states], dtype=np.int64)

    def subset_rows(self, rows: np.ndarray) -> "Dataset":
        """The same variables and state labels on a subset of rows (e.g. a fold)."""
        return Dataset(self.names, self.states, np.ascontiguousarray(self.data[:, rows]))


def state_order(labels: Iterable[str]) -> list[str]:
    labels = list(labels)
    try:
        return sorted(labels, key=lambda s: (int(s), s))
    except ValueError:
        return sorted(labels)


def encode_columns(
    names: Sequence[str],
    columns: Sequence[np.ndarray],
    *,
    max_states: int = DEFAULT_MAX_STATES,
    source: str = "data",
) -> Dataset:
    """Encode string columns (equal lengths) into a :class:`Dataset`."""
    if len(set(names)) != len(names):
        seen: set[str] = set()
        dup = next(n for n in names if n in seen or seen.add(n))
        raise DataError(f"{source}: duplicate column name {dup!r}")
    codes = np.empty((len(names), len(columns[0]) if columns else 0), dtype=np.int32)
    states = []
    for v, (name, col) in enumerate(zip(names, columns)):
        uniq, inverse = np.unique(col, return_inverse=True)
        order = state_order(uniq.tolist())
        if len(order) > max_states:
            raise DataError(
                f"{source}: column {name!r} has {len(order)} states, more than the limit "
                f"of {max_states} (discretise it, drop it, or raise --max-states)"
            )
        # np.unique sorts lexicographically; remap to the numeric-aware order.
        rank = {s: i for i, s in enumerate(order)}
        remap = np.array([rank[s] for s in uniq.tolist()], dtype=np.int32)
        codes[v] = remap[inverse]
        states.append(tuple(order))
    return Dataset(tuple(names), tuple(states), np.ascontiguousarray(codes))


def _open_text(path: Path):
    with open(path, "rb") as fh:
        magic = fh.read(2)
    # utf-8-sig: a byte-order mark (as spreadsheet programs write) is not part of a name
    if magic == b"\x1f\x8b":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8-sig", newline="")
    return open(path, encoding="utf-8-sig", newline="")


def read_csv(path: str | Path, *, max_states: int = DEFAULT_MAX_STATES) -> Dataset:
    """Read a CSV (or gzip-compressed CSV) with a header of variable names.

    Parameters
    ----------
    path : str or Path
        The file; ``.gz`` files are decompressed.
    max_states : int
        The most states a column may have (a continuous column is refused, not split).

    Returns
    -------
    Dataset
        The columns encoded as state indices, with their labels.

    Raises
    ------
    DataError
        Naming the line and column for ragged rows, missing values, an empty file,
        duplicate names, or a column over ``max_states`` states. Line numbers are the
        file's (the header is line 1).

    Examples
    --------
    >>> import twbn
    >>> ds = read_csv(twbn.example_path("housing"))
    >>> ds.n_rows, ds.states[ds.names.index("CHAS")]
    (506, ('0', '1'))
    """
    header, columns = read_csv_columns(path)
    return encode_columns(header, columns, max_states=max_states, source=str(path))


def read_csv_columns(path: str | Path) -> tuple[list[str], list[np.ndarray]]:
    """The header and the cell texts (one string array per column) of a complete CSV,
    with the checks of :func:`read_csv` except the one on states."""
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
            rows = []
            for row in reader:
                line = reader.line_num
                if not row:  # blank line
                    continue
                if len(row) != width:
                    raise DataError(
                        f"{path}: line {line}: {len(row)} fields, expected {width} "
                        f"(the header has {width} columns)"
                    )
                for j, cell in enumerate(row):
                    cell = cell.strip()
                    if cell in MISSING_TOKENS:
                        raise DataError(
                            f"{path}: line {line}: missing value {cell!r} in column "
                            f"{header[j]!r}; twbn needs complete data"
                        )
                    row[j] = cell
                rows.append(row)
    except (UnicodeDecodeError, gzip.BadGzipFile, EOFError, csv.Error, zlib.error) as exc:
        raise DataError(f"{path}: cannot read as CSV: {exc}") from None
    if not rows:
        raise DataError(f"{path}: no data rows after the header")
    table = np.array(rows, dtype=object)
    return header, [table[:, j].astype(str) for j in range(width)]


def _frame_texts(col) -> np.ndarray:
    """A DataFrame column's values as the state texts twbn uses (whole floats and bools
    as integers)."""
    values = col.to_numpy()
    if values.dtype.kind == "f" and np.all(np.mod(values, 1) == 0):
        values = values.astype(np.int64)
    if values.dtype.kind == "b":
        values = values.astype(np.int64)
    return np.array([str(x).strip() for x in values.tolist()], dtype=str)


def state_values(data) -> dict[str, dict[str, object]]:
    """For each variable, its state texts mapped to the values the user's data holds, so
    that a model fitted through twbn speaks in the data's own values and types.

    A DataFrame gives its cells' own values (``0`` stays the int 0, ``"yes"`` a str); a
    CSV or Dataset, whose cells are text, gives what ``pandas.read_csv`` would: an int
    where every state of the column is one, else a float where every state is one, else
    the text.
    """
    if hasattr(data, "columns") and hasattr(data, "isna"):
        out = {}
        for label in data.columns:
            col = data[label]
            seen: dict[str, object] = {}
            for text, value in zip(_frame_texts(col).tolist(), col.tolist()):
                seen.setdefault(text, value.item() if hasattr(value, "item") else value)
            out[str(label).strip()] = seen
        return out
    ds = as_dataset(data)
    out = {}
    for name, states in zip(ds.names, ds.states):
        for kind in (int, float):
            try:
                out[name] = {t: kind(t) for t in states}
                break
            except ValueError:
                continue
        else:
            out[name] = {t: t for t in states}
    return out


def dataset_from_frame(frame, *, max_states: int = DEFAULT_MAX_STATES, source: str = "DataFrame") -> Dataset:
    """Encode a pandas DataFrame (one column per variable, complete, discrete) as a Dataset.

    States become strings as in :func:`read_csv`: integer columns (and float columns
    whose values are all whole numbers) as their integers, everything else by ``str``.
    Missing cells (NaN, None, the texts of ``MISSING_TOKENS``) raise :class:`DataError`
    naming the column and row label.
    """
    if not hasattr(frame, "columns") or not hasattr(frame, "isna"):
        raise DataError(f"{source}: expected a pandas DataFrame, got {type(frame).__name__}")
    if frame.shape[0] == 0 or frame.shape[1] == 0:
        raise DataError(f"{source}: no data ({frame.shape[0]} rows, {frame.shape[1]} columns)")
    names = [str(c).strip() for c in frame.columns]
    for j, name in enumerate(names):
        if not name:
            raise DataError(f"{source}: column {j + 1} has an empty name")
    columns = []
    for name, label in zip(names, frame.columns):
        col = frame[label]
        missing = col.isna().to_numpy()
        if missing.any():
            raise DataError(f"{source}: missing value in column {name!r} at row {col.index[missing.argmax()]!r}; "
                            "twbn needs complete data")
        texts = _frame_texts(col)
        bad = np.isin(texts, list(MISSING_TOKENS))
        if bad.any():
            i = int(bad.argmax())
            raise DataError(f"{source}: missing value {texts[i]!r} in column {name!r} at row {col.index[i]!r}; "
                            "twbn needs complete data")
        columns.append(texts)
    return encode_columns(names, columns, max_states=max_states, source=source)


def as_dataset(data, *, max_states: int = DEFAULT_MAX_STATES) -> Dataset:
    """A Dataset from a Dataset, a CSV path (str or Path) or a pandas DataFrame."""
    if isinstance(data, Dataset):
        return data
    if isinstance(data, (str, Path)):
        return read_csv(data, max_states=max_states)
    return dataset_from_frame(data, max_states=max_states)
