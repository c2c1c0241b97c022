"""Held-out log-likelihood of a network: CPTs fitted on training data with Dirichlet
smoothing, log-likelihood of test data under them (as in the held-out evaluations of
Machado et al., Sec. V).

Smoothing is the BDeu prior's: a pseudo-count ess/(q_v·r_v) in every cell of v's CPT
(q_v parent configurations, r_v states), so θ_vjk = (N_vjk + a_v) / (N_vj + r_v·a_v), the
posterior mean under the prior that the BDeu score with the same ess integrates over.
States are those of the training and test data together, matched by their canonical text
(``data.canonical_state``). A state the test rows show and the training data never did is
refused by name (``unseen_states``) unless the caller allows it; then it gets the
pseudo-count alone. Natural logarithms; O(n·N) after the counts.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from twbn.scoring.data import DataError, Dataset, state_order
from twbn.scoring.posterior import table_rows
from twbn.scoring.errors import ParameterError

__all__ = ["unseen_states", "align", "fit_cpts", "em_cpts", "log_likelihood", "held_out_log_likelihood",
           "held_out_row_log_likelihoods"]


def unseen_states(train: Dataset, test: Dataset, names: Sequence[str]) -> list[str]:
    """Each variable whose test rows show a state the training data does not have, as
    ``"name value (rows)"``; empty when every test value was seen.

    Examples
    --------
    >>> import numpy as np
    >>> tr = Dataset(("legs",), (("2", "4"),), np.array([[0, 1, 1]], np.int32))
    >>> te = Dataset(("legs",), (("4", "7"),), np.array([[0, 1, 1]], np.int32))
    >>> unseen_states(tr, te, ["legs"])
    ['legs 7 (2 rows)']
    """
    out = []
    for name in names:
        known = set(train.states[train.names.index(name)])
        v = test.names.index(name)
        codes = test.data[v]
        for code, label in enumerate(test.states[v]):
            rows = int((codes == code).sum())
            if label not in known and rows:
                out.append(f"{name} {label} ({rows} row{'s' if rows != 1 else ''})")
    return out


def align(train: Dataset, test: Dataset, names: Sequence[str], *,
          allow_unseen: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Codes of ``names`` in both data sets over the union of their states (−1 stays
    −1: a missing cell), and arities. Raises DataError if a variable is missing from either,
    or (``allow_unseen=False``) if the test rows show a state the training data lacks."""
    rows_tr, rows_te, arities = [], [], []
    for name in names:
        for ds, which in ((train, "training"), (test, "test")):
            if name not in ds.names:
                raise DataError(f"variable {name!r} of the network is not a column of the {which} data")
    if not allow_unseen and test is not train:
        unseen = unseen_states(train, test, names)
        if unseen:
            raise DataError(f"the test rows show values the training data never does: {', '.join(unseen[:6])}"
                            + (f", … ({len(unseen) - 6} more)" if len(unseen) > 6 else "")
                            + "; allow them (allow_unseen=True, --allow-unseen) to give each the smoothing's "
                              "pseudo-count alone")
    for name in names:
        vt, ve = train.names.index(name), test.names.index(name)
        states = state_order(set(train.states[vt]) | set(test.states[ve]))
        pos = {s: i for i, s in enumerate(states)}
        for ds, v, out in ((train, vt, rows_tr), (test, ve, rows_te)):
            remap = np.array([pos[s] for s in ds.states[v]] + [-1], dtype=np.int64)  # [-1]: a missing cell
            out.append(remap[ds.data[v]])
        arities.append(len(states))
    return np.array(rows_tr), np.array(rows_te), np.array(arities, dtype=np.int64)


def fit_cpts(data: np.ndarray, arities: np.ndarray, parents: Sequence[Sequence[int]], ess: float = 1.0, *,
             copies: int = 1) -> list[np.ndarray]:
    """CPT of each variable as a (q_v, r_v) array of probabilities (rows sum to 1).

    ``copies``: ``data`` holds that many completions of each real row (an E-step's draws);
    the prior ``ess`` weighs against the real rows, so it is counted ``copies`` times (with
    ``ess`` alone, alarm's true network fitted on 20 % MCAR scored −10.734 a held-out row,
    with ``ess · copies`` −10.676; complete −10.645).

    Examples
    --------
    >>> import numpy as np
    >>> fit_cpts(np.array([[0, 0, 0, 1]]), np.array([2]), [()])[0].tolist()  # (3 + 1/2) / (4 + 1)
    [[0.7, 0.3]]
    >>> fit_cpts(np.array([[0, 0, 0, 1] * 2]), np.array([2]), [()], copies=2)[0].tolist()
    [[0.7, 0.3]]
    """
    if not ess > 0:
        raise ParameterError(f"the smoothing ess must be positive, got {ess}")
    if (np.asarray(data) < 0).any():
        raise ParameterError("fit_cpts counts complete rows; em_cpts fits tables around missing cells")
    return [_fit_one(data, arities, v, ps, ess * copies) for v, ps in enumerate(parents)]


def _fit_one(data: np.ndarray, arities: np.ndarray, v: int, ps: Sequence[int], ess: float) -> np.ndarray:
    code, q = table_rows(data, arities, ps)
    r = int(arities[v])
    return _smoothed(np.bincount(code * r + data[v], minlength=q * r).reshape(q, r).astype(float), ess)


def log_likelihood(data: np.ndarray, arities: np.ndarray, parents: Sequence[Sequence[int]], cpts: list[np.ndarray]) -> float:
    """Σ over rows and variables of ln θ(x_v | x_parents)."""
    total = 0.0
    for v, ps in enumerate(parents):
        code, _ = table_rows(data, arities, ps)
        total += float(np.log(cpts[v][code, data[v]]).sum())
    return total


def em_cpts(data: np.ndarray, arities: np.ndarray, parents: Sequence[Sequence[int]], ess: float = 1.0, *,
            iterations: int = 30, tolerance: float = 1e-6) -> list[np.ndarray]:
    """The tables of ``fit_cpts`` fitted by EM where ``data`` has missing cells (−1).

    Starts from each family's fully observed rows; each iteration takes the exact expected
    counts of every family under the current tables (``posterior.expected_counts``: each
    row's missing cells weighted by their joint posterior) and refits on them with the
    prior ``ess`` (Dempster, Laird & Rubin 1977; the Dirichlet smoothing of ``fit_cpts``).
    Stops after ``iterations``, or once an iteration raises the observed cells'
    log-likelihood by less than ``tolerance`` of it. Complete data: ``fit_cpts`` itself.

    Parameters
    ----------
    data : (n, R) int array
        State codes, −1 for a missing cell.
    arities : (n,) ints
    parents : the network, ``parents[v]`` the parents of v
    ess : float, default 1.0
        The smoothing's equivalent sample size.
    iterations : int, default 30
        EM rounds at most (0: the available-case tables).
    tolerance : float, default 1e-6
        The relative rise of the observed cells' log-likelihood below which EM stops.

    Returns
    -------
    list of (q_v, r_v) arrays, as ``fit_cpts``.

    Examples
    --------
    >>> import numpy as np
    >>> # A -> B; the third row's A is missing, and B = 1 says A = 1 more often than not
    >>> data = np.array([[0, 1, -1, 1], [0, 1, 1, 1]])
    >>> t = em_cpts(data, np.array([2, 2]), [(), (0,)], ess=1e-6)
    >>> bool(0.99 < t[0][0, 1] / 0.75 < 1.01)  # the missing A went (almost) all to 1
    True
    """
    from twbn.scoring.posterior import cheapest_order, expected_counts

    data = np.asarray(data)
    if not (data < 0).any():
        return fit_cpts(data, arities, parents, ess)
    if not ess > 0:
        raise ParameterError(f"the smoothing ess must be positive, got {ess}")
    cpts = []
    for v, ps in enumerate(parents):  # available cases, family by family
        seen = np.all(data[[v, *ps]] >= 0, axis=0)
        cpts.append(_fit_one(data[:, seen], arities, v, ps, ess))
    order = cheapest_order(parents, arities)
    before = -np.inf
    for _ in range(iterations):
        counts, ll = expected_counts(data, arities, parents, cpts, order)
        if ll - before < tolerance * abs(ll):
            break  # the tables of the last round already explain the observed cells as well
        before = ll
        cpts = [_smoothed(c, ess) for c in counts]
    return cpts


def _smoothed(counts: np.ndarray, ess: float) -> np.ndarray:
    q, r = counts.shape
    a = ess / (q * r)
    return (counts + a) / (counts.sum(axis=1, keepdims=True) + r * a)


def held_out_log_likelihood(train: Dataset, test: Dataset, names: Sequence[str], parents: Sequence[Sequence[int]],
                            ess: float = 1.0, cpts: Sequence[np.ndarray] | None = None, *,
                            allow_unseen: bool = True) -> tuple[float, int]:
    """(log-likelihood of the test rows, number of test rows) of the network whose
    variable i is ``names[i]`` with parent indices ``parents[i]``, fitted on ``train``
    (by EM, ``em_cpts``, where it has missing cells; or ``cpts`` as given). A test row
    with missing cells counts the likelihood of what is observed, by exact inference.
    ``allow_unseen=False``: a test value the training data lacks is a DataError
    (``align``); folds of one data set share its states, and allow them."""
    from twbn.scoring.posterior import cheapest_order, row_log_likelihood

    tr, te, arities = align(train, test, names, allow_unseen=allow_unseen)
    if cpts is None:
        cpts = em_cpts(tr, arities, parents, ess)
    if (te < 0).any():
        return float(row_log_likelihood(te, arities, parents, cpts, cheapest_order(parents, arities)).sum()), \
            te.shape[1]
    return log_likelihood(te, arities, parents, cpts), te.shape[1]


def held_out_row_log_likelihoods(train: Dataset, test: Dataset, names: Sequence[str],
                                 parents: Sequence[Sequence[int]], ess: float = 1.0) -> np.ndarray:
    """The log-likelihood of each test row (natural log), the network fitted on ``train``
    as in :func:`held_out_log_likelihood`, whose total is their sum: the per-row figures a
    choice between networks needs for its spread. Unseen test values get the smoothing's
    pseudo-count alone (folds of one data set).

    Examples
    --------
    >>> import twbn
    >>> ds = twbn.read_csv(twbn.example_path("zoo"))
    >>> tr, te = ds.subset_rows(np.arange(80)), ds.subset_rows(np.arange(80, ds.n_rows))
    >>> rows = held_out_row_log_likelihoods(tr, te, ds.names, [()] * len(ds.names))
    >>> total, m = held_out_log_likelihood(tr, te, ds.names, [()] * len(ds.names))
    >>> rows.shape == (m,), bool(abs(rows.sum() - total) < 1e-9)
    (True, True)
    """
    from twbn.scoring.posterior import cheapest_order, row_log_likelihood

    tr, te, arities = align(train, test, names)
    cpts = em_cpts(tr, arities, parents, ess)
    if (te < 0).any():
        return np.asarray(row_log_likelihood(te, arities, parents, cpts, cheapest_order(parents, arities)), float)
    rows = np.zeros(te.shape[1])
    for v, ps in enumerate(parents):
        code, _ = table_rows(te, arities, ps)
        rows += np.log(cpts[v][code, te[v]])
    return rows
