"""Statistics the papers' tables use: W-scores and the sign test."""

from __future__ import annotations

import math
from twbn.scoring.errors import ParameterError

__all__ = ["w_score", "sign_test", "structural_hamming_distance"]


def w_score(reference: float, score: float) -> float:
    """Worsening against a reference score G (Scanagatta et al. 2016): (G − T) / |G|, so
    0 is as good as the reference and larger is worse. (The paper writes (G − T)/G and
    says both are negative, which would make worse scores negative; its tables are
    non-negative, so |G| is what it means.)"""
    if reference == 0:
        raise ParameterError("the reference score must be non-zero")
    return (reference - score) / abs(reference)


def sign_test(wins: int, losses: int) -> float:
    """Two-sided p-value of the sign test (exact binomial, p = 1/2; ties left out)."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(0, min(wins, losses) + 1)) / 2**n
    return min(1.0, 2 * tail)


def structural_hamming_distance(true_parents, learned_parents) -> int:
    """SHD between two DAGs on the same variables (parents[v] = v's parent indices): the
    variable pairs whose arc is missing, extra or reversed, each pair counted once."""
    t = {(p, v) for v, ps in enumerate(true_parents) for p in ps}
    g = {(p, v) for v, ps in enumerate(learned_parents) for p in ps}
    d = 0
    for a, b in {tuple(sorted(e)) for e in t | g}:
        if ((a, b) in t) != ((a, b) in g) or ((b, a) in t) != ((b, a) in g):
            d += 1
    return d
