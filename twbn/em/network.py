"""Structural EM's network tools: an order for a network without one, the observed cells'
score the end compares by, the depth of an M-step's cache, and the M-step's problem over
the completed data."""

from __future__ import annotations

import itertools
import math
import time

import numpy as np

from twbn.formulations.problem import Problem
from twbn.scoring.cache import ScoreCache
from twbn.scoring.data import Dataset
from twbn.scoring.families import FamilyScores
from twbn.scoring.posterior import row_log_likelihood

__all__ = ["network_order", "observed_score", "cache_depth", "required_parents", "m_step_problem"]


def network_order(parents) -> list[int]:
    """An elimination order of the network's moral graph (greedy min-fill): the E-step's
    order when a network carries none."""
    from twbn.formulations.graphs import min_fill_order, moral_graph

    return list(min_fill_order(moral_graph([tuple(p) for p in parents])))


def observed_score(codes: np.ndarray, arities, parents, cpts, order, score: str = "bic", *,
                   penalty: float | None = None) -> float:
    """The observed cells' log-likelihood under the network and its tables, computed exactly
    (``row_log_likelihood``), minus the ``score``'s penalty of the network's free
    parameters over the data's rows (the objective structural EM climbs), or ``penalty``
    per free parameter where given (1: AIC).

    Examples
    --------
    >>> import numpy as np
    >>> codes = np.array([[0, 1, -1, 1]])
    >>> cpts = [np.array([[0.25, 0.75]])]
    >>> got = observed_score(codes, [2], [()], cpts, [0], "aic")  # 3 observed cells, 1 parameter
    >>> bool(abs(got - (np.log(0.25) + 2 * np.log(0.75) - 1)) < 1e-12)
    True
    """
    from twbn.scoring.local_scores import penalty_weight

    arities = np.asarray(arities, np.int64)
    ll = float(row_log_likelihood(codes, arities, parents, cpts, order).sum())
    free = sum((int(arities[v]) - 1) * int(np.prod([arities[u] for u in ps], dtype=np.int64)) for v, ps in enumerate(parents))
    return ll - (penalty_weight(score, codes.shape[1]) if penalty is None else penalty) * free


def cache_depth(n: int, max_parents: int | None, families: int) -> int:
    """The most parents L for which n·C(n − 1, L) stays within ``families`` (the policy's
    ``em_cache_families``): at least 1, at most ``max_parents`` and n − 1.

    Examples
    --------
    >>> [cache_depth(n, None, 100_000) for n in (17, 37, 100)], cache_depth(17, 2, 100_000)
    ([5, 2, 1], 2)
    """
    depth = 1
    top = n - 1 if max_parents is None else min(n - 1, max_parents)
    while depth < top and n * math.comb(n - 1, depth + 1) <= families:
        depth += 1
    return min(depth, max(top, 0))


def required_parents(required, n: int) -> list[tuple[int, ...]]:
    """Each variable's required parents, sorted."""
    return [tuple(sorted(u for u, w in required if w == v)) for v in range(n)]


def m_step_problem(completed: Dataset, copies: int, score: str, k: int | None, parents, max_parents: int | None,
             depth: int, deadline: float, forbidden: frozenset = frozenset(),
             required: frozenset = frozenset(), available: bool = False) -> tuple[Problem, int]:
    """The M-step's problem: every family of at most ``depth`` parents, the network's and
    each variable's required parents, scored on the averaged counts (``available``: on each
    family's available cases of data with holes); more on demand. A size of two or more
    parents is started only if, at the rate of the size before, it is predicted to end by
    ``deadline``. Returns the problem and the size the cache holds whole."""
    fs = FamilyScores(completed, score, max_parents=max_parents, copies=copies, available=available)
    n = completed.n_variables
    for v, need in enumerate(required_parents(required, n)):
        fs.score(v, ())
        fs.score(v, parents[v])
        fs.score(v, need)
    held = 0
    for size in range(depth):  # every family of size + 1 parents: bases of ``size``, each extended by one
        began = time.monotonic()
        if size >= 1:
            sets, rate = n * math.comb(n - 1, size + 1), elapsed / max(1, n * math.comb(n - 1, size))
            if began + sets * rate > deadline:
                break
        for v in range(n):
            others = [u for u in range(n) if u != v]
            for base in itertools.combinations(others, size):
                fs.score_additions(v, base, [u for u in others if not base or u > base[-1]])
        elapsed = time.monotonic() - began
        held = size + 1
    cache = ScoreCache.from_mapping(completed.names, [fs.known(v) for v in range(n)],
                                    arities=[len(s) for s in completed.states],
                                    meta={"source": "structural EM: " + ("available cases" if available
                                                                          else "expected counts")})
    return Problem(cache, k, forbidden, required, scorer=fs), held
