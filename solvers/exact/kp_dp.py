"""Exact learning of Bayesian networks of treewidth ≤ w (Korhonen & Parviainen 2013, Thm 1).

For a bag X (|X| = w+1), a permutation σ of X, S ⊆ X and M ⊇ X, g(σ, S, M) is the best
S-score of a *rooted* (σ,S)-DAG on M of treewidth ≤ w: a DAG on M compatible with σ, in
which the vertices of X∖S have no parents, with a fat tree decomposition rooted at X
(Sec. 5). The paper's recurrences, computed in order of |M|:

- |M| = w+1: g(σ,S,X) = Σ_{u∈S} f̂_u(P_{σ,u}), P_{σ,u} the vertices before u in σ and
  f̂_u(P) the best cached parent set of u inside P;
- swap (eqs. 6–7): F(γ,Z,M') = max_{u∈M'∖Y} max_{ζρ=γ} g(ζuρ, Z∪{u}, M') for |Y| = w;
  K(σ,S,M) = max_{v∈X} max_{Z⊆S∖{v}} F(σ∖v, Z, M∖{v}) + Σ_{u∈S∖Z} f̂_u(P_{σ,u});
- join (eq. 5): J(σ,S,M) = max over M1 ∪ M2 = M, M1 ∩ M2 = X, M1, M2 ≠ X of
  max_{Z⊆S} g(σ,Z,M1) + g(σ,S∖Z,M2);
- g = max(K, J) (J only when |M| ≥ w+3); the optimum is max_{X,σ} g(σ, X, N).

Time 3^n·n^(w+O(1)), space 2^n·n^(w+O(1)) (Theorem 1). Engineering the paper lacked
(its Python/Cython version ran out of memory at n = 14, w = 3): dense float64 arrays
indexed by bitmasks (no dictionaries of tuples), g[X, σ, M∖X, S] with S innermost so the
join's subset convolutions read contiguous memory, compiled kernels (numba), symmetric
join splits counted once, and −∞ states skipped. The network is recovered by re-deriving
the maximising choices top-down, and a width-w tree decomposition (hence an elimination
order) comes out of the same traversal (the paper's Remark 13).
"""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
from numba import njit

from twbn.scoring.cache import ParentSet, ScoreCache
from twbn.solvers.exact.unbounded import _compress, best_parent_tables, unbounded_optimum
from twbn.scoring.errors import ParameterError, TwbnError
from twbn.solvers.budget import passed

__all__ = ["DPTimeout", "table_bytes", "bounded_treewidth_optimum"]

NEG = -np.inf
#: Refuse instances whose tables would exceed this many bytes (the machine has 24 GB).
DEFAULT_MEMORY_LIMIT = 18 * 2**30


class DPTimeout(TwbnError):
    """The time limit ran out before the DP finished (no answer, never a wrong one)."""


def table_bytes(n: int, w: int) -> int:
    """Bytes of the g and F tables for n variables and treewidth w."""
    b = w + 1
    if n <= b or w < 1:
        return 0
    g = math.comb(n, b) * math.factorial(b) * 2**n
    f = math.comb(n, w) * math.factorial(w) * 2**n
    return 8 * (g + f)


def _masks_by_popcount(bits: int) -> list[np.ndarray]:
    masks = np.arange(1 << bits, dtype=np.int64)
    pops = np.array([bin(int(m)).count("1") for m in masks]) if bits else np.zeros(1, int)
    return [masks[pops == r] for r in range(bits + 1)]


@njit(cache=True)
def _round_F(yi, masks, F, g, addv, qpos, ins_perm, expand_u, n_gamma, w):
    """F[yi, γ, RY, Z] for every RY in ``masks`` (eq. 6)."""
    nz = 1 << w
    for mi in range(masks.shape[0]):
        ry = masks[mi]
        for gi in range(n_gamma):
            for z in range(nz):
                F[yi, gi, ry, z] = -np.inf
            rest = ry
            while rest:
                low = rest & -rest
                cu = 0
                while (low >> cu) != 1:
                    cu += 1
                rest ^= low
                xi2 = addv[yi, cu]
                q = qpos[yi, cu]
                r2 = (ry & ((1 << cu) - 1)) | ((ry >> (cu + 1)) << cu)
                for t in range(w + 1):
                    pi2 = ins_perm[gi, q, t]
                    for z in range(nz):
                        val = g[xi2, pi2, r2, expand_u[q, z]]
                        if val > F[yi, gi, ry, z]:
                            F[yi, gi, ry, z] = val


@njit(cache=True)
def _round_g(xi, masks, r, g, F, base, remv, cvpos, del_perm, n_sigma, b):
    """g[xi, σ, R, S] for every R in ``masks`` (|R| = r ≥ 1): max(K, J) (eqs. 5, 7)."""
    ns = 1 << b
    out = np.empty(ns)
    for mi in range(masks.shape[0]):
        R = masks[mi]
        for pi in range(n_sigma):
            for s in range(ns):
                out[s] = -np.inf
            # swap: the root bag's vertex v (position p) is the one introduced last
            for p in range(b):
                yi = remv[xi, p]
                cv = cvpos[xi, p]
                gi = del_perm[pi, p]
                ry = (R & ((1 << cv) - 1)) | ((R >> cv) << (cv + 1))
                for s in range(ns):
                    srest = s & ~(1 << p)
                    z = srest
                    while True:
                        zy = (z & ((1 << p) - 1)) | ((z >> (p + 1)) << p)
                        fv = F[yi, gi, ry, zy]
                        if fv > -np.inf:
                            val = fv + base[xi, pi, s ^ z]
                            if val > out[s]:
                                out[s] = val
                        if z == 0:
                            break
                        z = (z - 1) & srest
            # join: M∖X split into A ∪ B, A holding R's lowest vertex (each split once)
            if r >= 2:
                low = R & -R
                a = (R - 1) & R
                while a:
                    if a & low and a != R:
                        bb = R ^ a
                        for s in range(ns):
                            z = s
                            while True:
                                lv = g[xi, pi, a, z]
                                if lv > -np.inf:
                                    rv = g[xi, pi, bb, s ^ z]
                                    if rv > -np.inf and lv + rv > out[s]:
                                        out[s] = lv + rv
                                if z == 0:
                                    break
                                z = (z - 1) & s
                    a = (a - 1) & R
            for s in range(ns):
                g[xi, pi, R, s] = out[s]


class _Tables:
    """Index tables linking bags X (w+1 vertices), their w-subsets Y, permutations and masks."""

    def __init__(self, n: int, w: int):
        b = w + 1
        self.n, self.w, self.b = n, w, b
        self.X = list(itertools.combinations(range(n), b))
        self.Y = list(itertools.combinations(range(n), w))
        self.xidx = {x: i for i, x in enumerate(self.X)}
        self.yidx = {y: i for i, y in enumerate(self.Y)}
        self.Xcomp = [[v for v in range(n) if v not in x] for x in self.X]
        self.Ycomp = [[v for v in range(n) if v not in y] for y in self.Y]
        self.perms_b = list(itertools.permutations(range(b)))
        self.perms_w = list(itertools.permutations(range(w)))
        pb = {p: i for i, p in enumerate(self.perms_b)}
        pw = {p: i for i, p in enumerate(self.perms_w)}
        self.pb, self.pw = pb, pw
        nX, nY = len(self.X), len(self.Y)
        self.remv = np.empty((nX, b), np.int64)
        self.cvpos = np.empty((nX, b), np.int64)
        for i, x in enumerate(self.X):
            for p, v in enumerate(x):
                self.remv[i, p] = self.yidx[x[:p] + x[p + 1:]]
                self.cvpos[i, p] = sum(1 for c in self.Xcomp[i] if c < v)
        self.addv = np.empty((nY, n - w), np.int64)
        self.qpos = np.empty((nY, n - w), np.int64)
        for i, y in enumerate(self.Y):
            for cu, u in enumerate(self.Ycomp[i]):
                self.addv[i, cu] = self.xidx[tuple(sorted(y + (u,)))]
                self.qpos[i, cu] = sum(1 for a in y if a < u)
        self.del_perm = np.empty((len(self.perms_b), b), np.int64)
        for i, s in enumerate(self.perms_b):
            for p in range(b):
                self.del_perm[i, p] = pw[tuple(j - (j > p) for j in s if j != p)]
        self.ins_perm = np.empty((len(self.perms_w), b, b), np.int64)
        for i, gm in enumerate(self.perms_w):
            for q in range(b):
                shifted = [j + (j >= q) for j in gm]
                for t in range(b):
                    self.ins_perm[i, q, t] = pb[tuple(shifted[:t] + [q] + shifted[t:])]
        self.expand_u = np.empty((b, 1 << w), np.int64)
        for q in range(b):
            for z in range(1 << w):
                self.expand_u[q, z] = (z & ((1 << q) - 1)) | ((z >> q) << (q + 1)) | (1 << q)


def bounded_treewidth_optimum(
    cache: ScoreCache,
    w: int,
    *,
    time_limit: float | None = None,
    memory_limit: int = DEFAULT_MEMORY_LIMIT,
    progress=None,
) -> tuple[list[ParentSet], float, list[int], dict]:
    """An optimal DAG of treewidth ≤ w over the cache's candidates.

    Returns (parents, score, elimination order of width ≤ w, stats). Raises
    :class:`DPTimeout` when ``time_limit`` (seconds) runs out, ValueError when the tables
    would exceed ``memory_limit`` bytes or no network of treewidth ≤ w exists.
    """
    t0 = time.monotonic()
    n = cache.n_variables
    if w < 0:
        raise ParameterError("treewidth bound must be >= 0")
    # only parent sets of size <= w can occur (a family is a clique of the moral graph)
    fams = [{ps: s for ps, s in zip(cache.parent_sets[v], cache.scores[v].tolist()) if len(ps) <= w} for v in range(n)]
    if any(not f for f in fams):
        raise ParameterError(f"some variable has no cached parent set of size <= {w}")
    small = ScoreCache.from_mapping(cache.names, fams, cache.arities)
    if w == 0:
        if any(() not in f for f in fams):
            raise ParameterError("treewidth 0 needs the empty parent set for every variable")
        return [()] * n, math.fsum(f[()] for f in fams), list(range(n)), {"algorithm": "empty network"}
    if n <= w + 1:
        parents, score = unbounded_optimum(small)
        return parents, score, list(range(n)), {"algorithm": "unbounded DP (n <= w+1)"}
    need = table_bytes(n, w)
    if need > memory_limit:
        raise ParameterError(
            f"the DP tables for n = {n}, w = {w} need {need / 2**30:.1f} GiB, over the limit of "
            f"{memory_limit / 2**30:.1f} GiB"
        )
    T = _Tables(n, w)
    values, args = best_parent_tables(small)
    base = _base(T, values, n, w + 1)
    g, F = _fill(T, base, n, w, None if time_limit is None else t0 + time_limit, t0, progress)
    full_r, full_s = (1 << (n - w - 1)) - 1, (1 << (w + 1)) - 1
    best = g[:, :, full_r, full_s]
    if not np.isfinite(best.max()):
        raise ParameterError(f"no network of treewidth <= {w} uses only cached parent sets")
    xi, pi = np.unravel_index(int(np.argmax(best)), best.shape)
    parents, bags, tree_parent = _Recovery(T, g, F, base, small, args, w + 1).run(int(xi), int(pi), full_r, full_s)
    stats = {
        "algorithm": "Korhonen-Parviainen DP (Theorem 1)",
        "table_entries": int(g.size + F.size),
        "table_bytes": need,
        "dp_seconds": round(time.monotonic() - t0, 4),
    }
    return parents, float(best[xi, pi]), _order_from_decomposition(bags, tree_parent, n), stats


def _base(T: "_Tables", values, n: int, b: int) -> np.ndarray:
    """base[x, σ, s]: the best families of the bag x's members in s, each choosing its
    parents among those before it in the permutation σ."""
    base = np.full((len(T.X), len(T.perms_b), 1 << b), NEG)
    for xi, x in enumerate(T.X):
        for pi, perm in enumerate(T.perms_b):
            f = np.empty(b)
            pre = 0
            for j in perm:
                f[j] = float(values[x[j]][_compress(pre, x[j])])
                pre |= 1 << x[j]
            for s in range(1 << b):
                base[xi, pi, s] = sum(f[j] for j in range(b) if (s >> j) & 1)
    return base


def _fill(T: "_Tables", base: np.ndarray, n: int, w: int, deadline, t0: float, progress):
    """The tables g and F, round by round over |M| = b + r; DPTimeout at ``deadline``."""
    b = w + 1
    nX, nsig, ngam = len(T.X), len(T.perms_b), len(T.perms_w)
    g = np.full((nX, nsig, 1 << (n - b), 1 << b), NEG)
    F = np.full((len(T.Y), ngam, 1 << (n - w), 1 << w), NEG)
    g[:, :, 0, :] = base
    masks_b = _masks_by_popcount(n - b)
    masks_w = _masks_by_popcount(n - w)
    rounds = range(1, n - b + 1)
    if progress:
        from tqdm import tqdm

        rounds = tqdm(rounds, desc=f"dp n={n} w={w}", unit="round", leave=False)
    for r in rounds:  # |M| = b + r
        for yi in range(len(T.Y)):
            _round_F(yi, masks_w[r], F, g, T.addv, T.qpos, T.ins_perm, T.expand_u, ngam, w)
        for xi in range(nX):
            _round_g(xi, masks_b[r], r, g, F, base, T.remv, T.cvpos, T.del_perm, nsig, b)
            if passed(deadline):
                raise DPTimeout(f"dp stopped after {time.monotonic() - t0:.1f} s at |M| = {b + r} of {n}")
    return g, F


def _close(a: float, c: float) -> bool:
    """Whether table value ``a`` reproduces ``c`` (finite: a value on the optimal path);
    −∞ never matches it."""
    return math.isfinite(a) and abs(a - c) <= 1e-9 * max(1.0, abs(c))


class _Recovery:
    """The maximising choices re-derived top-down from the filled tables: every
    variable's parents, and the tree decomposition (bags, each bag's parent) they came from."""

    def __init__(self, T, g, F, base, small, args, b: int):
        self.T, self.g, self.F, self.base, self.small, self.args, self.b = T, g, F, base, small, args, b
        self.parents: list = [None] * small.n_variables

    def run(self, xi: int, pi: int, full_r: int, full_s: int):
        bags: list[tuple[int, ...]] = []
        tree_parent: list[int] = []
        stack = [(xi, pi, full_r, full_s, -1)]
        while stack:
            xi, pi, R, s, parent_node = stack.pop()
            node = len(bags)
            bags.append(self.T.X[xi])
            tree_parent.append(parent_node)
            if R == 0:
                self._assign(xi, pi, s)
                continue
            nxt = self._swap(xi, pi, R, s) or self._join(xi, pi, R, s)
            if nxt is None:
                raise AssertionError("dp recovery failed: no choice reproduces the table value")
            stack.extend(item + (node,) for item in nxt)
        assert all(p is not None for p in self.parents)
        return self.parents, bags, tree_parent

    def _assign(self, xi: int, pi: int, s: int) -> None:
        """The members of bag x in s take their best families before them in σ."""
        x, perm = self.T.X[xi], self.T.perms_b[pi]
        pre = 0
        for j in perm:
            if (s >> j) & 1:
                u = x[j]
                self.parents[u] = self.small.parent_sets[u][int(self.args[u][_compress(pre, u)])]
            pre |= 1 << x[j]

    def _swap(self, xi: int, pi: int, R: int, s: int):
        """The swap step that gave g[x, σ, R, s], its members assigned; the child state, or None."""
        T, g, target = self.T, self.g, self.g[xi, pi, R, s]
        for p in range(self.b):
            yi, cv, gi = T.remv[xi, p], T.cvpos[xi, p], T.del_perm[pi, p]
            ry = (R & ((1 << cv) - 1)) | ((R >> cv) << (cv + 1))
            for z in _subsets(s & ~(1 << p)):
                zy = (z & ((1 << p) - 1)) | ((z >> (p + 1)) << p)
                fv = self.F[yi, gi, ry, zy]
                if fv == NEG or not _close(fv + self.base[xi, pi, s ^ z], target):
                    continue
                for cu in _bits(ry):  # which u and insertion gave F
                    xi2, q = T.addv[yi, cu], T.qpos[yi, cu]
                    r2 = (ry & ((1 << cu) - 1)) | ((ry >> (cu + 1)) << cu)
                    for t in range(self.b):
                        pi2 = T.ins_perm[gi, q, t]
                        if _close(g[xi2, pi2, r2, T.expand_u[q, zy]], fv):
                            self._assign(xi, pi, s ^ z)
                            return [(int(xi2), int(pi2), int(r2), int(T.expand_u[q, zy]))]
        return None

    def _join(self, xi: int, pi: int, R: int, s: int):
        """The join that gave g[x, σ, R, s]: its two child states, or None."""
        g, target = self.g, self.g[xi, pi, R, s]
        low = R & -R
        for a in _subsets(R):
            if not (a & low) or a == R:
                continue
            bb = R ^ a
            for z in _subsets(s):
                lv, rv = g[xi, pi, a, z], g[xi, pi, bb, s ^ z]
                if lv > NEG and rv > NEG and _close(lv + rv, target):
                    return [(xi, pi, a, z), (xi, pi, bb, s ^ z)]
        return None


def _subsets(mask: int):
    z = mask
    while True:
        yield z
        if z == 0:
            return
        z = (z - 1) & mask


def _bits(mask: int):
    i = 0
    while mask:
        if mask & 1:
            yield i
        mask >>= 1
        i += 1


def _order_from_decomposition(bags: list[tuple[int, ...]], tree_parent: list[int], n: int) -> list[int]:
    """An elimination order of width ≤ max bag − 1 from a rooted tree decomposition:
    children are listed after parents, so walking nodes in reverse eliminates, at each
    node, the vertices that no ancestor bag holds (their neighbours all lie in the bag)."""
    order: list[int] = []
    seen: set[int] = set()
    for i in range(len(bags) - 1, -1, -1):
        up = set(bags[tree_parent[i]]) if tree_parent[i] >= 0 else set()
        for v in bags[i]:
            if v not in up and v not in seen:
                order.append(v)
                seen.add(v)
    order.extend(v for v in range(n) if v not in seen)
    return order
