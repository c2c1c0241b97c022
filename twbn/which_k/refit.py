"""The chosen k learned again on every row, from the chosen network, within the
inference budget."""

from __future__ import annotations

import time

from twbn.solvers.budget import seconds_to

__all__ = ["all_rows_problem", "narrowest", "on_all_rows", "refit"]


def all_rows_problem(dataset, k: int, learn_args: dict):
    """The problem of bound ``k`` on ``dataset``'s rows, every family scored from them on
    demand (one scorer for every fold's network, so that a family two folds share is
    counted once); None where the data has missing cells (their score is structural EM's,
    not one family count)."""
    from twbn.formulations.problem import Problem
    from twbn.learn_stages import _arcs
    from twbn.scoring.cache import ScoreCache
    from twbn.scoring.families import FamilyScores

    if dataset.n_missing:
        return None
    names = dataset.names
    scorer = FamilyScores(dataset, learn_args.get("score", "bic"), learn_args.get("ess", 1.0))
    cache = ScoreCache.from_mapping(names, [{(): scorer.score(v, ())} for v in range(len(names))],
                                    arities=[int(a) for a in dataset.arities])
    return Problem(cache, k, _arcs(learn_args.get("forbid", ()), names, "forbidden"),
                   _arcs(learn_args.get("require", ()), names, "required"), scorer)


def on_all_rows(problem, sol):
    """``sol``'s network (learned on a fold) certified on ``problem`` (:func:`all_rows_problem`):
    its score recomputed from every row, its certificate checked, bound None."""
    from twbn.formulations.solution import make_solution
    from twbn.learn_stages import _say_search_space
    from twbn.solution import Solution

    pos = {n: i for i, n in enumerate(problem.names)}
    made = make_solution(problem, sol.parent_indices(), bound=None, status="feasible", method=sol.method,
                         order_hint=[pos[v] for v in sol.elimination_order], seed=sol.seed)
    _say_search_space(problem, made)
    return Solution(made.to_json(problem))


def refit(dataset, k: int, fold_sols: list, deadline: float, learn_args: dict, max_table_size: int | None, learn):
    """The network of bound ``k`` on every row and a sentence on how it was obtained.

    It starts from the best of the folds' networks scored on every row, so it never
    scores below it; where its junction tree is over ``max_table_size`` that start (of
    the size the curve measured) is the answer. With missing cells the start cannot be
    scored; a refit over the budget is run again at the next smaller k.
    """
    problem = all_rows_problem(dataset, k, learn_args)
    starts = [] if problem is None else [on_all_rows(problem, f) for f in fold_sols if f.is_network]
    start = max(starts, key=lambda s: s.score) if starts else None
    left = seconds_to(deadline)
    if start is not None and left < learn_args["policy"].which_k_min_refit_s:
        return start, f"no time left to learn again ({left:.2f} s): the chosen network scored on every row"
    for bound in range(k, 0, -1):
        left = max(seconds_to(deadline), 0.1)
        # started: scoring the rows shares the limit (without it learn adds scoring's
        # seconds to it: cwebkb's 30 s command took 35 s)
        sol = learn(dataset, treewidth=bound, time_limit=left if start is not None or bound == 1 else left / 2,
                    best_so_far=start if bound == k else None, started=time.monotonic(), **learn_args)
        sol = narrowest(sol, dataset.arities)
        if max_table_size is None or (sol.table_size or 0) <= max_table_size:
            how = f"learned again on every row at k = {bound}" + (", from the chosen network" if start else "")
            return sol, how if bound == k else how + f" (k = {k}'s refit was over the table budget)"
        if start is not None and (start.table_size or 0) <= max_table_size:
            return start, (f"the refit's junction tree ({sol.table_size:,} entries) is over max_table_size; "
                           "the chosen network, scored on every row, kept")
    return sol, "no refit fits the table budget: k = 1's kept"


def narrowest(sol, arities):
    """``sol`` with the certificate of the smaller junction tree: its own elimination order
    or min-fill's on its moral graph, where that is within its treewidth bound. A method
    certifies with the first order within the bound; at a slack bound that can be wide: at
    alarm (30 s) the refit at k = 8 returned k = 3's network with an order of width 5,
    3,715 table entries against 937 (2026-12-07)."""
    from twbn.formulations.graphs import elimination_width, junction_tree_size, min_fill_order, moral_graph
    from twbn.solution import Solution

    if not sol.is_network or sol.table_size is None:
        return sol
    parents = sol.parent_indices()
    moral = moral_graph(parents)
    order = min_fill_order(moral)
    width = elimination_width(moral, order)
    size = junction_tree_size(parents, order, [int(a) for a in arities])
    k = sol.treewidth
    if size >= sol.table_size or (k is not None and width > k):
        return sol
    record = sol.to_json()
    names = list(sol.variables)
    record.update({"elimination_order": [names[v] for v in order], "width": width, "table_size": size})
    return Solution(record)
