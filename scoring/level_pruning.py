"""The BIC/AIC pruning rules 2, 3, 4 and 6 over one level of the exploration: which
candidate parent Z a rule proves useless for X given a scored set P, and the conditional
entropies rule 3 needs (the rules and their papers: :mod:`twbn.scoring.parent_sets`).

A :class:`LevelPruner` lives for one ``build_cache``: ``codes(x, p)`` answers for every Z
at once (vectorised over the variables, memoised per (x, p) for the level), ``record``
keeps the entropies a scored set gives, and ``next_level`` forgets what the level after
no longer needs (the entropies of smaller sets, the memo).
"""

from __future__ import annotations

import numpy as np

from twbn.scoring.cache import ParentSet

__all__ = ["LevelPruner", "pair_weights"]

RTOL = 1e-9  #: relative tolerance: a rule fires only when it holds by more than rounding error


def pair_weights(scorer, n: int, n_rows: int, ll0, H0) -> np.ndarray:
    """Rule 6's w(X, Y) = N·I(X;Y) + N·min{H(X), H(Y)}, from all pairwise log-likelihoods."""
    w = np.zeros((n, n))
    for y in range(n):
        others = [x for x in range(n) if x != y]
        _, ll = scorer.family((y,), others)
        for x, llxy in zip(others, ll.tolist()):
            w[x, y] = (llxy - ll0[x]) + n_rows * min(H0[x], H0[y])
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
    """

    def __init__(self, scorer, arities, n_rows: int, H0, rules, w=None):
        self.scorer, self.r, self.N, self.rules, self.w = scorer, arities, n_rows, rules, w
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
        if 6 in rules and p:
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

    def record(self, s: ParentSet, children, ll) -> None:
        """The entropies H(x|s) of the ``children`` scored with ``s`` (their log-likelihoods ``ll``)."""
        h = np.full(self.n, np.nan)
        h[children] = -ll / self.N
        self.hcond[s] = h
        if 3 in self.rules:
            sub = np.minimum.reduce([self.hup[s[:i] + s[i + 1:]] for i in range(len(s))])
            self.hup[s] = np.where(np.isnan(h), sub, h)

    def next_level(self, d: int) -> None:
        """Level ``d`` is done: the next needs only its entropies, and no memo."""
        self.memo.clear()
        for store in (self.hcond, self.hup):
            for key in [k for k in store if 0 < len(k) < d]:
                del store[key]
