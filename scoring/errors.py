"""The one base of the errors twbn raises.

Every error class of twbn derives from :class:`TwbnError`, so ``except twbn.TwbnError``
catches whatever twbn refuses or cannot do; a user error also stays a ``ValueError`` (or
``OSError``, ``ImportError``) as before, so code that catches those keeps working.
It lives in the lowest layer (scoring) so that every layer above can derive from it.
"""

from __future__ import annotations

__all__ = ["ParameterError", "ParameterTypeError", "ScoringStopped", "TwbnError", "TwbnWarning"]


class TwbnError(Exception):
    """Base of every error twbn raises.

    Examples
    --------
    >>> import twbn
    >>> try:
    ...     twbn.learn(twbn.example_path("zoo"), treewidth=1, method="gobnilp")
    ... except twbn.TwbnError as exc:
    ...     print(type(exc).__name__, isinstance(exc, ValueError))
    MethodUnavailable True
    """


class ScoringStopped(TwbnError):
    """Scoring ended because its ``stop`` said so (a signal to ``twbn experiment``); no
    cache is returned: a cache stopped mid-level would be another cache than asked for.

    Examples
    --------
    >>> import threading, twbn
    >>> ctrl_c = threading.Event()
    >>> ctrl_c.set()
    >>> twbn.score(twbn.example_path("zoo"), stop=ctrl_c.is_set)
    Traceback (most recent call last):
    ...
    twbn.scoring.errors.ScoringStopped: scoring stopped on request
    """


class ParameterError(TwbnError, ValueError):
    """An argument twbn cannot take: out of range, of the wrong kind, or not one of the
    names it knows; the message names the argument and the value given.

    Examples
    --------
    >>> import twbn
    >>> twbn.learn(twbn.example_path("zoo"), treewidth=-1)
    Traceback (most recent call last):
    ...
    twbn.scoring.errors.ParameterError: treewidth must be an integer >= 0 or None, got -1
    """


class ParameterTypeError(ParameterError, TypeError):
    """An argument of the wrong type (also a ``TypeError``, as Python's own checks are).

    Examples
    --------
    >>> import twbn
    >>> twbn.learn(twbn.example_path("zoo"), treewidth=1, policy="fast")
    Traceback (most recent call last):
    ...
    twbn.scoring.errors.ParameterTypeError: policy is a twbn.Policy, got str
    """


class TwbnWarning(UserWarning):
    """Something twbn did as asked but a user should hear of: data that reads, but likely
    not as meant (a real-valued column learned as one state per value). The command line
    prints it as one line; in Python, the ``warnings`` module's filters apply.

    Examples
    --------
    >>> import warnings, numpy as np, pandas as pd, twbn
    >>> df = pd.DataFrame({"a": np.random.default_rng(0).normal(size=40).round(3), "b": [0, 1] * 20})
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     ds = twbn.scoring.data.as_dataset(df)
    >>> [type(w.message).__name__ for w in seen], "'a' (40 values in 40 rows)" in str(seen[0].message)
    (['TwbnWarning'], True)
    """
