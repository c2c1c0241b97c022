"""Local scores with decision-tree local structure: PCART and FT (Talvitie, Eggeling &
Koivisto 2019, "Learning Bayesian networks with local structure, mixed variables, and
exact algorithms").

A family (response X_v, predictors P) is scored as g_v(P) = max_T π_v(P, T)·ℓ_v(T)
(their Sec. 4), in natural logarithms:

- **Leaves** (Sec. 2.3): categorical response, Dirichlet(α = 1/2 per state):
  ln Γ(rα) − ln Γ(N_R + rα) + Σ_x [ln Γ(N_Rx + α) − ln Γ(α)]; continuous response,
  Normal-inverse-gamma (ν = 1, λ = 1, μ̄ = 0, a = 1):
  −(N_R/2) ln π + (ν/2) ln(λν) + ½ ln a − ½ ln(N_R + a) + ln Γ((N_R+ν)/2) − ln Γ(ν/2)
  − ((N_R+ν)/2) ln(s_R + t_R + νλ), s_R = Σ (x − μ_R)², t_R = N_R a (μ_R − μ̄)²/(N_R + a).
- **PCART** (Sec. 3): trees whose inner nodes split a categorical predictor's value set
  into any two non-empty parts, or halve a continuous predictor's interval (its data
  range) at the midpoint, at most ``max_splits`` times per predictor. Prior
  π(T | P) = c(P)·γ^l(T), γ = 1/(4C), C = Σ_categorical (2^(k−1) − 1) + #continuous
  (Sec. 3.1), with c(P) = 1/Σ_T γ^l(T) normalising over all trees of S_P (Sec. 3.2;
  computed by the same recursion with a sum, on node shapes only, since it does not
  depend on data). The optimum is the DP of Sec. 4.1: best(R) = max(leaf(R),
  max over splits best(R′) + best(R″)), memoised by node; a node with no data points is
  a leaf; a categorical predictor's values absent from the node's data are dropped from
  the node. Nodes are tuples of ints (a bitmask of values per categorical predictor, a
  level·2^s + index code per continuous one) — the compact representation of Sec. 4.2.
  Time O(n_nodes · (Σ 2^(k−1) + #continuous) · N_node) in numpy.
- **FT** (Sec. 3.2): the full table over P, each continuous predictor discretised into
  k_u ∈ 2..``max_bins`` bins at empirical quantiles, maximised over the joint choice of
  the k_u; with only categorical predictors, the Dirichlet(1/2) table score.
- **PCARTp, FTp**: plus ln 1/C(n−1, |P|), the prior uniform over parent-set sizes.

``build_local_structure_cache`` scores every parent set up to ``max_parents``
(exhaustively; subset dominance, rule 1, is the only pruning valid for these scores) in
parallel over variables and returns an ordinary ``ScoreCache``: every structure method
runs on it unchanged.
"""

from __future__ import annotations

import itertools
import math
import time
from functools import lru_cache
from typing import Callable

import numpy as np

from twbn.scoring.cache import ScoreCache
from twbn.scoring.mixed_data import CATEGORICAL, MixedData
from twbn.scoring.parallel import fork_map, shared
from twbn.scoring.errors import ParameterError

__all__ = ["categorical_leaf", "continuous_leaf", "continuous_leaf_stats", "pcart_fit",
           "log_tree_normaliser", "pcart_score", "quantile_bins", "ft_score", "local_structure_score",
           "build_local_structure_cache"]

LOCAL_STRUCTURE_SCORES = ("pcart", "pcartp", "ft", "ftp")
ALPHA = 0.5
NU, LAMBDA, MU_BAR, A = 1.0, 1.0, 0.0, 1.0
DEFAULT_MAX_SPLITS = 3
DEFAULT_MAX_BINS = 7
_LG_NU2 = math.lgamma(NU / 2)


def categorical_leaf(counts: np.ndarray) -> float:
    """ln marginal likelihood of a leaf with these state counts (Dirichlet, α = 1/2)."""
    r = counts.shape[0]
    n = float(counts.sum())
    return (math.lgamma(r * ALPHA) - math.lgamma(n + r * ALPHA)
            + float(sum(math.lgamma(c + ALPHA) for c in counts.tolist())) - r * math.lgamma(ALPHA))


def continuous_leaf(values: np.ndarray) -> float:
    """ln marginal likelihood of a leaf holding these values (Normal-inverse-gamma)."""
    n = values.shape[0]
    if n == 0:
        return 0.0
    mu = float(values.mean())
    return continuous_leaf_stats(n, mu, float(((values - mu) ** 2).sum()))


def continuous_leaf_stats(n: float, mu: float, s: float) -> float:
    """The same from the count, mean and sum of squared deviations of the values."""
    if n == 0:
        return 0.0
    t = n * A * (mu - MU_BAR) ** 2 / (n + A)
    return (-0.5 * n * math.log(math.pi) + 0.5 * NU * math.log(LAMBDA * NU) + 0.5 * math.log(A)
            - 0.5 * math.log(n + A) + math.lgamma((n + NU) / 2) - _LG_NU2
            - 0.5 * (n + NU) * math.log(s + t + NU * LAMBDA))


class _Family:
    """The data of one family, in the forms the DPs need: rows that agree on every
    predictor (categorical value, finest dyadic cell) are merged into one *atom* holding
    the response's counts (categorical) or count, mean and squared deviations
    (continuous), so that a node costs O(atoms), not O(rows)."""

    def __init__(self, data: MixedData, v: int, parents: tuple[int, ...], max_splits: int):
        self.v = v
        self.parents = parents
        self.s = max_splits
        self.cat = [data.kinds[u] == CATEGORICAL for u in parents]
        self.response_cat = data.kinds[v] == CATEGORICAL
        self.y = data.columns[v]
        self.r = data.arity(v) if self.response_cat else 0
        self.cols = []
        for u, is_cat in zip(parents, self.cat):
            if is_cat:
                self.cols.append(data.columns[u])
            else:  # the dyadic cell of each point at the finest level s
                x = data.columns[u]
                lo, hi = float(x.min()), float(x.max())
                width = hi - lo
                cell = np.zeros(x.shape[0], dtype=np.int64) if width <= 0 else np.minimum(
                    ((x - lo) / width * (1 << max_splits)).astype(np.int64), (1 << max_splits) - 1)
                self.cols.append(cell)
        self.sizes = [data.arity(u) if c else 0 for u, c in zip(parents, self.cat)]
        # one mixed-radix code per row (1-D unique is far cheaper than unique over columns)
        radix = [k if c else 1 << max_splits for k, c in zip(self.sizes, self.cat)]
        code = np.zeros(data.n_rows, dtype=np.int64)
        for col, k in zip(self.cols, radix):
            code = code * k + col
        uniq, inverse = np.unique(code, return_inverse=True)
        inverse = inverse.reshape(-1)
        self.n_atoms = uniq.shape[0]
        self.cols = []
        for k in reversed(radix):
            self.cols.append(uniq % k)
            uniq = uniq // k
        self.cols.reverse()
        if self.response_cat:
            self.counts = np.bincount(inverse * self.r + self.y, minlength=self.n_atoms * self.r).reshape(
                self.n_atoms, self.r)
        else:
            self.n_a = np.bincount(inverse, minlength=self.n_atoms).astype(np.float64)
            self.mean_a = np.bincount(inverse, self.y, minlength=self.n_atoms) / self.n_a
            self.m2_a = np.bincount(inverse, (self.y - self.mean_a[inverse]) ** 2, minlength=self.n_atoms)
        n_splits = sum((1 << (k - 1)) - 1 for k, c in zip(self.sizes, self.cat) if c) + sum(
            1 for c in self.cat if not c)
        self.log_gamma = -math.log(4 * max(1, n_splits))

    def leaf(self, atoms: np.ndarray) -> float:
        if self.response_cat:
            return categorical_leaf(self.counts[atoms].sum(axis=0))
        n_a, mean_a = self.n_a[atoms], self.mean_a[atoms]
        n = float(n_a.sum())
        mu = float((n_a * mean_a).sum() / n)
        # pooled squared deviations (Chan et al.): within atoms plus between them
        return continuous_leaf_stats(n, mu, float(self.m2_a[atoms].sum() + (n_a * (mean_a - mu) ** 2).sum()))


def _submask_partitions(mask: int):
    """Each split of a value set into two non-empty parts, once: the part holding the
    lowest value, and the rest."""
    low = mask & -mask
    rest = mask ^ low
    sub = rest
    while True:
        if sub != rest:
            yield low | sub, mask ^ (low | sub)
        if sub == 0:
            break
        sub = (sub - 1) & rest


def pcart_fit(data: MixedData, v: int, parents: tuple[int, ...], max_splits: int = DEFAULT_MAX_SPLITS,
              *, compiled: bool | None = None) -> tuple[float, int]:
    """max_T [l(T)·ln γ + ln ℓ(T)] over PCART trees of X_v on ``parents`` (the DP of
    Sec. 4.1), and the number of leaves of an optimal tree. ``compiled``: the numba
    kernel (``twbn.scoring.pcart_kernel``; default where its dense memo fits) or the Python
    recursion (any size)."""
    from twbn.scoring import pcart_kernel as kern

    fam = _Family(data, v, parents, max_splits)
    if compiled is None:
        compiled = kern.fits(fam.sizes, fam.cat, max_splits)
    if compiled:
        widths = kern.field_widths(fam.sizes, fam.cat, max_splits)
        offsets = np.concatenate([[0], np.cumsum(widths)[:-1]]).astype(np.int64)
        root = sum(((1 << k) - 1 if c else 0) << int(o) for k, c, o in zip(fam.sizes, fam.cat, offsets))
        p = len(parents)
        atoms = np.array(fam.cols, dtype=np.int64).reshape(p, fam.n_atoms)
        max_children = sum((1 << (k - 1)) - 1 if c else 1 for k, c in zip(fam.sizes, fam.cat)) + 1
        z1, z2 = np.zeros((1, 1), dtype=np.int64), np.zeros(1)
        best, leaves = kern.pcart_dp(
            atoms, np.array(fam.cat, dtype=np.bool_), offsets, np.array(widths, dtype=np.int64), max_splits, root,
            fam.counts if fam.response_cat else z1, z2 if fam.response_cat else fam.n_a,
            z2 if fam.response_cat else fam.mean_a, z2 if fam.response_cat else fam.m2_a, fam.response_cat,
            fam.log_gamma, ALPHA, np.array([NU, LAMBDA, MU_BAR, A]), max_children)
        return float(best), int(leaves)
    memo: dict[tuple, tuple[float, int]] = {}
    s = max_splits

    def best(node: tuple, rows: np.ndarray) -> tuple[float, int]:
        """rows: the atoms in the node."""
        if rows.shape[0] == 0:  # an empty node is a leaf: prior only
            return fam.log_gamma, 1
        # drop categorical values that no data point of the node takes
        node = tuple(int(np.bitwise_or.reduce(np.left_shift(1, fam.cols[i][rows]))) if fam.cat[i] else e
                     for i, e in enumerate(node))
        got = memo.get(node)
        if got is not None:
            return got
        result = (fam.log_gamma + fam.leaf(rows), 1)
        for i, e in enumerate(node):
            col = fam.cols[i][rows]
            if fam.cat[i]:
                if e & (e - 1) == 0:  # a single value: nothing to split
                    continue
                bits = np.left_shift(1, col)
                for a, b in _submask_partitions(e):
                    in_a = (bits & a) != 0
                    fa, la = best(node[:i] + (a,) + node[i + 1:], rows[in_a])
                    fb, lb = best(node[:i] + (b,) + node[i + 1:], rows[~in_a])
                    if fa + fb > result[0]:
                        result = (fa + fb, la + lb)
            else:
                level, idx = divmod(e, 1 << s)
                if level >= s:
                    continue
                left = (col >> (s - level - 1)) == 2 * idx
                fa, la = best(node[:i] + ((level + 1) * (1 << s) + 2 * idx,) + node[i + 1:], rows[left])
                fb, lb = best(node[:i] + ((level + 1) * (1 << s) + 2 * idx + 1,) + node[i + 1:], rows[~left])
                if fa + fb > result[0]:
                    result = (fa + fb, la + lb)
        memo[node] = result
        return result

    root = tuple((1 << k) - 1 if c else 0 for k, c in zip(fam.sizes, fam.cat))
    return best(root, np.arange(fam.n_atoms))


def log_tree_normaliser(sizes: tuple[int, ...], categorical: tuple[bool, ...], max_splits: int) -> float:
    """ln Σ_T γ^l(T) over all PCART trees of S_P (data-independent; by node shape: the
    number of values left per categorical predictor, the splits left per continuous one)."""
    n_splits = sum((1 << (k - 1)) - 1 for k, c in zip(sizes, categorical) if c) + sum(1 for c in categorical if not c)
    gamma = 1.0 / (4 * max(1, n_splits))

    @lru_cache(maxsize=None)
    def z(shape: tuple[int, ...]) -> float:
        total = gamma
        for i, (m, c) in enumerate(zip(shape, categorical)):
            if c:
                for j in range(1, m):  # the part holding the lowest value has j values
                    total += math.comb(m - 1, j - 1) * z(shape[:i] + (j,) + shape[i + 1:]) * z(
                        shape[:i] + (m - j,) + shape[i + 1:])
            elif m > 0:
                half = z(shape[:i] + (m - 1,) + shape[i + 1:])
                total += half * half
        return total

    return math.log(z(tuple(k if c else max_splits for k, c in zip(sizes, categorical))))


def pcart_score(data: MixedData, v: int, parents: tuple[int, ...], max_splits: int = DEFAULT_MAX_SPLITS) -> float:
    """ln g_v(P) for PCART: the best tree's ln(γ^l ℓ) plus ln c(P)."""
    fit, _ = pcart_fit(data, v, parents, max_splits)
    sizes = tuple(data.arity(u) for u in parents)
    cats = tuple(data.kinds[u] == CATEGORICAL for u in parents)
    return fit - log_tree_normaliser(sizes, cats, max_splits)


def quantile_bins(x: np.ndarray, k: int) -> np.ndarray:
    """Bin of each value among ≤ k bins cut at the empirical quantiles i/k (a value's bin
    is the number of cut points strictly below it)."""
    cuts = np.unique(np.quantile(x, [i / k for i in range(1, k)]))
    return np.searchsorted(cuts, x, side="left")


def ft_score(data: MixedData, v: int, parents: tuple[int, ...], max_bins: int = DEFAULT_MAX_BINS) -> float:
    """ln g_v(P) for FT: the full table over P, continuous predictors binned at quantiles
    into 2..max_bins bins each, the best joint choice."""
    choices = []
    for u in parents:
        if data.kinds[u] == CATEGORICAL:
            choices.append([(data.columns[u], data.arity(u))])
        else:
            choices.append([(b, int(b.max()) + 1) for b in (quantile_bins(data.columns[u], k)
                                                            for k in range(2, max_bins + 1))])
    y = data.columns[v]
    cat = data.kinds[v] == CATEGORICAL
    best = -math.inf
    for combo in itertools.product(*choices):
        code = np.zeros(data.n_rows, dtype=np.int64)
        for col, k in combo:
            code = code * k + col
        if cat:
            r = data.arity(v)
            counts = np.bincount(code * r + y, minlength=(int(code.max()) + 1) * r).reshape(-1, r)
            score = sum(categorical_leaf(c) for c in counts if c.sum() > 0)
        else:
            order = np.argsort(code, kind="stable")
            bounds = np.flatnonzero(np.diff(code[order])) + 1
            score = sum(continuous_leaf(part) for part in np.split(y[order], bounds))
        best = max(best, score)
    return best


def local_structure_score(data: MixedData, v: int, parents: tuple[int, ...], score: str, *,
                          max_splits: int = DEFAULT_MAX_SPLITS, max_bins: int = DEFAULT_MAX_BINS) -> float:
    """ln g_v(P) for ``score`` in pcart, pcartp, ft, ftp."""
    if score not in LOCAL_STRUCTURE_SCORES:
        raise ParameterError(f"unknown local-structure score {score!r}; choose one of {', '.join(LOCAL_STRUCTURE_SCORES)}")
    if score.startswith("pcart"):
        g = pcart_score(data, v, parents, max_splits)
    else:
        g = ft_score(data, v, parents, max_bins)
    if score.endswith("p"):
        g -= math.log(math.comb(data.n_variables - 1, len(parents)))
    return g


def _score_variable(v: int) -> tuple[int, dict, int, bool]:
    w = shared()
    data, n = w["data"], w["data"].n_variables
    others = [u for u in range(n) if u != v]
    scores: dict[tuple[int, ...], float] = {}
    complete = True
    for d in range(min(w["max_parents"], n - 1) + 1):
        for ps in itertools.combinations(others, d):
            if w["deadline"] is not None and time.monotonic() > w["deadline"]:
                complete = False
                break
            scores[ps] = local_structure_score(data, v, ps, w["score"], max_splits=w["max_splits"],
                                               max_bins=w["max_bins"])
        if not complete:
            break
    return v, scores, len(scores), complete


def build_local_structure_cache(data: MixedData, *, score: str = "pcart", max_parents: int = 2,
                                max_splits: int = DEFAULT_MAX_SPLITS, max_bins: int = DEFAULT_MAX_BINS,
                                time_limit: float | None = None, jobs: int = 2,
                                progress: bool | None = None,
                                stop: Callable[[], bool] | None = None) -> tuple[ScoreCache, dict]:
    """Score every parent set of ≤ ``max_parents`` for every variable, drop the dominated
    ones (rule 1), return a cache and stats. ``time_limit`` stops scoring cleanly (the
    sets scored by then, smaller first, are kept; ``complete`` is False). ``stop()`` true
    ends it as each variable is done, with :class:`ScoringStopped` and no cache."""
    from twbn.scoring.explore import drop_dominated
    from twbn.scoring.parent_sets import _drop_dominated

    if score not in LOCAL_STRUCTURE_SCORES:
        raise ParameterError(f"unknown local-structure score {score!r}; choose one of {', '.join(LOCAL_STRUCTURE_SCORES)}")
    for name, value, least in (("max_parents", max_parents, 0), ("max_splits", max_splits, 1),
                               ("max_bins", max_bins, 2), ("jobs", jobs, 1)):
        if value < least:
            raise ParameterError(f"{name} must be at least {least}, got {value}")
    if time_limit is not None and not time_limit > 0:
        raise ParameterError(f"time_limit must be positive, got {time_limit}")
    if data.n_rows < 1:
        raise ParameterError("cannot score an empty data set")
    t0 = time.monotonic()
    n = data.n_variables
    state = dict(data=data, score=score, max_parents=max_parents, max_splits=max_splits, max_bins=max_bins,
                 deadline=None if time_limit is None else t0 + time_limit)
    families: list[dict] = [{} for _ in range(n)]
    scored, complete = 0, True
    for v, fam, k, done in fork_map(_score_variable, range(n), state=state, jobs=jobs, total=n,
                                    desc=f"{score} local scores", progress=progress, stop=stop):
        scored += k
        complete &= done
        families[v] = _drop_dominated(fam)[0] if done else drop_dominated(fam)
    cache = ScoreCache.from_mapping(data.names, families, arities=[data.arity(u) or None for u in range(n)],
                                    meta={"score": score, "rows": data.n_rows})
    stats = {"score": score, "rows": data.n_rows, "variables": n, "max_parents": max_parents,
             "max_splits": max_splits, "max_bins": max_bins, "kinds": dict(zip(data.names, data.kinds)),
             "scored": scored, "kept": cache.n_parent_sets(), "complete": complete, "approximate": not complete,
             "seconds": round(time.monotonic() - t0, 3), "jobs": jobs}
    cache.meta.update({"complete": complete, "max_parents": max_parents})
    return cache, stats

