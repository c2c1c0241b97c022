"""Structural EM for bounded treewidth: learning from data with missing cells.

Structural EM (Friedman, "Learning belief networks in the presence of missing values and
hidden variables", ICML 1997; "The Bayesian structural EM algorithm", UAI 1998)
alternates an E-step, which completes the data under the current network, and an M-step,
which re-learns the structure (and its tables) from the completed data; each M-step can
only raise the expected score, so the search climbs the observed-data objective. SEM-k-MAX
(Scanagatta, Corani, Zaffalon, Yoo & Kang, "Efficient learning of bounded-treewidth
Bayesian networks from complete and incomplete data sets", IJAR 2018) runs it under a
treewidth bound.

Here:

- **E-step.** Every network twbn returns carries an elimination order of width ≤ k, so a
  row's missing cells have an exact joint posterior at cost exponential in k only
  (``twbn.scoring.posterior``). Each row's missing cells are drawn ``copies`` times from
  it; the expected counts of *any* family are estimated by the counts over the copies
  (a Monte Carlo estimate of exact expected counts: families that are not inside one
  clique of the current network, which a structure search needs, have no cheaper exact
  count). Observed cells are kept as they are.
- **M-step.** BIC or AIC of the averaged counts (``FamilyScores(copies=...)``: LL /
  copies, the penalty of the real rows), over a cache of the current network's families
  and every family of few parents (``cache_depth``, the policy's ``em_cache_families``;
  one parent for ``localsearch``, which scores the families it reaches), with families
  beyond it scored on demand; the structure is re-solved under the same bound,
  warm-started from the current network, in at most the policy's ``em_m_step_share`` of
  the time limit (an M-step need only improve: generalised EM); the tables are refitted
  on the completed data (Dirichlet smoothing ``ess``). ``method="auto"`` runs
  ``localsearch`` in the M-steps (where auto would not run the exact DP): many short
  M-steps climb further than a few long ones; and auto itself over the last completions
  in the policy's ``em_final_share`` of the limit.
- **Stop** when the new network's expected score is within ``tolerance`` (relative) of
  the current one's on the same completions, after ``max_iterations``, or when the time
  is spent.
- **Start.** EM stops at the first network whose own completions favour it (completions
  drawn from a network weaken the arcs it lacks), so where it starts decides much of
  where it ends. By default the start is the network learned in the policy's
  ``em_start_share`` of the limit on the data filled by nearest-neighbour hot deck
  (``twbn.scoring.hot_deck``), which keeps the dependencies among each row's cells that
  its donor rows have: as ``learn`` learns complete data, the fill's families scored level
  by level in ``em_start_cache_share`` of those seconds and ``auto`` in the rest (0:
  localsearch over single parents); its tables are fitted on each family's fully observed
  rows.
  ``start="available"``: the network learned the same way on the *available cases*
  (``FamilyScores(available=True)``: each family's gain over no parents measured on the
  rows where it is wholly observed, scaled to all rows; families of at most the policy's
  ``em_available_max_parents``), which no completion has biased towards a network.
  ``start="empty"``: the network without arcs, its tables the observed frequencies; or a
  network of the user's. With the hot-deck start, EM from no arcs and EM from the
  available cases run first where the policy's ``em_empty_share`` and
  ``em_available_share`` give them time (by default the available cases only, in a fifth
  of the limit; localsearch M-steps): each start ends better in some cells, and their
  networks join the end's choice.
- **End.** From the hot-deck start, the result is the best of EM's last network, the
  start and the other runs' networks (their own tables) by the observed cells' AIC (the
  policy's ``em_end_penalty`` a free parameter), computed exactly under the bound
  (``observed_score``; the start's tables by one round of EM, on the first E-step's
  completions): EM climbs the observed cells' likelihood, and its search may end below
  where another start's did; AIC, the predictive criterion, ranked the networks compared
  as held-out rows did where BIC did not (insurance k = 8, jester k = 5).

Each iteration's expected scores, change and seconds are recorded. The result is
certified over the last iteration's problem; its bound, where the method gives one, is a
bound over that expected-count cache (and the families scored on demand), nothing more.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import time
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

import numpy as np

from twbn.formulations.problem import Problem
from twbn.formulations.solution import SolverResult, make_solution
from twbn.scoring.cache import ScoreCache
from twbn.scoring.data import DataError, Dataset, missing_summary
from twbn.scoring.families import FamilyScores
from twbn.scoring.hot_deck import hot_deck
from twbn.scoring.likelihood import em_cpts, fit_cpts
from twbn.scoring.posterior import cheapest_order, order_cost, row_log_likelihood, sample_missing
from twbn.scoring.errors import ParameterError

if TYPE_CHECKING:
    from twbn.solvers.policy import Policy

__all__ = ["STARTS", "structural_em", "network_order", "observed_score"]

#: The starts ``structural_em`` learns itself (``start=``; or a network's parents).
STARTS = ("hot-deck", "available", "empty")



def network_order(parents) -> list[int]:
    """An elimination order of the network's moral graph (greedy min-fill): the E-step's
    order when a network carries none."""
    from twbn.formulations.graphs import min_fill_order, moral_graph

    return list(min_fill_order(moral_graph([tuple(p) for p in parents])))


def observed_score(codes: np.ndarray, arities, parents, cpts, order, score: str = "bic", *,
                   penalty: float | None = None) -> float:
    """The observed cells' log-likelihood under the network and its tables, computed exactly
    (``row_log_likelihood``), minus the ``score``'s penalty of the network's free
    parameters over the data's rows (the objective structural EM climbs), or ``penalty``
    per free parameter where given (1: AIC).

    Examples
    --------
    >>> import numpy as np
    >>> codes = np.array([[0, 1, -1, 1]])
    >>> cpts = [np.array([[0.25, 0.75]])]
    >>> got = observed_score(codes, [2], [()], cpts, [0], "aic")  # 3 observed cells, 1 parameter
    >>> bool(abs(got - (np.log(0.25) + 2 * np.log(0.75) - 1)) < 1e-12)
    True
    """
    from twbn.scoring.local_scores import penalty_weight

    arities = np.asarray(arities, np.int64)
    ll = float(row_log_likelihood(codes, arities, parents, cpts, order).sum())
    free = sum((int(arities[v]) - 1) * int(np.prod([arities[u] for u in ps], dtype=np.int64)) for v, ps in enumerate(parents))
    return ll - (penalty_weight(score, codes.shape[1]) if penalty is None else penalty) * free


def cache_depth(n: int, max_parents: int | None, families: int | None = None) -> int:
    """The most parents L for which n·C(n − 1, L) stays within ``families`` (the policy's
    ``em_cache_families``): at least 1, at most ``max_parents`` and n − 1.

    Examples
    --------
    >>> cache_depth(17, None), cache_depth(37, None), cache_depth(100, None), cache_depth(17, 2)
    (5, 2, 1, 2)
    """
    if families is None:
        from twbn.solvers.policy import DEFAULT_POLICY

        families = DEFAULT_POLICY.em_cache_families
    depth = 1
    top = n - 1 if max_parents is None else min(n - 1, max_parents)
    while depth < top and n * math.comb(n - 1, depth + 1) <= families:
        depth += 1
    return min(depth, max(top, 0))


def _required_parents(required, n: int) -> list[tuple[int, ...]]:
    """Each variable's required parents, sorted."""
    return [tuple(sorted(u for u, w in required if w == v)) for v in range(n)]


def _problem(completed: Dataset, copies: int, score: str, k: int | None, parents, max_parents: int | None,
             depth: int, deadline: float, forbidden: frozenset = frozenset(),
             required: frozenset = frozenset(), available: bool = False) -> tuple[Problem, int]:
    """The M-step's problem: every family of at most ``depth`` parents, the network's and
    each variable's required parents, scored on the averaged counts (``available``: on each
    family's available cases of data with holes); more on demand. A size of two or more
    parents is started only if, at the rate of the size before, it is predicted to end by
    ``deadline``. Returns the problem and the size the cache holds whole."""
    fs = FamilyScores(completed, score, max_parents=max_parents, copies=copies, available=available)
    n = completed.n_variables
    for v, need in enumerate(_required_parents(required, n)):
        fs.score(v, ())
        fs.score(v, parents[v])
        fs.score(v, need)
    held = 0
    for size in range(depth):  # every family of size + 1 parents: bases of ``size``, each extended by one
        began = time.monotonic()
        if size >= 1:
            sets, rate = n * math.comb(n - 1, size + 1), elapsed / max(1, n * math.comb(n - 1, size))
            if began + sets * rate > deadline:
                break
        for v in range(n):
            others = [u for u in range(n) if u != v]
            for base in itertools.combinations(others, size):
                fs.score_additions(v, base, [u for u in others if not base or u > base[-1]])
        elapsed = time.monotonic() - began
        held = size + 1
    cache = ScoreCache.from_mapping(completed.names, [fs.known(v) for v in range(n)],
                                    arities=[len(s) for s in completed.states],
                                    meta={"source": "structural EM: " + ("available cases" if available
                                                                          else "expected counts")})
    return Problem(cache, k, forbidden, required, scorer=fs), held


def structural_em(
    dataset: Dataset,
    treewidth: int | None,
    *,
    method: str = "auto",
    time_limit: float = 60.0,
    seed: int | None = None,
    score: str = "bic",
    max_parents: int | None = None,
    copies: int | None = None,
    max_iterations: int = 20,
    start: "str | Sequence[Sequence[int]] | None" = None,
    forbidden: "Iterable[tuple[int, int]]" = (),
    required: "Iterable[tuple[int, int]]" = (),
    rivals: "Sequence[Sequence[Sequence[int]]]" = (),
    tolerance: float = 1e-4,
    ess: float = 1.0,
    solve: "Callable[..., SolverResult] | None" = None,
    policy: "Policy | None" = None,
    log: "Callable[[str], None] | None" = None,
) -> tuple[SolverResult, Problem, dict]:
    """Learn a network of treewidth ≤ ``treewidth`` from data with missing cells.

    Parameters
    ----------
    dataset : Dataset
        Discrete data, −1 where a cell is missing (``read_csv(..., missing="em")``).
    treewidth : int or None
        The bound, as in ``twbn.learn``.
    method : str, default "auto"
        The M-step's method, any registered one (warm-started from the current network
        where it takes a start; the better of its network and the current one is kept).
        ``"auto"``: ``localsearch``, or auto itself where it would run the exact DP.
    time_limit : float, default 60
        Seconds for the whole of it; each M-step gets at most the policy's
        ``em_m_step_share`` of it.
    seed : int, optional
        The E-step's draws and the methods' seeds.
    score : {"bic", "aic"}
        On the expected counts (BDeu is not linear in the counts: not offered here).
    max_parents : int, optional
        The most parents of a family scored on demand (default: the bound k).
    copies : int, optional
        Draws of each row's missing cells per E-step (default: the policy's ``em_copies``).
    max_iterations : int, default 20
    start : {"hot-deck", "available", "empty"} or sequence of parent index tuples, optional
        The network the first E-step draws from: the network of the data filled by hot
        deck, or of the available cases, learned in the policy's ``em_start_share`` of the
        limit (``auto``, or localsearch where ``em_start_cache_share`` is 0; kept at the end
        where its observed score beats EM's network's); the network without arcs (its
        tables the observed frequencies); or the given parents of each variable. A learned
        or given start's tables are fitted on each family's fully observed rows. Default:
        hot deck, or no arcs where ``em_start_share`` is 0 (the required arcs only, where
        there are some). With hot deck and the policy's ``em_empty_share`` or
        ``em_available_share`` > 0, EM from no arcs and from the available cases run first,
        in those shares of the limit, and their networks with their EM tables are compared
        at the end too.
    forbidden, required : iterable of (parent, child) index pairs
        Arcs no network may have, and arcs every network must have: in the start, every
        M-step and the end's choice.
    rivals : sequence of networks (the parents of each variable)
        Networks the end compares with EM's by the observed cells' score, the better kept
        (``learn`` under several bounds: the network of the bound before).
    tolerance : float, default 1e-4
        Stop when an M-step raises the expected score by less than this share of it.
    ess : float, default 1.0
        Dirichlet smoothing of the tables (``fit_cpts``).
    solve : callable, optional
        ``solve(problem, method, time_limit=, seed=, warm_start=)`` → SolverResult; default
        ``twbn.solvers.registry.run``.
    policy : Policy, optional
        What ``"auto"`` would choose is judged by it (default: the measured one).
    log : callable, optional
        Receives one line per iteration.

    Returns
    -------
    result : SolverResult
        The last network, certified over ``problem``.
    problem : Problem
        The last iteration's problem (its cache: expected-count scores).
    info : dict
        ``iterations`` (each: ``expected_score`` of the new network, ``previous_score`` of
        the one before on the same completions, ``observed_log_likelihood`` of the data's
        observed cells under the network the E-step used, ``arcs``, ``seconds``),
        ``stopped`` (why), ``cpts`` (the final tables), ``order``, ``missing`` (the
        summary line), ``copies``, ``start`` (which: ``"hot-deck"``, ``"available"``, ``"empty"``,
        ``"given"``), ``chosen`` (``"em"``, ``"start"`` where the learned start's observed
        score was the better, ``"EM from no arcs"`` or ``"EM from available cases"`` where
        that run's network was (the policy's ``em_empty_share``, ``em_available_share``),
        ``"rival 1"``… where one of ``rivals`` was), ``from_no_arcs`` and
        ``from_available_cases`` (that run's iterations, why it stopped and its seconds;
        None without it),
        ``observed_scores`` (those compared, ``{"em": …, "start": …, "rival 1": …}``;
        empty where EM's network is its start and there is no rival).

    Raises
    ------
    DataError
        No missing cell (learn as usual), a column with none observed.
    ParameterError
        A bad score, copies, tolerance, limit, start or rival; arcs no network can satisfy
        (required and forbidden, a required cycle, more required parents than k).

    Examples
    --------
    >>> import numpy as np, twbn
    >>> ds = twbn.read_csv(twbn.example_path("zoo"))
    >>> holes = np.random.default_rng(0).random(ds.data.shape) < 0.1
    >>> gappy = twbn.Dataset(ds.names, ds.states, np.where(holes, -1, ds.data).astype(np.int32))
    >>> sol, problem, info = structural_em(gappy, 2, method="localsearch", time_limit=5, seed=0)
    >>> sol.width <= 2, len(info["iterations"]) >= 1, info["stopped"] in ("converged", "time", "iterations")
    (True, True, True)
    """
    from twbn.solvers.registry import run

    if score not in ("bic", "aic"):
        raise ParameterError(f"structural EM scores bic or aic on expected counts, not {score!r}")
    from twbn.solvers.policy import DEFAULT_POLICY

    policy = policy or DEFAULT_POLICY
    copies = policy.em_copies if copies is None else copies
    if isinstance(copies, bool) or not isinstance(copies, int) or copies < 1:
        raise ParameterError(f"copies must be an integer >= 1, got {copies!r}")
    if not (tolerance >= 0 and math.isfinite(tolerance)):
        raise ParameterError(f"tolerance must be >= 0, got {tolerance!r}")
    if not (time_limit > 0 and math.isfinite(time_limit)):
        raise ParameterError(f"structural EM needs a finite time limit > 0, got {time_limit!r}")
    if dataset.n_missing == 0:
        raise DataError("no cell is missing: learn from the data as it is")
    from twbn.solvers.registry import get_method

    from twbn.solvers.auto import choose_method
    solve = solve or run
    say = log or (lambda line: None)
    t0 = called = time.monotonic()
    deadline = t0 + time_limit
    codes = dataset.data
    arities = dataset.arities
    n = dataset.n_variables
    depth = max_parents if max_parents is not None else treewidth
    forbidden, required = frozenset(forbidden), frozenset(required)
    need = _required_parents(required, n)
    # what auto would choose depends on n, k and the seconds only; the arcs are checked on it
    shape = Problem(ScoreCache.from_mapping(dataset.names, [{(): 0.0, need[v]: 1.0} for v in range(n)]),
                    treewidth, forbidden, required)
    from twbn.solvers.warm_start import infeasibility

    why = infeasibility(shape)
    if why is not None:
        raise ParameterError(f"no network satisfies the arcs: {why}")

    def breaks(parents) -> str | None:  # how a network of the caller's breaks the arcs
        for u, v in sorted(required):
            if u not in parents[v]:
                return f"lacks the required arc {dataset.names[u]}->{dataset.names[v]}"
        for u, v in sorted(forbidden):
            if u in parents[v]:
                return f"has the forbidden arc {dataset.names[u]}->{dataset.names[v]}"
        return None

    def as_parents(network, what: str) -> list[tuple[int, ...]]:
        parents = [tuple(sorted(int(u) for u in ps)) for ps in network]
        if len(parents) != n or any(u == v or not 0 <= u < n for v, ps in enumerate(parents) for u in ps):
            raise ParameterError(f"{what} must give the parents of each of the {n} variables")
        broken = breaks(parents)
        if broken is not None:
            raise ParameterError(f"{what} {broken}")
        return parents

    rival_networks = [as_parents(r, f"rival {i}") for i, r in enumerate(rivals, 1)]
    if start is None:
        start = "hot-deck" if policy.em_start_share > 0 else "empty"
    if isinstance(start, str):
        if start not in STARTS:
            raise ParameterError(f"start must be one of {', '.join(STARTS)} or the parents of each variable, "
                             f"got {start!r}")
        if start in ("hot-deck", "available") and policy.em_start_share == 0:
            raise ParameterError(f"start {start!r} has no time: the policy's em_start_share is 0")
        started_from = start
    else:
        parents = as_parents(start, "start")
        started_from = "given"
    start_network = None  # the learned start, kept as a rival of EM's end
    # EM's other runs (the policy's em_empty_share, em_available_share): name -> network,
    # order, tables; and what each did
    pre_runs: dict[str, tuple] = {}
    pre_records: dict[str, dict] = {}
    others_share = policy.em_empty_share + policy.em_available_share
    if started_from == "hot-deck" and others_share > 0:
        if others_share + policy.em_start_share >= 1:
            raise ParameterError("the policy's em_empty_share, em_available_share and em_start_share leave EM from "
                             "hot deck no time: their sum must be below 1")
        # no arcs, available cases and hot deck each end better in some cells (alarm k = 2:
        # no arcs, plants k = 5: hot deck, insurance k = 5: available cases), and the
        # observed cells' BIC ranked them as held-out did: run each
        for name, other, share in (("EM from no arcs", "empty", policy.em_empty_share),
                                   ("EM from available cases", "available", policy.em_available_share)):
            if share <= 0:
                continue
            began = time.monotonic()
            e_sol, _, e_info = structural_em(
                dataset, treewidth, method="localsearch", time_limit=share * time_limit, seed=seed,
                score=score, max_parents=max_parents, copies=copies, max_iterations=max_iterations, start=other,
                forbidden=forbidden, required=required, tolerance=tolerance, ess=ess, solve=solve, policy=policy,
                log=lambda line, name=name: say(name[3:] + ", " + line))
            pre_runs[name] = ([tuple(p) for p in e_sol.parents], list(e_info["order"]), e_info["cpts"])
            pre_records[name] = {"iterations": len(e_info["iterations"]), "stopped": e_info["stopped"],
                                 "seconds": round(time.monotonic() - began, 3)}
        # the rest is hot deck's EM, its start keeping the seconds it has without the others
        # (no more than its part of what is left, where they overran)
        start_seconds = policy.em_start_share * time_limit
        t0, time_limit = time.monotonic(), deadline - time.monotonic()
        policy = dataclasses.replace(policy, em_start_share=min(policy.em_start_share / (1 - others_share),
                                                                start_seconds / max(time_limit, 1e-9)))
    if started_from in ("hot-deck", "available"):
        start_end = t0 + policy.em_start_share * time_limit
        # the fill (or the available cases) learned as complete data is (its families
        # scored level by level, then auto), or localsearch over single parents with the
        # rest scored on demand
        learned = policy.em_start_cache_share > 0
        start_method = "auto" if learned else "localsearch"
        levels = (n - 1 if depth is None else min(depth, n - 1)) if learned else 1
        cache_end = t0 + policy.em_start_cache_share * (start_end - t0) if learned else start_end
        source = Dataset(dataset.names, dataset.states, hot_deck(codes, arities, seed=seed)) \
            if started_from == "hot-deck" else dataset
        cap = depth
        if started_from == "available":  # few parents: a rich family's gain on few rows is noisy
            most = max([policy.em_available_max_parents, *map(len, need)])
            cap = most if depth is None else min(depth, most)
            levels = min(levels, cap)
        first, _ = _problem(source, 1, score, treewidth, need, cap,
                            levels, cache_end, forbidden, required, available=started_from == "available")
        found = solve(first, start_method, time_limit=max(0.05, start_end - time.monotonic()), seed=seed)
        parents = [tuple(p) for p in found.parents] if found.parents is not None else need
        # its certificate's order: min-fill on a network of width k may find only wider ones
        start_network = (parents, list(found.elimination_order) if found.parents is not None else list(range(n)))
        say(f"structural EM starts from {start_method}'s network on "
            f"{'the data filled by hot deck' if started_from == 'hot-deck' else 'the available cases'}: "
            f"{sum(len(p) for p in parents)} arcs, {time.monotonic() - t0:.1f} s")
    if started_from == "empty":  # the required arcs only (none: no arcs)
        parents = list(need)
    if started_from == "empty" and not required:
        # each table the observed frequencies (fit_cpts on the observed cells of one
        # variable at a time)
        cpts = [fit_cpts(codes[v:v + 1][:, codes[v] >= 0], arities[v:v + 1], [()], ess)[0] for v in range(n)]
        order = list(range(n))
    else:  # its tables from each family's fully observed rows
        cpts = em_cpts(codes, arities, parents, ess, iterations=0)
        order = start_network[1] if start_network is not None else network_order(parents)
    iterations: list[dict] = []
    stopped = "iterations"
    sol = problem = None
    held = 0
    overhead = 0.0  # the last iteration's E-step and scoring
    # method "auto": localsearch climbs; auto itself (the cluster-cut ILP over a deeper
    # cache at n <= 40) re-solves the last completions in the final share
    polish = method == "auto" and policy.em_final_share > 0
    climb_end = deadline - policy.em_final_share * time_limit if polish else deadline
    final = converged = False

    def climb_share(it: int, left: float) -> float:  # the first M-step may take half of what is left
        return min(left * (0.5 if it == 1 else 0.35), policy.em_m_step_share * time_limit)

    # the networks the end compares with EM's own: the learned start, and the caller's
    contenders = ([("start", *start_network)] if start_network is not None else []) \
        + [(name, *run[:2]) for name, run in pre_runs.items()] \
        + [(f"rival {i}", r, network_order(r)) for i, r in enumerate(rival_networks, 1)]
    own_tables = {name: run[2] for name, run in pre_runs.items()}
    rival_tables: dict = {}
    rng = np.random.default_rng(seed)
    for it in range(1, max_iterations + 1):
        began = time.monotonic()
        if polish and sol is not None and (converged or it == max_iterations
                                           or climb_end - began < overhead + 0.1 * policy.em_m_step_share * time_limit):
            final = True
        elif sol is not None and deadline - began < overhead + 0.1 * policy.em_m_step_share * time_limit:
            stopped = "time"  # another E-step and its scores would leave the M-step nothing
            break
        # the certificate's order is proved within k, but may be far wider than the network
        # needs: inference runs along the cheapest at hand
        along = cheapest_order(parents, arities, order)
        observed_ll = float(row_log_likelihood(codes, arities, parents, cpts, along).sum())
        ll_seconds = time.monotonic() - began
        completed_codes = sample_missing(codes, arities, parents, cpts, along, copies=copies,
                                         seed=int(rng.integers(2**31)))
        completed = Dataset(dataset.names, dataset.states, completed_codes)
        if it == 1 and contenders:
            # the rivals' tables: one round of EM on the first completions (drawn from the
            # start, so for the start exactly one round from its first tables); the end's
            # choice then takes one likelihood a network, kept out of the loop
            rival_tables = {name: own_tables[name] if name in own_tables
                            else fit_cpts(completed_codes, arities, ps, ess, copies=copies)
                            for name, ps, _ in contenders}
            # a row's likelihood costs what its elimination touches: a contender of wider
            # cliques than the start's takes longer than the start's E-step did
            own_cost = order_cost(parents, arities, along)
            costs = [order_cost(ps, arities, cheapest_order(ps, arities, o)) for _, ps, o in contenders]
            reserve = 1.5 * ll_seconds / max(1.0, own_cost) * (max([own_cost, *costs]) + sum(costs))
            deadline -= reserve
            climb_end -= reserve
        e_done = time.monotonic()
        left = (deadline if final else climb_end) - e_done
        share = climb_share(it, left)
        m_method = method
        if method == "auto" and not final:  # localsearch, unless auto would run the exact DP
            m_method = "auto" if choose_method(shape, share, policy).method == "dp" else "localsearch"
        problem, held = _problem(completed, copies, score, treewidth, parents, depth,
                                 1 if m_method == "localsearch" else cache_depth(n, depth, policy.em_cache_families),
                                 e_done + (0.3 * left if final else max(share, 0.1 * left)), forbidden, required)
        cache_done = time.monotonic()
        overhead = cache_done - began
        start = make_solution(problem, parents, bound=None, status="feasible", method="em start",
                              order_hint=order)
        previous = start.score
        left = deadline - time.monotonic()
        if left <= 0.1:
            stopped = "time"
            sol = start
            break
        if final:  # the rest; converged early, at most the final share (EM has ended: return)
            share = min(left - 0.05, policy.em_final_share * time_limit) if converged else left - 0.05
        else:
            share = climb_share(it, left)
        takes_start = get_method(m_method).warm_start  # a method without starts re-solves from scratch
        found = solve(problem, m_method, time_limit=share, seed=seed, warm_start=start if takes_start else None)
        sol = found if found.parents is not None and found.score >= start.score else start
        parents = [tuple(p) for p in sol.parents]
        order = list(sol.elimination_order) if sol.elimination_order is not None else network_order(parents)
        cpts = fit_cpts(completed_codes, arities, parents, ess, copies=copies)
        gain = sol.score - previous
        iterations.append({"iteration": it, "expected_score": sol.score, "previous_score": previous,
                           "observed_log_likelihood": observed_ll, "arcs": sum(len(p) for p in parents),
                           "seconds": round(time.monotonic() - began, 3),
                           "e_step_seconds": round(e_done - began, 3), "cache_seconds": round(cache_done - e_done, 3)})
        say(f"structural EM {it}: expected score {sol.score:,.2f} ({gain:+,.2f} on the same completions), "
            f"observed-cell log-likelihood before it {observed_ll:,.2f}, {iterations[-1]['arcs']} arcs, "
            f"{iterations[-1]['seconds']:.1f} s (E-step {iterations[-1]['e_step_seconds']:.1f} s, "
            f"scores {iterations[-1]['cache_seconds']:.1f} s)")
        # converged when the structure no longer gains and the tables no longer move the
        # observed cells' likelihood (with the structure held, an iteration is EM on the
        # tables, which may still be climbing)
        before = iterations[-2]["observed_log_likelihood"] if len(iterations) > 1 else -math.inf
        if final:
            stopped = "converged" if converged else "time"
            break
        if gain <= tolerance * abs(previous) and observed_ll - before <= tolerance * abs(observed_ll):
            stopped = "converged"
            if not polish:
                break
            converged = True
        if deadline - time.monotonic() <= 0.1:
            stopped = "time"
            break
    chosen, compared = "em", {}
    ended = [tuple(p) for p in parents]
    others = [(name, ps, o) for name, ps, o in contenders if ps != ended and name in rival_tables]
    if others:
        # EM climbs the observed cells' likelihood from the start, but the climb is a
        # search and may end below it: keep the best of EM's end and its rivals by the
        # observed cells' log-likelihood, exact under the bound (a rival's tables by a
        # round of EM), less the policy's em_end_penalty a free parameter (AIC: it ranked
        # them as held-out rows did where BIC did not)
        weight = policy.em_end_penalty
        best = compared["em"] = observed_score(codes, arities, parents, cpts, cheapest_order(parents, arities, order),
                                               penalty=weight)
        for name, rival, rival_order in others:
            compared[name] = observed_score(codes, arities, rival, rival_tables[name],
                                            cheapest_order(rival, arities, rival_order), penalty=weight)
            if compared[name] > best:
                best, chosen = compared[name], name
                parents, order, cpts = rival, rival_order, rival_tables[name]
        if chosen != "em":
            sol = make_solution(problem, parents, bound=None, status="feasible", method=sol.method,
                                order_hint=order)
        say(f"structural EM: the observed cells' log-likelihood less {weight:g} a free parameter, of "
            + ", of ".join(f"{'its end' if name == 'em' else 'its ' + name} {value:,.2f}"
                           for name, value in compared.items())
            + f": keeps {'its end' if chosen == 'em' else 'its ' + chosen}")
    sol.wall_time = round(time.monotonic() - called, 4)  # every iteration's, not the last M-step's
    if sol.bound is not None:
        sol.stats["bound_source"] = ("structural EM's last M-step: " + sol.stats.get("bound_source", "its method's bound")
                                     + ", over the expected counts of its completions")
    if sol.status == "optimal":
        # optimal for the last completions only: EM climbs the observed-data objective, it
        # does not prove an optimum of it (the M-step's bound stays, with its scope)
        sol.status = "feasible"
        sol.stats["m_step_status"] = "optimal"
    info = {"iterations": iterations, "stopped": stopped, "cpts": cpts, "order": order,
            "missing": missing_summary(dataset), "copies": copies, "start": started_from, "chosen": chosen,
            "from_no_arcs": pre_records.get("EM from no arcs"),
            "from_available_cases": pre_records.get("EM from available cases"),
            "observed_scores": compared,
            "families": f"every family of at most {held} parent{'s' if held != 1 else ''}, the networks' families and "
                        "those scored on demand",
            "bound_scope": f"the expected-count cache of the last iteration (every family of at most "
                           f"{held} parent{'s' if held != 1 else ''}, the networks' families and those scored on demand), over "
                           "its completions: not a bound over the data's networks"}
    return sol, problem, info
