"""The PCART DP of ``twbn.scoring.local_structure`` compiled with numba, over dense node ids.

A node packs one field per predictor into an integer: a categorical predictor with k
values takes k bits (the mask of values in the node), a continuous one with at most s
splits takes the bits of level·2^s + index (its dyadic interval). With B bits in all,
the memo is three dense arrays of 2^B entries (best score, leaves, the node after
dropping absent values), so ``fits`` allows B ≤ ``MAX_BITS``. The DP is a depth-first
search with an explicit stack: a node is finished once all children of all its splits
are; a node's atoms are found by scanning the family's atoms (O(atoms·predictors)).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["field_widths", "fits", "pcart_dp"]

#: Dense memo up to 2^20 nodes (about 25 MB).
MAX_BITS = 20


def field_widths(sizes: list[int], categorical: list[bool], max_splits: int) -> list[int]:
    return [k if c else int((max_splits + 1) << max_splits).bit_length() for k, c in zip(sizes, categorical)]


def fits(sizes: list[int], categorical: list[bool], max_splits: int) -> bool:
    return sum(field_widths(sizes, categorical, max_splits)) <= MAX_BITS


@njit(cache=True, nogil=True)
def _inside(node, atoms, is_cat, offsets, widths, s, out):
    """Fill ``out`` with the atoms in ``node``; return how many."""
    p, m = atoms.shape
    cnt = 0
    for a in range(m):
        ok = True
        for i in range(p):
            f = (node >> offsets[i]) & ((1 << widths[i]) - 1)
            c = atoms[i, a]
            if is_cat[i]:
                if (f >> c) & 1 == 0:
                    ok = False
                    break
            else:
                level = f >> s
                idx = f & ((1 << s) - 1)
                if (c >> (s - level)) != idx:
                    ok = False
                    break
        if ok:
            out[cnt] = a
            cnt += 1
    return cnt


@njit(cache=True, nogil=True)
def _resolve(node, atoms, is_cat, offsets, widths, s, reduced, buf):
    """The node with absent categorical values dropped, or −1 when it holds no atom."""
    r = reduced[node]
    if r != -2:
        return r
    cnt = _inside(node, atoms, is_cat, offsets, widths, s, buf)
    if cnt == 0:
        reduced[node] = -1
        return -1
    out = node
    p = atoms.shape[0]
    for i in range(p):
        if is_cat[i]:
            mask = 0
            for j in range(cnt):
                mask |= 1 << atoms[i, buf[j]]
            out = (out & ~(((1 << widths[i]) - 1) << offsets[i])) | (mask << offsets[i])
    reduced[node] = out
    return out


@njit(cache=True, nogil=True)
def _leaf(node, atoms, is_cat, offsets, widths, s, buf, counts, n_a, mean_a, m2_a, response_cat, alpha, nig):
    cnt = _inside(node, atoms, is_cat, offsets, widths, s, buf)
    if response_cat:
        r = counts.shape[1]
        total = 0.0
        acc = 0.0
        for x in range(r):
            c = 0.0
            for j in range(cnt):
                c += counts[buf[j], x]
            total += c
            acc += math.lgamma(c + alpha) - math.lgamma(alpha)
        return math.lgamma(r * alpha) - math.lgamma(total + r * alpha) + acc
    n = 0.0
    sm = 0.0
    for j in range(cnt):
        n += n_a[buf[j]]
        sm += n_a[buf[j]] * mean_a[buf[j]]
    if n == 0.0:
        return 0.0
    mu = sm / n
    ss = 0.0
    for j in range(cnt):
        d = mean_a[buf[j]] - mu
        ss += m2_a[buf[j]] + n_a[buf[j]] * d * d
    nu, lam, mu_bar, a = nig[0], nig[1], nig[2], nig[3]
    t = n * a * (mu - mu_bar) ** 2 / (n + a)
    return (-0.5 * n * math.log(math.pi) + 0.5 * nu * math.log(lam * nu) + 0.5 * math.log(a)
            - 0.5 * math.log(n + a) + math.lgamma((n + nu) / 2) - math.lgamma(nu / 2)
            - 0.5 * (n + nu) * math.log(ss + t + nu * lam))


@njit(cache=True, nogil=True)
def _children(node, is_cat, offsets, widths, s, out):
    """Pairs of child nodes of every split of ``node`` into out (k×2); returns k."""
    k = 0
    p = is_cat.shape[0]
    for i in range(p):
        f = (node >> offsets[i]) & ((1 << widths[i]) - 1)
        clear = node & ~(((1 << widths[i]) - 1) << offsets[i])
        if is_cat[i]:
            if f & (f - 1) == 0:
                continue
            low = f & -f
            rest = f ^ low
            sub = rest
            while True:
                if sub != rest:
                    a = low | sub
                    out[k, 0] = clear | (a << offsets[i])
                    out[k, 1] = clear | ((f ^ a) << offsets[i])
                    k += 1
                if sub == 0:
                    break
                sub = (sub - 1) & rest
        else:
            level = f >> s
            idx = f & ((1 << s) - 1)
            if level < s:
                out[k, 0] = clear | ((((level + 1) << s) | (2 * idx)) << offsets[i])
                out[k, 1] = clear | ((((level + 1) << s) | (2 * idx + 1)) << offsets[i])
                k += 1
    return k


@njit(cache=True, nogil=True)
def pcart_dp(atoms, is_cat, offsets, widths, s, root, counts, n_a, mean_a, m2_a, response_cat, log_gamma, alpha,
             nig, max_children):
    """(best score, leaves) of the PCART DP from ``root`` (see the module docstring)."""
    size = 1 << int(widths.sum())
    best = np.zeros(size)
    leaves = np.zeros(size, np.int64)
    done = np.zeros(size, np.bool_)
    reduced = np.full(size, -2, np.int64)
    buf = np.empty(atoms.shape[1], np.int64)
    kids = np.empty((max_children, 2), np.int64)
    root = _resolve(root, atoms, is_cat, offsets, widths, s, reduced, buf)
    if root < 0:
        return log_gamma, 1
    stack = [root]
    while len(stack) > 0:
        node = stack[-1]
        if done[node]:
            stack.pop()
            continue
        k = _children(node, is_cat, offsets, widths, s, kids)
        pending = False
        for j in range(k):
            for side in range(2):
                r = _resolve(kids[j, side], atoms, is_cat, offsets, widths, s, reduced, buf)
                if r >= 0 and not done[r]:
                    stack.append(r)
                    pending = True
        if pending:
            continue
        val = log_gamma + _leaf(node, atoms, is_cat, offsets, widths, s, buf, counts, n_a, mean_a, m2_a,
                                response_cat, alpha, nig)
        nl = 1
        for j in range(k):
            va, la = log_gamma, 1
            ra = reduced[kids[j, 0]]
            if ra >= 0:
                va, la = best[ra], leaves[ra]
            vb, lb = log_gamma, 1
            rb = reduced[kids[j, 1]]
            if rb >= 0:
                vb, lb = best[rb], leaves[rb]
            if va + vb > val:
                val = va + vb
                nl = la + lb
        best[node] = val
        leaves[node] = nl
        done[node] = True
        stack.pop()
    return best[root], leaves[root]
