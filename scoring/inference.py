"""Learned networks as pgmpy models: BIF export and exact-inference timing.

Bounding treewidth matters because exact inference costs time exponential in it: the
junction-tree algorithm is O(n·d^(w+1)) for a network whose moral graph has treewidth w
(d states per variable). ``inference_time`` makes that visible on the networks twbn
learns: it calibrates pgmpy's junction tree (``BeliefPropagation``, which yields every
marginal at once) and runs variable-elimination queries, and reports the seconds and the
largest clique pgmpy's triangulation found.

pgmpy is a dependency of twbn; where it is missing (a broken install) these
functions raise ``InferenceUnavailable`` with that advice.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from twbn.scoring.jkl import atomic_path
from twbn.scoring.errors import ParameterError, TwbnError

__all__ = ["InferenceUnavailable", "require_pgmpy", "network_model", "learned_model", "write_bif",
           "elimination_cliques", "table_entries", "junction_trees", "inference_time"]


class InferenceUnavailable(TwbnError, ImportError):
    """pgmpy is not installed."""


def require_pgmpy() -> None:
    """Import pgmpy (quietly), or raise InferenceUnavailable."""
    import warnings

    try:
        with warnings.catch_warnings():  # pgmpy 1.x announces its deprecations on import
            warnings.simplefilter("ignore", FutureWarning)
            import pgmpy.estimators  # noqa: F401
            import pgmpy.models  # noqa: F401
    except ImportError:
        raise InferenceUnavailable("BIF export and inference timing need pgmpy: pip install pgmpy") \
            from None
    import logging

    logging.getLogger("pgmpy").setLevel(logging.ERROR)  # pgmpy logs every model it checks


def network_model(names: Sequence[str], states: Sequence[Sequence[str]], parents: Sequence[Sequence[int]],
                  cpts: Sequence[np.ndarray]):
    """A pgmpy ``DiscreteBayesianNetwork`` of a learned network.

    ``cpts[v]`` is the (q_v, r_v) table of ``twbn.scoring.likelihood.fit_cpts``, whose row code
    has the first parent least significant; pgmpy's columns have the last evidence
    variable fastest, so the evidence list is the parents reversed.
    """
    require_pgmpy()
    from pgmpy.factors.discrete import TabularCPD
    from pgmpy.models import DiscreteBayesianNetwork

    model = DiscreteBayesianNetwork()
    model.name = "twbn"
    model.add_nodes_from(names)
    model.add_edges_from((names[p], names[v]) for v, ps in enumerate(parents) for p in ps)
    for v, ps in enumerate(parents):
        ev = [names[p] for p in reversed(ps)]
        model.add_cpds(TabularCPD(names[v], len(states[v]), np.asarray(cpts[v]).T, evidence=ev or None,
                                  evidence_card=[len(states[p]) for p in reversed(ps)] or None,
                                  state_names={names[u]: list(states[u]) for u in [v, *ps]}))
    model.check_model()
    return model


def learned_model(train, names: Sequence[str], parents: Sequence[Sequence[int]], ess: float = 1.0,
                  values: dict | None = None):
    """The pgmpy model of the network over ``names`` (variable i has parent indices
    ``parents[i]``), its CPTs fitted on the Dataset ``train`` with the Dirichlet smoothing
    of ``twbn.scoring.likelihood.fit_cpts`` (by EM, ``em_cpts``, where it has missing cells). States are the data's texts, or, with
    ``values`` (``twbn.scoring.data.state_values``), the values they stand for. Raises
    DataError for a name not in the data."""
    from twbn.scoring.data import state_order
    from twbn.scoring.likelihood import align, em_cpts

    codes, _, arities = align(train, train, names)  # codes over state_order of the labels
    cpts = em_cpts(codes, arities, parents, ess)  # by EM where cells are missing
    states = [state_order(train.states[train.names.index(n)]) for n in names]
    if values is not None:
        states = [[values[n][t] for t in st] for n, st in zip(names, states)]
    return network_model(names, states, parents, cpts)


def write_bif(model, path: str | Path) -> None:
    """Write ``model`` as BIF through pgmpy's writer, atomically (temporary file, rename)."""
    require_pgmpy()
    from pgmpy.readwrite import BIFWriter

    writer = BIFWriter(model)
    with atomic_path(path) as tmp:
        (writer.write if hasattr(writer, "write") else writer.write_bif)(tmp)


def elimination_cliques(model, order: Sequence[str]) -> list[frozenset]:
    """The maximal cliques of eliminating ``model``'s moral graph in ``order``: each
    vertex with its later neighbours, fill-in added as it goes."""
    moral = model.moralize()
    if sorted(order) != sorted(moral.nodes()):
        raise ParameterError("the elimination order must list every variable of the network once")
    pos = {v: i for i, v in enumerate(order)}
    adj = {v: set(moral.neighbors(v)) for v in moral.nodes()}
    cliques = []
    for v in order:
        later = {u for u in adj[v] if pos[u] > pos[v]}
        cliques.append(frozenset(later | {v}))
        for a in later:
            adj[a] |= later - {a}
    return [c for c in set(cliques) if not any(c < d for d in cliques)]


def table_entries(model, cliques: Sequence[frozenset]) -> int:
    """Entries of the clique potentials: what a junction tree costs in memory and time."""
    return sum(math.prod(int(model.get_cardinality(v)) for v in c) for c in cliques)


def junction_trees(model, order: Sequence[str], cliques: list[frozenset] | None = None) -> list:
    """pgmpy ``JunctionTree`` s of ``model``, one per connected component, built from an
    elimination order (e.g. a result's certificate) instead of pgmpy's triangulation
    heuristic, so that the largest clique is the order's width + 1.

    The maximal cliques of ``elimination_cliques``, joined by a maximum-weight spanning
    tree on sepset sizes, form a junction tree. Each CPD is multiplied into one clique
    holding its family; every clique starts from a potential of ones.
    O(``table_entries``) memory.
    """
    require_pgmpy()
    import networkx as nx
    from pgmpy.factors.discrete import DiscreteFactor
    from pgmpy.models import JunctionTree

    maximal = elimination_cliques(model, order) if cliques is None else cliques  # callers may have them
    moral = model.moralize()
    pos = {v: i for i, v in enumerate(order)}
    cards = {v: model.get_cardinality(v) for v in order}
    states = {v: model.get_cpds(v).state_names[v] for v in order}
    trees = []
    for comp in nx.connected_components(moral):
        mine = [c for c in maximal if c & comp]
        g = nx.Graph()
        g.add_nodes_from(mine)
        g.add_weighted_edges_from((a, b, len(a & b)) for i, a in enumerate(mine) for b in mine[i + 1:] if a & b)
        jt = JunctionTree()
        nodes = {c: tuple(sorted(c, key=pos.get)) for c in mine}
        if len(mine) == 1:
            jt.add_node(nodes[mine[0]])
        jt.add_edges_from((nodes[a], nodes[b]) for a, b in nx.maximum_spanning_tree(g).edges())
        potentials = {c: DiscreteFactor(list(nodes[c]), [cards[v] for v in nodes[c]],
                                        np.ones(int(np.prod([cards[v] for v in nodes[c]]))),
                                        state_names={v: states[v] for v in nodes[c]}) for c in mine}
        for v in comp:
            cpd = model.get_cpds(v)
            home = next(c for c in mine if set(cpd.scope()) <= c)
            potentials[home] = potentials[home] * cpd.to_factor()
        jt.add_factors(*(potentials[c] for c in mine))
        trees.append(jt)
    return trees


#: Junction trees above this many potential entries are not built: pgmpy took 10.3 s to
#: build and calibrate one of 3.86 million (audiology, k = 20), and at 20 million (the
#: limit before) a cell of the Machado study passed its kill margin of 60 s once moral
#: pieces made its networks wider (k = 40).
MAX_TABLE_ENTRIES = 4_000_000


def inference_time(model, order: Sequence[str] | None = None, *, queries: int = 5, evidence: int = 2,
                   seed: int = 0, max_entries: int = MAX_TABLE_ENTRIES, repeats: int = 1,
                   junction_tree: bool = True) -> dict:
    """Time exact inference on ``model``.

    Returns ``junction_tree_s``: building and calibrating the junction tree (one per
    connected component), after which every marginal is known; built from ``order``
    (``junction_trees``) when given, else by pgmpy's own triangulation. ``max_clique``:
    its largest clique, in variables. ``ve_query_s``: mean time of ``queries``
    variable-elimination queries, each the marginal of one random variable given
    ``evidence`` random others in random states: in ``order`` when given (the query
    variable kept to the last, which widens its cliques by at most that variable), else
    in pgmpy's MinFill order. MinFill's order is not bounded by the certificate: at
    audiology, k = 50, a network whose junction tree was under ``max_entries`` made one
    query run past its cell's kill margin.
    With ``repeats`` > 1 each time is the fastest of that many runs (first calls pay for
    pgmpy's imports and caches). ``table_entries``: the size of the certificate's junction tree. When that exceeds
    ``max_entries`` nothing is run (the times are None): inference is what bounded
    treewidth exists to keep affordable, and a timing must not exhaust the machine.
    ``junction_tree=False`` times the queries only (``junction_tree_s`` None): pgmpy's
    calibration compares every message with the last, and at cwebkb (839 variables, k = 1)
    it took 30 s of a 30 s ``--treewidth auto``, whose curve needs the queries' time alone.
    """
    require_pgmpy()
    import networkx as nx
    from pgmpy.inference import BeliefPropagation, VariableElimination
    from pgmpy.models import DiscreteBayesianNetwork

    rng = np.random.default_rng(seed)
    entries = cliques = None
    if order is not None:
        cliques = elimination_cliques(model, order)
        entries = table_entries(model, cliques)
        if entries > max_entries:
            return {"junction_tree_s": None, "max_clique": max(len(c) for c in cliques), "ve_query_s": None,
                    "table_entries": entries}
    jt_s = math.inf if junction_tree else None
    max_clique = max(len(c) for c in cliques) if cliques else None
    for _ in range(max(1, repeats) if junction_tree else 0):
        t0 = time.perf_counter()
        if order is not None:
            trees = junction_trees(model, order, cliques)
        else:  # pgmpy cannot join the cliques of disconnected components: one tree each
            trees = []
            for comp in nx.weakly_connected_components(model):
                sub = DiscreteBayesianNetwork(model.subgraph(comp).edges())
                sub.add_nodes_from(comp)
                sub.add_cpds(*(model.get_cpds(x) for x in comp))
                trees.append(sub)
        max_clique = 1
        for t in trees:
            bp = BeliefPropagation(t)
            bp.calibrate()
            max_clique = max(max_clique, *(len(c) for c in bp.junction_tree.nodes()))
        jt_s = min(jt_s, time.perf_counter() - t0)
    nodes = list(model.nodes())
    ve = VariableElimination(model)
    times = []
    for _ in range(queries):
        pick = rng.choice(len(nodes), size=min(len(nodes), evidence + 1), replace=False)
        target, ev = nodes[pick[0]], [nodes[i] for i in pick[1:]]
        e = {x: model.get_cpds(x).state_names[x][rng.integers(model.get_cardinality(x))] for x in ev}
        how = "MinFill" if order is None else [v for v in order if v != target and v not in e]
        best = math.inf
        for _ in range(max(1, repeats)):
            t0 = time.perf_counter()
            ve.query([target], evidence=e, elimination_order=how, show_progress=False)
            best = min(best, time.perf_counter() - t0)
        times.append(best)
    return {"junction_tree_s": jt_s, "max_clique": max_clique, "ve_query_s": float(np.mean(times)) if times else None,
            "table_entries": entries}
