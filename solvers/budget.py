"""Time a method may spend: one :class:`Budget`, made from the user's limit, shared out.

A stage (a warm start, the pieces of an improver, the LP bound) gets a child by share of
what is left; a child never ends after its parent. ``left()`` is in seconds (``inf``
without a limit) and ``expired()`` says when to stop, so no code converts a limit into a
deadline and back. A budget also carries the call's stop flag (SIGINT/SIGTERM, a
:class:`~twbn.solvers.control.RunControl`): once a stop is asked for, the budget has
expired, children included. Every method (``twbn.Method``) receives one; the engines
inside the built-in methods are still handed seconds, taken from it once at their door
(``limit()``), with its :class:`~twbn.solvers.policy.Policy`: the shares a stage gets and
every other knob are the budget's ``policy``'s, inherited by its children.
"""

from __future__ import annotations

import contextlib
import math
import time
from typing import Iterator

from twbn.solvers.policy import DEFAULT_POLICY, Policy
from twbn.scoring.errors import ParameterError, ParameterTypeError

__all__ = ["Budget", "limit_until", "seconds_to", "passed", "deadline_in"]


def limit_until(deadline: float | None, policy: Policy = DEFAULT_POLICY, at_most: float | None = None) -> float | None:
    """Seconds from now to ``deadline`` as a time limit for an engine: None without a
    deadline (or ``at_most`` if given), and never below ``policy.min_engine_s``, so that an
    engine handed an expired deadline still returns the network it was given.

    Examples
    --------
    >>> limit_until(None), limit_until(None, at_most=3.0), limit_until(time.monotonic() - 1.0)
    (None, 3.0, 0.05)
    """
    if deadline is None:
        return at_most
    left = deadline - time.monotonic()
    return max(policy.min_engine_s, left if at_most is None else min(at_most, left))


def seconds_to(deadline: float | None) -> float:
    """Seconds from now to ``deadline`` (a ``time.monotonic()`` value): ``inf`` without
    one, negative once past it. The one home of deadline arithmetic, with
    :func:`passed` and :func:`deadline_in`.

    Examples
    --------
    >>> seconds_to(None), seconds_to(time.monotonic() + 60) > 59, seconds_to(time.monotonic() - 1) < 0
    (inf, True, True)
    """
    return math.inf if deadline is None else deadline - time.monotonic()


def passed(deadline: float | None) -> bool:
    """Whether ``deadline`` (a ``time.monotonic()`` value) has passed; never without one.

    Examples
    --------
    >>> passed(None), passed(time.monotonic() - 1), passed(time.monotonic() + 60)
    (False, True, False)
    """
    return deadline is not None and time.monotonic() > deadline


def deadline_in(seconds: float) -> float:
    """The ``time.monotonic()`` value ``seconds`` from now.

    Examples
    --------
    >>> 59 < seconds_to(deadline_in(60.0)) <= 60, passed(deadline_in(-1.0))
    (True, True)
    """
    return time.monotonic() + seconds


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
    policy : Policy, optional
        The time shares and search knobs of the methods it is handed to (default: the
        measured defaults); children carry the same.

    Raises
    ------
    ParameterError
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
    >>> 2.9 < Budget(100.0).child(0.5, at_most=3.0).left() <= 3.0
    True
    """

    def __init__(self, seconds: float | None = None, *, control=None, started: float | None = None,
                 policy: Policy | None = None) -> None:
        if policy is not None and not isinstance(policy, Policy):
            raise ParameterTypeError(f"policy is a twbn.Policy, got {type(policy).__name__}")
        #: The methods' knobs (twbn.Policy), shared with children.
        self.policy = DEFAULT_POLICY if policy is None else policy
        if seconds is not None:
            if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or math.isnan(seconds) \
                    or not seconds > 0:
                raise ParameterError(f"a budget is a positive number of seconds or None, got {seconds!r}")
        #: Whether the caller asked for no limit (``inf``), rather than giving none (None:
        #: the method's own default applies); children inherit it.
        self.endless = seconds is not None and math.isinf(seconds)
        if self.endless:
            seconds = None
        self.seconds = seconds
        self.control = control
        #: What each stage was allotted and spent, shared by a budget and its children
        #: (``stage``); a result records it.
        self.log: list[dict] = []
        self.started = time.monotonic() if started is None else started
        self.origin = self.started  # the root's start, which stage times count from
        self.deadline = None if seconds is None else self.started + seconds
        #: ``(when, jobs)``: ``jobs`` more processes the method may use from
        #: ``time.monotonic()`` ``when`` on (a job the LP's bound had beside it comes back,
        #: issue 33.2); children inherit it.
        self.joining: tuple[float, int] | None = None
        #: ``[network]``: the last network ``offer`` was given, shared with children.
        self.offered: list = [None]
        #: The registry that made it (a ``Subsolver``: ``solve``, ``method``, ``methods``),
        #: through which a method runs other methods as stages; children inherit it.
        self.subsolver = None

    def solve(self, problem, method: str, **kw):
        """``method`` on ``problem`` within this budget (a stage of the caller's: time is
        divided, never converted), by the registry that made the budget; the keywords are
        ``seed``, ``warm_start``, ``options``, ``jobs``, ``scheduler`` and ``lp_bound``
        (False: no share for the cluster LP's bound)."""
        return self.registry().solve(problem, method, budget=self, **kw)

    def method(self, name: str):
        """The registered method ``name`` (MethodUnavailable if there is none)."""
        return self.registry().method(name)

    def methods(self) -> dict:
        """Every registered method by name, the installed plugins' included."""
        return self.registry().methods()

    def registry(self):
        """The registry that made this budget (RuntimeError if none did)."""
        if self.subsolver is None:
            raise RuntimeError("this budget was not made by twbn's registry (solve/run): it cannot run another "
                               "method; give it one with budget.subsolver = the registry's")
        return self.subsolver

    def offer(self, parents) -> None:
        """Hand over the best network so far (what ``run`` would return: one tuple of
        parent indices per variable), kept should the method be abandoned for running
        past its deadline; certified only then. A method that returns on time need not
        call it."""
        self.offered[0] = parents

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
        limit; otherwise at least ``policy.min_engine_s``, so that an engine handed an expired budget
        still returns the network it was given rather than refusing a zero limit."""
        return limit_until(self.deadline, self.policy)

    def elapsed(self) -> float:
        """Seconds since the budget was made."""
        return time.monotonic() - self.started

    def child(self, share: float, at_most: float | None = None) -> "Budget":
        """A budget of ``share`` (in (0, 1]) of what is left now, and of at most
        ``at_most`` seconds; unlimited stays unlimited (a stage then keeps its method's
        own default)."""
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share <= 1:
            raise ParameterError(f"a share is a number in (0, 1], got {share!r}")
        if at_most is not None and (isinstance(at_most, bool) or not isinstance(at_most, (int, float))
                                    or not at_most > 0):
            raise ParameterError(f"at_most is a positive number of seconds, got {at_most!r}")
        left = self.left()
        if math.isinf(left):
            child = Budget(math.inf if self.endless else None, control=self.control, policy=self.policy)
            child.log, child.origin, child.joining, child.offered = self.log, self.origin, self.joining, self.offered
            child.subsolver = self.subsolver
            return child
        child = Budget.__new__(Budget)
        child.control, child.endless, child.policy = self.control, False, self.policy
        child.log, child.origin, child.joining, child.offered = self.log, self.origin, self.joining, self.offered
        child.subsolver = self.subsolver
        child.seconds = share * left if at_most is None else min(share * left, at_most)
        child.started = time.monotonic()
        child.deadline = min(self.deadline, child.started + child.seconds)
        return child

    @contextlib.contextmanager
    def stage(self, name: str, share: float = 1.0, at_most: float | None = None) -> Iterator["Budget"]:
        """A child of ``share`` of what is left (at most ``at_most`` seconds), for one
        stage; on leaving, what it was allotted and what it spent are added to ``log``.

        Examples
        --------
        >>> b = Budget(10.0)
        >>> with b.stage("warm start", 0.2) as start:
        ...     4.0 >= start.left() > 1.0
        True
        >>> [(s["stage"], s["share"]) for s in b.log]
        [('warm start', 0.2)]
        """
        child = self.child(share, at_most)
        t0 = time.monotonic()
        # The entry is placed when the stage begins, so the log lists stages as begun even
        # when a nested stage starts within the clock's resolution of its parent.
        entry = {"stage": name, "share": share, "from": round(t0 - self.origin, 4),
                 "allotted": None if child.seconds is None else round(child.seconds, 4), "spent": None}
        self.log.append(entry)
        try:
            yield child
        finally:
            entry["spent"] = round(time.monotonic() - t0, 4)

    def __repr__(self) -> str:
        return "Budget(no limit)" if self.deadline is None else f"Budget({self.left():.3f} s left of {self.seconds:g})"
