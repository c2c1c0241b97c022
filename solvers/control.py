"""Talking to a running method: stop it early and keep its work; hear how it is doing.

A :class:`RunControl` goes down with a call to ``solve``.

- **Stopping** (SIGINT, SIGTERM). Anytime methods poll ``stop_requested()`` (the
  heuristics between orders) or register a hook that interrupts their engine (``cuts``
  and ``milp`` on SCIP: ``interruptSolve``; ``milp`` on HiGHS: ``cancelSolve``; ``cp``: a
  message to its child process, whose CP-SAT then stops its search),
  then return their best certified network as usual. While no cooperative method is
  running, a signal raises KeyboardInterrupt, as Python's default handler does, so that
  exact methods, which have no network to keep, stop at once.
- **Progress.** Methods report their incumbent, bound and iterations with ``report``;
  ``snapshot()`` gives the latest, for a live line on a terminal.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from typing import Callable, Iterator

__all__ = ["RunControl", "cooperating", "reporting"]


class RunControl:
    """One method call's stop flag and progress, shared with the signal handler and the
    thread that draws the live line."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._hooks: list[Callable[[], None]] = []
        self._cooperative = 0
        self.signal: int | None = None
        self.t0 = time.monotonic()
        self._progress: dict = {"method": None, "incumbent": None, "bound": None, "iterations": None}

    # -- stopping ------------------------------------------------------------------------
    def stop_requested(self) -> bool:
        return self._event.is_set()

    @property
    def stop_event(self) -> threading.Event:
        """The stop flag itself, for code that waits on it or hands it to threads."""
        return self._event

    def request_stop(self, signum: int | None = None) -> None:
        """Ask the running method to stop: set the flag and call its hooks."""
        if self.signal is None:
            self.signal = signum
        self._event.set()
        for hook in list(self._hooks):
            hook()

    @contextlib.contextmanager
    def cooperating(self, hook: Callable[[], None] | None = None) -> Iterator["RunControl"]:
        """While inside, the running method polls ``stop_requested()`` (and ``hook``, if
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
        self.request_stop(signum)
        if not self._cooperative:
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def catching(self, *signums: int) -> Iterator["RunControl"]:
        """Route ``signums`` (default SIGINT, SIGTERM) to this control while inside; the
        previous handlers come back on exit. Only from the main thread."""
        signums = signums or (signal.SIGINT, signal.SIGTERM)
        previous = {s: signal.signal(s, self._handler) for s in signums}
        try:
            yield self
        finally:
            for s, h in previous.items():
                signal.signal(s, h)

    # -- progress ------------------------------------------------------------------------
    def begin(self, method: str) -> None:
        """A method starts: its name, and no figures yet."""
        self._progress = {"method": method, "incumbent": None, "bound": None, "iterations": None}

    def report(self, *, incumbent: float | None = None, bound: float | None = None,
               iterations: int | None = None) -> None:
        """Record what the method knows now; None leaves a figure as it was."""
        for key, value in (("incumbent", incumbent), ("bound", bound), ("iterations", iterations)):
            if value is not None:
                self._progress[key] = value

    def snapshot(self) -> dict:
        """The latest figures, with the seconds elapsed since the control was made."""
        return {**self._progress, "elapsed": time.monotonic() - self.t0}


def die_with_parent(parent: int | None = None) -> None:
    """Ask Linux to SIGKILL this process when its parent dies (``kill -9`` included), so
    that no child of twbn outlives it; if the parent ``parent`` is already gone, exit. A
    no-op where prctl is missing."""
    import ctypes
    import os

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if parent is not None and os.getppid() != parent:
        os._exit(1)


def one_core():
    """BLAS on one thread while it is entered (a context; called plainly, for the rest of
    the process): a job is one core. numpy's float products call OpenBLAS, which would
    otherwise run a thread per core (the cluster LP's column products at n = 1,041), so that
    a one-job run, or each of N jobs, would take more than its core."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def cooperating(control: "RunControl | None", hook: Callable[[], None] | None = None):
    """``control.cooperating(hook)``, or a no-op context when there is no control."""
    return control.cooperating(hook) if control is not None else contextlib.nullcontext()


def progress_line(snap: dict) -> str:
    """``cuts  12.3 s  incumbent -11944.93  bound -11332.30  gap 5.13%  (1,204 iterations)``."""
    parts = [f"{snap['method'] or 'learning'}", f"{snap['elapsed']:.1f} s"]
    inc, bound = snap.get("incumbent"), snap.get("bound")
    if inc is not None:
        parts.append(f"incumbent {inc:.2f}")
    if bound is not None and abs(bound) < 1e19:
        parts.append(f"bound {bound:.2f}")
    if inc is not None and bound is not None and abs(bound) < 1e19:
        parts.append(f"gap {100 * (bound - inc) / max(abs(inc), 1e-12):.2f}%")
    if snap.get("iterations"):
        parts.append(f"({snap['iterations']:,} iterations)")
    return "  ".join(parts)


@contextlib.contextmanager
def reporting(control: RunControl, callback: Callable[[dict], None], *, every: float = 0.5) -> Iterator[None]:
    """Hand ``control.snapshot()`` to ``callback`` every ``every`` seconds, from a thread,
    until the block ends."""
    done = threading.Event()

    def tick() -> None:
        while not done.wait(every):
            callback(control.snapshot())

    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def draw_line(stream) -> Callable[[dict], None]:
    """A ``reporting`` callback that redraws ``progress_line`` on ``stream`` (a terminal)."""
    def draw(snap: dict) -> None:
        stream.write("\r\033[K" + progress_line(snap))
        stream.flush()
    return draw
