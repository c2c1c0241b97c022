"""Methods from outside twbn: ``Method``, ``register_method`` and the entry-point group
``twbn.methods``.

A plugin is one object, a :class:`~twbn.solvers.method.Method` — the declaration twbn's
own methods make too: a name, a ``run(problem, options, budget)`` callable and what it
declares (options dataclass, backends, the smallest treewidth bound it needs, whether it
takes a start or a seed). ``register_method`` adds it to the registry, where it
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

from twbn.solvers.method import Method, MethodFailed

__all__ = ["Method", "MethodFailed", "register_method", "load_plugins", "PLUGIN_GROUP", "PLUGIN_FAILURES", "METHODS"]

#: The entry-point group whose entries name a ``twbn.Method`` object.
PLUGIN_GROUP = "twbn.methods"
#: Entry points that could not be used, by name: why (``twbn methods`` shows them).
PLUGIN_FAILURES: dict[str, str] = {}
#: Every registered method by name: the registry (solvers/registry.py) puts twbn's own in
#: first, ``register_method`` adds the rest.
METHODS: dict[str, Method] = {}
_loaded = False


def register_method(method: Method) -> None:
    """Add ``method`` to the registry, where every command and call finds it by name.

    Parameters
    ----------
    method : Method
        The declaration; its name must not be taken.

    Returns
    -------
    None

    Raises
    ------
    MethodFailed
        ``method`` is not a :class:`Method`, or its name is taken (never a silent
        replacement of a built-in or an earlier plugin).

    Examples
    --------
    >>> import twbn
    >>> twbn.register_method(twbn.Method("kg", lambda problem, options, budget: None))
    Traceback (most recent call last):
    ...
    twbn.solvers.method.MethodFailed: method name 'kg' is taken: choose another name
    """
    if not isinstance(method, Method):
        raise MethodFailed(f"register_method takes a twbn.Method, got {type(method).__name__}")
    if method.name in METHODS:
        raise MethodFailed(f"method name {method.name!r} is taken: choose another name")
    METHODS[method.name] = method


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
