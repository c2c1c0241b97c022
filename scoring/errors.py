"""The one base of the errors twbn raises.

Every error class of twbn derives from :class:`TwbnError`, so ``except twbn.TwbnError``
catches whatever twbn refuses or cannot do; a user error also stays a ``ValueError`` (or
``OSError``, ``ImportError``) as before, so code that catches those keeps working.
It lives in the lowest layer (scoring) so that every layer above can derive from it.
"""

from __future__ import annotations

__all__ = ["ScoringStopped", "TwbnError"]


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
