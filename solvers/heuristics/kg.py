"""k-G: greedy learning of bounded-treewidth networks along sampled orders.

Scanagatta, Corani, de Campos & Zaffalon (2016), Sec. 3 and 3.2. For a random order of
the variables: the first k+1 variables form a (k+1)-clique of the k-tree and their best
DAG is learned exactly (here the Silander–Myllymäki DP over parent sets inside that
clique); each later variable takes its highest-scoring cached parent set that is a
subset of some k-clique of the current k-tree, and joins the k-tree attached to that
k-clique (which adds the k new k-cliques C∖{u} ∪ {v}). The network's moral graph stays
inside the k-tree, so its treewidth is ≤ k, and the reverse insertion order is a
perfect elimination order of the k-tree (the certificate). Orders that differ only
inside the first k+1 positions give the same first clique, whose DP is memoised (the
paper's order pruning). Anytime: orders are sampled until the time limit.

Per order O(n·(c + 2^k·k)) with c the candidates per variable: the k-cliques' subsets are
kept in a dictionary sorted tuple → k-clique, so finding a variable's best parent set
inside some k-clique is one look-up per candidate, best first, and a new variable adds
only the 2^k − 1 subsets that contain it.
"""

from __future__ import annotations

import itertools
import random
import time

from twbn.formulations.problem import Problem
from twbn.formulations.solution import Solution
from twbn.scoring.cache import ParentSet, ScoreCache
from twbn.solvers.control import RunControl, cooperating
from twbn.solvers.heuristics.anytime import DEFAULT_TIME_LIMIT, Anytime, whole_clique_solution
from twbn.solvers.exact.unbounded import unbounded_optimum



class _KG:
    def __init__(self, problem: Problem):
        self.problem = problem
        self.k = problem.treewidth
        cand = problem.candidates
        self.n = problem.n
        # (parent set, score) best first; parent sets are sorted tuples, which are also
        # the keys of the k-cliques' subsets below (no n-bit masks: n can be 10,000)
        self.cands = [list(zip(cand.parent_sets[v], cand.scores[v].tolist())) for v in range(self.n)]
        self.first_memo: dict[frozenset, tuple[list[ParentSet], float] | None] = {}

    def first_clique(self, clique: tuple[int, ...]):
        """Best DAG inside the clique; parents listed in sorted vertex order."""
        clique = tuple(sorted(clique))
        key = frozenset(clique)
        if key in self.first_memo:
            return self.first_memo[key]
        local = {v: i for i, v in enumerate(clique)}
        fams = []
        for v in clique:
            fam = {tuple(local[p] for p in ps): s for ps, s in self.cands[v] if all(p in key for p in ps)}
            fams.append(fam)
        result = None
        if all(fams):
            sub = ScoreCache.from_mapping([str(v) for v in clique], fams)
            try:
                parents, score = unbounded_optimum(sub)
                result = ([tuple(sorted(clique[p] for p in ps)) for ps in parents], score)
            except ValueError:
                result = None
        self.first_memo[key] = result
        return result

    def start(self, head: tuple[int, ...]):
        """The network and k-tree after the first clique ``head`` (sorted): (parents,
        score, inside) with ``inside`` mapping every subset (sorted tuple) of some k-clique
        to one k-clique holding it; None if the clique has no DAG of cached sets."""
        first = self.first_clique(head)
        if first is None:
            return None
        parents: list[ParentSet | None] = [None] * self.n
        for v, ps in zip(head, first[0]):
            parents[v] = ps
        inside: dict[tuple[int, ...], tuple[int, ...]] = {}
        for c in itertools.combinations(head, self.k):
            for r in range(self.k + 1):
                for sub in itertools.combinations(c, r):
                    inside.setdefault(sub, c)
        return parents, first[1], inside

    def attach(self, inside: dict, c: tuple[int, ...], v: int) -> list[tuple[int, ...]]:
        """v joins the k-tree at k-clique c: the new k-cliques are c − {u} + {v}. Subsets
        without v are already keys; the new keys are S + {v} for each proper subset S of c,
        held by the new clique c − {u} + {v} for any u ∉ S. Returns the new keys."""
        new = []
        for r in range(self.k):
            for sub in itertools.combinations(c, r):
                u = next(w for w in c if w not in sub)
                key = tuple(sorted(sub + (v,)))
                inside[key] = tuple(sorted(c[:c.index(u)] + c[c.index(u) + 1:] + (v,)))
                new.append(key)
        return new

    def network(self, order: list[int]):
        """The k-G network for ``order``: (parents, score, insertion order) or None."""
        k = self.k
        got = self.start(tuple(sorted(order[: k + 1])))
        if got is None:
            return None
        parents, score, inside = got
        for v in order[k + 1:]:
            for ps, s in self.cands[v]:
                c = inside.get(ps)
                if c is not None:
                    parents[v] = ps
                    score += s
                    break
            else:
                return None
            self.attach(inside, c, v)
        return parents, score, order


def solve_kg(
    problem: Problem, *, time_limit: float | None = None, seed: int | None = None, max_iterations: int | None = None, control: "RunControl | None" = None
) -> Solution:
    """Anytime k-G until ``time_limit`` (default 10 s) or ``max_iterations`` orders;
    the sequence of orders is reproducible from ``seed`` (so with ``max_iterations`` and
    no time limit, so is the result)."""
    if problem.treewidth is None or problem.treewidth < 1:
        raise ValueError("method kg needs a treewidth bound k >= 1 (--treewidth)")
    t0 = time.monotonic()
    limit = DEFAULT_TIME_LIMIT if time_limit is None and max_iterations is None else time_limit
    rng = random.Random(seed)
    kg = _KG(problem)
    n = problem.n
    if n <= problem.treewidth + 1:
        return whole_clique_solution(problem, t0, method="kg", seed=seed, time_limit=time_limit)
    run = Anytime(limit, max_iterations, t0, control)
    order = list(range(n))
    with cooperating(control):
        while run.next_try():
            rng.shuffle(order)
            got = kg.network(list(order))
            if got is not None:
                run.offer(got[1], got[0], got[2][::-1])
    return run.solution(problem, {"distinct_first_cliques": len(kg.first_memo)}, method="kg", seed=seed,
                        time_limit=time_limit)
