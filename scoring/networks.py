"""Discrete Bayesian networks as data sources: a BNGenerator-style random generator, a
BIF reader and writer, and forward sampling into a ``Dataset``.

A ``Network`` holds, per variable, its state labels, its parents (indices) and its CPT as
a (q, r) float64 array whose row is the parent configuration with the *first* parent
least significant, as in ``twbn.scoring.likelihood`` (so a sampled network's CPTs and the
CPTs fitted by ``fit_cpts`` index alike).

``random_network`` follows the networks of Sec. 4.4 of Scanagatta et al. (2016), made
with BNGenerator: n variables with 2–4 states and 0–6 parents, random CPTs. Deviation:
BNGenerator samples DAGs uniformly by MCMC under degree constraints; here each variable
of a random topological order draws its number of parents uniformly from 0..6 and then
the parents uniformly from the ``window`` variables before it (all of them by default),
with CPT rows drawn from a symmetric Dirichlet(``alpha``). O(n·max_parents + Σ q·r).

``sample`` is forward sampling in topological order: O(n·N) with numpy.
"""

from __future__ import annotations

import gzip
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from twbn.scoring.data import DataError, Dataset
from twbn.scoring.jkl import atomic_write_bytes
from twbn.scoring.errors import ParameterError, TwbnError

__all__ = ["NetworkError", "Network", "random_network", "sample", "read_bif", "write_bif", "write_csv"]


class NetworkError(TwbnError, ValueError):
    """A malformed network or BIF file; the message names where."""


@dataclass(frozen=True)
class Network:
    names: tuple[str, ...]
    states: tuple[tuple[str, ...], ...]
    parents: tuple[tuple[int, ...], ...]
    cpts: tuple[np.ndarray, ...]

    @property
    def n_variables(self) -> int:
        return len(self.names)

    def topological_order(self) -> list[int]:
        n = self.n_variables
        indeg = [len(p) for p in self.parents]
        children: list[list[int]] = [[] for _ in range(n)]
        for v, ps in enumerate(self.parents):
            for p in ps:
                children[p].append(v)
        ready = [v for v in range(n) if indeg[v] == 0]
        order = []
        while ready:
            v = ready.pop()
            order.append(v)
            for c in children[v]:
                indeg[c] -= 1
                if indeg[c] == 0:
                    ready.append(c)
        if len(order) != n:
            raise NetworkError("the network has a directed cycle")
        return order

    def validate(self) -> None:
        n = self.n_variables
        if not (len(self.states) == len(self.parents) == len(self.cpts) == n):
            raise NetworkError("names, states, parents and CPTs differ in length")
        for v in range(n):
            q = math.prod(len(self.states[p]) for p in self.parents[v])
            if any(not 0 <= p < n or p == v for p in self.parents[v]):
                raise NetworkError(f"variable {self.names[v]!r}: bad parent index")
            if self.cpts[v].shape != (q, len(self.states[v])):
                raise NetworkError(f"variable {self.names[v]!r}: CPT of shape {self.cpts[v].shape}, "
                                   f"expected {(q, len(self.states[v]))}")
            if not np.allclose(self.cpts[v].sum(axis=1), 1.0, atol=1e-6) or (self.cpts[v] < 0).any():
                raise NetworkError(f"variable {self.names[v]!r}: CPT rows are not distributions")
        self.topological_order()


def random_network(n: int, *, seed: int, min_states: int = 2, max_states: int = 4, max_parents: int = 6,
                   window: int | None = None, alpha: float = 1.0) -> Network:
    """A random network (see the module docstring); variables are named X0, X1, …"""
    if n < 1:
        raise ParameterError(f"n must be at least 1, got {n}")
    if not 1 <= min_states <= max_states or max_parents < 0 or not alpha > 0:
        raise ParameterError("need 1 <= min_states <= max_states, max_parents >= 0 and alpha > 0")
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    arity = rng.integers(min_states, max_states + 1, size=n)
    parents: list[tuple[int, ...]] = [()] * n
    cpts: list[np.ndarray] = [np.empty(0)] * n
    for i, v in enumerate(order):
        lo = 0 if window is None else max(0, i - window)
        k = int(rng.integers(0, min(max_parents, i - lo) + 1))
        ps = tuple(int(p) for p in order[rng.choice(np.arange(lo, i), size=k, replace=False)]) if k else ()
        parents[v] = ps
        q = math.prod(int(arity[p]) for p in ps)
        cpts[v] = rng.dirichlet(np.full(int(arity[v]), alpha), size=q)
    return Network(tuple(f"X{v}" for v in range(n)), tuple(tuple(str(s) for s in range(a)) for a in arity),
                   tuple(parents), tuple(cpts))


def sample(network: Network, rows: int, *, seed: int) -> Dataset:
    """``rows`` rows forward-sampled from ``network``, as an encoded Dataset whose states
    are the network's (every state listed, seen or not)."""
    if rows < 1:
        raise ParameterError(f"rows must be at least 1, got {rows}")
    rng = np.random.default_rng(seed)
    n = network.n_variables
    data = np.zeros((n, rows), dtype=np.int32)
    for v in network.topological_order():
        code = np.zeros(rows, dtype=np.int64)
        stride = 1
        for p in network.parents[v]:
            code += data[p].astype(np.int64) * stride
            stride *= len(network.states[p])
        cum = np.cumsum(network.cpts[v], axis=1)[code]  # (rows, r)
        u = rng.random(rows)
        data[v] = np.minimum((cum < u[:, None]).sum(axis=1), len(network.states[v]) - 1)
    return Dataset(network.names, network.states, np.ascontiguousarray(data))


_TOKEN = re.compile(r"[^\s{}()\[\];,|]+|[{}()\[\];,|]")


def read_bif(path: str | Path) -> Network:
    """A network from a BIF file (gzip if the name ends in .gz), as bnlearn and pgmpy
    write them: ``variable`` blocks with ``type discrete [ r ] { states }`` and
    ``probability`` blocks with ``table`` or one ``(parent states) probabilities;`` line
    per parent configuration. Raises NetworkError naming what is wrong."""
    path = Path(path)
    raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", raw.decode("utf-8"), flags=re.S)
    names: list[str] = []
    states: dict[str, list[str]] = {}
    for m in re.finditer(r"variable\s+(\S+)\s*\{(.*?)\}\s*(?=variable\s|probability\s*\(|$)", text, flags=re.S):
        name, body = m.group(1), m.group(2)
        t = re.search(r"type\s+discrete\s*\[\s*(\d+)\s*\]\s*\{([^}]*)\}", body)
        if t is None:
            raise NetworkError(f"{path}: variable {name!r} is not 'type discrete [ r ] {{ states }}'")
        labels = [s.strip() for s in t.group(2).split(",") if s.strip()]
        if len(labels) != int(t.group(1)) or len(set(labels)) != len(labels):
            raise NetworkError(f"{path}: variable {name!r} declares {t.group(1)} states but lists {labels}")
        if name in states:
            raise NetworkError(f"{path}: variable {name!r} is declared twice")
        names.append(name)
        states[name] = labels
    if not names:
        raise NetworkError(f"{path}: no variable blocks")
    pos = {nm: i for i, nm in enumerate(names)}
    parents: list[tuple[int, ...] | None] = [None] * len(names)
    cpts: list[np.ndarray | None] = [None] * len(names)
    for m in re.finditer(r"probability\s*\(([^)]*)\)\s*\{(.*?)\}", text, flags=re.S):
        head = [s.strip() for s in re.split(r"[|,]", m.group(1)) if s.strip()]
        child, pnames = head[0], head[1:]
        for nm in head:
            if nm not in pos:
                raise NetworkError(f"{path}: probability block names unknown variable {nm!r}")
        v = pos[child]
        ps = tuple(pos[p] for p in pnames)
        r = len(states[child])
        cards = [len(states[p]) for p in pnames]
        q = math.prod(cards)
        table = np.full((q, r), np.nan)
        body = m.group(2)
        tm = re.search(r"table\s+([^;]*);", body)
        if tm is not None:
            if ps:  # its value order differs between writers; refuse rather than guess
                raise NetworkError(f"{path}: {child!r}: a 'table' with parents is not supported; "
                                   "write one '(parent states) probabilities;' line per configuration")
            vals = [float(x) for x in tm.group(1).replace(",", " ").split()]
            if len(vals) != r:
                raise NetworkError(f"{path}: table of {child!r} has {len(vals)} values, expected {r}")
            table[0] = vals
        else:
            for row in re.finditer(r"\(([^)]*)\)\s*([^;]*);", body):
                labels = [s.strip() for s in row.group(1).split(",")]
                if len(labels) != len(ps):
                    raise NetworkError(f"{path}: {child!r}: row ({row.group(1)}) does not name every parent")
                code, stride = 0, 1
                for p, lab in zip(ps, labels):
                    try:
                        code += states[names[p]].index(lab) * stride
                    except ValueError:
                        raise NetworkError(f"{path}: {child!r}: {lab!r} is not a state of {names[p]!r}") from None
                    stride *= len(states[names[p]])
                vals = [float(x) for x in row.group(2).replace(",", " ").split()]
                if len(vals) != r:
                    raise NetworkError(f"{path}: {child!r}: row ({row.group(1)}) has {len(vals)} probabilities")
                table[code] = vals
        if np.isnan(table).any():
            raise NetworkError(f"{path}: {child!r}: some parent configurations have no probabilities")
        parents[v], cpts[v] = ps, table
    missing = [names[v] for v in range(len(names)) if parents[v] is None]
    if missing:
        raise NetworkError(f"{path}: no probability block for {', '.join(missing[:5])}")
    net = Network(tuple(names), tuple(tuple(states[nm]) for nm in names), tuple(parents), tuple(cpts))
    net.validate()
    return net


def write_bif(network: Network, path: str | Path) -> None:
    """Write ``network`` as BIF (gzip if the name ends in .gz), atomically: one
    ``(parent states)`` line per parent configuration, 17 significant digits."""
    path = Path(path)
    out: list[str] = ["network twbn {", "}"]
    for v, nm in enumerate(network.names):
        out += [f"variable {nm} {{", f"  type discrete [ {len(network.states[v])} ] {{ {', '.join(network.states[v])} }};",
                "}"]
    for v, nm in enumerate(network.names):
        ps = network.parents[v]
        cpt = network.cpts[v]
        if not ps:
            out += [f"probability ( {nm} ) {{", "  table " + ", ".join(repr(float(x)) for x in cpt[0]) + ";", "}"]
            continue
        out.append(f"probability ( {nm} | {', '.join(network.names[p] for p in ps)} ) {{")
        cards = [len(network.states[p]) for p in ps]
        for code in range(cpt.shape[0]):
            labels, c = [], code
            for p, card in zip(ps, cards):
                labels.append(network.states[p][c % card])
                c //= card
            out.append(f"  ({', '.join(labels)}) " + ", ".join(repr(float(x)) for x in cpt[code]) + ";")
        out.append("}")
    data = ("\n".join(out) + "\n").encode("utf-8")
    atomic_write_bytes(path, gzip.compress(data, compresslevel=6) if path.suffix == ".gz" else data)


def write_csv(dataset: Dataset, path: str | Path) -> None:
    """Write a Dataset as CSV (gzip if the name ends in .gz), header = names, atomically."""
    path = Path(path)
    if any("," in s or "\n" in s for st in dataset.states for s in st) or any("," in nm for nm in dataset.names):
        raise DataError("state labels and names must not contain commas or newlines for CSV")
    lines = [",".join(dataset.names)]
    labels = [np.array(st, dtype=object) for st in dataset.states]
    cols = [labels[v][dataset.data[v]] for v in range(dataset.n_variables)]
    lines += [",".join(row) for row in zip(*cols)]
    data = ("\n".join(lines) + "\n").encode("utf-8")
    atomic_write_bytes(path, gzip.compress(data, compresslevel=1) if path.suffix == ".gz" else data)
