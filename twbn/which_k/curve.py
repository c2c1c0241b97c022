"""One bound of the curve: its networks learned on each fold's training rows, each
measured on the fold's held-out rows, and what exact inference on them costs."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from twbn.which_k.rule import Point

__all__ = ["FoldData", "measure_bound"]

#: The smoothing of the held-out likelihood: that of ``Solution.to_pgmpy`` and ``twbn evaluate``,
#: whatever the score's own ess, so that the curve is the likelihood the user's model will have.
HELD_OUT_ESS = 1.0

#: Queries timed per bound (on the first fold's network): enough for a per-query figure,
#: few enough that timing stays a small part of a bound's seconds.
QUERIES = 3


@dataclass
class FoldData:
    """A fold's rows and the cache scored from its training rows (None: learn scores, as
    for data with missing cells, which structural EM learns)."""

    train: object
    test: object
    cache: object


def measure_bound(k: int, parts: list[FoldData], previous: list, seconds: float, learn_args: dict, learn,
                  time_queries: bool = True):
    """The :class:`Point` of bound ``k`` and the network of each fold.

    Each fold's network is learned in ``seconds / len(parts)``, from the fold's network
    of the bound before (``previous``; a sweep's start, so its score is never below it),
    except with missing cells, where structural EM learns each bound afresh; ``learn`` is
    :func:`twbn.learn`.
    """
    from twbn.scoring.likelihood import held_out_row_log_likelihoods

    t0 = time.monotonic()
    sols, rows, query = [], [], None
    for i, part in enumerate(parts):
        share = max(seconds * (i + 1) / len(parts) - (time.monotonic() - t0), 0.05)
        start = previous[i] if part.cache is not None else None  # structural EM takes no start yet
        sol = learn(part.train, treewidth=k, time_limit=share, cache=part.cache, best_so_far=start, **learn_args)
        sols.append(sol)
        if not sol.is_network:
            return None, sols
        rows.append(held_out_row_log_likelihoods(part.train, part.test, sol.variables, sol.parent_indices(),
                                                 ess=HELD_OUT_ESS))
        if i == 0 and time_queries:
            query = _query_seconds(sol, part.train)
    every = np.concatenate(rows)
    point = Point(k, float(np.mean([s.score for s in sols])), float(every.mean()),
                  float(every.std(ddof=1) / np.sqrt(len(every))) if len(every) > 1 else 0.0,
                  max(s.table_size for s in sols), max(s.width for s in sols), query, time.monotonic() - t0, every)
    return point, sols


def _query_seconds(sol, train) -> float | None:
    """Mean seconds of one exact query (a marginal given two observed variables) on
    ``sol`` fitted to ``train``, by variable elimination in the certificate's order; None
    where pgmpy is missing or the tables are too large to time (``inference_time``)."""
    from twbn.scoring.inference import InferenceUnavailable, inference_time, learned_model

    try:
        model = learned_model(train, list(sol.variables), sol.parent_indices(), ess=HELD_OUT_ESS)
        return inference_time(model, list(sol.elimination_order), queries=QUERIES, junction_tree=False)["ve_query_s"]
    except InferenceUnavailable:
        return None
