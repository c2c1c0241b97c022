"""The learning problem: a score cache, a treewidth bound k (or none), background knowledge.

Maximise Σ_v f_v(Π_v) over DAGs whose parent sets are cached candidates and whose moral
graph has treewidth ≤ k (Korhonen & Parviainen 2013, Sec. 1.2; Nie et al. 2014).

Background knowledge (arcs are (parent, child) index pairs):
- forbidden arcs remove every candidate set of the child that contains the parent;
- required arcs keep only the candidate sets of the child that contain the parent.
Both act on the cache, so every method that reads ``Problem.candidates`` honours them.
Note that pruning a cache removes sets dominated by *subsets*: that is safe for forbidden
arcs but not for required ones, so with required arcs the optimum is the best over the
candidates that the cache holds (score without pruning if that matters).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Iterable, Mapping

import numpy as np

from twbn.scoring.cache import ScoreCache
from twbn.scoring.errors import ParameterError, TwbnError

if TYPE_CHECKING:  # its counting kernels load numba: not on every import of twbn
    from twbn.scoring.families import FamilyScores

__all__ = ["InfeasibleError", "parse_arcs", "read_arc_file", "Problem"]

Arc = tuple[int, int]


class InfeasibleError(TwbnError, ValueError):
    """The constraints admit no network (e.g. a required arc no candidate set holds).

    Examples
    --------
    >>> from twbn.scoring.cache import ScoreCache
    >>> cache = ScoreCache.from_mapping("AB", [{(): -5.0, (1,): -3.0}, {(): -4.0}])
    >>> Problem(cache, 0, required={(1, 0)}).candidates
    Traceback (most recent call last):
    ...
    twbn.formulations.problem.InfeasibleError: no cached parent set of 'A' satisfies required parents ['B'], at most 0 parents
    """


def parse_arcs(spec: str | Iterable[str], names: tuple[str, ...]) -> frozenset[Arc]:
    """Arcs from ``"A,B"`` strings (or one string ``"A,B;C,D"``): parent A, child B."""
    if isinstance(spec, str):
        spec = [s for s in spec.split(";") if s.strip()]
    pos = {n: i for i, n in enumerate(names)}
    out = set()
    for item in spec:
        parts = [p.strip() for p in item.split(",")]
        if len(parts) != 2:
            raise ParameterError(f"arc {item!r} must be written PARENT,CHILD")
        for p in parts:
            if p not in pos:
                raise ParameterError(f"arc {item!r}: {p!r} is not a variable of the cache")
        out.add((pos[parts[0]], pos[parts[1]]))
    return frozenset(out)


def read_arc_file(path: str, names: tuple[str, ...]) -> frozenset[Arc]:
    """One ``PARENT,CHILD`` per line; blank lines and ``#`` comments ignored."""
    lines = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            s = line.split("#", 1)[0].strip()
            if s:
                lines.append(s)
    return parse_arcs(lines, names)


def _merged(sets: list, scores, new: dict) -> tuple[list, "np.ndarray"]:
    """A variable's candidates with ``new`` ones inserted in the cache's order (best first,
    then fewer parents, then by parents): a few insertions, not a sort of 10^4 sets."""
    sets, scores = list(sets), np.asarray(scores, np.float64)
    for ps, sc in sorted(new.items(), key=lambda it: (-it[1], len(it[0]), it[0])):
        i = int(np.searchsorted(-scores, -sc, side="left"))
        while i < len(sets) and scores[i] == sc and (len(sets[i]), sets[i]) < (len(ps), ps):
            i += 1
        sets.insert(i, ps)
        scores = np.insert(scores, i, sc)
    return sets, scores


def _with_added(cache: ScoreCache, added: dict, meta: dict) -> ScoreCache:
    """``cache`` with ``added[v]`` families: only the variables that gain one are rebuilt (a
    cache may hold 10^5-10^6 sets)."""
    psets, scores = list(cache.parent_sets), list(cache.scores)
    for v, new in added.items():
        psets[v], scores[v] = _merged(psets[v], scores[v], new)
    return ScoreCache(cache.names, psets, scores, cache.arities, meta)


@dataclass(frozen=True)
class Problem:
    """What a method solves: a score cache, a treewidth bound and background knowledge.

    Parameters
    ----------
    cache : ScoreCache
        The candidate parent sets and their scores.
    treewidth : int, optional
        The bound k on the treewidth of the moral graph; None: unbounded.
    forbidden, required : frozenset of (int, int)
        Arcs (parent, child), by variable index, the network must not / must contain.
    scorer : FamilyScores, optional
        A problem built from data: families outside the cache are scored from the data
        when a search reaches them (:meth:`score_of`), so its search space is every family
        of at most ``min(k, scorer.max_parents)`` parents, not the cache's alone. Without
        one (a jkl file) the cache is the search space, as in the field's protocol.

    Attributes
    ----------
    n, names
        The number of variables and their names.

    Raises
    ------
    ParameterError
        A negative bound, or an arc naming no variable of the cache.

    Examples
    --------
    >>> from twbn.scoring.cache import ScoreCache
    >>> cache = ScoreCache.from_mapping("AB", [{(): -5.0, (1,): -3.0}, {(): -4.0}])
    >>> p = Problem(cache, 1, forbidden={(1, 0)})
    >>> p.n, p.names, p.parent_sets(0)
    (2, ('A', 'B'), [((), -5.0)])
    """

    cache: ScoreCache
    treewidth: int | None = None
    forbidden: frozenset[Arc] = field(default_factory=frozenset)
    required: frozenset[Arc] = field(default_factory=frozenset)
    scorer: "FamilyScores | None" = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        n = self.cache.n_variables
        if self.treewidth is not None and (not isinstance(self.treewidth, int) or isinstance(self.treewidth, bool)
                                           or self.treewidth < 0):
            raise ParameterError(f"the treewidth bound must be a non-negative integer, got {self.treewidth!r}")
        object.__setattr__(self, "forbidden", frozenset(self.forbidden))
        object.__setattr__(self, "required", frozenset(self.required))
        for kind, arcs in (("forbidden", self.forbidden), ("required", self.required)):
            for u, v in arcs:
                if not (0 <= u < n and 0 <= v < n) or u == v:
                    raise ParameterError(f"{kind} arc ({u}, {v}) is not an arc between two variables")
        if self.scorer is not None and self.scorer.n_variables != n:
            raise ParameterError(f"the scorer has {self.scorer.n_variables} variables, the cache {n}")
        # contradictory arcs (both required and forbidden, a required cycle) make the
        # problem infeasible, which a solver reports as its status: solvers/registry.infeasibility

    @property
    def n(self) -> int:
        return self.cache.n_variables

    @property
    def names(self) -> tuple[str, ...]:
        return self.cache.names

    def parent_sets(self, v: int) -> list[tuple[tuple[int, ...], float]]:
        """The ``(parents, score)`` pairs variable ``v`` may take here, best first: its
        cached sets without a forbidden parent, with every required one, of at most k
        parents. Parents are sorted tuples of variable indices (``names`` gives them).

        Examples
        --------
        >>> from twbn.scoring.cache import ScoreCache
        >>> cache = ScoreCache.from_mapping("AB", [{(): -5.0, (1,): -3.0}, {(): -4.0}])
        >>> Problem(cache, 1).parent_sets(0)
        [((1,), -3.0), ((), -5.0)]
        >>> Problem(cache, 1, forbidden={(1, 0)}).parent_sets(0)
        [((), -5.0)]
        """
        cand = self.candidates
        return list(zip(cand.parent_sets[v], cand.scores[v].tolist()))

    @cached_property
    def candidates(self) -> ScoreCache:
        """The cache restricted to what the problem allows: no forbidden parent, every
        required parent, at most k parents (a family is a clique of the moral graph)."""
        banned = [set() for _ in range(self.n)]
        needed = [set() for _ in range(self.n)]
        for u, v in self.forbidden:
            banned[v].add(u)
        for u, v in self.required:
            needed[v].add(u)
        # The cache is valid and sorted best first, and a filter keeps that order: the lists
        # are filtered, not rebuilt and validated (from_mapping took 11 s for plants' 2.7 M
        # exhaustive families, a 5 s localsearch then ran 28 s)
        psets, scores = [], []
        for v in range(self.n):
            sets, sc = self.cache.parent_sets[v], self.cache.scores[v]
            keep = None
            if banned[v] or needed[v] or self.treewidth is not None and max(map(len, sets), default=0) > self.treewidth:
                keep = [i for i, ps in enumerate(sets)
                        if (self.treewidth is None or len(ps) <= self.treewidth)
                        and not banned[v].intersection(ps) and needed[v].issubset(ps)]
                sets, sc = [sets[i] for i in keep], sc[keep]
            psets.append(sets)
            scores.append(sc)
            if not sets:
                why = []
                if needed[v]:
                    why.append(f"required parents {sorted(self.names[u] for u in needed[v])}")
                if banned[v]:
                    why.append("forbidden arcs")
                if self.treewidth is not None:
                    why.append(f"at most {self.treewidth} parents")
                raise InfeasibleError(
                    f"no cached parent set of {self.names[v]!r} satisfies " + ", ".join(why or ["the constraints"])
                )
        return ScoreCache(tuple(self.names), psets, scores, self.cache.arities, dict(self.cache.meta))

    def _cached_score(self, v: int, ps: tuple[int, ...]) -> float | None:
        """The candidate score of ``ps`` for ``v``, or None: a scan of v's list at C speed,
        remembered (an index of every candidate cost 0.3-0.5 s a problem at 4 × 10^5 sets)."""
        cand = self.candidates
        at = cand.index_of(v, ps)
        return None if at < 0 else float(cand.scores[v][at])

    @property
    def family_max_parents(self) -> int | None:
        """The most parents a family may have here: k, and the scorer's cap from data."""
        caps = [c for c in (self.treewidth, None if self.scorer is None else self.scorer.max_parents)
                if c is not None]
        return min(caps) if caps else None

    def allows(self, v: int, parents: Iterable[int]) -> bool:
        """Whether ``parents`` may be ``v``'s family here: a candidate, or (from data) any set
        without a forbidden parent, with every required one, of at most
        :attr:`family_max_parents` parents.

        Examples
        --------
        >>> import twbn
        >>> from twbn.scoring.families import FamilyScores
        >>> ds = twbn.read_csv(twbn.example_path("zoo"))
        >>> cache = twbn.score(ds, max_parents=1)
        >>> p = Problem(cache, 2, scorer=FamilyScores(ds))
        >>> p.allows(0, (1, 2)), p.allows(0, (1, 2, 3)), Problem(cache, 2).allows(0, (1, 2))
        (True, False, False)
        """
        ps = tuple(sorted(parents))
        if self.candidates.holds(v, ps):
            return True
        if self.scorer is None:
            return False
        if v in ps or len(set(ps)) != len(ps):
            return False
        cap = self.family_max_parents
        if cap is not None and len(ps) > cap:
            return False
        banned = {u for u, w in self.forbidden if w == v}
        needed = {u for u, w in self.required if w == v}
        return not banned.intersection(ps) and needed.issubset(ps)

    def score_of(self, v: int, parents: Iterable[int]) -> float:
        """The local score of ``parents`` for ``v``: the cache's, or (a problem from data)
        the scorer's for a family the cache lacks.

        Raises
        ------
        KeyError
            ``parents`` is not a family ``v`` may take here (:meth:`allows`).
        """
        ps = tuple(sorted(parents))
        got = self._cached_score(v, ps)
        if got is not None:
            return got
        if not self.allows(v, ps):
            raise KeyError(f"{ps} is not a candidate parent set of {self.names[v]!r}"
                           + ("" if self.scorer is None else " nor a family the data may score here"))
        return self.scorer.score(v, ps)

    def with_families(self, families: Mapping[int, Iterable[tuple[int, ...]]] | Iterable[tuple[int, ...]]
                      ) -> "Problem":
        """This problem with ``families`` added to its cache (``{v: [parents, ...]}``, or one
        parent set per variable: a network), each scored by :meth:`score_of`; sets already
        cached are left out, and a set beaten by a cached subset is added all the same (a
        network that holds it must be a network of the problem). The scorer is kept. Itself
        where nothing is added.

        Examples
        --------
        >>> import twbn
        >>> from twbn.scoring.families import FamilyScores
        >>> ds = twbn.read_csv(twbn.example_path("zoo"))
        >>> p = Problem(twbn.score(ds, max_parents=1), 3, scorer=FamilyScores(ds))
        >>> milk = ds.names.index("milk")  # its best pair, eggs and fins, beats each single parent
        >>> grown = p.with_families({milk: [(2, 10)]})
        >>> (2, 10) in p.cache.parent_sets[milk], (2, 10) in grown.cache.parent_sets[milk]
        (False, True)
        >>> grown.score_of(milk, (2, 10)) == p.score_of(milk, (2, 10)) > float(p.candidates.scores[milk][0])
        True
        """
        if not isinstance(families, Mapping):
            families = {v: [ps] for v, ps in enumerate(families)}
        if all(self.cache.holds(v, ps) for v, sets in families.items() for ps in sets):
            return self  # the common case, asked after every method
        key = frozenset((v, tuple(sorted(ps))) for v, sets in families.items() for ps in sets)
        grown = self.__dict__.setdefault("_grown", {}).get(key)
        if grown is not None:  # a network grown into this problem before (a start, then its method)
            return grown
        added: dict[int, dict[tuple[int, ...], float]] = {}
        for v, sets in families.items():
            for ps in sets:
                ps = tuple(sorted(ps))
                if self.cache.holds(v, ps) or ps in added.get(v, {}):
                    continue
                # even one beaten by a cached subset of its own: a start can hold such a
                # family (a local optimum of a search), and the method given that start must
                # find it in the cache (cuts started from it raised KeyError on alarm, k = 5);
                # an exact method never prefers it, so no bound moves
                added.setdefault(v, {})[ps] = self.score_of(v, ps)
        if not added:
            return self
        meta = dict(self.cache.meta)
        meta["families_added"] = meta.get("families_added", 0) + sum(len(new) for new in added.values())
        grown = Problem(_with_added(self.cache, added, meta), self.treewidth, self.forbidden, self.required,
                        self.scorer)
        if "candidates" in self.__dict__:  # the restriction, carried over: one pass over the cache saved
            # (every family added is allowed here: score_of checked it)
            grown.__dict__["candidates"] = _with_added(self.candidates, added, dict(self.candidates.meta))
        self.__dict__["_grown"][key] = grown
        return grown
