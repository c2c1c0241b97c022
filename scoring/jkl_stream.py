"""A fast reader for the jkl dialect twbn writes (and BLIP and GOBNILP read): index headers,
integer parents in increasing order, no comments.

Such a file is one stream of numbers, so it is converted by numpy in one call and walked
by a compiled loop, instead of a Python loop over its lines: jester's cache (772,774
parent sets, 25 MB) took 8.2 s to read line by line, most of a 60 s budget's overrun
(issue 33.5). The walk checks everything the line-by-line reader checks, and the lines
must hold the tokens the walk expects (one header line per block, one line per parent
set); where anything differs — a comment, names, unsorted parents, a malformed line —
:func:`read_index_stream` returns None and ``read_jkl`` reads the file line by line,
which names the line at fault.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["read_index_stream"]


@njit(cache=True, nogil=True)
def _walk(tok: np.ndarray, max_abs: float):
    """(ok, n, var, score, start, size, line_tokens) of the token stream ``tok``: each
    parent set's variable, score, first parent's position in ``tok`` and size, and the
    tokens each line must hold; ok is False at the first thing out of place."""
    empty_i = np.zeros(0, np.int64)
    empty_f = np.zeros(0, np.float64)
    bad = (False, 0, empty_i, empty_f, empty_i, empty_i, empty_i)
    L = tok.size
    if L < 1 or tok[0] != np.floor(tok[0]) or tok[0] < 1 or tok[0] > 10_000_000:
        return bad
    n = np.int64(tok[0])
    # pass 1: count the parent sets, checking the structure
    p = 1
    m = 0
    seen = np.zeros(n, np.bool_)
    for _ in range(n):
        if p + 1 >= L:
            return bad
        v, c = tok[p], tok[p + 1]
        if v != np.floor(v) or v < 0 or v >= n or c != np.floor(c) or c < 1:
            return bad
        if seen[np.int64(v)]:
            return bad
        seen[np.int64(v)] = True
        p += 2
        for _j in range(np.int64(c)):
            if p + 1 >= L:
                return bad
            s, k = tok[p], tok[p + 1]
            if not abs(s) <= max_abs or k != np.floor(k) or k < 0 or p + 2 + k > L:
                return bad
            p += 2 + np.int64(k)
            m += 1
    if p != L:
        return bad
    var = np.empty(m, np.int64)
    score = np.empty(m, np.float64)
    start = np.empty(m, np.int64)
    size = np.empty(m, np.int64)
    lines = np.empty(1 + n + m, np.int64)
    lines[0] = 1
    # pass 2: fill, checking each parent
    p = 1
    e = 0
    ln = 1
    for _ in range(n):
        v = np.int64(tok[p])
        c = np.int64(tok[p + 1])
        lines[ln] = 2
        ln += 1
        p += 2
        for _j in range(c):
            k = np.int64(tok[p + 1])
            prev = -1.0
            for q in range(p + 2, p + 2 + k):
                x = tok[q]
                if x != np.floor(x) or x <= prev or x >= n or x == v:  # sorted, no repeats, in range
                    return bad
                prev = x
            var[e], score[e], start[e], size[e] = v, tok[p], p + 2, k
            lines[ln] = 2 + k
            ln += 1
            e += 1
            p += 2 + k
    return True, n, var, score, start, size, lines


def _tokens_per_line(raw: bytes) -> np.ndarray:
    """How many whitespace-separated tokens each non-blank line of ``raw`` holds."""
    b = np.frombuffer(raw, np.uint8)
    space = (b == 32) | (b == 9) | (b == 10) | (b == 13) | (b == 11) | (b == 12)
    starts = np.flatnonzero(~space & np.concatenate((np.ones(1, np.bool_), space[:-1])))
    line_of = np.searchsorted(np.flatnonzero(b == 10), starts)
    counts = np.bincount(line_of)
    return counts[counts > 0]


def read_index_stream(raw: bytes, max_abs: float):
    """(n, parent_sets, scores) of a file in the strict index dialect, each variable's
    sets best first (ties: fewer parents, then lexicographic); None where the file is not
    in that dialect or anything in it is out of place (the caller then reads it line by
    line and names the fault)."""
    if b"#" in raw:
        return None
    try:
        tok = np.array(raw.split(), dtype=np.float64)
    except ValueError:  # a name, or a token that is no number
        return None
    ok, n, var, score, start, size, lines = _walk(tok, max_abs)
    if not ok:
        return None
    per_line = _tokens_per_line(raw)
    if per_line.size != lines.size or not np.array_equal(per_line, lines):
        return None
    width = int(size.max(initial=0))
    parents = np.full((var.size, max(width, 1)), -1, np.int64)
    for j in range(width):
        has = size > j
        parents[has, j] = tok[start[has] + j].astype(np.int64)
    # best first within each variable: by variable, −score, size, then the parents
    keys = [parents[:, j] for j in range(width - 1, -1, -1)] + [size, -score, var]
    order = np.lexsort(keys)
    tuples: list = [None] * var.size
    for k in np.unique(size).tolist():
        rows = np.flatnonzero(size == k)
        for i, t in zip(rows.tolist(), map(tuple, parents[rows, :k].tolist())):
            tuples[i] = t
    ordered = [tuples[i] for i in order.tolist()]
    bounds = np.concatenate(([0], np.cumsum(np.bincount(var, minlength=n))))
    score = score[order]
    psets, scores = [], []
    for v in range(n):
        a, b = int(bounds[v]), int(bounds[v + 1])
        sets = ordered[a:b]
        if len(set(sets)) != len(sets):  # a set listed twice
            return None
        psets.append(sets)
        scores.append(score[a:b].copy())
    return n, psets, scores
