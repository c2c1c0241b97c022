"""The choice of k from the measured curve: the smallest k whose held-out likelihood is
within one standard error of the best k's, among the bounds within the inference budget.

The standard error is that of the mean per-row *difference* between the best k and the
other (the same held-out rows under both networks), the paired form of the one-standard-
error rule (Hastie, Tibshirani & Friedman, *The Elements of Statistical Learning*, 2nd ed.,
Sec. 7.10): a smaller network is chosen where the data cannot tell it from the best.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from twbn.scoring.errors import ParameterError

__all__ = ["Point", "choose"]


@dataclass
class Point:
    """One bound of the curve: what it scored, how well its networks predict held-out
    rows, and what inference on them costs."""

    k: int
    score: float  # mean over folds of the network's score on its training rows
    held_out: float  # mean log-likelihood per held-out row
    held_out_se: float  # the standard error of that mean
    table_size: int  # largest over folds: the junction tree's entries
    width: int  # largest over folds
    query_seconds: float | None  # mean seconds of one exact query (fold 1's network), None where not run
    seconds: float  # learning and measuring this bound, all folds
    rows: np.ndarray = field(repr=False, default=None)  # per held-out row log-likelihood, all folds
    moved: bool = True  # whether any fold's network differs from the bound before's

    def to_json(self) -> dict:
        return {"k": self.k, "score": round(self.score, 4), "held_out": round(self.held_out, 6),
                "held_out_se": round(self.held_out_se, 6), "table_size": self.table_size, "width": self.width,
                "query_seconds": None if self.query_seconds is None else round(self.query_seconds, 6),
                "seconds": round(self.seconds, 3), "moved": self.moved}


def fits(p: Point, max_table_size: int | None, max_query_seconds: float | None) -> bool:
    """Whether ``p``'s networks are within the inference budget."""
    if max_table_size is not None and p.table_size > max_table_size:
        return False
    return max_query_seconds is None or p.query_seconds is None or p.query_seconds <= max_query_seconds


def choose(points: list[Point], max_table_size: int | None = None,
           max_query_seconds: float | None = None) -> tuple[Point, str]:
    """The chosen bound and why.

    Raises
    ------
    ParameterError
        No bound's networks fit the inference budget.

    Examples
    --------
    >>> rows = np.array([-2.0, -1.0, -3.0, -2.0])
    >>> a = Point(1, -10.0, -2.0, 0.2, 8, 1, None, 1.0, rows)
    >>> b = Point(2, -9.0, -1.99, 0.2, 32, 2, None, 1.0, rows + [0.0, 0.04, 0.0, 0.0])
    >>> c = Point(3, -8.0, -1.5, 0.2, 128, 3, None, 1.0, rows + 0.5)
    >>> choose([a, b, c])[0].k, choose([a, b])[0].k, choose([a, b, c], max_table_size=64)[0].k
    (3, 1, 1)
    """
    ok = [p for p in points if fits(p, max_table_size, max_query_seconds)]
    if not ok:
        p = points[0]
        raise ParameterError(f"no bound fits the inference budget: already k = {p.k}'s network needs "
                             f"{p.table_size:,} table entries" + (f" (max_table_size {max_table_size:,})"
                                                                   if max_table_size is not None else "")
                             + ("" if p.query_seconds is None or max_query_seconds is None else
                                f" and {p.query_seconds:.3g} s a query (max_query_seconds {max_query_seconds:g})"))
    best = max(ok, key=lambda p: p.held_out)
    for p in sorted(ok, key=lambda p: p.k):
        diff = best.rows - p.rows
        se = float(diff.std(ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else 0.0
        if best.held_out - p.held_out <= se:
            why = ("the best held-out likelihood" if p is best else
                   f"the smallest k within one standard error ({se:.4g} per row) of the best, k = {best.k}")
            left = len(points) - len(ok)
            if left:
                why += f"; {left} bound{'s' if left > 1 else ''} over the inference budget not considered"
            return p, why
    return best, "the best held-out likelihood"  # not reached: best is within 0 of itself
