"""Talking to a running method: stop it early and keep its work; hear how it is doing.

A :class:`RunControl` goes down with a call to ``solve``.

- **Stopping** (SIGINT, SIGTERM). Anytime methods poll ``stop_requested()`` (the
  heuristics between orders) or register a hook that interrupts their engine (``cuts``
  and ``milp`` on SCIP: ``interruptSolve``; ``milp`` on HiGHS: ``cancelSolve``; ``cp``: a
  message to its child process, whose CP-SAT then stops its search),
  then return their best certified network as usual. While no cooperative method is
  running, a signal raises KeyboardInterrupt, as Python's default handler does, so that
  exact methods, which have no network to keep, stop at once. A second signal always
  raises KeyboardInterrupt: the user who presses Ctrl-C twice wants out now.
- **Abandoning** a method that does not stop (a plugin that never reads its budget):
  :func:`abandoning` raises :class:`MethodOverran` inside it once its deadline, or a stop
  request, is the policy's ``overrun_grace_s`` behind. Python delivers it at the method's next
  bytecode, so a pure-Python loop is stopped; code inside one long C call is stopped when
  that call returns.
- **Progress.** Methods report their incumbent, bound and iterations with ``report``;
  ``snapshot()`` gives the latest, for a live line on a terminal.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import signal
import threading
import time
from typing import Callable, Iterator

__all__ = ["RunControl", "cooperating", "uncooperative", "reporting", "abandoning", "hearing_signals", "MethodOverran"]


class MethodOverran(BaseException):
    """Raised inside a method that ran ``Policy.overrun_grace_s`` past its deadline or a stop
    request. A BaseException, so that a method's own ``except Exception`` does not keep it
    running."""


class RunControl:
    """One method call's stop flag and progress, shared with the signal handler and the
    thread that draws the live line."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._hooks: list[Callable[[], None]] = []
        self._cooperative = 0
        self.signal: int | None = None
        #: ``time.monotonic()`` of the first stop request, None before one.
        self.stopped_at: float | None = None
        self._signals = 0
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
        if self.stopped_at is None:
            self.stopped_at = time.monotonic()
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

    @contextlib.contextmanager
    def uncooperative(self) -> Iterator["RunControl"]:
        """While inside, a method that polls nothing runs (an exact DP): a signal raises
        KeyboardInterrupt there even when its caller cooperates (``auto``'s unbounded DP);
        and at once if a stop came before it began, since it would not see that one either."""
        if self._event.is_set():
            raise KeyboardInterrupt
        saved, self._cooperative = self._cooperative, 0
        try:
            yield self
        finally:
            self._cooperative = saved

    def _handler(self, signum, _frame) -> None:
        self._signals += 1
        self.request_stop(signum)
        if not self._cooperative or self._signals > 1:
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


def _raise_in(thread_id: int, exc: type[BaseException] | None) -> None:
    """Have ``exc`` raised in thread ``thread_id`` at its next bytecode (None: withdraw
    one not yet raised)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id),
                                               None if exc is None else ctypes.py_object(exc))


class _Watch:
    """The thread behind :func:`abandoning`."""

    def __init__(self, due: Callable[[], float], target: int) -> None:
        self.due, self.target = due, target
        self.lock = threading.Lock()
        self.armed = True
        self.fired_at: float | None = None
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True, name="twbn-abandon")

    def _watch(self) -> None:
        while not self.done.wait(0.05):
            now = time.monotonic()
            # once fired, again every second: a method may catch one with a bare except
            if now >= self.due() and (self.fired_at is None or now >= self.fired_at + 1.0):
                with self.lock:
                    if not self.armed:
                        return
                    _raise_in(self.target, MethodOverran)
                    self.fired_at = now

    def disarm(self) -> None:
        with self.lock:
            if self.armed:
                self.armed = False
                if self.fired_at is not None:
                    _raise_in(self.target, None)
        self.done.set()


@contextlib.contextmanager
def abandoning(deadline: float | None, control: "RunControl | None" = None, *,
               grace: float) -> Iterator[_Watch]:
    """Raise :class:`MethodOverran` in this thread once ``grace`` seconds have passed
    since ``deadline`` (a ``time.monotonic()``; None: none) or since ``control``'s stop
    request, whichever is first; never after the block is left. The caller catches
    MethodOverran around the block; ``watch.fired_at`` says whether it fired.

    Examples
    --------
    >>> import time
    >>> try:
    ...     with abandoning(time.monotonic(), grace=0.1):
    ...         while True:
    ...             pass
    ... except MethodOverran:
    ...     print("abandoned")
    abandoned
    """
    def due() -> float:
        at = math.inf if deadline is None else deadline + grace
        if control is not None and control.stopped_at is not None:
            at = min(at, control.stopped_at + grace)
        return at

    watch = _Watch(due, threading.get_ident())
    watch.thread.start()
    try:
        yield watch
    finally:
        # MethodOverran may arrive inside disarm itself, before it holds the lock
        while True:
            try:
                watch.disarm()
                break
            except MethodOverran:
                continue


@contextlib.contextmanager
def hearing_signals(hook: Callable[[], None]) -> Iterator[None]:
    """Call ``hook`` from a thread as soon as a signal arrives while inside, for an engine
    that runs in one long call of compiled code (HiGHS's presolve and root LP): Python's
    own handler runs only once that call returns to the interpreter. The handler still
    runs then, as usual. A no-op outside the main thread.

    Examples
    --------
    >>> heard = []
    >>> with hearing_signals(lambda: heard.append(1)):
    ...     pass
    >>> heard
    []
    """
    import socket

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    read, write = socket.socketpair()
    write.setblocking(False)
    try:
        previous = signal.set_wakeup_fd(write.fileno(), warn_on_full_buffer=False)
    except ValueError:
        read.close(), write.close()
        yield
        return

    def listen() -> None:
        try:
            while read.recv(64):
                hook()
        except OSError:  # closed on leaving
            pass

    thread = threading.Thread(target=listen, daemon=True, name="twbn-signals")
    thread.start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous)
        write.close()
        read.shutdown(socket.SHUT_RDWR)
        read.close()


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


def return_large_frees(threshold: int = 1 << 20) -> None:
    """Have glibc serve every allocation of at least ``threshold`` bytes by a mapping of its
    own, given back to the system when freed; for a command's own process, once, at its
    start (it sets the process's allocator: a library call leaves it alone). A no-op where
    the C library has no ``mallopt``.

    glibc's default raises that threshold, up to 32 MB, each time a large block is freed;
    after that, the cluster LP's arrays over a 2.7 M-family table (22 MB each, several a
    round) and its rows' family lists come from the heap, which cannot shrink below a live
    block. plants k = 5 from data at 250 s (triples scored) peaked at 2,095 MB that way and
    at 1,283 MB with this, the same LP rounds (notebook/auto.md, 2026-12-04, evening).

    Parameters
    ----------
    threshold : int, default 1 MiB
        The smallest allocation, in bytes, given a mapping of its own.

    Examples
    --------
    >>> return_large_frees()  # what ``twbn``'s commands do first
    """
    try:
        ctypes.CDLL(None).mallopt(-3, int(threshold))  # M_MMAP_THRESHOLD; fixed, no longer raised
    except (OSError, AttributeError):
        return


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


def uncooperative(control: "RunControl | None"):
    """``control.uncooperative()``, or a no-op context when there is no control."""
    return control.uncooperative() if control is not None else contextlib.nullcontext()


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
