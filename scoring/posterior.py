"""Exact inference on a learned network, row by row: the likelihood of each row's observed
cells, and draws of its missing cells from their joint posterior.

A network of treewidth ≤ k comes with an elimination order of width ≤ k of its moral
graph (its certificate). Variable elimination along that order (Zhang & Poole 1994;
Dechter's bucket elimination, 1999) multiplies, for each variable v in turn, the factors
that hold v into ψ_v over v and at most k later variables, and sums v out: the cost is
O(n·d^(k+1)) per row, exponential in k only. Evidence enters as one indicator factor per
variable and row (1 for a missing cell, the observed state's one-hot vector otherwise), so
all rows of a chunk are eliminated at once, the row an extra axis of every factor. After
the last variable the product of what is left is P(observed cells of the row).

Drawing the missing cells is the backward pass of the same elimination (forward
filtering, backward sampling): in the reverse order, v is drawn from ψ_v given the values
already drawn for its later variables, which is P(v | those, the evidence), so each row's
draw is an exact sample of its missing cells' joint posterior. Structural EM
(``twbn.em``) uses these draws for its expected counts.

The expected counts of the network's own families are exact (:func:`expected_counts`):
after the elimination, a backward pass turns each ψ_v into the posterior over its scope,
P(v | later variables of its bucket, evidence) · P(those | evidence), the latter read off
the posterior of the bucket its message went to (a junction tree's calibration, Lauritzen
& Spiegelhalter 1988, on the buckets); a family lies whole in the bucket its table went to.
EM for the tables (``twbn.scoring.likelihood.em_cpts``) sums these per row.

Messages are rescaled per row as they are made (the logs of the scales are summed), so
the likelihood of a row of thousands of observed cells does not underflow.
"""

from __future__ import annotations

from typing import Sequence

import math

import numpy as np
from twbn.scoring.errors import ParameterError

__all__ = ["cpt_factor", "elimination_order", "order_cost", "cheapest_order", "row_log_likelihood", "sample_missing",
           "most_probable_missing", "expected_counts", "table_rows"]

#: Rows eliminated at once, at most: every ψ_v holds (rows × d^(k+1)) numbers.
CHUNK_ROWS = 512

#: Numbers the ψ of one chunk of rows may hold in all (2^24: 128 MB of float64): at k = 8
#: over four-state variables one ψ holds 4^9 numbers a row, and 512 rows of it 1 GB.
CHUNK_ENTRIES = 1 << 24


def _chunk_rows(arities: np.ndarray, parents: Sequence[Sequence[int]], order: Sequence[int]) -> int:
    """Rows a chunk may hold so that every ψ of its elimination fits ``CHUNK_ENTRIES``:
    the elimination's scopes, followed without numbers."""
    pool = [frozenset((v, *parents[v])) for v in range(len(parents))]
    per_row = 0
    for v in order:
        bucket = [f for f in pool if v in f]
        pool = [f for f in pool if v not in f]
        scope = frozenset().union(*bucket) | {v}
        per_row += math.prod(int(arities[u]) for u in scope)
        pool.append(scope - {v})
    return max(1, min(CHUNK_ROWS, CHUNK_ENTRIES // max(1, per_row)))


def cpt_factor(cpt: np.ndarray, child_arity: int, parent_arities: Sequence[int]) -> np.ndarray:
    """The table P(v | parents) of ``twbn.scoring.likelihood.fit_cpts`` (rows: parent
    configurations, the first parent least significant; columns: v's states) as an array
    over (v, parent 1, …, parent m).

    Examples
    --------
    >>> import numpy as np
    >>> t = cpt_factor(np.array([[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]]), 2, [3])  # rows: the parent's states
    >>> t.shape, float(t[1, 1])  # P(v = 1 | parent = 1)
    ((2, 3), 0.8)
    """
    m = len(parent_arities)
    shaped = np.asarray(cpt, dtype=float).reshape(*reversed([int(a) for a in parent_arities]), int(child_arity))
    # axes are (parent m, …, parent 1, v): v first, then the parents in their order
    return np.transpose(shaped, [m] + list(range(m - 1, -1, -1)))


def table_rows(data: np.ndarray, arities: Sequence[int], parents: Sequence[int]) -> tuple[np.ndarray, int]:
    """Each row's configuration of ``parents``: the row of a table of
    ``twbn.scoring.likelihood.fit_cpts`` it reads (the first parent least significant), and
    the number of configurations.

    Examples
    --------
    >>> import numpy as np
    >>> code, q = table_rows(np.array([[0, 1, 1], [2, 0, 1]]), [2, 3], [0, 1])  # 0 + 2·x1
    >>> code.tolist(), q
    ([4, 1, 3], 6)
    """
    code = np.zeros(data.shape[1], dtype=np.int64)
    q = 1
    for p in parents:
        code += data[p] * q
        q *= int(arities[p])
    return code, q


def _moral(parents: Sequence[Sequence[int]]) -> list[set[int]]:
    adj = [set() for _ in range(len(parents))]
    for v, ps in enumerate(parents):
        family = [v, *ps]
        for a in family:
            adj[a].update(u for u in family if u != a)
    return adj


def order_cost(parents: Sequence[Sequence[int]], arities: Sequence[int], order: Sequence[int]) -> float:
    """The numbers one row's elimination along ``order`` touches: the sum, over the
    variables in that order, of the product of the arities of the variable and its
    neighbours when it is eliminated (the size of its bucket's factor).

    Examples
    --------
    >>> order_cost([(), (0,), (1,)], [2, 3, 4], [0, 1, 2])  # buckets {0, 1}, {1, 2}, {2}
    22.0
    >>> order_cost([(), (0,), (1,)], [2, 3, 4], [1, 0, 2])  # {1, 0, 2} first (fill 0-2), then {0, 2}, {2}
    36.0
    """
    adj = _moral(parents)
    cost = 0.0
    for v in order:
        nb = adj[v]
        cost += float(arities[v]) * math.prod(float(arities[u]) for u in nb)
        for a in nb:
            adj[a].discard(v)
            adj[a].update(nb - {a})
    return cost


def cheapest_order(parents: Sequence[Sequence[int]], arities: Sequence[int], *orders: Sequence[int]) -> list[int]:
    """Of ``orders`` (a learned network's certificate, say) and the greedy min-degree order,
    the one of least :func:`order_cost`: what inference should eliminate along. A
    certificate's width is proved ≤ k, but it may be far wider than the network needs (a
    localsearch network of width 4 under k = 8 came with an order of width 8: 5⁹-number
    factors a row at insurance's five states).

    Examples
    --------
    >>> cheapest_order([(), (0,), (1,)], [2, 3, 4], [1, 0, 2])
    [0, 1, 2]
    """
    best = elimination_order(parents)
    cost = order_cost(parents, arities, best)
    for order in orders:
        got = order_cost(parents, arities, order)
        if got < cost:
            best, cost = list(order), got
    return best


def elimination_order(parents: Sequence[Sequence[int]]) -> list[int]:
    """A greedy min-degree elimination order of the network's moral graph, for a network
    that comes without its certificate (:func:`cheapest_order` keeps the cheaper of it
    and a certificate).

    Examples
    --------
    >>> elimination_order([(), (0,), (0, 1), (2,)])  # the leaf 3 first
    [3, 0, 1, 2]
    """
    adj = _moral(parents)
    left, order = set(range(len(parents))), []
    while left:
        v = min(left, key=lambda u: (len(adj[u]), u))
        nb = adj[v]
        for a in nb:
            adj[a].discard(v)
            adj[a].update(nb - {a})
        left.discard(v)
        order.append(v)
    return order


def _eliminate(codes: np.ndarray, arities: np.ndarray, parents: Sequence[Sequence[int]], tables: list[np.ndarray],
               order: Sequence[int], maximise: bool = False) -> tuple[list[tuple[tuple[int, ...], np.ndarray]], np.ndarray]:
    """Variable elimination over the rows ``codes`` (n, R) (−1: missing) along ``order``:
    each ψ_v as (its scope with v last, its array (R, …)), and each row's log P(observed)
    (``maximise``: max-product instead, and the log of the most probable completion's
    joint probability)."""
    n, rows = codes.shape
    pool: list[tuple[tuple[int, ...], np.ndarray, bool]] = []  # (scope, array, has a row axis)
    for v in range(n):
        pool.append(((v, *parents[v]), tables[v], False))
        ind = np.ones((rows, int(arities[v])))
        seen = codes[v] >= 0
        if seen.any():
            ind[seen] = 0.0
            ind[np.flatnonzero(seen), codes[v, seen]] = 1.0
        pool.append(((v,), ind, True))
    log_scale = np.zeros(rows)
    psis = []
    for v in order:
        bucket = [f for f in pool if v in f[0]]
        pool = [f for f in pool if v not in f[0]]
        scope = sorted({u for s, _, _ in bucket for u in s} - {v}) + [v]
        label = {u: i + 1 for i, u in enumerate(scope)}  # 0: the row axis
        operands = []
        for s, arr, has_rows in bucket:
            operands += [arr, ([0] if has_rows else []) + [label[u] for u in s]]
        psi = np.einsum(*operands, [0] + [label[u] for u in scope], optimize=True)
        psis.append((tuple(scope), psi))
        message = psi.max(axis=-1) if maximise else psi.sum(axis=-1)
        scale = message.reshape(rows, -1).max(axis=1)
        if np.any(scale <= 0):
            bad = int(np.flatnonzero(scale <= 0)[0])
            raise ParameterError(f"row {bad}: its observed cells have probability 0 under the network")
        message = message / scale.reshape((rows,) + (1,) * (message.ndim - 1))
        log_scale += np.log(scale)
        pool.append((tuple(scope[:-1]), message, True))
    # every variable is gone: what is left are numbers per row
    rest = np.ones(rows)
    for s, arr, has_rows in pool:
        rest = rest * (arr if has_rows else np.broadcast_to(arr, (rows,)))
    return psis, log_scale + np.log(rest)


def _tables(arities: np.ndarray, parents: Sequence[Sequence[int]], cpts: Sequence[np.ndarray]) -> list[np.ndarray]:
    return [cpt_factor(cpts[v], int(arities[v]), [int(arities[p]) for p in parents[v]]) for v in range(len(parents))]


def _check(codes: np.ndarray, arities: np.ndarray, parents, order) -> tuple[np.ndarray, np.ndarray, list[int]]:
    codes = np.asarray(codes)
    arities = np.asarray(arities, dtype=np.int64)
    n = len(parents)
    if codes.ndim != 2 or codes.shape[0] != n or len(arities) != n:
        raise ParameterError(f"codes must be (n_variables, n_rows) over the network's {n} variables")
    order = [int(v) for v in order]
    if sorted(order) != list(range(n)):
        raise ParameterError("the elimination order must list every variable once")
    return codes, arities, order


def row_log_likelihood(codes: np.ndarray, arities: np.ndarray, parents: Sequence[Sequence[int]],
                       cpts: Sequence[np.ndarray], order: Sequence[int]) -> np.ndarray:
    """log P(observed cells) of each row under the network, exactly.

    Parameters
    ----------
    codes : (n, R) int array
        State codes, −1 for a missing cell.
    arities : (n,) ints
    parents : the network, ``parents[v]`` the parents of v
    cpts : the tables of ``twbn.scoring.likelihood.fit_cpts`` (one per variable)
    order : an elimination order of the network's moral graph (its certificate: the cost
        is exponential in its width)

    Returns
    -------
    (R,) array of natural logs (a complete row: the sum of its families' log-probabilities).

    Raises
    ------
    ParameterError
        A shape that does not match, an order that is not one, a row of probability 0.

    Examples
    --------
    >>> import numpy as np
    >>> cpts = [np.array([[0.3, 0.7]]), np.array([[0.9, 0.1], [0.2, 0.8]])]  # A, then B | A
    >>> codes = np.array([[0, -1, -1], [1, 1, -1]])  # (A=0, B=1), (A missing, B=1), nothing seen
    >>> np.round(np.exp(row_log_likelihood(codes, [2, 2], [(), (0,)], cpts, [0, 1])), 4)
    array([0.03, 0.59, 1.  ])
    """
    codes, arities, order = _check(codes, arities, parents, order)
    tables = _tables(arities, parents, cpts)
    out = np.empty(codes.shape[1])
    step = _chunk_rows(arities, parents, order)
    for lo in range(0, codes.shape[1], step):
        out[lo:lo + step] = _eliminate(codes[:, lo:lo + step], arities, parents, tables, order)[1]
    return out


def sample_missing(codes: np.ndarray, arities: np.ndarray, parents: Sequence[Sequence[int]],
                   cpts: Sequence[np.ndarray], order: Sequence[int], copies: int = 1,
                   seed: int | None = None) -> np.ndarray:
    """``copies`` completions of every row: its missing cells drawn from their exact joint
    posterior given its observed cells, its observed cells kept.

    Parameters
    ----------
    codes, arities, parents, cpts, order
        As :func:`row_log_likelihood`.
    copies : int, default 1
        Draws per row.
    seed : int, optional

    Returns
    -------
    (n, copies · R) int32 array: copy c of row i is column ``c · R + i``.

    Examples
    --------
    >>> import numpy as np
    >>> cpts = [np.array([[0.5, 0.5]]), np.array([[1.0, 0.0], [0.0, 1.0]])]  # B copies A
    >>> done = sample_missing(np.array([[-1, 0], [1, -1]]), [2, 2], [(), (0,)], cpts, [0, 1], copies=3, seed=0)
    >>> done.tolist()  # A is drawn as B says; B as A says
    [[1, 0, 1, 0, 1, 0], [1, 0, 1, 0, 1, 0]]
    """
    if isinstance(copies, bool) or not isinstance(copies, (int, np.integer)) or copies < 1:
        raise ParameterError(f"copies must be an integer >= 1, got {copies!r}")
    codes, arities, order = _check(codes, arities, parents, order)
    tables = _tables(arities, parents, cpts)
    rng = np.random.default_rng(seed)
    n, rows = codes.shape
    out = np.empty((n, copies * rows), dtype=np.int32)
    step = _chunk_rows(arities, parents, order)
    for lo in range(0, rows, step):
        chunk = codes[:, lo:lo + step]
        r = chunk.shape[1]
        psis, _ = _eliminate(chunk, arities, parents, tables, order)
        drawn = np.tile(chunk, (1, copies)).astype(np.int64)  # (n, copies · r): copy c of row i at c·r + i
        row_of = np.tile(np.arange(r), copies)
        for scope, psi in reversed(psis):  # v last in its scope; the others drawn already
            v = scope[-1]
            # observed cells need no draw: the indicator has put all of ψ_v's mass on them
            index = (row_of,) + tuple(drawn[u] for u in scope[:-1])
            weights = psi[index]  # (copies · r, r_v)
            weights = weights / weights.sum(axis=1, keepdims=True)
            u = rng.random(len(row_of))
            pick = np.minimum((weights.cumsum(axis=1) < u[:, None]).sum(axis=1), int(arities[v]) - 1)
            drawn[v] = np.where(drawn[v] < 0, pick, drawn[v])
        for c in range(copies):
            out[:, c * rows + lo: c * rows + lo + r] = drawn[:, c * r:(c + 1) * r]
    return out


def most_probable_missing(codes: np.ndarray, arities: np.ndarray, parents: Sequence[Sequence[int]],
                          cpts: Sequence[np.ndarray], order: Sequence[int]) -> np.ndarray:
    """Every row completed with the most probable joint values of its missing cells given
    its observed ones (max-product elimination, then each variable's best state given
    the later ones, in reverse order: the joint argmax, not each cell's own); observed
    cells kept. Ties go to the lowest code.

    Parameters
    ----------
    codes, arities, parents, cpts, order
        As :func:`row_log_likelihood`.

    Returns
    -------
    (n, R) int32 array.

    Examples
    --------
    >>> import numpy as np
    >>> # A is 1 with probability 0.6; B copies A with probability 0.9
    >>> cpts = [np.array([[0.4, 0.6]]), np.array([[0.9, 0.1], [0.1, 0.9]])]
    >>> most_probable_missing(np.array([[-1, -1], [0, -1]]), [2, 2], [(), (0,)], cpts, [0, 1]).tolist()
    [[0, 1], [0, 1]]
    """
    codes, arities, order = _check(codes, arities, parents, order)
    tables = _tables(arities, parents, cpts)
    out = np.empty(codes.shape, dtype=np.int32)
    step = _chunk_rows(arities, parents, order)
    for lo in range(0, codes.shape[1], step):
        chunk = codes[:, lo:lo + step].astype(np.int64)
        psis, _ = _eliminate(chunk, arities, parents, tables, order, maximise=True)
        rows = np.arange(chunk.shape[1])
        for scope, psi in reversed(psis):
            v = scope[-1]
            best = psi[(rows,) + tuple(chunk[u] for u in scope[:-1])].argmax(axis=1)
            chunk[v] = np.where(chunk[v] < 0, best, chunk[v])
        out[:, lo:lo + step] = chunk
    return out


def expected_counts(codes: np.ndarray, arities: np.ndarray, parents: Sequence[Sequence[int]],
                    cpts: Sequence[np.ndarray], order: Sequence[int]) -> tuple[list[np.ndarray], float]:
    """The exact expected counts of every family of the network over the rows, each row's
    missing cells weighted by their joint posterior given its observed cells, and the
    rows' log-likelihood: one E-step of EM for the tables.

    Complete rows are counted as they are; the others by elimination along ``order`` and a
    backward pass over its buckets (module docstring), at about twice the cost of
    :func:`row_log_likelihood`.

    Parameters
    ----------
    codes, arities, parents, cpts, order
        As :func:`row_log_likelihood`.

    Returns
    -------
    counts : list of (q_v, r_v) float arrays
        In the layout of ``twbn.scoring.likelihood.fit_cpts``'s tables: rows the parent
        configurations, the first parent least significant; columns v's states. Each sums
        to the number of rows.
    log_likelihood : float
        Σ over rows of log P(observed cells), under ``cpts``.

    Raises
    ------
    ParameterError
        As :func:`row_log_likelihood`.

    Examples
    --------
    >>> import numpy as np
    >>> cpts = [np.array([[0.3, 0.7]]), np.array([[0.9, 0.1], [0.2, 0.8]])]  # A, then B | A
    >>> codes = np.array([[0, -1], [1, 1]])  # (A=0, B=1); (A missing, B=1): A=0 w.p. 0.03/0.59
    >>> counts, ll = expected_counts(codes, [2, 2], [(), (0,)], cpts, [0, 1])
    >>> np.round(counts[0], 4).tolist(), np.round(counts[1], 4).tolist()
    ([[1.0508, 0.9492]], [[0.0, 1.0508], [0.0, 0.9492]])
    >>> round(float(np.exp(ll)), 4)  # 0.03 · 0.59
    0.0177
    """
    codes, arities, order = _check(codes, arities, parents, order)
    n = len(parents)
    tables = _tables(arities, parents, cpts)
    shapes = [(math.prod(int(arities[p]) for p in ps), int(arities[v])) for v, ps in enumerate(parents)]
    gappy = (codes < 0).any(axis=0)
    counts = []
    total = 0.0
    full = codes[:, ~gappy].astype(np.int64)
    for v, ps in enumerate(parents):  # the complete rows: their configurations, counted and scored
        q, r = shapes[v]
        config, _ = table_rows(full, arities, ps)
        counts.append(np.bincount(config * r + full[v], minlength=q * r).reshape(q, r).astype(float))
        total += float(np.log(np.asarray(cpts[v])[config, full[v]]).sum())
    where = {v: i for i, v in enumerate(order)}
    # a table enters the bucket of the first of its family to be eliminated
    home = [min(where[u] for u in (v, *ps)) for v, ps in enumerate(parents)]
    rest = codes[:, gappy]
    step = _chunk_rows(arities, parents, order)
    for lo in range(0, rest.shape[1], step):
        psis, ll = _eliminate(rest[:, lo:lo + step], arities, parents, tables, order)
        total += float(ll.sum())
        beliefs: list[np.ndarray | None] = [None] * n
        for i in range(n - 1, -1, -1):
            scope, psi = psis[i]
            mass = psi.sum(axis=-1, keepdims=True)
            cond = np.divide(psi, mass, out=np.zeros_like(psi), where=mass > 0)  # P(v | the rest of its scope)
            if len(scope) == 1:
                beliefs[i] = cond
                continue
            j = min(where[u] for u in scope[:-1])  # where its message went
            to = psis[j][0]
            label = {u: a + 1 for a, u in enumerate(to)}
            prior = np.einsum(beliefs[j], [0] + [label[u] for u in to], [0] + [label[u] for u in scope[:-1]])
            beliefs[i] = cond * prior[..., None]
        for v, ps in enumerate(parents):
            scope = psis[home[v]][0]
            label = {u: a for a, u in enumerate(scope)}
            # summed over rows, in the order (parent m, …, parent 1, v) of the CPT's layout
            mine = np.einsum(beliefs[home[v]], [len(scope)] + list(range(len(scope))),
                             [label[u] for u in (*reversed(ps), v)])
            counts[v] += mine.reshape(shapes[v])
    return counts, total
