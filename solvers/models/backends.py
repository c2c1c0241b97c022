"""MIP engines behind one call: solve an LP file, with a time limit, a MIP start and a
trajectory of (time, incumbent, bound), and return the best solution with a proven bound.

A formulation is built once with pyomo and written as an LP file with symbolic names;
each engine reads that file with its own API, which is what gives access to its
callbacks (pyomo's own solver plugins do not expose them):
- ``highs``: highspy; callbacks on improving solutions and on interrupts record the
  trajectory; the start is passed with ``setSolution``.
- ``scip``: PySCIPOpt; an event handler on best-solution and node events records it;
  the start is added with ``addSol``.
- ``cbc``: python-mip, an optional extra (its CBC binaries weigh ~600 MB); only the final
  point is recorded.
With a RunControl (solvers/control.py), HiGHS and SCIP report each point to it and stop
at its request (HiGHS's user interrupt, SCIP's ``interruptSolve``) with their best
solution; CBC cannot be stopped from outside and is not cooperative.
All objectives here are maximised: the bound is an upper bound.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from dataclasses import dataclass, field

from twbn.scoring.errors import TwbnError

__all__ = ["BackendUnavailable", "MipOutcome", "solve_lp_file", "scip_model", "scip_interrupt",
           "quiet_highs", "record_scip_trajectory", "root_bound"]

BACKENDS = ("highs", "scip", "cbc")


class BackendUnavailable(TwbnError, ValueError):
    """The requested engine is not installed; the message names the package.

    Every engine twbn offers is a dependency, so this is met only where one was removed;
    like every user error it is a :class:`~twbn.TwbnError` and a ValueError.

    Examples
    --------
    >>> import twbn
    >>> issubclass(twbn.BackendUnavailable, twbn.TwbnError), issubclass(twbn.BackendUnavailable, ValueError)
    (True, True)
    """


@dataclass
class MipOutcome:
    status: str  # optimal | feasible | infeasible | unknown
    values: dict[str, float] | None
    objective: float | None
    bound: float | None
    trajectory: list[dict] = field(default_factory=list)
    stats: dict = field(default_factory=dict)


def _left(time_limit: float, t0: float) -> float:
    """What is left of ``time_limit`` seconds counted from ``t0`` (at least 0.1 s)."""
    return max(0.1, float(time_limit) - (time.monotonic() - t0))


def _finite(x) -> float | None:
    return float(x) if x is not None and math.isfinite(x) and abs(x) < 1e29 else None


def solve_lp_file(
    path: str,
    backend: str = "highs",
    *,
    time_limit: float | None = None,
    seed: int | None = None,
    start: dict[str, float] | None = None,
    threads: int | None = None,
    control=None,
) -> MipOutcome:
    if backend == "highs":
        return _highs(path, time_limit, seed, start, threads, control)
    if backend == "scip":
        return _scip(path, time_limit, seed, start, threads, control)
    if backend == "cbc":
        return _cbc(path, time_limit, seed, start, threads)
    raise BackendUnavailable(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")


_STDOUT_LOCK = threading.Lock()


def scip_model(*, quiet: bool = True):
    """A new ``pyscipopt.Model`` as every SCIP model twbn makes must be: SCIP does not take
    SIGINT (``misc/catchctrlc`` off). SCIP's own handler, installed while any model with it
    on solves, takes a Ctrl-C meant for twbn without calling Python's: the run never hears
    it. A cluster-separation sub-IP of improve's pieces did so, and a SIGINT during it was
    lost (the command ran to its limit and exited 0). Python's handler runs when SCIP next
    calls back or returns; a method's hook (:func:`scip_interrupt`) stops the model."""
    import pyscipopt

    m = pyscipopt.Model()
    m.setParam("misc/catchctrlc", False)
    if quiet:
        m.hideOutput()
    return m


def scip_interrupt(model):
    """A stop hook for a SCIP model: ``interruptSolve`` where SCIP takes it. In some stages
    (presolving, "init solve") SCIP refuses the call with an exception, which, raised from
    the signal handler inside a SCIP callback, left SCIP unable to free the model and the
    command exiting 1 (improve at n = 300, SIGINT 16 s in); then the request stays on the
    RunControl, where the methods' own loops see it after the call."""

    from pyscipopt import SCIP_STAGE

    def hook() -> None:
        if model.getStage() == SCIP_STAGE.INITSOLVE:  # refused there, with an error on stderr
            return
        try:
            model.interruptSolve()
        except Exception:  # noqa: BLE001 - pyscipopt raises a bare Exception for a refused call
            pass

    return hook


def quiet_highs():
    """A ``highspy.Highs`` with its output off, made without a word on stdout: highspy
    1.16 prints its banner from the constructor, before ``output_flag`` can be set, and
    that line would land in ``twbn learn -q`` output and in the Python API's stdout. The
    process's file descriptor 1 points at /dev/null while the object is made."""
    import contextlib
    import os
    import sys

    import highspy

    with _STDOUT_LOCK:
        sys.stdout.flush()
        saved = os.dup(1)
        try:
            with open(os.devnull, "wb") as null:
                os.dup2(null.fileno(), 1)
            h = highspy.Highs()
            h.setOptionValue("output_flag", False)
        finally:
            os.dup2(saved, 1)
            os.close(saved)
    return h


def _highs(path, time_limit, seed, start, threads, control=None) -> MipOutcome:
    from twbn.solvers.control import cooperating, hearing_signals

    try:
        import highspy
    except ImportError:
        raise BackendUnavailable("backend 'highs' needs highspy (pip install highspy)") from None
    t0 = time.monotonic()
    h = quiet_highs()
    h.readModel(path)
    if time_limit is not None:  # reading a large file is not in HiGHS's clock; it is in ours
        h.setOptionValue("time_limit", _left(time_limit, t0))
    h.setOptionValue("mip_rel_gap", 1e-9)
    h.setOptionValue("mip_abs_gap", 1e-7)
    if seed is not None:
        h.setOptionValue("random_seed", int(seed) % 2**31)
    if threads:
        h.setOptionValue("threads", int(threads))
    names = list(h.getLp().col_names_)
    traj: list[dict] = []
    last = [0.0]

    def record(t, inc, bd):
        traj.append({"time": round(float(t), 4), "incumbent": _finite(inc), "bound": _finite(bd)})
        if control is not None:
            control.report(incumbent=traj[-1]["incumbent"], bound=traj[-1]["bound"])

    def on_improving(e):
        d = e.data_out
        record(d.running_time, d.objective_function_value, d.mip_dual_bound)

    def on_interrupt(e):
        d = e.data_out
        if d.running_time - last[0] >= 0.5:
            last[0] = d.running_time
            record(d.running_time, d.mip_primal_bound, d.mip_dual_bound)

    h.cbMipImprovingSolution.subscribe(on_improving)
    h.cbMipInterrupt.subscribe(on_interrupt)
    # the interrupt callbacks stop the solve after cancelSolve: at a stop request, and at
    # the time limit, which HiGHS alone overran by 6.7 s of 19 on plants k = 5
    h.HandleUserInterrupt = True
    timer = None
    if time_limit is not None:
        timer = threading.Timer(_left(time_limit, t0), h.cancelSolve)
        timer.daemon = True
    if start is not None:
        sol = highspy.HighsSolution()
        sol.col_value = [float(start.get(nm, 0.0)) for nm in names]
        sol.value_valid = True
        h.setSolution(sol)
    # a signal cancels at once, not only at HiGHS's next callback into Python (none
    # during presolve and the root LP: 5-6 s at audiology k = 3)
    with cooperating(control, h.cancelSolve), \
            hearing_signals(h.cancelSolve) if control is not None else contextlib.nullcontext():
        if control is None or not control.stop_requested():
            if timer is not None:
                timer.start()
            try:
                h.run()
            finally:
                if timer is not None:
                    timer.cancel()
    status = h.getModelStatus()
    info = h.getInfo()
    ms = highspy.HighsModelStatus
    has_sol = info.primal_solution_status == 2  # kSolutionStatusFeasible
    values = dict(zip(names, h.getSolution().col_value)) if has_sol else None
    objective = _finite(info.objective_function_value) if has_sol else None
    bound = _finite(info.mip_dual_bound)
    if status == ms.kOptimal:
        st = "optimal"
        bound = objective if bound is None else bound
    elif status == ms.kInfeasible:
        st = "infeasible"
    else:
        st = "feasible" if has_sol else "unknown"
    record(h.getRunTime(), objective, bound)
    stats = {"nodes": int(info.mip_node_count), "engine_status": h.modelStatusToString(status),
             "engine_gap": _finite(info.mip_gap)}
    return MipOutcome(st, values, objective, bound, traj, stats)


def record_scip_trajectory(m, on_point=None) -> list[dict]:
    """Attach an event handler to a pyscipopt Model that appends (time, incumbent, bound)
    on every new best solution and at most every 0.5 s of solved nodes; returns the list.
    ``on_point(incumbent, bound)`` hears each point as it comes (the live line)."""
    import pyscipopt

    traj: list[dict] = []

    class Trajectory(pyscipopt.Eventhdlr):
        last = -1.0

        def eventinit(self):
            self.model.catchEvent(pyscipopt.SCIP_EVENTTYPE.BESTSOLFOUND, self)
            self.model.catchEvent(pyscipopt.SCIP_EVENTTYPE.NODESOLVED, self)

        def eventexit(self):
            self.model.dropEvent(pyscipopt.SCIP_EVENTTYPE.BESTSOLFOUND, self)
            self.model.dropEvent(pyscipopt.SCIP_EVENTTYPE.NODESOLVED, self)

        def eventexec(self, event):
            t = self.model.getSolvingTime()
            if event.getType() == pyscipopt.SCIP_EVENTTYPE.NODESOLVED and t - self.last < 0.5:
                return
            self.last = t
            inc = self.model.getPrimalbound() if self.model.getNSols() else None
            traj.append({"time": round(t, 4), "incumbent": _finite(inc), "bound": _finite(self.model.getDualbound())})
            if on_point is not None:
                on_point(traj[-1]["incumbent"], traj[-1]["bound"])

    m.includeEventhdlr(Trajectory(), "twbn_trajectory", "records incumbent and bound over time")
    return traj


def root_bound(m) -> float | None:
    """SCIP's dual bound at the end of the root node; when the root closed the problem
    SCIP reports no root bound, and the final bound is the root's."""
    rb = _finite(m.getDualboundRoot())
    if rb is not None and abs(rb) >= 1e19:  # SCIP's "infinity" when no root bound is stored
        rb = None
    if rb is None and m.getNNodes() <= 1:
        rb = _finite(m.getDualbound())
    return rb


def _scip(path, time_limit, seed, start, threads, control=None) -> MipOutcome:
    from twbn.solvers.control import cooperating

    try:
        import pyscipopt
    except ImportError:
        raise BackendUnavailable("backend 'scip' needs PySCIPOpt (pip install pyscipopt)") from None
    t0 = time.monotonic()
    m = scip_model()
    m.readProblem(path)
    if time_limit is not None:
        m.setParam("limits/time", _left(time_limit, t0))
    if seed is not None:
        m.setParam("randomization/randomseedshift", int(seed) % 2**31)
    traj = record_scip_trajectory(m, None if control is None else
                                  lambda inc, bound: control.report(incumbent=inc, bound=bound))
    if start is not None:
        sol = m.createSol()
        for var in m.getVars():
            m.setSolVal(sol, var, float(start.get(var.name, 0.0)))
        m.addSol(sol, free=True)
    with cooperating(control, scip_interrupt(m)):
        if control is not None and control.stop_requested():
            # stopped before solving: SCIP's statistics of an unsolved model are an error
            # (a crash of pyscipopt), so nothing is asked of it
            return MipOutcome("unknown", None, None, None, traj, {"engine_status": "not started"})
        m.optimize()
    status = m.getStatus()
    has_sol = m.getNSols() > 0
    values = None
    objective = None
    if has_sol:
        best = m.getBestSol()
        values = {var.name: m.getSolVal(best, var) for var in m.getVars()}
        objective = _finite(m.getSolObjVal(best))
    bound = _finite(m.getDualbound())
    st = {"optimal": "optimal", "infeasible": "infeasible"}.get(status, "feasible" if has_sol else "unknown")
    traj.append({"time": round(m.getSolvingTime(), 4), "incumbent": objective, "bound": bound})
    stats = {"nodes": int(m.getNNodes()), "engine_status": status, "root_bound": root_bound(m)}
    return MipOutcome(st, values, objective, bound, traj, stats)


def _cbc(path, time_limit, seed, start, threads) -> MipOutcome:
    try:
        import mip
    except ImportError:
        raise BackendUnavailable("backend 'cbc' needs python-mip with CBC (pip install 'twbn[cbc]')") from None
    t0 = time.monotonic()
    m = mip.Model(solver_name=mip.CBC)
    m.verbose = 0
    m.read(path)
    # CBC stops at a relative gap of 1e-4 by default and still says OPTIMAL; as for HiGHS
    m.max_mip_gap = 1e-9
    m.max_mip_gap_abs = 1e-7
    if seed is not None:
        m.seed = int(seed)
    if threads:
        m.threads = int(threads)
    if start is not None:
        m.start = [(v, float(start.get(v.name, 0.0))) for v in m.vars]
    st = m.optimize(max_seconds=_left(time_limit, t0) if time_limit is not None else mip.INF)
    has_sol = m.num_solutions > 0
    values = {v.name: v.x for v in m.vars} if has_sol else None
    objective = _finite(m.objective_value) if has_sol else None
    bound = _finite(m.objective_bound)
    status = {mip.OptimizationStatus.OPTIMAL: "optimal", mip.OptimizationStatus.INFEASIBLE: "infeasible"}.get(
        st, "feasible" if has_sol else "unknown")
    traj = [{"time": round(time.monotonic() - t0, 4), "incumbent": objective, "bound": bound}]
    return MipOutcome(status, values, objective, bound, traj, {"engine_status": str(st)})
