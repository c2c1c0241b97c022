"""Which k? The treewidth bound chosen by held-out likelihood within an inference budget.

Problem: a bounded-treewidth network is wanted that fits unseen rows well and answers
queries fast. Held-out likelihood rises with the bound k and flattens, while exact
inference costs grow with the junction tree (Machado et al.'s study of exactly this
trade-off, reproduced in ``benchmarks/results/machado-study.md``). This room composes
what twbn has into one choice:

1. **the curve** (:mod:`~twbn.which_k.curve`): k = 1, 2, … learned as a sweep (each bound
   from the networks of the one before, so a fold's score never falls with k) on each
   fold's training rows (:mod:`~twbn.which_k.folds`: one validation split, or k-fold when
   rows are few), each network's log-likelihood measured on its held-out rows with the
   smoothing of ``Solution.to_pgmpy``, its junction tree's size and the seconds of an
   exact query;
2. **the rule** (:mod:`~twbn.which_k.rule`): among the bounds within the inference budget
   (``max_table_size``, ``max_query_seconds``), the smallest k within one standard error
   of the best k's held-out likelihood;
3. **the refit** (:mod:`~twbn.which_k.refit`): that k learned again on every row, from
   the chosen network, within the budget; at the largest of the bounds right after it
   whose networks did not move from the chosen ones, where there are such (they measured
   their time, not the data: :func:`_refit_bound`).

The time is the whole command's: ``Policy.which_k_refit_share`` of it for the refit, the
rest for the curve, each bound an equal part of what is left. Where the curve measures no
bound in its time, k = 1, the bound that costs least, is learned on every row, and the
result says why (``stats["which_k"]["why"]``) rather than ending in an error. k = 1 is measured first
(the exact DP: its seconds are what a bound costs without a search); the bounds after it
are every k up to ``max_treewidth`` where the time left gives each
``Policy.which_k_bound_cost`` times that, else fewer, spread out to ``max_treewidth``
(:func:`ladder`): at cwebkb (n = 839, 30 s) the seven bounds of about a second each left
their start unmoved and the curve looked flat. The sweep stops at ``max_treewidth``,
when ``Policy.which_k_patience`` bounds in a row are no better held out (a bound whose
networks did not move from their start does not count: it measured the time, not the
curve), or at the first bound whose networks are over the inference budget.

Examples
--------
>>> import twbn
>>> sol = twbn.learn(twbn.example_path("zoo"), treewidth="auto", time_limit=20, seed=0)
>>> curve = sol.stats["which_k"]["curve"]
>>> sol.treewidth == sol.stats["which_k"]["chosen"] and curve[0]["k"] == 1
True
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass

import numpy as np

from twbn.scoring.errors import ParameterError
from twbn.which_k.curve import FoldData, measure_bound
from twbn.which_k.folds import folds
from twbn.which_k.refit import refit
from twbn.which_k.rule import choose, fits

__all__ = ["WhichK", "as_which_k", "ladder", "learn_which_k"]


@dataclass(frozen=True)
class WhichK:
    """``treewidth="auto"`` with its limits: ``twbn.learn(df, treewidth=WhichK(max_table_size=10**6))``.

    Parameters
    ----------
    max_treewidth : int, default 8
        The largest k tried.
    max_table_size : int, optional
        No k whose networks' junction trees hold more table entries (the sum over cliques
        of the product of their arities; ``Solution.table_size``) is chosen, and the
        returned network's is within it.
    max_query_seconds : float, optional
        No k whose network takes longer for one exact query (a marginal given two
        observed variables, by variable elimination in the certificate's order) is chosen.

    Examples
    --------
    >>> WhichK(max_treewidth=0)
    Traceback (most recent call last):
    ...
    twbn.scoring.errors.ParameterError: max_treewidth must be a whole number >= 1, got 0
    """

    max_treewidth: int = 8
    max_table_size: int | None = None
    max_query_seconds: float | None = None

    def __post_init__(self):
        if not isinstance(self.max_treewidth, int) or isinstance(self.max_treewidth, bool) or self.max_treewidth < 1:
            raise ParameterError(f"max_treewidth must be a whole number >= 1, got {self.max_treewidth!r}")
        if self.max_table_size is not None and (not isinstance(self.max_table_size, int) or self.max_table_size < 1):
            raise ParameterError(f"max_table_size must be a whole number >= 1, got {self.max_table_size!r}")
        q = self.max_query_seconds
        if q is not None and not (isinstance(q, (int, float)) and q > 0 and math.isfinite(q)):
            raise ParameterError(f"max_query_seconds must be a positive number of seconds, got {q!r}")


def as_which_k(treewidth) -> "WhichK | None":
    """``treewidth`` as a :class:`WhichK` where it asks for the choice ("auto" or a
    WhichK), else None; another text is a ParameterError."""
    if isinstance(treewidth, WhichK):
        return treewidth
    if isinstance(treewidth, str):
        if treewidth.strip().lower() == "auto":
            return WhichK()
        raise ParameterError(f"treewidth must be a whole number, a list of them, None or 'auto', not {treewidth!r}")
    return None


def learn_which_k(data, which: WhichK, *, time_limit, seed, policy, log, learn_args: dict, learn,
                  started: float | None = None):
    """:func:`twbn.learn` with ``treewidth="auto"``: see the module's docstring.

    ``learn_args`` are ``learn``'s keywords every bound is learned with (method, score, …);
    ``learn``, :func:`twbn.learn` (handed down: nothing here imports it); ``started``, the
    ``time.monotonic()`` the time counts from (default: now).
    """
    t0 = time.monotonic() if started is None else started
    total = policy.which_k_default_s if time_limit is None else time_limit
    if not math.isfinite(total):
        raise ParameterError("treewidth='auto' divides its time among the bounds: give a finite time_limit")
    say = log or (lambda line: None)
    dataset = _rows(data, learn_args)
    parts, how = _fold_data(dataset, seed, policy, which, total, learn_args)
    say(f"which k: {how}; k = 1 to {which.max_treewidth}, {total:g} s in all")
    args = {**learn_args, "seed": seed, "policy": policy, "log": None, "catch_signals": True}
    points, networks = _curve(parts, which, t0 + total * (1 - policy.which_k_refit_share), policy, args, say, learn)
    if points:
        chosen, why = choose(points, which.max_table_size, which.max_query_seconds)
        bound, why = _refit_bound(points, chosen, why)
        starts = networks[chosen.k]
    else:  # k = 1, the bound that costs least, rather than an error
        bound, why, starts = 1, NOTHING_MEASURED, []
    say(f"which k: k = {bound}, {why}")
    sol, refit_how = refit(dataset, bound, starts, t0 + total, {**args, "cache": None}, which.max_table_size, learn)
    return _with_curve(sol, points, bound, why, how, refit_how, which, total, time.monotonic() - t0)


#: Why k = 1 where the curve measured no bound: at munin (n = 1,041, 5,000 rows, 30 s) with
#: ``which_k_refit_share`` 0.7 the command ended in an error instead (2026-12-07).
NOTHING_MEASURED = ("the curve measured no bound in its time: k = 1, the bound that costs least, learned on every "
                    "row; give more time for a choice")


def _refit_bound(points, chosen, why: str) -> tuple[int, str]:
    """The bound the refit learns at: the chosen k, or the largest of the bounds measured
    right after it whose networks stayed the chosen ones. Those bounds measured the time
    they had, not the data: at insurance (n = 27, 30 s) k = 4 to 8 left k = 3's networks
    unmoved in about 2 s each, k = 3 was chosen, and every fixed k from 4 to 8, given the
    30 s, found a width-4 network 0.61 % better on the test rows (2026-12-07). The refit
    starts from the chosen network, so its score on every row is never below it."""
    later = sorted((p for p in points if p.k > chosen.k), key=lambda p: p.k)
    still = [p.k for p in itertools.takewhile(lambda p: not p.moved, later)]
    if not still:
        return chosen.k, why
    return still[-1], (f"{why}: k = {chosen.k}; learned again at k = {still[-1]}, as k = "
                       f"{', '.join(map(str, still))} left its networks unmoved (the curve there measured their "
                       "time, not the data)")


def _rows(data, learn_args: dict):
    """The data as a Dataset; a score cache is refused (held-out rows are needed)."""
    from twbn.scoring.cache import ScoreCache
    from twbn.scoring.data import as_dataset
    from twbn.scoring.local_scores import SCORES

    if isinstance(data, ScoreCache) or str(data).endswith((".jkl", ".jkl.gz")):
        raise ParameterError("treewidth='auto' chooses k by the likelihood of held-out rows: give the data, "
                             "not a score cache")
    if learn_args.get("score", "bic") not in SCORES:
        raise ParameterError(f"treewidth='auto' learns with the scores {', '.join(SCORES)}, "
                             f"not {learn_args.get('score')!r}")
    dataset = as_dataset(data, missing=learn_args.get("missing", "em"), missing_token=learn_args.get("missing_token"))
    if dataset.n_rows < 2:
        raise ParameterError(f"treewidth='auto' holds rows out to measure each k: {dataset.n_rows} row is too few")
    return dataset


def _fold_data(dataset, seed, policy, which: WhichK, total: float, learn_args: dict):
    """Each fold's rows and its training rows' cache, scored once for every bound."""
    from twbn.learn_stages import _learning_cache

    out = []
    split, how = folds(dataset.n_rows, seed, policy)
    each = total * (1 - policy.which_k_refit_share) / len(split)
    bounds = list(range(1, which.max_treewidth + 1))
    for f in split:
        train = dataset.subset_rows(f.train)
        cache, _, holes = _learning_cache(
            train, True, bounds, cache=None, score=learn_args.get("score", "bic"),
            max_parents=learn_args.get("max_parents"), ess=learn_args.get("ess", 1.0),
            pruning=learn_args.get("pruning", "all"), approximate=learn_args.get("approximate", "auto"),
            time_limit=each, started=time.monotonic(), policy=policy, log=None, missing="em", missing_token=None)
        out.append(FoldData(train, dataset.subset_rows(f.test), None if holes is not None else cache))
    return out, how


def _curve(parts, which: WhichK, end: float, policy, args: dict, say, learn):
    """The points of k = 1, then the bounds of :func:`ladder`, and each bound's fold
    networks, until ``end``, the largest bound, a flat stretch, or a bound over the
    inference budget."""
    points, networks, previous, flat = [], {}, [None] * len(parts), 0
    _import_pgmpy()  # once, before k = 1, whose seconds set the ladder
    todo = [1]
    while todo:
        k = todo.pop(0)
        left = end - time.monotonic()
        if left <= 0:
            say(f"which k: the curve's time is spent after k = {points[-1].k if points else 0}")
            break
        point, sols = measure_bound(k, parts, previous, left / (len(todo) + 1 if k > 1 else which.max_treewidth),
                                    args, learn)
        if point is None or any(s.stats.get("interrupted") for s in sols):
            break
        points.append(point)
        moved = point.moved = k == 1 or _moved(sols, previous)
        networks[k], previous = sols, sols
        say(f"which k: k = {k}: held-out {point.held_out:.4f} per row (± {point.held_out_se:.4f}), "
            f"junction tree {point.table_size:,} entries, {point.seconds:.1f} s"
            + ("" if moved else "; its networks are the bound before's (no move in its time): not counted as flat"))
        if not fits(point, which.max_table_size, which.max_query_seconds):
            break  # a larger k's network is rarely smaller: the sweep starts each bound from the last
        before = [p.held_out for p in points[:-1]]
        if moved:
            flat = 0 if not before or point.held_out > max(before) else flat + 1
        if flat >= policy.which_k_patience:
            break
        if k == 1:
            todo = ladder(end - time.monotonic(), point.seconds, which.max_treewidth, policy.which_k_bound_cost)
            if len(todo) < which.max_treewidth - 1:
                say(f"which k: k = 1 took {point.seconds:.1f} s; {end - time.monotonic():.1f} s left give "
                    f"{policy.which_k_bound_cost:g} times that to k = {', '.join(map(str, todo))}")
    return points, networks


def ladder(left: float, first_s: float, max_treewidth: int, cost: float) -> list[int]:
    """The bounds after k = 1: every k up to ``max_treewidth`` where ``left`` seconds give
    each at least ``cost`` times ``first_s`` (k = 1's seconds: learning, held-out rows and
    queries, no search), else as many as that allows spread evenly from 2 to
    ``max_treewidth``, which is always one of them.

    Parameters
    ----------
    left : float
        The curve's seconds left after k = 1.
    first_s : float
        k = 1's seconds.
    max_treewidth : int
    cost : float
        ``Policy.which_k_bound_cost``.

    Returns
    -------
    list of int
        The bounds to measure, increasing.

    Examples
    --------
    >>> ladder(60.0, 1.0, 8, 3.0), ladder(10.0, 1.0, 8, 3.0), ladder(7.0, 1.0, 8, 3.0), ladder(1.0, 1.0, 8, 3.0)
    ([2, 3, 4, 5, 6, 7, 8], [2, 5, 8], [2, 8], [8])
    >>> ladder(60.0, 1.0, 1, 3.0)
    []
    """
    every = list(range(2, max_treewidth + 1))
    fit = int(left // (cost * first_s)) if first_s > 0 else len(every)
    if fit >= len(every):
        return every
    if fit <= 1:
        return every[-1:]
    return sorted({int(round(x)) for x in np.linspace(2, max_treewidth, fit)})


def _moved(sols: list, previous: list) -> bool:
    """Whether any fold's network differs from the one it started from (a fold learned
    afresh, without a start, counts as moved)."""
    for sol, start in zip(sols, previous):
        if start is None or [set(p) for p in sol.parent_indices()] != [set(p) for p in start.parent_indices()]:
            return True
    return False


def _import_pgmpy() -> None:
    """pgmpy's import (2.5 s at cwebkb) paid before k = 1, not as part of its seconds."""
    from twbn.scoring.inference import InferenceUnavailable, require_pgmpy

    try:
        require_pgmpy()
    except InferenceUnavailable:
        pass  # the queries are not timed (measure_bound's _query_seconds gives None)


def _with_curve(sol, points, chosen: int, why: str, how: str, refit_how: str, which: WhichK, total: float,
                seconds: float):
    """``sol`` with ``stats["which_k"]``: the curve, the choice and why, the refit."""
    from twbn.solution import Solution

    record = sol.to_json()
    record["stats"]["which_k"] = {
        "chosen": chosen, "why": why, "rule": "the smallest k within one standard error of the best held-out "
                                                "log-likelihood per row, among the bounds within the inference budget",
        "validation": how, "refit": refit_how, "curve": [p.to_json() for p in points],
        "max_treewidth": which.max_treewidth, "max_table_size": which.max_table_size,
        "max_query_seconds": which.max_query_seconds, "time_limit": total, "seconds": round(seconds, 3)}
    record["time_limit"] = total
    return Solution(record)
