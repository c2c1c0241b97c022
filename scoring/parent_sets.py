"""Parent-set identification: exploring candidate parent sets level by level, with pruning.

For every variable X the sets Π of other variables with |Π| ≤ D are explored in order of
size. A set is scored only if all its immediate subsets Π∖{Z} were scored for X and no
pruning rule fires on any (Π∖{Z}, Z); a rule that fires on (P, Z) proves that P ∪ {Z}
*and every superset of it* scores no better than a strict subset (so the best set inside
any S is still in the cache). Rules, for BIC / AIC with penalty t(Π) = c·(r_X−1)·q(Π)
(c = ln N / 2 for BIC, 1 for AIC), gain(Z | P) = LL(X|P∪Z) − LL(X|P) = N·I(X;Z|P), and
the extra penalty (r_Z−1)·t(P) of adding Z:

1. subset dominance (Teyssier & Koller 2005; de Campos & Ji 2011, Thm 1): drop Π when
   a strict subset scores at least as well. Valid for every score, BDeu included.
2. de Campos & Ji 2011, Thm 4: N·H(X|P) ≤ (r_Z−1)·t(P).
3. de Campos, Scanagatta, Corani & Zaffalon 2018, Thm 1: N·min{H(X|P), H(Z|P)} ≤
   (r_Z−1)·t(P). H(Z|P) is known when Z was itself scored with P; otherwise the smallest
   known H(Z|P') over subsets P' ⊂ P is used (H only grows as the condition shrinks, so
   this is the same theorem's Thm 2 and still valid).
4. the cheap variant (their Thm 2 with P' = ∅): N·min{H(X), H(Z)} ≤ (r_Z−1)·t(P).
5. the cap on the number of parents (their Thm 3): since q(P) ≥ 2^|P|, X has at most
   m = ⌈log2(N·H(X) / (c·(r_X−1)))⌉ parents; no set larger than m is explored.
6. Scanagatta, Corani, de Campos & Zaffalon 2016, Thm 1, with
   w(X,Y) = N·I(X;Y) + N·min{H(X), H(Y)}: for P ≠ ∅, w(X,Z) ≤ (r_Z−1)·t(P) and
   w(X,Y) ≤ r_Y·t(P) for every other candidate Y ∉ P ∪ {Z, X}.
   Since w(X,Z) ≥ N·min{H(X),H(Z)}, its first condition implies rule 4's: with rule 4 on,
   rule 6 never fires (the pruning benchmark shows it); alone, it does.

Every inequality carries a small tolerance on the safe side (a rule fires only when it
holds by more than rounding error), so floating point can never prune an optimal set.
BDeu gets only rule 1; rules 2–6 are BIC/AIC results and are never applied to it.

Complexity: one O(N) counting pass per scored (X, Π) plus one per distinct Π (its
configuration codes, built from its prefix's); the rule checks are O(|Π|) per candidate.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np

from twbn.scoring.cache import ParentSet, ScoreCache
from twbn.scoring.data import Dataset
from twbn.scoring.local_scores import PENALISED_LL_SCORES, Scorer
from twbn.scoring.errors import ParameterError, ScoringStopped, TwbnError
from twbn.scoring.level_pruning import RTOL as _RTOL, LevelPruner, PairFamilies, pair_weights

__all__ = ["ScoringTooLarge", "ExhaustiveEstimate", "estimate_cost", "default_memory_limit",
           "resident_bytes", "exhaustive_estimate", "parent_cap", "resolve_rules", "build_cache"]

RULE_NAMES = {
    1: "subset dominance (de Campos & Ji 2011, Thm 1)",
    2: "N·H(X|P) bound (de Campos & Ji 2011, Thm 4)",
    3: "entropy rule with H(Z|P) (de Campos et al. 2018, Thm 1)",
    4: "cheap entropy rule with P' = ∅ (de Campos et al. 2018, Thm 2)",
    5: "cap on the number of parents (de Campos et al. 2018, Thm 3)",
    6: "mutual-information bound (Scanagatta et al. 2016, Thm 1)",
}
PRUNING_MODES: dict[str, tuple[int, ...]] = {
    "none": (),
    "classic": (1, 2, 5),
    "entropy": (1, 3, 4, 5),
    "all": (1, 2, 3, 4, 5, 6),
}
DEFAULT_MAX_PARENTS = 3

#: Seconds per scored (variable, parent set): 4.5-4.8 µs measured on random binary data
#: (60 variables, 2,000 rows, in-degree 3, no pruning: 2.06 million sets in 9.3 s; 120
#: variables, 200 rows: 33.7 million in 163 s), with the other core busy.
SECONDS_PER_SET = 5e-6
#: Bytes held per scored (variable, parent set) until the end: its entry in the variable's
#: score table (a tuple, a float, a dict slot). 120 variables, in-degree 3: 33.7 million
#: sets in 6.3 GB resident, about 190 bytes each.
BYTES_PER_SET = 190
#: Bytes held per distinct parent set of the level being scored: two float arrays of n
#: conditional entropies (rule 3), 16·n bytes; at 300 variables and in-degree 3 this is
#: what took a 5-row data set past 23 GB.
BYTES_PER_LEVEL_SET_PER_VARIABLE = 16
#: What the process holds before scoring (the interpreter, numpy, numba): 200 MB.
BASE_BYTES = 200e6


class ScoringTooLarge(TwbnError, ValueError):
    """Exhaustive scoring would not fit the memory limit (or stopped at it).

    Examples
    --------
    >>> import twbn
    >>> build_cache(twbn.read_csv(twbn.example_path("zoo")), memory_limit=1000)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    twbn.scoring.parent_sets.ScoringTooLarge: exhaustive scoring of 17 variables at in-degree <= 3 would need ...
    """


@dataclass(frozen=True)
class ExhaustiveEstimate:
    """What exhaustive scoring would cost, at most: every set up to each variable's cap
    (pruning rules 2–4 and 6 can only lower it)."""

    sets: int
    seconds: float
    bytes: float

    def describe(self) -> str:
        return f"up to {self.sets:,} parent sets, about {_duration(self.seconds)} and {self.bytes / 1e9:,.1f} GB"


def _duration(seconds: float) -> str:
    for unit, size in (("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:,.1f} {unit}"
    return f"{seconds:.0f} s"


def estimate_cost(n: int, maxpar: Iterable[int], at_most: int | None = None) -> ExhaustiveEstimate:
    """The most exhaustive scoring of ``n`` variables with in-degree caps ``maxpar`` can
    cost, from the measured constants above; ``at_most`` sets when a time limit stops it."""
    maxpar = list(maxpar)
    sets = sum(sum(math.comb(n - 1, k) for k in range(m + 1)) for m in maxpar)
    top = max(maxpar, default=0)
    level = max((math.comb(n, d) for d in range(1, top + 1)), default=0)
    if at_most is not None:
        # a distinct parent set is scored for the variables around it, about n - top of them
        sets, level = min(sets, at_most), min(level, at_most // max(1, n - top) + 1)
    return ExhaustiveEstimate(sets, sets * SECONDS_PER_SET,
                              BASE_BYTES + sets * BYTES_PER_SET + level * BYTES_PER_LEVEL_SET_PER_VARIABLE * n)


def default_memory_limit() -> float | None:
    """Three quarters of this machine's memory, in bytes (None where it cannot be read)."""
    try:
        return 0.75 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def resident_bytes() -> float:
    """This process's resident memory now (Linux), else its peak so far."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024.0


def _caps(scorer: Scorer, dataset: Dataset, rules, max_parents: int) -> tuple[list, list[int], np.ndarray, list]:
    """Level 0: each variable's empty-set score and log-likelihood, rule 5's cap on its
    parents (or None) and the in-degree explored."""
    n, N = dataset.n_variables, dataset.n_rows
    r = [int(a) for a in dataset.arities]
    sc0, ll0 = scorer.family((), range(n))
    H0 = (-ll0 / N).tolist()
    caps = [parent_cap(N, H0[x], r[x], scorer.penalty_c) if 5 in rules else None for x in range(n)]
    maxpar = [min(max_parents, n - 1, cap if cap is not None else max_parents) for cap in caps]
    return caps, maxpar, ll0, [sc0, H0]


def exhaustive_estimate(dataset: Dataset, *, score: str = "bic", ess: float = 1.0,
                        max_parents: int = DEFAULT_MAX_PARENTS,
                        pruning: str | Iterable[int] = "all") -> ExhaustiveEstimate:
    """What :func:`build_cache` would cost at most on ``dataset``, known before it starts
    (it scores the n empty sets, for rule 5's caps)."""
    rules = resolve_rules(score, pruning)
    _, maxpar, _, _ = _caps(Scorer(dataset, score, ess), dataset, rules, max_parents)
    return estimate_cost(dataset.n_variables, maxpar)


def _fires(bound: float, cost: float) -> bool:
    """bound ≤ cost, required to hold beyond rounding error (the safe direction)."""
    return bound < cost - _RTOL * (1.0 + abs(cost))


def parent_cap(n_rows: int, entropy_x: float, arity_x: int, c: float) -> int:
    """Rule 5: the most parents X can have in an optimal network (0 for a constant X)."""
    if arity_x <= 1 or entropy_x <= 0.0:
        return 0
    ratio = n_rows * entropy_x / (c * (arity_x - 1))
    m = max(0, math.ceil(math.log2(ratio)))
    # The rule prunes P∪{Y} when N·H(X) ≤ c(r_X−1)·2^|P|; keep the tolerance on the safe side.
    while not _fires(n_rows * entropy_x, c * (arity_x - 1) * 2.0**m):
        m += 1
    return m


def resolve_rules(score: str, pruning: str | Iterable[int]) -> tuple[int, ...]:
    """The rules to apply: a mode name or an explicit set, restricted to those valid for ``score``."""
    if isinstance(pruning, str):
        if pruning not in PRUNING_MODES:
            raise ParameterError(f"unknown pruning mode {pruning!r}; choose one of {', '.join(PRUNING_MODES)}")
        rules = PRUNING_MODES[pruning]
    else:
        rules = tuple(sorted(set(int(r) for r in pruning)))
        bad = [r for r in rules if r not in RULE_NAMES]
        if bad:
            raise ParameterError(f"unknown pruning rules {bad}; rules are 1–6")
    if score not in PENALISED_LL_SCORES:
        rules = tuple(r for r in rules if r == 1)
    return rules


def build_cache(
    dataset: Dataset,
    *,
    score: str = "bic",
    ess: float = 1.0,
    max_parents: int = DEFAULT_MAX_PARENTS,
    pruning: str | Iterable[int] = "all",
    time_limit: float | None = None,
    progress: bool | None = None,
    scorer: Scorer | None = None,
    memory_limit: float | None = None,
    stop: Callable[[], bool] | None = None,
    level_margin: float = 0.0,
    families=None,
) -> tuple[ScoreCache, dict]:
    """Score and prune candidate parent sets of every variable; return the cache and stats.

    ``max_parents`` bounds the in-degree (and, with any BIC rule on, rule 5's per-variable
    cap bounds it further). ``time_limit`` (seconds) stops exploration cleanly: the cache
    holds every set scored so far and ``stats["complete"]`` is False. ``progress`` shows
    a progress bar (default: when stderr is a terminal). ``memory_limit`` (bytes): refuse
    before scoring when the estimate (:func:`estimate_cost`) exceeds it, and stop with
    :class:`ScoringTooLarge` if the process's resident memory reaches it all the same.
    ``stop()`` true (looked at as often as the time limit) ends scoring with
    :class:`ScoringStopped` and no cache. ``level_margin`` > 0 (with ``time_limit``): a
    size of three or more parents is not started unless ``level_margin`` times its
    predicted seconds fit before the limit, predicted at the rate per (variable, set) of the size before; the
    cache then holds every set of the sizes started. Measured: jester's pairs took 1.45
    times the singles' rate per set. Learning from data at 600 s, jester's triples, started
    in a 150 s share, ran 34 s past it with 4 of 16 M sets scored, and the 2.7 M sets kept
    took 2.8 GB. ``families`` (a :class:`~twbn.scoring.families.FamilyScores` of the same
    data and score) is given every family of one parent scored here.
    """
    _check_limits(max_parents, time_limit)
    rules = resolve_rules(score, pruning)
    scorer = scorer or Scorer(dataset, score, ess)
    t0 = time.monotonic()
    deadline = None if time_limit is None else t0 + time_limit
    n, N = dataset.n_variables, dataset.n_rows
    r = [int(a) for a in dataset.arities]
    caps, maxpar, ll0, (sc0, H0) = _caps(scorer, dataset, rules, max_parents)  # level 0: the empty sets
    scores: list[dict[ParentSet, float]] = [{(): float(sc0[x])} for x in range(n)]
    _refuse_over_memory(n, maxpar, max_parents, time_limit, memory_limit)
    guard = _Guard(stop, memory_limit)
    pairs = _pair_families(scorer, n, rules, maxpar, deadline)
    if pairs is not None and families is not None:
        families.know_pairs(pairs.sc)
    weights = pair_weights(pairs, N, ll0, H0) if pairs is not None and pairs.complete else None
    pruner = LevelPruner(scorer, r, N, H0, rules, weights, pairs)
    bic_rules = any(k in rules for k in (2, 3, 4, 5, 6))
    levels = _explore(scorer, scores, maxpar, pruner if bic_rules else None, deadline, level_margin, guard,
                      _progress_bar(progress))
    scored = sum(len(f) for f in scores)
    dominated = _drop_all_dominated(scores, guard) if 1 in rules else 0
    cache = ScoreCache.from_mapping(dataset.names, scores, arities=r,
                                    meta={"score": score, "ess": ess if score == "bdeu" else None, "rows": N})
    stats = {"score": score, "ess": ess if score == "bdeu" else None, "rows": N, "variables": n,
             "max_parents": max_parents, "pruning": pruning if isinstance(pruning, str) else "custom",
             "rules": list(rules), **_counts(n, max_parents, maxpar, scored, levels.fired), "kept": cache.n_parent_sets(),
             "dominated_removed": dominated,
             "caps": {dataset.names[x]: caps[x] for x in range(n)} if 5 in rules else None,
             "complete": levels.complete, "stopped_at_level": levels.stopped_level,
             "level_not_started": levels.not_started, "seconds": round(time.monotonic() - t0, 4),
             "approximate": not levels.complete}
    # every size below the one it stopped in is whole: a network of families of at most
    # that many parents has its families here, or a cached subset that scores better
    # (each pruning rule drops a set only if it cannot be an optimal family)
    top = max(maxpar) if n else 0
    through = top if levels.complete else (None if levels.stopped_level is None else levels.stopped_level - 1)
    stats["complete_through"] = through
    cache.meta.update({"complete": levels.complete, "max_parents": max_parents, "pruning": stats["pruning"],
                       "complete_through": through})
    return cache, stats


def _pair_families(scorer, n: int, rules, maxpar, deadline) -> "PairFamilies | None":
    """Every family of one parent, for rule 6's weights, where rule 6 can fire (it prunes
    from two parents on); None elsewhere. Where ``deadline`` came first, the families
    scored by then (``PairFamilies.done``) and no weights: rule 6 stays off (it prunes
    less, never wrongly). At munin (n = 1,041) with k = 1, scoring them first spent a 30 s
    command's scoring share before the first level began, and the cache held no parent
    at all (2026-12-07)."""
    if 6 not in rules or max(maxpar, default=0) < 2:
        return None
    return PairFamilies(scorer, n, deadline)


def _check_limits(max_parents: int, time_limit: float | None) -> None:
    if max_parents < 0:
        raise ParameterError(f"max_parents must be >= 0, got {max_parents}")
    if time_limit is not None and not time_limit > 0:
        raise ParameterError(f"time_limit must be positive, got {time_limit}")


def _refuse_over_memory(n: int, maxpar, max_parents: int, time_limit, memory_limit) -> None:
    """ScoringTooLarge before scoring where the estimate is over ``memory_limit``; with a
    time limit, the estimate of what can be scored by then."""
    if memory_limit is None:
        return
    estimate = estimate_cost(n, maxpar)
    if time_limit is not None:  # it stops at the limit, with what it scored by then
        estimate = estimate_cost(n, maxpar, at_most=int(time_limit / SECONDS_PER_SET))
    if estimate.bytes > memory_limit:
        raise ScoringTooLarge(
            f"exhaustive scoring of {n:,} variables at in-degree <= {max_parents} would need {estimate.describe()}, "
            f"over the memory limit of {memory_limit / 1e9:.1f} GB: use approximate exploration (--approximate) "
            "or a smaller --max-parents")


class _Guard:
    """The caller's stop request and the memory limit, looked at as often as the time."""

    def __init__(self, stop, memory_limit):
        self.stop, self.memory_limit = stop, memory_limit

    def stopped(self) -> None:
        if self.stop is not None and self.stop():
            raise ScoringStopped("scoring stopped on request")

    def over_memory(self) -> None:
        if self.memory_limit is not None and resident_bytes() > self.memory_limit:
            raise ScoringTooLarge(f"exhaustive scoring stopped at the memory limit of {self.memory_limit / 1e9:.1f} "
                                  "GB: use approximate exploration (--approximate) or a smaller --max-parents")


def _progress_bar(progress: bool | None):
    """One bar per level of parent-set size, counting the sets scored in it (default: when
    stderr is a terminal); None without one."""
    if progress is None:
        progress = sys.stderr.isatty()
    if not progress:
        return None
    from tqdm import tqdm

    return tqdm(total=0, desc="scoring", unit=" sets", file=sys.stderr, leave=False, mininterval=0.25)


@dataclass
class _Levels:
    """How the exploration ended, and the candidates each rule pruned unscored."""

    complete: bool = True
    stopped_level: int | None = None
    not_started: bool = False
    fired: dict = None


def _explore(scorer, scores, maxpar, pruner, deadline, level_margin, guard, bar) -> _Levels:
    """Score the sets of size 1, 2, … into ``scores`` until the largest size, the
    deadline, or a size not worth starting (``level_margin``); ``pruner`` None: no BIC rule."""
    n = len(scores)
    out = _Levels(fired=defaultdict(int))
    level_sets: list[list[ParentSet]] = [[()] for _ in range(n)]
    began, scored_before = time.monotonic(), n  # level 0: the empty sets
    for d in range(1, (max(maxpar) if n else 0) + 1):
        if level_margin > 0 and deadline is not None and d >= 3 and \
                not _fits_in_time(d, level_sets, maxpar, began, scored_before, level_margin, deadline):
            out.complete, out.stopped_level, out.not_started = False, d, True
            break
        began = time.monotonic()
        # the first level's families are already scored where rule 6's weights were made:
        # reading them (1.3 s at n = 1,041) is not stopped half-way by the deadline
        free = d == 1 and pruner is not None and pruner.pairs is not None
        jobs, out.complete = _level_jobs(d, level_sets, maxpar, pruner, out.fired, None if free else deadline, guard)
        partial = free and not pruner.pairs.complete  # the deadline came while pairs were scored
        if partial:  # the level holds those scored, and is not whole
            jobs = {s: xs for s, xs in jobs.items() if pruner.pairs.done[s[0]]}
        new_level: list[list[ParentSet]] = [[] for _ in range(n)]
        if bar is not None:
            bar.reset(total=len(jobs))
            bar.set_description(f"scoring parent sets of size {d}/{max(maxpar)}")
        if out.complete:
            out.complete = _score_level(jobs, scorer, pruner, scores, new_level, None if free else deadline, guard,
                                        bar) and not partial
        level_sets = new_level
        scored_before = max(1, sum(len(sets) for sets in new_level))  # (variable, set) pairs, as ``coming``
        scorer.forget_codes()
        if pruner is not None:
            pruner.next_level(d)
        if not out.complete:
            out.stopped_level = d
            break
    if bar is not None:
        bar.close()
    scorer.forget_codes()
    return out


def _fits_in_time(d, level_sets, maxpar, began, scored_before, level_margin, deadline) -> bool:
    """Whether ``level_margin`` times size ``d``'s predicted seconds fit before the
    deadline, at the rate per (variable, set) of the size before. From triples on: a cache
    of singles alone (pairs not started at 10 s) lost 4,340 at baudio k = 2 against the
    pairs scored part-way."""
    n = len(level_sets)
    rate = (time.monotonic() - began) / max(1, scored_before)
    # at most this many sets of size d: each of size d − 1 extended by a later variable
    coming = sum(len(level_sets[x]) for x in range(n) if maxpar[x] >= d) * max(0, n - d) / d
    return time.monotonic() + level_margin * rate * coming <= deadline


def _level_jobs(d, level_sets, maxpar, pruner, fired, deadline, guard):
    """The sets of size ``d`` to score, each with the variables it is a candidate for, and
    whether the deadline let every variable's candidates be found. A set is a candidate
    where every immediate subset was scored and no rule fires on adding the missing member."""
    n = len(level_sets)
    jobs: dict[ParentSet, list[int]] = defaultdict(list)
    for x in range(n):
        if maxpar[x] < d:
            continue
        prev_set = set(level_sets[x])
        for p in level_sets[x]:
            codes = pruner.codes(x, p) if pruner is not None else None
            for y in range(p[-1] + 1 if p else 0, n):
                if y == x:
                    continue
                if codes is not None and codes[y]:
                    fired[codes[y]] += 1
                    continue
                s = p + (y,)
                if _subsets_kept(s, x, prev_set, pruner, fired):
                    jobs[s].append(x)
        if deadline is not None and time.monotonic() > deadline:
            return jobs, False
        guard.over_memory()
        guard.stopped()
    return jobs, True


def _subsets_kept(s: ParentSet, x: int, prev_set: set, pruner, fired) -> bool:
    """Every other immediate subset of ``s`` was scored for x (if one was pruned, so is
    s), and no rule fires on adding the missing member to it."""
    for i in range(len(s) - 1):
        sub = s[:i] + s[i + 1:]
        if sub not in prev_set:
            return False
        if pruner is not None:
            k = pruner.codes(x, sub)[s[i]]
            if k:
                fired[k] += 1
                return False
    return True


def _score_level(jobs, scorer, pruner, scores, new_level, deadline, guard, bar) -> bool:
    """Score the level's sets into ``scores`` and ``new_level``; False where the deadline
    ended it part-way.

    In sorted order the sets sharing a prefix come together: keeping the codes (one int32 a
    row) of the current set's prefixes only, not of the whole level, computes each prefix
    once. The level's own codes, kept for the next level, took 3.6 GB at plants' 52 k
    triples (17,412 rows)."""
    prefix = None
    for done, s in enumerate(sorted(jobs), 1):
        if done % 64 == 0:
            guard.stopped()
            if bar is not None:
                bar.update(64)
        if done % 4096 == 0:
            guard.over_memory()
        children = jobs[s]
        if s[:-1] != prefix:
            prefix = s[:-1]
            scorer.forget_codes(s)
        known = pruner.scored(s, children) if pruner is not None else None
        sc, ll = known if known is not None else scorer.family(s, children, keep_codes=False)
        if pruner is not None:
            pruner.record(s, children, ll)
        for x, v in zip(children, sc.tolist()):
            scores[x][s] = v
            new_level[x].append(s)
        if deadline is not None and time.monotonic() > deadline:
            return False
    return True


def _drop_all_dominated(scores, guard) -> int:
    """Rule 1 on every variable's sets, in place; how many it dropped."""
    dominated = 0
    for x in range(len(scores)):
        guard.stopped()  # a variable's pass can take seconds (audiology: 70 in 70-100 s)
        scores[x], dom = _drop_dominated(scores[x])
        dominated += dom
    return dominated


def _counts(n: int, max_parents: int, maxpar, scored: int, fired) -> dict:
    """The search space, the sets scored, and the candidates each rule pruned unscored."""
    space = sum(sum(math.comb(n - 1, k) for k in range(min(max_parents, n - 1) + 1)) for _ in range(n))
    capped = sum(
        sum(math.comb(n - 1, k) for k in range(maxpar[x] + 1, min(max_parents, n - 1) + 1)) for x in range(n))
    # sets never generated because a subset was pruned: what no counter above claims
    superset_skips = space - scored - capped - sum(fired.values())
    assert superset_skips >= 0, "pruning accounting is inconsistent"
    return {"space": space, "scored": scored,
            "pruned_unscored": {"rule2": fired[2], "rule3": fired[3], "rule4": fired[4], "rule5": capped,
                                "rule6": fired[6], "superset_of_pruned": superset_skips}}


def _drop_dominated(fam: dict[ParentSet, float]) -> tuple[dict[ParentSet, float], int]:
    """Rule 1 on one variable's scored sets, where every immediate subset of a scored set is
    scored too (the exploration guarantees it): best(S) = max over immediate subsets of
    max(score, best), so one pass in order of size suffices."""
    best_sub: dict[ParentSet, float] = {}
    kept = {}
    for s in sorted(fam, key=len):
        v = fam[s]
        if not s:
            kept[s] = v
            best_sub[s] = -math.inf
            continue
        b = -math.inf
        for i in range(len(s)):
            sub = s[:i] + s[i + 1:]
            b = max(b, fam[sub], best_sub[sub])
        best_sub[s] = b
        if v > b:
            kept[s] = v
    return kept, len(fam) - len(kept)
