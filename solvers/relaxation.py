"""A proved upper bound at any size: the cluster LP relaxation, certified as a Lagrangian.

The problem: every network of a bounded (or unbounded) problem is an integer point of
the cluster ILP (formulations/cluster_ilp.py, (1)–(3)); a treewidth bound only removes
points, so any upper bound on the unbounded problem over the same candidate sets bounds
the bounded one too. Relaxing the cluster rows (3) with multipliers λ_C ≥ 0 gives, for
*every* λ ≥ 0 and every set of clusters (weak duality; Jaakkola, Sontag, Globerson & Meila
2010 bound the same LP through its dual),

    L(λ) = Σ_C λ_C·(|C| − 1) + Σ_v max_W [ f_v(W) − Σ_{C ∋ v, W ∩ C ≠ ∅} λ_C ]

because each variable's family is one of its candidates (2) and a network satisfies every
row (3). With λ = 0 it is the trivial bound Σ_v max_W f_v(W).

The multipliers come from HiGHS solving the LP of (1), (2) and a growing set of cluster
rows (the pairs that can form a 2-cycle first, then rows (3) violated at the LP point,
found by ``greedy_clusters``), within a time limit. The LP starts with each variable's
best few families and takes in others as their reduced cost under the current duals makes
them better than every family already in (column generation): jester's 772,774 families
did not let the first LP finish in 10 s. L(λ) is evaluated over all families, so a bound
from a restricted LP is still a bound; the bound reported is L(λ) recomputed
here from the rows' duals, so it is a proof whatever the LP solver's tolerances, and it
never exceeds the trivial bound (λ = 0 is tried too). References: Cussens (2011),
Bartlett & Cussens (2017) for the rows and their separation.
"""

from __future__ import annotations

import math
import time

import numpy as np

from twbn.formulations.cluster_ilp import FamilyTable
from twbn.formulations.problem import Problem

__all__ = ["lagrangian_bound", "cluster_lp_bound", "BOUND_SHARE"]

from twbn.solvers.budget import BOUND_SHARE  # noqa: E402 (with the other shares)

#: Seconds per candidate family to build the first LP (the family table, the pair rows,
#: the first columns): jester's 772,774 families took 1.9 s before its first solve.
SETUP_S_PER_FAMILY = 2.5e-6
#: Cluster rows added per separation round, at most.
ROWS_PER_ROUND = 200
#: Column generation: the best families of each variable the LP starts with, and how
#: many of a variable's families enter per pricing round.
INITIAL_COLUMNS = 10
COLUMNS_PER_ROUND = 5


def _reduced(table: FamilyTable, row_families: list[np.ndarray], lam: np.ndarray) -> np.ndarray:
    """f_v(W) − Σ_{C ∋ v, W ∩ C ≠ ∅} λ_C for every family (the inner term of L(λ))."""
    penalty = np.zeros(table.size)
    for fams, mu in zip(row_families, lam):
        if mu > 0:
            penalty[fams] += mu
    return table.scores - penalty


def _value(table: FamilyTable, clusters: list[list[int]], lam: np.ndarray, reduced: np.ndarray) -> float:
    """L(λ) from the reduced scores."""
    constant = math.fsum((lam * np.array([len(c) - 1.0 for c in clusters])).tolist())
    return constant + math.fsum(np.maximum.reduceat(reduced, table.start[:-1]).tolist())


def lagrangian_bound(table: FamilyTable, clusters: list[list[int]], multipliers) -> float:
    """L(λ) of the module docstring for the given clusters and multipliers (negative
    ones count as 0). O(F + Σ row sizes) numpy work."""
    lam = np.maximum(np.asarray(multipliers, dtype=float), 0.0)
    return _value(table, clusters, lam, _reduced(table, [table.cluster_families(c) for c in clusters], lam))


def _pairs(table: FamilyTable) -> list[list[int]]:
    """The clusters {a, b} whose row (3) some pair of families can violate (a 2-cycle)."""
    fam, par = np.nonzero(table.member)
    arcs = set(zip(par.tolist(), table.child[fam].tolist()))
    return [[a, b] for a, b in sorted(arcs) if a < b and (b, a) in arcs]


def cluster_lp_bound(problem: Problem, *, time_limit: float = 10.0) -> tuple[float, dict]:
    """An upper bound on every network of ``problem`` from the cluster LP (module
    docstring), within about ``time_limit`` seconds.

    Parameters
    ----------
    problem : Problem
        Its candidate sets (bounded or not) define the LP.
    time_limit : float
        Seconds for the LP solves and separation; the last LP solved gives the bound.

    Returns
    -------
    bound : float
        L(λ), never above the trivial bound Σ_v max_W f_v(W).
    stats : dict
        ``trivial``, ``lp_value`` (the last LP's optimum), ``rows`` (cluster rows),
        ``rounds``, ``seconds``, ``complete`` (no violated row left: the bound is the LP
        relaxation's optimum).

    Examples
    --------
    >>> from twbn.scoring.cache import ScoreCache
    >>> # each of A, B prefers the other as parent (-1 each) to none (-5 each)
    >>> cache = ScoreCache.from_mapping("AB", [{(): -5.0, (1,): -1.0}, {(): -5.0, (0,): -1.0}])
    >>> bound, stats = cluster_lp_bound(Problem(cache))
    >>> stats["trivial"], bound
    (-2.0, -6.0)
    """
    import highspy

    from twbn.solvers.cuts.cluster_separation import MIN_VIOLATION, greedy_clusters
    from twbn.solvers.models.backends import quiet_highs

    t0 = time.monotonic()
    families = problem.candidates.n_parent_sets()
    if time_limit < SETUP_S_PER_FAMILY * families:
        # the first LP would not even be built in time: the trivial bound, now, rather than
        # the same bound after the limit (jester at 1.1 s: 1.9 s, no LP solved)
        trivial = math.fsum(float(sc[0]) for sc in problem.candidates.scores)
        return trivial, {"trivial": trivial, "lp_value": None, "rows": 0, "rounds": 0,
                         "seconds": round(time.monotonic() - t0, 3), "complete": False, "columns": 0,
                         "skipped": f"{families:,} families need about {SETUP_S_PER_FAMILY * families:.1f} s "
                                    f"to set up, more than the {time_limit:.2f} s given"}
    table = FamilyTable.from_cache(problem.candidates)
    n, size = table.n, table.size
    trivial = math.fsum(np.maximum.reduceat(table.scores, table.start[:-1]).tolist())
    h = quiet_highs()
    h.setOptionValue("threads", 1)
    h.addRows(n, np.ones(n), np.ones(n), 0, np.zeros(n, dtype=np.int32), np.zeros(0, dtype=np.int32),
              np.zeros(0))  # (2), filled as columns arrive
    in_lp = np.zeros(size, dtype=bool)
    columns: list[np.ndarray] = []  # LP column j is family order[j]
    clusters: list[list[int]] = []
    row_families: list[np.ndarray] = []  # all families each cluster row counts
    cmat = np.zeros((0, n), dtype=bool)  # cluster rows as vertex sets

    def add_columns(fams: np.ndarray) -> None:
        """Families as LP columns, with their entries in (2) and in every cluster row."""
        nonlocal cmat
        fams = np.asarray(fams, dtype=np.int64)
        child = table.child[fams]
        hits = (cmat.astype(np.int32) @ table.member[fams].T.astype(np.int32) > 0) & cmat[:, child]  # (R, B)
        starts, index = [], []
        for b, f in enumerate(fams):
            starts.append(len(index))
            index.append(int(child[b]))
            index.extend((n + np.flatnonzero(hits[:, b])).tolist())
        h.addCols(len(fams), -table.scores[fams], np.zeros(len(fams)), np.ones(len(fams)), len(index),
                  np.array(starts, dtype=np.int32), np.array(index, dtype=np.int32), np.ones(len(index)))
        in_lp[fams] = True
        columns.append(fams)

    def add_rows(rows: list[list[int]]) -> None:
        nonlocal cmat
        position = np.full(size, -1, dtype=np.int64)
        position[np.concatenate(columns)] = np.arange(sum(len(c) for c in columns))
        idx = []
        for c in rows:
            fams = table.cluster_families(c)
            row_families.append(fams)
            idx.append(position[fams[in_lp[fams]]].astype(np.int32))
        lens = np.array([len(i) for i in idx], dtype=np.int64)
        st = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int32)
        allidx = np.concatenate(idx).astype(np.int32) if idx else np.zeros(0, dtype=np.int32)
        h.addRows(len(rows), np.full(len(rows), -highspy.kHighsInf), np.array([len(c) - 1.0 for c in rows]),
                  len(allidx), st, allidx, np.ones(len(allidx)))
        clusters.extend(rows)
        extra = np.zeros((len(rows), n), dtype=bool)
        for r, c in enumerate(rows):
            extra[r, c] = True
        cmat = np.vstack([cmat, extra])

    # the best INITIAL_COLUMNS families of each variable first (stored best first); the
    # rest enter when their reduced cost says so (column generation)
    # and every empty parent set, which keeps the restricted LP feasible (a variable
    # without one — a required parent — brings all its families)
    empty = table.n_parents == 0
    first = np.concatenate([np.arange(table.start[v], min(table.start[v + 1], table.start[v] + INITIAL_COLUMNS))
                            if empty[table.start[v]:table.start[v + 1]].any() else
                            np.arange(table.start[v], table.start[v + 1]) for v in range(n)])
    first = np.union1d(first, np.flatnonzero(empty))
    add_columns(first)
    pairs = _pairs(table)
    if pairs:
        add_rows(pairs)
    best, lp_value, rounds, complete = trivial, None, 0, False
    while True:
        left = time_limit - (time.monotonic() - t0)
        if left <= 0.05:
            break
        h.setOptionValue("time_limit", h.getRunTime() + float(left))  # HiGHS's clock runs across solves
        h.run()
        status = h.getModelStatus()
        if status not in (highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kTimeLimit):
            # a warm-started simplex can end "unknown" after rows and columns were added
            # (jester k = 5, round 29); from scratch it solves
            h.clearSolver()
            h.run()
            status = h.getModelStatus()
        if status != highspy.HighsModelStatus.kOptimal:
            break
        rounds += 1
        sol = h.getSolution()
        lp_value = -h.getInfo().objective_function_value
        # HiGHS's row duals of a minimisation: ≤ 0 on a binding ≤ row; λ = −dual
        lam = np.maximum(-np.asarray(sol.row_dual)[n:], 0.0)
        reduced = _reduced(table, row_families, lam)
        best = min(best, _value(table, clusters, lam, reduced))
        if time.monotonic() - t0 >= time_limit:
            break
        # pricing: families outside the LP that beat every LP family of their variable
        in_best = np.maximum.reduceat(np.where(in_lp, reduced, -np.inf), table.start[:-1])
        better = ~in_lp & (reduced > in_best[table.child] + 1e-9 * np.maximum(1.0, np.abs(in_best[table.child])))
        if better.any():
            cand = np.flatnonzero(better)
            keep = []
            for v in np.unique(table.child[cand]):  # the few best of each variable
                of_v = cand[table.child[cand] == v]
                keep.append(of_v[np.argsort(-reduced[of_v])[:COLUMNS_PER_ROUND]])
            add_columns(np.concatenate(keep))
            continue
        order = np.concatenate(columns)
        x = np.zeros(size)
        x[order] = np.clip(np.asarray(sol.col_value), 0.0, 1.0)
        found = [c for c in greedy_clusters(table, x, max_cuts=ROWS_PER_ROUND, deadline=t0 + time_limit)
                 if table.cluster_violation(x, c) > MIN_VIOLATION]
        if not found:
            complete = True
            break
        add_rows(found)
    stats = {"trivial": trivial, "lp_value": lp_value, "rows": len(clusters), "rounds": rounds,
             "seconds": round(time.monotonic() - t0, 3), "complete": complete, "columns": int(in_lp.sum())}
    return best, stats
