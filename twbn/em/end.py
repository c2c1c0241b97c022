"""Structural EM's end: the best of EM's last network, its start and its rivals by the
observed cells' score, and what the result says of its bound and status."""

from __future__ import annotations

from twbn.em.network import observed_score
from twbn.em.request import EMRequest
from twbn.em.steps import Climb
from twbn.formulations.solution import make_solution
from twbn.scoring.posterior import cheapest_order

__all__ = ["choose_end", "finish"]


def choose_end(request: EMRequest, state: Climb) -> tuple[str, dict]:
    """EM climbs the observed cells' likelihood from the start, but the climb is a search
    and may end below it: keep the best of EM's end and its rivals by the observed cells'
    log-likelihood, exact under the bound (a rival's tables by a round of EM), less the
    policy's ``em_end_penalty`` a free parameter (AIC: it ranked them as held-out rows did
    where BIC did not). ``state`` takes the kept network. Returns its name and the scores
    compared."""
    chosen, compared = "em", {}
    ended = [tuple(p) for p in state.parents]
    others = [(name, ps, o) for name, ps, o in state.contenders if ps != ended and name in state.tables]
    if not others:
        return chosen, compared
    codes, arities, weight = request.codes, request.arities, request.policy.em_end_penalty
    best = compared["em"] = observed_score(codes, arities, state.parents, state.cpts,
                                           cheapest_order(state.parents, arities, state.order), penalty=weight)
    for name, rival, rival_order in others:
        compared[name] = observed_score(codes, arities, rival, state.tables[name],
                                        cheapest_order(rival, arities, rival_order), penalty=weight)
        if compared[name] > best:
            best, chosen = compared[name], name
            state.parents, state.order, state.cpts = rival, rival_order, state.tables[name]
    if chosen != "em":
        state.sol = make_solution(state.problem, state.parents, bound=None, status="feasible",
                                  method=state.sol.method, order_hint=state.order)
    request.say(f"structural EM: the observed cells' log-likelihood less {weight:g} a free parameter, of "
                + ", of ".join(f"{'its end' if name == 'em' else 'its ' + name} {value:,.2f}"
                               for name, value in compared.items())
                + f": keeps {'its end' if chosen == 'em' else 'its ' + chosen}")
    return chosen, compared


def finish(state: Climb, wall: float) -> None:
    """The result's wall time (every iteration's, not the last M-step's), its bound's
    source, and its status: optimal for the last completions only, EM climbs the
    observed-data objective without proving an optimum of it (the M-step's bound stays,
    with its scope)."""
    sol = state.sol
    sol.wall_time = round(wall, 4)
    if sol.bound is not None:
        sol.stats["bound_source"] = ("structural EM's last M-step: " + sol.stats.get("bound_source", "its method's bound")
                                     + ", over the expected counts of its completions")
    if sol.status == "optimal":
        sol.status = "feasible"
        sol.stats["m_step_status"] = "optimal"
