"""What a method is: :class:`Method`, the one declaration every method makes, built-in or
plugin, and :func:`call_method`, the one way the registry runs it.

A method is a name, a ``run(problem, options, budget)`` callable and what it declares:
its options dataclass (the only place its defaults are written), its backends, the
smallest treewidth bound it needs, whether it takes a start network or a seed, whether
it returns its best network when stopped, and where the cluster LP's bound is worth a
share of its budget. The registry (solvers/registry.py) collects the declarations:
twbn's own from its modules (``METHOD`` in solvers/exact/dp.py, solvers/heuristics/kg.py,
…), plugins from ``register_method`` and the entry-point group ``twbn.methods``
(solvers/plugins.py). ``run`` gets only what the method declares: ``seed=`` if it is
``seeded``, ``solver=`` (its backend) if it has ``backends``, ``start=`` (a certified
network, or None) if it takes a ``warm_start`` — so no method receives an argument it
would have to ignore.
"""

from __future__ import annotations

import dataclasses
import re
import time
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from twbn.formulations.problem import Problem
from twbn.formulations.solution import SolverResult, make_solution
from twbn.scoring.errors import TwbnError
from twbn.solvers.budget import Budget
from twbn.solvers.control import MethodOverran, abandoning
from twbn.solvers.policy import Policy

__all__ = ["Method", "MethodFailed", "MethodUnavailable", "NoOptions", "Subsolver", "call_method"]

_NAME = re.compile(r"^[a-z][a-z0-9_\-]*$")


class MethodUnavailable(TwbnError, ValueError):
    """The method (or an option of it) is not available; the message says why.

    Examples
    --------
    >>> import twbn
    >>> twbn.learn(twbn.example_path("zoo"), method="no-such-method")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    twbn.solvers.method.MethodUnavailable: unknown method 'no-such-method'; available: auto, dp, ...
    """


class Subsolver(Protocol):
    """What a method is given, on its Budget (``budget.solve``, ``budget.method``,
    ``budget.methods``), to run other methods as stages of its own: the registry that made
    the budget. A method never imports the registry."""

    def solve(self, problem: Problem, method: str, *, budget: Budget, seed: int | None = None,
              warm_start: SolverResult | None = None, options=None, jobs: int = 1, scheduler: str | None = None,
              lp_bound: bool = True) -> SolverResult:
        ...

    def method(self, name: str) -> "Method":
        ...

    def methods(self) -> "dict[str, Method]":
        ...


class MethodFailed(TwbnError, RuntimeError):
    """A method raised, or returned something that is not a network of the problem.

    Examples
    --------
    >>> import twbn
    >>> cache = twbn.ScoreCache.from_mapping("AB", [{(): -2.0, (1,): -1.0}, {(): -2.0, (0,): -1.0}])
    >>> def cyclic(problem, options, budget):
    ...     return [(1,), (0,)]
    >>> twbn.register_method(twbn.Method("cyclic-doc", cyclic))
    >>> twbn.learn(cache, method="cyclic-doc")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    twbn.solvers.method.MethodFailed: method cyclic-doc returned an invalid network: ...
    """


@dataclass(frozen=True)
class NoOptions:
    """What a method without options takes: nothing (so any name given is refused)."""


@dataclass(frozen=True)
class Method:
    """A structure-learning method, declared once, usable everywhere.

    Parameters
    ----------
    name : str
        Lower-case letters, digits, ``-`` and ``_``; not a name already registered.
    run : callable
        ``run(problem, options, budget)``: ``problem`` a :class:`twbn.Problem` (``n``,
        ``names``, ``treewidth`` (None: unbounded), ``forbidden``, ``required``,
        ``parent_sets(v)``), ``options`` an instance of ``options`` (None if it declares
        none), ``budget`` a :class:`twbn.Budget`; plus ``seed=`` if ``seeded``,
        ``solver=`` if it has ``backends`` and ``start=`` (a network to begin from, or
        None) if it takes a ``warm_start``. Returns the parent sets, one tuple of
        variable indices per variable, or an object with such ``parents``.
    options : dataclass type, optional
        Its options, with their defaults; ``--option NAME=VALUE`` values are converted to
        the field's type, and unknown names are refused with a "did you mean".
    summary : str
        One line for ``twbn methods`` and ``--help``.
    backends : tuple of str
        Values ``--solver`` may take; the first is the default.
    min_treewidth : int, optional
        The smallest bound k it needs; None: it also runs unbounded.
    warm_start : bool
        Whether it takes a start network (``start=``).
    seeded : bool
        Whether it takes the caller's ``seed=`` (an int, or None).
    parallel : bool
        Whether it takes ``jobs=``: the processes it may use (an int >= 1). Its budget's
        ``joining`` may then say ``(when, extra)``: ``extra`` more processes it may use
        from ``time.monotonic()`` ``when`` on (the job the cluster LP's bound had beside
        it coming back); a method that ignores it leaves that job idle.
    distributed : bool
        Whether it also takes ``scheduler=``: a Dask scheduler's address its parallel work
        may go to (None: this machine's processes). Only with ``parallel``.
    anytime : bool
        Whether it returns its best network when its budget ends or a stop is asked for.
    lp_bound : bool
        Keep a share of the budget (``Policy.bound_share_at(n)``) for the
        cluster LP's bound on its result, from ``lp_bound_from`` variables on.
    lp_bound_from : int or str
        The smallest n at which the LP bound is computed; or the name of a
        :class:`~twbn.solvers.policy.Policy` field: from one above its value.
    default_time_limit : float, str or None
        Seconds when the caller gives no limit; None: until it returns; or the name of
        the :class:`~twbn.solvers.policy.Policy` field that holds them (the default,
        ``"heuristic_time_limit"``: 10 s).

    Raises
    ------
    MethodFailed
        A malformed name, a ``run`` that is not callable, options that are not a dataclass.

    Examples
    --------
    >>> import twbn
    >>> def empty(problem, options, budget):
    ...     return [() for _ in range(problem.n)]
    >>> m = twbn.Method("empty-doc", empty, summary="no arcs at all")
    >>> twbn.register_method(m)
    >>> twbn.learn(twbn.example_path("zoo"), treewidth=2, method="empty-doc").arcs
    []
    """

    name: str
    run: Callable[..., Any]
    options: type | None = None
    summary: str = ""
    backends: tuple[str, ...] = ()
    min_treewidth: int | None = None
    warm_start: bool = False
    seeded: bool = False
    parallel: bool = False
    distributed: bool = False
    anytime: bool = True
    lp_bound: bool = True
    lp_bound_from: int | str = 0
    default_time_limit: float | str | None = "heuristic_time_limit"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise MethodFailed(f"a method name is lower-case letters, digits, - and _, got {self.name!r}")
        if not callable(self.run):
            raise MethodFailed(f"method {self.name}: run must be callable")
        if self.options is not None and not dataclasses.is_dataclass(self.options):
            raise MethodFailed(f"method {self.name}: options must be a dataclass type")
        if isinstance(self.default_time_limit, str) and (
                self.default_time_limit not in Policy.__dataclass_fields__
                or not self.default_time_limit.endswith(("_s", "_limit"))):
            raise MethodFailed(f"method {self.name}: default_time_limit {self.default_time_limit!r} is not a "
                               "twbn.Policy field of seconds")
        if isinstance(self.lp_bound_from, str) and self.lp_bound_from not in Policy.__dataclass_fields__:
            raise MethodFailed(f"method {self.name}: lp_bound_from {self.lp_bound_from!r} is not a twbn.Policy field")
        if self.distributed and not self.parallel:
            raise MethodFailed(f"method {self.name}: distributed needs parallel (the jobs it sends at once)")

    def default_seconds(self, policy: Policy) -> float | None:
        """Its seconds when the caller gives no limit, under ``policy``; None: none."""
        if isinstance(self.default_time_limit, str):
            return getattr(policy, self.default_time_limit)
        return self.default_time_limit

    def needs_lp_bound(self, n: int, policy: Policy) -> bool:
        """Whether the cluster LP's bound gets a share of the budget at ``n`` variables."""
        start = self.lp_bound_from
        return self.lp_bound and n >= (getattr(policy, start) + 1 if isinstance(start, str) else start)


def _parents_of(out, problem: Problem, name: str) -> list[tuple[int, ...]]:
    """The parent sets a method returned, as sorted index tuples."""
    parents = getattr(out, "parents", out)
    if isinstance(parents, dict):  # a twbn.Solution: parents by name
        pos = {v: i for i, v in enumerate(problem.names)}
        try:
            parents = [tuple(pos[p] for p in parents[v]) for v in problem.names]
        except KeyError as exc:
            raise MethodFailed(f"method {name} returned parents of an unknown variable {exc.args[0]!r}") from None
    if parents is None:
        raise MethodFailed(f"method {name} returned no network")
    try:
        parents = [tuple(sorted(int(p) for p in ps)) for ps in parents]
    except (TypeError, ValueError):
        raise MethodFailed(f"method {name} returned {type(out).__name__}, not one tuple of parent indices per "
                           "variable") from None
    if len(parents) != problem.n:
        raise MethodFailed(f"method {name} returned {len(parents)} parent sets for {problem.n} variables")
    return parents


def call_method(method: Method, problem: Problem, options, budget: Budget, *, seed: int | None = None,
                solver: str | None = None, start: SolverResult | None = None, jobs: int = 1,
                scheduler: str | None = None, trusted: bool = False) -> SolverResult:
    """Run ``method`` with what it declares and return a certified SolverResult.

    A ``trusted`` method (twbn's own) returns a SolverResult it made with ``make_solution``,
    which checked its certificate; anything else is certified here from its parent sets
    (every set in the cache, acyclic, width <= k by twbn's own elimination order), and a
    method that raises or returns something else is one :class:`MethodFailed` naming it.
    """
    kwargs: dict[str, Any] = {}
    if method.seeded:
        kwargs["seed"] = seed
    if method.backends:
        kwargs["solver"] = solver or method.backends[0]
    if method.warm_start:
        kwargs["start"] = start
    if method.parallel:
        kwargs["jobs"] = jobs
    if method.distributed:
        kwargs["scheduler"] = scheduler
    if trusted:
        return method.run(problem, options, budget, **kwargs)
    budget.offered = [None]  # its children share it: a network offered from any stage is kept
    started = time.monotonic()
    try:
        with abandoning(budget.deadline, budget.control, grace=budget.policy.overrun_grace_s):
            out = method.run(problem, options, budget, **kwargs)
    except MethodOverran:
        return _abandoned(method, problem, budget, started, seed=seed, solver=kwargs.get("solver"))
    except TwbnError:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure of foreign code is the method's
        raise MethodFailed(f"method {method.name} failed: {type(exc).__name__}: {exc}") from None
    parents = _parents_of(out, problem, method.name)
    try:
        sol = make_solution(problem, parents, bound=None, status="feasible", method=method.name, seed=seed,
                            solver=kwargs.get("solver"))
    except (KeyError, ValueError) as exc:
        why = exc.args[0] if exc.args else exc
        raise MethodFailed(f"method {method.name} returned an invalid network: {why}") from None
    _keep_model_bound(out, sol)
    return sol


def _abandoned(method: Method, problem: Problem, budget: Budget, started: float, *, seed: int | None,
               solver: str | None) -> SolverResult:
    """The result of a method abandoned ``policy.overrun_grace_s`` past its deadline or a stop:
    the last network it offered (``budget.offer``), certified, or none."""
    control = budget.control
    stopped = control is not None and control.stopped_at is not None and (
        budget.deadline is None or control.stopped_at < budget.deadline)
    limit = "a stop request" if stopped else f"the end of its budget ({budget.seconds:.3g} s)"
    why = (f"method {method.name} ran {budget.policy.overrun_grace_s:g} s past {limit} without returning and was abandoned "
           "(it does not stop when budget.expired() says so)")
    offered = budget.offered[0]
    if offered is not None:
        try:
            sol = make_solution(problem, _parents_of(offered, problem, method.name), bound=None, status="feasible",
                                method=method.name, seed=seed, solver=solver)
        except (KeyError, ValueError, MethodFailed) as exc:
            why += f"; the network it offered is invalid ({exc.args[0] if exc.args else exc})"
        else:
            sol.stats["abandoned"] = why + "; the last network it offered is kept"
            return sol
    return SolverResult(None, None, None, "unknown", method=method.name, seed=seed, solver=solver,
                        wall_time=round(time.monotonic() - started, 4),
                        stats={"reason": why + "; no network", "abandoned": why + "; no network"})


def _keep_model_bound(out, sol: SolverResult) -> None:
    """A SolverResult of one of twbn's models (twbn.models: its stats name the extensions)
    keeps the engine's bound and gap trajectory, labelled with what they rest on: the
    model's own rows are proved valid, a researcher's extensions must be."""
    stats = getattr(out, "stats", None)
    bound = getattr(out, "bound", None)
    if not isinstance(stats, dict) or not isinstance(stats.get("extended_by"), list) or bound is None:
        return
    sol.bound = max(float(bound), sol.score)
    sol.trajectory = list(getattr(out, "trajectory", None) or [])
    extended = ", ".join(stats["extended_by"]) or "nothing"
    if str(stats.get("bound_source", "")).startswith("sum of each variable"):
        sol.stats["bound_source"] = stats["bound_source"]  # the engine proved nothing (its model unbuilt)
    else:
        sol.stats["bound_source"] = f"the engine's bound on twbn's model extended by {extended} (valid if they are)"
    for key in ("extended_by", "not_extended_by", "not_extended_because"):
        if key in stats:
            sol.stats[key] = stats[key]
    if sol.bound - sol.score <= 1e-9 * max(1.0, abs(sol.score)):
        sol.status = "optimal"
