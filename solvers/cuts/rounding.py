"""What the cluster-cut ILP does with an LP point besides separating it: the sink
heuristic that rounds it to a DAG within the treewidth bound, the back-off of the matroid
search, and the large-neighbourhood search's bookkeeping of its two kinds of
neighbourhood. No SCIP here: the handlers (handlers.py) call these."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from twbn.formulations.cluster_ilp import ClusterIlp, FamilyTable
from twbn.solvers.policy import DEFAULT_POLICY


__all__ = ["sink_heuristic", "Backoff"]


def sink_heuristic(table: FamilyTable, x: np.ndarray, k: int | None = None) -> tuple[list[int], list[int]]:
    """A DAG rounded from a fractional point, after the sink-finding heuristic of Bartlett
    & Cussens (2017, Sec. 6): repeatedly make a sink of the remaining variable whose best
    still allowed family carries the most LP weight, less the weight of the families that
    its placing blocks, and give it its best-scoring allowed family, whose parents are all
    still unplaced (so every later sink precedes it: acyclic).

    With a treewidth bound k the order of the sinks doubles as an elimination order: a
    sink v is eliminated while its parents W and its fill neighbours N(v) (edges left by
    earlier sinks) remain, so a family is allowed only if |W ∪ N(v)| ≤ k, and placing v
    joins W ∪ N(v) into a clique. Every moral edge of v's family lies in that clique, so
    the order has width ≤ k. Returns (one family index per variable, the sink order), or
    two empty lists when some step finds no allowed family; O(n·F·n)."""
    n = table.n
    blocked = np.zeros(table.size, dtype=bool)  # a parent is already a sink
    placed = np.zeros(n, dtype=bool)
    fill = np.zeros((n, n), dtype=bool)  # edges among unplaced variables left by placed ones
    chosen = [0] * n
    order = []
    for _ in range(n):
        allowed = ~blocked
        if k is not None:
            neighbours = fill[table.child]  # (F, n): the child's fill neighbours
            width = neighbours.sum(axis=1) + table.n_parents - (table.member & neighbours).sum(axis=1)
            allowed &= width <= k
        weight = np.maximum.reduceat(np.where(allowed, x, -1.0), table.start[:-1])
        # the LP mass that making u a sink would block: families of other unplaced
        # variables with u as a parent (without it, the roots of an integral DAG could be
        # taken first and leave their children parentless)
        live = np.where(allowed & ~placed[table.child], x, 0.0)
        weight -= live @ table.member
        has = np.logical_or.reduceat(allowed, table.start[:-1])
        weight[placed | ~has] = -np.inf
        v = int(np.argmax(weight))
        if not np.isfinite(weight[v]):
            return [], []
        # families are stored best first
        f = int(table.start[v] + np.flatnonzero(allowed[table.start[v]:table.start[v + 1]])[0])
        chosen[v] = f
        order.append(v)
        placed[v] = True
        blocked |= table.member[:, v]
        if k is not None:
            clique = table.member[f] | fill[v]
            fill |= np.outer(clique, clique)
            fill[np.arange(n), np.arange(n)] = False
            fill[v, :] = fill[:, v] = False
    return chosen, order


class Backoff:
    """When a separation routine runs: after a call that finds nothing it sits out the next
    1, 2, 4, … ``limit`` optional rounds (rounds where other routines found rows); a call
    that finds rows ends the backoff. A round that is not optional always runs it."""

    def __init__(self, limit: int):
        self.limit = limit
        self.skip = 0  # optional rounds sat out after the last fruitless call
        self.wait = 0  # optional rounds still to sit out

    def due(self, optional: bool) -> bool:
        if optional and self.wait > 0:
            self.wait -= 1
            return False
        return True

    def record(self, found: bool) -> None:
        self.skip = 0 if found else min(max(1, 2 * self.skip), self.limit)
        self.wait = self.skip


@dataclass
class _LnsKind:
    """One kind of LNS neighbourhood: its current size, calls without a gain in a row, and
    the decayed score gained, seconds spent and number of tries behind ``rate``."""

    size: int
    decay: float = DEFAULT_POLICY.lns_decay
    stalls: int = 0
    gain: float = 0.0
    seconds: float = 0.0
    tries: int = 0

    @property
    def rate(self) -> float:
        return self.gain / max(self.seconds, 1e-3)

    def record(self, gain: float, seconds: float) -> None:
        self.gain = self.decay * self.gain + gain
        self.seconds = self.decay * self.seconds + seconds
        self.tries += 1


def _z_order(m, sol, ilp: ClusterIlp) -> list[int] | None:
    """The elimination order a bounded solution's positions z give (ties by index); None
    when unbounded."""
    if ilp.treewidth is None:
        return None
    z = {i: m.getSolVal(sol, var) for i, var in ilp.z.items()}
    return sorted(z, key=lambda i: (z[i], i))
