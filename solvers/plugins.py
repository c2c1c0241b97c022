"""Methods from outside twbn: ``Method``, ``register_method`` and the entry-point group
``twbn.methods``.

A plugin is one object, a :class:`Method`: a name, a ``run(problem, options, budget)``
callable and what it declares (options dataclass, backends, the smallest treewidth bound
it needs, whether it takes a start). ``register_method`` adds it to the registry, where it
is usable wherever a built-in method is: ``twbn learn --method NAME --option K=V``,
``twbn.learn(..., method=NAME)``, experiment configs, ``twbn methods``. A package makes
one found without an import by declaring it under the entry-point group, as pytest finds
its plugins::

    [project.entry-points."twbn.methods"]
    greedy = "my_package.module:METHOD"

twbn certifies what ``run`` returns exactly as it does for a built-in method (every
parent set in the cache, acyclic, width ≤ k by its own elimination order), scores it and
attaches a bound: the cluster LP's (``lp_bound=True``, on 10 % of the budget), at least
the sum of the best local scores. A run that raises, or returns a network that fails the
certificate, is one error naming the method and the violation (:class:`MethodFailed`).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any, Callable

from twbn.formulations.problem import Problem
from twbn.formulations.solution import Solution, make_solution
from twbn.scoring.errors import TwbnError
from twbn.solvers.budget import Budget

__all__ = ["Method", "MethodFailed", "register_method", "load_plugins", "PLUGIN_GROUP", "PLUGIN_FAILURES"]

#: The entry-point group whose entries name a ``twbn.Method`` object.
PLUGIN_GROUP = "twbn.methods"
#: Entry points that could not be used, by name: why (``twbn methods`` shows them).
PLUGIN_FAILURES: dict[str, str] = {}
_NAME = re.compile(r"^[a-z][a-z0-9_\-]*$")
_loaded = False


class MethodFailed(TwbnError, RuntimeError):
    """A method raised, or returned something that is not a network of the problem."""


@dataclass(frozen=True)
class NoOptions:
    """The method takes no options."""


@dataclass(frozen=True)
class Method:
    """A structure-learning method, declared once, usable everywhere a built-in one is.

    Parameters
    ----------
    name : str
        Lower-case letters, digits, ``-`` and ``_``; not a name already registered.
    run : callable
        ``run(problem, options, budget)``: ``problem`` a :class:`twbn.Problem` (``n``,
        ``names``, ``treewidth`` (None: unbounded), ``forbidden``, ``required``,
        ``parent_sets(v)``), ``options`` an instance of ``options`` (None if it declares
        none), ``budget`` a :class:`twbn.Budget`. Returns the parent sets, one tuple of
        variable indices per variable, or an object with such ``parents``.
    options : dataclass type, optional
        Its options, with defaults; ``--option NAME=VALUE`` values are converted to the
        field's type, and unknown names are refused with a "did you mean".
    summary : str
        One line for ``twbn methods`` and ``--help``.
    backends : tuple of str
        Values ``--solver`` may take (the first is the default); none by default.
    min_treewidth : int, optional
        The smallest bound k it needs; None: it also runs unbounded.
    warm_start : bool
        Whether it takes a start network (it then comes in ``options`` as given by the
        caller: plugins read ``problem`` only; declared for the checks).
    lp_bound : bool
        Keep 10 % of the budget for the cluster LP's bound on its result.
    default_time_limit : float, optional
        Seconds when the caller gives no limit (10 s by default; None: until it returns).

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
    lp_bound: bool = True
    default_time_limit: float | None = 10.0

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise MethodFailed(f"a method name is lower-case letters, digits, - and _, got {self.name!r}")
        if not callable(self.run):
            raise MethodFailed(f"method {self.name}: run must be callable")
        if self.options is not None and not dataclasses.is_dataclass(self.options):
            raise MethodFailed(f"method {self.name}: options must be a dataclass type")


def _parents_of(out, problem: Problem, name: str) -> list[tuple[int, ...]]:
    """The parent sets a plugin returned, as sorted index tuples."""
    parents = getattr(out, "parents", out)
    if isinstance(parents, dict):  # a twbn.Solution: parents by name
        pos = {v: i for i, v in enumerate(problem.names)}
        try:
            parents = [tuple(pos[p] for p in parents[v]) for v in problem.names]
        except KeyError as exc:
            raise MethodFailed(f"method {name} returned parents of an unknown variable {exc.args[0]!r}") from None
    try:
        parents = [tuple(sorted(int(p) for p in ps)) for ps in parents]
    except (TypeError, ValueError):
        raise MethodFailed(f"method {name} returned {type(out).__name__}, not one tuple of parent indices per "
                           "variable") from None
    if len(parents) != problem.n:
        raise MethodFailed(f"method {name} returned {len(parents)} parent sets for {problem.n} variables")
    return parents


def _adapter(method: Method):
    """The registry's calling convention around a plugin's ``run``."""

    def run(problem: Problem, *, time_limit, seed, solver, warm_start, options, control) -> Solution:
        budget = Budget(time_limit)
        try:
            out = method.run(problem, None if method.options is None else options, budget)
        except TwbnError:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure of foreign code is the method's
            raise MethodFailed(f"method {method.name} failed: {type(exc).__name__}: {exc}") from None
        parents = _parents_of(out, problem, method.name)
        try:
            return make_solution(problem, parents, bound=None, status="feasible", method=method.name, seed=seed,
                                 time_limit=time_limit)
        except (KeyError, ValueError) as exc:
            why = exc.args[0] if exc.args else exc
            raise MethodFailed(f"method {method.name} returned an invalid network: {why}") from None

    return run


def register_method(method: Method) -> None:
    """Add ``method`` to the registry.

    Raises
    ------
    MethodFailed
        ``method`` is not a :class:`Method`, or its name is taken (never a silent
        replacement of a built-in or an earlier plugin).
    """
    from twbn.solvers import registry

    if not isinstance(method, Method):
        raise MethodFailed(f"register_method takes a twbn.Method, got {type(method).__name__}")
    if method.name in registry.METHODS or method.name == "auto":
        raise MethodFailed(f"method name {method.name!r} is taken: choose another name")
    registry.METHODS[method.name] = registry.Method(
        method.name, method.summary or "(a plugin method)", _adapter(method), method.options or NoOptions,
        backends=tuple(method.backends), min_treewidth=method.min_treewidth, warm_start=method.warm_start,
        default_time_limit=method.default_time_limit, anytime=True, lp_bound_from=0 if method.lp_bound else None,
        plugin=True)


def load_plugins() -> None:
    """Register the methods the installed packages declare under ``twbn.methods`` (once
    per process); an entry that fails is kept in ``PLUGIN_FAILURES`` with the reason and
    every other method still works."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    from importlib.metadata import entry_points

    for ep in entry_points(group=PLUGIN_GROUP):
        try:
            obj = ep.load()
        except Exception as exc:  # noqa: BLE001 - a broken plugin must not break twbn
            PLUGIN_FAILURES[ep.name] = f"cannot import {ep.value}: {type(exc).__name__}: {exc}"
            continue
        if not isinstance(obj, Method):
            PLUGIN_FAILURES[ep.name] = f"{ep.value} is a {type(obj).__name__}, not a twbn.Method"
            continue
        try:
            register_method(obj)
        except MethodFailed as exc:
            PLUGIN_FAILURES[ep.name] = str(exc)
