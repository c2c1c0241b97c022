"""The score cache: for each variable, its candidate parent sets and local scores.

Parent sets are sorted tuples of variable indices. Each variable's sets are kept sorted
best first (ties: fewer parents first, then lexicographic), so the first entry is the
variable's best parent set with no constraints.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import numpy as np

from twbn.scoring.errors import TwbnError

__all__ = ["CacheError", "ScoreCache"]

ParentSet = tuple[int, ...]


class CacheError(TwbnError, ValueError):
    """An inconsistent score cache (bad indices, self-parents, non-finite scores).

    Examples
    --------
    >>> ScoreCache.from_mapping("A", [{(0,): -1.0}])
    Traceback (most recent call last):
    ...
    twbn.scoring.cache.CacheError: variable 'A' is listed as its own parent
    """


def _sort_key(item: tuple[ParentSet, float]):
    parents, score = item
    return (-score, len(parents), parents)


@dataclass
class ScoreCache:
    """Candidate parent sets and local scores for ``n`` variables.

    Attributes
    ----------
    names : variable names, index order.
    parent_sets : ``parent_sets[v]`` is the list of v's candidate sets, best first.
    scores : ``scores[v]`` the matching float64 array.
    arities : per-variable arity, or None where unknown (e.g. a cache from elsewhere).
    meta : free-form facts about how the cache was made (score, ess, rows, ...).

    Parameters
    ----------
    names, parent_sets, scores, arities, meta
        As the attributes; :meth:`from_mapping` builds one from ``{parents: score}``
        mappings, :func:`twbn.score` from data, :func:`twbn.read_jkl` from a file.

    Raises
    ------
    CacheError
        Indices out of range, a variable its own parent, a non-finite score.

    Examples
    --------
    >>> cache = ScoreCache.from_mapping("AB", [{(): -5.0, (1,): -3.0}, {(): -4.0}])
    >>> cache.names, cache.parent_sets[0], cache.n_parent_sets()
    (('A', 'B'), [(1,), ()], 3)
    """

    names: tuple[str, ...]
    parent_sets: list[list[ParentSet]]
    scores: list[np.ndarray]
    arities: tuple[int | None, ...] | None = None
    meta: dict = field(default_factory=dict)
    # (v, parents) → its index in parent_sets[v], −1 if absent: a network's families are
    # looked up several times after a method (the bound's problem, the gap's sources, the
    # summary), and a miss scans all of v's sets, 0.13-0.16 s a time at 2.7 M families,
    # past the limit
    _where: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @classmethod
    def from_mapping(
        cls,
        names: Sequence[str],
        families: Sequence[Mapping[Iterable[int], float]],
        arities: Sequence[int | None] | None = None,
        meta: dict | None = None,
    ) -> "ScoreCache":
        """Build (and validate) a cache from ``families[v] = {parents: score}``."""
        n = len(names)
        if len(families) != n:
            raise CacheError(f"{len(families)} variables have parent sets, but there are {n} names")
        if len(set(names)) != n:
            raise CacheError("variable names are not unique")
        psets, scores = [], []
        for v, fam in enumerate(families):
            items = []
            seen = set()
            for parents, score in fam.items():
                ps = tuple(sorted(int(p) for p in parents))
                if len(set(ps)) != len(ps):
                    raise CacheError(f"variable {names[v]!r}: parent set {ps} repeats a parent")
                if ps in seen:
                    raise CacheError(f"variable {names[v]!r}: parent set {ps} listed twice")
                seen.add(ps)
                for p in ps:
                    if not 0 <= p < n:
                        raise CacheError(f"variable {names[v]!r}: parent index {p} out of range 0..{n - 1}")
                    if p == v:
                        raise CacheError(f"variable {names[v]!r} is listed as its own parent")
                score = float(score)
                if not math.isfinite(score):
                    raise CacheError(f"variable {names[v]!r}: parent set {ps} has score {score}")
                items.append((ps, score))
            if not items:
                raise CacheError(f"variable {names[v]!r} has no candidate parent set")
            items.sort(key=_sort_key)
            psets.append([p for p, _ in items])
            scores.append(np.array([s for _, s in items], dtype=np.float64))
        return cls(tuple(names), psets, scores, None if arities is None else tuple(arities), dict(meta or {}))

    @property
    def n_variables(self) -> int:
        return len(self.names)

    def n_parent_sets(self, v: int | None = None) -> int:
        if v is None:
            return sum(len(p) for p in self.parent_sets)
        return len(self.parent_sets[v])

    def families(self) -> list[dict[ParentSet, float]]:
        return [dict(zip(ps, sc.tolist())) for ps, sc in zip(self.parent_sets, self.scores)]

    def index_of(self, v: int, parents: Iterable[int]) -> int:
        """Where ``parents`` is in ``parent_sets[v]``, −1 if it is not a candidate.

        Each answer is remembered (up to 10^5): the lists are not to be changed in place.

        Parameters
        ----------
        v : int
            The variable.
        parents : iterable of int
            A parent set, in any order.

        Returns
        -------
        int
            Its index in ``parent_sets[v]`` (and ``scores[v]``), or −1.

        Examples
        --------
        >>> cache = ScoreCache.from_mapping("ABC", [{(): -5.0, (2, 1): -3.0}, {(): -4.0}, {(): -1.0}])
        >>> cache.index_of(0, (1, 2)), cache.index_of(0, ()), cache.index_of(0, (1,))
        (0, 1, -1)
        """
        ps = tuple(sorted(parents))
        at = self._where.get((v, ps))
        if at is None:
            try:  # list.index compares in C: the empty set sits near the end of 10^4-10^6 sets
                at = self.parent_sets[v].index(ps)
            except ValueError:
                at = -1
            if len(self._where) >= 100_000:  # improve's pieces ask about many subsets: bounded
                self._where.clear()
            self._where[(v, ps)] = at
        return at

    def holds(self, v: int, parents: Iterable[int]) -> bool:
        """Whether ``parents`` is a candidate parent set of ``v`` (:meth:`index_of` ≥ 0).

        Examples
        --------
        >>> cache = ScoreCache.from_mapping("AB", [{(): -5.0, (1,): -3.0}, {(): -4.0}])
        >>> cache.holds(0, [1]), cache.holds(1, [0])
        (True, False)
        """
        return self.index_of(v, parents) >= 0

    def score_of(self, v: int, parents: Iterable[int]) -> float:
        """The cached score of ``parents`` for ``v``; KeyError if it is not a candidate."""
        at = self.index_of(v, parents)
        if at < 0:
            raise KeyError(f"{tuple(sorted(parents))} is not a candidate parent set of {self.names[v]!r}")
        return float(self.scores[v][at])

    def best_within(self, v: int, allowed: Iterable[int]) -> tuple[ParentSet, float]:
        """The best candidate parent set of ``v`` inside ``allowed`` (∅ is not guaranteed)."""
        allowed = set(allowed)
        for cand, s in zip(self.parent_sets[v], self.scores[v]):
            if allowed.issuperset(cand):
                return cand, float(s)
        raise KeyError(f"no candidate parent set of {self.names[v]!r} lies inside {sorted(allowed)}")

    def without_dominated(self) -> "ScoreCache":
        """Rule 1 (subset dominance): drop Π if some cached Π' ⊂ Π scores at least as well.

        Scanning best first, a set is kept iff no kept set seen before is a subset of it:
        a set dominated only by a dropped set is also dominated by what dropped that one.
        """
        psets, scores = [], []
        for cands, sc in zip(self.parent_sets, self.scores):
            kept: list[frozenset] = []
            keep_idx = []
            for i, cand in enumerate(cands):
                fs = frozenset(cand)
                if any(k <= fs for k in kept):
                    continue
                kept.append(fs)
                keep_idx.append(i)
            psets.append([cands[i] for i in keep_idx])
            scores.append(sc[keep_idx])
        return ScoreCache(self.names, psets, scores, self.arities, dict(self.meta))
