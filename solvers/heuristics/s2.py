"""S2 and S2+: sample (S2) or search (S2+) a k-tree, then learn the best DAG inside it.

As reimplemented in Scanagatta, Corani, de Campos & Zaffalon (2016), Sec. 3.4, from Nie,
de Campos & Ji (2015, S2; 2016, S2+):

- Informative Score of a k-tree T: IS(T) = S_mi(T) / |S_l(T)|, with S_mi(T) the sum of
  the pairwise informativeness over the edges of T and S_l(T) = Σ_i max score of a
  cached parent set of i that fits in T (family a clique of T), acyclicity dropped.
- S2: draw k-trees uniformly (formulations/ktree_codes.py), accept each with probability
  min(1, IS(T)/IS(T*)), T* the best-IS k-tree so far; every accepted k-tree goes to
  phase 2.
- S2+: from the k+1 variables of largest total informativeness, the k-tree of largest
  S_mi by A* over attachments (``_best_k_tree``); further k-trees from random initial
  cliques. Each goes to phase 2.
- Phase 2: the best DAG whose moral graph lies inside the k-tree, exactly, as the
  reimplementation does (it used GOBNILP): the super-structure DP or the cluster-cut ILP
  in its within-a-graph mode; ``phase2="auto"`` (default) picks by k (the policy's ``s2_auto_dp_max_k``).

Deviations, stated: pairwise informativeness is read from the score cache, not the data:
w_ij = max(0, f_i({j}) − f_i(∅), f_j({i}) − f_j(∅)) — for BIC that is N·I(X_i;X_j) minus
the single-arc penalty, the mutual information made comparable to the scores; S2+'s A*
maximises S_mi (the additive part of IS; the ratio is not additive), and ranks nothing
else by it.
"""

from __future__ import annotations

import gc
import heapq
import itertools
import random
import time

import numpy as np

from twbn.formulations.graphs import Adjacency, fits_in_graph
from twbn.formulations.ktree_codes import random_k_tree
from twbn.formulations.problem import Problem
from twbn.formulations.solution import SolverResult, make_solution
from twbn.scoring.cache import ScoreCache
from twbn.solvers.control import RunControl, cooperating
from twbn.solvers.heuristics.anytime import Anytime, require_bound
from twbn.solvers.exact.superstructure_dp import best_dag_in_graph, greedy_dag_in_chordal_graph

from twbn.solvers.budget import Budget, deadline_in, passed, seconds_to
from twbn.solvers.policy import DEFAULT_POLICY, Policy
from twbn.solvers.method import Method
from twbn.solvers.method_options import S2Options
from twbn.scoring.errors import ParameterError

__all__ = ["pair_weights", "informative_score", "solve_s2", "METHOD", "METHOD_PLUS"]
PHASE2 = ("auto", "dp", "cuts")

def pair_weights(cache: ScoreCache) -> np.ndarray:
    """Symmetric n×n matrix of the informativeness w_ij read from the cache (0 where the
    single-parent sets or ∅ are not cached)."""
    n = cache.n_variables
    w = np.zeros((n, n))
    for i in range(n):
        fam = dict(zip(cache.parent_sets[i], cache.scores[i].tolist()))
        empty = fam.get(())
        if empty is None:
            continue
        for ps, s in fam.items():
            if len(ps) == 1:
                j = ps[0]
                w[i, j] = max(w[i, j], s - empty)
    w = np.maximum(w, w.T)
    return np.maximum(w, 0.0)


def informative_score(adj: Adjacency, w: np.ndarray, cache: ScoreCache) -> float:
    """IS(T) = S_mi(T) / |S_l(T)|; 0 when some variable has no cached set inside T."""
    s_mi = sum(w[a, b] for a in adj for b in adj[a] if a < b)
    s_l = 0.0
    for v in range(cache.n_variables):
        for ps, s in zip(cache.parent_sets[v], cache.scores[v].tolist()):  # best first
            if fits_in_graph(adj, v, ps):
                s_l += s
                break
        else:
            return 0.0
    return s_mi / abs(s_l) if s_l != 0 else float("inf")


def _best_k_tree(w: np.ndarray, k: int, first: tuple[int, ...], max_expansions: int,
                 deadline: float | None = None, max_open: int = DEFAULT_POLICY.s2_max_open) -> tuple[Adjacency, bool]:
    """The k-tree containing the clique ``first`` with the largest S_mi, by A*: a state is
    the k-tree so far; a move attaches an unplaced vertex v to a k-clique C (gain
    Σ_{u∈C} w_vu). h = Σ over unplaced v of its k largest weights, admissible since each
    vertex gains exactly k edges when it is attached. Past ``max_expansions`` the best
    open state is completed greedily, as it is at ``deadline`` (time.monotonic()).
    Returns (k-tree, proven best). Memory is bounded by ``max_open`` open states: past
    it the heap array is cut to its first half (a prefix of a heap is a heap, holding the
    best state and the levels nearest it), and the result is no longer proven best.

    A heap entry holds its parent state and its move, not its own k-cliques, so a push is
    O(1) and an expansion costs one (unplaced × cliques) sum of weights: at n = 100, k = 5
    copying the cliques into every child took seconds per expansion."""
    # millions of heap tuples: the cyclic garbage collector's full passes over them took
    # seconds each, past the deadline (none of them is part of a cycle)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _k_tree_search(w, k, first, max_expansions, deadline, max_open)
    finally:
        if was_enabled:
            gc.enable()


def _k_tree_search(w: np.ndarray, k: int, first: tuple[int, ...], max_expansions: int,
                   deadline: float | None, max_open: int) -> tuple[Adjacency, bool]:
    n = w.shape[0]
    topk = np.sort(w, axis=1)[:, ::-1][:, :k].sum(axis=1)
    start_cliques = tuple(tuple(sorted(set(first) - {u})) for u in first)
    g0 = sum(w[a, b] for a, b in itertools.combinations(first, 2))
    h0 = sum(topk[v] for v in range(n) if v not in first)
    root = (frozenset(first), start_cliques, ())  # (placed, k-cliques, moves)
    tie = 0
    heap = [(-(g0 + h0), tie, g0, root, None, None)]
    seen = set()
    expansions = 0
    cut = False
    while heap:
        _, _, g, parent, v, c = heapq.heappop(heap)
        if v is None:
            state = parent
        else:
            placed, cliques, moves = parent
            state = (placed | {v}, cliques + tuple(tuple(sorted(set(c) - {u} | {v})) for u in c),
                     moves + ((v, c),))
        placed, cliques, moves = state
        if len(placed) == n:
            return _build(first, moves), not cut
        key = (placed, frozenset(moves))
        if key in seen:
            continue
        seen.add(key)
        expansions += 1
        if expansions > max_expansions or passed(deadline):
            return _greedy_complete(w, first, placed, list(cliques), list(moves)), False
        h_rest = sum(topk[u] for u in range(n) if u not in placed)
        free = np.array([u for u in range(n) if u not in placed], dtype=np.int64)
        gains = w[free][:, np.array(cliques, dtype=np.int64)].sum(axis=2)  # (free, cliques)
        for a, u in enumerate(free.tolist()):
            base = g + h_rest - topk[u]
            for b, cl in enumerate(cliques):
                tie += 1
                heapq.heappush(heap, (-(base + gains[a, b]), tie, g + gains[a, b], state, u, cl))
        if len(heap) > max_open:
            del heap[max_open // 2:]
            cut = True
    raise ParameterError("no k-tree found")  # unreachable for n > k


def _greedy_complete(w, first, placed, cliques, moves) -> Adjacency:
    """Attach the unplaced vertices one at a time, each time the (vertex, k-clique) pair
    of largest gain (ties: the earliest vertex, then the earliest clique). Each free
    vertex keeps only its best clique so far, updated with the k new cliques of each
    step: O(free·k²) a step, where the whole (free × cliques) table took seconds at
    n = 1,000."""
    n = w.shape[0]
    free = np.array([u for u in range(n) if u not in placed], dtype=np.int64)
    gains = w[free][:, np.array(cliques, dtype=np.int64)].sum(axis=2)  # (free, cliques)
    best_b = gains.argmax(axis=1)
    best = gains[np.arange(len(free)), best_b]
    while len(free):
        a = int(np.argmax(best))
        v, c = int(free[a]), cliques[int(best_b[a])]
        moves.append((v, c))
        new = [tuple(sorted(set(c) - {u} | {v})) for u in c]
        first_new = len(cliques)
        cliques += new
        free, best, best_b = np.delete(free, a), np.delete(best, a), np.delete(best_b, a)
        if len(free):
            g = w[free][:, np.array(new, dtype=np.int64)].sum(axis=2)  # (free, k new cliques)
            j = g.argmax(axis=1)
            top = g[np.arange(len(free)), j]
            better = top > best  # strictly: an earlier clique keeps a tie
            best = np.where(better, top, best)
            best_b = np.where(better, first_new + j, best_b)
    return _build(first, tuple(moves))


def _build(first, moves) -> Adjacency:
    adj: Adjacency = {}
    for v in first:
        adj[v] = set(first) - {v}
    for v, c in moves:
        adj[v] = set(c)
        for u in c:
            adj[u].add(v)
    return adj


def _phase2(problem: Problem, adj: Adjacency, phase2: str, deadline: float | None = None, first: bool = False, *,
            policy: Policy):
    """(parents, score, certificate order, proven) of the best DAG inside the k-tree, or
    None. With a ``deadline`` the cluster-cut ILP stops there and its incumbent (a valid
    network inside the k-tree, not proven best) is returned with proven = False; it is
    not started with less than ``policy.s2_phase2_min_s`` left unless this is the ``first``
    network, which gets at least 0.5 s."""
    if phase2 == "auto":
        phase2 = "dp" if problem.treewidth <= policy.s2_auto_dp_max_k else "cuts"
    if phase2 == "dp":
        try:
            parents, score, order = best_dag_in_graph(problem.candidates, adj, deadline=deadline)
        except ValueError:
            return None
        except TimeoutError:
            if not first:
                return None
            # without a network yet: the k-tree's greedy DAG, in milliseconds (at n = 1,000
            # the DP takes 3 s at k = 3)
            try:
                parents, score, order = greedy_dag_in_chordal_graph(problem.candidates, adj)
            except ValueError:
                return None
            return parents, score, order, False
        return parents, score, order, True
    from twbn.solvers.cuts.branch_and_cut import solve_cuts

    limit = None if deadline is None else seconds_to(deadline)
    if limit is not None and limit < policy.s2_phase2_min_s:
        if not first:
            return None  # too little left to build the model; the k-tree is dropped
        limit = max(0.5, limit)  # without a network yet, one is worth a little overrun
    sol = solve_cuts(problem, within=adj, time_limit=limit, policy=policy)
    if sol.parents is None:
        return None
    return sol.parents, sol.score, sol.elimination_order, sol.status == "optimal"


def solve_s2(
    problem: Problem,
    options: S2Options | None = None,
    *,
    plus: bool = False,
    time_limit: float | None = None,
    seed: int | None = None,
    control: "RunControl | None" = None,
    phase2: str = "auto",
    policy: Policy = DEFAULT_POLICY,
) -> SolverResult:
    """The best network of width ≤ k found inside sampled k-trees (S2 of Nie et al. 2015
    as Scanagatta et al. 2016, Sec. 3.4, reimplement it; with ``plus``, S2+: k-trees by
    an A* search on the informativeness), until
    ``time_limit`` or ``options.max_iterations`` k-trees went through phase 2.

    Parameters
    ----------
    problem : Problem
        A problem with a treewidth bound k >= 1.
    options : S2Options, optional
        ``max_iterations``: stop after this many k-trees through phase 2;
        ``max_expansions``: nodes one S2+ search may expand; the defaults when None.
    plus : bool, default False
        S2+ instead of S2.
    time_limit : float, optional
        Seconds; 10 when neither it nor ``max_iterations`` is given.
    seed : int, optional
        Seeds the k-trees and the acceptance test: with ``max_iterations`` and no time
        limit the result is reproducible.
    control : RunControl, optional
        Stop requests (the best network so far is returned) and progress.
    phase2 : {"auto", "dp", "cuts"}, default "auto"
        How phase 2 finds the best network inside a k-tree: the DP over its tree
        decomposition, the cluster-cut ILP restricted to it, or (auto) the DP up to
        k = ``policy.s2_auto_dp_max_k`` and the ILP above.

    Returns
    -------
    SolverResult
        Status ``feasible`` (S2 proves no bound), the best network with its k-tree's
        elimination order as certificate; ``stats`` counts sampled k-trees and phase-2
        calls the deadline cut short.

    Raises
    ------
    ParameterError
        Without a treewidth bound k >= 1, or for an unknown ``phase2``.

    Examples
    --------
    >>> from twbn.scoring.cache import ScoreCache
    >>> cache = ScoreCache.from_mapping("ABCD", [{(): -10.0, (1,): -7.0, (1, 2): -4.0}, {(): -10.0},
    ...                                          {(): -10.0, (1,): -9.0}, {(): -10.0, (0,): -6.0}])
    >>> sol = solve_s2(Problem(cache, 1), S2Options(max_iterations=10), plus=True, seed=0)
    >>> sol.status, sol.score, sol.width
    ('feasible', -32.0, 1)
    """
    options = options or S2Options()
    max_iterations, max_expansions = options.max_iterations, options.max_expansions
    method = "s2plus" if plus else "s2"
    require_bound(problem, method)
    k = problem.treewidth
    if phase2 not in PHASE2:
        raise ParameterError(f"phase 2 must be one of {', '.join(PHASE2)}, got {phase2!r}")
    t0 = time.monotonic()
    limit = policy.heuristic_time_limit if time_limit is None and max_iterations is None else time_limit
    info = dict(method=method, seed=seed, time_limit=time_limit)
    if problem.n <= k + 1:
        return _one_clique(problem, phase2, policy, t0, info)
    run = Anytime(limit, max_iterations, t0, control)
    k_trees = _KTrees(problem, plus, random.Random(seed), max_expansions, policy)
    unproven = 0  # phase 2 stopped by the deadline before proving its network best
    with cooperating(control):
        while run.next_try():
            adj, accepted = k_trees.next(run)
            if accepted:
                got = _phase2(problem, adj, phase2, run.deadline, first=run.best is None, policy=policy)
                if got is not None:
                    run.offer(got[1], got[0], got[2])
                    unproven += not got[3]
    extra = {"sampled_k_trees": k_trees.sampled, "phase2": phase2, "phase2_unproven": unproven}
    if plus:
        extra["k_trees_proven_best"] = k_trees.proven
    return run.solution(problem, extra, **info)


def _one_clique(problem: Problem, phase2: str, policy: Policy, t0: float, info: dict) -> SolverResult:
    """n <= k + 1: one k-tree, the whole clique, and phase 2 over it."""
    n = problem.n
    got = _phase2(problem, {v: set(range(n)) - {v} for v in range(n)}, phase2, policy=policy)
    if got is None:
        return SolverResult(None, None, None, "infeasible", wall_time=round(time.monotonic() - t0, 4), stats={}, **info)
    return make_solution(problem, got[0], bound=None, status="feasible", order_hint=got[2],
                         wall_time=round(time.monotonic() - t0, 4),
                         stats={"iterations": 1, "median_score": got[1], "max_score": got[1]}, **info)


class _KTrees:
    """The k-trees tried, one a try: S2+ the best by informative score from a first
    clique (the k + 1 strongest variables, then random ones), S2 uniform ones accepted
    by the Metropolis rule on their informative score."""

    def __init__(self, problem: Problem, plus: bool, rng: random.Random, max_expansions, policy: Policy):
        self.problem, self.plus, self.rng = problem, plus, rng
        self.max_expansions, self.policy = max_expansions, policy
        self.w = pair_weights(problem.candidates)
        self.strength = self.w.sum(axis=1)
        self.sampled = self.proven = 0
        self.best_is = None

    def next(self, run: Anytime) -> tuple:
        """(the next k-tree's adjacency, whether phase 2 takes it)."""
        self.sampled += 1
        return self._searched(run) if self.plus else self._sampled()

    def _searched(self, run: Anytime) -> tuple:
        n, k = self.problem.n, self.problem.treewidth
        if run.tries == 1:
            first = tuple(sorted(np.argsort(-self.strength, kind="stable")[: k + 1].tolist()))
        else:
            first = tuple(sorted(self.rng.sample(range(n), k + 1)))
        # the search may take half of what is left, phase 2 needs the rest
        search_deadline = None if run.deadline is None else \
            deadline_in(self.policy.ktree_share * run.left())
        adj, exact = _best_k_tree(self.w, k, first, self.max_expansions, search_deadline, self.policy.s2_max_open)
        self.proven += exact
        return adj, True

    def _sampled(self) -> tuple:
        adj = random_k_tree(self.problem.n, self.problem.treewidth, self.rng)
        score_is = informative_score(adj, self.w, self.problem.candidates)
        best_is = self.best_is
        accepted = score_is > 0 and (best_is is None or best_is <= 0 or self.rng.random() < min(1.0, score_is / best_is))
        if best_is is None or score_is > best_is:
            self.best_is = score_is
        return adj, accepted


def _runner(plus: bool):
    def run(problem: Problem, options: S2Options, budget: Budget, *, seed: int | None, solver: str) -> SolverResult:
        return solve_s2(problem, options, plus=plus, time_limit=budget.limit(), seed=seed, control=budget.control,
                        phase2=solver, policy=budget.policy)

    return run


#: S2 and S2+ as the registry lists them; phase 2 is the backend (``--solver``).
METHOD = Method("s2", _runner(False), options=S2Options, summary="S2: sampled k-trees, phase 2 by DP or cuts",
                backends=PHASE2, min_treewidth=1, seeded=True)
METHOD_PLUS = Method("s2plus", _runner(True), options=S2Options,
                     summary="S2+: k-trees by informative-score search, phase 2 by DP or cuts", backends=PHASE2,
                     min_treewidth=1, seeded=True)
