"""Stopping a method early and keeping its work (SIGINT, SIGTERM).

A :class:`StopRequest` goes down with a call to ``solve``. Anytime methods poll it (the
heuristics between orders) or register a hook that interrupts their engine (``cuts``:
SCIP's ``interruptSolve``, called from the next Python callback), and then return their
best certified network as usual. While no cooperative method is running, a signal
raises KeyboardInterrupt, as Python's default handler does, so that exact methods
without a network to keep stop at once.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Callable, Iterator

__all__ = ["StopRequest"]


class StopRequest:
    """A request to stop, set by a signal handler (or by hand), read by the methods."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._hooks: list[Callable[[], None]] = []
        self._cooperative = 0
        self.signal: int | None = None

    def requested(self) -> bool:
        return self._event.is_set()

    def request(self, signum: int | None = None) -> None:
        """Ask the running method to stop: set the flag and call its hooks."""
        if self.signal is None:
            self.signal = signum
        self._event.set()
        for hook in list(self._hooks):
            hook()

    @contextlib.contextmanager
    def cooperating(self, hook: Callable[[], None] | None = None) -> Iterator["StopRequest"]:
        """While inside, the running method polls ``requested()`` (and ``hook``, if
        given, is called on a request), so a signal must not raise."""
        self._cooperative += 1
        if hook is not None:
            self._hooks.append(hook)
        try:
            yield self
        finally:
            self._cooperative -= 1
            if hook is not None:
                self._hooks.remove(hook)

    def _handler(self, signum, _frame) -> None:
        self.request(signum)
        if not self._cooperative:
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def catching(self, *signums: int) -> Iterator["StopRequest"]:
        """Route ``signums`` (default SIGINT, SIGTERM) to this request while inside; the
        previous handlers come back on exit. Only from the main thread."""
        signums = signums or (signal.SIGINT, signal.SIGTERM)
        previous = {s: signal.signal(s, self._handler) for s in signums}
        try:
            yield self
        finally:
            for s, h in previous.items():
                signal.signal(s, h)


def cooperating(stop: "StopRequest | None", hook: Callable[[], None] | None = None):
    """``stop.cooperating(hook)``, or a no-op context when there is no request object."""
    return stop.cooperating(hook) if stop is not None else contextlib.nullcontext()
