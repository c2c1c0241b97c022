"""Phase 1 of learning from data: :func:`score` (data to a pruned cache of local scores)
and how much of a ``learn``'s time scoring gets (:func:`scoring_time`,
:func:`scoring_plan`, :func:`scoring_depth`).

Parent-set identification (de Campos & Ji 2011; Scanagatta et al. 2015): the local score
(BIC, AIC, BDeu, or a local-structure score) of every candidate parent set of every
variable, pruned by rules that never lose the optimum, exhaustively where it fits and by
an exploration sized to the time otherwise. ``twbn/learning.py`` is phase 2.
"""

from __future__ import annotations

import logging
import math
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

import numpy as np

from twbn.scoring.cache import ScoreCache
from twbn.scoring.data import DEFAULT_MAX_STATES, as_dataset
from twbn.scoring.parallel import usable_cores
from twbn.scoring.parent_sets import DEFAULT_MAX_PARENTS
from twbn.scoring.errors import ParameterError

if TYPE_CHECKING:
    from twbn.scoring.families import FamilyScores
    from twbn.solvers.policy import Policy

__all__ = ["score", "search_cache", "scoring_time", "scoring_plan", "scoring_depth"]

LOG = logging.getLogger("twbn")



#: Exhaustive scoring expected to take longer than this is announced, with its estimate.
LONG_SCORING_S = 60.0
#: ``approximate="auto"`` (``learn`` from data): exhaustive scoring where it is expected to
#: take at most this long and to fit in memory; approximate exploration otherwise.
AUTO_EXHAUSTIVE_MAX_S = 600.0
#: Approximate exploration's defaults: candidate parents per variable (by mutual
#: information), seconds of growth per variable, worker processes.
DEFAULT_CANDIDATES, DEFAULT_TIME_PER_VARIABLE, DEFAULT_SCORING_JOBS = 30, 0.5, 2


def score(
    data,
    score: str = "bic",
    max_parents: int = DEFAULT_MAX_PARENTS,
    *,
    ess: float = 1.0,
    pruning: str = "all",
    approximate: "bool | str" = False,
    time_limit: float | None = None,
    max_states: int = DEFAULT_MAX_STATES,
    candidates: int | None = None,
    time_per_variable: float | None = None,
    jobs: int | None = None,
    max_splits: int | None = None,
    max_bins: int | None = None,
    continuous: Iterable[str] = (),
    categorical: Iterable[str] = (),
    memory_limit: float | None = None,
    progress: bool | None = False,
    log: "Callable[[str], None] | None" = None,
    return_stats: bool = False,
    seed: int | None = None,
    stop: "Callable[[], bool] | None" = None,
    missing: str = "em",
    missing_token: str | None = None,
) -> "ScoreCache | tuple[ScoreCache, dict]":
    """The pruned local scores of the candidate parent sets of every variable.

    Parameters
    ----------
    data : pandas.DataFrame, str, Path or Dataset
        Complete discrete data: a DataFrame (one column per variable), the path of a CSV
        or CSV.gz with a header of names, or a :class:`~twbn.scoring.data.Dataset`.
    score : {"bic", "aic", "bdeu", "pcart", "pcartp", "ft", "ftp"}, default "bic"
        The local score (natural logarithms). ``pcart``/``ft`` and their ``p`` variants
        score decision-tree local structure and take continuous columns too (Talvitie et
        al. 2019); ``data`` is then a DataFrame or a CSV path.
    max_parents : int, default 3
        The most parents a candidate set may have.
    ess : float, default 1.0
        BDeu's equivalent sample size (BDeu only; other scores ignore it).
    pruning : {"all", "entropy", "classic", "none"}, default "all"
        Which safe pruning rules to apply (BDeu gets subset dominance only).
    approximate : bool or "auto", default False
        True, for hundreds of variables or more: best-first exploration among each
        variable's ``candidates`` of highest mutual information, ``time_per_variable``
        seconds each, instead of the exhaustive Θ(n^(d+1)) scoring. ``"auto"`` (what
        :func:`learn` does with data) scores exhaustively where that is expected to take
        at most 600 s and fit in ``memory_limit``, and explores otherwise, saying so
        through ``log``.
    time_limit : float, optional
        Exhaustive scoring: stop after this many seconds with a valid, partial cache
        (``cache.meta["complete"]`` is then False). Approximate exploration: the seconds
        it should take in all (its time per variable follows; give one or the other).
        With ``approximate="auto"``: exhaustive scoring is chosen where it is expected to
        fit them, an exploration sized to them otherwise.
    max_states : int, default 64
        Reject columns with more states (identifiers, undiscretised numbers).
    missing : {"em", "state", "complete-rows", "error"}, default "em"
        Missing cells (``twbn.read_csv``): a cache is scored from complete data, so under
        ``"em"`` missing cells are an error in one line naming them (``twbn.learn`` fits
        them by structural EM); ``"state"`` and ``"complete-rows"`` score as they say.
    missing_token : str, optional
        One more cell text that means missing.
    candidates, time_per_variable : optional
        Approximate exploration only: candidate parents per variable (default 30) and
        seconds per variable (default 0.5).
    jobs : int, optional
        Worker processes of approximate exploration and of the local-structure scores
        (default 2, or 1 where this process may use one core only); exhaustive scoring runs
        in one.
    max_splits, max_bins : int, optional
        ``pcart``/``ft`` only: dyadic splits per continuous predictor (default 3), quantile
        bins (default 7).
    continuous, categorical : iterable of str
        ``pcart``/``ft`` only: columns forced continuous or categorical.
    memory_limit : float, optional
        Bytes exhaustive scoring may use (default: three quarters of this machine's memory).
    progress : bool or None, default False
        Progress bars on standard error; None shows them on a terminal.
    log : callable, optional
        Receives the one-line notes (the choice of ``approximate="auto"``, a long scoring
        ahead); default: the ``twbn`` logger.
    return_stats : bool, default False
        Also return the scoring's statistics (what was scored, kept and pruned, seconds).
    seed : int, optional
        Accepted for symmetry with :func:`learn`; scoring is deterministic.
    stop : callable, optional
        Asked while scoring runs (a ``threading.Event``'s ``is_set``, say); once it returns
        True scoring ends with :class:`ScoringStopped` and no cache (a program's Ctrl-C).

    Returns
    -------
    ScoreCache, or (ScoreCache, dict) with ``return_stats``
        ``cache.parent_sets[v]`` best first, parent sets as sorted tuples of indices;
        ``cache.names`` the variables. ``twbn.write_jkl`` saves it.

    Raises
    ------
    DataError
        Missing values, ragged rows, duplicate names, too many states.
    ParameterError
        An unknown score or pruning mode, a negative ``max_parents``, or an option that
        does not apply to the scoring asked for.
    ScoringTooLarge
        Exhaustive scoring would need (or reached) more than ``memory_limit``;
        ``approximate=True`` explores large sets instead.
    ScoringStopped
        ``stop()`` returned True.

    Examples
    --------
    >>> import twbn
    >>> cache = twbn.score(twbn.example_path("zoo"), max_parents=2)
    >>> cache.n_variables, cache.names[:3]
    (17, ('hair', 'feathers', 'eggs'))
    >>> [cache.names[p] for p in cache.parent_sets[cache.names.index("milk")][0]]
    ['eggs', 'venomous']
    >>> cache, stats = twbn.score(twbn.example_path("zoo"), max_parents=2, return_stats=True)
    >>> stats["kept"] == sum(len(ps) for ps in cache.parent_sets)
    True
    """
    del seed  # deterministic
    jobs = _check_score_args(score, max_parents, ess, pruning, approximate, time_limit, jobs, candidates,
                             time_per_variable, max_splits=max_splits, max_bins=max_bins,
                             continuous=tuple(continuous), categorical=tuple(categorical))
    say = log if log is not None else LOG.info
    from twbn.scoring.local_structure import LOCAL_STRUCTURE_SCORES

    if score in LOCAL_STRUCTURE_SCORES:
        cache, stats = _score_local_structure(data, score, max_parents, max_states=max_states, max_splits=max_splits,
                                              max_bins=max_bins, continuous=tuple(continuous),
                                              categorical=tuple(categorical), time_limit=time_limit, jobs=jobs,
                                              progress=progress, stop=stop)
        return (cache, stats) if return_stats else cache
    dataset = as_dataset(data, max_states=max_states, missing=missing, missing_token=missing_token)
    dataset.require_complete("scoring a cache")
    cache, stats = search_cache(dataset, score, max_parents, ess=ess, pruning=pruning, approximate=approximate,
                                time_limit=time_limit, candidates=candidates, time_per_variable=time_per_variable,
                                jobs=jobs, memory_limit=memory_limit, progress=progress, stop=stop, say=say)
    return (cache, stats) if return_stats else cache


def search_cache(dataset, score: str, max_parents: int, *, ess: float, pruning: str, approximate: "bool | str",
                 time_limit: float | None, say: "Callable[[str], None]", candidates: int | None = None,
                 time_per_variable: float | None = None, jobs: int | None = None, memory_limit: float | None = None,
                 progress: bool | None = False, stop: "Callable[[], bool] | None" = None, level_margin: float = 0.0,
                 families: "FamilyScores | None" = None) -> tuple[ScoreCache, dict]:
    """:func:`score`'s cache and stats of complete discrete data (bic, aic, bdeu), arguments
    checked, with two things only ``learn`` gives: ``level_margin`` (exhaustive scoring with
    a ``time_limit``: above 0 a size of parent sets is not started unless this many times
    its predicted seconds, at the rate of the size before, fit, so that the cache holds
    every set of the sizes started; the policy's ``data_cache_level_margin``) and
    ``families`` (a scorer of families on demand from the same data and score, given the
    families of one parent scored on the way, pruned ones too, so that the search does
    not count them again)."""
    from twbn.scoring.parent_sets import build_cache, default_memory_limit

    _check_scoring(score, max_parents, ess, pruning, approximate)
    jobs = min(DEFAULT_SCORING_JOBS, usable_cores()) if jobs is None else jobs
    _check_families(families, dataset, score, ess)
    limit = default_memory_limit() if memory_limit is None else memory_limit
    approximate, estimate = _exhaustive_or_not(dataset, score, ess, max_parents, pruning, approximate, time_limit,
                                               time_per_variable, limit, say)
    if approximate:
        return _score_explore(dataset, score, ess, max_parents, pruning, candidates, time_per_variable,
                              time_limit, jobs=jobs, progress=progress, stop=stop)
    if time_limit is None:
        _say_if_long(dataset, score, ess, max_parents, pruning, estimate, limit, say)
    return build_cache(dataset, score=score, ess=ess, max_parents=max_parents, pruning=pruning,
                       time_limit=time_limit, progress=progress, memory_limit=limit, stop=stop,
                       level_margin=level_margin, families=families)


def _check_families(families, dataset, score: str, ess: float) -> None:
    """``families`` None, or a FamilyScores of these rows and this score: pairs scored here
    would otherwise be handed to a search of other data, silently."""
    if families is None:
        return
    from twbn.scoring.families import FamilyScores

    if not isinstance(families, FamilyScores):
        raise ParameterError(f"families must be a FamilyScores, got {type(families).__name__}")
    mine = families.dataset
    if (families.score_name, families.ess if score == "bdeu" else None) != (score, ess if score == "bdeu" else None) \
            or (mine is not dataset and (mine.names != dataset.names or not np.array_equal(mine.data, dataset.data))):
        raise ParameterError("families scores other data or another score than this call")


def _check_score_args(score, max_parents, ess, pruning, approximate, time_limit, jobs, candidates, time_per_variable,
                      *, max_splits, max_bins, continuous, categorical) -> int:
    """:func:`score`'s arguments checked once; returns the scoring processes (``jobs``, by
    default as many as the machine lets, at most ``DEFAULT_SCORING_JOBS``)."""
    from twbn.scoring.local_structure import LOCAL_STRUCTURE_SCORES

    _check_scoring(score, max_parents, ess, pruning, approximate)
    _check_number("time_limit", time_limit, optional=True)
    _check_int("jobs", jobs, 1, optional=True)
    local = score in LOCAL_STRUCTURE_SCORES
    for name, value in (("max_splits", max_splits), ("max_bins", max_bins), ("continuous", continuous),
                        ("categorical", categorical)):
        if value and not local:
            raise ParameterError(f"{name} applies to the pcart/ft scores only, not {score!r}")
    if approximate is not True:
        for name, value in (("candidates", candidates), ("time_per_variable", time_per_variable)):
            if value is not None and not (approximate == "auto" and not local):
                raise ParameterError(f"{name} applies to approximate exploration only")
    return min(DEFAULT_SCORING_JOBS, usable_cores()) if jobs is None else jobs


def _score_local_structure(data, score, max_parents, *, max_states, max_splits, max_bins, continuous, categorical,
                           time_limit, jobs, progress, stop):
    """The pcart/ft scores: each family's best local structure, continuous columns split."""
    from twbn.scoring.local_structure import DEFAULT_MAX_BINS, DEFAULT_MAX_SPLITS, build_local_structure_cache

    return build_local_structure_cache(
        _mixed(data, continuous=continuous, categorical=categorical, max_states=max_states),
        score=score, max_parents=max_parents,
        max_splits=DEFAULT_MAX_SPLITS if max_splits is None else max_splits,
        max_bins=DEFAULT_MAX_BINS if max_bins is None else max_bins,
        time_limit=time_limit, jobs=jobs, progress=progress, stop=stop)


def _exhaustive_or_not(dataset, score, ess, max_parents, pruning, approximate, time_limit, time_per_variable, limit,
                       say):
    """Whether to explore approximately (``approximate="auto"``: where the exhaustive
    cache's predicted memory or seconds do not fit), with the estimate made for it."""
    from twbn.scoring.parent_sets import exhaustive_estimate

    estimate = None
    if approximate == "auto":
        estimate = exhaustive_estimate(dataset, score=score, ess=ess, max_parents=max_parents, pruning=pruning)
        fits = min(AUTO_EXHAUSTIVE_MAX_S, math.inf if time_limit is None else time_limit)
        approximate = limit is not None and estimate.bytes > limit or estimate.seconds > fits
        if approximate:
            say(f"exhaustive scoring of {dataset.n_variables:,} variables at in-degree <= {max_parents} would need "
                f"{estimate.describe()}; exploring approximately instead (--approximate)")
    elif approximate and time_limit is not None and time_per_variable is not None:
        raise ParameterError("approximate exploration takes time_per_variable or time_limit (the whole), not both")
    return approximate, estimate


def _score_explore(dataset, score, ess, max_parents, pruning, candidates, time_per_variable, time_limit, *, jobs,
                   progress, stop):
    """The approximate exploration's cache and stats, its time per variable from the limit."""
    from twbn.scoring.explore import explore_cache

    if time_per_variable is None and time_limit is not None:
        # spend about the time limit on exploring, not 0.5 s a variable; the pairwise mutual
        # information and the processes' start take about a third of it (munin, n = 1,041,
        # 4.5 s: 1.8 s of mutual information; a floor of 0.02 s a variable took 9.1 s)
        time_per_variable = min(DEFAULT_TIME_PER_VARIABLE, max(0.002, 0.65 * time_limit * jobs / dataset.n_variables))
    return explore_cache(dataset, score=score, ess=ess, max_parents=max_parents, pruning=pruning != "none",
                         candidates=DEFAULT_CANDIDATES if candidates is None else candidates,
                         time_per_variable=DEFAULT_TIME_PER_VARIABLE if time_per_variable is None
                         else time_per_variable, jobs=jobs, progress=progress, stop=stop)


def _say_if_long(dataset, score, ess, max_parents, pruning, estimate, limit, say) -> None:
    """Without a time limit, a note where exhaustive scoring is predicted to take long."""
    from twbn.scoring.parent_sets import exhaustive_estimate

    if estimate is None:
        estimate = exhaustive_estimate(dataset, score=score, ess=ess, max_parents=max_parents, pruning=pruning)
    if estimate.seconds > LONG_SCORING_S and (limit is None or estimate.bytes <= limit):
        say(f"note: exhaustive scoring may take long: {estimate.describe()} (--approximate explores "
            "large sets faster; --time-limit stops with a partial cache)")




def scoring_time(time_limit: float | None, started: float | None, policy: "Policy | None" = None) -> float | None:
    """What scoring data may take of a learning call's ``time_limit``: where the limit
    covers the whole call (``started`` given), the policy's ``scoring_share`` of what is
    left of it; otherwise the limit is the method's alone and scoring is sized to it, as if
    it had one of its own."""
    from twbn.solvers.budget import limit_until
    from twbn.solvers.policy import DEFAULT_POLICY

    policy = policy or DEFAULT_POLICY
    if time_limit is None or math.isinf(time_limit):
        return None
    if started is None:
        return time_limit
    return max(policy.min_engine_s, policy.scoring_share * limit_until(started + time_limit, policy))


def scoring_plan(dataset, score: str, max_parents: int, *, ess: float = 1.0, pruning: str = "all",
                 approximate: "bool | str" = "auto", time_limit: float | None = None, started: float | None = None,
                 policy: "Policy | None" = None, memory_limit: float | None = None) -> tuple["bool | str", float | None]:
    """How ``learn`` scores data into its cache: ``(approximate, time_limit)`` for
    :func:`score`. Where the families a search reaches are scored on demand beyond the
    cache (bic, aic, bdeu: ``Problem.scorer``), the cache need not hold them all: with a
    time limit it is exhaustive, level by level (every single parent, then every pair, ...)
    for the policy's ``data_cache_share`` of what is left of the limit, stopped there with
    the levels done (``cache.meta["complete"]`` False), unless even that would not fit in
    memory, where the exploration of ``approximate="auto"`` is kept. Otherwise (no time
    limit, an explicit ``approximate``, local-structure scores) as :func:`scoring_time`
    says."""
    from twbn.scoring.local_scores import SCORES
    from twbn.solvers.budget import limit_until
    from twbn.solvers.policy import DEFAULT_POLICY

    policy = policy or DEFAULT_POLICY
    timed = scoring_time(time_limit, started, policy) if approximate else None
    if approximate != "auto" or score not in SCORES or timed is None:
        return approximate, timed
    from twbn.scoring.parent_sets import default_memory_limit, exhaustive_estimate

    limit = default_memory_limit() if memory_limit is None else memory_limit
    # sizes of three or more parents enter only where they are predicted to fit the time
    # (the level margin): the memory that matters is that of the sizes that always enter
    if limit is not None and exhaustive_estimate(dataset, score=score, ess=ess,
                                                 max_parents=min(max_parents, DEFAULT_MAX_PARENTS),
                                                 pruning=pruning).bytes > limit:
        return approximate, timed
    left = time_limit if started is None else limit_until(started + time_limit, policy)
    return False, max(policy.min_engine_s, min(timed, policy.data_cache_share * left))


def scoring_depth(max_parents: int | None, bounds: "Sequence[int | None]", *, timed: bool = False,
                  policy: "Policy | None" = None) -> int:
    """The most parents a cache scored for learning under ``bounds`` holds.

    Parameters
    ----------
    max_parents : int or None
        The user's cap (None: 3, or with ``timed`` the largest bound).
    bounds : sequence of int or None
        The treewidth bounds learned (None: unbounded).
    timed : bool, default False
        Scoring has a time limit, under which a size of three or more parents enters the
        cache only where it is predicted to fit (``Policy.data_cache_level_margin``): the
        run's own measurement, not n, then says how deep the cache goes, up to k (unless
        ``policy.data_cache_max_parents`` fixes the depth).
    policy : Policy, optional
        The default policy where None.

    Returns
    -------
    int
        ``max_parents``, but never more than the largest bound k where every bound is
        finite: a family of p parents is a clique of p + 1 variables in the moral graph
        (width >= p).

    Examples
    --------
    >>> scoring_depth(None, [2]), scoring_depth(None, [5]), scoring_depth(4, [1, 2]), scoring_depth(None, [2, None])
    (2, 3, 2, 3)
    >>> from twbn.solvers.policy import Policy
    >>> deep = Policy(data_cache_max_parents=0)
    >>> scoring_depth(None, [5], timed=True), scoring_depth(None, [5], timed=True, policy=deep)
    (3, 5)
    >>> scoring_depth(4, [8], timed=True, policy=deep), scoring_depth(None, [8, None], timed=True, policy=deep)
    (4, 3)
    """
    from twbn.solvers.policy import DEFAULT_POLICY

    finite = bool(bounds) and None not in bounds
    fixed = (policy or DEFAULT_POLICY).data_cache_max_parents
    if max_parents is None and timed and finite and not fixed:
        # Policy.data_cache_max_parents = 0: the sizes the scoring's rate says fit, up to k
        return max(bounds)
    depth = (fixed or DEFAULT_MAX_PARENTS) if max_parents is None else max_parents
    if finite:
        # plants at k = 2 spent 93 of its 600 s scoring triples no network of width 2 can use
        depth = min(depth, max(bounds))
    return depth


def _check_int(name: str, value, least: int, *, optional: bool = False) -> None:
    """An integer >= ``least`` (a bool is not one), or None where ``optional``."""
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        what = f"an integer >= {least}" + (" or None" if optional else "")
        raise ParameterError(f"{name} must be {what}, got {value!r}")


def _check_number(name: str, value, *, optional: bool = False) -> None:
    """A positive real number (``inf`` allowed), or None where ``optional``."""
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not value > 0:
        raise ParameterError(f"{name} must be a positive number" + (" or None" if optional else "") + f", got {value!r}")


def _check_scoring(score: str, max_parents, ess, pruning: str, approximate: bool) -> None:
    """The scoring parameters of ``score`` and ``learn``, checked once, before any work."""
    from twbn.scoring.local_scores import SCORES
    from twbn.scoring.local_structure import LOCAL_STRUCTURE_SCORES
    from twbn.scoring.parent_sets import PRUNING_MODES

    known = (*SCORES, *LOCAL_STRUCTURE_SCORES)
    if score not in known:
        raise ParameterError(f"unknown score {score!r}; choose one of {', '.join(known)}")
    _check_int("max_parents", max_parents, 0)
    _check_number("ess", ess)
    if pruning not in PRUNING_MODES:
        raise ParameterError(f"unknown pruning {pruning!r}; choose one of {', '.join(PRUNING_MODES)}")
    if not isinstance(approximate, bool) and approximate != "auto":
        raise ParameterError(f"approximate must be True, False or 'auto', got {approximate!r}")
    if score in LOCAL_STRUCTURE_SCORES and approximate is True:
        raise ParameterError(f"approximate exploration is for bic, aic and bdeu, not {score!r}")


def _mixed(data, *, continuous: tuple = (), categorical: tuple = (), max_states: int = DEFAULT_MAX_STATES):
    """Data with continuous columns, for the local-structure scores: a CSV path or a DataFrame."""
    from twbn.scoring.data import DataError, Dataset
    from twbn.scoring.mixed_data import MixedData, from_columns, read_mixed_csv

    if isinstance(data, MixedData):
        return data
    if isinstance(data, (str, Path)):
        return read_mixed_csv(data, continuous=continuous, categorical=categorical, max_states=max_states)
    if isinstance(data, Dataset):
        raise DataError("a Dataset is already discretised; give the CSV path or the DataFrame for pcart/ft scores")
    if not hasattr(data, "columns") or not hasattr(data, "isna"):
        raise DataError(f"expected a pandas DataFrame or a CSV path, got {type(data).__name__}")
    names = [str(c).strip() for c in data.columns]
    for name, label in zip(names, data.columns):
        missing = data[label].isna().to_numpy()
        if missing.any():
            raise DataError(f"DataFrame: missing value in column {name!r} at row "
                            f"{data[label].index[missing.argmax()]!r}; twbn needs complete data")
    return from_columns(names, [np.asarray([str(x) for x in data[c].tolist()]) for c in data.columns],
                        continuous=continuous, categorical=categorical, max_states=max_states, source="DataFrame")


