"""The one base of the errors twbn raises.

Every error class of twbn derives from :class:`TwbnError`, so ``except twbn.TwbnError``
catches whatever twbn refuses or cannot do; a user error also stays a ``ValueError`` (or
``OSError``, ``ImportError``) as before, so code that catches those keeps working.
It lives in the lowest layer (scoring) so that every layer above can derive from it.
"""

from __future__ import annotations

__all__ = ["TwbnError"]


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
