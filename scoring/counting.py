"""Compiled counting kernels: parent-configuration codes and family sufficient statistics.

A parent set's configuration in each row is a *compressed* code ``0 … q_obs−1`` (only the
configurations that occur get a code), built from the codes of its prefix:
``code(Π ∪ {Y}) = relabel(code(Π) · r_Y + y)``. Because ``q_obs ≤ N``, the relabelling
table never exceeds ``N · r_Y`` entries, whatever the product of the arities; and a set
shares the work of its prefix, which the level-wise exploration keeps for one level.

The family kernel counts ``N_jk`` (parent configuration j, child state k) for many
children of the same parent set in one call and returns their log-likelihoods
``Σ_jk N_jk ln(N_jk / N_j)`` and, when asked, their BDeu scores.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["extend_codes", "nlogn_table", "family_scores", "added_parent_scores", "available_family_ll"]


@njit(cache=True, nogil=True)
def extend_codes(codes: np.ndarray, q: int, column: np.ndarray, r: int):
    """Compressed codes of (codes, column): the configurations of Π ∪ {Y}."""
    n = codes.shape[0]
    table = np.full(q * r, -1, np.int32)
    out = np.empty(n, np.int32)
    nxt = 0
    for i in range(n):
        k = codes[i] * r + column[i]
        c = table[k]
        if c < 0:
            c = nxt
            table[k] = c
            nxt += 1
        out[i] = c
    return out, nxt


@njit(cache=True, nogil=True)
def nlogn_table(n_rows: int) -> np.ndarray:
    """``t[m] = m ln m`` for m = 0 … n_rows (t[0] = 0)."""
    t = np.zeros(n_rows + 1, np.float64)
    for m in range(2, n_rows + 1):
        t[m] = m * math.log(m)
    return t


@njit(cache=True, nogil=True)
def family_scores(codes, q, data, children, arities, nlogn, ess, q_full):
    """Log-likelihood (and BDeu when ``ess > 0``) of each child given one parent set.

    Parameters
    ----------
    codes : int32[N], compressed parent configurations in [0, q).
    data : int32[n_vars, N].
    children : int64[m], the children to score with this parent set.
    nlogn : float64[N+1], from :func:`nlogn_table`.
    ess : BDeu equivalent sample size; ``<= 0`` skips BDeu.
    q_full : float, the product of the parents' arities (unobserved configurations
        included), which BDeu's hyperparameters are divided by.

    Returns
    -------
    ll, bdeu : float64[m] each (bdeu is zeros when ``ess <= 0``).
    """
    n = codes.shape[0]
    m = children.shape[0]
    nj = np.zeros(q, np.int64)
    for i in range(n):
        nj[codes[i]] += 1
    sum_nj = 0.0
    for j in range(q):
        sum_nj += nlogn[nj[j]]
    ll = np.empty(m, np.float64)
    bdeu = np.zeros(m, np.float64)
    rmax = 1
    for c in range(m):
        if arities[children[c]] > rmax:
            rmax = arities[children[c]]
    counts = np.zeros(q * rmax, np.int64)
    bdeu_j = 0.0
    if ess > 0:
        a_j = ess / q_full
        lg_a_j = math.lgamma(a_j)
        for j in range(q):
            bdeu_j += lg_a_j - math.lgamma(a_j + nj[j])
    for c in range(m):
        child = children[c]
        r = arities[child]
        col = data[child]
        for i in range(n):
            counts[codes[i] * r + col[i]] += 1
        s = 0.0
        b = 0.0
        if ess > 0:
            a_jk = ess / (q_full * r)
            lg_a_jk = math.lgamma(a_jk)
            for k in range(q * r):
                v = counts[k]
                if v > 0:
                    s += nlogn[v]
                    b += math.lgamma(a_jk + v) - lg_a_jk
                    counts[k] = 0
        else:
            for k in range(q * r):
                v = counts[k]
                if v > 0:
                    s += nlogn[v]
                    counts[k] = 0
        ll[c] = s - sum_nj
        bdeu[c] = b + bdeu_j
    return ll, bdeu


@njit(cache=True, nogil=True)
def added_parent_scores(codes, q, data, adds, child, arities, nlogn, ess, q_full):
    """Log-likelihood (and BDeu when ``ess > 0``) of ``child`` given Π ∪ {u}, for each u in
    ``adds``, from the compressed codes of Π (``codes``, ``q`` configurations; ``q_full`` the
    product of Π's arities): one pass over the rows a parent, the codes of Π ∪ {u} never
    built. What :func:`extend_codes` then :func:`family_scores` give, for a search that
    tries every parent it could add to one family.

    Returns
    -------
    ll, bdeu : float64[len(adds)] each (bdeu is zeros when ``ess <= 0``).
    """
    n = codes.shape[0]
    m = adds.shape[0]
    r = arities[child]
    col = data[child]
    ll = np.empty(m, np.float64)
    bdeu = np.zeros(m, np.float64)
    for a in range(m):
        u = adds[a]
        ru = arities[u]
        cu = data[u]
        nj = np.zeros(q * ru, np.int64)
        njk = np.zeros(q * ru * r, np.int64)
        for i in range(n):
            j = codes[i] * ru + cu[i]
            nj[j] += 1
            njk[j * r + col[i]] += 1
        s = 0.0
        for j in range(q * ru):
            s -= nlogn[nj[j]]
        for x in range(q * ru * r):
            s += nlogn[njk[x]]
        ll[a] = s
        if ess > 0:
            qf = q_full * ru
            a_j = ess / qf
            a_jk = ess / (qf * r)
            lg_a_j = math.lgamma(a_j)
            lg_a_jk = math.lgamma(a_jk)
            b = 0.0
            for j in range(q * ru):
                if nj[j] > 0:
                    b += lg_a_j - math.lgamma(a_j + nj[j])
            for x in range(q * ru * r):
                if njk[x] > 0:
                    b += math.lgamma(a_jk + njk[x]) - lg_a_jk
            bdeu[a] = b
    return ll, bdeu


@njit(cache=True, nogil=True)
def available_family_ll(codes, q, data, parents, child, arities, nlogn):
    """Log-likelihood of ``child`` given a parent set over its *available cases*: the rows
    where the child and every parent are observed (a missing cell is coded as the
    variable's arity, one past its states; ``codes`` are the parents' compressed
    configurations built over those extended columns). Returns ``(ll, ll0, m)``: the
    log-likelihood given the parents and without them, both over those m rows (their
    difference is m times the child's mutual information with its parents there)."""
    n = codes.shape[0]
    r = arities[child]
    col = data[child]
    nj = np.zeros(q, np.int64)
    njk = np.zeros(q * r, np.int64)
    nk = np.zeros(r, np.int64)
    m = 0
    for i in range(n):
        if col[i] >= r:
            continue
        ok = True
        for p in parents:
            if data[p, i] >= arities[p]:
                ok = False
                break
        if ok:
            nj[codes[i]] += 1
            njk[codes[i] * r + col[i]] += 1
            nk[col[i]] += 1
            m += 1
    s = 0.0
    for j in range(q):
        s -= nlogn[nj[j]]
    for x in range(q * r):
        s += nlogn[njk[x]]
    s0 = -nlogn[m]
    for x in range(r):
        s0 += nlogn[nk[x]]
    return s, s0, m
