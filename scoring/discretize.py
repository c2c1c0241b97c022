"""Continuous and many-valued columns cut into states, once, and the same cuts applied
wherever the model meets rows again.

Three ways to cut a column into B intervals:

- ``quantile:B`` — equal-frequency bins; ``uniform:B`` — equal-width bins, both by
  scikit-learn's ``KBinsDiscretizer`` (bins narrower than 1e-8 merged away, as it does);
- ``information:B`` (default B = 3) — Hartemink's information-preserving discretization
  (A. J. Hartemink, *Principled computational methods for the validation and discovery of
  genetic regulatory networks*, PhD thesis, MIT, 2001, Ch. 3; bnlearn's
  ``discretize(method = "hartemink")``): every such column starts from
  ``INITIAL_BINS`` quantile bins, and, one column at a time, the two adjacent bins whose
  merging keeps the most of the column's mutual information with all the others (at
  their current cuts) are merged, until B remain.

A spec names the method for every column that needs it (``"quantile:4"``: each numeric
column with more distinct values than ``max(B, CONTINUOUS_MIN_STATES)``) or for named
columns (``"age=quantile:4,income=information"``; a named column is always cut). The cut
points are the learned network's (``stats["data"]["discretize"]``): ``twbn evaluate``,
``impute``, ``check``, ``Solution.to_pgmpy``/``log_likelihood``/``impute`` apply them to
raw rows, so a model learned from a raw table answers on raw rows. A value beyond the
training range falls in the first or last bin; missing cells stay missing.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from twbn.scoring.data import CONTINUOUS_MIN_STATES, MISSING_TOKENS, DataError
from twbn.scoring.errors import ParameterError

__all__ = ["Discretizer", "parse_spec", "fit_discretizer", "recorded_rows", "METHODS", "INITIAL_BINS"]

METHODS = ("quantile", "uniform", "information")

#: The bins each column starts from under ``information`` (bnlearn's ``ibreaks`` default is
#: breaks + … ; 20 keeps every starting bin at 5 % of the rows).
INITIAL_BINS = 20

#: B where a spec names none: ``information``'s three (bnlearn's ``breaks`` default), and the
#: same for the others.
DEFAULT_BINS = 3


@dataclass(frozen=True)
class Discretizer:
    """Cut points by column: ``cuts[c]`` increasing; value x is in bin ``#{cuts <= x}``.

    Examples
    --------
    >>> import pandas as pd
    >>> d = Discretizer({"a": (1.5, 3.0)}, {"a": "quantile:3"})
    >>> cut = d.apply(pd.DataFrame({"a": [0.2, 1.5, None, 9], "b": ["x", "y", "z", "x"]}))["a"]
    >>> cut[[0, 1, 3]].tolist(), bool(cut.isna()[2])  # a missing cell stays missing
    (['<1.5', '[1.5, 3)', '>=3'], True)
    """

    cuts: dict
    methods: dict

    def labels(self, column: str) -> list[str]:
        """The state names of ``column``'s bins, in order."""
        return _labels(self.cuts[column])

    def apply(self, data, *, missing_token: str | None = None):
        """``data`` (a DataFrame or CSV path) as a DataFrame whose cut columns hold their
        bins' names; the other columns as read (a cut column ``data`` lacks is skipped, one
        that holds bin names already is kept).
        Raises DataError for a cell that is not a number."""
        frame = _frame(data)
        out = frame.copy()
        for column, cuts in self.cuts.items():
            if column not in frame.columns:
                continue  # rows of some columns (a query's evidence); who needs every column says so
            if set(frame[column].dropna().tolist()) <= set(_labels(cuts)):
                continue  # already cut (impute's output, rows cut by hand): as they are
            x, observed = _numbers(frame[column], column, missing_token)
            bins = np.searchsorted(np.asarray(cuts, float), x[observed], side="right")
            names = np.array(_labels(cuts), dtype=object)
            col = np.full(len(x), None, dtype=object)
            col[observed] = names[bins]
            out[column] = col
        return out

    def to_json(self) -> dict:
        return {c: {"method": self.methods[c], "cuts": [float(x) for x in self.cuts[c]]} for c in self.cuts}

    @classmethod
    def from_json(cls, record: dict) -> "Discretizer":
        return cls({c: tuple(v["cuts"]) for c, v in record.items()}, {c: v["method"] for c, v in record.items()})


def parse_spec(spec) -> dict:
    """A spec (text or a list of texts) as ``{column or None: (method, bins)}``.

    Examples
    --------
    >>> parse_spec("quantile:4"), parse_spec(["age=uniform:5", "income=information"])
    ({None: ('quantile', 4)}, {'age': ('uniform', 5), 'income': ('information', 3)})
    >>> parse_spec("median:4")
    Traceback (most recent call last):
    ...
    twbn.scoring.errors.ParameterError: discretize: unknown method 'median' in 'median:4' (quantile, uniform, information)
    """
    parts = [spec] if isinstance(spec, str) else list(spec)
    out: dict = {}
    for text in (p.strip() for part in parts for p in str(part).split(",") if p.strip()):
        column, _, how = text.rpartition("=")
        method, _, bins = how.partition(":")
        if method not in METHODS:
            raise ParameterError(f"discretize: unknown method {method!r} in {text!r} ({', '.join(METHODS)})")
        try:
            b = int(bins) if bins else DEFAULT_BINS
        except ValueError:
            raise ParameterError(f"discretize: bins must be a whole number, not {bins!r} in {text!r}") from None
        if b < 2:
            raise ParameterError(f"discretize: at least 2 bins, not {b} in {text!r}")
        out[column.strip() or None] = (method, b)
    if not out:
        raise ParameterError("discretize: an empty spec")
    return out


def fit_discretizer(data, spec, *, missing_token: str | None = None) -> Discretizer:
    """The cuts ``spec`` (:func:`parse_spec`) gives on ``data`` (a DataFrame or CSV path).

    Raises
    ------
    DataError
        A column that cannot be cut, by name: all its cells missing, all equal, a cell
        that is not a number, or a named column that is not in the data.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"a": range(100), "b": ["x", "y"] * 50})
    >>> fit_discretizer(df, "quantile:4").cuts
    {'a': (24.5, 49.5, 74.5)}
    >>> fit_discretizer(pd.DataFrame({"a": [1.0] * 30}), "a=uniform:3")
    Traceback (most recent call last):
    ...
    twbn.scoring.data.DataError: column 'a' cannot be discretized: all its 30 values are equal
    """
    frame = _frame(data)
    wanted = parse_spec(spec)
    plan = _plan(frame, wanted, missing_token)
    cuts = {c: _simple_cuts(x, method, b, c) for c, (x, method, b) in plan.items() if method != "information"}
    chosen = {c: plan[c] for c in plan if plan[c][1] == "information"}
    if chosen:
        cuts.update(_information_cuts(frame, chosen, cuts, missing_token))
    ordered = {c: cuts[c] for c in frame.columns if c in cuts}
    return Discretizer(ordered, {c: f"{plan[c][1]}:{plan[c][2]}" for c in ordered})


def recorded_rows(data, recorded: dict | None, *, missing_token: str | None = None):
    """``data`` with the cuts a result records (``stats["data"]["discretize"]``) applied:
    raw rows as the network's states. Unchanged where nothing was cut, or where ``data`` is
    already a Dataset (encoded states)."""
    from twbn.scoring.data import Dataset

    cuts = (recorded or {}).get("discretize") if isinstance(recorded, dict) else None
    if not cuts or isinstance(data, Dataset):
        return data
    token = missing_token if missing_token is not None else recorded.get("missing_token")
    return Discretizer.from_json(cuts).apply(data, missing_token=token)


def _frame(data):
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, (str, Path)):
        try:
            return pd.read_csv(data, na_values=sorted(MISSING_TOKENS - {""}), keep_default_na=True)
        except (OSError, ValueError) as exc:
            raise DataError(f"{data}: cannot read it as CSV ({exc})") from None
    raise ParameterError(f"discretize takes a DataFrame or a CSV path, not {type(data).__name__}")


def _numbers(col, column: str, missing_token: str | None) -> tuple[np.ndarray, np.ndarray]:
    """A column's values as floats and which cells are observed; DataError for text."""
    import pandas as pd

    texts = col.astype(object)
    missing = col.isna().to_numpy() | np.array([isinstance(t, str) and (t.strip() in MISSING_TOKENS or t == missing_token)
                                                for t in texts], dtype=bool)
    x = pd.to_numeric(col.where(~missing), errors="coerce").to_numpy(dtype=float)
    bad = np.flatnonzero(~missing & np.isnan(x))
    if len(bad):
        raise DataError(f"column {column!r} cannot be discretized: row {int(bad[0]) + 1} holds "
                        f"{texts.iloc[int(bad[0])]!r}, not a number")
    return x, ~missing


def _plan(frame, wanted: dict, missing_token) -> dict:
    """``{column: (values, method, bins)}`` for every column the spec cuts."""
    plan = {}
    for column in wanted:
        if column is not None and column not in frame.columns:
            raise DataError(f"discretize: no column {column!r} in the data")
    for column in frame.columns:
        if column in wanted:
            method, b = wanted[column]
        elif None in wanted and _numeric_and_many(frame[column], max(wanted[None][1], CONTINUOUS_MIN_STATES)):
            method, b = wanted[None]
        else:
            continue
        x, observed = _numbers(frame[column], column, missing_token)
        plan[column] = (x[observed], method, b)
    return plan


def _numeric_and_many(col, more_than: int) -> bool:
    import pandas as pd

    values = pd.to_numeric(col.dropna(), errors="coerce")
    return not values.isna().any() and values.nunique() > more_than


def _simple_cuts(x: np.ndarray, method: str, bins: int, column: str) -> tuple[float, ...]:
    """Quantile or uniform cuts by KBinsDiscretizer."""
    from sklearn.preprocessing import KBinsDiscretizer

    _cuttable(x, column)
    kb = KBinsDiscretizer(n_bins=bins, encode="ordinal", strategy=method, subsample=None,
                          **({"quantile_method": "averaged_inverted_cdf"} if method == "quantile" else {}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # narrow bins merged away: the cuts say so
        kb.fit(x.reshape(-1, 1))
    return tuple(float(c) for c in kb.bin_edges_[0][1:-1])


def _cuttable(x: np.ndarray, column: str) -> None:
    if len(x) == 0:
        raise DataError(f"column {column!r} cannot be discretized: all its cells are missing")
    if np.all(x == x[0]):
        raise DataError(f"column {column!r} cannot be discretized: all its {len(x)} values are equal")


def _information_cuts(frame, chosen: dict, fixed: dict, missing_token) -> dict:
    """Hartemink's merges (see the module's docstring) for the ``chosen`` columns."""
    cuts = {c: list(_simple_cuts(x, "quantile", INITIAL_BINS, c)) for c, (x, _, _) in chosen.items()}
    values = {c: _numbers(frame[c], c, missing_token) for c in cuts}  # parsed once, re-binned at each merge
    codes = {c: _codes(frame[c], fixed.get(c), missing_token) for c in frame.columns if c not in cuts}
    for c in cuts:
        codes[c] = _binned(*values[c], cuts[c])
    for c, (_, _, bins) in chosen.items():
        while len(cuts[c]) + 1 > bins:
            others = [codes[d] for d in codes if d != c]
            drop = _best_merge(codes[c], len(cuts[c]) + 1, others)
            del cuts[c][drop]
            codes[c] = _binned(*values[c], cuts[c])
    return {c: tuple(v) for c, v in cuts.items()}


def _binned(x: np.ndarray, observed: np.ndarray, cuts) -> np.ndarray:
    """Bin codes of the values ``x`` under ``cuts``, −1 where not ``observed``."""
    out = np.full(len(x), -1, dtype=np.int64)
    out[observed] = np.searchsorted(np.asarray(cuts, float), x[observed], side="right")
    return out


def _codes(col, cuts, missing_token) -> np.ndarray:
    """A column as integer codes, −1 where missing: its bins under ``cuts``, or its
    distinct values (a column that is not cut)."""
    import pandas as pd

    if cuts is not None:
        return _binned(*_numbers(col, str(col.name), missing_token), cuts)
    codes, _ = pd.factorize(col)
    return codes.astype(np.int64)


def _best_merge(x: np.ndarray, bins: int, others: list[np.ndarray]) -> int:
    """The cut whose removal (merging bins i and i+1) keeps the largest sum of mutual
    information between ``x`` and each of ``others``."""
    tables = []
    for y in others:
        both = (x >= 0) & (y >= 0)
        r = int(y.max()) + 1 if both.any() else 1
        tables.append(np.bincount(x[both] * r + y[both], minlength=bins * r).reshape(bins, r).astype(float))
    best, keep = 0, -math.inf
    for i in range(bins - 1):
        total = 0.0
        for t in tables:
            merged = np.vstack([t[:i], t[i:i + 2].sum(axis=0, keepdims=True), t[i + 2:]])
            total += _mutual_information(merged)
        if total > keep:
            best, keep = i, total
    return best


def _mutual_information(table: np.ndarray) -> float:
    n = table.sum()
    if n == 0:
        return 0.0
    p = table / n
    px, py = p.sum(axis=1, keepdims=True), p.sum(axis=0, keepdims=True)
    nz = p > 0
    return float((p[nz] * np.log(p[nz] / (px @ py)[nz])).sum())


def _labels(cuts) -> list[str]:
    """Bin names: ``<c1``, ``[c1, c2)``, …, ``>=cB``, with as many digits as keep them apart."""
    if not cuts:
        return ["all"]
    for digits in range(4, 18):
        text = [f"{c:.{digits}g}" for c in cuts]
        if len(set(text)) == len(text):
            break
    return [f"<{text[0]}"] + [f"[{a}, {b})" for a, b in zip(text, text[1:])] + [f">={text[-1]}"]
