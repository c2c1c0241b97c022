"""Data with categorical and continuous columns, for the local-structure scores.

A column is *continuous* when every cell parses as a number and it has more than
``max_categorical`` distinct values, else *categorical* (states as in ``twbn.scoring.data``:
integers ordered numerically). ``continuous=`` / ``categorical=`` name columns whose
type is forced. A continuous column keeps its float values; its range [min, max] over
the data is the interval that PCART's dyadic splits halve.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import numpy as np

from twbn.scoring.data import DEFAULT_MAX_STATES, DataError, read_csv_columns, state_order

__all__ = ["MixedData", "from_columns", "read_mixed_csv"]

CATEGORICAL, CONTINUOUS = "categorical", "continuous"
#: A numeric column with at most this many distinct values is taken as categorical.
DEFAULT_MAX_CATEGORICAL = 10


@dataclass(frozen=True)
class MixedData:
    names: tuple[str, ...]
    kinds: tuple[str, ...]
    #: categorical: int64 codes 0..r−1; continuous: float64 values
    columns: tuple[np.ndarray, ...]
    #: categorical: state labels; continuous: ()
    states: tuple[tuple[str, ...], ...]

    @property
    def n_variables(self) -> int:
        return len(self.names)

    @property
    def n_rows(self) -> int:
        return int(self.columns[0].shape[0]) if self.columns else 0

    def arity(self, v: int) -> int:
        return len(self.states[v])

    def subset_rows(self, rows: np.ndarray) -> "MixedData":
        return MixedData(self.names, self.kinds, tuple(c[rows] for c in self.columns), self.states)


def from_columns(names: list[str], columns: list[np.ndarray], *, continuous: Iterable[str] = (),
                 categorical: Iterable[str] = (), max_categorical: int = DEFAULT_MAX_CATEGORICAL,
                 max_states: int = DEFAULT_MAX_STATES, source: str = "data") -> MixedData:
    """Type and encode string columns (see the module docstring)."""
    if len(set(names)) != len(names):
        raise DataError(f"{source}: duplicate column names")
    cont, cat = set(continuous), set(categorical)
    for nm in (cont | cat) - set(names):
        raise DataError(f"{source}: no column named {nm!r}")
    if cont & cat:
        raise DataError(f"{source}: {sorted(cont & cat)[0]!r} is forced both continuous and categorical")
    kinds, cols, states = [], [], []
    for name, col in zip(names, columns):
        try:
            values = col.astype(np.float64)
            numeric = bool(np.all(np.isfinite(values)))
        except ValueError:
            values, numeric = None, False
        if name in cont:
            if not numeric:
                raise DataError(f"{source}: column {name!r} is forced continuous but is not all finite numbers")
            kind = CONTINUOUS
        elif name in cat:
            kind = CATEGORICAL
        else:
            kind = CONTINUOUS if numeric and len(np.unique(values)) > max_categorical else CATEGORICAL
        if kind == CONTINUOUS:
            kinds.append(kind)
            cols.append(values)
            states.append(())
            continue
        uniq, inverse = np.unique(col, return_inverse=True)
        order = state_order(uniq.tolist())
        if len(order) > max_states:
            raise DataError(f"{source}: categorical column {name!r} has {len(order)} states (limit {max_states}); "
                            "declare it continuous or raise --max-states")
        rank = {s: i for i, s in enumerate(order)}
        remap = np.array([rank[s] for s in uniq.tolist()], dtype=np.int64)
        kinds.append(kind)
        cols.append(remap[inverse])
        states.append(tuple(order))
    return MixedData(tuple(names), tuple(kinds), tuple(cols), tuple(states))


def read_mixed_csv(path: str | Path, **kw) -> MixedData:
    """A CSV (or CSV.gz) with a header, typed per column (keywords of ``from_columns``)."""
    header, columns = read_csv_columns(path)
    return from_columns(header, columns, source=str(path), **kw)
