"""``method="auto"``: which method to run on a problem, by its size, with the reason.

The rule comes from this project's measurements (docs/auto.md has the tables):

1. **Exact where it is fast.** At k ≤ 1 ``dp`` solves a maximum branching (Edmonds),
   polynomial at any n. Unbounded, the Silander–Myllymäki DP is O(n·2^n):
   0.6 s at n = 20, 3–4 s at n = 22 and 19 s at n = 24 (mushroom, wdbc). Under a bound
   k, the Korhonen–Parviainen DP grows about 3.5× per variable and faster with k:
   ≤ 10 s for k ≤ 2 up to n = 14, and for k = 3 up to n = 12
   (benchmarks/results/dp.md).
2. **The cluster-cut ILP warm-started by k-G in the middle** (n ≤ 40 bounded; above the
   DP up to n = 40 unbounded): it proves optima the DP cannot reach (letter, wdbc k = 6,
   mushroom unbounded) and otherwise reports a certified gap; its LP no longer finishes
   its root in a minute at n = 64 under a bound. From data it starts from localsearch's
   network instead, whose families (scored from the data) k-G's cache may lack.
3. **Exact-neighbourhood improvement of a local-search start above that** (``improve``,
   solvers/improve/): at n = 64–100 a 20% k-G start left the whole-model `cuts`
   behind k-G run alone (kdd k = 2: −443,310 against −442,805 in 60 s); on the four
   anchor caches (n = 69–1,041, k = 2, 5, 8, 60 s) k-MAX beat k-G in all 12 cells, and
   re-solving pieces of k-MAX's network exactly beat k-MAX alone
   (benchmarks/results/field.md). Unbounded above n = 40 the same, from a
   k-MAX network at k = 8. Under a bound the start is ``localsearch``'s (iterated hill
   climbing over DAGs, after ETL) from k = ``localsearch_start_min_k`` up to n =
   ``localsearch_max_n`` (k-MAX's above: at n = 1,041 the climb is far from done in
   its share), from data at every n (``data_localsearch_max_n``, 0: ahead in 29 of 30 cells of
   the suite's sets of n = 135-1,556); from data at
   k >= ``localsearch_alone_min_k`` ``localsearch`` runs alone, scoring families from the
   data: from the localsearch start ``improve`` added nothing at k = 5 and 8 in 6 of 6
   DEBD cells at 60 s (its pieces choose among cached families, and most of the network's
   are not), and +563 to +2,103 at k = 2 (benchmarks/results/field-data-10-60.md).

The thresholds and shares are the budget's :class:`~twbn.solvers.policy.Policy`'s
(``cuts_max_n``, ``dp_unbounded_max_n``, ``dp_safety``, ``unbounded_bound_share``, ...).
A user who names a method gets that method; ``auto`` is a method itself (``METHOD``):
it chooses, says why (one line on the ``twbn`` logger, and ``stats["auto"]``), and
delegates. Under a bound at n ≤ 40 it first solves the problem without the treewidth
bound but with at most k parents a variable (a family of a network of width ≤ k is a
clique of at most k + 1 variables): exactly by the DP at n ≤ 22, by ``cuts`` in a quarter
of the budget above (wdbc, n = 31: 8 s). That optimum bounds every bounded network, and is
the bounded optimum when its width fits.
When it does not fit, the bound is there already and ``cuts`` starts from ``improve``'s
network (``improve_share``; improving a given start, such as a sweep's network from a
smaller bound, else k-MAX's) instead of k-G's: at mushroom (k = 3–5) ``cuts`` left its
k-G start unimproved and ended below k-G alone; from ``improve`` it ended above both
heuristics (docs/auto.md, section 6).
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

from twbn.formulations.problem import InfeasibleError, Problem
from twbn.formulations.solution import SolverResult, make_solution
from twbn.solvers.bounds import call_optimal_at_bound, covers_every_family
from twbn.solvers.budget import Budget
from twbn.solvers.control import cooperating
from twbn.solvers.method import MethodUnavailable
from twbn.solvers.warm_start import infeasibility, warm_start_solution
from twbn.solvers.method import Method
from twbn.solvers.parallel import Alone
from twbn.solvers.policy import DEFAULT_POLICY, Policy

__all__ = ["Choice", "choose_method", "dp_seconds", "METHOD"]

LOG = logging.getLogger("twbn")

#: The DP's expected seconds, fitted to benchmarks/results/dp.md (housing):
#: (seconds at n0, n0, growth per variable). Bounded: 9.65 s at n = 14, k = 2 (×3.4 per
#: variable from n = 12 to 14); 10.65 s at n = 12, k = 3 (×3.5). Unbounded: O(n·2^n),
#: 3–4 s at n = 22.
DP_SECONDS = {2: (9.65, 14, 3.4), 3: (10.65, 12, 3.5), None: (4.0, 22, 2.0)}
def dp_seconds(n: int, k: int | None) -> float:
    """The exact DP's expected seconds at ``n`` variables and bound ``k`` (None: unbounded),
    from the measured fit ``DP_SECONDS``; 0 at k <= 1, where it solves a maximum branching."""
    if k is not None and k <= 1:
        return 0.0
    at, n0, growth = DP_SECONDS.get(k, DP_SECONDS[3])
    try:
        return at * growth ** (n - n0)
    except OverflowError:  # thousands of variables: beyond any budget
        return math.inf


@dataclass(frozen=True)
class Choice:
    """What ``auto`` runs: a method, an optional warm-start method, and why."""

    method: str
    warm_start: str | None
    reason: str
    options: dict | None = None  #: the method's options, where they differ from its defaults

    def describe(self) -> str:
        """One line: ``auto: cuts warm-started by kg (n = 17, k = 2: ...)``."""
        how = self.method + (f" warm-started by {self.warm_start}" if self.warm_start else "")
        return f"auto: {how} ({self.reason})"


def choose_method(problem: Problem, time_limit: float | None = None, policy: Policy = DEFAULT_POLICY) -> Choice:
    """The method ``auto`` runs on ``problem``, by n, k and the budget.

    The exact DP is chosen only where it is expected to finish within ``time_limit``
    (``dp_seconds`` with a margin of ``policy.dp_safety``); with less time an anytime method that
    returns its best network at the limit runs instead (the cluster-cut ILP from k-G).

    Parameters
    ----------
    problem : Problem
        The cache and treewidth bound (None for unbounded).
    time_limit : float, optional
        The caller's budget in seconds; None: no limit.
    policy : Policy, optional
        The thresholds (``dp_unbounded_max_n``, ``dp_bounded_max_n_k2``/``_k3``,
        ``cuts_max_n``, ``dp_safety``); default: the measured ones.

    Returns
    -------
    Choice
        The method name, the warm-start method (or None) and a one-line reason.

    Examples
    --------
    >>> from twbn.scoring.cache import ScoreCache
    >>> cache = ScoreCache.from_mapping("ABCDE", [{(): -1.0}] * 5)
    >>> choose_method(Problem(cache, 2)).describe()
    'auto: dp (n = 5, k = 2: the exact DP takes seconds up to n = 14 at this k)'
    >>> choose_method(Problem(cache)).method
    'dp'
    >>> choose_method(Problem(ScoreCache.from_mapping("ABCDEFGHIJKLMN", [{(): -1.0}] * 14), 2), 5).describe()
    'auto: cuts warm-started by kg (n = 14, k = 2: the exact DP needs about 10 s, more than the 5 s limit; the cluster-cut ILP returns its best network at the limit)'
    """
    n, k = problem.n, problem.treewidth
    if k is not None and k >= n - 1:
        k = None  # every network on n variables has treewidth <= n - 1
    where = f"n = {n}, " + ("unbounded" if k is None else f"k = {k}")
    too_slow = None
    if time_limit is not None and (k is None or k >= 2):
        expect = dp_seconds(n, k)
        if expect * policy.dp_safety > time_limit:
            too_slow = (f"{where}: the exact DP needs about {expect:.0f} s, more than the {time_limit:g} s limit; "
                        "the cluster-cut ILP returns its best network at the limit")
    if k is None:
        if n <= policy.dp_unbounded_max_n and too_slow is None:
            return Choice("dp", None, f"{where}: the exact DP takes seconds up to n = {policy.dp_unbounded_max_n}")
        if n <= policy.dp_unbounded_max_n:
            # unbounded, the cluster-cut ILP has no start to begin from (mushroom, 3 s:
            # −54,345 against improve's −45,565 from k-MAX; the optimum −45,563)
            return Choice("improve", None, too_slow.replace("the cluster-cut ILP returns its best network at the "
                                                            "limit", "a k-MAX network (k = 8) improved piece by "
                                                            "piece returns its best at the limit"))
        if n <= policy.cuts_max_n:
            return Choice("cuts", "kg" if problem.treewidth is not None else None,
                          f"{where}: beyond the DP (n > {policy.dp_unbounded_max_n}), the cluster-cut ILP proves "
                          "optima or reports its gap")
        return Choice("improve", None, f"{where}: above n = {policy.cuts_max_n} the cluster-cut ILP's root LP "
                                       "does not finish; a k-MAX network (k = 8) improved piece by piece, each "
                                       "piece solved exactly by that ILP, with the cluster LP's bound")
    dp_max = policy.dp_bounded_max_n(k)
    if k == 0:  # width 0: no arc at all, every variable alone
        return Choice("dp", None, f"{where}: no arcs (width 0), each variable's score without parents is the optimum")
    if k <= 1:
        return Choice("dp", None, f"{where}: at most one parent each, a maximum branching solves it exactly")
    if dp_max is not None and n <= dp_max:
        if too_slow is not None:
            return Choice("cuts", "kg", too_slow)
        return Choice("dp", None, f"{where}: the exact DP takes seconds up to n = {dp_max} at this k")
    if n <= policy.cuts_max_n and problem.scorer is not None and k >= policy.data_cuts_localsearch_min_k:
        return Choice("cuts", "localsearch",
                      f"{where}, from data: too large for the exact DP, small enough for the cluster-cut ILP "
                      f"(n <= {policy.cuts_max_n}), which reports a certified gap; it starts from localsearch's "
                      "network (hill climbing over DAGs, families scored from the data as it reaches them), whose "
                      "families it adds to the cache's")
    if n <= policy.cuts_max_n:
        return Choice("cuts", "kg", f"{where}: too large for the exact DP, small enough for the cluster-cut ILP "
                                    f"(n <= {policy.cuts_max_n}), which reports a certified gap")
    # from data the suite measured localsearch ahead at every n, 135-1,556 (data_localsearch_max_n)
    if problem.scorer is not None:
        searchable = policy.data_localsearch_max_n == 0 or n <= policy.data_localsearch_max_n
    else:
        searchable = n <= policy.localsearch_max_n
    if searchable and problem.scorer is not None and k >= policy.localsearch_alone_min_k:
        return Choice("localsearch", None,
                      f"{where}, from data: localsearch (hill climbing over DAGs, families scored from the data as "
                      "it reaches them), for all but the cluster LP bound's share; improve's exact pieces, over a "
                      "cache without most of its families, added nothing to its network at k = 5 and 8")
    if searchable and k >= policy.localsearch_start_min_k:
        return Choice("improve", "localsearch",
                      f"{where}: above n = {policy.cuts_max_n} the cluster-cut ILP does not finish its root LP in a "
                      "minute; localsearch's network (hill climbing over DAGs, families scored from the data where "
                      "learning from data) improved piece by piece, each piece solved exactly by that ILP")
    return Choice("improve", "kmax", f"{where}: above n = {policy.cuts_max_n} the cluster-cut ILP does not finish "
                                     "its root LP in a minute; k-MAX's network improved piece by piece, each piece "
                                     "solved exactly by that ILP")




def unbounded_optimum_bound(problem: Problem, budget: Budget, seed: int | None = None) -> SolverResult | None:
    """The optimum without the treewidth bound but with at most k parents a variable: by
    the exact DP at n <= 22, where it is expected to take at most
    the policy's ``unbounded_bound_share`` of the budget, and by the cluster-cut ILP (``cuts``,
    unbounded) in that share at 22 < n <= 40. A network of width <= k has no family of
    more than k parents (a family is a clique of the moral graph, of at most k + 1
    variables), so it is one of those networks and this optimum bounds the bounded one
    from above; where its own network has width <= k it is the bounded optimum. On
    mushroom (BDeu, 4 parents) the cluster LP left 17-22 % gaps at k >= 10 where the
    networks found were optimal, and at k = 3 the DP over every cached set left 3.4 %;
    at wdbc (n = 31) ``cuts`` proves it in 8 s (width 6), where ``cuts`` from k-G ended
    non-optimal at k = 6 and 8. Where ``cuts`` does not prove that optimum in its share,
    its bound still bounds the bounded problem, and the result (status ``feasible``) is
    returned for that bound. None where it would not fit, or proved nothing tighter than
    the sum of each variable's best score."""
    from twbn.solvers.bounds import trivial_bound

    policy = budget.policy
    if problem.treewidth is None or problem.treewidth >= problem.n - 1 or problem.n > policy.cuts_max_n:
        return None
    method = "dp" if problem.n <= policy.dp_unbounded_max_n else "cuts"
    if method == "dp" and dp_seconds(problem.n, None) * policy.dp_safety > policy.unbounded_bound_share * budget.left():
        return None
    if method == "cuts" and budget.seconds is None:
        return None  # no share of nothing: the bounded problem gets the caller's open budget
    try:  # candidates: the cached sets of at most k parents (and the background knowledge)
        relaxed = Problem(problem.candidates, None, problem.forbidden, problem.required)
    except InfeasibleError:
        return None
    if infeasibility(relaxed) is not None:
        return None
    with budget.stage(f"the optimum without the treewidth bound by {method} (a bound)",
                      policy.unbounded_bound_share) as stage:
        sol = stage.solve(relaxed, method, seed=seed if method == "cuts" else None, lp_bound=False)
    if sol.status == "optimal":
        return sol
    if sol.status == "feasible" and sol.bound is not None and sol.bound < trivial_bound(relaxed) - 1e-9:
        return sol
    return None


def _how(unbounded: SolverResult) -> str:
    if unbounded.status != "optimal":
        return "the cluster-cut ILP's bound, not proved optimal in its share"
    return "exact DP" if unbounded.method == "dp" else "the cluster-cut ILP, proved"


def tighten_with_unbounded(sol: SolverResult, unbounded: SolverResult) -> None:
    """Give ``sol`` the bound of the problem without the treewidth bound (its optimum, or
    the bound ``cuts`` proved on it) where it is tighter, and call a network that reaches
    it optimal."""
    if sol.status == "infeasible" or unbounded.bound is None:
        return
    if sol.bound is None or unbounded.bound < sol.bound:
        sol.bound = unbounded.bound if sol.score is None else max(unbounded.bound, sol.score)
        sol.stats["bound_source"] = ("the optimum without the treewidth bound, at most k parents a variable "
                                     f"({_how(unbounded)}): every network of width <= k is one of those")
        sol.trajectory.append({"time": sol.wall_time, "incumbent": sol.score, "bound": sol.bound})
    call_optimal_at_bound(sol)


def _better_start(problem: Problem, own: SolverResult, budget: Budget,
                  seed: int | None) -> tuple[SolverResult, dict | None]:
    """The better of localsearch's start ``own`` and k-MAX's, run on the policy's
    ``rival_start_share``: the start is chosen by what both measure, not by n. At mushroom
    (k = 3) k-MAX's first network, in 1 s, was 2,092 ahead of localsearch's, and the ILP
    does not leave the basin of the worse one (policy.rival_start_share). Returns the start
    and what k-MAX's run gave (None where it had no network)."""
    try:
        rival, seconds = warm_start_solution(problem, "kmax", budget=budget, seed=seed,
                                             share=budget.policy.rival_start_share)
    except MethodUnavailable as exc:
        LOG.info(f"auto: {exc}; localsearch's start stands")
        return own, None
    record = {"from": "kmax", "score": rival.score, "seconds": round(seconds, 4), "kept": rival.score > own.score,
              "localsearch_score": own.score}
    if record["kept"]:
        LOG.info(f"auto: k-MAX's start ({rival.score:.1f}) is ahead of localsearch's ({own.score:.1f}); "
                 "it is the start")
        return rival, record
    LOG.info(f"auto: localsearch's start ({own.score:.1f}) is ahead of k-MAX's ({rival.score:.1f}); it stays")
    return own, record


def _climb_from_cache_optimum(problem: Problem, unbounded: SolverResult, given: SolverResult | None,
                              choice: "Choice", seed: int | None):
    """``localsearch`` from the optimum over the cache, where that optimum fits the bound
    but the cache does not hold every family the data may score (``covers_every_family``):
    it is optimal over the cache only. msnbc (n = 17, 291,326 rows, BIC, 60 s): the cache
    held families of at most 2 parents, its optimum fitted k = 5 and 8 and ended the run
    after 5 s, 1.6 % below ETL's hill climbing (−1,882,412.8 against −1,851,632.6), whose
    families have more parents; nltcs k = 8 likewise (3 parents, 0.2 % behind)."""
    start = make_solution(problem, unbounded.parents, bound=None, status="feasible", method=unbounded.method,
                          order_hint=unbounded.elimination_order, seed=seed)
    depth = problem.cache.meta.get("complete_through")
    LOG.info(f"auto: the optimum over the cache ({_how(unbounded)}) fits the bound, but the cache holds "
             f"{'' if depth is None else f'families of at most {depth} parents, '}not every family the data may "
             "score: localsearch climbs from it, scoring larger families from the data")
    reason = choice.reason + ("; the optimum over the cache fits the bound, but the data may score families the "
                              "cache lacks: localsearch climbs from it")
    if given is not None and given.parents is not None and given.score > start.score:
        start = given  # a sweep's network from a smaller bound, with families beyond the cache
    return "localsearch", start, Choice("localsearch", None, reason, None)


def _run(problem: Problem, options: None, budget: Budget, *, seed: int | None, start: SolverResult | None,
         jobs: int, scheduler: str | None = None) -> SolverResult:
    """:func:`_delegate` with a signal only setting the stop flag: between two stages (its
    start's network made, the chosen method not yet entered) as inside them. A signal there
    raised KeyboardInterrupt, and the start's network was lost ("a result without a
    network"). The exact DP, which polls nothing, is uncooperative in the registry."""
    with cooperating(budget.control):
        return _delegate(problem, budget, seed=seed, start=start, jobs=jobs, scheduler=scheduler)


def _delegate(problem: Problem, budget: Budget, *, seed: int | None, start: SolverResult | None,
              jobs: int, scheduler: str | None = None) -> SolverResult:
    """Choose, say why, delegate: the chosen method gets what is left of the budget. With
    ``jobs`` >= 2, a method that runs in several processes itself (``improve``: pieces
    solved at once) gets the jobs, and the Dask ``scheduler`` if it declares
    ``distributed``; otherwise its start method also runs alone in a second process on
    this machine, and the better network is the result (with the chosen method's bound)."""

    policy = budget.policy
    choice = choose_method(problem, budget.limit(), policy)
    method, reason = choice.method, choice.describe()
    if method == "dp" and start is not None:
        start, reason = None, reason + "; the warm start is not used, the DP is exact"
    if budget.seconds is None and budget.endless and method != "dp":
        reason += "; no time limit: until it ends or is stopped"
    elif budget.seconds is None and method != "dp":
        log, origin = budget.log, budget.origin
        budget, subsolver = Budget(policy.auto_time_limit, control=budget.control, policy=policy), budget.subsolver
        budget.log, budget.origin, budget.subsolver = log, origin, subsolver
        reason += f"; {policy.auto_time_limit:g} s budget"
    LOG.info(reason)
    entered = time.monotonic()
    unbounded, proved = None, False
    if method != "dp":
        unbounded = unbounded_optimum_bound(problem, budget, seed)
        proved = unbounded is not None and unbounded.status == "optimal"
        if proved and unbounded.width is not None and unbounded.width <= problem.treewidth \
                and problem.scorer is not None and not covers_every_family(problem):
            # from data, over a cache shallower than the bound: the cache's optimum is a start,
            # and the families the data may score beyond the cache are localsearch's to find
            method, start, choice = _climb_from_cache_optimum(problem, unbounded, start, choice, seed)
        elif proved and unbounded.width is not None and unbounded.width <= problem.treewidth:
            return _unbounded_fits(problem, unbounded, choice, seed, entered)
    side = choice.warm_start  # runs alone beside a one-process method with jobs >= 2
    if unbounded is not None and method == "cuts" and problem.treewidth >= policy.improve_start_min_k:
        # the unbounded optimum is wider than k and already bounds the problem: improve's
        # network first, then the cluster-cut ILP from it (which still proves optima)
        ls = choice.warm_start == "localsearch"
        improved = "localsearch's" if ls else "the given start's" if start is not None else "k-MAX's"
        what = f"the unbounded optimum (width {unbounded.width})" if proved else "the unbounded problem's bound"
        choice = Choice("cuts", "localsearch" if ls else None, choice.reason + f"; {what} "
                        f"bounds it, so the cluster-cut ILP starts from improve's network ({improved}, improved "
                        f"piece by piece, {policy.cuts_improve_share:.0%} of the rest) instead of k-G's",
                        {"improve_share": policy.cuts_improve_share})
        LOG.info(f"auto: {what} bounds the problem: cuts starts from improve's network instead of k-G's")
    feasible = infeasibility(problem) is None
    parallel = None
    # a method that runs in several processes itself (improve's pieces) gets the jobs;
    # otherwise the start method runs alone beside it
    method_jobs = jobs if budget.method(method).parallel else 1
    method_scheduler = scheduler if method_jobs >= 2 and budget.method(method).distributed else None
    if scheduler is not None:
        LOG.info(f"auto: {method}'s pieces go to the dask scheduler at {scheduler}" if method_scheduler
                 else f"auto: {method} runs on this machine; the dask scheduler is not used")
    if jobs >= 2 and method_jobs == 1 and side is not None and budget.seconds is not None \
            and budget.left() > 2 * policy.parallel_margin_s and feasible:
        parallel = Alone(problem, side, budget, seed)
        LOG.info(f"auto: {side} also runs alone in a second process; the better network is kept")
    try:
        start, warm = _start_of(problem, choice, method, start, budget, seed) if choice.warm_start is not None \
            and feasible else (start, None)
        if warm is not None and budget.stop_requested():
            # interrupted during the start: its network is the best there is
            start.method, start.seed = method, seed
            sol = start
        else:
            sol = budget.solve(problem, method, seed=seed, warm_start=start, jobs=method_jobs,
                               scheduler=method_scheduler, options=choice.options)
        if warm is not None:
            sol.stats["warm_start"] = warm
        sol.stats["auto"] = choice.reason
    except BaseException:
        if parallel is not None:
            parallel.close()
        raise
    if unbounded is not None:
        tighten_with_unbounded(sol, unbounded)
    if parallel is not None:
        from twbn.solvers.sweep import keep_better

        alone = parallel.result(budget)
        sol.stats["parallel"] = {"method": parallel.method, "seconds": round(parallel.seconds, 4),
                                 "score": None if alone is None else alone.score}
        if alone is not None and alone.parents is not None:
            sol = keep_better(problem, sol, alone, problem.treewidth, key="kept_from_parallel_start")
    return sol


def _unbounded_fits(problem: Problem, unbounded: SolverResult, choice: Choice, seed, entered: float) -> SolverResult:
    """The unbounded optimum (at most k parents a variable) has width <= k: it is this
    problem's optimum too."""
    LOG.info(f"auto: the unbounded optimum ({_how(unbounded)}) has width {unbounded.width} <= "
             f"{problem.treewidth}: it is the optimum here too")
    algorithm = ("Silander-Myllymaki DP" if unbounded.method == "dp" else "the cluster-cut ILP") + \
        " (unbounded, at most k parents a variable)"
    sol = make_solution(problem, unbounded.parents, bound=unbounded.score, status="optimal",
                        method=unbounded.method, order_hint=unbounded.elimination_order, seed=seed,
                        stats={"algorithm": f"{algorithm}; its network has width {unbounded.width} <= "
                                            f"{problem.treewidth}",
                               "auto": choice.reason + "; the unbounded optimum fits the bound"})
    sol.trajectory = [{"time": round(time.monotonic() - entered, 4), "incumbent": sol.score, "bound": sol.bound}]
    return sol


def _start_of(problem: Problem, choice: Choice, method: str, start, budget: Budget, seed):
    """(the chosen method's start, what ``stats["warm_start"]`` records or None): the
    choice's own start method runs even when a start is given (a sweep's network from a
    smaller bound), and the better of the two is the start."""
    policy = budget.policy
    try:
        share, options = None, None
        if choice.warm_start == "localsearch":
            # its stage runs to the first climb's ceiling; no climb begins after its own share
            share = max(policy.localsearch_start_share, policy.localsearch_first_climb_share)
            if budget.seconds is not None:
                options = {"soft_limit": max(policy.min_engine_s, policy.localsearch_start_share * budget.left())}
        own, used = warm_start_solution(problem, choice.warm_start, budget=budget, seed=seed, share=share,
                                        options=options)
    except MethodUnavailable as exc:  # its start found nothing in its share: the method runs without
        LOG.info(f"auto: {exc}; {method} starts without it")
        own, used = None, 0.0
    own_from, rival = choice.warm_start, None
    if own is not None and own_from == "localsearch" and method == "cuts" and policy.rival_start_share > 0 \
            and not budget.stop_requested():
        own, rival = _better_start(problem, own, budget, seed)
        if rival is not None and rival["kept"]:
            own_from = "kmax"
    if own is not None and (start is None or own.score > start.score):
        start = own
    if start is None:
        return None, None
    warm = {"from": own_from if start is own else "the given start", "score": start.score, "seconds": round(used, 4)}
    if rival is not None:  # both starts' seconds: k-MAX's ran after localsearch's
        warm["rival"] = rival
        warm["seconds"] = round(used + rival["seconds"], 4)
    return start, warm


#: ``auto`` as the registry lists it: the default of ``twbn learn`` and ``twbn.learn``.
#: Not ``anytime`` to the registry: it cooperates itself between its stages, and the
#: method it delegates to keeps its network on a signal (an exact DP, which has none to
#: keep, stops at once).
METHOD = Method("auto", _run, summary="chooses a method by size and budget, says why, and runs it (the default; "
                                     f"without a limit, {DEFAULT_POLICY.auto_time_limit:g} s when it picks an anytime "
                                     "method)",
                warm_start=True, seeded=True, parallel=True, distributed=True, anytime=False, lp_bound=False,
                default_time_limit=None)
