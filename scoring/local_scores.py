"""Local scores of a variable given a parent set: BIC, AIC, BDeu (natural logarithms).

For child X with arity r over N rows and parent set Π with q = Π_{Y∈Π} r_Y
configurations, N_jk the count of (Π = j, X = k) and N_j = Σ_k N_jk:

- ``LL(X|Π) = Σ_jk N_jk ln(N_jk / N_j) = −N·H(X|Π)``
- ``BIC(X,Π) = LL − (ln N / 2)·(r − 1)·q``  (Schwarz 1978)
- ``AIC(X,Π) = LL − (r − 1)·q``  (Akaike 1974)
- ``BDeu(X,Π) = Σ_j [lnΓ(α/q) − lnΓ(α/q + N_j)] + Σ_jk [lnΓ(α/(qr) + N_jk) − lnΓ(α/(qr))]``
  (Buntine 1991; Heckerman, Geiger & Chickering 1995), α the equivalent sample size.

A parent set is a sorted tuple of variable indices everywhere in twbn.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

import numpy as np

from twbn.scoring.counting import extend_codes, family_scores, nlogn_table
from twbn.scoring.data import Dataset
from twbn.scoring.errors import ParameterError

__all__ = ["penalty_weight", "Scorer", "local_score"]

SCORES = ("bic", "aic", "bdeu")
#: Scores whose penalty is c·(r−1)·q, for which the BIC pruning rules hold (with that c).
PENALISED_LL_SCORES = ("bic", "aic")


def penalty_weight(score: str, n_rows: int) -> float:
    """The constant c of the penalty ``t(Π) = c·(r_X − 1)·q(Π)``; BIC: ln N / 2, AIC: 1."""
    if score == "bic":
        return math.log(n_rows) / 2.0
    if score == "aic":
        return 1.0
    raise ParameterError(f"score {score!r} has no penalty of the form c·(r−1)·q")


class Scorer:
    """Scores families of one data set, sharing parent-configuration codes.

    ``codes(Π)`` is built from the cached codes of Π's prefix, so scoring sets in
    level order costs one O(N) pass per new parent set plus one per child.
    """

    def __init__(self, dataset: Dataset, score: str = "bic", ess: float = 1.0):
        if score not in SCORES:
            raise ParameterError(f"unknown score {score!r}; choose one of {', '.join(SCORES)}")
        if score == "bdeu" and not (ess > 0 and math.isfinite(ess)):
            raise ParameterError(f"BDeu needs a positive equivalent sample size, got {ess!r}")
        if dataset.n_rows < 1:
            raise ParameterError("cannot score an empty data set")
        dataset.require_complete("scoring")  # the counting kernels read a code as an index
        self.dataset = dataset
        self.score = score
        self.ess = float(ess) if score == "bdeu" else 0.0
        self.n_rows = dataset.n_rows
        self.arities = dataset.arities
        self.data = dataset.data
        self._nlogn = nlogn_table(self.n_rows)
        self._c = penalty_weight(score, self.n_rows) if score in PENALISED_LL_SCORES else 0.0
        self._codes: dict[tuple[int, ...], tuple[np.ndarray, int]] = {
            (): (np.zeros(self.n_rows, np.int32), 1)
        }

    @property
    def penalty_c(self) -> float:
        return self._c

    def q(self, parents: Sequence[int]) -> float:
        """Number of parent configurations (a float: products can exceed 2**63)."""
        return float(math.prod(int(self.arities[p]) for p in parents))

    def penalty(self, child: int, parents: Sequence[int]) -> float:
        """``t(Π) = c·(r_X − 1)·q(Π)`` (0 for BDeu, whose penalty is implicit)."""
        return self._c * (int(self.arities[child]) - 1) * self.q(parents)

    def codes(self, parents: tuple[int, ...], *, keep: bool = True) -> tuple[np.ndarray, int]:
        """The configuration codes of ``parents`` over the rows and their number; those of
        every prefix are cached, and those of ``parents`` too where ``keep``."""
        got = self._codes.get(parents)
        if got is None:
            prev, q = self.codes(parents[:-1])
            last = parents[-1]
            got = extend_codes(prev, q, self.data[last], int(self.arities[last]))
            if keep:
                self._codes[parents] = got
        return got

    def forget_codes(self, keep_prefixes_of: tuple[int, ...] = ()) -> None:
        """Drop cached codes except those of the strict prefixes of ``keep_prefixes_of``
        (the empty set's always)."""
        self._codes = {k: v for k, v in self._codes.items()
                       if not k or len(k) < len(keep_prefixes_of) and keep_prefixes_of[:len(k)] == k}

    def family(self, parents: tuple[int, ...], children: Iterable[int], *,
               keep_codes: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Scores and log-likelihoods of ``children`` (none in ``parents``) given ``parents``;
        ``keep_codes=False`` caches the codes of ``parents``' prefixes only."""
        ch = np.fromiter(children, dtype=np.int64)
        codes, q = self.codes(parents, keep=keep_codes)
        q_full = self.q(parents)
        ll, bdeu = family_scores(codes, q, self.data, ch, self.arities, self._nlogn, self.ess, q_full)
        if self.score == "bdeu":
            return bdeu, ll
        pen = self._c * (self.arities[ch] - 1) * q_full
        return ll - pen, ll

    def local_score(self, child: int, parents: Iterable[int]) -> float:
        parents = tuple(sorted(parents))
        if child in parents:
            raise ParameterError(f"variable {child} cannot be its own parent")
        return float(self.family(parents, [child])[0][0])

    def log_likelihood(self, child: int, parents: Iterable[int]) -> float:
        return float(self.family(tuple(sorted(parents)), [child])[1][0])

    def entropy(self, var: int, given: Iterable[int] = ()) -> float:
        """Empirical (conditional) entropy H(var | given) in nats."""
        return -self.log_likelihood(var, given) / self.n_rows


def local_score(dataset: Dataset, child: int, parents: Iterable[int], score: str = "bic", ess: float = 1.0) -> float:
    """One local score; for many, build a :class:`Scorer` once."""
    return Scorer(dataset, score, ess).local_score(child, parents)
