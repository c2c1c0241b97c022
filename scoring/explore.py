"""Approximate parent-set exploration for thousands of variables.

Exhaustive identification (``twbn.scoring.parent_sets``) scores Θ(n^(d+1)) sets; at n = 2,000
and more it cannot finish. Here, in the spirit of the independence-selection /
sequential exploration of Scanagatta, de Campos, Corani & Zaffalon (2015, "Learning
Bayesian networks with thousands of variables", Sec. 3), each variable X gets:

1. **Candidates**: the ``candidates`` variables of highest mutual information I(X;Y).
   All n² pairs come from one product of one-hot matrices, in blocks of variables (BLAS;
   O(N·A²) flops for A = Σ arities, O(N·A) memory): N·I(X;Y) = S_XY − T_X − T_Y + N ln N
   with S_XY = Σ_ab N_ab ln N_ab and T_X = Σ_a N_a ln N_a.
2. **Best-first growth** within a per-variable time budget: ∅ and every {Y} are scored,
   then the best-scoring set found so far is extended by each candidate in turn, up to
   ``max_parents`` parents, until the budget or the sets run out.
3. **The safe pruning rules** of ``twbn.scoring.parent_sets`` for BIC/AIC: rule 5 (cap on the
   parents), and rules 2 and 4 on each (P, Z) before P ∪ {Z} is scored — a rule firing
   proves P ∪ {Z} and its supersets no better than a subset, so they are never generated.
   Rule 1 (subset dominance, any score) is applied to the scored sets at the end, over
   every scored strict subset.

With ``candidates`` ≥ n − 1 and no budget the exploration visits every set that is not
pruned, and the cache equals the exhaustive one (tested). Caches from here have
``stats["approximate"] = True`` unless every variable was explored to the end.

Work is split over ``jobs`` processes by variable (fork; the data is shared copy-on-write).
Memory per worker: the data, one code array per parent set in the current growth frontier.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from typing import Callable

import numpy as np

from twbn.scoring.cache import ParentSet, ScoreCache
from twbn.scoring.data import Dataset
from twbn.scoring.local_scores import PENALISED_LL_SCORES, Scorer
from twbn.scoring.parallel import fork_map, shared
from twbn.scoring.parent_sets import _fires, parent_cap
from twbn.scoring.errors import ParameterError

__all__ = ["pairwise_mutual_information", "candidate_parents", "explore_variable", "drop_dominated",
           "explore_cache"]

#: Variables per block of the pairwise mutual-information product.
MI_BLOCK = 512


def pairwise_mutual_information(dataset: Dataset, block: int = MI_BLOCK) -> np.ndarray:
    """N·I(X;Y) in nats for every pair (float32 n × n; the diagonal is −inf).

    Counts come from float32 products of one-hot matrices: exact while N < 2^24.
    """
    dataset.require_complete("scoring")
    n, N = dataset.n_variables, dataset.n_rows
    if N >= 2**24:
        raise ParameterError("more than 16 million rows: pairwise counts would lose precision in float32")
    ar = dataset.arities.astype(np.int64)
    offs = np.concatenate([[0], np.cumsum(ar)])
    A = int(offs[-1])
    onehot = np.zeros((N, A), dtype=np.float32)
    rows = np.arange(N)
    for v in range(n):
        onehot[rows, offs[v] + dataset.data[v]] = 1.0
    marg = onehot.sum(axis=0, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(marg > 0, marg * np.log(marg), 0.0)
    T = np.add.reduceat(t, offs[:-1])  # Σ_a N_a ln N_a per variable
    out = np.empty((n, n), dtype=np.float32)
    for v0 in range(0, n, block):
        v1 = min(n, v0 + block)
        C = onehot[:, offs[v0]:offs[v1]].T @ onehot  # (A_block, A) joint counts
        with np.errstate(divide="ignore", invalid="ignore"):
            C = np.where(C > 0, C * np.log(C), 0.0).astype(np.float32)
        S = np.add.reduceat(np.add.reduceat(C, offs[:-1], axis=1), offs[v0:v1] - offs[v0], axis=0)
        out[v0:v1] = S - T[v0:v1, None] - T[None, :] + N * math.log(N)
    np.fill_diagonal(out, -np.inf)
    return out


def candidate_parents(mi: np.ndarray, k: int) -> np.ndarray:
    """For each variable, the ``k`` others of highest mutual information, best first."""
    n = mi.shape[0]
    k = min(k, n - 1)
    if k <= 0:
        return np.zeros((n, 0), dtype=np.int64)
    top = np.argpartition(-mi, k - 1, axis=1)[:, :k]
    order = np.argsort(-np.take_along_axis(mi, top, axis=1), axis=1, kind="stable")
    return np.take_along_axis(top, order, axis=1)


def explore_variable(scorer: Scorer, x: int, cands: np.ndarray, max_parents: int, deadline: float | None,
                     rules: bool) -> tuple[dict[ParentSet, float], bool]:
    """Best-first exploration of X's parent sets over ``cands``; returns the scored sets
    (before dominance) and whether the exploration ran to the end."""
    N = scorer.n_rows
    r = scorer.arities
    c = scorer.penalty_c
    sc, ll = scorer.family((), [x])
    scores: dict[ParentSet, float] = {(): float(sc[0])}
    hx = -float(ll[0]) / N  # H(X)
    if rules:
        cap = parent_cap(N, hx, int(r[x]), c)
        max_parents = min(max_parents, cap)
        h0 = {}
    cond_h: dict[ParentSet, float] = {(): hx}  # H(X | P) of every scored P
    cands = [int(y) for y in cands]

    def pruned(p: ParentSet, z: int) -> bool:
        """Rules 4 and 2 on (P, Z): P ∪ {Z} and every superset are useless for X."""
        cost = (int(r[z]) - 1) * c * (int(r[x]) - 1) * scorer.q(p)
        if z not in h0:
            h0[z] = scorer.entropy(z)
        return _fires(N * min(hx, h0[z]), cost) or _fires(N * cond_h[p], cost)

    heap: list[tuple[float, ParentSet]] = [(-scores[()], ())]
    while heap:
        _, p = heapq.heappop(heap)
        if len(p) >= max_parents:
            continue
        for z in cands:
            if z in p:
                continue
            s = tuple(sorted(p + (z,)))
            if s in scores:
                continue
            if rules and pruned(p, z):
                continue
            if deadline is not None and time.monotonic() > deadline:
                return scores, False
            sc, ll = scorer.family(s, [x])
            scores[s] = float(sc[0])
            cond_h[s] = -float(ll[0]) / N
            heapq.heappush(heap, (-scores[s], s))
        scorer.forget_codes()
    return scores, True


def drop_dominated(scores: dict[ParentSet, float]) -> dict[ParentSet, float]:
    """Rule 1 over every scored strict subset (not only immediate ones: here a scored set's
    subsets need not all have been scored)."""
    kept = {}
    for s, v in scores.items():
        dominated = False
        for k in range(len(s)):
            for sub in itertools.combinations(s, k):
                if sub in scores and scores[sub] >= v:
                    dominated = True
                    break
            if dominated:
                break
        if not dominated:
            kept[s] = v
    return kept


def _explore_chunk(xs: list[int]) -> list[tuple[int, list[tuple[ParentSet, float]], int, bool]]:
    w = shared()
    scorer = Scorer(w["dataset"], w["score"], w["ess"])
    out = []
    for x in xs:
        deadline = None if w["time_per_variable"] is None else time.monotonic() + w["time_per_variable"]
        scored, complete = explore_variable(scorer, x, w["cands"][x], w["max_parents"], deadline, w["rules"])
        kept = drop_dominated(scored) if w["dominance"] else scored
        out.append((x, list(kept.items()), len(scored), complete))
    return out


def explore_cache(dataset: Dataset, *, score: str = "bic", ess: float = 1.0, max_parents: int = 3,
                  candidates: int = 30, time_per_variable: float | None = 0.5, pruning: bool = True,
                  jobs: int = 2, progress: bool | None = None,
                  stop: Callable[[], bool] | None = None) -> tuple[ScoreCache, dict]:
    """An approximate score cache for large n (see the module docstring).

    ``candidates``: parents considered per variable (by mutual information).
    ``time_per_variable``: seconds of growth per variable (None: no limit).
    ``pruning``: the safe rules (2, 4, 5 while exploring; 1 at the end; BDeu gets rule 1 only).
    ``jobs``: worker processes. Stats say what was scored and kept, how many variables ran
    out of budget, and ``approximate``. ``stop()`` true ends it as each chunk of variables
    is done, with :class:`ScoringStopped` and no cache.
    """
    if max_parents < 0:
        raise ParameterError(f"max_parents must be >= 0, got {max_parents}")
    if candidates < 0:
        raise ParameterError(f"candidates must be >= 0, got {candidates}")
    if time_per_variable is not None and not time_per_variable > 0:
        raise ParameterError(f"time_per_variable must be positive, got {time_per_variable}")
    if jobs < 1:
        raise ParameterError(f"jobs must be at least 1, got {jobs}")
    Scorer(dataset, score, ess)  # validates score, ess and rows here, not in a worker
    t0 = time.monotonic()
    n = dataset.n_variables
    mi = pairwise_mutual_information(dataset)
    cands = candidate_parents(mi, candidates)
    del mi
    t_mi = time.monotonic() - t0
    rules = pruning and score in PENALISED_LL_SCORES
    state = dict(dataset=dataset, score=score, ess=ess, cands=cands, max_parents=min(max_parents, n - 1),
                 time_per_variable=time_per_variable, rules=rules, dominance=pruning)
    chunk = max(1, min(64, n // (8 * jobs) or 1))
    chunks = [list(range(i, min(n, i + chunk))) for i in range(0, n, chunk)]
    families: list[dict[ParentSet, float]] = [{} for _ in range(n)]
    scored = exhausted = 0
    for part in fork_map(_explore_chunk, chunks, state=state, jobs=jobs, total=n, desc="exploring parent sets",
                         progress=progress, count=len, stop=stop):
        for x, kept, n_scored, complete in part:
            families[x] = dict(kept)
            scored += n_scored
            exhausted += complete
    cache = ScoreCache.from_mapping(dataset.names, families, arities=[int(a) for a in dataset.arities],
                                    meta={"score": score, "ess": ess if score == "bdeu" else None,
                                          "rows": dataset.n_rows})
    complete = exhausted == n and candidates >= n - 1
    stats = {
        "score": score, "ess": ess if score == "bdeu" else None, "rows": dataset.n_rows, "variables": n,
        "max_parents": max_parents, "explorer": "best-first over mutual-information candidates",
        "candidates": int(cands.shape[1]), "time_per_variable": time_per_variable,
        "rules": ([1, 2, 4, 5] if rules else [1]) if pruning else [],
        "scored": scored, "kept": cache.n_parent_sets(), "variables_explored_to_the_end": exhausted,
        "complete": complete, "approximate": not complete,
        "mi_seconds": round(t_mi, 3), "seconds": round(time.monotonic() - t0, 3), "jobs": jobs,
    }
    cache.meta.update({"complete": complete, "approximate": not complete, "max_parents": max_parents})
    return cache, stats
