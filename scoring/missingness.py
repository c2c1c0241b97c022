"""Cells removed from complete data on purpose: the mechanisms of experiments on missing
data (Rubin 1976; Little & Rubin, "Statistical Analysis with Missing Data").

- ``"mcar"`` (missing completely at random): each cell is removed with probability f,
  whatever the data say.
- ``"mar"`` (missing at random): the even-numbered columns (0, 2, …) stay complete; a cell
  of an odd column j is removed with probability 1.5·2f where column j − 1 is in its
  first state (code 0), else 0.5·2f, at most 0.95. Whether a cell is missing depends on
  an observed cell only, so likelihood-based methods (EM) stay consistent, and dropping
  rows or filling the mode does not.

In a harness config: ``missing = { fraction = 0.2, mechanism = "mcar", seed = 0 }``, applied
to the training rows of each fold only (the test rows stay complete).
"""

from __future__ import annotations

import numpy as np

from twbn.scoring.data import Dataset
from twbn.scoring.errors import ParameterError

__all__ = ["MECHANISMS", "remove_cells"]

MECHANISMS = ("mcar", "mar")


def remove_cells(data: Dataset, fraction: float, mechanism: str = "mcar", seed: int | None = 0) -> Dataset:
    """``data`` with cells removed (code −1) by ``mechanism`` (module docstring).

    Parameters
    ----------
    data : Dataset
        The data (cells missing already stay so).
    fraction : float
        In (0, 1): the share of cells removed (MCAR), or its target (MAR: about that
        share of all cells, from the odd columns).
    mechanism : {"mcar", "mar"}
    seed : int, optional

    Returns
    -------
    Dataset
        The same names and states, −1 where a cell was removed. A column left with no
        observed cell gets one back (its first row's), so that every column can be learned.

    Examples
    --------
    >>> import numpy as np
    >>> ds = Dataset(("a", "b"), (("0", "1"), ("0", "1")), np.zeros((2, 1000), np.int32))
    >>> gappy = remove_cells(ds, 0.2, "mcar", seed=0)
    >>> bool(abs((gappy.data < 0).mean() - 0.2) < 0.03)
    True
    >>> int((remove_cells(ds, 0.2, "mar", seed=0).data[0] < 0).sum())  # column 0 drives column 1
    0
    """
    if not 0 < fraction < 1:
        raise ParameterError(f"fraction must be in (0, 1), got {fraction!r}")
    if mechanism not in MECHANISMS:
        raise ParameterError(f"mechanism must be one of {', '.join(MECHANISMS)}, got {mechanism!r}")
    rng = np.random.default_rng(seed)  # cells missing already stay missing
    codes = data.data.copy()
    if mechanism == "mcar":
        gone = rng.random(codes.shape) < fraction
    else:
        gone = np.zeros(codes.shape, dtype=bool)
        for j in range(1, codes.shape[0], 2):
            p = np.where(codes[j - 1] == 0, 1.5, 0.5) * 2 * fraction
            gone[j] = rng.random(codes.shape[1]) < np.minimum(p, 0.95)
    codes[gone] = -1
    for v in np.flatnonzero((codes < 0).all(axis=1)):
        codes[v, 0] = data.data[v, 0]
    return Dataset(data.names, data.states, codes)
