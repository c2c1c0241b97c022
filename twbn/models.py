"""The three models as objects a researcher changes: build one for a problem, add rows,
cuts or objective terms in the modelling library's own terms, solve it under a Budget,
and get a certified :class:`twbn.Solution` with its gap trajectory.

- :class:`NieMilp` — the elimination-order MILP of Nie, de Campos & Ji (2014) in pyomo
  (formulations/elimination_milp.py: Fig. 6's constraints 8a–8h and twbn's
  strengthenings), solved by HiGHS, SCIP or CBC;
- :class:`ClusterCutIlp` — the GOBNILP-style cluster-cut ILP in pyscipopt
  (formulations/cluster_ilp.py: rows (1)–(8), cluster cuts separated on SCIP);
- :class:`KtreeCp` — the k-tree model in OR-tools CP-SAT (formulations/cp_ktree.py).

An extension is a function ``f(model, twbn_model)`` of the built model (a pyomo
ConcreteModel, a pyscipopt Model, an OR-tools CpModel) and twbn's object that maps its
variables back to the problem (``EliminationMilp.pa_index`` and ``model.Pa``,
``ClusterIlp.fam_vars``/``table``, the CP model's ``pa`` literals); it is called after
twbn builds the model and before the engine starts, so its rows count in the budget.
Whatever the model becomes, twbn certifies the network it returns (every parent set in
the cache, acyclic, width ≤ k by its own elimination order) and never reports a bound
worse than the trivial one: a row that is not valid can cost optimality, never a false
certificate — but it can make the engine's bound wrong, which is why a valid inequality
needs its proof (docs/extending.md gives one).

Examples
--------
>>> import twbn
>>> from twbn.models import NieMilp
>>> cache = twbn.score(twbn.example_path("zoo"), max_parents=2)
>>> def at_most_20_arcs(model, milp):
...     import pyomo.environ as pyo
...     sizes = {(i, t): len(milp.problem.candidates.parent_sets[i][t]) for i, t in milp.pa_index}
...     model.arcs = pyo.Constraint(expr=sum(sizes[i, t] * model.Pa[i, t] for i, t in milp.pa_index) <= 20)
>>> sol = NieMilp(twbn.Problem(cache, 2)).extend(at_most_20_arcs).solve(budget=30)
>>> len(sol.arcs) <= 20, sol.check(cache), sol.stats["extended_by"]
(True, [], ['at_most_20_arcs'])
"""

from __future__ import annotations

import time
from typing import Callable

from twbn.formulations.problem import Problem
from twbn.formulations.solution import SolverResult as _Internal
from twbn.solution import Solution
from twbn.solvers.bounds import floor_bound
from twbn.solvers.budget import Budget
from twbn.solvers.method_options import CpOptions, CutsOptions, MilpOptions, parse_options
from twbn.solvers.warm_start import certified_start, infeasibility
from twbn.scoring.errors import ParameterError, ParameterTypeError

__all__ = ["NieMilp", "ClusterCutIlp", "KtreeCp"]


class _Applied:
    """An extension that notes its name in ``seen`` once it has run on a built model."""

    def __init__(self, fn: Callable, seen: list[str]) -> None:
        self.fn, self.seen = fn, seen

    def __call__(self, model, twbn_model) -> None:
        self.fn(model, twbn_model)
        self.seen.append(getattr(self.fn, "__name__", repr(self.fn)))


class _Model:
    """What the three share: the problem, the options, the extensions, ``solve``."""

    method = ""
    #: Whether the model is built in this process (its extensions can say they ran).
    in_process = True
    options_class: type = object
    backends: tuple[str, ...] = ()

    def __init__(self, problem: Problem, options=None) -> None:
        if not isinstance(problem, Problem):
            raise ParameterTypeError(f"a model is built for a twbn.Problem, not {type(problem).__name__}")
        self.options = parse_options(self.method, self.options_class, options)
        self.problem = problem
        self._extensions: list[Callable] = []

    def extend(self, fn: Callable) -> "_Model":
        """Add ``fn(model, twbn_model)``, called on the built model before it is solved;
        returns the model, so that calls chain."""
        if not callable(fn):
            raise ParameterTypeError(f"an extension is a function f(model, twbn_model), not {type(fn).__name__}")
        self._extensions.append(fn)
        return self

    def _run(self, budget: Budget, seed, start, backend, seen: list[str]) -> _Internal:
        raise NotImplementedError

    def _applied(self, seen: list[str]) -> list[Callable]:
        return [_Applied(fn, seen) for fn in self._extensions]

    def solve(self, budget: "Budget | float | None" = None, *, seed: int | None = None,
              start: Solution | None = None, backend: str | None = None) -> Solution:
        """Build the model with its extensions and solve it.

        Parameters
        ----------
        budget : Budget, float or None
            Seconds (or a :class:`twbn.Budget`) for building and solving; None: to the end.
        seed : int, optional
            The engine's random seed.
        start : Solution, optional
            A network of this problem the engine starts from (a ``twbn.Solution``, or
            the ``start`` a method's ``run`` receives).
        backend : str, optional
            The engine, where the model has several (NieMilp: highs, scip, cbc).

        Returns
        -------
        Solution
            Certified, with the engine's bound (never worse than the trivial one), its gap
            trajectory, and ``stats["extended_by"]`` naming the extensions.
        """
        if backend is not None and backend not in self.backends:
            raise ParameterError(f"{type(self).__name__} has no backend {backend!r}"
                             + (f"; choose one of {', '.join(self.backends)}" if self.backends else ""))
        budget = budget if isinstance(budget, Budget) else Budget(budget)
        entered = time.monotonic()
        seen: list[str] = []
        why = infeasibility(self.problem)
        if why is not None:
            sol = _Internal(None, None, None, "infeasible", method=self.method, stats={"reason": why})
        else:
            if start is not None and not isinstance(start, _Internal):  # a twbn.Solution
                start = _Internal.from_json(start.to_json(), self.problem)
            internal_start = None if start is None else certified_start(self.problem, start)
            sol = self._run(budget, seed, internal_start, backend, seen)
        floor_bound(self.problem, sol)
        sol.time_limit = budget.seconds
        sol.wall_time = round(time.monotonic() - entered, 4)
        names = [getattr(fn, "__name__", repr(fn)) for fn in self._extensions]
        # only the extensions that ran: a budget too short to build the model runs none
        sol.stats["extended_by"] = seen if self.in_process else names
        if self.in_process and len(seen) < len(names):
            sol.stats["not_extended_by"] = [n for n in names if n not in seen]
            sol.stats["not_extended_because"] = "the model was not built (within the budget, or at all)"
        return Solution(sol.to_json(self.problem))


class NieMilp(_Model):
    """The elimination-order MILP of Nie et al. (2014) in pyomo.

    Parameters
    ----------
    problem : Problem
        The cache, the bound (None: unbounded) and background knowledge.
    options : MilpOptions or dict, optional
        The strengthenings (``MilpOptions.plain()`` is Fig. 6 as published).

    Examples
    --------
    >>> import twbn
    >>> cache = twbn.ScoreCache.from_mapping("AB", [{(): -2.0, (1,): -1.0}, {(): -2.0, (0,): -1.5}])
    >>> sol = NieMilp(twbn.Problem(cache, 1)).solve(budget=20)
    >>> sol.status, sol.score, sol.parents
    ('optimal', -3.0, {'A': ('B',), 'B': ()})
    """

    method = "milp"
    options_class = MilpOptions
    backends = ("highs", "scip", "cbc")

    def _run(self, budget, seed, start, backend, seen):
        from twbn.solvers.models.milp import solve_milp

        return solve_milp(self.problem, solver=backend or "highs", time_limit=budget.limit(), seed=seed,
                          warm_start=start, options=self.options, control=budget.control,
                          extend=self._applied(seen), policy=budget.policy)


class ClusterCutIlp(_Model):
    """The cluster-cut ILP (GOBNILP-style, bounded or unbounded) on SCIP.

    Parameters
    ----------
    problem : Problem
        The cache, the bound (None: unbounded) and background knowledge.
    options : CutsOptions or dict, optional
        Separation and search (``cluster_k``, ``matroid``, ``minor``, ``lns``, …).

    Examples
    --------
    >>> import twbn
    >>> cache = twbn.ScoreCache.from_mapping("AB", [{(): -2.0, (1,): -1.0}, {(): -2.0, (0,): -1.5}])
    >>> def no_arc_into_a(model, ilp):  # a row in pyscipopt's terms: A takes the empty set
    ...     empty = ilp.table.family(0, ())
    ...     model.addCons(ilp.fam_vars[empty] == 1)
    >>> sol = ClusterCutIlp(twbn.Problem(cache)).extend(no_arc_into_a).solve(budget=20)
    >>> sol.status, sol.score, sol.parents
    ('optimal', -3.5, {'A': (), 'B': ('A',)})
    """

    method = "cuts"
    options_class = CutsOptions
    backends = ("scip",)

    def _run(self, budget, seed, start, backend, seen):
        from twbn.solvers.cuts.branch_and_cut import solve_cuts

        return solve_cuts(self.problem, self.options, time_limit=budget.limit(), seed=seed, warm_start=start,
                          control=budget.control, extend=self._applied(seen), policy=budget.policy)


class KtreeCp(_Model):
    """The k-tree model on OR-tools CP-SAT, solved in a child process; its extensions
    must be importable module-level functions (they are pickled to the child).

    Parameters
    ----------
    problem : Problem
        The cache, the bound (None: unbounded) and background knowledge.
    options : CpOptions or dict, optional
        ``workers``, ``redundant``, ``permutation``.

    Examples
    --------
    >>> import twbn
    >>> cache = twbn.ScoreCache.from_mapping("AB", [{(): -2.0, (1,): -1.0}, {(): -2.0, (0,): -1.5}])
    >>> sol = KtreeCp(twbn.Problem(cache, 1), {"workers": 1}).solve(budget=20)
    >>> sol.status, sol.score
    ('optimal', -3.0)
    """

    method = "cp"
    options_class = CpOptions
    backends = ("cpsat",)
    in_process = False  # built in its child, always: its extensions run there

    def _run(self, budget, seed, start, backend, seen):
        from twbn.solvers.models.cp import solve_cp

        return solve_cp(self.problem, self.options, time_limit=budget.limit(), seed=seed, warm_start=start,
                        control=budget.control, extend=self._extensions, policy=budget.policy)
