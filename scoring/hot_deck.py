"""Nearest-neighbour hot-deck imputation: each missing cell takes the value of the most
similar row that has it observed.

Structural EM climbs from its start and stops at the first network whose own completions
favour it: completions drawn from a network make the variables it leaves unlinked look
independent, so the arcs it lacks are weakened in the data it re-learns from. A start
from the network without arcs ends where the first M-steps left it. A hot-deck fill keeps
the dependencies among a row's cells that the donor row has, whatever the network
(Andridge & Little, "A review of hot deck imputation for survey non-response",
International Statistical Review 78, 2010; the k-nearest-neighbour donor of Troyanskaya
et al., Bioinformatics 17, 2001). Learned on the filled data, the start already has the
arcs that EM from no arcs does not find: on plants (DEBD, 5,000 rows, 20 % MCAR, k = 5,
60 s) EM from localsearch's network on the fill ended 1.52 % behind the complete data's
network in held-out log-likelihood, from no arcs 2.60 % (``docs/missing.md``).

The distance between two rows is the share of their co-observed cells that differ. Each
row's ``neighbours`` nearest donors are ranked once; a missing cell takes the value of the
nearest of them that has it, or the column's mode where none has.
"""

from __future__ import annotations

import numpy as np
from twbn.scoring.errors import ParameterError

__all__ = ["hot_deck"]

#: Distances are computed for this many (row, donor, state) products at once.
_BLOCK = 1 << 26


def hot_deck(codes: np.ndarray, arities, *, neighbours: int = 30, donors: int = 5000,
             seed: int | None = 0) -> np.ndarray:
    """The data with every missing cell filled from the nearest rows that have it.

    Parameters
    ----------
    codes : ndarray of int, shape (n_variables, n_rows)
        State codes, −1 where a cell is missing.
    arities : sequence of int
        The number of states of each variable.
    neighbours : int, default 30
        The donors ranked for each row.
    donors : int, default 5000
        The most rows that may donate (drawn at random, by ``seed``, from a larger data
        set), so that the time grows with the rows, not with their square.
    seed : int, optional
        The draw of the donors.

    Returns
    -------
    ndarray of int32, shape (n_variables, n_rows)
        Observed cells as they were; each missing cell the value of the nearest donor (by
        the share of co-observed cells that differ; ties to the lower row) that has the
        cell observed, else the column's most frequent observed state.

    Raises
    ------
    ParameterError
        Codes outside their arities, a column with no observed cell, ``neighbours`` or
        ``donors`` below 1.

    Examples
    --------
    Rows 0 and 1 agree on the first column, and row 1 gives row 0 its second cell:

    >>> import numpy as np
    >>> codes = np.array([[0, 0, 1, 1], [-1, 1, 0, 0]])
    >>> hot_deck(codes, [2, 2], neighbours=2).tolist()
    [[0, 0, 1, 1], [1, 1, 0, 0]]
    """
    codes = np.asarray(codes)
    arities = np.asarray(arities, np.int64)
    if codes.ndim != 2 or len(arities) != codes.shape[0]:
        raise ParameterError(f"codes must be (variables, rows) with one arity a variable, got {codes.shape} "
                         f"and {len(arities)} arities")
    for name, value in (("neighbours", neighbours), ("donors", donors)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ParameterError(f"{name} must be an integer >= 1, got {value!r}")
    n, rows = codes.shape
    if ((codes < -1) | (codes >= arities[:, None])).any():
        raise ParameterError("codes must be −1 (missing) or a state below the variable's arity")
    seen = codes >= 0
    if rows and not seen.any(axis=1).all():
        raise ParameterError(f"column {int(np.flatnonzero(~seen.any(axis=1))[0])} has no observed cell")
    out = codes.astype(np.int32, copy=True)
    missing_rows = np.flatnonzero((~seen).any(axis=0))
    if not len(missing_rows):
        return out
    mode = np.array([np.bincount(codes[v][seen[v]], minlength=int(arities[v])).argmax() for v in range(n)])
    pool = np.arange(rows)
    if rows > donors:
        pool = np.sort(np.random.default_rng(seed).choice(rows, donors, replace=False))
    # one indicator row per (variable, state): matches = onehot·onehot, co-observed = seen·seen
    onehot = np.concatenate([(codes[v] == np.arange(int(arities[v]))[:, None]) for v in range(n)]).astype(np.float32)
    seen_f = seen.astype(np.float32)
    donor_hot, donor_seen = onehot[:, pool], seen_f[:, pool]
    take = min(neighbours, len(pool))
    chunk = max(1, min(len(missing_rows), _BLOCK // max(1, len(pool) * onehot.shape[0]),
                       _BLOCK // max(1, n * take)))
    for a in range(0, len(missing_rows), chunk):
        idx = missing_rows[a:a + chunk]
        match = onehot[:, idx].T @ donor_hot
        both = seen_f[:, idx].T @ donor_seen
        dist = 1.0 - match / np.maximum(both, 1.0)
        dist[both == 0] = 2.0  # nothing in common: after every donor that shares a cell
        dist[pool[None, :] == idx[:, None]] = np.inf  # a row does not donate to itself
        near = pool[np.argsort(dist, axis=1, kind="stable")[:, :take]]  # (chunk, take)
        vals = codes[:, near]  # (n, chunk, take)
        has = vals >= 0
        first = has.argmax(axis=2)
        fill = np.take_along_axis(vals, first[..., None], axis=2)[..., 0]
        fill = np.where(has.any(axis=2), fill, mode[:, None])
        block = out[:, idx]
        gap = block < 0
        block[gap] = fill[gap]
        out[:, idx] = block
    return out
