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

import time
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from twbn.em.end import choose_end, finish
from twbn.em.network import cache_depth, network_order, observed_score
from twbn.em.request import STARTS, Clock, make_request
from twbn.em.start import first_network, other_runs
from twbn.em.steps import climb
from twbn.formulations.problem import Problem
from twbn.formulations.solution import SolverResult
from twbn.scoring.data import Dataset, missing_summary

if TYPE_CHECKING:
    from twbn.solvers.policy import Policy

__all__ = ["STARTS", "structural_em", "network_order", "observed_score", "cache_depth"]


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
    request = make_request(dataset, treewidth, method=method, time_limit=time_limit, seed=seed, score=score,
                           max_parents=max_parents, copies=copies, max_iterations=max_iterations, start=start,
                           forbidden=forbidden, required=required, rivals=rivals, tolerance=tolerance, ess=ess,
                           solve=solve, policy=policy, log=log)
    clock = Clock.starting(time_limit)
    runs, records, request = other_runs(request, clock, structural_em)
    first = first_network(request, clock)
    first.runs, first.records = runs, records
    state = climb(request, clock, first)
    chosen, compared = choose_end(request, state)
    finish(state, time.monotonic() - clock.called)
    held = state.held
    info = {"iterations": state.iterations, "stopped": state.stopped, "cpts": state.cpts, "order": state.order,
            "missing": missing_summary(dataset), "copies": request.copies, "start": request.start, "chosen": chosen,
            "from_no_arcs": records.get("EM from no arcs"),
            "from_available_cases": records.get("EM from available cases"),
            "observed_scores": compared,
            "families": f"every family of at most {held} parent{'s' if held != 1 else ''}, the networks' families and "
                        "those scored on demand",
            "bound_scope": f"the expected-count cache of the last iteration (every family of at most "
                           f"{held} parent{'s' if held != 1 else ''}, the networks' families and those scored on demand), over "
                           "its completions: not a bound over the data's networks"}
    return state.sol, state.problem, info
