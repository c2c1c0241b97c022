"""k-A*: the best network of the k-G class for a sampled order, by A* over clique choices.

Scanagatta, Corani, de Campos & Zaffalon (2016), Sec. 3.1. For an order of the variables
the first k+1 form the initial (k+1)-clique and get their best DAG exactly (as in k-G,
solvers/heuristics/kg.py); then each later variable v_j must be attached to one k-clique C of the
k-tree built so far and takes its best cached parent set inside C. k-G takes the clique
of the best parent set greedily; k-A* searches all clique choices:

- a state after position j is the k-tree so far (its list of k-cliques) and the score g
  of the parent sets chosen; its successors attach v_{j+1} to each k-clique;
- the heuristic h(j) = Σ_{i>j} best score of v_i over cached sets of ≤ k parents among
  v_1 … v_{i−1} is admissible (any completion picks such sets), so the first complete
  state popped is the best network for the order (among networks inside a k-tree built
  along it);
- cliques whose best parent set for v coincide lead to different k-trees and are kept;
  the search stops at ``max_expansions`` states per order (or at the time limit), and
  then completes the best open state greedily (k-G's rule), so the result stays valid but is no longer proven best
  for its order (``stats['truncated_orders']`` counts such orders).

Anytime over orders until the time limit, like k-G; orders that share the first k+1
variables reuse the memoised first-clique DAG.
Per order: O(E · (c + k²)) for E expanded states and c candidates per variable.
"""

from __future__ import annotations

import heapq
import time

from twbn.formulations.problem import Problem
from twbn.formulations.solution import SolverResult
from twbn.solvers.control import RunControl
from twbn.solvers.budget import Budget, passed
from twbn.solvers.heuristics.anytime import require_bound, search
from twbn.solvers.policy import DEFAULT_POLICY, Policy
from twbn.solvers.heuristics.kg import _KG
from twbn.solvers.method import Method
from twbn.solvers.method_options import KastarOptions

__all__ = ["solve_kastar", "METHOD"]


class _KAStar(_KG):
    def __init__(self, problem: Problem, policy: Policy):
        super().__init__(problem, policy)
        # bitmask form: "inside the predecessors" is a subset test against a large set
        self.masked = [[(sum(1 << p for p in ps), s, ps) for ps, s in c] for c in self.cands]

    def _best_inside(self, v: int, clique_mask: int):
        for m, s, ps in self.masked[v]:  # best first
            if m & ~clique_mask == 0:
                return s, ps
        return None

    def network_astar(self, order: list[int], max_expansions: int, deadline: float | None = None):
        """(parents, score, order, truncated) of the best k-G-class network for the
        order, or None when no clique choice gives every variable a cached parent set."""
        k = self.k
        head = tuple(sorted(order[: k + 1]))
        first = self.first_clique(head)
        if first is None:
            return None
        first_parents = dict(zip(head, first[0]))
        rest = order[k + 1:]
        # admissible h: best set of ≤ k parents among all predecessors
        before = 0
        for v in order[: k + 1]:
            before |= 1 << v
        h_tail = [0.0] * (len(rest) + 1)
        bests = []
        for v in rest:
            got = self._best_inside(v, before)
            if got is None:
                return None
            bests.append(got[0])
            before |= 1 << v
        for j in range(len(rest) - 1, -1, -1):
            h_tail[j] = h_tail[j + 1] + bests[j]
        mask_of = lambda c: sum(1 << u for u in c)  # noqa: E731
        start_cliques = tuple(tuple(sorted(set(head) - {u})) for u in head)
        # heap of (−f, tie, j, g, cliques, choices, attached): choices[i] = parent set of
        # rest[i], attached[i] the k-clique it joined
        tie = 0
        heap = [(-(first[1] + h_tail[0]), tie, 0, first[1], start_cliques, (), ())]
        expansions = 0
        while heap:
            negf, _, j, g, cliques, choices, attached = heapq.heappop(heap)
            if j == len(rest):
                return self._assemble(first_parents, rest, choices), g, order, False
            expansions += 1
            if expansions > max_expansions or passed(deadline):
                return self._greedy_finish(first_parents, head, rest, j, g, choices, attached, order)
            v = rest[j]
            for c in cliques:
                got = self._best_inside(v, mask_of(c))
                if got is None:
                    continue
                s, ps = got
                new = cliques + tuple(tuple(sorted(set(c) - {u} | {v})) for u in c)
                tie += 1
                heapq.heappush(heap, (-(g + s + h_tail[j + 1]), tie, j + 1, g + s, new, choices + (ps,),
                                      attached + (c,)))
        return None

    def _assemble(self, first_parents, rest, choices):
        parents = [None] * self.n
        for v, ps in first_parents.items():
            parents[v] = ps
        for v, ps in zip(rest, choices):
            parents[v] = ps
        return parents

    def _greedy_finish(self, first_parents, head, rest, j, g, choices, attached, order):
        """k-G's greedy step for ``rest[j:]`` from the k-tree the search has built so far;
        (parents, score, order, True) or None."""
        got = self.complete(head, rest, attached)
        if got is None:
            return None
        return self._assemble(first_parents, rest, list(choices) + got[0]), g + got[1], order, True


def solve_kastar(
    problem: Problem,
    options: KastarOptions | None = None,
    *,
    time_limit: float | None = None,
    seed: int | None = None,
    control: "RunControl | None" = None, policy: Policy = DEFAULT_POLICY,
) -> SolverResult:
    """The best network of width ≤ k that k-A* builds along random orders (Scanagatta et
    al. 2016, Sec. 3.1: an A* search over the k-cliques each variable may join), until
    ``time_limit`` or ``options.max_iterations`` orders.

    Parameters
    ----------
    problem : Problem
        A problem with a treewidth bound k >= 1.
    options : KastarOptions, optional
        ``max_iterations``: stop after this many orders; ``max_expansions``: nodes one A*
        search may expand before it completes its order greedily (``stats``'
        ``truncated_orders`` counts those); the defaults when None.
    time_limit : float, optional
        Seconds; 10 when neither it nor ``max_iterations`` is given.
    seed : int, optional
        Seeds the orders: with ``max_iterations`` and no time limit the result is
        reproducible.
    control : RunControl, optional
        Stop requests (the best network so far is returned) and progress.

    Returns
    -------
    SolverResult
        Status ``feasible`` (k-A* proves no bound), the best network with the perfect
        elimination order of its k-tree as certificate.

    Raises
    ------
    ParameterError
        Without a treewidth bound k >= 1.

    Examples
    --------
    >>> from twbn.scoring.cache import ScoreCache
    >>> cache = ScoreCache.from_mapping("ABCD", [{(): -10.0, (1,): -7.0, (1, 2): -4.0}, {(): -10.0},
    ...                                          {(): -10.0, (1,): -9.0}, {(): -10.0, (0,): -6.0}])
    >>> sol = solve_kastar(Problem(cache, 1), KastarOptions(max_iterations=20), seed=0)
    >>> sol.status, sol.score, sol.width
    ('feasible', -32.0, 1)
    """
    options = options or KastarOptions()
    max_iterations, max_expansions = options.max_iterations, options.max_expansions
    require_bound(problem, "kastar")
    t0 = time.monotonic()
    kastar = _KAStar(problem, policy)
    order = list(range(problem.n))
    truncated = 0

    def build(rng, deadline):
        nonlocal truncated
        rng.shuffle(order)
        got = kastar.network_astar(list(order), max_expansions, deadline)
        if got is None:
            return None
        truncated += got[3]
        return got[:3]

    return search(problem, "kastar", build, t0=t0, time_limit=time_limit, seed=seed, max_iterations=max_iterations,
                  control=control, stats=lambda: {"truncated_orders": truncated, "max_expansions": max_expansions}, policy=policy)


def _run(problem: Problem, options: KastarOptions, budget: Budget, *, seed: int | None) -> SolverResult:
    return solve_kastar(problem, options, time_limit=budget.limit(), seed=seed, control=budget.control,
                        policy=budget.policy)


#: k-A* as the registry lists it.
METHOD = Method("kastar", _run, options=KastarOptions, summary="k-A* (Scanagatta et al. 2016)", min_treewidth=1,
                seeded=True)
