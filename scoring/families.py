"""Families scored on demand: the local score of any parent set a search reaches, from the
data, memoised.

A score cache fixes the search space before the search starts, and a cache built in a
time budget cannot hold every family of more than two or three parents. ETL (Benjumeda,
Bielza & Larrañaga, Artificial Intelligence 274, 2019) scores families from the data as
its hill climbing reaches them instead; :class:`FamilyScores` gives twbn's searches the
same: ``scores(v, parents)`` counts the data once for a family it has not seen, and
remembers the result. A :class:`~twbn.formulations.problem.Problem` built from data
carries one (``Problem.scorer``), so that a network with families outside the cache is
scored and certified all the same.

The counts of Π ∪ {u} extend the configuration codes of Π by u's column; the codes of
the sets a search keeps extending (its current families) are kept, a few per variable,
so a move's family costs one pass over the rows. Scores are those of
:mod:`twbn.scoring.local_scores` (BIC, AIC, BDeu), equal to a :class:`Scorer`'s.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Iterable

import numpy as np

from twbn.scoring.counting import added_parent_scores, available_family_ll, extend_codes, family_scores, nlogn_table
from twbn.scoring.data import Dataset
from twbn.scoring.local_scores import PENALISED_LL_SCORES, SCORES, Scorer, penalty_weight
from twbn.scoring.errors import ParameterError

__all__ = ["FamilyScores"]

ParentSet = tuple[int, ...]


class FamilyScores:
    """Local scores of families of one data set, scored when first asked for and memoised.

    Parameters
    ----------
    dataset : Dataset
        Discrete data: complete, or with missing cells (−1) where ``available``.
    score : {"bic", "aic", "bdeu"}, default "bic"
    ess : float, default 1.0
        BDeu's equivalent sample size.
    max_parents : int, optional
        The most parents a family scored here may have (None: no cap of its own; a
        problem's treewidth bound k caps families at k parents anyway).
    keep_codes : int, optional
        How many parent sets' configuration codes are kept for extension (least recently
        used dropped first), 4 bytes a row each; default: as many as fit in 128 MiB (at
        least 64).
    copies : int, default 1
        The rows are this many completions of each of ``n_rows / copies`` rows (structural
        EM's expected counts, ``twbn.em``): a family's score is the BIC or AIC of the counts
        averaged over the completions, LL / copies minus the penalty of ``n_rows / copies``
        rows. BDeu is not linear in the counts, and is refused with copies > 1.
    available : bool, default False
        Data with missing cells, each family scored on its *available cases* (the rows
        where it is wholly observed, m of the N): the child's score without parents on its
        own observed rows scaled to all N, plus the parents' gain in log-likelihood over
        none on the family's m rows times ``N / m``, less ``(N / m − 1) · e / 2`` (the
        growth scaling gives a fit's optimism on its own rows, about half its e extra
        parameters) and the penalty of the e extra parameters over N rows. Under MCAR that
        estimates the complete data's score without drawing completions from a network
        (which favour the network that drew them): a start of structural EM (``twbn.em``).
        A family with no available case gains nothing over none, and pays for its extra
        parameters.

    Attributes
    ----------
    scored : int
        Families counted from the data so far (memo hits not included).

    Raises
    ------
    ParameterError
        An unknown score, a bad ``ess`` or ``max_parents``, an empty data set.

    Examples
    --------
    >>> import twbn
    >>> from twbn.scoring.local_scores import local_score
    >>> ds = twbn.read_csv(twbn.example_path("zoo"))
    >>> fs = FamilyScores(ds, "bic", max_parents=3)
    >>> s = fs.score(0, (1, 2, 3))
    >>> bool(abs(s - local_score(ds, 0, (1, 2, 3))) < 1e-9), fs.scored
    (True, 1)
    >>> fs.score(0, (3, 2, 1)) == s, fs.scored  # memoised, in any order
    (True, 1)
    >>> fs.allows((1, 2, 3, 4))
    False
    >>> fs.score_additions(0, (1, 2), [3, 4, 5])  # three families in one pass each
    >>> fs.scored, bool(abs(fs.score(0, (1, 2, 5)) - local_score(ds, 0, (1, 2, 5))) < 1e-9)
    (3, True)
    """

    def __init__(self, dataset: Dataset, score: str = "bic", ess: float = 1.0, max_parents: int | None = None,
                 keep_codes: int | None = None, copies: int = 1, available: bool = False):
        if score not in SCORES:
            raise ParameterError(f"families are scored on demand for {', '.join(SCORES)}, not {score!r}")
        if isinstance(copies, bool) or not isinstance(copies, int) or copies < 1 \
                or dataset.n_rows % copies:
            raise ParameterError(f"copies must be an integer >= 1 that divides the {dataset.n_rows} rows, got {copies!r}")
        if copies > 1 and score not in PENALISED_LL_SCORES:
            raise ParameterError(f"scores on expected counts (copies > 1) are {', '.join(PENALISED_LL_SCORES)}, "
                             f"not {score!r}")
        if available and (copies != 1 or score not in PENALISED_LL_SCORES):
            raise ParameterError(f"available-case scores are {', '.join(PENALISED_LL_SCORES)} of one copy of the rows, "
                             f"not {score!r} with copies={copies!r}")
        if max_parents is not None and (isinstance(max_parents, bool) or not isinstance(max_parents, int)
                                        or max_parents < 0):
            raise ParameterError(f"max_parents must be an integer >= 0 or None, got {max_parents!r}")
        self.available = bool(available)
        data = dataset.data
        if self.available:  # a missing cell becomes the state one past the variable's own
            arity = np.asarray(dataset.arities, np.int32)[:, None]
            data = np.ascontiguousarray(np.where(data < 0, arity, data).astype(np.int32))
            stand_in = Dataset(dataset.names, dataset.states, np.where(dataset.data < 0, 0, dataset.data).astype(np.int32))
        self._scorer = Scorer(stand_in if self.available else dataset, score, ess)  # validates score, ess, rows
        self.dataset = dataset
        self.score_name = score
        self.ess = self._scorer.ess
        self.max_parents = max_parents
        self.arities = np.asarray(dataset.arities, np.int64)
        self._data = data
        self._code_arities = self.arities + 1 if self.available else self.arities
        self._nlogn = nlogn_table(dataset.n_rows)
        self.copies = copies
        # LL over all copies is copies × the LL of the averaged counts: the score is kept
        # as copies × (that LL − c(N)·penalty) and divided once, where it is stored
        self._c = self._scorer.penalty_c if copies == 1 else \
            copies * penalty_weight(score, dataset.n_rows // copies)
        self._memo: list[dict[ParentSet, float]] = [dict() for _ in range(dataset.n_variables)]
        self._pairs: np.ndarray | None = None  # families of one parent given by know_pairs
        self._codes: OrderedDict[frozenset, tuple[np.ndarray, int]] = OrderedDict()
        self._keep = max(64, (128 << 20) // (4 * max(1, dataset.n_rows))) if keep_codes is None \
            else max(1, int(keep_codes))
        self.scored = 0

    @property
    def n_variables(self) -> int:
        return self.dataset.n_variables

    def know_pairs(self, scores: np.ndarray) -> None:
        """Take the families of one parent scored elsewhere from the same rows and score
        (``scores[x, y]``: x given {y}; NaN where not scored), so that they are not counted
        again: ``build_cache``'s, handed on by ``learn`` (at book, 8,700 rows, all 249,500
        took 3.3 s there, and 5.4 s here one child at a time). Ignored where this scorer's
        scores differ from a plain cache's (expected counts, available cases).

        Examples
        --------
        >>> import numpy as np, twbn
        >>> ds = twbn.read_csv(twbn.example_path("zoo"))
        >>> given = np.full((ds.n_variables, ds.n_variables), np.nan)
        >>> given[0, 1] = FamilyScores(ds, "bic").score(0, (1,))
        >>> fs = FamilyScores(ds, "bic", max_parents=2)
        >>> fs.know_pairs(given)
        >>> fs.score(0, (1,)) == float(given[0, 1]), fs.scored  # given: not counted again
        (True, 0)
        >>> _ = fs.score(0, (2,)); fs.scored  # not given: counted
        1
        """
        if self.copies != 1 or self.available or (self.max_parents is not None and self.max_parents < 1):
            return
        scores = np.asarray(scores, dtype=np.float64)
        if scores.shape != (self.n_variables, self.n_variables):
            raise ParameterError(f"pair scores of shape {scores.shape} for {self.n_variables} variables")
        self._pairs = scores  # read when asked: a memo of all (2.4 M at ad) would take 1 s and 240 MB

    def _known_pair(self, v: int, ps: ParentSet) -> "float | None":
        """The score of v given the one parent ``ps`` from :meth:`know_pairs`, memoised;
        None where it was not given."""
        if self._pairs is None or len(ps) != 1:
            return None
        value = float(self._pairs[v, ps[0]])
        if value != value:  # NaN: not scored there
            return None
        self._memo[v][ps] = value
        return value

    def allows(self, parents: Iterable[int]) -> bool:
        """Whether a family of these parents is within ``max_parents``."""
        return self.max_parents is None or len(tuple(parents)) <= self.max_parents

    def known(self, v: int) -> dict[ParentSet, float]:
        """The families of ``v`` scored so far, ``{parents: score}`` (a copy)."""
        return dict(self._memo[v])

    def _codes_of(self, parents: frozenset, keep: bool = True) -> tuple[np.ndarray, int]:
        """The configuration codes of ``parents``: from a kept subset one parent smaller
        where there is one, else from the codes of all but its last parent (kept: it is the
        family a search is extending, asked for again with every other parent it tries).
        ``keep``: remember these codes too."""
        got = self._codes.get(parents)
        if got is not None:
            self._codes.move_to_end(parents)
            return got
        if not parents:
            got = (np.zeros(self.dataset.n_rows, np.int32), 1)
        else:
            base, last = None, None
            for p in parents:  # any order of the parents gives the same counts
                rest = parents - {p}
                if rest in self._codes:
                    base, last = rest, p
                    break
            if base is None:
                members = sorted(parents)
                base, last = frozenset(members[:-1]), members[-1]
            prev, q = self._codes_of(base)
            got = extend_codes(prev, q, self._data[last], int(self._code_arities[last]))
        if keep:
            self._codes[parents] = got
            while len(self._codes) > self._keep:
                self._codes.popitem(last=False)
        return got

    def score_additions(self, v: int, base: Iterable[int], adds: Iterable[int]) -> None:
        """Score, at once, v's families ``base`` ∪ {u} for every u in ``adds`` not yet
        scored (one pass over the rows each, the codes of ``base`` kept): what a search
        asks before it weighs every arc it could add to v. Families above ``max_parents``
        are skipped."""
        base = tuple(sorted(base))
        if not self.allows(base + (0,)):
            return
        memo = self._memo[v]
        todo = [u for u in adds if u != v and u not in base and tuple(sorted(base + (u,))) not in memo
                and (base or self._known_pair(v, (u,)) is None)]
        if not todo:
            return
        codes, q = self._codes_of(frozenset(base))
        if self.available:  # no fused kernel: each family from the kept codes of ``base``
            for u in todo:
                self.score(v, base + (u,))
            return
        q_full = float(np.prod(self.arities[list(base)], dtype=np.float64)) if base else 1.0
        ll, bdeu = added_parent_scores(codes, q, self._data, np.asarray(todo, np.int64), v, self.arities,
                                       self._nlogn, self.ess, q_full)
        for u, a, b in zip(todo, ll.tolist(), bdeu.tolist()):
            qf = q_full * self.arities[u]
            memo[tuple(sorted(base + (u,)))] = b if self.score_name == "bdeu" else \
                (a - self._c * (self.arities[v] - 1) * qf) / self.copies
        self.scored += len(todo)

    def score(self, v: int, parents: Iterable[int]) -> float:
        """The local score of ``v`` given ``parents``, counted from the data the first time.

        Raises
        ------
        ParameterError
            ``v`` among its parents, an index out of range, or more than ``max_parents``.
        """
        ps = tuple(sorted(int(p) for p in parents))
        got = self._memo[v].get(ps)
        if got is not None:
            return got
        n = self.n_variables
        if not 0 <= v < n or any(not 0 <= p < n for p in ps) or v in ps or len(set(ps)) != len(ps):
            raise ParameterError(f"no family of variable {v} with parents {ps} over {n} variables")
        if not self.allows(ps):
            raise ParameterError(f"a family of {len(ps)} parents is above max_parents = {self.max_parents}")
        got = self._known_pair(v, ps)
        if got is not None:
            return got
        codes, q = self._codes_of(frozenset(ps), keep=False)
        q_full = float(np.prod(self.arities[list(ps)], dtype=np.float64)) if ps else 1.0
        if self.available:
            ll, ll0, m = available_family_ll(codes, q, self._data, np.asarray(ps, np.int64), v, self.arities,
                                             self._nlogn)
            free = (self.arities[v] - 1) * q_full
            if not ps:
                # the child's own observed rows, scaled to all
                value = float(ll) * self.dataset.n_rows / max(m, 1) - self._c * free
            else:
                # the parents' gain over none, measured on the family's own rows (the same
                # rows for both: each on rows of its own would add the noise of the child's
                # entropy on two samples), scaled to all rows; a fit's gain on its own rows
                # exceeds what it would gain on new ones by about half its extra parameters,
                # and scaling grows that excess by the same factor: the growth is taken off
                extra = free - (self.arities[v] - 1)
                scale = self.dataset.n_rows / m if m else 0.0
                value = self.score(v, ()) + scale * float(ll - ll0) - 0.5 * max(scale - 1, 0.0) * extra \
                    - self._c * extra
            self._memo[v][ps] = value
            self.scored += 1
            return value
        ll, bdeu = family_scores(codes, q, self._data, np.array([v], np.int64), self.arities, self._nlogn,
                                 self.ess, q_full)
        if self.score_name == "bdeu":
            value = float(bdeu[0])
        else:
            value = float(ll[0] - self._c * (self.arities[v] - 1) * q_full) / self.copies
        self._memo[v][ps] = value
        self.scored += 1
        return value
