"""One call from data to a network: :func:`learn` (phases 1 and 2; ``score``, phase 1,
is in ``twbn/scoring_phase.py``).

Learning a Bayesian network whose moral graph has treewidth ≤ k runs in two phases
(de Campos & Ji 2011; Korhonen & Parviainen 2013; Scanagatta et al. 2016):

1. **parent-set identification**: the local score (BIC, AIC or BDeu) of every candidate
   parent set of every variable, pruned by rules that never lose the optimum;
2. **structure optimisation**: one candidate set per variable, acyclic, treewidth ≤ k,
   maximising the sum of the local scores, by an exact DP, an ILP, CP-SAT or a heuristic.

``learn`` does both and returns a certified :class:`~twbn.solution.Solution`; its stages
are in ``twbn/learn_stages.py``, ``treewidth="auto"`` in ``twbn/which_k/``, ``discretize=``
in ``twbn/variants.py``.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from twbn.formulations.problem import Problem
from twbn.learn_stages import (_arcs, _check_learn, _given_starts, _learn_with_missing, _learning_cache,
                               _sweep_bounds)
from twbn.scoring.cache import ScoreCache
from twbn.solution import Solution
from twbn.scoring_phase import score, scoring_depth, scoring_plan, scoring_time  # noqa: F401  (the CLI's)
from twbn.variants import cut_first, learn_which_k_checked, recording, with_cuts
from twbn.which_k import as_which_k

if TYPE_CHECKING:
    from twbn.solvers.policy import Policy

__all__ = ["score", "learn"]


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
    max_parents: int | None = None,
    ess: float = 1.0,
    pruning: str = "all",
    approximate: "bool | str" = "auto",
    cache: ScoreCache | None = None,
    options: dict | None = None,
    jobs: int = 1,
    scheduler: str | None = None,
    best_so_far: "Solution | None" = None,
    log: "Callable[[str], None] | None" = None,
    on_result: "Callable[[Solution], None] | None" = None,
    progress: "Callable[[dict], None] | None" = None,
    started: float | None = None,
    catch_signals: bool = True,
    policy: "Policy | None" = None,
    missing: str = "em",
    missing_token: str | None = None,
    discretize: "str | Sequence[str] | None" = None,
) -> "Solution | list[Solution]":
    """Learn a Bayesian network whose moral graph has treewidth ≤ ``treewidth``.

    Parameters
    ----------
    data : pandas.DataFrame, str, Path, Dataset or ScoreCache
        Data (scored first with :func:`score` and the scoring parameters below), or a
        score cache (a ScoreCache, or the path of a ``.jkl`` file). From data (scores bic,
        aic, bdeu) the search is not confined to the cache: ``localsearch`` (and ``auto``,
        which starts ``improve`` from it) scores the families it reaches from the data,
        the cache grows by the families its network uses, and the bound is over that grown
        cache; from a cache the cache is the search space, as in the field's protocol.
        ``stats["search_space"]`` says which applied, ``stats["families_in_cache"]`` how
        many of the network's families the scored cache held.
    treewidth : int, list of int, "auto" or WhichK, optional
        The bound k; None learns without one. ``"auto"`` chooses k by the likelihood of
        held-out rows (:mod:`twbn.which_k`: k = 1, 2, … learned on folds, the smallest k
        within one standard error of the best, learned again on every row within
        ``time_limit`` in all); a :class:`twbn.WhichK` adds an inference budget
        (``max_table_size``, ``max_query_seconds``) and ``max_treewidth``.
        ``stats["which_k"]`` holds the curve and why the k was chosen. A list (e.g. ``[2, 5, 8]``, None for
        unbounded) sweeps the bounds in increasing order, each starting from the best
        network found at the smaller ones and never scoring below it, and returns one
        Solution per bound in that order; ``time_limit`` is then each bound's.
    method : str, default "auto"
        ``auto`` (a rule by size, see below) or any registered method, plugins included
        (``twbn methods`` lists them).
    time_limit : float, optional
        Seconds for the whole call, counted from ``started`` (default: when ``learn`` is
        called): scoring data first and the method share it, as in ``twbn learn``.
        Without one, exact methods run to the end, the heuristics stop after 10 s, and
        ``auto`` gives anytime methods 60 s; ``inf``: no limit at all (until the method
        ends or is stopped).
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
        Scoring parameters (see :func:`score`) when ``data`` is data. ``approximate``
        defaults to ``"auto"``: exhaustive scoring where it fits, an exploration sized to
        ``time_limit`` otherwise, said through ``log``. ``max_parents`` (default: 3 for the
        cache, k for families scored on demand) caps both; the cache never scores more
        parents than the largest bound k, since no network of width k has such a family.
    cache : ScoreCache, optional
        With data: the cache already scored from it (``twbn learn DATA`` scores with its
        own options and progress), used instead of scoring again; families it lacks are
        still scored from ``data``.
    options : dict, optional
        The method's options by name (``twbn methods --options`` lists them), as
        ``--option NAME=VALUE``; ``auto`` takes none.
    jobs : int, default 1
        Processes the method may use. A method whose bound is the cluster LP's (``improve``,
        what ``auto`` runs above n = 40, ``kg``, ``kmax``, …) has that LP computed beside it
        by one of them, instead of after it on 30 % of the budget: beside ``improve`` for
        its share of all the jobs' time (30 % × 2 × the budget with 2 jobs, as one job
        at twice the budget would give it), after which that job solves pieces too;
        beside the others for the whole budget. ``improve`` solves pieces at once on the
        others (from 3 jobs, or 2 once the LP's job joins); ``auto`` with a
        method that runs in one process (``cuts`` from k-G or k-MAX) runs its start method
        alone in a second process and keeps the better network, so it is never worse than
        that method alone at the same budget.
        The default is 1, one core: what the field's benchmarks measure, and the only
        setting where the same seed gives the same network (pieces solved at once return
        in an order that depends on timing).
    scheduler : str, optional
        A Dask scheduler's address (``tcp://host:8786``): ``improve``'s pieces (and
        ``auto``'s, where it runs ``improve``), ``jobs`` at a time, are solved by that
        cluster's workers instead of this machine's processes. The workers need twbn
        installed. Reached once before anything runs.
    best_so_far : Solution, optional
        A network found under a smaller bound (a sweep run one bound at a time, as
        ``twbn experiment`` does): the method starts from it where it takes a start, and
        no result scores below it. Its width must be within every bound.
    log : callable, optional
        Receives the lines a method says (what ``auto`` chose and why); default: the
        ``twbn`` logger.
    on_result : callable, optional
        Called with each bound's Solution as it finishes, before the next bound starts
        (to write it at once); and, after the last bound, again with each earlier one
        whose bound a larger bound's proof tightened (a bound under k' holds under k < k').
    progress : callable, optional
        Called about twice a second while a method runs, with a dict of ``method``,
        ``elapsed`` (seconds), ``incumbent``, ``bound`` and ``iterations`` (None where
        not known yet).
    started : float, optional
        The ``time.monotonic()`` from which ``time_limit`` counts (default: when ``learn``
        is called, so that reading or scoring data is inside the limit). ``twbn learn``
        gives its process's start, so that its limit covers start-up too. In a sweep, the
        first bound's.
    catch_signals : bool, default True
        In the main thread, route SIGINT and SIGTERM to the method while it runs, so that
        an anytime method returns its best network (see Notes); False leaves the
        process's handlers alone (a worker process that its parent stops by SIGTERM).
    policy : twbn.Policy, optional
        The methods' time shares and search knobs (``twbn.Policy(stuck_pieces=6)``);
        default: the measured ones. A result records in ``stats["policy"]`` the fields
        that differ from the defaults.
    missing : {"em", "state", "complete-rows", "error"}, default "em"
        Missing cells of ``data`` (empty, ``NA``, ``NaN``, ``?``, ``missing_token``; see
        ``twbn.read_csv``). Under ``"em"`` data with missing cells is learned by
        structural EM (``twbn.em``: scores bic or aic, ``time_limit`` for all its
        iterations, ``method`` for each M-step; ``forbid``/``require`` hold throughout;
        under several bounds each runs its own EM, the network of the bound before a rival
        at its end); ``stats["structural_em"]`` holds each iteration's expected score and
        seconds, which network the end kept, and the EM-fitted tables.
    missing_token : str, optional
        One more cell text that means missing.
    discretize : str or list of str, optional
        Cut continuous and many-valued columns into states first (``twbn.scoring.discretize``):
        ``"quantile:B"``, ``"uniform:B"`` or ``"information:B"`` (Hartemink's) for every
        numeric column with more than max(B, 10) values, or per column
        (``"age=quantile:4,income=information"``). The cuts are the result's
        (``stats["data"]["discretize"]``, ``Solution.discretization``), and every method
        of the Solution that takes rows applies them, so raw rows are welcome there. A
        column that cannot be cut (all equal, all missing, text) is a DataError by name.

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
        Unknown variables in ``forbid``/``require``, a negative treewidth, an unknown
        method or an option the method does not take, a ``best_so_far`` wider than a bound,
        a ``scheduler`` that cannot be used (``SchedulerUnavailable``: dask distributed
        missing, not reached, a method that runs on one machine only, ``jobs`` < 2).

    Notes
    -----
    ``auto`` runs ``dp`` where it takes seconds (k ≤ 1 at any n, as a maximum
    branching; unbounded n ≤ 22; k = 2 and n ≤ 14; k = 3 and n ≤ 12), the cluster-cut ILP warm-started by k-G (from data: by
    localsearch) up to n = 40 (bounded) or above the DP (unbounded), and k-MAX beyond; the choice and its reason
    are in ``solution.stats["auto"]`` and logged to the ``twbn`` logger.

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
    """
    started = _call_start(started, time_limit)
    cuts = None
    if discretize is not None:
        cuts, data = cut_first(data, discretize, missing_token=missing_token)
        on_result = None if on_result is None else recording(on_result, cuts)
    which = as_which_k(treewidth)
    if which is not None:
        out = learn_which_k_checked(data, which, {k: v for k, v in locals().items() if k != "discretize"}, learn)
        return out if cuts is None else with_cuts(out, cuts)
    bounds, policy, from_data = _check_learn(
        data, treewidth, method, solver=solver, time_limit=time_limit, warm_start=warm_start, options=options,
        seed=seed, policy=policy, best_so_far=best_so_far, jobs=jobs, scheduler=scheduler, score=score,
        max_parents=max_parents, ess=ess, pruning=pruning, approximate=approximate, cache=cache, started=started)
    several = isinstance(treewidth, (list, tuple))
    cache, scorer, holes = _learning_cache(
        data, from_data, bounds, cache=cache, score=score, max_parents=max_parents, ess=ess, pruning=pruning,
        approximate=approximate, time_limit=time_limit, started=started, policy=policy, log=log, missing=missing,
        missing_token=missing_token)
    if holes is not None:
        out = _learn_with_missing(holes, bounds, several, method, time_limit=time_limit, seed=seed, score=score,
                                  max_parents=max_parents, ess=ess, log=log, policy=policy, started=started,
                                  forbid=forbid, require=require, cache=cache, warm_start=warm_start,
                                  best_so_far=best_so_far, on_result=on_result)
    else:
        forbidden, required = _arcs(forbid, cache.names, "forbidden"), _arcs(require, cache.names, "required")
        problems = [Problem(cache, k, forbidden, required, scorer) for k in bounds]
        warm_start, best, best_k = _given_starts(warm_start, best_so_far, problems, bounds)
        run_args = dict(solver=solver, time_limit=time_limit, seed=seed, warm_start=warm_start, options=options,
                        jobs=jobs, scheduler=scheduler, log=log, started=started, policy=policy)
        out = _sweep_bounds(problems, method, run_args, best=best, best_k=best_k, on_result=on_result,
                            progress=progress, catch_signals=catch_signals, missing=missing,
                            missing_token=missing_token)
        out = out if several else out[0]
    if cuts is None:
        return out
    return [with_cuts(s, cuts) for s in out] if isinstance(out, list) else with_cuts(out, cuts)


def _call_start(started, time_limit) -> "float | None":
    """When a finite ``time_limit`` counts from: ``started`` where given, else now. Before,
    the limit counted from the method's start and scoring ran outside it: from Python,
    ``learn(cwebkb, treewidth=8, time_limit=7)`` took 12.7 s (2026-12-07). Left as given
    where the limit is not a finite number (none, ``inf``, or one ``_check_learn`` refuses)."""
    if started is not None or isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)):
        return started
    return time.monotonic() if math.isfinite(time_limit) else started
