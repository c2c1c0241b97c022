"""k-MAX: greedy learning of bounded-treewidth networks by least normalised loss.

Scanagatta, Corani, Zaffalon, Yoo & Kang (2018), "Efficient learning of bounded-treewidth
Bayesian networks from complete and incomplete data sets", IJAR 95, Sec. 4 (BLIP's
``solver.kmax``). Like k-G it grows a k-tree and keeps every family inside one of its
k-cliques, so the moral graph has treewidth ≤ k; unlike k-G, the next variable is not
taken from a random order but chosen:

1. a random variable and its candidate parents (from its best parent sets, best first;
   random variables if too few) form the first (k+1)-clique, whose best DAG is learned
   exactly (as in k-G, memoised);
2. each variable not yet placed has its best *admissible* parent set: the best cached set
   inside some k-clique of the current k-tree. Its normalised loss is
   (best − chosen) / (best − worst) over its own cached scores (0 when all are equal);
3. the variable of least loss (ties broken at random) is placed with that set, attached
   to the k-clique holding it, which adds the k new k-cliques C ∖ {u} ∪ {v};
4. only the new k-cliques can improve another variable's choice, so only the variables
   with a candidate set inside a new k-clique are looked at again (an index from parent
   set to the variables that have it, and a priority queue with lazy deletion).

Restarts from new random first cliques until the time is up (anytime); reproducible from
the seed. The reverse insertion order is a perfect elimination order of the k-tree: the
certificate.
"""

from __future__ import annotations

import heapq
import random
import time
from collections import defaultdict

from twbn.formulations.problem import Problem
from twbn.formulations.solution import SolverResult
from twbn.scoring.cache import ParentSet
from twbn.solvers.control import RunControl
from twbn.solvers.budget import Budget
from twbn.solvers.heuristics.anytime import require_bound, search
from twbn.solvers.policy import DEFAULT_POLICY, Policy
from twbn.solvers.method import Method
from twbn.solvers.method_options import KmaxOptions
from twbn.solvers.heuristics.kg import _KG

__all__ = ["solve_kmax"]


class _KMax(_KG):
    def __init__(self, problem: Problem, policy: Policy):
        super().__init__(problem, policy)
        # parent set → [(variable, rank of the set among the variable's candidates)]
        self.by_set: dict[ParentSet, list[tuple[int, int]]] = defaultdict(list)
        for v, cands in enumerate(self.cands):
            for rank, (ps, _) in enumerate(cands):
                self.by_set[ps].append((v, rank))
        self.range = []
        for cands in self.cands:
            best, worst = cands[0][1], cands[-1][1]
            self.range.append(best - worst)

    def loss(self, v: int, rank: int) -> float:
        """(best − chosen) / (best − worst) of v's cached scores; 0 when they are all equal."""
        span = self.range[v]
        return 0.0 if span <= 0 else (self.cands[v][0][1] - self.cands[v][rank][1]) / span

    def start_clique(self, v0: int, rng: random.Random) -> tuple[int, ...]:
        """v0, then its candidate parents from its best sets on, then random variables."""
        clique = [v0]
        for ps, _ in self.cands[v0]:
            for p in ps:
                if p not in clique and len(clique) <= self.k:
                    clique.append(p)
            if len(clique) == self.k + 1:
                break
        others = [u for u in range(self.n) if u not in clique]
        rng.shuffle(others)
        clique += others[: self.k + 1 - len(clique)]
        return tuple(sorted(clique))

    def network(self, v0: int, rng: random.Random):
        """The k-MAX network from first vertex ``v0``: (parents, score, insertion order), or None."""
        n = self.n
        head = self.start_clique(v0, rng)
        got = self.start(head)
        if got is None:
            return None
        parents, score, inside = got
        order = list(head)
        placed = [False] * n
        for v in head:
            placed[v] = True
        # rank[v]: v's best admissible candidate so far (len(cands) = none yet)
        rank = [len(c) for c in self.cands]
        heap: list[tuple[float, float, int, int]] = []
        for v in range(n):
            if placed[v]:
                continue
            for r, (ps, _) in enumerate(self.cands[v]):
                if ps in inside:
                    rank[v] = r
                    heapq.heappush(heap, (self.loss(v, r), rng.random(), v, r))
                    break
        while heap:
            _, _, v, r = heapq.heappop(heap)
            if placed[v] or r != rank[v]:
                continue  # placed already, or a better choice was pushed since
            ps, s = self.cands[v][r]
            c = inside[ps]
            parents[v] = ps
            score += s
            placed[v] = True
            order.append(v)
            for key in self.attach(inside, c, v):
                for w, rw in self.by_set.get(key, ()):
                    if not placed[w] and rw < rank[w]:
                        rank[w] = rw
                        heapq.heappush(heap, (self.loss(w, rw), rng.random(), w, rw))
        if len(order) < n:
            return None  # some variable never had an admissible set (no ∅ among its candidates)
        return parents, score, order


def solve_kmax(
    problem: Problem, options: KmaxOptions | None = None, *, time_limit: float | None = None,
    seed: int | None = None, control: "RunControl | None" = None, policy: Policy = DEFAULT_POLICY,
) -> SolverResult:
    """The best network of width ≤ k that k-MAX builds from random first variables
    (Scanagatta et al. 2018: the variable of least normalised loss joins next), until
    ``time_limit`` or ``options.max_iterations`` networks.

    Parameters
    ----------
    problem : Problem
        A problem with a treewidth bound k >= 1.
    options : KmaxOptions, optional
        ``max_iterations``: stop after this many networks (or at the time limit, whichever
        comes first); the defaults when None.
    time_limit : float, optional
        Seconds; 10 when neither it nor ``max_iterations`` is given.
    seed : int, optional
        Seeds the first variables: with ``max_iterations`` and no time limit the result is
        reproducible.
    control : RunControl, optional
        Stop requests (the best network so far is returned) and progress.

    Returns
    -------
    SolverResult
        Status ``feasible`` (k-MAX proves no bound), the best network with the perfect
        elimination order of its k-tree as certificate.

    Raises
    ------
    ParameterError
        Without a treewidth bound k >= 1.

    Examples
    --------
    A's best family {B, C} closes a triangle, which width 1 does not allow:

    >>> from twbn.scoring.cache import ScoreCache
    >>> cache = ScoreCache.from_mapping("ABCD", [{(): -10.0, (1,): -7.0, (1, 2): -4.0}, {(): -10.0},
    ...                                          {(): -10.0, (1,): -9.0}, {(): -10.0, (0,): -6.0}])
    >>> sol = solve_kmax(Problem(cache, 1), KmaxOptions(max_iterations=20), seed=0)
    >>> sol.status, sol.score, sol.width
    ('feasible', -32.0, 1)
    """
    max_iterations = (options or KmaxOptions()).max_iterations
    require_bound(problem, "kmax")
    t0 = time.monotonic()
    kmax = _KMax(problem, policy)
    return search(problem, "kmax", lambda rng, deadline: kmax.network(rng.randrange(problem.n), rng), t0=t0,
                  time_limit=time_limit, seed=seed, max_iterations=max_iterations, control=control,
                  stats=lambda: {"distinct_first_cliques": len(kmax.first_memo)}, policy=policy)


def _run(problem: Problem, options: KmaxOptions, budget: Budget, *, seed: int | None) -> SolverResult:
    return solve_kmax(problem, options, time_limit=budget.limit(), seed=seed, control=budget.control,
                      policy=budget.policy)


#: k-MAX as the registry lists it.
METHOD = Method("kmax", _run, options=KmaxOptions,
                summary="k-MAX (Scanagatta et al. 2018): the variable of least normalised loss next",
                min_treewidth=1, seeded=True)
