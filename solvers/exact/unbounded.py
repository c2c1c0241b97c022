"""Exact learning without a treewidth bound, by dynamic programming over subsets.

Silander & Myllymäki (2006), after Ott & Miyano (2003) and Koivisto & Sood (2004):
for each variable v and set C of other variables, f̂_v(C) = max_{Π ⊆ C} f_v(Π) (a "max
zeta transform" over the cache); then the best network on a set S ends in some sink v
whose parents come from S∖{v}: best(S) = max_{v∈S} best(S∖{v}) + f̂_v(S∖{v}).
Time O(n·2^n) after O(n·2^(n−1)·(n−1)) for f̂; memory O(n·2^(n−1)). For n ≤ ~22.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from twbn.scoring.cache import ScoreCache
from twbn.scoring.errors import ParameterError

__all__ = ["best_parent_tables", "unbounded_optimum"]

MAX_VARIABLES = 24


def _compress(mask: int, v: int) -> int:
    """Index of ``mask`` (not containing v) among subsets of the other n−1 variables."""
    return (mask & ((1 << v) - 1)) | ((mask >> (v + 1)) << v)


def best_parent_tables(cache: ScoreCache) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """For each v: f̂_v over all subsets of the others (compressed index), and the index
    into ``cache.parent_sets[v]`` of the set achieving it (−1 where none fits)."""
    n = cache.n_variables
    values, args = [], []
    for v in range(n):
        size = 1 << (n - 1)
        val = np.full(size, -np.inf)
        arg = np.full(size, -1, dtype=np.int32)
        # best first, so the first set written into a slot is that slot's best
        for i in range(len(cache.parent_sets[v]) - 1, -1, -1):
            m = 0
            for p in cache.parent_sets[v][i]:
                m |= 1 << p
            idx = _compress(m, v)
            val[idx] = cache.scores[v][i]
            arg[idx] = i
        for b in range(n - 1):
            vv = val.reshape(-1, 2, 1 << b)
            aa = arg.reshape(-1, 2, 1 << b)
            take = vv[:, 0, :] > vv[:, 1, :]
            vv[:, 1, :] = np.where(take, vv[:, 0, :], vv[:, 1, :])
            aa[:, 1, :] = np.where(take, aa[:, 0, :], aa[:, 1, :])
        values.append(val)
        args.append(arg)
    return values, args


@njit(cache=True)
def _sink_dp(fhat: np.ndarray, n: int):
    full = 1 << n
    best = np.full(full, -np.inf)
    sink = np.full(full, -1, np.int32)
    best[0] = 0.0
    for s in range(1, full):
        b = -np.inf
        arg = -1
        for v in range(n):
            if (s >> v) & 1:
                rest = s ^ (1 << v)
                idx = (rest & ((1 << v) - 1)) | ((rest >> (v + 1)) << v)
                val = best[rest] + fhat[v, idx]
                if val > b:
                    b = val
                    arg = v
        best[s] = b
        sink[s] = arg
    return best, sink


def unbounded_optimum(cache: ScoreCache) -> tuple[list[tuple[int, ...]], float]:
    """An optimal DAG over the cache's candidate sets and its score."""
    n = cache.n_variables
    if n > MAX_VARIABLES:
        raise ParameterError(f"the unbounded DP needs 2^n memory; {n} variables is over its limit of {MAX_VARIABLES}")
    values, args = best_parent_tables(cache)
    fhat = np.stack(values)
    best, sink = _sink_dp(fhat, n)
    full = (1 << n) - 1
    if not np.isfinite(best[full]):
        raise ParameterError("no acyclic choice of cached parent sets exists")
    parents: list[tuple[int, ...]] = [()] * n
    s = full
    while s:
        v = int(sink[s])
        rest = s ^ (1 << v)
        parents[v] = cache.parent_sets[v][int(args[v][_compress(rest, v)])]
        s = rest
    return parents, float(best[full])
