"""The method contract as checks a plugin author runs, as scikit-learn's ``check_estimator``.

``check_method(method)`` runs a method through what twbn demands of every method, its
built-ins included, on small random problems, and returns what failed (an empty list
when the method keeps the contract)::

    from twbn.testing import check_method

    def test_my_method_keeps_the_contract():
        assert check_method(MY_METHOD) == []
"""

from __future__ import annotations

import random
import time

from twbn.formulations.problem import Problem
from twbn.formulations.verify import verify_result
from twbn.scoring.cache import ScoreCache
from twbn.solvers.plugins import Method, register_method
from twbn.solvers.policy import DEFAULT_POLICY
from twbn.solvers.registry import METHODS, get_method, solve

__all__ = ["check_method", "random_problem_cache"]

#: Seconds a call may run past its limit (process start excluded; model building and
#: certification included), as for the built-in methods (tests/test_contract.py). A
#: method still running ``Policy.overrun_grace_s`` past its deadline is abandoned (and reported)
#: before that.
TIME_MARGIN = DEFAULT_POLICY.overrun_grace_s + 0.5


def random_problem_cache(n: int, seed: int, max_size: int = 2, sets: int = 6) -> ScoreCache:
    """A cache of ``n`` variables, each with ∅ and up to ``sets`` random parent sets of at
    most ``max_size`` parents, scores favouring larger sets (so constraints bite)."""
    rng = random.Random(seed)
    families = []
    for v in range(n):
        others = [u for u in range(n) if u != v]
        fam = {(): -10.0 - 5 * rng.random()}
        for _ in range(sets):
            ps = tuple(sorted(rng.sample(others, rng.randint(1, min(max_size, len(others))))))
            fam[ps] = fam[()] + rng.uniform(-2.0, 2.0 + 1.5 * len(ps))
        families.append(fam)
    return ScoreCache.from_mapping([f"X{i}" for i in range(n)], families)


def check_method(method: "str | Method", *, time_limit: float = 2.0, seeds: tuple[int, ...] = (0, 1, 2)) -> list[str]:
    """What ``method`` gets wrong of twbn's contract; [] when nothing.

    Parameters
    ----------
    method : str or Method
        A registered method's name, or a :class:`twbn.Method` (registered here first if
        its name is not yet taken).
    time_limit : float, default 2.0
        The limit of each call.
    seeds : tuple of int
        One random problem each (8 variables, k = 2, and unbounded where allowed).

    Returns
    -------
    list of str
        One line per failure: a network that fails the independent verifier, a call past
        ``time_limit + 2.5`` s, a method abandoned for running 2 s past its deadline
        (one that does not look at its budget), a bound below the score, an unknown
        option accepted, a required cycle not reported infeasible.

    Raises
    ------
    MethodUnavailable
        ``method`` names no registered method (the installed plugins' included).

    Examples
    --------
    >>> import twbn
    >>> from twbn.testing import check_method
    >>> def forest(problem, options, budget):  # each variable: its best set of one earlier parent
    ...     return [next(ps for ps, _ in problem.parent_sets(v) if len(ps) == 0 or (len(ps) == 1 and ps[0] < v))
    ...             for v in range(problem.n)]
    >>> check_method(twbn.Method("forest-doc", forest, min_treewidth=1))
    []
    """
    if isinstance(method, Method):
        if method.name not in METHODS:
            register_method(method)
        name = method.name
    else:
        name = method
    spec = get_method(name)  # loads the entry points; an unknown name is one TwbnError
    failures: list[str] = []
    bounds = [2] + ([None] if spec.min_treewidth is None else [])
    for seed in seeds:
        cache = random_problem_cache(8, seed)
        for k in bounds:
            problem = Problem(cache, k)
            where = f"seed {seed}, k = {'unbounded' if k is None else k}"
            t0 = time.monotonic()
            try:
                sol = solve(problem, name, time_limit=time_limit, seed=seed)
            except Exception as exc:  # noqa: BLE001 - reported, not raised
                failures.append(f"{where}: raised {type(exc).__name__}: {exc}")
                continue
            took = time.monotonic() - t0
            if sol.stats.get("abandoned"):
                failures.append(f"{where}: {sol.stats['abandoned']}")
            elif took > time_limit + TIME_MARGIN:
                failures.append(f"{where}: took {took:.2f} s of a {time_limit:g} s limit")
            errors = verify_result(cache, sol.to_json(problem), k)
            failures += [f"{where}: {e}" for e in errors]
            if sol.score is not None and sol.bound is not None and sol.bound < sol.score - 1e-9 * abs(sol.score):
                failures.append(f"{where}: bound {sol.bound} below the score {sol.score}")
    problem = Problem(random_problem_cache(8, 0), 2)
    try:
        solve(problem, name, time_limit=time_limit, options={"no_such_option_": 1})
        failures.append("an unknown option was accepted")
    except ValueError:
        pass
    cyclic = Problem(random_problem_cache(8, 0), 2, required={(0, 1), (1, 2), (2, 0)})
    sol = solve(cyclic, name, time_limit=time_limit)
    if sol.status != "infeasible":
        failures.append(f"required arcs in a cycle gave status {sol.status}, not infeasible")
    return failures
