"""Structural EM's iterations: the E-step completes the data under the current network, the
M-step re-learns the structure from the completions; with ``method="auto"`` a final M-step
by auto itself over the last completions."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from twbn.em.network import cache_depth, m_step_problem, network_order
from twbn.em.request import Clock, EMRequest
from twbn.em.start import Start
from twbn.formulations.solution import make_solution
from twbn.scoring.data import Dataset
from twbn.scoring.likelihood import fit_cpts
from twbn.scoring.posterior import cheapest_order, order_cost, row_log_likelihood, sample_missing
from twbn.solvers.budget import seconds_to

__all__ = ["Climb", "climb"]


@dataclass
class Climb:
    """Where EM's iterations ended: the network (``sol`` over ``problem``, ``parents``,
    ``order``, ``cpts``), each iteration's record, why it stopped, the depth the last cache
    held whole, and the networks the end compares with their tables (``contenders``,
    ``tables``)."""

    sol: object = None
    problem: object = None
    parents: list = field(default_factory=list)
    order: list = field(default_factory=list)
    cpts: list = field(default_factory=list)
    iterations: list = field(default_factory=list)
    stopped: str = "iterations"
    held: int = 0
    contenders: list = field(default_factory=list)
    tables: dict = field(default_factory=dict)


def _contenders(request: EMRequest, start: Start) -> list:
    """The networks the end compares with EM's own: the learned start, the other runs' and
    the caller's, each with its order."""
    return ([("start", *start.network)] if start.network is not None else []) \
        + [(name, *run[:2]) for name, run in start.runs.items()] \
        + [(f"rival {i}", r, network_order(r)) for i, r in enumerate(request.rivals, 1)]


def _contenders_tables(request: EMRequest, start: Start, climb: Climb, completed_codes, along,
                       ll_seconds: float, clock: Clock) -> None:
    """The rivals' tables: one round of EM on the first completions (drawn from the start,
    so for the start exactly one round from its first tables); the end's choice then takes
    one likelihood a network, whose seconds are kept out of the loop."""
    arities = request.arities
    climb.tables = {name: start.runs[name][2] if name in start.runs
                    else fit_cpts(completed_codes, arities, ps, request.ess, copies=request.copies)
                    for name, ps, _ in climb.contenders}
    # a row's likelihood costs what its elimination touches: a contender of wider
    # cliques than the start's takes longer than the start's E-step did
    own_cost = order_cost(climb.parents, arities, along)
    costs = [order_cost(ps, arities, cheapest_order(ps, arities, o)) for _, ps, o in climb.contenders]
    clock.reserve(1.5 * ll_seconds / max(1.0, own_cost) * (max([own_cost, *costs]) + sum(costs)))


def _e_step(request: EMRequest, climb: Climb, rng) -> tuple[float, np.ndarray, list, float]:
    """The observed cells' log-likelihood under the current network and the data completed
    ``copies`` times by draws from it. Returns both, the order used and the likelihood's
    seconds."""
    began = time.monotonic()
    # the certificate's order is proved within k, but may be far wider than the network
    # needs: inference runs along the cheapest at hand
    along = cheapest_order(climb.parents, request.arities, climb.order)
    observed_ll = float(row_log_likelihood(request.codes, request.arities, climb.parents, climb.cpts, along).sum())
    ll_seconds = time.monotonic() - began
    completed = sample_missing(request.codes, request.arities, climb.parents, climb.cpts, along,
                               copies=request.copies, seed=int(rng.integers(2**31)))
    return observed_ll, completed, along, ll_seconds


def _m_step_method(request: EMRequest, share: float, final: bool) -> str:
    """``localsearch`` for auto's climb, unless auto would run the exact DP; the method
    asked for otherwise."""
    if request.method != "auto" or final:
        return request.method
    from twbn.solvers.auto import choose_method

    return "auto" if choose_method(request.shape, share, request.policy).method == "dp" else "localsearch"


def climb(request: EMRequest, clock: Clock, start: Start) -> Climb:
    """EM's iterations from ``start`` until they converge, run out of iterations or time.

    ``method="auto"``: localsearch climbs; auto itself (the cluster-cut ILP over a deeper
    cache at n <= 40) re-solves the last completions in the policy's ``em_final_share``."""
    from twbn.solvers.registry import get_method

    policy, limit = request.policy, clock.time_limit
    state = Climb(parents=start.parents, order=start.order, cpts=start.cpts, contenders=_contenders(request, start))
    overhead = 0.0  # the last iteration's E-step and scoring
    polish = request.method == "auto" and policy.em_final_share > 0
    clock.climb_end = clock.deadline - policy.em_final_share * limit if polish else clock.deadline
    final = converged = False

    def climb_share(it: int, left: float) -> float:  # the first M-step may take half of what is left
        return min(left * (0.5 if it == 1 else 0.35), policy.em_m_step_share * limit)

    rng = np.random.default_rng(request.seed)
    for it in range(1, request.max_iterations + 1):
        began = time.monotonic()
        if polish and state.sol is not None and (converged or it == request.max_iterations or clock.climb_end - began
                                                 < overhead + 0.1 * policy.em_m_step_share * limit):
            final = True
        elif state.sol is not None and clock.deadline - began < overhead + 0.1 * policy.em_m_step_share * limit:
            state.stopped = "time"  # another E-step and its scores would leave the M-step nothing
            break
        observed_ll, completed_codes, along, ll_seconds = _e_step(request, state, rng)
        completed = Dataset(request.dataset.names, request.dataset.states, completed_codes)
        if it == 1 and state.contenders:
            _contenders_tables(request, start, state, completed_codes, along, ll_seconds, clock)
        e_done = time.monotonic()
        left = (clock.deadline if final else clock.climb_end) - e_done
        share = climb_share(it, left)
        m_method = _m_step_method(request, share, final)
        depth = 1 if m_method == "localsearch" else cache_depth(request.n, request.depth, policy.em_cache_families)
        state.problem, state.held = m_step_problem(
            completed, request.copies, request.score, request.treewidth, state.parents, request.depth, depth,
            e_done + (0.3 * left if final else max(share, 0.1 * left)), request.forbidden, request.required)
        cache_done = time.monotonic()
        overhead = cache_done - began
        current = make_solution(state.problem, state.parents, bound=None, status="feasible", method="em start",
                                order_hint=state.order)
        previous = current.score
        left = seconds_to(clock.deadline)
        if left <= 0.1:
            state.stopped, state.sol = "time", current
            break
        if final:  # the rest; converged early, at most the final share (EM has ended: return)
            share = min(left - 0.05, policy.em_final_share * limit) if converged else left - 0.05
        else:
            share = climb_share(it, left)
        takes_start = get_method(m_method).warm_start  # a method without starts re-solves from scratch
        found = request.solve(state.problem, m_method, time_limit=share, seed=request.seed,
                              warm_start=current if takes_start else None)
        sol = state.sol = found if found.parents is not None and found.score >= current.score else current
        state.parents = [tuple(p) for p in sol.parents]
        state.order = list(sol.elimination_order) if sol.elimination_order is not None else network_order(state.parents)
        state.cpts = fit_cpts(completed_codes, request.arities, state.parents, request.ess, copies=request.copies)
        gain = sol.score - previous
        record = {"iteration": it, "expected_score": sol.score, "previous_score": previous,
                  "observed_log_likelihood": observed_ll, "arcs": sum(len(p) for p in state.parents),
                  "seconds": round(time.monotonic() - began, 3),
                  "e_step_seconds": round(e_done - began, 3), "cache_seconds": round(cache_done - e_done, 3)}
        state.iterations.append(record)
        request.say(f"structural EM {it}: expected score {sol.score:,.2f} ({gain:+,.2f} on the same completions), "
                    f"observed-cell log-likelihood before it {observed_ll:,.2f}, {record['arcs']} arcs, "
                    f"{record['seconds']:.1f} s (E-step {record['e_step_seconds']:.1f} s, "
                    f"scores {record['cache_seconds']:.1f} s)")
        # converged when the structure no longer gains and the tables no longer move the
        # observed cells' likelihood (with the structure held, an iteration is EM on the
        # tables, which may still be climbing)
        before = state.iterations[-2]["observed_log_likelihood"] if len(state.iterations) > 1 else -math.inf
        if final:
            state.stopped = "converged" if converged else "time"
            break
        if gain <= request.tolerance * abs(previous) and observed_ll - before <= request.tolerance * abs(observed_ll):
            state.stopped = "converged"
            if not polish:
                break
            converged = True
        if seconds_to(clock.deadline) <= 0.1:
            state.stopped = "time"
            break
    return state
