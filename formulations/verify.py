"""An independent verifier of result files (``twbn check``).

It shares no code with the solvers or with formulations/graphs.py: its own moral graph,
acyclicity test and elimination simulation, so that a bug there cannot hide a bug in a
solver. It reads the cache with the jkl reader (the cache is the input both sides agree on).
A result learned from data, whose families need not all be in a cache, is checked against
the data instead (:func:`verify_against_data`): every family re-scored by a textbook count
of its own (numpy's ``unique`` over the rows, not twbn's counting kernels), with the score
the result names (``stats["scoring"]``).
"""

from __future__ import annotations

import math
from typing import Any

from twbn.scoring.cache import ScoreCache
from twbn.scoring.errors import ParameterError

__all__ = ["verify_result", "verify_against_data", "textbook_score"]

REL_TOL = 1e-9
OPTIMAL_GAP = 1e-6


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= REL_TOL * max(1.0, abs(a), abs(b))


def textbook_score(data, child: int, parents: tuple[int, ...], arities, score: str = "bic",
                   ess: float = 1.0) -> float:
    """The local score of ``child`` given ``parents`` counted afresh: ``data`` an integer
    array (variables × rows) of state codes, ``arities`` the states of each variable.
    BIC = Σ N_jk ln(N_jk / N_j) − ½ ln N (r − 1) q; AIC with penalty (r − 1) q; BDeu by
    Heckerman et al.'s formula, with ESS ``ess``."""
    import numpy as np
    from math import lgamma, log

    n_rows = data.shape[1]
    r = int(arities[child])
    q = 1.0
    for p in parents:
        q *= int(arities[p])
    rows = np.stack([data[p] for p in parents] + [data[child]], axis=1) if parents else data[child][:, None]
    joint, n_jk = np.unique(rows, axis=0, return_counts=True)
    if parents:
        _, inverse = np.unique(joint[:, :-1], axis=0, return_inverse=True)
        n_j = np.bincount(inverse.ravel(), weights=n_jk)
        n_j_of = n_j[inverse.ravel()]
    else:
        n_j = np.array([float(n_rows)])
        n_j_of = np.full(len(n_jk), float(n_rows))
    if score == "bdeu":
        a_j, a_jk = ess / q, ess / (q * r)
        return (sum(lgamma(a_j) - lgamma(a_j + x) for x in n_j)
                + sum(lgamma(a_jk + x) - lgamma(a_jk) for x in n_jk))
    ll = float(np.sum(n_jk * np.log(n_jk / n_j_of)))
    if score == "bic":
        return ll - 0.5 * log(n_rows) * (r - 1) * q
    if score == "aic":
        return ll - (r - 1) * q
    raise ParameterError(f"no textbook score {score!r}; bic, aic or bdeu")


def verify_against_data(dataset, result: dict[str, Any], treewidth: int | None = None, *,
                        score: str | None = None, ess: float | None = None) -> list[str]:
    """:func:`verify_result` for a result learned from data: every family re-scored from
    ``dataset`` (a twbn Dataset: names, state codes, arities) by :func:`textbook_score`,
    with ``score``/``ess`` or else those the result records (``stats["scoring"]``, BIC
    where it records none). Data with missing cells: a result of structural EM has its
    network and certificate checked, not its score (an expected score over completions
    the result does not carry); any other result is refused. Where the result records
    the identity of its data (``stats["data"]``: rows, missing cells, a digest), a
    difference is a violation: the network does not belong to this data."""
    from twbn.scoring.data import identity_differences

    if list(dataset.names) != list(result.get("variables") or []):
        return [_variables_differ(result.get("variables"), list(dataset.names), "the data's columns")]
    stranger = identity_differences((result.get("stats") or {}).get("data"), dataset)
    return stranger + _verify_data(dataset, result, treewidth, score=score, ess=ess)


def _variables_differ(variables, names: list[str], source: str) -> str:
    """One line naming how a result's variables differ from ``names``."""
    if not isinstance(variables, list):
        return "'variables' is not a list of names"
    absent = [v for v in variables if v not in names]
    extra = [n for n in names if n not in variables]
    if absent or extra:
        said = [f"not in {source}: {', '.join(map(repr, absent[:5]))}" + (" …" if len(absent) > 5 else "")] if absent else []
        said += [f"in {source}, not in the result: {', '.join(map(repr, extra[:5]))}" + (" …" if len(extra) > 5 else "")] \
            if extra else []
        return f"the result's variables differ from {source}: " + "; ".join(said)
    i = next(i for i, (a, b) in enumerate(zip(variables, names)) if a != b)
    return (f"the result's variables are {source} in another order (position {i + 1}: the result has {variables[i]!r}, "
            f"{source} {names[i]!r}): give the columns in the result's order")


def _verify_data(dataset, result: dict[str, Any], treewidth: int | None, *, score: str | None,
                 ess: float | None) -> list[str]:
    if (dataset.data < 0).any():
        # missing cells: a structural EM result's score is over its own completions, which
        # the result does not carry; the network and its certificate are still checked
        if "structural_em" not in (result.get("stats") or {}):
            return ["the data has missing cells, and the result was not learned by structural EM from them"]
        names = list(dataset.names)
        cache = ScoreCache.from_mapping(names, [{(): 0.0}] * len(names))
        parents = result.get("parents")
        if isinstance(parents, dict) and set(parents) == set(names):
            pos = {n: i for i, n in enumerate(names)}
            cache = ScoreCache.from_mapping(names, [
                {(): 0.0, tuple(sorted(pos[p] for p in parents[n] if p in pos)): 0.0} for n in names])
        return verify_result(cache, {**result, "score": 0.0, "bound": None, "gap": None}, treewidth)
    scoring = (result.get("stats") or {}).get("scoring") or {}
    score = score or scoring.get("score") or "bic"
    ess = ess if ess is not None else (scoring.get("ess") or 1.0)
    names = list(dataset.names)
    pos = {n: i for i, n in enumerate(names)}
    parents = result.get("parents")
    families: list[dict] = [dict() for _ in names]
    if isinstance(parents, dict) and set(parents) == set(names):
        for v, name in enumerate(names):
            plist = parents[name]
            if isinstance(plist, list) and all(p in pos for p in plist) and name not in plist:
                ps = tuple(sorted(pos[p] for p in plist))
                families[v][ps] = textbook_score(dataset.data, v, ps, dataset.arities, score, ess)
    for v in range(len(names)):
        families[v].setdefault((), textbook_score(dataset.data, v, (), dataset.arities, score, ess))
    cache = ScoreCache.from_mapping(names, families)
    return verify_result(cache, result, treewidth)


def verify_result(cache: ScoreCache, result: dict[str, Any], treewidth: int | None = None) -> list[str]:
    """Every violation found, one message each; an empty list means the result is valid.

    In order: the fields and status, the variables and the treewidth the result names, each
    family in the cache, acyclicity, background knowledge, the score as the sum of the
    cached local scores, the certificate's width, the bound and gap."""
    names = list(cache.names)
    errors, stop = _fields(result, names, treewidth)
    if stop:
        return errors
    k = treewidth if treewidth is not None else result["treewidth_bound"]
    pos = {n: i for i, n in enumerate(names)}
    parents, terms = _families(cache, names, pos, result["parents"], errors)
    errors += _cycle(parents)
    errors += _background(result, pos, parents)
    errors += _score_sum(result["score"], terms, len(names))
    errors += _certificate(result, parents, names, pos, k)
    errors += _bound(result["bound"], result["gap"], result["score"], result["status"])
    return errors


_REQUIRED = ("variables", "parents", "score", "bound", "gap", "status", "treewidth_bound", "elimination_order", "width")


def _fields(result, names: list[str], treewidth) -> tuple[list[str], bool]:
    """The messages about the result's fields, status, variables and treewidth, and
    whether checking stops there (no network to check further)."""
    missing = [k for k in _REQUIRED if k not in result]
    if missing:
        return [f"missing fields: {', '.join(missing)}"], True
    errors = []
    status = result["status"]
    if status not in ("optimal", "feasible", "infeasible", "unknown"):
        errors.append(f"unknown status {status!r}")
    if result["variables"] != names:
        return errors + [_variables_differ(result["variables"], names, "the cache's variables")], True
    if treewidth is not None and result["treewidth_bound"] not in (None, treewidth):
        errors.append(f"result was learned for treewidth {result['treewidth_bound']}, checked against {treewidth}")
    if status in ("infeasible", "unknown") and result["parents"] is None:
        return errors, True
    by_name = result["parents"]
    if not isinstance(by_name, dict) or set(by_name) != set(names):
        return errors + ["'parents' must name a parent list for every variable"], True
    return errors, False


def _families(cache: ScoreCache, names, pos, by_name, errors: list[str]):
    """Each variable's parents as indices (empty where one is unknown) and the cached
    local scores of the families found in the cache; appends what is wrong to ``errors``."""
    parents: list[tuple[int, ...]] = []
    terms = []
    for v, name in enumerate(names):
        plist = by_name[name]
        if any(p not in pos for p in plist):
            errors.append(f"{name}: unknown parent in {plist}")
            parents.append(())
            continue
        ps = tuple(sorted(pos[p] for p in plist))
        parents.append(ps)
        found = next((s for cand, s in zip(cache.parent_sets[v], cache.scores[v].tolist()) if cand == ps), None)
        if found is None:
            errors.append(f"{name}: parent set {sorted(plist)} is not in the cache")
        else:
            terms.append(found)
    return parents, terms


def _cycle(parents) -> list[str]:
    """Acyclicity, by Kahn's algorithm."""
    children = [[] for _ in parents]
    indeg = [len(ps) for ps in parents]
    for v, ps in enumerate(parents):
        for p in ps:
            children[p].append(v)
    queue = [v for v in range(len(parents)) if indeg[v] == 0]
    seen = 0
    while queue:
        u = queue.pop()
        seen += 1
        for c in children[u]:
            indeg[c] -= 1
            if indeg[c] == 0:
                queue.append(c)
    return [] if seen == len(parents) else ["the network has a directed cycle"]


def _background(result, pos, parents) -> list[str]:
    """The forbidden arcs absent and the required ones present."""
    errors = []
    for kind in ("forbidden", "required"):
        for arc in result.get(kind) or []:
            u, v = arc
            if u not in pos or v not in pos:
                errors.append(f"{kind} arc {arc} names an unknown variable")
                continue
            has = pos[u] in parents[pos[v]]
            if kind == "forbidden" and has:
                errors.append(f"forbidden arc {u}->{v} is present")
            if kind == "required" and not has:
                errors.append(f"required arc {u}->{v} is absent")
    return errors


def _score_sum(score, terms, n: int) -> list[str]:
    """The score a finite number, and the sum of the local scores where every family was cached."""
    if not isinstance(score, (int, float)) or not math.isfinite(score):
        return [f"score {score!r} is not a finite number"]
    total = math.fsum(terms)
    if len(terms) == n and not _close(score, total):
        return [f"score {score!r} differs from the sum of the local scores {total!r}"]
    return []


def _certificate(result, parents, names, pos, k) -> list[str]:
    """The elimination order on the moral graph: every variable once, its width the
    result's, and within the bound ``k``."""
    order = result["elimination_order"]
    if not isinstance(order, list) or sorted(order) != sorted(names):
        return ["elimination_order does not list every variable exactly once"]
    alive = _moral(parents)
    width = -1
    for name in order:
        v = pos[name]
        nb = alive[v]
        width = max(width, len(nb))
        for a in nb:
            alive[a].discard(v)
            alive[a] |= nb - {a}
        alive[v] = set()
    errors = []
    if result["width"] != width:
        errors.append(f"width {result['width']!r} differs from the elimination order's width {width}")
    if k is not None and width > k:
        errors.append(f"the elimination order has width {width} > treewidth bound {k}")
    return errors


def _moral(parents) -> list[set]:
    """The moral graph's neighbour sets: each family's members joined pairwise."""
    adj = [set() for _ in parents]
    for v, ps in enumerate(parents):
        for p in ps:
            adj[v].add(p)
            adj[p].add(v)
        for i, a in enumerate(ps):
            for b in ps[i + 1:]:
                adj[a].add(b)
                adj[b].add(a)
    return adj


def _bound(bound, gap, score, status) -> list[str]:
    """The bound finite and at or above the score, the gap consistent with both, and
    ``optimal`` only where they meet."""
    if bound is None:
        return (["gap given without a bound"] if gap is not None else []) + \
            (["status optimal without a bound"] if status == "optimal" else [])
    if not isinstance(bound, (int, float)) or not math.isfinite(bound):
        return [f"bound {bound!r} is not a finite number"]
    if not isinstance(score, (int, float)):
        return []
    errors = []
    if bound < score and not _close(bound, score):
        errors.append(f"bound {bound!r} is below the score {score!r}")
    expect = (bound - score) / max(abs(score), 1e-12)
    if gap is None or abs(gap - expect) > 1e-9 * max(1.0, abs(expect)):
        errors.append(f"gap {gap!r} is inconsistent with bound and score ({expect!r})")
    # MIP engines stop at a relative gap tolerance; more than 1e-6 is not optimal
    if status == "optimal" and bound - score > OPTIMAL_GAP * max(1.0, abs(score)):
        errors.append(f"status optimal but bound {bound!r} exceeds score {score!r}")
    return errors
