"""What :func:`twbn.learn` is asked: one object, every option documented and checked here.

``twbn.learn(data, treewidth, method, **options)`` and ``twbn learn`` build one
:class:`LearnRequest` and run it (:func:`twbn.learning.run_learn`). Its :meth:`~LearnRequest.check`
checks every option in one place, before any data is read, so that a command that would
score data for minutes fails at once on a bad option; only what needs the data itself
(arc names, a cache's variables) is checked where the data is read.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, NamedTuple, Sequence

from twbn.scoring.cache import ScoreCache
from twbn.scoring.errors import ParameterError

if TYPE_CHECKING:
    from twbn.solution import Solution
    from twbn.solvers.policy import Policy

__all__ = ["LearnRequest", "Checked"]


class Checked(NamedTuple):
    """A request's checked values: the bounds in increasing order, the policy, and
    whether ``data`` is data (not a score cache)."""

    bounds: list
    policy: "Policy"
    from_data: bool


@dataclass(frozen=True)
class LearnRequest:
    """One call of :func:`twbn.learn`: the data, the bound and every option.

    Parameters
    ----------
    data : pandas.DataFrame, str, Path, Dataset or ScoreCache
        Data (scored first with :func:`twbn.score` and the scoring parameters below), or a
        score cache (a ScoreCache, or the path of a ``.jkl`` file). From data (scores bic,
        aic, bdeu) the search is not confined to the cache: ``localsearch`` (and ``auto``)
        scores the families it reaches from the data, the cache grows by the families its
        network uses, and the bound is over that grown cache; from a cache the cache is the
        search space, as in the field's protocol. ``stats["search_space"]`` says which
        applied, ``stats["families_in_cache"]`` how many of the network's families the
        scored cache held.
    treewidth : int, list of int, "auto" or WhichK, optional
        The bound k; None learns without one. ``"auto"`` chooses k by the likelihood of
        held-out rows (:mod:`twbn.which_k`: k = 1, 2, … learned on folds, the smallest k
        within one standard error of the best, learned again on every row within
        ``time_limit`` in all); a :class:`twbn.WhichK` adds an inference budget
        (``max_table_size``, ``max_query_seconds``) and ``max_treewidth``;
        ``stats["which_k"]`` holds the curve and why the k was chosen. A list (e.g. ``[2,
        5, 8]``, None for unbounded) sweeps the bounds in increasing order, each starting
        from the best network found at the smaller ones and never scoring below it, and
        returns one Solution per bound in that order; ``time_limit`` is then each bound's.
    method : str, default "auto"
        ``auto`` (its rule: :mod:`twbn.solvers.auto`, and ``stats["auto"]`` says why) or
        any registered method, plugins included (``twbn methods`` lists them).
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
        Scoring parameters (see :func:`twbn.score`) when ``data`` is data. ``approximate``
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
        ``kg``, ``kmax``, …) has that LP computed beside it by one of them, instead of after
        it on 30 % of the budget: beside ``improve`` for its share of all the jobs' time
        (30 % × 2 × the budget with 2 jobs, as one job at twice the budget would give it),
        after which that job solves pieces too; beside the others for the whole budget.
        ``improve`` solves pieces at once on the others (from 3 jobs, or 2 once the LP's job
        joins); ``auto`` with a method that runs in one process (``cuts`` from k-G or k-MAX)
        runs its start method alone in a second process and keeps the better network, so it
        is never worse than that method alone at the same budget. The default is 1, one
        core: what the field's benchmarks measure, and the only setting where the same seed
        gives the same network (pieces solved at once return in an order that depends on
        timing).
    scheduler : str, optional
        A Dask scheduler's address (``tcp://host:8786``): ``improve``'s pieces, ``jobs`` at
        a time, are solved by that cluster's workers (which need twbn) instead of this
        machine's processes. Reached once before anything runs.
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
        is called, so that reading or scoring data is inside the limit; ``twbn learn``
        gives its process's start). In a sweep, the first bound's.
    catch_signals : bool, default True
        In the main thread, route SIGINT and SIGTERM to the method while it runs, so that
        an anytime method returns its best network; False leaves the process's handlers
        alone (a worker process that its parent stops by SIGTERM).
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

    Examples
    --------
    >>> from twbn.request import LearnRequest
    >>> LearnRequest("zoo", 2, time_limit=-1).check()
    Traceback (most recent call last):
    ...
    twbn.scoring.errors.ParameterError: time limit must be positive, got -1
    >>> LearnRequest("zoo", [5, 2]).check().bounds
    [2, 5]
    """

    data: Any
    treewidth: "int | None | Sequence[int | None] | str" = None
    method: str = "auto"
    time_limit: float | None = None
    seed: int | None = None
    solver: str | None = None
    warm_start: "str | Solution | None" = None
    forbid: Iterable = ()
    require: Iterable = ()
    score: str = "bic"
    max_parents: int | None = None
    ess: float = 1.0
    pruning: str = "all"
    approximate: "bool | str" = "auto"
    cache: ScoreCache | None = None
    options: dict | None = None
    jobs: int = 1
    scheduler: str | None = None
    best_so_far: "Solution | None" = None
    log: "Callable[[str], None] | None" = None
    on_result: "Callable[[Solution], None] | None" = None
    progress: "Callable[[dict], None] | None" = None
    started: float | None = None
    catch_signals: bool = True
    policy: "Policy | None" = None
    missing: str = "em"
    missing_token: str | None = None
    discretize: "str | Sequence[str] | None" = None

    @classmethod
    def of(cls, data, treewidth=None, method: str = "auto", **options) -> "LearnRequest":
        """The request of ``learn(data, treewidth, method, **options)``; an option it does
        not know is a ParameterError naming it (and the nearest it knows)."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            import difflib

            near = difflib.get_close_matches(unknown[0], sorted(known), n=1)
            raise ParameterError(f"learn takes no option {unknown[0]!r}" + (f" (did you mean {near[0]!r}?)"
                                                                             if near else ""))
        return cls(data, treewidth, method, **options)

    def replace(self, **changes) -> "LearnRequest":
        """This request with ``changes`` (the data cut, the hooks wrapped, …)."""
        return dataclasses.replace(self, **changes)

    def as_dict(self) -> dict:
        """The fields by name (shallow: the data and hooks as they are)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @property
    def from_data(self) -> bool:
        """Whether ``data`` is data to score (not a score cache or a jkl path)."""
        data = self.data
        return not isinstance(data, ScoreCache) and not (isinstance(data, (str, Path))
                                                         and str(data).endswith((".jkl", ".jkl.gz")))

    def check(self, treewidth=None) -> Checked:
        """Every option checked, before anything is read or run; ``treewidth``, where
        given, in place of the request's (``treewidth="auto"`` checks its bounds' requests
        at k = 1)."""
        from twbn.scoring.parent_sets import DEFAULT_MAX_PARENTS
        from twbn.scoring_phase import _check_int, _check_scoring
        from twbn.solution import Solution
        from twbn.solvers.parallel import check_scheduler
        from twbn.solvers.registry import check_jobs, check_policy, check_request, get_method
        from twbn.solvers.sweep import sorted_bounds

        treewidth = self.treewidth if treewidth is None else treewidth
        bounds = sorted_bounds(treewidth) if isinstance(treewidth, (list, tuple)) else [treewidth]
        for k in bounds:
            _check_int("treewidth", k, 0, optional=True)
            check_request(self.method, k, solver=self.solver, time_limit=self.time_limit,
                          warm_start=self.warm_start, options=self.options)
        _check_int("seed", self.seed, 0, optional=True)
        policy = check_policy(self.policy)
        if self.best_so_far is not None and not isinstance(self.best_so_far, Solution):
            raise ParameterError(f"best_so_far must be a twbn.Solution, got {type(self.best_so_far).__name__}")
        check_jobs(self.jobs)
        check_scheduler(self.scheduler, self.jobs, self.method, get_method(self.method).distributed, reach=True)
        if self.from_data:
            _check_scoring(self.score, DEFAULT_MAX_PARENTS if self.max_parents is None else self.max_parents,
                           self.ess, self.pruning, self.approximate)
        elif self.cache is not None:
            raise ParameterError("cache= goes with data (the cache scored from it), not with a cache")
        if self.cache is not None and not isinstance(self.cache, ScoreCache):
            raise ParameterError(f"cache must be a ScoreCache, got {type(self.cache).__name__}")
        started = self.started
        if started is not None and (isinstance(started, bool) or not isinstance(started, (int, float))):
            raise ParameterError(f"started must be a time.monotonic() value, got {started!r}")
        return Checked(bounds, policy, self.from_data)
