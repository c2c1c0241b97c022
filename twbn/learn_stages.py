"""The stages of :func:`twbn.learn` with a bound (or several, or none), once
:meth:`twbn.request.LearnRequest.check` has checked its arguments: the cache it searches
and the scorer of families on demand (``_learning_cache``), the starts it is given
(``_given_starts``), the sweep over the bounds (``_sweep_bounds``), what the search ranged
over (``_say_search_space``), and data with missing cells handed to structural EM
(``_learn_with_missing``). ``twbn/learning.py`` runs them in order; ``twbn/which_k/`` uses
them for its folds.
"""

from __future__ import annotations

import logging
import math
import time
from typing import TYPE_CHECKING, Iterable

import numpy as np

from twbn.formulations.problem import Problem
from twbn.scoring.cache import ScoreCache
from twbn.scoring.data import as_dataset, data_identity
from twbn.solution import Solution
from twbn.scoring.errors import ParameterError
from twbn.scoring_phase import score, scoring_depth, scoring_plan, search_cache

_score = score  # learn's own ``score`` parameter shadows the function

if TYPE_CHECKING:
    from twbn.solvers.policy import Policy

__all__ = ["_learning_cache", "_given_starts", "_sweep_bounds", "_say_search_space", "_arcs",
           "_learn_with_missing"]


LOG = logging.getLogger("twbn")


def _arcs(arcs: Iterable, names: tuple[str, ...], kind: str) -> frozenset[tuple[int, int]]:
    """(parent, child) index pairs from pairs of names or ``"A,B"`` strings."""
    from twbn.formulations.problem import parse_arcs

    out = set()
    for arc in arcs:
        if isinstance(arc, str):
            out |= parse_arcs([arc], names)
            continue
        try:
            parent, child = arc
        except (TypeError, ValueError):
            raise ParameterError(f"{kind} arc {arc!r} must be a (parent, child) pair of variable names") from None
        out |= parse_arcs([f"{parent},{child}"], names)
    return frozenset(out)


def _learn_with_missing(dataset, bounds, several, method, *, time_limit, seed, score, max_parents, ess, log, policy,
                        started, forbid, require, cache, warm_start, best_so_far, on_result
                        ) -> "Solution | list[Solution]":
    """``learn`` on data with missing cells (``missing="em"``): structural EM, said in one
    line; under several bounds, in increasing order, each bound's EM with the network of
    the bound before as a rival at its end (each bound gets ``time_limit``)."""
    from twbn.em import structural_em
    from twbn.scoring.data import missing_summary
    from twbn.solvers.registry import run

    say = log or (lambda line: LOG.info(line))
    for name, value in (("cache", cache), ("warm_start", warm_start), ("best_so_far", best_so_far)):
        if value:
            raise ParameterError(f"{name} does not apply to structural EM (data with missing cells) yet")
    if score not in ("bic", "aic"):
        raise ParameterError(f"data with missing cells is learned by structural EM, which scores bic or aic on expected "
                         f"counts, not {score!r} (or read it with missing='state' or 'complete-rows')")
    forbidden, required = _arcs(forbid, dataset.names, "forbidden"), _arcs(require, dataset.names, "required")
    say(f"{missing_summary(dataset)}: learned by structural EM (missing='em'; 'state' or 'complete-rows' to do "
        "otherwise)")
    out: list[Solution] = []
    before = None  # the network of the bound before: a rival at the next bound's end
    for k in bounds:
        limit = policy.auto_time_limit if time_limit is None else time_limit
        if started is not None and not out:
            limit = max(0.5, limit - (time.monotonic() - started))
        sol, problem, info = structural_em(dataset, k, method=method, time_limit=limit, seed=seed, score=score,
                                           max_parents=max_parents, ess=ess, forbidden=forbidden, required=required,
                                           rivals=[before] if before is not None else [],
                                           solve=lambda p, m, **kw: run(p, m, policy=policy, log=log, **kw),
                                           policy=policy, log=say)
        sol.stats["structural_em"] = {"iterations": info["iterations"], "stopped": info["stopped"],
                                      "copies": info["copies"], "missing": info["missing"], "start": info["start"],
                                      "chosen": info["chosen"], "observed_scores": info["observed_scores"],
                                      "from_no_arcs": info["from_no_arcs"],
                                      "from_available_cases": info["from_available_cases"],
                                      "cpts": [np.asarray(c).tolist() for c in info["cpts"]]}
        if info["chosen"] == "rival 1":
            sol.stats["structural_em"]["chosen_network"] = f"the network of treewidth <= {out[-1].treewidth}"
        sol.stats["search_space"] = ("structural EM: each M-step searched the families of the data's expected "
                                     "counts under its completions (" + info["families"] + ")")
        sol.stats["bound_scope"] = info["bound_scope"]
        held = sum(1 for v, ps in enumerate(sol.parents or []) if problem.cache.holds(v, ps))
        sol.stats["families_in_cache"] = f"{held} of {len(sol.parents or [])}"
        sol.stats["data"] = data_identity(dataset)
        done = Solution(sol.to_json(problem))
        out.append(done)
        before = [tuple(ps) for ps in sol.parents]
        if on_result is not None:
            on_result(done)
    return out if several else out[0]


def _learning_cache(data, from_data: bool, bounds, *, cache, score, max_parents, ess, pruning, approximate, time_limit,
                    started, policy, log, missing, missing_token):
    """The cache :func:`learn` searches and, from data, the scorer of families on demand
    (None from a cache); or, for data with missing cells under ``missing="em"``, the
    dataset structural EM learns from (third, else None)."""
    from twbn.scoring.jkl import read_jkl
    from twbn.scoring.local_scores import SCORES

    if isinstance(data, ScoreCache):
        return data, None, None
    if not from_data:
        return read_jkl(data), None, None
    dataset = as_dataset(data, missing=missing, missing_token=missing_token) if score in SCORES else data
    if score in SCORES and dataset.n_missing:
        return cache, None, dataset
    from twbn.scoring.families import FamilyScores

    families = FamilyScores(dataset, score, ess, max_parents=max_parents) if score in SCORES else None
    if cache is None:
        depth = scoring_depth(max_parents, bounds, timed=time_limit is not None and math.isfinite(time_limit),
                              policy=policy)
        how, seconds = scoring_plan(dataset, score, depth, ess=ess, pruning=pruning, approximate=approximate,
                                    time_limit=time_limit, started=started, policy=policy)
        if families is None:  # a local-structure score: score()'s own path
            cache = _score(dataset, score, depth, ess=ess, pruning=pruning, approximate=how, time_limit=seconds,
                           log=log)
        else:
            cache, _ = search_cache(dataset, score, depth, ess=ess, pruning=pruning, approximate=how,
                                    time_limit=seconds, say=log or LOG.info, families=families,
                                    level_margin=policy.data_cache_level_margin if how is False else 0.0)
    elif list(cache.names) != list(getattr(dataset, "names", cache.names)):
        raise ParameterError("cache= has other variables than the data")
    return cache, families, None


def _given_starts(warm_start, best_so_far, problems: list, bounds: list):
    """The caller's start (a Solution made internal) and ``best_so_far`` with its bound, or
    a ParameterError where it is wider than the narrowest bound."""
    from twbn.formulations.solution import SolverResult as Internal

    if isinstance(warm_start, Solution):
        warm_start = Internal.from_json(warm_start.to_json(), problems[0])
    if best_so_far is None or not best_so_far.is_network:
        return warm_start, None, None
    narrowest = bounds[0]
    if narrowest is not None and (best_so_far.width is None or best_so_far.width > narrowest):
        raise ParameterError(f"best_so_far has width {best_so_far.width}, above the bound {narrowest}")
    return warm_start, Internal.from_json(best_so_far.to_json(), problems[0]), best_so_far.treewidth


def _sweep_bounds(problems: list, method: str, run_args: dict, *, best, best_k, on_result, progress, catch_signals,
                  missing, missing_token) -> "list[Solution]":
    """Each bound's Solution, in increasing order, each run from the best network of the
    smaller ones (``run_args``: the registry's ``run`` keywords); a signal keeps the
    method's best network, or, with none, records the bound as interrupted and raises."""
    import contextlib
    import threading

    from twbn.formulations.solution import SolverResult as Internal
    from twbn.solvers.control import RunControl, reporting
    from twbn.solvers.registry import get_method, run
    from twbn.solvers.sweep import sweep

    control = RunControl()
    out: list[Solution] = []

    def one(problem: Problem, start):
        return run(problem, method, **{**run_args, "warm_start": start if start is not None else run_args["warm_start"],
                                       "started": run_args["started"] if problem is problems[0] else None},
                   control=control)

    def finished(problem: Problem, sol) -> None:
        _say_search_space(problem, sol)
        if problem.scorer is not None and missing != "em":  # check reads the data as learn did
            sol.stats["data"].update(missing=missing, **({} if missing_token is None else {"missing_token": missing_token}))
        done = Solution(sol.to_json(problem))
        i = next(j for j, p in enumerate(problems) if p is problem)
        if i < len(out):  # again: a larger bound's proof tightened its bound
            out[i] = done
        else:
            out.append(done)
        if on_result is not None:
            on_result(done)

    main = catch_signals and threading.current_thread() is threading.main_thread()
    try:
        with control.catching() if main else contextlib.nullcontext(), \
                reporting(control, progress) if progress is not None else contextlib.nullcontext():
            sweep(problems, one, takes_start=get_method(method).warm_start, on_result=finished,
                  stopped=control.stop_requested, best=best, best_k=best_k)
    except KeyboardInterrupt:  # a method with nothing to keep (the DPs; milp on CBC or while pyomo builds)
        control.request_stop()
        finished(problems[len(out)], Internal(
            None, None, None, "unknown", method=method, solver=run_args["solver"], seed=run_args["seed"],
            time_limit=run_args["time_limit"], wall_time=round(time.monotonic() - control.t0, 4),
            stats={"reason": "interrupted before a network was found", "interrupted": True}))
        raise
    return out


def _say_search_space(problem: Problem, sol) -> None:
    """Record in ``sol.stats`` what the search ranged over (``search_space``) and how many
    of its network's families the cache held (``families_in_cache``), and, from data, the
    scoring of every family (``scoring``: ``twbn check DATA RESULT`` re-scores with it)."""
    cache, scorer = problem.cache, problem.scorer
    if scorer is None:
        sol.stats["search_space"] = "the cache's parent sets"
    else:
        cap = problem.family_max_parents
        sol.stats["search_space"] = ("the cache's parent sets, and families scored from the data on demand by "
                                     "the methods that search them (localsearch, auto's start)"
                                     + ("" if cap is None else f", at most {cap} parents"))
        sol.stats["scoring"] = {"score": scorer.score_name, "ess": scorer.ess if scorer.score_name == "bdeu" else None,
                                "rows": scorer.dataset.n_rows, "families_scored": scorer.scored}
        sol.stats["data"] = data_identity(scorer.dataset)
    if sol.parents is not None:
        held = sum(1 for v, ps in enumerate(sol.parents) if cache.holds(v, ps))
        sol.stats["families_in_cache"] = f"{held} of {len(sol.parents)}"
