"""One call from data to a network: :func:`learn` (phases 1 and 2; ``score``, phase 1,
is in ``twbn/scoring_phase.py``).

Learning a Bayesian network whose moral graph has treewidth ≤ k runs in two phases
(de Campos & Ji 2011; Korhonen & Parviainen 2013; Scanagatta et al. 2016):

1. **parent-set identification**: the local score (BIC, AIC or BDeu) of every candidate
   parent set of every variable, pruned by rules that never lose the optimum;
2. **structure optimisation**: one candidate set per variable, acyclic, treewidth ≤ k,
   maximising the sum of the local scores, by an exact DP, an ILP, CP-SAT or a heuristic.

``learn`` does both and returns a certified :class:`~twbn.solution.Solution`: it builds one
:class:`~twbn.request.LearnRequest` (every option documented and checked there) and runs it
(:func:`run_learn`); its stages are in ``twbn/learn_stages.py``, ``treewidth="auto"`` in
``twbn/which_k/``, ``discretize=`` in ``twbn/variants.py``.
"""

from __future__ import annotations

import math
import time
from typing import Sequence

from twbn.formulations.problem import Problem
from twbn.learn_stages import _arcs, _given_starts, _learn_with_missing, _learning_cache, _sweep_bounds
from twbn.request import LearnRequest
from twbn.solution import Solution
from twbn.scoring_phase import score, scoring_depth, scoring_plan, scoring_time  # noqa: F401  (the CLI's)
from twbn.variants import cut_first, learn_which_k_checked, recording, with_cuts
from twbn.which_k import as_which_k

__all__ = ["score", "learn", "run_learn", "LearnRequest"]


def learn(data, treewidth: "int | None | Sequence[int | None] | str" = None, method: str = "auto",
          **options) -> "Solution | list[Solution]":
    """Learn a Bayesian network whose moral graph has treewidth ≤ ``treewidth``.

    Parameters
    ----------
    data : pandas.DataFrame, str, Path, Dataset or ScoreCache
        Data (scored first), or a score cache (a ScoreCache, or a ``.jkl`` path).
    treewidth : int, list of int, "auto" or WhichK, optional
        The bound k (None: no bound); a list sweeps the bounds in increasing order and
        returns one Solution each; ``"auto"`` chooses k by held-out likelihood.
    method : str, default "auto"
        ``auto`` or any registered method (``twbn methods`` lists them).
    **options
        The other fields of :class:`twbn.LearnRequest`, where each is documented and
        checked: ``time_limit``, ``seed``, ``solver``, ``warm_start``, ``forbid``,
        ``require``, the scoring parameters (``score``, ``max_parents``, ``ess``,
        ``pruning``, ``approximate``, ``cache``), ``options`` (the method's), ``jobs``,
        ``scheduler``, ``best_so_far``, the run's hooks (``log``, ``on_result``,
        ``progress``, ``started``, ``catch_signals``), ``policy``, ``missing``,
        ``missing_token``, ``discretize``.

    Returns
    -------
    Solution, or list of Solution for a list of bounds
        Parents by name, score, proven bound and gap where the method proves one,
        status, the certificate (elimination order and width). It has passed the
        certificate checks; ``Solution.check(cache)`` runs the independent verifier.

    Raises
    ------
    DataError, CacheError
        Bad data or a malformed cache.
    ParameterError
        An option ``learn`` does not take, unknown variables in ``forbid``/``require``, a
        negative treewidth, an unknown method or an option the method does not take, a
        ``best_so_far`` wider than a bound, a ``scheduler`` that cannot be used
        (``SchedulerUnavailable``: dask distributed missing, not reached, a method that
        runs on one machine only, ``jobs`` < 2).

    Notes
    -----
    ``auto``'s rule is :mod:`twbn.solvers.auto` (by n, k, whether the data or a cache is
    given, and the budget); the choice and its reason are in ``solution.stats["auto"]``
    and logged to the ``twbn`` logger.

    SIGINT (Ctrl-C) or SIGTERM, in the main thread, while an anytime method runs returns
    its best network so far, with ``stats["interrupted"]`` true, as ``twbn learn`` does; a
    sweep stopped so returns the bounds that ran. During an exact method, which has no
    network to keep, ``on_result`` receives an ``unknown`` Solution marked interrupted and
    KeyboardInterrupt is raised as usual.

    Examples
    --------
    >>> import twbn, pandas
    >>> df = pandas.read_csv(twbn.example_path("housing"))
    >>> sol = twbn.learn(df, treewidth=1)
    >>> sol.status, round(sol.score, 3), sol.width
    ('optimal', -5645.296, 1)
    >>> len(sol.arcs), sorted(sol.parents)[:3]
    (13, ['AGE', 'B', 'CHAS'])
    >>> sol.stats["auto"]
    'n = 14, k = 1: at most one parent each, a maximum branching solves it exactly'
    >>> seen = []
    >>> sols = twbn.learn(df, treewidth=[1, 2], method="kg", time_limit=1, seed=0, on_result=seen.append)
    >>> [s.treewidth for s in seen], sols[1].score >= sols[0].score
    ([1, 2], True)
    >>> twbn.learn(df, treewidth=1, time_limt=1)
    Traceback (most recent call last):
    ...
    twbn.scoring.errors.ParameterError: learn takes no option 'time_limt' (did you mean 'time_limit'?)
    """
    return run_learn(LearnRequest.of(data, treewidth, method, **options))


def run_learn(request: LearnRequest) -> "Solution | list[Solution]":
    """:func:`learn`'s pipeline: the time's start fixed, the request checked, the columns
    cut (``discretize``), then the bound chosen (``treewidth="auto"``, which checks its
    own), or the cache scored and structural EM (missing cells) or the sweep run."""
    request = request.replace(started=_call_start(request.started, request.time_limit))
    which = as_which_k(request.treewidth)
    checked = request.check() if which is None else None  # before any column is cut
    cuts = None
    if request.discretize is not None:
        cuts, data = cut_first(request.data, request.discretize, missing_token=request.missing_token)
        request = request.replace(data=data, discretize=None, on_result=None if request.on_result is None
                                  else recording(request.on_result, cuts))
    if which is not None:
        out = learn_which_k_checked(request.data, which, request, learn)
    else:
        out = _learn_bounds(request, checked)
    if cuts is None:
        return out
    return [with_cuts(s, cuts) for s in out] if isinstance(out, list) else with_cuts(out, cuts)


def _learn_bounds(r: LearnRequest, checked) -> "Solution | list[Solution]":
    """A checked request with one or several bounds: its cache, then structural EM where
    the data has missing cells, else the sweep."""
    bounds, policy, from_data = checked
    several = isinstance(r.treewidth, (list, tuple))
    cache, scorer, holes = _learning_cache(
        r.data, from_data, bounds, cache=r.cache, score=r.score, max_parents=r.max_parents, ess=r.ess,
        pruning=r.pruning, approximate=r.approximate, time_limit=r.time_limit, started=r.started, policy=policy,
        log=r.log, missing=r.missing, missing_token=r.missing_token)
    if holes is not None:
        return _learn_with_missing(holes, bounds, several, r.method, time_limit=r.time_limit, seed=r.seed,
                                   score=r.score, max_parents=r.max_parents, ess=r.ess, log=r.log, policy=policy,
                                   started=r.started, forbid=r.forbid, require=r.require, cache=r.cache,
                                   warm_start=r.warm_start, best_so_far=r.best_so_far, on_result=r.on_result)
    forbidden, required = _arcs(r.forbid, cache.names, "forbidden"), _arcs(r.require, cache.names, "required")
    problems = [Problem(cache, k, forbidden, required, scorer) for k in bounds]
    warm_start, best, best_k = _given_starts(r.warm_start, r.best_so_far, problems, bounds)
    run_args = dict(solver=r.solver, time_limit=r.time_limit, seed=r.seed, warm_start=warm_start, options=r.options,
                    jobs=r.jobs, scheduler=r.scheduler, log=r.log, started=r.started, policy=policy)
    out = _sweep_bounds(problems, r.method, run_args, best=best, best_k=best_k, on_result=r.on_result,
                        progress=r.progress, catch_signals=r.catch_signals, missing=r.missing,
                        missing_token=r.missing_token)
    return out if several else out[0]


def _call_start(started, time_limit) -> "float | None":
    """When a finite ``time_limit`` counts from: ``started`` where given, else now. Before,
    the limit counted from the method's start and scoring ran outside it: from Python,
    ``learn(cwebkb, treewidth=8, time_limit=7)`` took 12.7 s (2026-12-07). Left as given
    where the limit is not a finite number (none, ``inf``, or one the request's check refuses)."""
    if started is not None or isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)):
        return started
    return time.monotonic() if math.isfinite(time_limit) else started
