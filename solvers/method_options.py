"""Each method's tuning options: a dataclass with defaults, validated on construction.

These are the only place the defaults are written: each method's ``METHOD`` declaration
names its class, and its solver function takes an instance (None: the defaults). The
registry (solvers/registry.py) takes options as one of these, or as a mapping of names to
values (from ``--option NAME=VALUE`` or an experiment config), which :func:`parse_options`
converts and checks, naming the method and the option when it refuses one.
"""

from __future__ import annotations

import dataclasses
import difflib
import typing
from dataclasses import dataclass
from typing import Any, Mapping

from twbn.formulations.elimination_milp import MilpOptions
from twbn.scoring.errors import TwbnError

__all__ = ["MilpOptions", "CutsOptions", "CpOptions", "KgOptions", "KmaxOptions", "KastarOptions", "S2Options",
           "ImproveOptions", "LocalSearchOptions", "OptionError", "parse_options", "describe_options"]

#: The cluster ILP's large-neighbourhood search: the most of the elapsed time it may take
#: (option lns_share; more finds better networks in long runs, at the bound's expense).
LNS_SHARE = 0.3
#: Default cap on the nodes one A* search expands: k-A*, and S2+'s phase 2.
KASTAR_MAX_EXPANSIONS = 20_000
S2_MAX_EXPANSIONS = 5_000


class OptionError(TwbnError, ValueError):
    """An option a method does not take, or a value it cannot use.

    Examples
    --------
    >>> KgOptions(max_iterations=0)
    Traceback (most recent call last):
    ...
    twbn.solvers.method_options.OptionError: option max_iterations must be an integer >= 1, got 0
    """


def _positive_int(name: str, value, allow_none: bool = True) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise OptionError(f"option {name} must be an integer >= 1, got {value!r}")


@dataclass(frozen=True)
class CutsOptions:
    """The cluster-cut ILP's separation and search (docs/cuts.md)."""

    exact: str = "always"  #: exact cluster separation by sub-IP: always, root or never
    edges: bool = True  #: the 2-cluster (edge) rows up front
    cluster_k: int = 3  #: largest k of the k-cluster rows (4); 1 = cluster rows (3) only
    matroid: bool = True  #: matroid rows (5) of rank 2 … cluster_k
    minor: bool = True  #: minor density rows (6), bounded mode
    lns: bool | None = None  #: large-neighbourhood search; None = on in bounded mode
    lns_share: float = LNS_SHARE  #: share of the elapsed time the LNS may use
    improve_share: float | None = None  #: share of the budget for improve first (from the given start, else k-MAX's); None = 0.6 above n = 40 without a start, else 0

    def __post_init__(self):
        if self.exact not in ("always", "root", "never"):
            raise OptionError(f"option exact must be always, root or never, got {self.exact!r}")
        _positive_int("cluster_k", self.cluster_k, allow_none=False)
        if not 0.0 <= self.lns_share < 1.0:
            raise OptionError(f"option lns_share must lie in [0, 1), got {self.lns_share!r}")
        if self.improve_share is not None and not 0.0 <= self.improve_share < 1.0:
            raise OptionError(f"option improve_share must lie in [0, 1), got {self.improve_share!r}")


@dataclass(frozen=True)
class CpOptions:
    """The CP-SAT k-tree model."""

    workers: int | None = None  #: CP-SAT search workers (default: one per core)
    redundant: bool = True  #: redundant clique-count constraints
    permutation: bool = True  #: the elimination order as a permutation (symmetry breaking)

    def __post_init__(self):
        _positive_int("workers", self.workers)


@dataclass(frozen=True)
class KgOptions:
    """k-G (Scanagatta et al. 2016)."""

    max_iterations: int | None = None  #: stop after this many orders (with the time limit, whichever first)

    def __post_init__(self):
        _positive_int("max_iterations", self.max_iterations)


@dataclass(frozen=True)
class KmaxOptions:
    """k-MAX (Scanagatta et al. 2018)."""

    max_iterations: int | None = None  #: stop after this many networks (with the time limit, whichever first)

    def __post_init__(self):
        _positive_int("max_iterations", self.max_iterations)


#: Where localsearch's first climbs begin (its option ``first``).
LOCALSEARCH_FIRSTS = ("empty", "tree", "both")


@dataclass(frozen=True)
class LocalSearchOptions:
    """Local search over DAGs checked against an elimination order (solvers/localsearch/)."""

    max_iterations: int | None = None  #: stop after this many climbs (with the time limit, whichever first)
    reverse: bool = True  #: arc reversals as moves (ETL's hc-ET); False: additions only (hc-ET-poly)
    repair: bool = True  #: a move the current order rejects may be taken under a new min-fill order
    kick: int | None = None  #: variables reset between climbs (None: the policy's localsearch_kick_share of n)
    #: seconds after which no new climb begins; the climb under way still ends at its
    #: hill top unless the time limit ends it first (None: climbs begin until the limit)
    soft_limit: float | None = None
    #: without a start, where the first climbs begin: empty (the network of required arcs),
    #: tree (the best branching over single-parent families), both (from the tree, then from
    #: empty, then on from the better); None: both
    first: str | None = None
    #: the most entries the network's junction tree may have (the sum over its maximal
    #: cliques of the product of their arities), kept with the width at every move; None: no bound
    max_table_size: int | None = None

    def __post_init__(self):
        _positive_int("max_iterations", self.max_iterations)
        _positive_int("kick", self.kick)
        _positive_int("max_table_size", self.max_table_size)
        if self.soft_limit is not None and (isinstance(self.soft_limit, bool) or
                                            not isinstance(self.soft_limit, (int, float)) or
                                            not self.soft_limit > 0):
            raise OptionError(f"option soft_limit must be a positive number of seconds, got {self.soft_limit!r}")
        if self.first is not None and self.first not in LOCALSEARCH_FIRSTS:
            raise OptionError(f"option first must be one of {', '.join(LOCALSEARCH_FIRSTS)}, got {self.first!r}")
        for name in ("reverse", "repair"):
            if not isinstance(getattr(self, name), bool):
                raise OptionError(f"option {name} must be true or false, got {getattr(self, name)!r}")


@dataclass(frozen=True)
class ImproveOptions:
    """Exact-neighbourhood improvement (solvers/improve/)."""

    piece_time_limit: float = 2.0  #: seconds one piece's sub-problem may take at first
    max_piece_time_limit: float | None = None  #: doubled while stuck up to this (None: 8 × the first)
    start_size: int = 10  #: free variables in the first piece (then adapted)
    max_pieces: int | None = None  #: stop after this many pieces (with the time limit, whichever first)
    #: once the search stalls (pieces at the largest time limit gain nothing), go on from
    #: another k-MAX network (another seed; k-G's once k-MAX repeats one) and keep the best
    restarts: bool = True
    #: between the pieces of H, pieces without a treewidth model whose families are cliques
    #: of a k-tree containing H (solvers/improve/ktree.py)
    ktree_pieces: bool = True

    def __post_init__(self):
        for name in ("restarts", "ktree_pieces"):
            if not isinstance(getattr(self, name), bool):
                raise OptionError(f"option {name} must be true or false, got {getattr(self, name)!r}")
        if not self.piece_time_limit > 0:
            raise OptionError(f"option piece_time_limit must be positive, got {self.piece_time_limit!r}")
        if self.max_piece_time_limit is not None and not self.max_piece_time_limit >= self.piece_time_limit:
            raise OptionError(f"option max_piece_time_limit must be at least piece_time_limit "
                              f"({self.piece_time_limit!r}), got {self.max_piece_time_limit!r}")
        _positive_int("start_size", self.start_size, allow_none=False)
        _positive_int("max_pieces", self.max_pieces)


@dataclass(frozen=True)
class KastarOptions:
    """k-A* (Scanagatta et al. 2016)."""

    max_iterations: int | None = None  #: stop after this many orders
    max_expansions: int = KASTAR_MAX_EXPANSIONS  #: nodes one A* search may expand

    def __post_init__(self):
        _positive_int("max_iterations", self.max_iterations)
        _positive_int("max_expansions", self.max_expansions, allow_none=False)


@dataclass(frozen=True)
class S2Options:
    """S2 and S2+ (Scanagatta et al. 2016); phase 2 is the backend (``--solver``)."""

    max_iterations: int | None = None  #: stop after this many k-trees
    max_expansions: int = S2_MAX_EXPANSIONS  #: S2+: nodes one A* search may expand

    def __post_init__(self):
        _positive_int("max_iterations", self.max_iterations)
        _positive_int("max_expansions", self.max_expansions, allow_none=False)


def _convert(method: str, name: str, kind, value):
    """``value`` (text from the command line, or a TOML value) as ``kind``."""
    args = typing.get_args(kind)
    optional = type(None) in args
    base = next((a for a in args if a is not type(None)), kind) if args else kind
    if isinstance(value, str):
        text = value.strip()
        if optional and text.lower() in ("none", "null", ""):
            return None
        if base is bool:
            if text.lower() in ("true", "yes", "on", "1"):
                return True
            if text.lower() in ("false", "no", "off", "0"):
                return False
            raise OptionError(f"method {method}: option {name} is true or false, got {value!r}")
        if base is int:
            try:
                return int(text)
            except ValueError:
                raise OptionError(f"method {method}: option {name} is an integer, got {value!r}") from None
        if base is float:
            try:
                return float(text)
            except ValueError:
                raise OptionError(f"method {method}: option {name} is a number, got {value!r}") from None
        return text
    if value is None and optional:
        return None
    if base is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, base) or (base is int and isinstance(value, bool)):
        raise OptionError(f"method {method}: option {name} must be {base.__name__}, got {value!r}")
    return value


def parse_options(method: str, cls: type, given: Mapping[str, Any] | Any | None):
    """An options object of ``cls`` for ``method`` from None (the defaults), an instance,
    or a mapping of option names to values (text or typed); OptionError names the method,
    the option and, for a misspelling, the option meant."""
    if given is None:
        return cls()
    if isinstance(given, cls):
        return given
    if not isinstance(given, Mapping):
        raise OptionError(f"method {method}: options must be a mapping of names to values, not {type(given).__name__}")
    hints = typing.get_type_hints(cls)
    known = [f.name for f in dataclasses.fields(cls)]
    values = {}
    for name, value in given.items():
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            takes = f"; it takes {', '.join(known)}" if known else "; it takes no options"
            raise OptionError(f"method {method} has no option {name!r}{hint}{takes}")
        values[name] = _convert(method, name, hints[name], value)
    try:
        return cls(**values)
    except OptionError as exc:
        raise OptionError(f"method {method}: {exc}") from None


def describe_options(cls: type) -> list[str]:
    """One line per option: name, type, default and what it does (from the comments)."""
    import inspect

    hints = typing.get_type_hints(cls)
    notes = {}
    for line in inspect.getsource(cls).splitlines():
        if "#:" in line and ":" in line.split("#:")[0]:
            notes[line.split(":")[0].strip()] = line.split("#:", 1)[1].strip()
    out = []
    for f in dataclasses.fields(cls):
        kind = hints[f.name]
        shown = getattr(kind, "__name__", None) or str(kind).replace("typing.", "")
        out.append(f"{f.name}={f.default!r}  ({shown}) {notes.get(f.name, '')}".rstrip())
    return out
