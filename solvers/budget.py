"""Time a method may spend: one :class:`Budget`, made from the user's limit, shared out.

A stage (a warm start, the pieces of an improver, the LP bound) gets a child by share of
what is left; a child never ends after its parent. ``left()`` is in seconds (``inf``
without a limit) and ``expired()`` says when to stop, so no code converts a limit into a
deadline and back. A budget also carries the call's stop flag (SIGINT/SIGTERM, a
:class:`~twbn.solvers.control.RunControl`): once a stop is asked for, the budget has
expired, children included. Every method (``twbn.Method``) receives one; the engines
inside the built-in methods are still handed seconds, taken from it once at their door
(``limit()``).
"""

from __future__ import annotations

import math
import time

__all__ = ["Budget"]


class Budget:
    """Seconds to spend, counted from when the budget was made.

    Parameters
    ----------
    seconds : float or None
        The limit; None (or ``inf``) for none.
    control : RunControl, optional
        The call's stop flag and progress; a requested stop expires the budget.
    started : float, optional
        The ``time.monotonic()`` it counts from (default: now), for a budget that began
        when a call entered, before its checks.

    Raises
    ------
    ValueError
        A limit that is not a positive number.

    Examples
    --------
    >>> b = Budget(10.0)
    >>> 9.0 < b.left() <= 10.0, b.expired()
    (True, False)
    >>> half = b.child(0.5)
    >>> 4.0 < half.left() <= 5.0
    True
    >>> Budget(None).left(), Budget(None).child(0.2).left()
    (inf, inf)
    """

    def __init__(self, seconds: float | None = None, *, control=None, started: float | None = None) -> None:
        if seconds is not None:
            if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or math.isnan(seconds) \
                    or not seconds > 0:
                raise ValueError(f"a budget is a positive number of seconds or None, got {seconds!r}")
            if math.isinf(seconds):
                seconds = None
        self.seconds = seconds
        self.control = control
        self.started = time.monotonic() if started is None else started
        self.deadline = None if seconds is None else self.started + seconds

    def left(self) -> float:
        """Seconds left (0 once expired; ``inf`` without a limit)."""
        if self.deadline is None:
            return math.inf
        return max(0.0, self.deadline - time.monotonic())

    def expired(self) -> bool:
        """Whether the time is up, or a stop was asked for."""
        if self.control is not None and self.control.stop_requested():
            return True
        return self.deadline is not None and time.monotonic() >= self.deadline

    def stop_requested(self) -> bool:
        """Whether the user asked the call to stop (the method then returns its best)."""
        return self.control is not None and self.control.stop_requested()

    def limit(self) -> float | None:
        """What is left as a time limit for an engine that takes seconds: None without a
        limit; otherwise at least 0.05 s, so that an engine handed an expired budget
        still returns the network it was given rather than refusing a zero limit."""
        if self.deadline is None:
            return None
        return max(0.05, self.deadline - time.monotonic())

    def elapsed(self) -> float:
        """Seconds since the budget was made."""
        return time.monotonic() - self.started

    def child(self, share: float) -> "Budget":
        """A budget of ``share`` (in (0, 1]) of what is left now; unlimited stays unlimited."""
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share <= 1:
            raise ValueError(f"a share is a number in (0, 1], got {share!r}")
        left = self.left()
        if math.isinf(left):
            return Budget(None, control=self.control)
        child = Budget.__new__(Budget)
        child.control = self.control
        child.seconds = share * left
        child.started = time.monotonic()
        child.deadline = min(self.deadline, child.started + child.seconds)
        return child

    def __repr__(self) -> str:
        return "Budget(no limit)" if self.deadline is None else f"Budget({self.left():.3f} s left of {self.seconds:g})"
