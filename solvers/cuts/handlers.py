"""SCIP's side of ``cuts``: the constraint handler that separates and enforces the
cluster rows, and the two primal heuristics (the sink rounding of each LP point, the
large-neighbourhood search on the incumbent). solvers/cuts/branch_and_cut.py describes
what each does and builds them for one solve; this module imports SCIP, so it is imported
only when a solve begins."""

from __future__ import annotations

import random
import time
from typing import Callable

import networkx as nx
import numpy as np
import pyscipopt
from pyscipopt import SCIP_RESULT

from twbn.formulations.cluster_ilp import ClusterIlp, cycle_clusters, start_values
from twbn.formulations.problem import Problem
from twbn.formulations.solution import SolverResult, make_solution
from twbn.solvers.cuts.cluster_separation import exact_clusters, greedy_clusters, local_kclusters, local_matroid_rows
from twbn.solvers.cuts.lns import fixed_fill, fixed_outside, neighbourhood
from twbn.solvers.cuts.minor_separation import minor_density_rows
from twbn.solvers.cuts.rounding import Backoff, _LnsKind, _z_order, sink_heuristic
from twbn.solvers.policy import Policy
from twbn.solvers.budget import deadline_in, seconds_to

__all__ = ["ClusterHandler", "SinkHeuristic", "LnsHeuristic"]


class ClusterHandler(pyscipopt.Conshdlr):
    def __init__(self, ilp: ClusterIlp, exact: str, deadline: float | None, cluster_k: int, matroid: bool,
                 minor: bool, policy: Policy):
        self.ilp = ilp
        self.matroid = matroid
        self.policy = policy
        self.matroid_backoff = Backoff(policy.matroid_max_skip)
        self.minor = minor and ilp.treewidth is not None
        self.yvars = None
        self.exact = exact
        self.deadline = deadline
        self.with_parents = [v for f, v in enumerate(ilp.fam_vars) if ilp.table.parents[f]]
        self.tvars = None
        self.cluster_k = cluster_k
        self.counts = {"greedy_cuts": 0, "kcluster_cuts": 0, "exact_cuts": 0, "matroid_cuts": 0, "cycle_cuts": 0, "minor_cuts": 0, "exact_calls": 0, "separation_rounds": 0, "row_entries": 0}

    def _tvars(self):
        if self.tvars is None:
            self.tvars = [self.model.getTransformedVar(v) for v in self.ilp.fam_vars]
        return self.tvars

    def _values(self, sol=None) -> np.ndarray:
        m = self.model
        return np.fromiter((m.getSolVal(sol, v) for v in self._tvars()), dtype=float, count=len(self.ilp.fam_vars))

    def _add_rows(self, clusters, k: int = 1) -> bool:
        """Add one row (3), or (4) for k > 1, per cluster; True if one proves the node
        infeasible."""
        cutoff = False
        for c in clusters:
            cutoff |= self._add_row(self.ilp.table.cluster_families(c, k), len(c) - k, c, f"cluster{len(c)}k{k}")
        return cutoff

    def _add_row(self, families: np.ndarray, rhs: float, cluster, name: str) -> bool:
        """Σ_{f ∈ families} I_f ≤ rhs, over families of the children in ``cluster``, as a
        global cut in its sparser form; True if it proves the node infeasible."""
        tv = self._tvars()
        families, lhs, rhs = self.ilp.table.sparse_form(families, rhs, cluster)
        return self._cut(name, [(tv[f], 1.0) for f in families.tolist()], lhs, rhs)

    def _cut(self, name: str, entries, lhs: float | None, rhs: float | None) -> bool:
        """Add lhs ≤ Σ coef·var ≤ rhs over (var, coef) ``entries`` as a global cut, to the
        LP and the cut pool; True if it proves the node infeasible."""
        m = self.model
        self.counts["row_entries"] += len(entries)
        row = m.createEmptyRowUnspec(name=name, lhs=lhs, rhs=rhs, local=False, modifiable=False, removable=True)
        m.cacheRowExtensions(row)
        for var, coef in entries:
            m.addVarToRow(row, var, coef)
        m.flushRowExtensions(row)
        cutoff = bool(m.addCut(row, forcecut=True))
        m.addPoolCut(row)
        m.releaseRow(row)
        return cutoff

    def _time_left(self) -> float:
        most = self.policy.exact_call_limit_s
        return min(most, seconds_to(self.deadline))

    def conssepalp(self, constraints, nusefulconss):
        """Cheap routines first, exact sub-IPs only when they find nothing: greedy (3),
        local search for (4) from its clusters, exact (3), exact (4)."""
        self.counts["separation_rounds"] += 1
        x = self._values()
        table = self.ilp.table
        exact = self.exact == "always" or (self.exact == "root" and self.model.getDepth() == 0)
        cuts = {1: greedy_clusters(table, x)}
        self.counts["greedy_cuts"] += len(cuts[1])
        for k in range(2, self.cluster_k + 1):
            cuts[k] = local_kclusters(table, x, k, cuts[1] or [[int(v)] for v in range(table.n)],
                                      deadline=self.deadline)
            self.counts["kcluster_cuts"] += len(cuts[k])
        matroid_rows = []
        if self.matroid and self.cluster_k >= 2 and self.matroid_backoff.due(optional=any(cuts.values())):
            frac = np.unique(table.child[(x > 1e-6) & (x < 1 - 1e-6)]).tolist()
            seeds = [frac] + cuts[1][:self.policy.matroid_seeds]
            for r in range(2, self.cluster_k + 1):
                matroid_rows += [(c, r) for c in local_matroid_rows(table, x, r, seeds, deadline=self.deadline)]
            self.counts["matroid_cuts"] += len(matroid_rows)
            self.matroid_backoff.record(bool(matroid_rows))
        # the minor rows (6) bound the triangulation, not acyclicity: finding some must not
        # hold back the exact cluster separation (when it did, wdbc k = 2's root stalled
        # at −11,540 instead of −11,637)
        minor_rows = self._minor_rows(x) if self.minor else []
        if not any(cuts.values()) and not matroid_rows and exact and self._time_left() > 0:
            self.counts["exact_calls"] += 1
            cuts[1], _ = exact_clusters(table, x, time_limit=self._time_left())
            self.counts["exact_cuts"] += len(cuts[1])
            k = 2
            while not any(cuts.values()) and k <= self.cluster_k and self._time_left() > 0:
                self.counts["exact_calls"] += 1
                cuts[k], _ = exact_clusters(table, x, k=k, time_limit=self._time_left())
                self.counts["exact_cuts"] += len(cuts[k])
                k += 1
        if not any(cuts.values()) and not matroid_rows and not minor_rows:
            return {"result": SCIP_RESULT.DIDNOTFIND}
        # a list, not a generator: every family of rows is added, not just up to the first cutoff
        cutoff = any([self._add_rows(c, k) for k, c in cuts.items() if c])
        for classes, r in matroid_rows:
            cutoff |= self._add_row(*table.matroid_families(classes, r), np.flatnonzero(classes >= 0), f"matroid{int((classes >= 0).sum())}r{r}")
        for row in minor_rows:
            cutoff |= self._add_minor_row(row)
        return {"result": SCIP_RESULT.CUTOFF if cutoff else SCIP_RESULT.SEPARATED}

    def _minor_rows(self, x: np.ndarray):
        """Rows (6) violated at the LP point: by the moral edges its families force, hence
        by its triangulation t_ij = y_ij + y_ji (≥ those, by 8g and 8h)."""
        m = self.model
        if self.yvars is None:
            self.yvars = {arc: m.getTransformedVar(v) for arc, v in self.ilp.y.items()}
        # separated at the moral edges x forces, not at y + yᵀ: a row violated only by y
        # costs nothing to satisfy (y has no objective, the LP moves it) but every later
        # LP. wdbc k = 4, root in 96 s: −11,609.07 this way; at y + yᵀ 890 rows kept the
        # root from finishing (−11,587.95, against −11,605.89 without the rows)
        t = self.ilp.table.moral_weights(x)
        rows = minor_density_rows(t, self.ilp.treewidth, deadline=deadline_in(self.policy.minor_call_limit_s))
        self.counts["minor_cuts"] += len(rows)
        return rows

    def _add_minor_row(self, row) -> bool:
        k = float(self.ilp.treewidth)
        y = self.yvars
        entries = [(y[arc], coef) for coef, edges in ((1.0, row.pairs), (k, row.tree))
                   for a, b in edges for arc in ((a, b), (b, a))]
        return self._cut(f"minor{len(row.pairs)}", entries, None, row.rhs)

    def _cycles(self, sol=None):
        return cycle_clusters(self.ilp.table.network(self._values(sol)))

    def consenfolp(self, constraints, nusefulconss, solinfeasible):
        clusters = self._cycles()
        if not clusters:
            return {"result": SCIP_RESULT.FEASIBLE}
        self.counts["cycle_cuts"] += len(clusters)
        return {"result": SCIP_RESULT.CUTOFF if self._add_rows(clusters) else SCIP_RESULT.SEPARATED}

    def consenfops(self, constraints, nusefulconss, solinfeasible, objinfeasible):
        return {"result": SCIP_RESULT.INFEASIBLE if self._cycles() else SCIP_RESULT.FEASIBLE}

    def conscheck(self, constraints, solution, checkintegrality, checklprows, printreason, completely):
        return {"result": SCIP_RESULT.INFEASIBLE if self._cycles(solution) else SCIP_RESULT.FEASIBLE}

    def conslock(self, constraint, locktype, nlockspos, nlocksneg):
        m = self.model
        transformed = m.getStage() >= 3  # SCIP_STAGE_TRANSFORMED
        for v in self.with_parents:
            var = m.getTransformedVar(v) if transformed else v
            m.addVarLocksType(var, locktype, nlocksneg, nlockspos)

class NetworkHeuristic(pyscipopt.Heur):
    """A heuristic that offers SCIP whole networks."""

    by_name = None  # the model's variables by name, built at the first offer

    def try_network(self, parents, order) -> bool:
        """Offer a network (and, when bounded, an elimination order of width ≤ k) as a
        solution; True if SCIP stored it."""
        m = self.model
        if self.by_name is None:
            self.by_name = {v.name: v for v in self.ilp.variables()}
        try:
            values = start_values(self.ilp, parents, order)
        except nx.NetworkXUnfeasible:  # acyclic, but closes a cycle with the ancestry pairs
            return False
        sol = m.createOrigSol(self)  # original space: presolving may have aggregated variables
        for name, value in values.items():
            if value:
                m.setSolVal(sol, self.by_name[name], value)
        return bool(m.trySol(sol, printreason=False))

class SinkHeuristic(NetworkHeuristic):
    """Rounds the LP point to a DAG and, when bounded, an elimination order of width
    ≤ k for y and z (``sink_heuristic``)."""

    def __init__(self, ilp: ClusterIlp, handler):
        self.ilp = ilp
        self.handler = handler
        self.found = 0
        self.stuck = 0

    def heurexec(self, heurtiming, nodeinfeasible):
        chosen, order = sink_heuristic(self.ilp.table, self.handler._values(), self.ilp.treewidth)
        if not chosen:
            self.stuck += 1
            return {"result": SCIP_RESULT.DIDNOTFIND}
        parents = [self.ilp.table.parents[f] for f in chosen]
        if self.try_network(parents, order):
            self.found += 1
            return {"result": SCIP_RESULT.FOUNDSOL}
        return {"result": SCIP_RESULT.DIDNOTFIND}

class LnsHeuristic(NetworkHeuristic):
    """Large-neighbourhood search on the incumbent (solvers/cuts/lns.py): one
    neighbourhood per call, re-solved by a sub-``cuts`` of at most ``policy.lns_call_limit_s``
    seconds, while the time spent here stays within ``share`` (the option ``lns_share``) of
    the time elapsed.
    Bounded, a neighbourhood may also hold the triangulation between its fixed
    variables (``fixed_fill``); which kind comes next goes by the score each has gained
    per second (``_held_next``). Adaptive size, per kind: a neighbourhood solved to
    optimality without a gain n/size times in a row grows it by 2 (that size looks
    exhausted); one cut short by its time limit without a gain shrinks it by 1."""

    def __init__(self, ilp: ClusterIlp, problem: Problem, handler, t0: float, deadline: float | None, seed: int | None,
                 share: float, policy: Policy, subsolve: Callable[..., SolverResult]):
        self.share, self.policy, self.subsolve = share, policy, subsolve
        self.ilp = ilp
        self.problem = problem
        self.handler = handler
        self.t0 = t0
        self.deadline = deadline
        self.rng = random.Random(0 if seed is None else seed)  # reproducible without a seed too
        # per kind of neighbourhood: triangulation between fixed variables held or free
        self.kinds = {held: _LnsKind(min(policy.lns_start_size, problem.n), policy.lns_decay)
                      for held in (True, False)}
        self.spent = 0.0
        self.counts = {"lns_calls": 0, "lns_improvements": 0, "lns_seconds": 0.0}
        self.control = None  # the RunControl of the solve, set after construction

    def _held_next(self) -> bool:
        """The kind of the next neighbourhood: each kind ``policy.lns_tries`` times in turn, then
        the one with more (decayed) score gained per second, the other one with
        probability ``policy.lns_explore``."""
        held, free = self.kinds[True], self.kinds[False]
        if min(held.tries, free.tries) < self.policy.lns_tries:
            return held.tries <= free.tries
        best = held.rate >= free.rate
        return best if self.rng.random() >= self.policy.lns_explore else not best

    def heurexec(self, heurtiming, nodeinfeasible):
        m = self.model
        now = time.monotonic()
        most = self.policy.lns_call_limit_s
        left = most if self.deadline is None else min(most, self.deadline - now - 1.0)
        if (m.getNSols() == 0 or self.spent > self.share * (now - self.t0) or left < 1.0
                or (self.control is not None and self.control.stop_requested())):
            return {"result": SCIP_RESULT.DIDNOTRUN}
        best = m.getBestSol()
        parents = self.ilp.table.network(self.handler._values(best))
        hint = _z_order(m, best, self.ilp)
        held = hint is not None and self._held_next()
        kind = self.kinds[held]
        free = neighbourhood(parents, kind.size, self.rng)
        sub = fixed_outside(self.problem, parents, free)
        start = make_solution(sub, parents, bound=None, status="feasible", method="cuts", order_hint=hint)
        fill = fixed_fill(parents, start.elimination_order, free) if held else None
        found = self.subsolve(sub, time_limit=left, seed=self.rng.randrange(2**31), warm_start=start,
                              fixed_y=fill, control=self.control, policy=self.policy)
        self.counts["lns_calls"] += 1
        gained = found.parents is not None and found.score > start.score + 1e-9 * max(1.0, abs(start.score))
        if gained:
            kind.stalls = 0
        elif found.status == "optimal":
            kind.stalls += 1
            if kind.stalls * kind.size >= self.problem.n:
                kind.size, kind.stalls = min(self.problem.n, kind.size + 2), 0
        else:
            kind.size = max(self.policy.lns_min_size, kind.size - 1)
        stored = gained and self.try_network(found.parents, found.elimination_order)
        self.counts["lns_improvements"] += int(stored)
        took = time.monotonic() - now
        kind.record(found.score - start.score if stored else 0.0, took)
        self.spent += took
        self.counts["lns_seconds"] = round(self.spent, 2)
        return {"result": SCIP_RESULT.FOUNDSOL if stored else SCIP_RESULT.DIDNOTFIND}
