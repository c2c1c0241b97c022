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
holds are in ``solvers/lp_rows.py``; the LP itself, its columns and rows, is
:class:`~twbn.solvers.cluster_lp.ClusterLp` (``solvers/cluster_lp.py``).
"""

from __future__ import annotations

import math
import time
from typing import Callable, Sequence

import numpy as np

from twbn.formulations.cluster_ilp import FamilyTable
from twbn.formulations.problem import Problem
from twbn.solvers.cluster_lp import ClusterLp, cycle_pairs, first_columns, lagrangian_value, reduced_scores

from twbn.solvers.policy import DEFAULT_POLICY, Policy

__all__ = ["lagrangian_bound", "cluster_lp_bound", "Row", "RowFamily", "LpPoint", "ClusterRows", "WidthRows",
           "MinorRows", "rule_row", "minor_regions", "DEFAULT_ROWS"]

from twbn.solvers.lp_rows import (DEFAULT_ROWS, ClusterRows, LpPoint, MinorRows, Row, RowFamily,  # noqa: E402,F401
                                  WidthRows, minor_regions, rule_row, separate_width_rows, width_rhs, width_row)

# The LP's knobs (rows and columns per round, when idle rows leave, the set-up cost per
# family) are the Policy's ``lp_*`` fields, with their measurements (solvers/policy.py).


def lagrangian_bound(table: FamilyTable, clusters: list[list[int]], multipliers) -> float:
    """L(λ) of the module docstring for the given clusters and multipliers (negative
    ones count as 0). O(F + Σ row sizes) numpy work."""
    lam = np.maximum(np.asarray(multipliers, dtype=float), 0.0)
    rhs = np.array([len(c) - 1.0 for c in clusters])
    return lagrangian_value(table, rhs, lam, reduced_scores(table, [table.cluster_families(c) for c in clusters], lam))


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
    t0 = time.monotonic()
    families = problem.candidates.n_parent_sets()
    if time_limit < policy.lp_setup_s_per_family * families:
        return _skipped(problem, families, time_limit, policy, t0)
    table = FamilyTable.from_cache(problem.candidates)
    if rows is None:
        rows = DEFAULT_ROWS if width else tuple(f for f in DEFAULT_ROWS if not isinstance(f, (WidthRows, MinorRows)))
    trivial = math.fsum(np.maximum.reduceat(table.scores, table.start[:-1]).tolist())
    lp = _first_lp(table, policy)
    best, lp_value, rounds, complete = trivial, None, 0, False
    # what reading a solve's bound took last round (L(λ) over every family: 0.2-0.3 s at
    # 2.7 M): kept back from the next solve's time, which else ended at the limit and the
    # bound after it (plants k = 5 at 250 s: 0.2 s past)
    reading = 0.0
    buffer, spare = np.empty(table.size), np.empty(table.size)  # the reduced scores, and pricing's copy
    while True:
        left = time_limit - (time.monotonic() - t0) - reading
        if left <= 0.05 or not lp.solve(left):
            break
        rounds += 1
        lp_value = lp.objective
        began = time.monotonic()
        reduced, value = lp.read(buffer)
        reading = time.monotonic() - began
        if value < best:
            best = value
            if on_bound is not None:
                on_bound(best)
        if time.monotonic() - t0 >= time_limit:
            break
        priced = lp.priced(reduced, spare, policy.lp_columns_per_round)
        found = _separate(rows, LpPoint(table, lp.point(), problem.treewidth, policy, t0 + time_limit,
                                        priced is not None, []))
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
            lp.drop_rows(lp.idle >= policy.lp_row_idle_rounds)
        if priced is not None:
            lp.add_columns(priced)
        if found:
            lp.add_rows(found)
    return best, {"trivial": trivial, "lp_value": lp_value, "rounds": rounds,
                  "seconds": round(time.monotonic() - t0, 3), "complete": complete, **lp.stats()}


def _skipped(problem: Problem, families: int, time_limit: float, policy: Policy, t0: float) -> tuple[float, dict]:
    """The trivial bound, at once, where the first LP would not even be built in time,
    rather than the same bound after the limit (jester at 1.1 s: 1.9 s, no LP solved)."""
    trivial = math.fsum(float(sc[0]) for sc in problem.candidates.scores)
    return trivial, {"trivial": trivial, "lp_value": None, "rows": 0, "rounds": 0,
                     "seconds": round(time.monotonic() - t0, 3), "complete": False, "columns": 0,
                     "skipped": f"{families:,} families need about {policy.lp_setup_s_per_family * families:.1f} s "
                                f"to set up, more than the {time_limit:.2f} s given"}


def _first_lp(table: FamilyTable, policy: Policy) -> ClusterLp:
    """The first LP: the policy's first columns and the cluster rows of the 2-cycles."""
    lp = ClusterLp(table)
    lp.add_columns(first_columns(table, policy.lp_initial_columns))
    pairs = cycle_pairs(table)
    if pairs:
        lp.add_rows([("cluster", Row(table.cluster_families(c), None, len(c) - 1.0, list(c))) for c in pairs])
    return lp


def _separate(rows: "Sequence[RowFamily]", at: LpPoint) -> list[tuple[str, Row]]:
    """The rows each family finds violated at the LP point, in order (a family sees the rows
    found before it). Rows are separated at every LP point, also one whose pricing is not
    done: a row violated there is still a valid row, and the round saves an LP solve
    (before, rounds that took columns took no rows: at plants k = 5 three solves in four were
    pricing ones, and 26.5 of 30 s were HiGHS's). After 18-20 s the bound is 141-873
    tighter at plants, baudio and munin5000, the same at jester."""
    found: list[tuple[str, Row]] = []
    for family in rows:
        point = at._replace(earlier=[r for _, r in found])
        found += [(family.name, r) for r in family.separate(point)]
    return found
