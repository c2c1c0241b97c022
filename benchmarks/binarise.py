"""Binarising a discretised data set the way the DP paper's experiments need (binary
variables): each column is cut at the most balanced split of its ordered states (the
cut whose lower part is closest to half the rows; ties take the lower cut)."""

from __future__ import annotations

import numpy as np

from twbn.scoring.data import Dataset


def binarise(ds: Dataset) -> Dataset:
    cols, states = [], []
    for v in range(ds.n_variables):
        col = ds.data[v]
        r = len(ds.states[v])
        if r <= 2:
            cols.append(col.copy())
            states.append(ds.states[v] if r == 2 else ds.states[v] + ("(none)",))
            continue
        frac = np.cumsum(np.bincount(col, minlength=r)) / len(col)
        cut = int(np.argmin(np.abs(frac[:-1] - 0.5)))  # states 0..cut -> 0
        cols.append((col > cut).astype(np.int32))
        states.append((f"<={ds.states[v][cut]}", f">{ds.states[v][cut]}"))
    return Dataset(ds.names, tuple(states), np.ascontiguousarray(np.stack(cols)))
