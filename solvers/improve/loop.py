"""``improve``: the loop that cuts pieces, solves them exactly and glues in those that
gain, in this process or beside worker processes, until the time, the pieces or a stall
end it."""

from __future__ import annotations

import time

from twbn.formulations.problem import Problem
from twbn.formulations.solution import SolverResult
from twbn.solvers.policy import DEFAULT_POLICY, Policy
from twbn.solvers.control import RunControl
from twbn.solvers.method_options import ImproveOptions
from twbn.solvers.improve.parallel import in_parallel
from twbn.solvers.improve.pieces import solve_piece
from twbn.solvers.improve.search import Search, over
from twbn.scoring.errors import ParameterError

__all__ = ["improve"]


def improve(
    problem: Problem,
    start: SolverResult,
    options: ImproveOptions | None = None,
    *,
    time_limit: float | None,
    seed: int | None = None,
    control: RunControl | None = None,
    jobs: int = 1,
    scheduler: str | None = None,
    joining: tuple[float, int] | None = None,
    stop_when_stalled: bool = False,
    policy: Policy = DEFAULT_POLICY,
) -> SolverResult:
    """Improve ``start`` by re-solving pieces of it exactly (module docstring) until
    ``time_limit`` seconds have passed or ``options.max_pieces`` pieces were tried (or,
    with ``stop_when_stalled``, the search stalled).

    Parameters
    ----------
    problem : Problem
        Bounded or not. Unbounded, a piece is a neighbourhood in the moral graph, its
        boundary its moral neighbours, and only the ancestry rows bind.
    start : SolverResult
        A certified network of ``problem`` with its elimination order.
    options : ImproveOptions, optional
        ``piece_time_limit`` (seconds one sub-problem may take at first; doubled each
        time the search is stuck, up to ``max_piece_time_limit``), ``start_size`` (free
        variables in the first piece, adapted afterwards), ``max_pieces`` (stop after this
        many sub-problems); the defaults when None.
    time_limit : float or None
        Seconds for the whole search, sub-problems' model building included; None: until
        ``max_pieces`` or a stop request.
    seed : int, optional
        Seeds the choice of pieces and SCIP. With ``jobs`` = 1 the same seed and the same
        number of pieces give the same network.
    control : RunControl, optional
        Stop requests and progress.
    jobs : int, default 1
        Processes solving pieces at once. With ``jobs`` >= 2 this process cuts pieces
        that share no variable and glues each in as it returns (module docstring, "In
        parallel"); which pieces gain then depends on timing, so runs are not repeatable.
    scheduler : str, optional
        A Dask scheduler's address (``tcp://host:8786``): the pieces, ``jobs`` at a time,
        are solved by its workers (which need twbn installed) instead of local processes.
        A cluster that cannot be reached or whose workers fail leaves the pieces to this
        process (``stats["workers_failed"]`` says why).
    joining : (float, int), optional
        ``(when, extra)``: from ``time.monotonic()`` ``when`` on, ``extra`` more processes
        solve pieces (the job the LP's bound had beside it comes back, registry.solve);
        ignored with a ``scheduler``. ``stats["joined"]`` says when they joined.
    policy : Policy, optional
        Its knobs (``stuck_pieces``, ``stall_pieces``, ``ktree_*``, piece sizes, ...);
        default: the measured ones.
    stop_when_stalled : bool, default False
        Return once ``policy.stall_pieces`` pieces in a row at the largest piece time limit (or
        k-tree pieces, once k-trees took over) gained nothing (``stats["stalled"]``: seconds
        into the search, recorded either way).

    Returns
    -------
    SolverResult
        Never worse than ``start``. Status ``feasible`` (the registry adds the bound), or
        ``optimal`` when a piece held every variable and was solved to optimality.
        ``stats`` counts pieces, improvements, rejected glue-ups (``stale``: pieces solved
        in parallel that a piece glued in meanwhile overlapped), the last piece size and,
        once it grew, the last piece time limit (``piece_time_limit``).

    Raises
    ------
    ParameterError
        Without a start network with its elimination order, or ``jobs`` < 1.

    Examples
    --------
    >>> from twbn.formulations.problem import Problem
    >>> from twbn.formulations.solution import make_solution
    >>> from twbn.solvers.method_options import ImproveOptions
    >>> from twbn.scoring.cache import ScoreCache
    >>> cache = ScoreCache.from_mapping("ABC", [{(): -5.0, (1,): -1.0}, {(): -5.0}, {(): -5.0, (0,): -4.0}])
    >>> problem = Problem(cache, 1)
    >>> empty = make_solution(problem, [(), (), ()], bound=None, status="feasible", method="start")
    >>> improve(problem, empty, ImproveOptions(max_pieces=3), time_limit=None, seed=0).score
    -10.0
    """
    if start.parents is None or start.elimination_order is None:
        raise ParameterError("improve needs a start network with its elimination order")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ParameterError(f"jobs must be an integer >= 1, got {jobs!r}")
    options = options or ImproveOptions()
    search = Search(problem, start, options, seed, control, stop_when_stalled, policy)
    deadline = None if time_limit is None else search.t0 + time_limit
    if scheduler is not None or (joining is not None and deadline is not None and joining[0] >= deadline - 0.2):
        joining = None
    joined = None
    if jobs >= 2 and problem.n > options.start_size:
        joined = in_parallel(search, deadline, jobs, scheduler, joining)
        joining = None  # joined there, or the workers failed: this process goes on alone
    while not search.proved and not over(search, deadline):
        if joining is not None and time.monotonic() >= joining[0] and problem.n > options.start_size:
            joined = {"seconds": round(time.monotonic() - search.t0, 2), "jobs": jobs + joining[1]}
            in_parallel(search, deadline, jobs + joining[1])
            joining = None
            continue
        piece = search.cut()
        found, took, limit = solve_piece(piece.problem, piece.start, piece.fixed, piece.ancestry,
                                          search.piece_deadline(deadline), search.piece_limit,
                                          search.rng.randrange(2**31), control, policy)
        search.take(piece, found, took, limit)
    sol = search.result(start, seed, time_limit, jobs)
    if joined is not None:
        sol.stats["joined"] = joined
    if scheduler is not None:
        sol.stats["scheduler"] = scheduler
    return sol
