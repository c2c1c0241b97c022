"""Structural EM's start: EM's other runs (from no arcs, from the available cases), the
network the first E-step draws from, and its first tables."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

from twbn.em.network import m_step_problem, network_order
from twbn.em.request import Clock, EMRequest
from twbn.scoring.data import Dataset
from twbn.scoring.errors import ParameterError
from twbn.scoring.hot_deck import hot_deck
from twbn.scoring.likelihood import em_cpts, fit_cpts

__all__ = ["Start", "other_runs", "first_network"]


@dataclass
class Start:
    """Where the first E-step draws from: the network (``parents``, its ``order``, its
    tables ``cpts``), the learned start kept as a rival of EM's end (``network``: parents
    and order, or None), and the other runs' networks with their EM tables (``runs``) and
    what each did (``records``)."""

    parents: list
    order: list
    cpts: list
    network: tuple | None = None
    runs: dict = field(default_factory=dict)
    records: dict = field(default_factory=dict)


def other_runs(request: EMRequest, clock: Clock, run_em) -> tuple[dict, dict, EMRequest]:
    """From the hot-deck start, EM from no arcs and from the available cases first, on the
    policy's ``em_empty_share`` and ``em_available_share`` (``run_em``: structural EM
    itself). Returns their networks (name -> parents, order, tables), what each did, and
    the request whose policy gives the hot-deck start its seconds of what is left."""
    policy = request.policy
    others_share = policy.em_empty_share + policy.em_available_share
    if request.start != "hot-deck" or others_share <= 0:
        return {}, {}, request
    if others_share + policy.em_start_share >= 1:
        raise ParameterError("the policy's em_empty_share, em_available_share and em_start_share leave EM from "
                             "hot deck no time: their sum must be below 1")
    runs, records = {}, {}
    # no arcs, available cases and hot deck each end better in some cells (alarm k = 2:
    # no arcs, plants k = 5: hot deck, insurance k = 5: available cases), and the
    # observed cells' BIC ranked them as held-out did: run each
    for name, other, share in (("EM from no arcs", "empty", policy.em_empty_share),
                               ("EM from available cases", "available", policy.em_available_share)):
        if share <= 0:
            continue
        began = time.monotonic()
        e_sol, _, e_info = run_em(
            request.dataset, request.treewidth, method="localsearch", time_limit=share * clock.time_limit,
            seed=request.seed, score=request.score, max_parents=request.max_parents, copies=request.copies,
            max_iterations=request.max_iterations, start=other, forbidden=request.forbidden,
            required=request.required, tolerance=request.tolerance, ess=request.ess, solve=request.solve,
            policy=policy, log=lambda line, name=name: request.say(name[3:] + ", " + line))
        runs[name] = ([tuple(p) for p in e_sol.parents], list(e_info["order"]), e_info["cpts"])
        records[name] = {"iterations": len(e_info["iterations"]), "stopped": e_info["stopped"],
                         "seconds": round(time.monotonic() - began, 3)}
    # the rest is hot deck's EM, its start keeping the seconds it has without the others
    # (no more than its part of what is left, where they overran)
    start_seconds = policy.em_start_share * clock.time_limit
    clock.rest()
    policy = dataclasses.replace(policy, em_start_share=min(policy.em_start_share / (1 - others_share),
                                                            start_seconds / max(clock.time_limit, 1e-9)))
    return runs, records, dataclasses.replace(request, policy=policy)


def _learned(request: EMRequest, clock: Clock) -> tuple[list, list]:
    """The hot-deck fill (or the available cases) learned as complete data is, on the
    policy's ``em_start_share``: its families scored level by level, then auto; or
    localsearch over single parents with the rest scored on demand. Returns its parents
    and its certificate's order."""
    policy, n, depth, need = request.policy, request.n, request.depth, request.need
    start_end = clock.t0 + policy.em_start_share * clock.time_limit
    learned = policy.em_start_cache_share > 0
    start_method = "auto" if learned else "localsearch"
    levels = (n - 1 if depth is None else min(depth, n - 1)) if learned else 1
    cache_end = clock.t0 + policy.em_start_cache_share * (start_end - clock.t0) if learned else start_end
    source = Dataset(request.dataset.names, request.dataset.states,
                     hot_deck(request.codes, request.arities, seed=request.seed)) \
        if request.start == "hot-deck" else request.dataset
    cap = depth
    if request.start == "available":  # few parents: a rich family's gain on few rows is noisy
        most = max([policy.em_available_max_parents, *map(len, need)])
        cap = most if depth is None else min(depth, most)
        levels = min(levels, cap)
    first, _ = m_step_problem(source, 1, request.score, request.treewidth, need, cap, levels, cache_end,
                              request.forbidden, request.required, available=request.start == "available")
    found = request.solve(first, start_method, time_limit=max(0.05, start_end - time.monotonic()), seed=request.seed)
    parents = [tuple(p) for p in found.parents] if found.parents is not None else need
    request.say(f"structural EM starts from {start_method}'s network on "
                f"{'the data filled by hot deck' if request.start == 'hot-deck' else 'the available cases'}: "
                f"{sum(len(p) for p in parents)} arcs, {time.monotonic() - clock.t0:.1f} s")
    # its certificate's order: min-fill on a network of width k may find only wider ones
    return parents, list(found.elimination_order) if found.parents is not None else list(range(n))


def first_network(request: EMRequest, clock: Clock) -> Start:
    """The network the first E-step draws from, with its tables: learned (hot deck,
    available cases), the required arcs only (empty), or the caller's."""
    network = None
    if request.start in ("hot-deck", "available"):
        network = _learned(request, clock)
        parents = network[0]
    elif request.start == "empty":  # the required arcs only (none: no arcs)
        parents = list(request.need)
    else:
        parents = request.given
    codes, arities, n = request.codes, request.arities, request.n
    if request.start == "empty" and not request.required:
        # each table the observed frequencies (fit_cpts on the observed cells of one
        # variable at a time)
        cpts = [fit_cpts(codes[v:v + 1][:, codes[v] >= 0], arities[v:v + 1], [()], request.ess)[0] for v in range(n)]
        order = list(range(n))
    else:  # its tables from each family's fully observed rows
        cpts = em_cpts(codes, arities, parents, request.ess, iterations=0)
        order = network[1] if network is not None else network_order(parents)
    return Start(parents, order, cpts, network)
