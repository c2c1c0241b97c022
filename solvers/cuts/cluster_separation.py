"""Separation of the cluster constraints (3) of formulations/cluster_ilp.py at a
fractional point x: find C with  Σ_{v∈C} Σ_{W∩C≠∅} x(W→v) > |C| − 1.

and of the k-cluster rows (4), Σ_{v∈C} Σ_{|W∩C|≥k} x(W→v) ≤ |C| − k, for k ≥ 2.

and of the matroid rows (5) with parallel classes.

Four routines, used in this order by solvers/cuts/branch_and_cut.py:
- ``greedy_clusters``: a growth heuristic for (3), compiled: per seed, each support
  family enters and leaves the gains once, and each step scans the n vertices;
- ``local_kclusters``: local search for (4) from the clusters the greedy found. On
  mushroom's root point it found the most violated 2-cluster row (0.74) in 7 ms, where the
  exact sub-IP took 1.3 s;
- ``local_matroid_rows``: local search for (5) over partitions of a cluster into parallel
  classes, from the clusters of the previous routines;
- ``exact_clusters``: the sub-IP of Bartlett & Cussens (2017, Sec. 4), which finds a most
  violated cluster or proves there is none. With binary K_u (u ∈ C) and J_f for every
  family f = (W→v) with x_f > 0 and W ≠ ∅:

      max  Σ_f x_f·J_f − Σ_u K_u
      s.t. J_f ≤ K_v                   (the child is in C)
           J_f ≤ Σ_{u∈W} K_u           (some parent is in C)
           Σ_u K_u ≥ 2

  A solution of value > −1 is a violated cluster, since at an optimum J_f = 1 exactly for
  the families counted on the left of (3). Solved by a second SCIP instance, with the
  objective limit −1 so that only violated clusters count as solutions. For (4),
  k·J_f ≤ Σ_{u∈W} K_u and Σ_u K_u ≥ k + 1, objective limit −k.
"""

from __future__ import annotations

import functools
import time

import numpy as np
from numba import njit

from twbn.formulations.cluster_ilp import FamilyTable
from twbn.scoring.errors import ParameterError
from twbn.solvers.budget import passed, seconds_to

__all__ = ["greedy_clusters", "exact_clusters", "local_kclusters", "local_matroid_rows"]

#: A cut must be violated by more than this to be added.
MIN_VIOLATION = 1e-4
_SUPPORT = 1e-6


def _support(table: FamilyTable, x: np.ndarray, k: int = 1) -> np.ndarray:
    """The families with x_f > 0 and at least k parents: the only ones a row (3)/(4) counts."""
    return np.flatnonzero((x > _SUPPORT) & (table.n_parents >= k))


#: Fixed-point scale of the greedy's sums: exact integer arithmetic, so that adding a
#: family's weight and taking it away later leaves a gain exactly as it was (ties among
#: vertices then break as a from-scratch sum would break them); 2^-32 is far below
#: MIN_VIOLATION, and sums stay below 2^63 up to 2^31 families.
_FIXED = float(2 ** 32)
#: Seeds per compiled call between two looks at the deadline.
_SEEDS_PER_CALL = 64


def greedy_clusters(table: FamilyTable, x: np.ndarray, *, max_cuts: int = 50,
                    deadline: float | None = None) -> list[list[int]]:
    """Violated clusters grown greedily from each child in the support of x: add the
    vertex whose arrival raises the left-hand side minus |C| − 1 the most; stop at a
    violation, or when the slack drops below −1 (then the cluster is far from violated).
    Returns distinct clusters, most violated first; may miss violated clusters. Past
    ``deadline`` (time.monotonic()) no further child is tried.

    The gains are kept up to date as C grows (each family enters and leaves the sums once
    per seed, through its at most a few parents) by a compiled kernel, instead of summed
    again over the support at every step: at munin (n = 1,041) the LP's separation took
    up to 8.6 s a round that way."""
    supp = _support(table, x)
    if supp.size == 0:
        return []
    n = table.n
    ptr, idx = table.parent_index  # the support's slice of it: each family's parents
    counts = ptr[supp + 1] - ptr[supp]
    par_ptr = _offsets(counts)
    rows = np.repeat(np.arange(len(supp)), counts)
    par_idx = idx[np.repeat(ptr[supp] - par_ptr[:-1], counts) + np.arange(par_ptr[-1])]
    child = table.child[supp].astype(np.int64)
    w = x[supp].astype(np.float64)
    wf = np.rint(w * _FIXED).astype(np.int64)
    bp_ptr = _offsets(np.bincount(par_idx, minlength=n))  # families by parent
    bp_idx = rows[np.argsort(par_idx, kind="stable")].astype(np.int64)
    bc_ptr = _offsets(np.bincount(child, minlength=n))  # families by child
    bc_idx = np.argsort(child, kind="stable").astype(np.int64)
    seeds = np.unique(child)
    found: dict[frozenset, float] = {}
    at, batch = 0, _SEEDS_PER_CALL
    while at < len(seeds):
        if seconds_to(deadline) <= 0:  # inf without one
            break
        began = time.monotonic()
        clusters, viol = _grow(n, child, w, wf, par_ptr, par_idx, bp_ptr, bp_idx, bc_ptr, bc_idx,
                               seeds[at:at + batch], int(round(MIN_VIOLATION * _FIXED)))
        for c, v in zip(clusters, viol.tolist()):
            if c.any():
                found[frozenset(np.flatnonzero(c).tolist())] = v
        at += batch
        if deadline is not None:
            # a seed's growth costs O(n) a step, up to n steps: at n = 10,000 a call of 64
            # seeds took up to 1.7 s, past the deadline; each call now takes about a tenth
            # of what is left, judged by the last one's seconds per seed, and at most twice
            # the last one's seeds (cheap seeds and dear ones come in runs)
            per_seed = max(1e-6, (time.monotonic() - began) / len(clusters))
            batch = int(max(1, min(2 * batch, _SEEDS_PER_CALL, 0.1 * seconds_to(deadline) / per_seed)))
    best = sorted(found.items(), key=lambda kv: -kv[1])[:max_cuts]
    return [sorted(c) for c, viol in best if viol > MIN_VIOLATION]


def _offsets(counts: np.ndarray) -> np.ndarray:
    """Start offsets of consecutive groups of these sizes, with the total at the end."""
    out = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


@njit(cache=True, nogil=True)
def _grow(n, child, w, wf, par_ptr, par_idx, bp_ptr, bp_idx, bc_ptr, bc_idx, seeds, min_violation):
    """For each seed, the greedy growth of greedy_clusters: (len(seeds), n) masks of the
    violated clusters found (all False where none) and their violations at x."""
    out = np.zeros((len(seeds), n), dtype=np.bool_)
    viol = np.zeros(len(seeds))
    in_c = np.zeros(n, dtype=np.bool_)
    hit = np.zeros(len(child), dtype=np.bool_)  # the family has a parent in C
    gain = np.zeros(n, dtype=np.int64)  # arriving v: families of v hit, plus open families v would hit
    for i in range(len(seeds)):
        in_c[:] = False
        hit[:] = False
        gain[:] = 0
        _join(seeds[i], in_c, hit, gain, child, wf, par_ptr, par_idx, bp_ptr, bp_idx, bc_ptr, bc_idx)
        value = 0  # LHS − (|C| − 1), fixed point
        for _ in range(n - 1):
            u, best = -1, 0
            for v in range(n):
                if not in_c[v] and (u < 0 or gain[v] > best):
                    u, best = v, gain[v]
            if u < 0:
                break
            value += best - np.int64(_FIXED)
            if value < -np.int64(_FIXED):
                break
            _join(u, in_c, hit, gain, child, wf, par_ptr, par_idx, bp_ptr, bp_idx, bc_ptr, bc_idx)
            if value > min_violation:
                lhs, size = 0.0, 0
                for f in range(len(child)):  # the row at x itself, not its fixed-point copy
                    if hit[f] and in_c[child[f]]:
                        lhs += w[f]
                for v in range(n):
                    if in_c[v]:
                        size += 1
                out[i] = in_c
                viol[i] = lhs - (size - 1)
                break
    return out, viol


@njit(cache=True, nogil=True)
def _join(u, in_c, hit, gain, child, wf, par_ptr, par_idx, bp_ptr, bp_idx, bc_ptr, bc_idx):
    """u enters C: the families it is a parent of become hit (their child gains them; an
    open one, child in C, leaves its parents' sums), and u's own families not hit open."""
    in_c[u] = True
    for j in range(bp_ptr[u], bp_ptr[u + 1]):
        f = bp_idx[j]
        if not hit[f]:
            hit[f] = True
            gain[child[f]] += wf[f]
            if in_c[child[f]]:
                for q in range(par_ptr[f], par_ptr[f + 1]):
                    gain[par_idx[q]] -= wf[f]
    for j in range(bc_ptr[u], bc_ptr[u + 1]):
        f = bc_idx[j]
        if not hit[f]:
            for q in range(par_ptr[f], par_ptr[f + 1]):
                gain[par_idx[q]] += wf[f]


def exact_clusters(table: FamilyTable, x: np.ndarray, *, k: int = 1, time_limit: float | None = None,
                   max_cuts: int = 20) -> tuple[list[list[int]], bool]:
    """Violated clusters of (3), or for k > 1 of the k-cluster rows (4), from the sub-IP
    (all its solutions of value > −k, most violated first), and whether the search was
    complete (False on a time-out: then an empty list proves nothing). For k > 1 the
    second constraint becomes k·J_f ≤ Σ_{u∈W} K_u (at least k parents in C), only families
    with |W| ≥ k enter, and |C| ≥ k + 1."""
    from twbn.solvers.models.backends import scip_model
    from pyscipopt import quicksum

    if k < 1:
        raise ParameterError(f"k-cluster rows need k ≥ 1, got {k}")
    supp = _support(table, x, k)
    if supp.size == 0:
        return [], True
    involved = sorted(set(table.child[supp].tolist()) | set(np.flatnonzero(table.member[supp].any(axis=0)).tolist()))
    m = scip_model()  # a Ctrl-C during this sub-IP is twbn's, not SCIP's
    m.setParam("randomization/randomseedshift", 0)
    if time_limit is not None:
        m.setParam("limits/time", max(0.01, float(time_limit)))
    big_k = {u: m.addVar(name=f"K[{u}]", vtype="B", obj=-1.0) for u in involved}
    for f in supp.tolist():
        j = m.addVar(name=f"J[{f}]", vtype="B", obj=float(x[f]))
        m.addCons(j <= big_k[int(table.child[f])])
        m.addCons(k * j <= quicksum(big_k[u] for u in table.parents[f]))
    m.addCons(quicksum(big_k.values()) >= k + 1)
    m.setMaximize()
    m.setObjlimit(-k + MIN_VIOLATION)
    m.optimize()
    complete = m.getStatus() in ("optimal", "infeasible")
    found: dict[frozenset, float] = {}
    for sol in m.getSols():
        cluster = frozenset(u for u, var in big_k.items() if m.getSolVal(sol, var) > 0.5)
        if len(cluster) >= k + 1 and cluster not in found:
            found[cluster] = table.cluster_violation(x, sorted(cluster), k)
    best = sorted(found.items(), key=lambda kv: -kv[1])[:max_cuts]
    return [sorted(c) for c, viol in best if viol > MIN_VIOLATION], complete


def local_kclusters(table: FamilyTable, x: np.ndarray, k: int, seeds: list[list[int]], *,
                    max_cuts: int = 20, deadline: float | None = None) -> list[list[int]]:
    """Violated k-cluster rows (4) found by local search: from each seed cluster (and from
    V), repeatedly add or drop the one vertex that raises LHS − (|C| − k) the most, until
    no move does. Each step evaluates all n moves at once, O(S·n²) for S families in the
    support. Returns distinct violated clusters, most violated first; may miss some.
    Past ``deadline`` (time.monotonic()) no further search starts."""
    supp = _support(table, x, k)
    if supp.size == 0:
        return []
    n = table.n
    member = table.member[supp].astype(np.float32)  # float: a BLAS product below, exact for counts ≤ n
    child = table.child[supp]
    w = x[supp]
    eye = np.eye(n, dtype=bool)

    def value(clusters: np.ndarray) -> np.ndarray:  # (m, n) bool → (m,) LHS − RHS
        counts = clusters.astype(np.float32) @ member.T  # (m, S) parents inside each cluster
        hit = clusters[:, child] & (counts >= k)
        return hit.astype(float) @ w - (clusters.sum(axis=1) - k)

    found: dict[frozenset, float] = {}
    starts = [np.ones(n, dtype=bool)]
    for seed in seeds:
        c = np.zeros(n, dtype=bool)
        c[list(seed)] = True
        starts.append(c)
    for c in starts:
        if passed(deadline):
            break
        current = float(value(c[None, :])[0])
        while True:
            moves = c[None, :] ^ eye  # row u: c with u toggled
            moves = moves[moves.sum(axis=1) >= k + 1]
            if moves.size == 0:
                break
            vals = value(moves)
            best = int(np.argmax(vals))
            if vals[best] <= current + 1e-9:
                break
            c, current = moves[best], float(vals[best])
        if current > MIN_VIOLATION and c.sum() >= k + 1:
            found.setdefault(frozenset(np.flatnonzero(c).tolist()), current)
    best = sorted(found.items(), key=lambda kv: -kv[1])[:max_cuts]
    return [sorted(cl) for cl, _ in best]



def local_matroid_rows(table: FamilyTable, x: np.ndarray, r: int, seeds: list[list[int]], *,
                       max_cuts: int = 20, max_steps: int = 60, deadline: float | None = None) -> list[np.ndarray]:
    """Violated matroid rows (5) with parallel classes, found by local search: from each
    seed cluster in singleton classes (the k-cluster row at k = r), repeatedly make the one
    move that raises LHS − RHS the most, a move putting one variable outside C, into
    another class or into a class of its own, keeping m ≥ r + 1 classes (with fewer, (5)
    is a sum of rows (3)). The search is limited to the a variables near the fractional
    part of x: the seeds' members, the children and parents of fractional families, and
    the parents of those variables' families in the support. A heuristic restriction (it
    may miss rows, never makes one invalid) that keeps each step small in the
    within-k-tree models of S2 at n = 10,000. Each step evaluates all O(a·m) moves at
    once, O(a·m·S·a) for S families in the support. Returns class arrays over all n
    variables (−1 outside C), most violated first. Past ``deadline`` (time.monotonic())
    the search stops where it is (at n = 100 one call took up to 1.5 s)."""
    supp = _support(table, x, 1)
    fractional = supp[x[supp] < 1 - _SUPPORT]
    touched = np.zeros(table.n, dtype=bool)
    touched[table.child[fractional]] = True
    touched |= table.member[fractional].any(axis=0)
    for seed in seeds:
        touched[list(seed)] = True
    touched |= table.member[supp[touched[table.child[supp]]]].any(axis=0)
    active = np.flatnonzero(touched)
    n = len(active)  # the search runs over the active variables only
    if n == 0:
        return []
    pos = np.full(table.n, -1)
    pos[active] = np.arange(n)
    keep = supp[pos[table.child[supp]] >= 0]
    member = table.member[keep][:, active].astype(np.float32)  # (S, a)
    child = pos[table.child[keep]]
    w = x[keep]

    support_rows = np.arange(len(member))[:, None]

    def value(cands: np.ndarray) -> np.ndarray:  # (K, n) class arrays → (K,) LHS − RHS
        kk, m = len(cands), int(cands.max()) + 1
        onehot = np.zeros((n, m, kk), dtype=np.float32)
        ki, ui = np.nonzero(cands >= 0)
        onehot[ui, cands[ki, ui], ki] = 1.0
        # one float BLAS product for all candidates (numpy's integer matmul has no BLAS),
        # laid out (S, m, K) so that counting the classes hit sums m contiguous slices:
        # summing over a short last axis took two thirds of mushroom's search time
        hits = (member @ onehot.reshape(n, m * kk)).reshape(len(member), m, kk) > 0
        cls_child = cands[:, child].T  # (S, K)
        of_c = cls_child >= 0
        own = hits[support_rows, np.maximum(cls_child, 0), np.arange(kk)[None, :]]
        many = hits.view(np.uint8).sum(axis=1, dtype=np.uint8) >= r
        counted = (of_c & (own | many)).astype(float)
        classes = np.count_nonzero(onehot.any(axis=0), axis=0)
        val = w @ counted - ((cands >= 0).sum(axis=1) - np.minimum(classes, r))
        return np.where(classes >= r + 1, val, -np.inf)

    def canonical(c: np.ndarray) -> np.ndarray:
        out = np.full(n, -1, dtype=np.int64)
        ids: dict[int, int] = {}
        for u in np.flatnonzero(c >= 0):
            out[u] = ids.setdefault(int(c[u]), len(ids))
        return out

    found: dict[tuple, tuple[float, np.ndarray]] = {}
    late = functools.partial(passed, deadline)
    for seed in seeds:
        if len(seed) < r + 1 or late():
            continue
        c = np.full(n, -1, dtype=np.int64)
        c[pos[list(seed)]] = np.arange(len(seed))
        current = float(value(c[None, :])[0])
        for _ in range(max_steps):
            if late():
                break
            m = int(c.max()) + 1
            targets = np.arange(-1, m + 1)  # outside, each class, a new one
            cands = np.repeat(c[None, :], n * len(targets), axis=0)
            cands[np.arange(len(cands)), np.repeat(np.arange(n), len(targets))] = np.tile(targets, n)
            vals = value(cands)
            best = int(np.argmax(vals))
            if vals[best] <= current + 1e-9:
                break
            c, current = canonical(cands[best]), float(vals[best])
        while True:  # drop members that add nothing: sparser rows, equally violated
            drops = np.repeat(c[None, :], n, axis=0)
            drops[np.arange(n), np.arange(n)] = -1
            vals = value(drops)
            vals[c < 0] = -np.inf
            best = int(np.argmax(vals))
            if vals[best] < current - 1e-9:
                break
            c, current = canonical(drops[best]), max(current, float(vals[best]))
        if current > MIN_VIOLATION:
            key = tuple(sorted(tuple(np.flatnonzero(c == i).tolist()) for i in range(int(c.max()) + 1)))
            found.setdefault(key, (current, c))
    best = sorted(found.values(), key=lambda vc: -vc[0])[:max_cuts]
    out = []
    for _, c in best:
        classes = np.full(table.n, -1, dtype=np.int64)
        classes[active] = c
        out.append(classes)
    return out
