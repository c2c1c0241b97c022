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
_RTOL = 1e-9

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
    took 2.8 GB.
    """
    if max_parents < 0:
        raise ParameterError(f"max_parents must be >= 0, got {max_parents}")
    if time_limit is not None and not time_limit > 0:
        raise ParameterError(f"time_limit must be positive, got {time_limit}")
    rules = resolve_rules(score, pruning)
    scorer = scorer or Scorer(dataset, score, ess)
    t0 = time.monotonic()
    deadline = None if time_limit is None else t0 + time_limit
    n, N = dataset.n_variables, dataset.n_rows
    r = [int(a) for a in dataset.arities]
    c = scorer.penalty_c
    bic_rules = any(k in rules for k in (2, 3, 4, 5, 6))

    # Level 0: the empty parent set of every variable.
    caps, maxpar, ll0, (sc0, H0) = _caps(scorer, dataset, rules, max_parents)
    scores: list[dict[ParentSet, float]] = [{(): float(sc0[x])} for x in range(n)]
    if memory_limit is not None:
        estimate = estimate_cost(n, maxpar)
        if time_limit is not None:  # it stops at the limit, with what it scored by then
            estimate = estimate_cost(n, maxpar, at_most=int(time_limit / SECONDS_PER_SET))
        if estimate.bytes > memory_limit:
            raise ScoringTooLarge(
                f"exhaustive scoring of {n:,} variables at in-degree <= {max_parents} would need {estimate.describe()}, "
                f"over the memory limit of {memory_limit / 1e9:.1f} GB: use approximate exploration (--approximate) "
                "or a smaller --max-parents")

    def stopped() -> None:
        if stop is not None and stop():
            raise ScoringStopped("scoring stopped on request")

    def over_memory() -> None:
        if memory_limit is not None and resident_bytes() > memory_limit:
            raise ScoringTooLarge(f"exhaustive scoring stopped at the memory limit of {memory_limit / 1e9:.1f} GB: "
                                  "use approximate exploration (--approximate) or a smaller --max-parents")

    w = None
    if 6 in rules:
        # w(X,Y) = N·I(X;Y) + N·min{H(X),H(Y)}, from all pairwise log-likelihoods.
        w = np.zeros((n, n))
        for y in range(n):
            others = [x for x in range(n) if x != y]
            _, ll = scorer.family((y,), others)
            for x, llxy in zip(others, ll.tolist()):
                w[x, y] = (llxy - ll0[x]) + N * min(H0[x], H0[y])

    fired = defaultdict(int)
    level_sets: list[list[ParentSet]] = [[()] for _ in range(n)]
    r_arr = np.array(r, dtype=float)
    H0_arr = np.array(H0)
    # hcond[P][z] = H(z|P) for the z scored with P (NaN elsewhere); hup[P] replaces each
    # NaN by the smallest H(z|P') over P' ⊂ P, an upper bound (entropy only shrinks
    # with more conditioning) that keeps rule 3 valid where H(z|P) was never computed.
    hcond: dict[ParentSet, np.ndarray] = {(): H0_arr}
    hup: dict[ParentSet, np.ndarray] = {(): H0_arr}
    codes_memo: dict[tuple[int, ParentSet], list[int]] = {}

    def below(bound, cost):
        """Vectorised :func:`_fires`."""
        return bound < cost - _RTOL * (1.0 + np.abs(cost))

    def fire_codes(x: int, p: ParentSet) -> list[int]:
        """For each z, the first rule (cheapest first: 4, 2, 3, 6) proving that p ∪ {z}
        and its supersets are useless for x; 0 where none does."""
        key = (x, p)
        got = codes_memo.get(key)
        if got is not None:
            return got
        tp = c * (r[x] - 1) * scorer.q(p)
        cost = (r_arr - 1.0) * tp
        hx = hcond[p][x]
        code = np.zeros(n, np.int8)
        # assigned in reverse priority, so that the cheapest rule that fires is recorded
        if 6 in rules and p:
            f6 = below(w[x], cost)
            viol = ~below(w[x], r_arr * tp)
            viol[x] = False
            viol[list(p)] = False
            nv = int(viol.sum())
            if nv == 1:  # condition B holds only when z is the one violator
                f6 &= viol
            elif nv > 1:
                f6[:] = False
            code[f6] = 6
        if 3 in rules:
            code[below(N * np.minimum(hx, hup[p]), cost)] = 3
        if 2 in rules:
            code[below(N * hx, cost)] = 2
        if 4 in rules:
            code[below(N * np.minimum(H0[x], H0_arr), cost)] = 4
        got = code.tolist()
        codes_memo[key] = got
        return got

    complete = True
    stopped_level = None
    top = max(maxpar) if n else 0
    bar = None
    if progress is None:
        progress = sys.stderr.isatty()
    if progress:
        from tqdm import tqdm

        # one bar per level of parent-set size, counting the sets scored in it
        bar = tqdm(total=0, desc="scoring", unit=" sets", file=sys.stderr, leave=False, mininterval=0.25)

    level_began, level_sets_scored = time.monotonic(), n  # level 0: the empty sets
    not_started = False
    for d in range(1, top + 1):
        # from triples on: a cache of singles alone (pairs not started at 10 s) lost 4,340 at
        # baudio k = 2 against the pairs scored part-way
        if level_margin > 0 and deadline is not None and d >= 3:
            rate = (time.monotonic() - level_began) / max(1, level_sets_scored)
            # at most this many sets of size d: each of size d − 1 extended by a later variable
            coming = sum(len(level_sets[x]) for x in range(n) if maxpar[x] >= d) * max(0, n - d) / d
            if time.monotonic() + level_margin * rate * coming > deadline:
                complete = False
                stopped_level = d
                not_started = True
                break
        level_began = time.monotonic()
        jobs: dict[ParentSet, list[int]] = defaultdict(list)
        for x in range(n):
            if maxpar[x] < d:
                continue
            prev = level_sets[x]
            prev_set = set(prev)
            for p in prev:
                fc_p = fire_codes(x, p) if bic_rules else None
                start = p[-1] + 1 if p else 0
                for y in range(start, n):
                    if y == x:
                        continue
                    if bic_rules and fc_p[y]:
                        fired[fc_p[y]] += 1
                        continue
                    s = p + (y,)
                    ok = True
                    # every other immediate subset must have been scored (if one was
                    # pruned, so is s) and no rule may fire on adding the missing member
                    for i in range(d - 1):
                        sub = s[:i] + s[i + 1:]
                        if sub not in prev_set:
                            ok = False
                            break
                        if bic_rules:
                            k = fire_codes(x, sub)[s[i]]
                            if k:
                                fired[k] += 1
                                ok = False
                                break
                    if ok:
                        jobs[s].append(x)
            if deadline is not None and time.monotonic() > deadline:
                complete = False
                break
            over_memory()
            stopped()
        new_level: list[list[ParentSet]] = [[] for _ in range(n)]
        if bar is not None:
            bar.reset(total=len(jobs))
            bar.set_description(f"scoring parent sets of size {d}/{top}")
        if complete:
            # In sorted order the sets sharing a prefix come together: keeping the codes
            # (one int32 a row) of the current set's prefixes only, not of the whole level,
            # computes each prefix once. The level's own codes, kept for the next level, took
            # 3.6 GB at plants' 52 k triples (17,412 rows).
            prefix = None
            for done, s in enumerate(sorted(jobs), 1):
                if done % 64 == 0:
                    stopped()
                if done % 4096 == 0:
                    over_memory()
                if bar is not None and done % 64 == 0:
                    bar.update(64)
                children = jobs[s]
                if s[:-1] != prefix:
                    prefix = s[:-1]
                    scorer.forget_codes(s)
                sc, ll = scorer.family(s, children, keep_codes=False)
                h = np.full(n, np.nan)
                h[children] = -ll / N
                hcond[s] = h
                if 3 in rules:
                    sub = np.minimum.reduce([hup[s[:i] + s[i + 1:]] for i in range(d)])
                    hup[s] = np.where(np.isnan(h), sub, h)
                for x, v in zip(children, sc.tolist()):
                    scores[x][s] = v
                    new_level[x].append(s)
                if deadline is not None and time.monotonic() > deadline:
                    complete = False
                    break
        level_sets = new_level
        level_sets_scored = max(1, sum(len(sets) for sets in new_level))  # (variable, set) pairs, as ``coming``
        scorer.forget_codes()
        codes_memo.clear()
        # the next level needs only this level's entropies
        for store in (hcond, hup):
            for key in [k for k in store if 0 < len(k) < d]:
                del store[key]
        if not complete:
            stopped_level = d
            break
    if bar is not None:
        bar.close()
    scorer.forget_codes()

    scored = sum(len(f) for f in scores)
    dominated = 0
    if 1 in rules:
        for x in range(n):
            stopped()  # a variable's pass can take seconds (audiology: 70 in 70-100 s)
            kept, dom = _drop_dominated(scores[x])
            dominated += dom
            scores[x] = kept

    cache = ScoreCache.from_mapping(
        dataset.names,
        scores,
        arities=r,
        meta={"score": score, "ess": ess if score == "bdeu" else None, "rows": N},
    )
    space = sum(sum(math.comb(n - 1, k) for k in range(min(max_parents, n - 1) + 1)) for _ in range(n))
    capped = sum(
        sum(math.comb(n - 1, k) for k in range(maxpar[x] + 1, min(max_parents, n - 1) + 1)) for x in range(n)
    )
    # Sets never generated because a subset was pruned: what no counter above claims.
    superset_skips = space - scored - capped - sum(fired.values())
    assert superset_skips >= 0, "pruning accounting is inconsistent"
    stats = {
        "score": score,
        "ess": ess if score == "bdeu" else None,
        "rows": N,
        "variables": n,
        "max_parents": max_parents,
        "pruning": pruning if isinstance(pruning, str) else "custom",
        "rules": list(rules),
        "space": space,
        "scored": scored,
        "kept": cache.n_parent_sets(),
        "pruned_unscored": {
            "rule2": fired[2],
            "rule3": fired[3],
            "rule4": fired[4],
            "rule5": capped,
            "rule6": fired[6],
            "superset_of_pruned": superset_skips,
        },
        "dominated_removed": dominated,
        "caps": {dataset.names[x]: caps[x] for x in range(n)} if 5 in rules else None,
        "complete": complete,
        "stopped_at_level": stopped_level,
        "level_not_started": not_started,
        "seconds": round(time.monotonic() - t0, 4),
        "approximate": not complete,
    }
    # every size below the one it stopped in is whole: a network of families of at most
    # that many parents has its families here, or a cached subset that scores better
    # (each pruning rule drops a set only if it cannot be an optimal family)
    through = top if complete else (None if stopped_level is None else stopped_level - 1)
    stats["complete_through"] = through
    cache.meta.update({"complete": complete, "max_parents": max_parents, "pruning": stats["pruning"],
                       "complete_through": through})
    return cache, stats


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
