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
from typing import Iterable

from twbn.scoring.cache import ScoreCache
from twbn.scoring.errors import TwbnError

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
            raise ValueError(f"arc {item!r} must be written PARENT,CHILD")
        for p in parts:
            if p not in pos:
                raise ValueError(f"arc {item!r}: {p!r} is not a variable of the cache")
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

    Attributes
    ----------
    n, names
        The number of variables and their names.

    Raises
    ------
    ValueError
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

    def __post_init__(self):
        n = self.cache.n_variables
        if self.treewidth is not None and (not isinstance(self.treewidth, int) or isinstance(self.treewidth, bool)
                                           or self.treewidth < 0):
            raise ValueError(f"the treewidth bound must be a non-negative integer, got {self.treewidth!r}")
        object.__setattr__(self, "forbidden", frozenset(self.forbidden))
        object.__setattr__(self, "required", frozenset(self.required))
        for kind, arcs in (("forbidden", self.forbidden), ("required", self.required)):
            for u, v in arcs:
                if not (0 <= u < n and 0 <= v < n) or u == v:
                    raise ValueError(f"{kind} arc ({u}, {v}) is not an arc between two variables")
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
        families = []
        for v in range(self.n):
            fam = {}
            for ps, s in zip(self.cache.parent_sets[v], self.cache.scores[v].tolist()):
                if self.treewidth is not None and len(ps) > self.treewidth:
                    continue
                if banned[v].intersection(ps) or not needed[v].issubset(ps):
                    continue
                fam[ps] = s
            if not fam:
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
            families.append(fam)
        return ScoreCache.from_mapping(self.names, families, self.cache.arities, dict(self.cache.meta))
