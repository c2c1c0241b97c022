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
did not let the first LP finish in 10 s. Rows are separated at every LP point, priced or
not, and a row whose multiplier stays 0 for ``policy.lp_row_idle_rounds`` solves leaves the LP.
L(λ) is evaluated over all families, so a bound from a restricted LP is still a bound,
and so is one after rows left; the bound reported is L(λ) recomputed
here from the rows' duals, so it is a proof whatever the LP solver's tolerances, and it
never exceeds the trivial bound (λ = 0 is tried too). References: Cussens (2011),
Bartlett & Cussens (2017) for the rows and their separation.

The row families the LP separates (cluster rows, width rows, minor rows) and why each
holds are in ``solvers/lp_rows.py``.
"""

from __future__ import annotations

import math
import time
from typing import Callable, Sequence

import numpy as np
from numba import njit

from twbn.formulations.cluster_ilp import FamilyTable
from twbn.formulations.problem import Problem

from twbn.solvers.policy import DEFAULT_POLICY, Policy

__all__ = ["lagrangian_bound", "cluster_lp_bound", "Row", "RowFamily", "LpPoint", "ClusterRows", "WidthRows",
           "MinorRows", "rule_row", "minor_regions", "DEFAULT_ROWS"]

from twbn.solvers.lp_rows import (DEFAULT_ROWS, ClusterRows, LpPoint, MinorRows, Row, RowFamily,  # noqa: E402,F401
                                  WidthRows, minor_regions, rule_row, separate_width_rows, width_rhs, width_row)

# The LP's knobs (rows and columns per round, when idle rows leave, the set-up cost per
# family) are the Policy's ``lp_*`` fields, with their measurements (solvers/policy.py).


def _reduced(table: FamilyTable, row_families: list[np.ndarray], lam: np.ndarray,
             row_coefficients: list[np.ndarray | None] | None = None, out: "np.ndarray | None" = None) -> np.ndarray:
    """f_v(W) − Σ_r λ_r·a_r(W → v) for every family (the inner term of L(λ)); a cluster
    row's coefficients are 1 (None), a width row's the pairs it counts. ``out``: a buffer
    of the table's size to write into (the LP's rounds reuse one: each new 22 MB array at
    2.7 M families is a fresh mapping, faulted in page by page)."""
    if out is None:
        penalty = np.zeros(table.size)
    else:
        penalty = out
        penalty.fill(0.0)
    coefficients = row_coefficients if row_coefficients is not None else [None] * len(row_families)
    for fams, coef, mu in zip(row_families, coefficients, lam):
        if mu > 0:
            if coef is None:
                _add_at(penalty, fams, float(mu))
            else:
                penalty[fams] += mu * coef
    return np.subtract(table.scores, penalty, out=penalty)


@njit(cache=True, nogil=True)
def _add_at(penalty, fams, mu):  # pragma: no cover - compiled
    """penalty[fams] += mu in one pass over the (int32, distinct) indices: numpy's fancy
    ``+=`` converts them to intp and reads, adds and writes in three (at 2.7 M families,
    55 M entries a round, the LP lost a tenth of its rounds to it)."""
    for i in range(len(fams)):
        penalty[fams[i]] += mu


def _value(table: FamilyTable, rhs: np.ndarray, lam: np.ndarray, reduced: np.ndarray) -> float:
    """L(λ) from the reduced scores and the rows' right-hand sides."""
    return math.fsum((lam * rhs).tolist()) + math.fsum(np.maximum.reduceat(reduced, table.start[:-1]).tolist())


def lagrangian_bound(table: FamilyTable, clusters: list[list[int]], multipliers) -> float:
    """L(λ) of the module docstring for the given clusters and multipliers (negative
    ones count as 0). O(F + Σ row sizes) numpy work."""
    lam = np.maximum(np.asarray(multipliers, dtype=float), 0.0)
    rhs = np.array([len(c) - 1.0 for c in clusters])
    return _value(table, rhs, lam, _reduced(table, [table.cluster_families(c) for c in clusters], lam))


def _pairs(table: FamilyTable) -> list[list[int]]:
    """The clusters {a, b} whose row (3) some pair of families can violate (a 2-cycle)."""
    ptr, par = table.parent_index
    arcs = set(zip(par.tolist(), np.repeat(table.child, np.diff(ptr)).tolist()))
    return [[a, b] for a, b in sorted(arcs) if a < b and (b, a) in arcs]


@njit(cache=True, nogil=True)
def _column_rows(vptr, vrows, flipped, child, lo, hi, parents):  # pragma: no cover - compiled
    """For family b (child ``child[b]``, parents ``parents[lo[b]:hi[b]]``), the cluster
    rows that count it, ascending: ``rows[edges[b]:edges[b + 1]]``. A row as written (3)
    counts it when its cluster holds the child and one of the parents; a ``flipped`` row
    (the complement form) when it holds the child and none of them.
    ``vrows[vptr[u]:vptr[u + 1]]`` are the rows whose cluster holds u, ascending."""
    n_rows = len(flipped)
    stamp = np.zeros(n_rows, np.int64)
    edges = np.zeros(len(child) + 1, np.int64)
    for b in range(len(child)):  # counting pass
        for q in range(lo[b], hi[b]):
            u = parents[q]
            for j in range(vptr[u], vptr[u + 1]):
                stamp[vrows[j]] = b + 1
        c = child[b]
        found = 0
        for j in range(vptr[c], vptr[c + 1]):
            if (stamp[vrows[j]] == b + 1) != flipped[vrows[j]]:
                found += 1
        edges[b + 1] = edges[b] + found
    rows = np.empty(edges[-1], np.int64)
    stamp[:] = 0
    for b in range(len(child)):
        for q in range(lo[b], hi[b]):
            u = parents[q]
            for j in range(vptr[u], vptr[u + 1]):
                stamp[vrows[j]] = b + 1
        c = child[b]
        at = edges[b]
        for j in range(vptr[c], vptr[c + 1]):
            if (stamp[vrows[j]] == b + 1) != flipped[vrows[j]]:
                rows[at] = vrows[j]
                at += 1
    return edges, rows


def cluster_lp_bound(problem: Problem, *, time_limit: float = 10.0, width: bool = True,
                     on_bound: "Callable[[float], None] | None" = None,
                     policy: Policy = DEFAULT_POLICY, rows: "Sequence[RowFamily] | None" = None) -> tuple[float, dict]:
    """An upper bound on every network of ``problem`` from the cluster LP (module
    docstring), within about ``time_limit`` seconds.

    Parameters
    ----------
    problem : Problem
        Its candidate sets (bounded or not) define the LP.
    time_limit : float
        Seconds for the LP solves and separation; the last LP solved gives the bound.
    width : bool, default True
        Separate the width rows (W) and minor rows (M) of a bounded problem (with the
        default ``rows``).
    rows : sequence of RowFamily, optional
        The row families separated each round, in order (default ``DEFAULT_ROWS``: the
        cluster rows (3), the width rows (W), then the minor rows (M)); a researcher's own
        family is valid if each of its rows holds for every network of the cached parent sets.
    on_bound : callable, optional
        Called with each better bound as it is proved (round by round): a caller that
        cannot wait for the end (the LP in a process beside the method) keeps the last.
    policy : Policy, optional
        Its ``lp_*`` knobs; default: the measured ones.

    Returns
    -------
    bound : float
        L(λ), never above the trivial bound Σ_v max_W f_v(W).
    stats : dict
        ``trivial``, ``lp_value`` (the last LP's optimum), ``rows`` (rows in the last
        LP), ``dropped`` (rows taken out after ``policy.lp_row_idle_rounds`` solves without a multiplier),
        ``rounds``, ``seconds``, ``complete`` (no violated row left: the bound is the LP
        relaxation's optimum), ``entries`` (the last LP's nonzeros) and
        ``complement_rows`` (its cluster rows written as their complement).

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
    from scipy.sparse import csr_matrix, vstack

    from twbn.solvers.models.backends import quiet_highs

    t0 = time.monotonic()
    families = problem.candidates.n_parent_sets()
    if time_limit < policy.lp_setup_s_per_family * families:
        # the first LP would not even be built in time: the trivial bound, now, rather than
        # the same bound after the limit (jester at 1.1 s: 1.9 s, no LP solved)
        trivial = math.fsum(float(sc[0]) for sc in problem.candidates.scores)
        return trivial, {"trivial": trivial, "lp_value": None, "rows": 0, "rounds": 0,
                         "seconds": round(time.monotonic() - t0, 3), "complete": False, "columns": 0,
                         "skipped": f"{families:,} families need about {policy.lp_setup_s_per_family * families:.1f} s "
                                    f"to set up, more than the {time_limit:.2f} s given"}
    table = FamilyTable.from_cache(problem.candidates)
    n, size = table.n, table.size
    k = problem.treewidth
    if rows is None:
        rows = DEFAULT_ROWS if width else tuple(f for f in DEFAULT_ROWS if not isinstance(f, (WidthRows, MinorRows)))
    trivial = math.fsum(np.maximum.reduceat(table.scores, table.start[:-1]).tolist())
    h = quiet_highs()
    h.setOptionValue("threads", 1)
    h.addRows(n, np.ones(n), np.ones(n), 0, np.zeros(n, dtype=np.int32), np.zeros(0, dtype=np.int32),
              np.zeros(0))  # (2), filled as columns arrive
    in_lp = np.zeros(size, dtype=bool)
    columns: list[np.ndarray] = []  # LP column j is family order[j]
    kinds: list[str] = []  # each row's family (RowFamily.name)
    row_families: list[np.ndarray] = []  # all families each row counts (sorted)
    row_coefficients: list[np.ndarray | None] = []  # a row's coefficients; None: all 1
    rhs: list[float] = []
    # cluster rows as vertex sets (a listed row: empty), sparse: dense (rows, n) matrices and
    # their products with the columns' parents took 1.3 GB at n = 5,000 in one round
    cmat = csr_matrix((0, n), dtype=np.float32)
    listed: list[int] = []  # the rows whose families are found by list, not by a vertex set
    idle = np.zeros(0, dtype=np.int64)  # solves since each row last had a multiplier
    # rows written as their complement, Σ_{f ∉ row, child in C} x_f ≥ |C| − rhs (equal given
    # (2), and sparser for a large cluster: at n = 1,000 the LP reached 2.6 M entries, 550 MB
    # in HiGHS, as written); L(λ) still reads every row as written, with λ its dual
    flipped = np.zeros(0, dtype=np.bool_)
    dropped = 0  # rows taken out

    def add_columns(fams: np.ndarray) -> None:
        """Families as LP columns, with their entries in (2) and in every row."""
        nonlocal cmat
        fams = np.asarray(fams, dtype=np.int64)
        child = table.child[fams]
        # a row counts a family whose child is in its cluster and some parent too; found
        # from the rows of each vertex (cmat by column), in time and memory of the entries
        # themselves: the product of cmat with the families' parents (sparse or not) also
        # counts the rows that miss the child, 420 MB at n = 1,000 after 20 rounds
        by_vertex = cmat.tocsc()
        by_vertex.sort_indices()
        ptr, idx = table.parent_index
        edges, hit_r = _column_rows(by_vertex.indptr.astype(np.int64), by_vertex.indices.astype(np.int64),
                                    flipped, child, ptr[fams], ptr[fams + 1], idx)
        extra: list[list[tuple[int, float]]] = [[] for _ in fams]
        for r in listed:
            at = np.searchsorted(row_families[r], fams)
            at = np.minimum(at, max(0, len(row_families[r]) - 1))
            for b in np.flatnonzero(row_families[r][at] == fams).tolist() if len(row_families[r]) else []:
                coef = row_coefficients[r]
                extra[b].append((n + r, 1.0 if coef is None else float(coef[at[b]])))
        starts, index, value = [], [], []
        for b, f in enumerate(fams):
            starts.append(len(index))
            index.append(int(child[b]))
            rows_b = (n + hit_r[edges[b]:edges[b + 1]]).tolist()
            index.extend(rows_b)
            value.extend([1.0] * (1 + len(rows_b)))
            index.extend(r for r, _ in extra[b])
            value.extend(c for _, c in extra[b])
        h.addCols(len(fams), -table.scores[fams], np.zeros(len(fams)), np.ones(len(fams)), len(index),
                  np.array(starts, dtype=np.int32), np.array(index, dtype=np.int32), np.array(value))
        in_lp[fams] = True
        columns.append(fams)

    def add_rows(new_rows: list[tuple[str, Row]]) -> None:
        """Rows (each with its family's name) into the LP and the bookkeeping: a cluster
        row's families come by its vertex set, any other's by its list."""
        nonlocal cmat, idle, flipped
        lp_cols = np.concatenate(columns)
        position = np.full(size, -1, dtype=np.int64)
        position[lp_cols] = np.arange(len(lp_cols))
        by_child = lp_cols[np.argsort(table.child[lp_cols], kind="stable")]  # the LP's families, by child
        child_at = np.searchsorted(table.child[by_child], np.arange(n + 1))
        idx, val, lower, upper, flips = [], [], [], [], []
        extra_rows: list[int] = []
        extra_cols: list[int] = []
        for r, (kind, row) in enumerate(new_rows):
            fams = np.asarray(row.families, dtype=np.int64)
            coef = None if row.coefficients is None else np.asarray(row.coefficients, dtype=float)
            order = np.argsort(fams, kind="stable")
            fams, coef = fams[order], None if coef is None else coef[order]
            if row.cluster is None:
                listed.append(len(row_families))
            else:
                members = sorted(set(int(u) for u in row.cluster))
                extra_rows += [r] * len(members)
                extra_cols += members
            kinds.append(kind)
            row_families.append(fams.astype(np.int32))
            row_coefficients.append(coef)
            rhs.append(float(row.rhs))
            mine = fams[in_lp[fams]]
            flip = False
            if row.cluster is not None and coef is None:
                # the LP's families of C's children, ``mine`` among them: counted per child,
                # listed only for a row that flips (25,000 pair rows at n = 10,000)
                flip = 2 * len(mine) > int((child_at[np.add(members, 1)] - child_at[members]).sum())
            if flip:
                of_c = np.concatenate([by_child[child_at[v]:child_at[v + 1]] for v in members])
                mine = np.setdiff1d(of_c, mine)
                lower.append(len(members) - float(row.rhs))
                upper.append(highspy.kHighsInf)
            else:
                lower.append(-highspy.kHighsInf)
                upper.append(float(row.rhs))
            flips.append(flip)
            idx.append(position[mine].astype(np.int32))
            val.append(np.ones(len(mine)) if coef is None else coef[in_lp[fams]])
        lens = np.array([len(i) for i in idx], dtype=np.int64)
        st = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int32)
        allidx = np.concatenate(idx).astype(np.int32) if idx else np.zeros(0, dtype=np.int32)
        allval = np.concatenate(val) if val else np.zeros(0)
        h.addRows(len(new_rows), np.array(lower), np.array(upper), len(allidx), st, allidx, allval)
        extra = csr_matrix((np.ones(len(extra_cols), dtype=np.float32), (extra_rows, extra_cols)),
                           shape=(len(new_rows), n))
        cmat = vstack([cmat, extra], format="csr")
        cmat.sort_indices()
        idle = np.concatenate([idle, np.zeros(len(new_rows), dtype=np.int64)])
        flipped = np.concatenate([flipped, np.array(flips, dtype=np.bool_)])

    def drop_rows(drop: np.ndarray) -> int:
        """Take the rows ``drop`` (a mask over the rows) out of the LP and the bookkeeping;
        returns how many."""
        nonlocal cmat, idle, flipped
        gone = np.flatnonzero(drop)
        if not len(gone):
            return 0
        h.deleteRows(len(gone), (n + gone).astype(np.int32))
        keep_r = np.flatnonzero(~drop)
        new_index = np.full(len(drop), -1, dtype=np.int64)
        new_index[keep_r] = np.arange(len(keep_r))
        kinds[:] = [kinds[r] for r in keep_r]
        rhs[:] = [rhs[r] for r in keep_r]
        row_families[:] = [row_families[r] for r in keep_r]
        row_coefficients[:] = [row_coefficients[r] for r in keep_r]
        listed[:] = [int(new_index[r]) for r in listed if not drop[r]]
        cmat = cmat[keep_r]
        cmat.sort_indices()
        idle = idle[keep_r]
        flipped = flipped[keep_r]
        return len(gone)

    # the best policy.lp_initial_columns families of each variable first (stored best first); the
    # rest enter when their reduced cost says so (column generation)
    # and every empty parent set, which keeps the restricted LP feasible (a variable
    # without one — a required parent — brings all its families)
    empty = table.n_parents == 0
    first = np.concatenate([np.arange(table.start[v], min(table.start[v + 1], table.start[v] + policy.lp_initial_columns))
                            if empty[table.start[v]:table.start[v + 1]].any() else
                            np.arange(table.start[v], table.start[v + 1]) for v in range(n)])
    first = np.union1d(first, np.flatnonzero(empty))
    add_columns(first)
    pairs = _pairs(table)
    if pairs:
        add_rows([("cluster", Row(table.cluster_families(c), None, len(c) - 1.0, list(c))) for c in pairs])
    best, lp_value, rounds, complete = trivial, None, 0, False
    # what reading a solve's bound took last round (L(λ) over every family: 0.2-0.3 s at
    # 2.7 M): kept back from the next solve's time, which else ended at the limit and the
    # bound after it (plants k = 5 at 250 s: 0.2 s past)
    reading = 0.0
    buffer, spare = np.empty(size), np.empty(size)  # the reduced scores, and pricing's copy
    while True:
        left = time_limit - (time.monotonic() - t0) - reading
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
        # (a flipped row's dual is ≥ 0 where binding: it is the row as written times −1
        # plus convexity rows (2), whose duals absorb the rest)
        dual = np.asarray(sol.row_dual)[n:]
        began = time.monotonic()
        lam = np.maximum(np.where(flipped, dual, -dual), 0.0)
        reduced = _reduced(table, row_families, lam, row_coefficients, out=buffer)
        value = _value(table, np.array(rhs), lam, reduced)
        reading = time.monotonic() - began
        idle = np.where(lam > 0, 0, idle + 1)
        if value < best:
            best = value
            if on_bound is not None:
                on_bound(best)
        if time.monotonic() - t0 >= time_limit:
            break
        # pricing: families outside the LP that beat every LP family of their variable
        np.copyto(spare, reduced)
        spare[~in_lp] = -np.inf
        in_best = np.maximum.reduceat(spare, table.start[:-1])
        above = in_best + 1e-9 * np.maximum(1.0, np.abs(in_best))  # per variable, then by family
        better = ~in_lp & (reduced > above[table.child])
        priced = None
        if better.any():
            cand = np.flatnonzero(better)
            keep = []
            for v in np.unique(table.child[cand]):  # the few best of each variable
                of_v = cand[table.child[cand] == v]
                keep.append(of_v[np.argsort(-reduced[of_v])[:policy.lp_columns_per_round]])
            priced = np.concatenate(keep)
        order = np.concatenate(columns)
        x = np.zeros(size)  # its own each round: a row family may keep the point it was shown
        x[order] = np.clip(np.asarray(sol.col_value), 0.0, 1.0)
        # Rows are separated at every LP point, also one whose pricing is not done: a row
        # violated there is still a valid row, and the round saves an LP solve (before,
        # rounds that took columns took no rows: at plants k = 5 three solves in four were
        # pricing ones, and 26.5 of 30 s were HiGHS's). After 18-20 s the bound is 141-873
        # tighter at plants, baudio and munin5000, the same at jester.
        found: list[tuple[str, Row]] = []
        for family in rows:
            point = LpPoint(table, x, k, policy, t0 + time_limit, priced is not None, [r for _, r in found])
            found += [(family.name, r) for r in family.separate(point)]
        if time.monotonic() - t0 >= time_limit:
            # rows help only an LP solved after them, and building them took up to 1.8 s at
            # munin (60 s, k = 5: the call ended at 61.4 s); nor is a search the deadline
            # cut short a proof that no row is violated
            break
        if priced is None and not found:
            complete = True
            break
        if rounds % policy.lp_row_drop_every == 0:
            # L(λ) counts only rows with λ > 0, so a row left out costs no bound; the
            # separator finds it again if the point comes back to violate it
            dropped += drop_rows(idle >= policy.lp_row_idle_rounds)
        if priced is not None:
            add_columns(priced)
        if found:
            add_rows(found)
    stats = {"trivial": trivial, "lp_value": lp_value, "rows": len(kinds), "width_rows": kinds.count("width"),
             "minor_rows": kinds.count("minor"),
             "rounds": rounds, "seconds": round(time.monotonic() - t0, 3), "complete": complete,
             "columns": int(in_lp.sum()), "dropped": dropped, "entries": int(h.getNumNz()),
             "complement_rows": int(flipped.sum())}
    return best, stats
