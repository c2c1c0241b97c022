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

Per order O(n·c·k) with c the candidates a variable scans, compiled (numba): no table
of k-cliques at all. Every vertex v placed after the first clique remembers the k-clique
it was attached to, K_v (its neighbours among earlier vertices); a head vertex, the rest
of the head. A parent set W of placed vertices lies inside some k-clique iff, for its
latest-placed member w, W − {w} ⊆ K_w: w's earlier neighbours are exactly K_w, and W −
{w} must all be earlier neighbours of w; then W ⊆ K_w ∪ {w}, a (k+1)-clique, and the new
variable attaches to K_w ∪ {w} minus its first vertex outside W (∅ attaches to the first
k head vertices). The dictionary of all 2^k subsets of every k-clique, which k-MAX still
uses (``start``, ``attach``), cost k-G 255 tuples per variable at k = 8: 0.08× BLIP's
orders per second on munin (n = 1,041).
"""

from __future__ import annotations

import itertools
import time

import numpy as np
from numba import njit

from twbn.formulations.problem import Problem
from twbn.formulations.solution import SolverResult
from twbn.scoring.cache import ParentSet, ScoreCache
from twbn.solvers.control import RunControl
from twbn.solvers.budget import Budget
from twbn.solvers.heuristics.anytime import require_bound, search
from twbn.solvers.policy import DEFAULT_POLICY, Policy
from twbn.solvers.method import Method
from twbn.solvers.method_options import KgOptions
from twbn.solvers.exact.unbounded import unbounded_optimum

__all__ = ["solve_kg", "METHOD"]





def _greedy_clique(clique: tuple[int, ...], fams: list[dict]) -> tuple[list[ParentSet], float] | None:
    """A DAG inside a clique too large for the exact DP: along the clique's order and its
    reverse, each variable takes its best cached set among those before it; the better of
    the two. ``fams[i]``: variable ``clique[i]``'s sets, in clique positions, to scores."""
    best = None
    m = len(clique)
    for order in (list(range(m)), list(range(m - 1, -1, -1))):
        before: set[int] = set()
        chosen, total = [None] * m, 0.0
        for i in order:
            fits = [(s, ps) for ps, s in fams[i].items() if before.issuperset(ps)]
            if not fits:
                break
            s, ps = max(fits)
            chosen[i], total = tuple(sorted(clique[p] for p in ps)), total + s
            before.add(i)
        else:
            if best is None or total > best[1]:
                best = (chosen, total)
    return best


class _KG:
    def __init__(self, problem: Problem, policy: Policy):
        self.exact_max = policy.kg_first_clique_exact_max
        self.problem = problem
        self.k = problem.treewidth
        cand = problem.candidates
        self.n = problem.n
        # (parent set, score) best first; parent sets are sorted tuples, which are also
        # the keys of the k-cliques' subsets below (no n-bit masks: n can be 10,000)
        self.cands = [list(zip(cand.parent_sets[v], cand.scores[v].tolist())) for v in range(self.n)]
        self.first_memo: dict[frozenset, tuple[list[ParentSet], float] | None] = {}
        #: the largest candidate set: the k-cliques' subsets that can hold one are no larger
        self.max_size = max((len(ps) for fam in self.cands for ps, _ in fam), default=0)
        self._flat = None  # the compiled engine's arrays, built at the first network()
        self._stamp = 0

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
        if all(fams) and len(clique) <= self.exact_max:
            sub = ScoreCache.from_mapping([str(v) for v in clique], fams)
            try:
                parents, score = unbounded_optimum(sub)
                result = ([tuple(sorted(clique[p] for p in ps)) for ps in parents], score)
            except ValueError:
                result = None
        elif all(fams):
            result = _greedy_clique(clique, fams)
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
            for r in range(min(self.k, self.max_size) + 1):
                for sub in itertools.combinations(c, r):
                    inside.setdefault(sub, c)
        return parents, first[1], inside

    def attach(self, inside: dict, c: tuple[int, ...], v: int) -> list[tuple[int, ...]]:
        """v joins the k-tree at k-clique c: the new k-cliques are c − {u} + {v}. Subsets
        without v are already keys; the new keys are S + {v} for each proper subset S of c,
        held by the new clique c − {u} + {v} for any u ∉ S. Returns the new keys."""
        new = []
        for r in range(min(self.k, self.max_size)):
            for sub in itertools.combinations(c, r):
                u = next(w for w in c if w not in sub)
                key = tuple(sorted(sub + (v,)))
                inside[key] = tuple(sorted(c[:c.index(u)] + c[c.index(u) + 1:] + (v,)))
                new.append(key)
        return new

    def network(self, order: list[int]):
        """The k-G network for ``order``: (parents, score, insertion order) or None."""
        k, n = self.k, self.n
        head = tuple(sorted(order[: k + 1]))
        first = self.first_clique(head)
        if first is None:
            return None
        rest = order[k + 1:]
        got = self.complete(head, rest)
        if got is None:
            return None
        parents: list[ParentSet] = [()] * n
        for v, ps in zip(head, first[0]):
            parents[v] = ps
        for v, ps in zip(rest, got[0]):
            parents[v] = ps
        return parents, first[1] + got[1], list(head) + list(rest)

    def complete(self, head: tuple[int, ...], rest, attached=()):
        """The greedy step (compiled, ``_greedy_from``) for the variables of ``rest`` after
        the first ``len(attached)``, which are in the k-tree already, attached to those
        k-cliques; ``head`` is the first clique. Returns (their parent sets, the sum of
        their scores), or None when one has no candidate that fits."""
        if self._flat is None:
            self._flatten()
        start, count, mstart, members, scores = self._flat
        k = self.k
        self._stamp += 1
        ordered = np.asarray(list(head) + list(rest), dtype=np.int64)
        _place_head(ordered, k, self._placed, self._time, self._clique, self._stamp)
        for i, c in enumerate(attached):
            v = rest[i]
            self._placed[v], self._time[v] = self._stamp, k + 1 + i
            self._clique[v, :] = c
        chosen = np.empty(self.n, dtype=np.int64)
        total = _greedy_from(ordered, k + 1 + len(attached), k, start, count, mstart, members, scores,
                             self._placed, self._time, self._clique, self._stamp, chosen)
        if total == -np.inf:
            return None
        sets = self.problem.candidates.parent_sets
        return [sets[v][chosen[v]] for v in rest[len(attached):]], total

    def _flatten(self) -> None:
        """The candidates as flat arrays for ``_greedy_from``: per variable its first
        candidate and count; per candidate its members' offset, best first."""
        cand = self.problem.candidates
        count = np.array([len(p) for p in cand.parent_sets], dtype=np.int64)
        start = np.concatenate([[0], np.cumsum(count)[:-1]]).astype(np.int64)
        sizes = np.array([len(ps) for sets in cand.parent_sets for ps in sets], dtype=np.int64)
        mstart = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        members = np.fromiter((p for sets in cand.parent_sets for ps in sets for p in ps), dtype=np.int64,
                              count=int(sizes.sum()))
        scores = np.concatenate(cand.scores).astype(np.float64)
        self._flat = (start, count, mstart, members, scores)
        self._placed = np.zeros(self.n, dtype=np.int64)  # == stamp: placed in this order
        self._time = np.zeros(self.n, dtype=np.int64)
        self._clique = np.zeros((self.n, max(1, self.k)), dtype=np.int64)


@njit(cache=True, nogil=True)
def _place_head(ordered, k, placed, when, clique, stamp):
    """The first clique ``ordered[:k+1]``: each member placed, its k-clique the others."""
    head = ordered[: k + 1]
    for i in range(k + 1):
        w = head[i]
        placed[w] = stamp
        when[w] = i
        j = 0
        for x in range(k + 1):
            if x != i:
                clique[w, j] = head[x]
                j += 1


@njit(cache=True, nogil=True)
def _greedy_from(ordered, first, k, start, count, mstart, members, scores, placed, when, clique, stamp, chosen):
    """k-G from position ``first`` of ``ordered`` on, ``ordered[:first]`` placed already
    (``placed`` == stamp, ``when`` their positions, ``clique`` their k-cliques; the first
    clique ``ordered[:k+1]`` by ``_place_head``): each later variable takes its first
    candidate inside some k-clique (module docstring) and attaches there. Writes candidate
    indices (within the variable's list) to ``chosen``; returns the sum of their scores,
    or -inf when a variable has no candidate that fits."""
    head = ordered[: k + 1]
    total = 0.0
    for t in range(first, ordered.shape[0]):
        v = ordered[t]
        found = -1
        latest = -1
        for c in range(start[v], start[v] + count[v]):
            lo, hi = mstart[c], mstart[c + 1]
            latest = -1
            ok = True
            for m in range(lo, hi):  # every member placed; the latest-placed one
                u = members[m]
                if placed[u] != stamp:
                    ok = False
                    break
                if latest < 0 or when[u] > when[latest]:
                    latest = u
            if not ok:
                continue
            for m in range(lo, hi):  # the others inside the latest one's k-clique
                u = members[m]
                if u == latest:
                    continue
                inside = False
                for x in range(k):
                    if clique[latest, x] == u:
                        inside = True
                        break
                if not inside:
                    ok = False
                    break
            if ok:
                found = c
                break
        if found < 0:
            return -np.inf
        chosen[v] = found - start[v]
        total += scores[found]
        # the k-clique v attaches to
        if latest < 0:
            for x in range(k):
                clique[v, x] = head[x]
        else:
            lo, hi = mstart[found], mstart[found + 1]
            drop = -1  # the first vertex of K_latest ∪ {latest} outside W
            for x in range(k + 1):
                u = latest if x == k else clique[latest, x]
                in_w = False
                for m in range(lo, hi):
                    if members[m] == u:
                        in_w = True
                        break
                if not in_w:
                    drop = u
                    break
            j = 0
            for x in range(k + 1):
                u = latest if x == k else clique[latest, x]
                if u != drop:
                    clique[v, j] = u
                    j += 1
        placed[v] = stamp
        when[v] = t
    return total


def solve_kg(
    problem: Problem, options: KgOptions | None = None, *, time_limit: float | None = None, seed: int | None = None,
    control: "RunControl | None" = None, policy: Policy = DEFAULT_POLICY,
) -> SolverResult:
    """The best network of width ≤ k that k-G builds along random orders (Scanagatta et
    al. 2016, Sec. 3.2), until ``time_limit`` or ``options.max_iterations`` orders.

    Parameters
    ----------
    problem : Problem
        A problem with a treewidth bound k >= 1.
    options : KgOptions, optional
        ``max_iterations``: stop after this many orders (or at the time limit, whichever
        comes first); the defaults when None.
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
        Status ``feasible`` (k-G proves no bound), the best network with the perfect
        elimination order of its k-tree as certificate; ``stats`` holds the statistics of
        the paper's Tables 2 and 3 (iterations, median and best score).

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
    >>> sol = solve_kg(Problem(cache, 1), KgOptions(max_iterations=20), seed=0)
    >>> sol.status, sol.score, sol.width
    ('feasible', -32.0, 1)
    """
    max_iterations = (options or KgOptions()).max_iterations
    require_bound(problem, "kg")
    t0 = time.monotonic()
    kg = _KG(problem, policy)
    order = list(range(problem.n))

    def build(rng, deadline):
        rng.shuffle(order)
        return kg.network(order)

    return search(problem, "kg", build, t0=t0, time_limit=time_limit, seed=seed, max_iterations=max_iterations,
                  control=control, stats=lambda: {"distinct_first_cliques": len(kg.first_memo)}, policy=policy)


def _run(problem: Problem, options: KgOptions, budget: Budget, *, seed: int | None) -> SolverResult:
    return solve_kg(problem, options, time_limit=budget.limit(), seed=seed, control=budget.control,
                    policy=budget.policy)


#: k-G as the registry lists it.
METHOD = Method("kg", _run, options=KgOptions, summary="k-G (Scanagatta et al. 2016)", min_treewidth=1,
                seeded=True)
