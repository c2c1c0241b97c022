"""The BIC/AIC pruning rules 2, 3, 4 and 6 over one level of the exploration: which
candidate parent Z a rule proves useless for X given a scored set P, and the conditional
entropies rule 3 needs (the rules and their papers: :mod:`twbn.scoring.parent_sets`).

A :class:`LevelPruner` lives for one ``build_cache``: ``codes(x, p)`` answers for every Z
at once (vectorised over the variables, memoised per (x, p) for the level), ``record``
keeps the entropies a scored set gives, and ``next_level`` forgets what the level after
no longer needs (the entropies of smaller sets, the memo).
"""

from __future__ import annotations

import time

import numpy as np

from twbn.scoring.cache import ParentSet

__all__ = ["LevelPruner", "PairFamilies", "pair_weights"]

RTOL = 1e-9  #: relative tolerance: a rule fires only when it holds by more than rounding error


class PairFamilies:
    """Every family of one parent, (x, {y}), scored once: rule 6's weights need all of
    them before the exploration starts, and its first level is these same families. At
    munin (n = 1,041, 5,000 rows) scoring them twice took 8.5 + 6.3 s (2026-12-07).

    ``complete`` is False where ``deadline`` (a ``time.monotonic()``) came first: the
    weights then cannot be had, but the families of the parents ``done`` are kept (the
    first level reads them, a search from the data need not count them again: at book,
    k = 2, 10 s, they were two thirds of all pairs, dropped, and scored again).

    ``sc[x, y]`` is the score of x given {y}, NaN where y is not ``done``."""

    def __init__(self, scorer, n: int, deadline: float | None = None):
        self.sc, self.ll, self.complete = np.full((n, n), np.nan), np.zeros((n, n)), True
        self.done = np.zeros(n, dtype=bool)
        for y in range(n):
            if deadline is not None and time.monotonic() > deadline:
                self.complete = False
                return
            others = [x for x in range(n) if x != y]
            sc, ll = scorer.family((y,), others)
            self.sc[others, y], self.ll[others, y] = sc, ll
            self.done[y] = True

    def family(self, y: int, children) -> tuple[np.ndarray, np.ndarray]:
        """Scores and log-likelihoods of ``children`` given the parent ``y`` (one of
        ``done``), as ``Scorer.family((y,), children)`` returns them."""
        ch = np.fromiter(children, dtype=np.int64)
        return self.sc[ch, y], self.ll[ch, y]


def pair_weights(pairs: PairFamilies, n_rows: int, ll0, H0) -> np.ndarray:
    """Rule 6's w(X, Y) = N·I(X;Y) + N·min{H(X), H(Y)}, from all pairwise log-likelihoods."""
    h0 = np.asarray(H0, dtype=float)
    w = (pairs.ll - np.asarray(ll0, dtype=float)[:, None]) + n_rows * np.minimum.outer(h0, h0)
    np.fill_diagonal(w, 0.0)
    return w


def _below(bound, cost):
    """Vectorised ``parent_sets._fires``: the bound under the cost by more than rounding."""
    return bound < cost - RTOL * (1.0 + np.abs(cost))


class LevelPruner:
    """Rules 2, 3, 4 and 6 of ``rules`` for the sets of one level.

    Parameters
    ----------
    scorer : Scorer
        Gives the penalty constant c and q(P).
    arities : list of int
    n_rows : int
    H0 : sequence of float
        Each variable's entropy without parents.
    rules : tuple of int
    w : ndarray, optional
        Rule 6's weights (:func:`pair_weights`), where rule 6 is on.
    pairs : PairFamilies, optional
        The families of one parent the weights came from: the first level's families are
        read from them, not scored again.
    """

    def __init__(self, scorer, arities, n_rows: int, H0, rules, w=None, pairs: PairFamilies | None = None):
        self.scorer, self.r, self.N, self.rules, self.w, self.pairs = scorer, arities, n_rows, rules, w, pairs
        self.n = len(arities)
        self.r_arr = np.array(arities, dtype=float)
        self.H0 = list(H0)
        self.H0_arr = np.array(H0)
        # hcond[P][z] = H(z|P) for the z scored with P (NaN elsewhere); hup[P] replaces each
        # NaN by the smallest H(z|P') over P' ⊂ P, an upper bound (entropy only shrinks
        # with more conditioning) that keeps rule 3 valid where H(z|P) was never computed.
        self.hcond: dict[ParentSet, np.ndarray] = {(): self.H0_arr}
        self.hup: dict[ParentSet, np.ndarray] = {(): self.H0_arr}
        self.memo: dict[tuple[int, ParentSet], list[int]] = {}

    def codes(self, x: int, p: ParentSet) -> list[int]:
        """For each z, the first rule (cheapest first: 4, 2, 3, 6) proving that p ∪ {z}
        and its supersets are useless for x; 0 where none does."""
        got = self.memo.get((x, p))
        if got is None:
            got = self.memo[(x, p)] = self._codes(x, p)
        return got

    def _codes(self, x: int, p: ParentSet) -> list[int]:
        rules, r_arr = self.rules, self.r_arr
        tp = self.scorer.penalty_c * (self.r[x] - 1) * self.scorer.q(p)
        cost = (r_arr - 1.0) * tp
        hx = self.hcond[p][x]
        code = np.zeros(self.n, np.int8)
        # assigned in reverse priority, so that the cheapest rule that fires is recorded
        if 6 in rules and p and self.w is not None:
            code[self._rule6(x, p, tp, cost)] = 6
        if 3 in rules:
            code[_below(self.N * np.minimum(hx, self.hup[p]), cost)] = 3
        if 2 in rules:
            code[_below(self.N * hx, cost)] = 2
        if 4 in rules:
            code[_below(self.N * np.minimum(self.H0[x], self.H0_arr), cost)] = 4
        return code.tolist()

    def _rule6(self, x: int, p: ParentSet, tp: float, cost) -> np.ndarray:
        """Where rule 6 fires: w(X,Z) under Z's cost, and every other candidate Y's w(X,Y)
        under r_Y·t(P) (condition B), which holds for Z only when Z is the one violator."""
        f6 = _below(self.w[x], cost)
        viol = ~_below(self.w[x], self.r_arr * tp)
        viol[x] = False
        viol[list(p)] = False
        nv = int(viol.sum())
        if nv == 1:
            f6 &= viol
        elif nv > 1:
            f6[:] = False
        return f6

    def scored(self, s: ParentSet, children) -> "tuple[np.ndarray, np.ndarray] | None":
        """The scores and log-likelihoods of ``children`` given ``s`` where they were
        scored already (a single parent, rule 6 on); None where they were not."""
        return self.pairs.family(s[0], children) if self.pairs is not None and len(s) == 1 else None

    def record(self, s: ParentSet, children, ll) -> None:
        """The entropies H(x|s) of the ``children`` scored with ``s`` (their log-likelihoods ``ll``)."""
        h = np.full(self.n, np.nan)
        h[children] = -ll / self.N
        self.hcond[s] = h
        if 3 in self.rules:
            sub = np.minimum.reduce([self.hup[s[:i] + s[i + 1:]] for i in range(len(s))])
            self.hup[s] = np.where(np.isnan(h), sub, h)

    def next_level(self, d: int) -> None:
        """Level ``d`` is done: the next needs only its entropies, and no memo (nor, after
        the first, the families of one parent: rule 6 keeps its weights)."""
        self.memo.clear()
        self.pairs = None
        for store in (self.hcond, self.hup):
            for key in [k for k in store if 0 < len(k) < d]:
                del store[key]
