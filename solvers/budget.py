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

import contextlib
import math
import time
from typing import Iterator

__all__ = ["Budget", "bound_share", "WARM_START_SHARE", "START_MAX_S", "BOUND_SHARE", "LARGE_BOUND_N", "LARGE_BOUND_SHARE", "IMPROVE_START_SHARE", "CUTS_IMPROVE_SHARE",
           "UNBOUNDED_BOUND_SHARE", "SCORING_SHARE", "COMMAND_RESERVE_S", "MILP_BUILD_SHARE", "CUTS_BUILD_SHARE", "LNS_SHARE", "KTREE_SHARE"]

# -- Shares: how a budget is divided, each with the measurement behind it ------------------
# Between stages (a child per stage, ``Budget.stage``):

#: A method-name warm start (``--warm-start kg``, auto's k-G start) gets this share; the
#: method gets what is left of the same budget.
WARM_START_SHARE = 0.2
#: ... and at most this many seconds, as does ``improve``'s own k-MAX start (its
#: restarts' starts: ``RESTART_START_MAX_S``, solvers/cuts/improve.py): in 1,800 s runs
#: (auto, one job, 2026-11-26) k-MAX's start had 360 s and reached what k-MAX alone
#: reaches in 60 s in 6 of 8 cells (plants k = 2, 5, 8, baudio k = 2, 5, munin k = 2), and
#: at most 180 more in the other two (munin k = 5, 8), while the improver gained thousands
#: in the time left to it.
START_MAX_S = 60.0
#: The cluster LP's bound (solvers/relaxation.py) after an anytime method, where the
#: method asks for it: this share below ``LARGE_BOUND_N`` variables, ``LARGE_BOUND_SHARE``
#: from there (``bound_share``).
BOUND_SHARE = 0.1
#: Measured (auto = improve from k-MAX, k = 5, 60 s, one core, 2026-11-25): the proved gap
#: at a bound share of 0.1 / 0.2 / 0.3 was 11.25 / 10.47 / 10.09 % on plants (n = 69),
#: 3.14 / 2.87 / 2.82 % on baudio (n = 100) with the same network at every share (the
#: improver had stopped improving), and 2.92 / 2.51 / 2.39 % on munin5000 (n = 1,041),
#: whose network lost 551 / 1,301 of 1,024,247 (0.13 %) at 0.2 / 0.3, still 4,375 ahead of
#: BLIP's k-MAX. The gap shrinks at every n measured, so 0.3 from the smallest measured;
#: below it the share is as it was (not measured).
LARGE_BOUND_N, LARGE_BOUND_SHARE = 60, 0.3
#: ``improve`` without a start: k-MAX's network on this share first.
IMPROVE_START_SHARE = 0.2
#: ``cuts`` above n = 40 without a start gives ``improve`` this share (option
#: improve_share). Unbounded, 300 s, from an improve start of 81 s: SCIP's root on plants
#: (n = 69) reached −223,027 in the rest, where the cluster LP's 30 s gave −227,412, and on
#: baudio (n = 100) did not solve its first LP; improve alone for the whole budget ended
#: 2,867 and 4,079 ahead. Hence most of the budget goes to improve.
CUTS_IMPROVE_SHARE = 0.6
#: ``auto`` on a bounded problem at n <= 40 first solves it without the treewidth bound
#: (families of at most k parents), as a bound, in this share: by the DP at n <= 22 when
#: its expected time (solvers/auto.dp_seconds, with its margin) fits, else by ``cuts``
#: (wdbc, n = 31: 3-8 s of a 60 s budget).
UNBOUNDED_BOUND_SHARE = 0.25

#: ``twbn learn DATA --time-limit S``: scoring the data may take this share of what is
#: left after start-up, the method the rest. Not tuned: an even split, so that neither a
#: thin cache nor a short search decides alone (issue 33.5's 190-variable set spent 53 s
#: of a 60 s limit scoring, outside the limit, before this).
SCORING_SHARE = 0.5
#: The command line's method stops this long before its limit, for writing the result and
#: leaving the process (measured: 0.1-0.3 s after the method returned, with jester's
#: 772,774 sets in memory).
COMMAND_RESERVE_S = 0.4

# Inside an engine (it is handed seconds once, and keeps to these):

#: The MILP's pyomo build: writing the model out takes about as long again (plants,
#: n = 69: k = 2 built in 3.0 s, written in 2.0 s; k = 5 5.4 s and 5.7 s); the engine
#: needs the rest.
MILP_BUILD_SHARE = 0.4
#: The cluster ILP's build, of which SCIP's setup takes about as much again (bounded
#: jester, n = 100, k = 8, 772,774 sets: built in 21 s, then 18 s more with a SCIP limit of
#: 0.1 s; baudio k = 5: 14 s, then 3.5 s past); past it the start is the answer.
CUTS_BUILD_SHARE = 0.45
#: The cluster ILP's large-neighbourhood search: most of the elapsed time it may take
#: (option lns_share; more finds better networks in long runs, at the bound's expense).
LNS_SHARE = 0.3
#: S2+: the share of the time left one k-tree search may take (at n = 100, k = 5 the A*
#: expands ~700 states a second, so its 5,000 would otherwise leave phase 2 nothing).
KTREE_SHARE = 0.5



def bound_share(n: int) -> float:
    """The share of an anytime method's budget kept for the cluster LP's bound at ``n``
    variables.

    Examples
    --------
    >>> bound_share(31), bound_share(69), bound_share(1041)
    (0.1, 0.3, 0.3)
    """
    return LARGE_BOUND_SHARE if n >= LARGE_BOUND_N else BOUND_SHARE


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
    >>> 2.9 < Budget(100.0).child(0.5, at_most=3.0).left() <= 3.0
    True
    """

    def __init__(self, seconds: float | None = None, *, control=None, started: float | None = None) -> None:
        if seconds is not None:
            if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or math.isnan(seconds) \
                    or not seconds > 0:
                raise ValueError(f"a budget is a positive number of seconds or None, got {seconds!r}")
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
        limit; otherwise at least 0.05 s, so that an engine handed an expired budget
        still returns the network it was given rather than refusing a zero limit."""
        if self.deadline is None:
            return None
        return max(0.05, self.deadline - time.monotonic())

    def elapsed(self) -> float:
        """Seconds since the budget was made."""
        return time.monotonic() - self.started

    def child(self, share: float, at_most: float | None = None) -> "Budget":
        """A budget of ``share`` (in (0, 1]) of what is left now, and of at most
        ``at_most`` seconds; unlimited stays unlimited (a stage then keeps its method's
        own default)."""
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share <= 1:
            raise ValueError(f"a share is a number in (0, 1], got {share!r}")
        if at_most is not None and (isinstance(at_most, bool) or not isinstance(at_most, (int, float))
                                    or not at_most > 0):
            raise ValueError(f"at_most is a positive number of seconds, got {at_most!r}")
        left = self.left()
        if math.isinf(left):
            child = Budget(math.inf if self.endless else None, control=self.control)
            child.log, child.origin, child.joining, child.offered = self.log, self.origin, self.joining, self.offered
            return child
        child = Budget.__new__(Budget)
        child.control, child.endless = self.control, False
        child.log, child.origin, child.joining, child.offered = self.log, self.origin, self.joining, self.offered
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
