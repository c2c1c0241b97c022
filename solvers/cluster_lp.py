"""The cluster LP as an object: HiGHS's restricted LP of the cluster ILP's (1) and (2) with
the rows separated so far, and the bookkeeping L(λ) needs to read a bound from its duals.

:func:`~twbn.solvers.relaxation.cluster_lp_bound` runs the rounds (solve, read the bound,
price columns, separate rows); :class:`ClusterLp` owns what the rounds change: the LP's
columns (families, best few of each variable first, more as pricing finds them) and rows
(each with its family's name, its families, coefficients and right-hand side, the cluster
rows also as a sparse vertex matrix, some written as their complement), and which rows
stayed idle. The arithmetic of L(λ) (``reduced_scores``, ``lagrangian_value``) is here too,
since the bound is read from this LP's rows.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from twbn.formulations.cluster_ilp import FamilyTable
from twbn.solvers.lp_rows import Row

__all__ = ["ClusterLp", "first_columns", "cycle_pairs", "reduced_scores", "lagrangian_value"]


class ClusterLp:
    """The restricted cluster LP over ``table``'s families, in HiGHS (one thread).

    Starts with the convexity rows (2) and no columns; :meth:`add_columns`, :meth:`add_rows`
    and :meth:`drop_rows` grow and shrink it, :meth:`solve` solves it within seconds, and
    :meth:`read` gives the reduced scores and L(λ) from its duals.

    Examples
    --------
    Each of A, B prefers the other as parent (-1 each) to none (-5 each): the LP of (1)
    and (2) takes both arcs, a 2-cycle; the cluster row of {A, B} (at most one of them)
    brings it to -6.

    >>> from twbn.scoring.cache import ScoreCache
    >>> table = FamilyTable.from_cache(ScoreCache.from_mapping("AB", [{(): -5.0, (1,): -1.0},
    ...                                                              {(): -5.0, (0,): -1.0}]))
    >>> lp = ClusterLp(table)
    >>> lp.add_columns(first_columns(table, 2))
    >>> lp.solve(5.0), lp.objective
    (True, -2.0)
    >>> lp.add_rows([("cluster", Row(table.cluster_families([0, 1]), None, 1.0, [0, 1]))])
    >>> lp.solve(5.0), round(lp.objective, 6)
    (True, -6.0)
    """

    def __init__(self, table: FamilyTable):
        from scipy.sparse import csr_matrix

        from twbn.solvers.models.backends import quiet_highs

        n = table.n
        self.table = table
        self.h = quiet_highs()
        self.h.setOptionValue("threads", 1)
        self.h.addRows(n, np.ones(n), np.ones(n), 0, np.zeros(n, dtype=np.int32), np.zeros(0, dtype=np.int32),
                       np.zeros(0))  # (2), filled as columns arrive
        self.in_lp = np.zeros(table.size, dtype=bool)
        self.columns: list[np.ndarray] = []  # LP column j is family order[j]
        self.kinds: list[str] = []  # each row's family (RowFamily.name)
        self.row_families: list[np.ndarray] = []  # all families each row counts (sorted)
        self.row_coefficients: list[np.ndarray | None] = []  # a row's coefficients; None: all 1
        self.rhs: list[float] = []
        # cluster rows as vertex sets (a listed row: empty), sparse: dense (rows, n) matrices and
        # their products with the columns' parents took 1.3 GB at n = 5,000 in one round
        self.cmat = csr_matrix((0, n), dtype=np.float32)
        self.listed: list[int] = []  # the rows whose families are found by list, not by a vertex set
        self.idle = np.zeros(0, dtype=np.int64)  # solves since each row last had a multiplier
        # rows written as their complement, Σ_{f ∉ row, child in C} x_f ≥ |C| − rhs (equal given
        # (2), and sparser for a large cluster: at n = 1,000 the LP reached 2.6 M entries, 550 MB
        # in HiGHS, as written); L(λ) still reads every row as written, with λ its dual
        self.flipped = np.zeros(0, dtype=np.bool_)
        self.dropped = 0  # rows taken out
        self._solution = None

    def add_columns(self, fams: np.ndarray) -> None:
        """Families as LP columns, with their entries in (2) and in every row."""
        table, n = self.table, self.table.n
        fams = np.asarray(fams, dtype=np.int64)
        child = table.child[fams]
        # a row counts a family whose child is in its cluster and some parent too; found
        # from the rows of each vertex (the cluster matrix by column), in time and memory of the entries
        # themselves: the product of that matrix with the families' parents (sparse or not) also
        # counts the rows that miss the child, 420 MB at n = 1,000 after 20 rounds
        by_vertex = self.cmat.tocsc()
        by_vertex.sort_indices()
        ptr, idx = table.parent_index
        edges, hit_r = _column_rows(by_vertex.indptr.astype(np.int64), by_vertex.indices.astype(np.int64),
                                    self.flipped, child, ptr[fams], ptr[fams + 1], idx)
        extra: list[list[tuple[int, float]]] = [[] for _ in fams]
        for r in self.listed:
            at = np.searchsorted(self.row_families[r], fams)
            at = np.minimum(at, max(0, len(self.row_families[r]) - 1))
            for b in np.flatnonzero(self.row_families[r][at] == fams).tolist() if len(self.row_families[r]) else []:
                coef = self.row_coefficients[r]
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
        self.h.addCols(len(fams), -table.scores[fams], np.zeros(len(fams)), np.ones(len(fams)), len(index),
                  np.array(starts, dtype=np.int32), np.array(index, dtype=np.int32), np.array(value))
        self.in_lp[fams] = True
        self.columns.append(fams)

    def add_rows(self, new_rows: list[tuple[str, Row]]) -> None:
        """Rows (each with its family's name) into the LP and the bookkeeping: a cluster
        row's families come by its vertex set, any other's by its list."""
        import highspy
        from scipy.sparse import csr_matrix, vstack

        table, n, size = self.table, self.table.n, self.table.size
        lp_cols = np.concatenate(self.columns)
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
                self.listed.append(len(self.row_families))
            else:
                members = sorted(set(int(u) for u in row.cluster))
                extra_rows += [r] * len(members)
                extra_cols += members
            self.kinds.append(kind)
            self.row_families.append(fams.astype(np.int32))
            self.row_coefficients.append(coef)
            self.rhs.append(float(row.rhs))
            mine = fams[self.in_lp[fams]]
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
            val.append(np.ones(len(mine)) if coef is None else coef[self.in_lp[fams]])
        lens = np.array([len(i) for i in idx], dtype=np.int64)
        st = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int32)
        allidx = np.concatenate(idx).astype(np.int32) if idx else np.zeros(0, dtype=np.int32)
        allval = np.concatenate(val) if val else np.zeros(0)
        self.h.addRows(len(new_rows), np.array(lower), np.array(upper), len(allidx), st, allidx, allval)
        extra = csr_matrix((np.ones(len(extra_cols), dtype=np.float32), (extra_rows, extra_cols)),
                           shape=(len(new_rows), n))
        self.cmat = vstack([self.cmat, extra], format="csr")
        self.cmat.sort_indices()
        self.idle = np.concatenate([self.idle, np.zeros(len(new_rows), dtype=np.int64)])
        self.flipped = np.concatenate([self.flipped, np.array(flips, dtype=np.bool_)])

    def drop_rows(self, drop: np.ndarray) -> int:
        """Take the rows ``drop`` (a mask over the rows) out of the LP and the bookkeeping;
        returns how many."""
        n = self.table.n
        gone = np.flatnonzero(drop)
        if not len(gone):
            return 0
        self.h.deleteRows(len(gone), (n + gone).astype(np.int32))
        keep_r = np.flatnonzero(~drop)
        new_index = np.full(len(drop), -1, dtype=np.int64)
        new_index[keep_r] = np.arange(len(keep_r))
        self.kinds[:] = [self.kinds[r] for r in keep_r]
        self.rhs[:] = [self.rhs[r] for r in keep_r]
        self.row_families[:] = [self.row_families[r] for r in keep_r]
        self.row_coefficients[:] = [self.row_coefficients[r] for r in keep_r]
        self.listed[:] = [int(new_index[r]) for r in self.listed if not drop[r]]
        self.cmat = self.cmat[keep_r]
        self.cmat.sort_indices()
        self.idle = self.idle[keep_r]
        self.flipped = self.flipped[keep_r]
        self.dropped += len(gone)
        return len(gone)

    def solve(self, seconds: float) -> bool:
        """Solve for at most ``seconds`` more; True where the LP's optimum was reached."""
        import highspy

        h = self.h
        h.setOptionValue("time_limit", h.getRunTime() + float(seconds))  # HiGHS's clock runs across solves
        h.run()
        status = h.getModelStatus()
        if status not in (highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kTimeLimit):
            # a warm-started simplex can end "unknown" after rows and columns were added
            # (jester k = 5, round 29); from scratch it solves
            h.clearSolver()
            h.run()
            status = h.getModelStatus()
        self._solution = h.getSolution() if status == highspy.HighsModelStatus.kOptimal else None
        return self._solution is not None

    @property
    def objective(self) -> float:
        """The last LP's optimum (a maximum of the scores)."""
        return -self.h.getInfo().objective_function_value

    def read(self, out: np.ndarray) -> tuple[np.ndarray, float]:
        """From the last solve's duals: the reduced scores (written into ``out``) and L(λ);
        each row's idle count moves on."""
        n = self.table.n
        # HiGHS's row duals of a minimisation: ≤ 0 on a binding ≤ row; λ = −dual
        # (a flipped row's dual is ≥ 0 where binding: it is the row as written times −1
        # plus convexity rows (2), whose duals absorb the rest)
        dual = np.asarray(self._solution.row_dual)[n:]
        lam = np.maximum(np.where(self.flipped, dual, -dual), 0.0)
        reduced = reduced_scores(self.table, self.row_families, lam, self.row_coefficients, out=out)
        value = lagrangian_value(self.table, np.array(self.rhs), lam, reduced)
        self.idle = np.where(lam > 0, 0, self.idle + 1)
        return reduced, value

    def priced(self, reduced: np.ndarray, spare: np.ndarray, per_variable: int) -> np.ndarray | None:
        """Families outside the LP that beat every LP family of their variable under the
        reduced scores, the ``per_variable`` best of each; None where none does."""
        table = self.table
        np.copyto(spare, reduced)
        spare[~self.in_lp] = -np.inf
        in_best = np.maximum.reduceat(spare, table.start[:-1])
        above = in_best + 1e-9 * np.maximum(1.0, np.abs(in_best))  # per variable, then by family
        better = ~self.in_lp & (reduced > above[table.child])
        if not better.any():
            return None
        cand = np.flatnonzero(better)
        keep = []
        for v in np.unique(table.child[cand]):  # the few best of each variable
            of_v = cand[table.child[cand] == v]
            keep.append(of_v[np.argsort(-reduced[of_v])[:per_variable]])
        return np.concatenate(keep)

    def point(self) -> np.ndarray:
        """The last LP point over every family (0 outside the LP): its own array each round,
        since a row family may keep the point it was shown."""
        x = np.zeros(self.table.size)
        x[np.concatenate(self.columns)] = np.clip(np.asarray(self._solution.col_value), 0.0, 1.0)
        return x

    def stats(self) -> dict:
        return {"rows": len(self.kinds), "width_rows": self.kinds.count("width"),
                "minor_rows": self.kinds.count("minor"), "columns": int(self.in_lp.sum()),
                "dropped": self.dropped, "entries": int(self.h.getNumNz()),
                "complement_rows": int(self.flipped.sum())}


def first_columns(table: FamilyTable, per_variable: int) -> np.ndarray:
    """The LP's first columns: the best ``per_variable`` families of each variable (stored
    best first) and every empty parent set, which keeps the restricted LP feasible (a
    variable without one, a required parent, brings all its families); the rest enter when
    their reduced cost says so (column generation)."""
    empty = table.n_parents == 0
    first = np.concatenate([np.arange(table.start[v], min(table.start[v + 1], table.start[v] + per_variable))
                            if empty[table.start[v]:table.start[v + 1]].any() else
                            np.arange(table.start[v], table.start[v + 1]) for v in range(table.n)])
    return np.union1d(first, np.flatnonzero(empty))


def reduced_scores(table: FamilyTable, row_families: list[np.ndarray], lam: np.ndarray,
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


def lagrangian_value(table: FamilyTable, rhs: np.ndarray, lam: np.ndarray, reduced: np.ndarray) -> float:
    """L(λ) from the reduced scores and the rows' right-hand sides."""
    return math.fsum((lam * rhs).tolist()) + math.fsum(np.maximum.reduceat(reduced, table.start[:-1]).tolist())


def cycle_pairs(table: FamilyTable) -> list[list[int]]:
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
