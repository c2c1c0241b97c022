"""The search itself: best-improvement hill climbing over DAGs whose moral graph keeps an
elimination order of width ≤ k, and iterated from perturbed copies of the best network.

A move changes one family (or two, for a reversal); its gain is the change in the sum of
local scores. Over a score cache the family a move gives variable v is the best cached
set inside v's parents with the new one: adding an arc u → v yields the best cached
subset of Π_v ∪ {u} (a move only where that subset holds u), reversing u → v the best
subsets of Π_v ∖ {u} and Π_u ∪ {v}. Every family is thus a cached candidate, and a
subset's edges are a subgraph's, so no removal is ever needed to improve (a pruned cache
holds no set that a subset of it beats).

From data (a problem with a ``scorer``) the family a move gives v is also the new set
itself, scored from the data when first reached (memoised, at most
``problem.family_max_parents`` parents), where it beats every cached subset: the search
is no longer confined to the cache, as in ETL. Parents are tried among those v's cached
sets use (every variable where pairs were scored exhaustively, the exploration's
candidates otherwise) until the first hill top, then among every variable
(:meth:`Climber.widen`, the policy's ``data_localsearch_widen``); removing an arc is a
move too, since a scored family need not be better than its subsets.

Each move taken is checked at once: no directed cycle, and the new moral graph's width
under the current elimination order ≤ k; where that order fails, a greedy min-fill order
that eliminates no vertex of more than k neighbours is tried and, if it exists, becomes
the current order. The network is therefore certified after every move, so a stop at any
point returns a valid network.
"""

from __future__ import annotations

import heapq
import itertools
import random
import time

import numpy as np

from twbn.formulations.problem import Problem
from twbn.solvers.localsearch.width import first_within, min_fill_within, order_table_size, order_width

__all__ = ["Climber"]

#: Gains below this are rounding (scores are sums of logarithms).
_EPS = 1e-9


def _masks(sets: list[tuple[int, ...]], bit: dict[int, int], words: int) -> np.ndarray:
    """The sets as bit masks over their parents' bits (``bit``), ``words`` 64-bit words a
    set: built per set size, vectorised (jester's cache holds 772,774 sets)."""
    out = np.zeros((len(sets), words), np.uint64)
    if not bit:
        return out
    lut = np.full(max(bit) + 1, -1, np.int64)
    lut[list(bit)] = list(bit.values())
    sizes = np.fromiter(map(len, sets), np.int64, len(sets))
    for size in np.unique(sizes).tolist():
        if size == 0:
            continue
        idx = np.flatnonzero(sizes == size)
        # the parents of every set of this size as one array (a Python loop over plants'
        # 2.7 M sets took 8 s)
        flat = np.fromiter(itertools.chain.from_iterable(sets[i] for i in idx.tolist()), np.int64, len(idx) * size)
        bits = lut[flat.reshape(len(idx), size)]
        for j in range(size):
            word, shift = bits[:, j] >> 6, (bits[:, j] & 63).astype(np.uint64)
            np.bitwise_or.at(out, (idx, word), np.left_shift(np.uint64(1), shift))
    return out


class Climber:
    """One network under local search, with what its moves need: every variable's cached
    candidates as bit masks over the parents they use, the moral-edge counts, the current
    elimination order, and memoised "best candidate inside a set" lookups.

    Parameters
    ----------
    problem : Problem
        Its candidates (forbidden and required arcs applied, at most k parents) are the
        families the search may use.
    reverse : bool
        Whether arc reversals are moves (ETL's hc-ET); without them additions only
        (hc-ET-poly).
    repair : bool
        Whether a move that the current order rejects may be taken under a new min-fill
        order.
    """

    def __init__(self, problem: Problem, *, reverse: bool = True, repair: bool = True,
                 max_table_size: int | None = None, first_parents: int | None = None):
        self.n, self.k = problem.n, problem.treewidth
        self.reverse, self.repair = reverse, repair
        # an inference budget kept with the width: the junction tree's entries (issue 86)
        self.max_size = None if max_table_size is None else float(max_table_size)
        self.arities = None if max_table_size is None else np.asarray(problem.cache.arities, np.float64)
        cand = problem.candidates
        self.sets = [list(ps) for ps in cand.parent_sets]  # best first; from data, scored ones appended
        self.scores = [np.asarray(s, float) for s in cand.scores]
        self.scorer = problem.scorer
        self.cap = problem.family_max_parents
        self.pos: list[dict[tuple, int]] = []
        self.parents_of: list[list[int]] = []  # the parents an addition to v tries, from data
        self.banned = [set() for _ in range(self.n)]
        for u, v in problem.forbidden:
            self.banned[v].add(u)
        if self.scorer is not None:
            self.scores = [s.tolist() for s in self.scores]
            self.pos = [{ps: i for i, ps in enumerate(sets)} for sets in self.sets]
            self.parents_of = [sorted({p for ps in sets for p in ps} - self.banned[v])
                               for v, sets in enumerate(self.sets)]
        self.wide = False
        self.tried = None  # from data: the stage's count of parents by mutual information (None: no stages)
        self._rank = None
        if first_parents is not None and self.scorer is not None and self.n - 1 > first_parents:
            self._first_stage(first_parents)
        self.scored = 0
        self.local = []  # per variable: parent → its bit in that variable's masks
        self.masks = []  # per variable: one row of 64-bit words a cached set
        for v in range(self.n):
            used = sorted({p for ps in self.sets[v] for p in ps})
            bit = {p: i for i, p in enumerate(used)}
            self.local.append(bit)
            self.masks.append(_masks(self.sets[v], bit, max(1, (len(used) + 63) // 64)))
        self.memo: dict[tuple[int, frozenset], int] = {}
        # the scan of v's cached sets depends only on the allowed parents the cache uses
        # (its bits): from data, an addition outside them reuses the scan of v's family
        self.scans: dict[tuple[int, int], int] = {}
        self.lookups = self.repairs = self.rejected = 0
        self.required = [frozenset() for _ in range(self.n)]
        for u, v in problem.required:
            self.required[v] |= {u}

    def _first_stage(self, count: int) -> None:
        """From data: additions to v try at most ``count`` of the parents v's cached sets use,
        those of highest mutual information with v. Where pairs were scored exhaustively
        every variable is such a parent, and a first sweep over all of them is n (n - 1)
        families: at book (n = 500, k = 2, 10 s) it was not done in localsearch's 4 s, and
        the run returned its start, 3.8 % behind ETL (2026-12-07)."""
        rank = self._ranking()
        if rank is None:
            return
        self.tried = count
        for v in range(self.n):
            if len(self.parents_of[v]) > count:
                mine = set(self.parents_of[v])
                self.parents_of[v] = sorted([u for u in rank[v] if u in mine][:count])

    def _ranking(self) -> list | None:
        """Every variable's others by decreasing mutual information in the scorer's rows
        (computed once); None where it cannot be counted (missing cells)."""
        if self._rank is None:
            from twbn.scoring.errors import TwbnError
            from twbn.scoring.explore import candidate_parents, pairwise_mutual_information

            try:
                mi = pairwise_mutual_information(self.scorer.dataset)
            except TwbnError:
                return None
            self._rank = candidate_parents(mi, self.n - 1).tolist()  # the exploration's ranking, every other
        return self._rank

    def widen(self) -> None:
        """From data: additions to v try more variables as parents from now on, not only
        those v's cached sets use (ETL tries every one; at pumsb_star, k = 5, 122 of the 383
        arcs of ETL's network join variables outside each other's 30 candidates): twice the
        stage's count, by mutual information, where there are stages, else every variable.
        In stages, each sweep's moves are taken before the next, wider, sweep: at pigs (n =
        441, k = 5, 10 s) one sweep over every variable, 194,040 additions, was not done in
        the time left after the first hill top (2026-12-07)."""
        if self.scorer is None or self.wide:
            return
        rank = self._ranking() if self.tried is not None else None
        if rank is None or 2 * self.tried >= self.n - 1:
            self.wide = True
            self.parents_of = [[u for u in range(self.n) if u != v and u not in self.banned[v]]
                               for v in range(self.n)]
        else:
            self.tried *= 2
            self.parents_of = [sorted((set(self.parents_of[v]) | set(rank[v][:self.tried])) - self.banned[v])
                               for v in range(self.n)]
        self.memo.clear()  # lookups made before may have missed a family

    # ---- families -------------------------------------------------------------------
    def best_within(self, v: int, allowed: frozenset) -> int:
        """The index of v's best candidate whose parents all lie in ``allowed``; -1: none."""
        key = (v, allowed)
        got = self.memo.get(key)
        if got is None:
            self.lookups += 1
            bit = self.local[v]
            masks = self.masks[v]
            q = 0
            for p in allowed:
                b = bit.get(p)
                if b is not None:
                    q |= 1 << b
            got = self.scans.get((v, q))
            if got is None:
                words = np.array([(q >> (64 * w)) & 0xFFFFFFFFFFFFFFFF for w in range(masks.shape[1])], np.uint64)
                got = self.scans[v, q] = first_within(masks, words)
            if self.scorer is not None and (self.cap is None or len(allowed) <= self.cap) \
                    and self.required[v] <= allowed:
                got = self._scored(v, allowed, got)
            self.memo[key] = got
        return got

    def _scored(self, v: int, allowed: frozenset, cached: int) -> int:
        """From data: ``allowed`` itself as v's family where its score beats ``cached`` (the
        index of the best cached subset, or -1); its index, appended if new."""
        ps = tuple(sorted(allowed))
        i = self.pos[v].get(ps)
        if i is None:
            s = self.scorer.score(v, ps)
            self.scored += 1
            if cached >= 0 and s <= self.scores[v][cached] + _EPS:
                return cached
            i = self._append(v, ps, s)
        return i if cached < 0 or self.scores[v][i] > self.scores[v][cached] + _EPS else cached

    def _append(self, v: int, ps: tuple[int, ...], score: float) -> int:
        """From data: a family scored beyond the cache becomes v's next index."""
        i = len(self.sets[v])
        self.sets[v].append(ps)
        self.scores[v].append(score)
        self.pos[v][ps] = i
        return i

    # ---- state ----------------------------------------------------------------------
    def load(self, parents, order) -> None:
        """Take a network (candidate parent sets) and an elimination order of width ≤ k."""
        n = self.n
        self.parents = [frozenset(ps) for ps in parents]
        self.index = [self._index_of(v, self.parents[v]) for v in range(n)]
        self.fam = [float(self.scores[v][i]) for v, i in enumerate(self.index)]
        self.children = [set() for _ in range(n)]
        for v, ps in enumerate(self.parents):
            for p in ps:
                self.children[p].add(v)
        self.counts = np.zeros((n, n), np.int32)
        for v in range(n):
            self._clique(v, self.parents[v], 1)
        self.order = np.asarray(order, np.int64)
        self.version = [0] * n

    def _index_of(self, v: int, ps: frozenset) -> int:
        tup = tuple(sorted(ps))
        if self.scorer is None:
            return self.sets[v].index(tup)
        i = self.pos[v].get(tup)
        return self._append(v, tup, self.scorer.score(v, tup)) if i is None else i  # a start's family

    def _clique(self, v: int, ps, sign: int) -> None:
        members = [v, *ps]
        c = self.counts
        for i, a in enumerate(members):
            for b in members[i + 1:]:
                c[a, b] += sign
                c[b, a] += sign

    @property
    def score(self) -> float:
        return float(np.sum(self.fam))

    def network(self) -> list[tuple[int, ...]]:
        return [tuple(sorted(ps)) for ps in self.parents]

    # ---- moves ----------------------------------------------------------------------
    def _reaches(self, src: int, dst: int, skip: tuple[int, int] | None = None) -> bool:
        """Whether a directed path src → … → dst exists (``skip``: an arc to ignore)."""
        seen, stack = {src}, [src]
        while stack:
            x = stack.pop()
            for y in self.children[x]:
                if skip is not None and (x, y) == skip:
                    continue
                if y == dst:
                    return True
                if y not in seen:
                    seen.add(y)
                    stack.append(y)
        return False

    def moves_of(self, v: int, stop=None):
        """The improving moves that change v's family: ``(gain, kind, v, u, i_v, i_u)``;
        those found so far once ``stop()`` says so (each addition scans v's candidates:
        over plants' 40,000 sets a variable, the whole of them ran 0.4 s past a deadline)."""
        cur = self.parents[v]
        out = []
        data = self.scorer is not None
        if data and (self.cap is None or len(cur) < self.cap):  # every addition's family in one batch
            before = self.scorer.scored
            self.scorer.score_additions(v, cur, self.parents_of[v])
            self.scored += self.scorer.scored - before
        for u in (self.parents_of[v] if data else range(self.n)):
            if u == v or u in cur:
                continue
            if stop is not None and stop():
                return out
            i = self.best_within(v, cur | {u})
            if i < 0:
                continue
            gain = self.scores[v][i] - self.fam[v]
            if gain > _EPS and u in self.sets[v][i]:
                out.append((gain, 0, v, u, i, -1))
        if data:  # removals: a family scored from the data may be worse than its subsets
            for u in cur:
                if u in self.required[v]:
                    continue
                i = self.best_within(v, cur - {u})
                if i >= 0 and self.scores[v][i] - self.fam[v] > _EPS:
                    out.append((self.scores[v][i] - self.fam[v], 2, v, u, i, -1))
        if self.reverse:
            for u in cur:  # u → v becomes v → u
                if u in self.required[v] or v in self.banned[u]:
                    continue
                iv = self.best_within(v, cur - {u})
                iu = self.best_within(u, self.parents[u] | {v})
                if iv < 0 or iu < 0 or v not in self.sets[u][iu]:
                    continue
                gain = (self.scores[v][iv] - self.fam[v]) + (self.scores[u][iu] - self.fam[u])
                if gain > _EPS:
                    out.append((gain, 1, v, u, iv, iu))
        return out

    def within_size(self, order: np.ndarray) -> bool:
        """The junction tree of ``order`` within ``max_table_size`` (always, without one)."""
        return self.max_size is None or order_table_size(self.counts, order, self.arities, self.max_size) \
            <= self.max_size

    def _fits(self) -> bool:
        if order_width(self.counts, self.order, self.k) <= self.k and self.within_size(self.order):
            return True
        if not self.repair:
            return False
        order = min_fill_within(self.counts, self.k)
        if order.size == 0 or not self.within_size(order):
            return False
        self.order = order
        self.repairs += 1
        return True

    def _set(self, v: int, i: int) -> None:
        new = frozenset(self.sets[v][i])
        for p in self.parents[v] - new:
            self.children[p].discard(v)
        for p in new - self.parents[v]:
            self.children[p].add(v)
        self.parents[v], self.index[v], self.fam[v] = new, i, float(self.scores[v][i])
        self.version[v] += 1

    def apply(self, move) -> bool:
        """Take ``move`` if it keeps the network acyclic and of width ≤ k."""
        _, kind, v, u, iv, iu = move
        new_v = frozenset(self.sets[v][iv])
        if kind != 1:  # an addition (or, from data, a removal: new_v then adds no parent)
            if any(self._reaches(v, p) for p in new_v - self.parents[v]):
                return False
            changed = [(v, iv)]
        else:
            if self._reaches(u, v, skip=(u, v)):
                return False
            changed = [(v, iv), (u, iu)]
        for x, i in changed:
            self._clique(x, self.parents[x], -1)
            self._clique(x, self.sets[x][i], 1)
        if not self._fits():
            for x, i in changed:
                self._clique(x, self.sets[x][i], -1)
                self._clique(x, self.parents[x], 1)
            self.rejected += 1
            return False
        for x, i in changed:
            self._set(x, i)
        return True

    def climb(self, stop) -> int:
        """Best-improvement hill climbing until no move improves, or ``stop()``; the moves
        taken. Moves are queued by gain and checked when taken, so a move made stale by
        another (its variables' families changed since) is dropped and queued anew."""
        taken = 0
        while True:
            heap = []
            for v in range(self.n):
                if stop():
                    return taken
                for m in self.moves_of(v, stop):
                    heapq.heappush(heap, (-m[0], self._stamp(m), m))
            before = taken
            while heap:
                if stop():
                    return taken
                _, stamp, m = heapq.heappop(heap)
                if stamp != self._stamp(m):
                    continue
                if self.apply(m):
                    taken += 1
                    touched = {m[2]} | ({m[3]} if m[1] == 1 else set())
                    for x in touched:
                        for m2 in self.moves_of(x, stop):
                            heapq.heappush(heap, (-m2[0], self._stamp(m2), m2))
            if taken == before:
                return taken

    def _stamp(self, m) -> tuple[int, int]:
        return self.version[m[2]], (self.version[m[3]] if m[1] == 1 else -1)

    def kick(self, rng: random.Random, size: int) -> None:
        """Perturb: ``size`` random variables back to their best set of required parents
        only (fewer edges: always acyclic and within width k)."""
        for v in rng.sample(range(self.n), min(size, self.n)):
            i = self.best_within(v, self.required[v])
            if i < 0 or i == self.index[v]:
                continue
            self._clique(v, self.parents[v], -1)
            self._clique(v, self.sets[v][i], 1)
            self._set(v, i)
