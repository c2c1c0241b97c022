"""A learned network as the user sees it: parents by name, its certificate, its provenance.

A :class:`Solution` is a typed view of one result record, the JSON object that
``twbn learn -o`` writes (docs/design.md, "Files"): variables, parents by name, score,
bound, gap, status, the elimination order that certifies the width, and how it was
obtained. It converts to networkx and pgmpy, writes BIF, and checks itself against a
cache with the independent verifier.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any
from twbn.scoring.errors import ParameterError

__all__ = ["Solution"]

_REQUIRED = ("variables", "parents", "score", "bound", "gap", "status", "treewidth_bound",
             "elimination_order", "width")


class Solution:
    """A learned Bayesian network with its certificate.

    Build one with :func:`twbn.learn`, or read one with :meth:`from_json`.

    Attributes
    ----------
    variables : tuple of str
        Variable names, in the cache's order.
    parents : dict of str to tuple of str, or None
        Each variable's parents; None when no network was found (status ``infeasible``
        or ``unknown``).
    arcs : list of (str, str)
        (parent, child) pairs.
    score : float or None
        Sum of the chosen local scores, recomputed from the cache.
    bound : float or None
        A proven upper bound on the best score under the same constraints, or None.
    gap : float or None
        ``(bound - score) / |score|``.
    status : str
        ``optimal``, ``feasible``, ``infeasible`` or ``unknown``.
    width : int or None
        Width of ``elimination_order`` on the moral graph: the certified treewidth bound.
    treewidth : int or None
        The bound k the network was learned under (None: unbounded).
    table_size : int or None
        What exact inference costs: the entries of the junction tree's clique tables
        built on ``elimination_order`` (the sum over its maximal cliques of the product
        of their arities); None where the arities are unknown (a cache from elsewhere)
        or there is no network.
    elimination_order : tuple of str or None
        The certificate: eliminating in this order on the moral graph has width ``width``.
    method, solver, seed, time_limit, wall_time, trajectory, stats
        How it was obtained.

    Parameters
    ----------
    record : dict
        A result record as ``twbn learn -o`` writes it (docs/design.md, "Files").

    Raises
    ------
    ParameterError
        ``record`` is not a twbn result: a field missing, or parents not given for every
        variable.

    Examples
    --------
    >>> import twbn
    >>> sol = twbn.learn(twbn.example_path("zoo"), treewidth=1)
    >>> again = twbn.Solution.from_json(sol.to_json())
    >>> again == sol, again.status, again.width, again.treewidth
    (True, 'optimal', 1, 1)
    >>> twbn.Solution({"variables": ["A"]})
    Traceback (most recent call last):
    ...
    twbn.scoring.errors.ParameterError: not a twbn result: missing fields parents, score, bound, gap, status, treewidth_bound, elimination_order, width
    """

    def __init__(self, record: dict[str, Any]):
        if not isinstance(record, dict):
            raise ParameterError(f"a result record is a JSON object, not {type(record).__name__}")
        missing = [k for k in _REQUIRED if k not in record]
        if missing:
            raise ParameterError(f"not a twbn result: missing fields {', '.join(missing)}")
        names = record["variables"]
        parents = record["parents"]
        if parents is not None and (not isinstance(parents, dict) or set(parents) != set(names)):
            raise ParameterError("not a twbn result: 'parents' must list the parents of every variable")
        self._record = copy.deepcopy(record)

    # -- the record's fields ------------------------------------------------------------
    @property
    def variables(self) -> tuple[str, ...]:
        return tuple(self._record["variables"])

    @property
    def parents(self) -> dict[str, tuple[str, ...]] | None:
        p = self._record["parents"]
        return None if p is None else {v: tuple(p[v]) for v in self._record["variables"]}

    @property
    def arcs(self) -> list[tuple[str, str]]:
        p = self.parents or {}
        return [(u, v) for v in self.variables for u in p.get(v, ())]

    score = property(lambda self: self._record["score"])
    bound = property(lambda self: self._record["bound"])
    gap = property(lambda self: self._record["gap"])
    status = property(lambda self: self._record["status"])
    width = property(lambda self: self._record["width"])
    table_size = property(lambda self: self._record.get("table_size"))
    treewidth = property(lambda self: self._record["treewidth_bound"])
    method = property(lambda self: self._record.get("method", ""))
    solver = property(lambda self: self._record.get("solver"))
    seed = property(lambda self: self._record.get("seed"))
    time_limit = property(lambda self: self._record.get("time_limit"))
    wall_time = property(lambda self: self._record.get("wall_time"))
    trajectory = property(lambda self: copy.deepcopy(self._record.get("trajectory", [])))
    stats = property(lambda self: copy.deepcopy(self._record.get("stats", {})))

    @property
    def elimination_order(self) -> tuple[str, ...] | None:
        o = self._record["elimination_order"]
        return None if o is None else tuple(o)

    def __repr__(self) -> str:
        if self._record["parents"] is None:
            return f"Solution(status={self.status!r}, no network, method={self.method!r})"
        bound = "None" if self.bound is None else f"{self.bound:.3f}"
        return (f"Solution(status={self.status!r}, score={self.score:.3f}, bound={bound}, width={self.width}, "
                f"arcs={len(self.arcs)}, method={self.method!r})")

    # -- files ---------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The result record (a new dict), as ``twbn learn -o`` writes it."""
        return copy.deepcopy(self._record)

    @classmethod
    def from_json(cls, data: dict[str, Any] | str | Path) -> "Solution":
        """A Solution from a result record, or from the path of a result file.

        Raises
        ------
        ParameterError
            If the file is not JSON or the object is not a twbn result.
        """
        if isinstance(data, (str, Path)):
            try:
                data = json.loads(Path(data).read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                raise ParameterError(f"{data}: not JSON ({exc})") from None
        return cls(data)

    def save(self, path: str | Path) -> None:
        """Write the result record as JSON, whole or not at all."""
        from twbn.scoring.jkl import atomic_write_text

        atomic_write_text(path, json.dumps(self._record, indent=2, allow_nan=False) + "\n")

    # -- other libraries -----------------------------------------------------------------
    @property
    def discretization(self):
        """The cuts of the columns this network was learned on discretized
        (:class:`twbn.scoring.discretize.Discretizer`), or None."""
        from twbn.scoring.discretize import Discretizer

        cuts = (self._record.get("stats") or {}).get("data", {}).get("discretize")
        return Discretizer.from_json(cuts) if cuts else None

    def raw_rows(self, data, *, missing_token: str | None = None):
        """``data`` as this network's states: its continuous columns cut where the network
        learned them cut (``learn(..., discretize=…)``); unchanged otherwise. Every method
        here that takes rows applies it, so raw rows are welcome everywhere.

        Examples
        --------
        >>> import numpy as np, pandas as pd, twbn
        >>> rng = np.random.default_rng(0)
        >>> x = rng.normal(size=300)
        >>> df = pd.DataFrame({"x": x, "y": (x + rng.normal(scale=0.3, size=300) > 0).astype(int)})
        >>> sol = twbn.learn(df, treewidth=1, discretize="x=quantile:3")
        >>> sol.discretization.labels("x")
        ['<-0.5106', '[-0.5106, 0.3828)', '>=0.3828']
        >>> sol.raw_rows(pd.DataFrame({"x": [-5.0, 0.0, 9.0], "y": [0, 1, 1]}))["x"].tolist()
        ['<-0.5106', '[-0.5106, 0.3828)', '>=0.3828']
        >>> sol.check(df)  # the raw rows, cut as the network was learned
        []
        """
        from twbn.scoring.discretize import recorded_rows

        return recorded_rows(data, (self._record.get("stats") or {}).get("data"), missing_token=missing_token)

    def parent_indices(self) -> list[tuple[int, ...]]:
        """Each variable's parents as sorted indices into ``variables``: the parent-set
        representation of caches and methods (``Problem.parent_sets``).

        Raises
        ------
        ParameterError
            The result has no network.

        Examples
        --------
        >>> import twbn
        >>> sol = twbn.learn(twbn.example_path("zoo"), treewidth=1)
        >>> i = sol.variables.index("milk")
        >>> [sol.variables[p] for p in sol.parent_indices()[i]] == list(sol.parents["milk"])
        True
        """
        if self._record["parents"] is None:
            raise ParameterError(f"this result has no network (status {self.status})")
        pos = {n: i for i, n in enumerate(self.variables)}
        return [tuple(sorted(pos[p] for p in self._record["parents"][v])) for v in self.variables]

    def to_networkx(self):
        """The network as a ``networkx.DiGraph`` over every variable (arcs parent → child)."""
        import networkx as nx

        self.parent_indices()
        g = nx.DiGraph()
        g.add_nodes_from(self.variables)
        g.add_edges_from(self.arcs)
        return g

    def to_pgmpy(self, data, *, ess: float = 1.0):
        """A fitted pgmpy ``DiscreteBayesianNetwork``: this structure, CPTs from ``data``.

        Parameters
        ----------
        data : pandas.DataFrame, str, Path or Dataset
            The rows to fit the CPTs on (the same columns as the variables, any order).
        ess : float, default 1.0
            Dirichlet smoothing: BDeu-style pseudo-counts ess/(q·r) per cell, as in
            ``twbn export`` and ``twbn evaluate``.

        Returns
        -------
        pgmpy.models.DiscreteBayesianNetwork
            State names are the data's own values and types, as pgmpy's own ``fit``
            keeps them: a DataFrame's integers stay integers, so
            ``VariableElimination(model).query(["class"], evidence={"LSTAT": 0})`` and
            ``model.predict(test_frame)`` work on the data as it is. A CSV's states are
            typed as ``pandas.read_csv`` types them.
        """
        from twbn.scoring.inference import learned_model
        from twbn.scoring.data import as_dataset, state_values

        if not ess > 0:
            raise ParameterError(f"ess must be positive, got {ess}")
        parents = self.parent_indices()
        data = self.raw_rows(data)
        return learned_model(as_dataset(data), list(self.variables), parents, ess=ess,
                             values=state_values(data))

    def impute(self, data, *, sample: bool = False, seed: int | None = None, ess: float = 1.0,
               missing_token: str | None = None):
        """``data`` with its missing cells filled, by exact inference on this network.

        Parameters
        ----------
        data : pandas.DataFrame, str, Path or Dataset
            Rows over this network's variables, with missing cells (NaN, None, empty,
            ``NA``, ``?``, ``missing_token``).
        sample : bool, default False
            False: each row's most probable joint completion given its observed cells
            (the joint argmax, not each cell's most probable value). True: a draw from
            that joint posterior (multiple imputation: call again with other seeds).
        seed : int, optional
            The draw's seed (and EM's, when it fits the tables).
        ess : float, default 1.0
            The tables' Dirichlet smoothing; they are fitted on ``data`` by EM.

        Returns
        -------
        pandas.DataFrame
            The network's variables as columns, in its order, every cell filled, in the
            data's own values and types.

        Examples
        --------
        >>> import numpy as np, pandas as pd, twbn
        >>> df = pd.read_csv(twbn.example_path("zoo"))
        >>> gappy = df.mask(np.random.default_rng(0).random(df.shape) < 0.1)
        >>> sol = twbn.learn(gappy, treewidth=2, method="localsearch", time_limit=3, seed=0)
        >>> filled = sol.impute(gappy)
        >>> int(filled.isna().to_numpy().sum()), filled.shape == df.shape
        (0, True)
        """
        import pandas as pd

        from twbn.scoring.data import as_dataset, state_order, state_values
        from twbn.scoring.likelihood import align, em_cpts
        from twbn.scoring.posterior import cheapest_order, most_probable_missing, sample_missing

        data = self.raw_rows(data, missing_token=missing_token)
        ds = as_dataset(data, missing_token=missing_token)
        names = list(self.variables)
        codes, _, arities = align(ds, ds, names)  # codes over state_order of each column's labels
        parents = self.parent_indices()
        cpts = em_cpts(codes, arities, parents, ess)
        order = cheapest_order(parents, arities, *([[names.index(v) for v in self.elimination_order]]
                                                   if self.elimination_order else []))
        filled = sample_missing(codes, arities, parents, cpts, order, seed=seed) if sample else \
            most_probable_missing(codes, arities, parents, cpts, order)
        values = state_values(data, missing_token=missing_token)
        columns = {}
        for v, name in enumerate(names):
            labels = state_order(ds.states[ds.names.index(name)])
            columns[name] = [values[name][labels[c]] for c in filled[v].tolist()]
        return pd.DataFrame(columns)

    def to_bif(self, path: str | Path, data, *, ess: float = 1.0) -> None:
        """Write the fitted network (see :meth:`to_pgmpy`) as BIF, whole or not at all."""
        from twbn.scoring.inference import write_bif

        write_bif(self.to_pgmpy(data, ess=ess), path)

    def log_likelihood(self, train, test, *, ess: float = 1.0, allow_unseen: bool = False) -> float:
        """Held-out log-likelihood per row of ``test``, CPTs fitted on ``train``
        (the figure ``twbn evaluate`` prints).

        Parameters
        ----------
        train, test : pandas.DataFrame, str, Path or Dataset
            Rows over this network's variables; states match by their canonical text
            (``True``, ``"true"`` and ``1`` are one state), whatever read the two.
        ess : float, default 1.0
            The tables' Dirichlet smoothing (as :meth:`to_pgmpy`).
        allow_unseen : bool, default False
            A value of ``test`` that ``train`` never shows is refused by name; True scores
            it with the smoothing's pseudo-count alone.

        Returns
        -------
        float
            Natural log-likelihood per test row.

        Raises
        ------
        DataError
            A variable is not a column of either; a test value unseen in training.

        Examples
        --------
        >>> import pandas as pd, twbn
        >>> df = pd.read_csv(twbn.example_path("zoo"))
        >>> sol = twbn.learn(df[:80], treewidth=1)
        >>> a = sol.log_likelihood(df[:80], df[70:80])
        >>> b = sol.log_likelihood(df[:80].astype(str), df[70:80])  # 'True' is the bool True
        >>> round(a, 6) == round(b, 6)
        True
        """
        from twbn.scoring.data import as_dataset
        from twbn.scoring.likelihood import held_out_log_likelihood

        parents = self.parent_indices()
        train, test = self.raw_rows(train), self.raw_rows(test)
        total, rows = held_out_log_likelihood(as_dataset(train), as_dataset(test), list(self.variables), parents,
                                              ess=ess, allow_unseen=allow_unseen)
        return total / rows

    def check(self, cache, treewidth: int | None = None) -> list[str]:
        """Run the independent verifier against ``cache`` (a ScoreCache or a jkl path), or
        against the data a result was learned from (a DataFrame, Dataset or CSV path).

        It certifies validity: every parent set is in the cache (or, against data, every
        family re-scored from the data by the verifier's own count, with the score the
        result records), the graph is acyclic, the elimination order has the stated width
        ≤ k, and the score is the sum of the local scores. Returns the problems found; an
        empty list means valid.
        """
        from twbn.formulations.verify import verify_against_data, verify_result
        from twbn.scoring.cache import ScoreCache
        from twbn.scoring.jkl import read_jkl

        if isinstance(cache, (str, Path)) and str(cache).endswith((".jkl", ".jkl.gz")):
            cache = read_jkl(cache)
        if not isinstance(cache, ScoreCache):
            from twbn.scoring.data import read_as_recorded

            recorded = self._record.get("stats", {}).get("data")
            return verify_against_data(read_as_recorded(self.raw_rows(cache), recorded), self._record, treewidth)
        return verify_result(cache, self._record, treewidth)

    def __eq__(self, other) -> bool:
        return isinstance(other, Solution) and self._record == other._record

    __hash__ = None  # mutable record inside

    @property
    def is_network(self) -> bool:
        """True when the result holds a network (status ``optimal`` or ``feasible``)."""
        return self._record["parents"] is not None and not (self.score is None or math.isnan(self.score))
