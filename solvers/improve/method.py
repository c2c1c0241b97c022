"""``improve`` as a method: its k-MAX start, the search, and the restarts from other start
networks once a search stalls, the best of all kept."""

from __future__ import annotations

import time

from twbn.formulations.problem import Problem
from twbn.formulations.solution import SolverResult, make_solution
from twbn.solvers.budget import Budget
from twbn.solvers.method import Method
from twbn.solvers.method_options import ImproveOptions
from twbn.solvers.parallel import Alone
from twbn.solvers.improve.loop import improve


def _start_network(problem: Problem, budget: Budget, seed: int | None, jobs: int, scheduler: str | None,
                   name: str, method: str = "kmax", at_most: float | None = None) -> tuple[SolverResult, dict]:
    """k-MAX's network (or ``method``'s: a restart's may be k-G's) on a stage of the
    policy's ``improve_start_share`` of ``budget`` (at most ``at_most`` seconds, default its
    ``start_max_s``), as ``--warm-start kmax`` would give; with jobs to spare, more runs
    (seeds ``seed`` + 1 …) beside it, the best kept. Without a bound (or k >= n - 1), the
    network at the policy's ``unbounded_start_k``,
    certified as one of the unbounded problem. Returns the start (its parents None if none
    was found) and what the runs reached."""
    void = problem.treewidth is None or problem.treewidth >= problem.n - 1  # binds nothing
    bounded = problem if not void else Problem(
        problem.cache, min(problem.n - 1, budget.policy.unbounded_start_k), problem.forbidden, problem.required)
    info: dict = {}
    at_most = budget.policy.start_max_s if at_most is None else at_most
    with budget.stage(name, budget.policy.improve_start_share, at_most=at_most) as stage:
        side = [Alone(bounded, method, stage, None if seed is None else seed + i)
                for i in range(1, jobs)] if jobs >= 2 and scheduler is None \
            and stage.left() > 2 * budget.policy.parallel_margin_s else []
        try:
            start = stage.solve(bounded, method, seed=seed, lp_bound=False)
        finally:
            others = [a.result(stage) for a in side]
        if side:  # what each k-MAX run beside this one reached (None: nothing in time)
            info = {"side_scores": [None if o is None or o.parents is None else o.score for o in others],
                    "own_score": start.score}
        for other in others:
            if other is not None and other.parents is not None and (start.parents is None
                                                                    or other.score > start.score):
                start = other
    if void and start.parents is not None:
        start = make_solution(problem, start.parents, bound=None, status="feasible", method=method,
                              order_hint=start.elimination_order)
    return start, info


__all__ = ["METHOD"]

#: Counts that add up over a method's searches (its first and its restarts).
_SUMMED = ("pieces", "improvements", "rejected", "timed_out", "sub_seconds", "moral_pieces", "moral_gains",
           "too_wide", "stale", "redrawn")


def _run(problem: Problem, options: ImproveOptions, budget: Budget, *, seed: int | None,
         start: SolverResult | None, jobs: int = 1, scheduler: str | None = None) -> SolverResult:
    """``improve`` as a method: from ``start``, or else from k-MAX's network (``_start_network``);
    once the search stalls with the policy's ``restart_min_s`` left, again from another k-MAX network
    (``options.restarts``, with a time limit and no ``max_pieces``), the best kept; once
    k-MAX gives a network already searched from, from k-G's networks instead."""
    if problem.n <= 1:
        return budget.solve(problem, "dp")
    used, label, info = 0.0, None, {}
    if start is None:
        t0 = time.monotonic()
        start, info = _start_network(problem, budget, seed, jobs, scheduler, "k-MAX start")
        if start.parents is None:
            return start
        used, label = time.monotonic() - t0, ("kmax", start.score)
    restarts = options.restarts and budget.deadline is not None and options.max_pieces is None
    began = time.monotonic()
    policy = budget.policy
    sol = improve(problem, start, options,
                  time_limit=policy.min_engine_s if budget.stop_requested() else budget.limit(),
                  seed=seed, control=budget.control, jobs=jobs, scheduler=scheduler, joining=budget.joining,
                  stop_when_stalled=restarts, policy=policy)
    best, runs, trajectory, searches, first_score = sol, [], list(sol.trajectory), [sol.stats], sol.score
    searched, start_method, repeated = {tuple(start.parents)}, "kmax", 0
    while sol.stats.get("ended_stalled") and not budget.expired():
        # another start network (seeds apart from the first start's side runs), searched anew
        r = len(runs) + repeated + 1
        r_seed = None if seed is None else seed + 1000 * r
        stage = {"kmax": "k-MAX", "kg": "k-G"}[start_method] + f" restart {r}"
        other, _ = _start_network(problem, budget, r_seed, jobs, scheduler, stage, start_method,
                                  at_most=policy.restart_start_max_s)
        if other.parents is None or budget.expired():
            break
        if tuple(other.parents) in searched and start_method == "kmax":
            # k-MAX's best of its random first cliques is the same network whatever the
            # seed where it samples them all (plants, n = 69: seeds 1, 1001, 2001, 3001):
            # the next starts are k-G's, whose random orders differ
            repeated, start_method = repeated + 1, "kg"
            continue
        searched.add(tuple(other.parents))
        offset = time.monotonic() - began
        sol = improve(problem, other, options, time_limit=budget.limit(), seed=r_seed, control=budget.control,
                      jobs=jobs, scheduler=scheduler, joining=budget.joining, stop_when_stalled=True, policy=policy)
        searches.append(sol.stats)
        runs.append({"at": round(offset, 2), "from": start_method, "start": other.score, "score": sol.score,
                     "pieces": sol.stats["pieces"], "improvements": sol.stats["improvements"]})
        for point in sol.trajectory:  # the best network over the method's clock
            if point["incumbent"] > trajectory[-1]["incumbent"]:
                trajectory.append({**point, "time": round(point["time"] + offset, 4)})
        if sol.score > best.score:
            best = sol
    if runs:
        for key in _SUMMED:  # the counts over every search; the rest are the best one's
            total = sum(st.get(key) or 0 for st in searches)
            if total or key in best.stats:
                best.stats[key] = round(total, 2) if isinstance(total, float) else total
        best.stats["restarts"] = runs
        best.stats["first_score"] = first_score  # where the first search stalled
    if repeated:
        best.stats["repeated_starts"] = repeated  # k-MAX restarts not searched: the network of an earlier one
    best.trajectory = trajectory
    best.stats.pop("ended_stalled", None)  # the signal to restart, not part of the result
    if label is not None:
        best.stats["warm_start"] = {"from": label[0], "score": label[1], "seconds": round(used, 4), **info}
    return best


#: Exact-neighbourhood improvement as the registry lists it.
METHOD = Method("improve", _run, options=ImproveOptions,
                summary="exact-neighbourhood improvement: pieces of a start network re-solved by the cluster-cut "
                        "ILP, the rest held (k-MAX start unless one is given)",
                warm_start=True, seeded=True, parallel=True, distributed=True)
