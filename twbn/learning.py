"""One call from data to a network: ``score`` (phase 1) and ``learn`` (phases 1 and 2).

Learning a Bayesian network whose moral graph has treewidth ≤ k runs in two phases
(de Campos & Ji 2011; Korhonen & Parviainen 2013; Scanagatta et al. 2016):

1. **parent-set identification**: the local score (BIC, AIC or BDeu) of every candidate
   parent set of every variable, pruned by rules that never lose the optimum;
2. **structure optimisation**: one candidate set per variable, acyclic, treewidth ≤ k,
   maximising the sum of the local scores, by an exact DP, an ILP, CP-SAT or a heuristic.

``learn`` does both and returns a certified :class:`~twbn.solution.Solution`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from typing import Iterable, Sequence

from twbn.formulations.problem import Problem
from twbn.scoring.cache import ScoreCache
from twbn.scoring.data import DEFAULT_MAX_STATES, as_dataset
from twbn.scoring.parent_sets import DEFAULT_MAX_PARENTS
from twbn.solution import Solution

__all__ = ["score", "learn"]



def score(
    data,
    score: str = "bic",
    max_parents: int = DEFAULT_MAX_PARENTS,
    *,
    ess: float = 1.0,
    pruning: str = "all",
    approximate: bool = False,
    time_limit: float | None = None,
    max_states: int = DEFAULT_MAX_STATES,
    seed: int | None = None,
) -> ScoreCache:
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
    approximate : bool, default False
        For hundreds of variables or more: best-first exploration among each
        variable's 30 candidates of highest mutual information, 0.5 s per variable,
        instead of the exhaustive Θ(n^(d+1)) scoring.
    time_limit : float, optional
        Exhaustive scoring only: stop after this many seconds with a valid, partial
        cache (``cache.meta["complete"]`` is then False).
    max_states : int, default 64
        Reject columns with more states (identifiers, undiscretised numbers).
    seed : int, optional
        Accepted for symmetry with :func:`learn`; scoring is deterministic.

    Returns
    -------
    ScoreCache
        ``cache.parent_sets[v]`` best first, parent sets as sorted tuples of indices;
        ``cache.names`` the variables. ``twbn.write_jkl`` saves it.

    Raises
    ------
    DataError
        Missing values, ragged rows, duplicate names, too many states.
    ValueError
        An unknown score or pruning mode, or a negative ``max_parents``.
    ScoringTooLarge
        Exhaustive scoring would need (or reached) more than three quarters of this
        machine's memory; ``approximate=True`` explores large sets instead.

    Examples
    --------
    >>> import twbn
    >>> cache = twbn.score(twbn.example_path("zoo"), max_parents=2)
    >>> cache.n_variables, cache.names[:3]
    (17, ('hair', 'feathers', 'eggs'))
    >>> [cache.names[p] for p in cache.parent_sets[cache.names.index("milk")][0]]
    ['eggs', 'venomous']
    """
    del seed  # deterministic
    _check_scoring(score, max_parents, ess, pruning, approximate)
    _check_number("time_limit", time_limit, optional=True)
    from twbn.scoring.local_structure import LOCAL_STRUCTURE_SCORES

    if score in LOCAL_STRUCTURE_SCORES:
        from twbn.scoring.local_structure import build_local_structure_cache

        cache, _ = build_local_structure_cache(_mixed(data), score=score, max_parents=max_parents,
                                               time_limit=time_limit, progress=False)
        return cache
    dataset = as_dataset(data, max_states=max_states)
    if approximate:
        if time_limit is not None:
            raise ValueError("approximate scoring bounds the time per variable; time_limit applies to exhaustive scoring")
        from twbn.scoring.explore import explore_cache

        cache, _ = explore_cache(dataset, score=score, ess=ess, max_parents=max_parents,
                                 pruning=pruning != "none", progress=False)
        return cache
    from twbn.scoring.parent_sets import build_cache, default_memory_limit

    cache, _ = build_cache(dataset, score=score, ess=ess, max_parents=max_parents, pruning=pruning,
                           time_limit=time_limit, progress=False, memory_limit=default_memory_limit())
    return cache


_score = score  # learn's own ``score`` parameter shadows the function


def _check_int(name: str, value, least: int, *, optional: bool = False) -> None:
    """An integer >= ``least`` (a bool is not one), or None where ``optional``."""
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        what = f"an integer >= {least}" + (" or None" if optional else "")
        raise ValueError(f"{name} must be {what}, got {value!r}")


def _check_number(name: str, value, *, optional: bool = False) -> None:
    """A positive real number (``inf`` allowed), or None where ``optional``."""
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not value > 0:
        raise ValueError(f"{name} must be a positive number" + (" or None" if optional else "") + f", got {value!r}")


def _check_scoring(score: str, max_parents, ess, pruning: str, approximate: bool) -> None:
    """The scoring parameters of ``score`` and ``learn``, checked once, before any work."""
    from twbn.scoring.local_scores import SCORES
    from twbn.scoring.local_structure import LOCAL_STRUCTURE_SCORES
    from twbn.scoring.parent_sets import PRUNING_MODES

    known = (*SCORES, *LOCAL_STRUCTURE_SCORES)
    if score not in known:
        raise ValueError(f"unknown score {score!r}; choose one of {', '.join(known)}")
    _check_int("max_parents", max_parents, 0)
    _check_number("ess", ess)
    if pruning not in PRUNING_MODES:
        raise ValueError(f"unknown pruning {pruning!r}; choose one of {', '.join(PRUNING_MODES)}")
    if not isinstance(approximate, bool):
        raise ValueError(f"approximate must be True or False, got {approximate!r}")
    if score in LOCAL_STRUCTURE_SCORES and approximate:
        raise ValueError(f"approximate exploration is for bic, aic and bdeu, not {score!r}")


def _mixed(data):
    """Data with continuous columns, for the local-structure scores: a CSV path or a DataFrame."""
    from twbn.scoring.data import DataError, Dataset
    from twbn.scoring.mixed_data import MixedData, from_columns, read_mixed_csv

    if isinstance(data, MixedData):
        return data
    if isinstance(data, (str, Path)):
        return read_mixed_csv(data)
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
                        source="DataFrame")


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
            raise ValueError(f"{kind} arc {arc!r} must be a (parent, child) pair of variable names") from None
        out |= parse_arcs([f"{parent},{child}"], names)
    return frozenset(out)


def learn(
    data,
    treewidth: "int | None | Sequence[int | None]" = None,
    method: str = "auto",
    *,
    time_limit: float | None = None,
    seed: int | None = None,
    solver: str | None = None,
    warm_start: "str | Solution | None" = None,
    forbid: Iterable = (),
    require: Iterable = (),
    score: str = "bic",
    max_parents: int = DEFAULT_MAX_PARENTS,
    ess: float = 1.0,
    pruning: str = "all",
    approximate: bool = False,
    options: dict | None = None,
    jobs: int = 1,
) -> "Solution | list[Solution]":
    """Learn a Bayesian network whose moral graph has treewidth ≤ ``treewidth``.

    Parameters
    ----------
    data : pandas.DataFrame, str, Path, Dataset or ScoreCache
        Data (scored first with :func:`score` and the scoring parameters below), or a
        score cache (a ScoreCache, or the path of a ``.jkl`` file).
    treewidth : int, list of int, optional
        The bound k; None learns without one. A list (e.g. ``[2, 5, 8]``, None for
        unbounded) sweeps the bounds in increasing order, each starting from the best
        network found at the smaller ones and never scoring below it, and returns one
        Solution per bound in that order; ``time_limit`` is then each bound's.
    method : str, default "auto"
        ``auto`` (a rule by size, see below) or any registered method, plugins included
        (``twbn methods`` lists them).
    time_limit : float, optional
        Seconds for the method (scoring not included). Without one, exact methods run
        to the end, the heuristics stop after 10 s, and ``auto`` gives anytime methods
        60 s.
    seed : int, optional
        Seed of the randomised methods; the same seed gives the same network.
    solver : str, optional
        Backend where a method has several (``milp``: highs, scip, cbc).
    warm_start : str or Solution, optional
        A start for ``cuts``, ``milp``, ``cp``: a Solution, a result file, ``tree`` or a
        method name (run first on 20% of ``time_limit``).
    forbid, require : iterable of (parent, child) name pairs
        Background knowledge: arcs the network must not, or must, contain.
    score, max_parents, ess, pruning, approximate
        Scoring parameters (see :func:`score`) when ``data`` is data.
    jobs : int, default 1
        Processes the method may use: ``auto`` runs its start method (k-G or k-MAX) alone
        in a second process beside the method it chose and keeps the better network, so it
        is never worse than that method alone at the same budget. The default is 1, one
        core, as the field's benchmarks measure and as reproducible runs want.
    options : dict, optional
        The method's options by name (``twbn methods --options`` lists them), as
        ``--option NAME=VALUE``; ``auto`` takes none.

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
    ValueError
        Unknown variables in ``forbid``/``require``, a negative treewidth, an unknown
        method or an option the method does not take.

    Notes
    -----
    ``auto`` runs ``dp`` where it takes seconds (k ≤ 1 at any n, as a maximum
    branching; unbounded n ≤ 22; k = 2 and n ≤ 14; k = 3 and n ≤ 12), the cluster-cut ILP warm-started by k-G up to n = 40
    (bounded) or above the DP (unbounded), and k-MAX beyond; the choice and its reason
    are in ``solution.stats["auto"]`` and logged to the ``twbn`` logger.

    Ctrl-C (SIGINT, in the main thread) while an anytime method runs returns its best
    network so far, with ``stats["interrupted"]`` true, as ``twbn learn`` does; during an
    exact method it raises KeyboardInterrupt as usual. A sweep stopped so returns the
    bounds that ran.

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
    """
    from twbn.scoring.jkl import read_jkl
    from twbn.solvers.registry import check_request, get_method, run
    from twbn.solvers.sweep import sorted_bounds, sweep

    several = isinstance(treewidth, (list, tuple))
    bounds = sorted_bounds(treewidth) if several else [treewidth]
    for k in bounds:
        _check_int("treewidth", k, 0, optional=True)
        check_request(method, k, solver=solver, time_limit=time_limit, warm_start=warm_start, options=options)
    _check_int("seed", seed, 0, optional=True)
    if not isinstance(data, ScoreCache) and not (isinstance(data, (str, Path)) and str(data).endswith(".jkl")):
        _check_scoring(score, max_parents, ess, pruning, approximate)
    if isinstance(data, ScoreCache):
        cache = data
    elif isinstance(data, (str, Path)) and str(data).endswith(".jkl"):
        cache = read_jkl(data)
    else:
        cache = _score(data, score, max_parents, ess=ess, pruning=pruning, approximate=approximate)
    forbidden, required = _arcs(forbid, cache.names, "forbidden"), _arcs(require, cache.names, "required")
    problems = [Problem(cache, k, forbidden, required) for k in bounds]
    if isinstance(warm_start, Solution):
        from twbn.formulations.solution import Solution as Internal

        warm_start = Internal.from_json(warm_start.to_json(), problems[0])

    import contextlib
    import signal
    import threading

    from twbn.solvers.control import RunControl

    control = RunControl()

    def one(problem: Problem, start):
        return run(problem, method, solver=solver, time_limit=time_limit, seed=seed,
                   warm_start=start if start is not None else warm_start, options=options, jobs=jobs,
                   control=control)

    # Ctrl-C while an anytime method runs: its best network, as on the command line
    main = threading.current_thread() is threading.main_thread()
    with control.catching(signal.SIGINT) if main else contextlib.nullcontext():
        sols = sweep(problems, one, takes_start=get_method(method).warm_start, stopped=control.stop_requested)
    out = [Solution(s.to_json(p)) for p, s in zip(problems, sols)]  # a stopped sweep: the bounds run
    return out if several else out[0]

