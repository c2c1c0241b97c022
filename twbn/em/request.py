"""Structural EM's request: every argument checked once, at the boundary, into one object
that the stages read; and its clock."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import numpy as np

from twbn.formulations.problem import Problem
from twbn.scoring.cache import ScoreCache
from twbn.scoring.data import DataError, Dataset
from twbn.scoring.errors import ParameterError
from twbn.em.network import required_parents

if TYPE_CHECKING:
    from twbn.solvers.policy import Policy

__all__ = ["STARTS", "EMRequest", "Clock", "make_request"]

#: The starts ``structural_em`` learns itself (``start=``; or a network's parents).
STARTS = ("hot-deck", "available", "empty")


@dataclass(frozen=True)
class EMRequest:
    """What one call of ``structural_em`` runs on: the data, the bound, the arcs, the
    M-step's method and the knobs, validated."""

    dataset: Dataset
    treewidth: int | None
    method: str
    seed: int | None
    score: str
    max_parents: int | None
    copies: int
    max_iterations: int
    tolerance: float
    ess: float
    time_limit: float
    forbidden: frozenset
    required: frozenset
    start: str  # "hot-deck", "available", "empty" or "given"
    given: list | None  # the given start's parents
    rivals: list  # the caller's networks the end compares
    solve: Callable
    say: Callable[[str], None]
    policy: "Policy"
    shape: Problem = field(repr=False)  # what auto would choose depends on n, k and the seconds only

    @property
    def codes(self) -> np.ndarray:
        return self.dataset.data

    @property
    def arities(self):
        return self.dataset.arities

    @property
    def n(self) -> int:
        return self.dataset.n_variables

    @property
    def depth(self) -> int | None:
        """The most parents of a family scored on demand (default: the bound k)."""
        return self.max_parents if self.max_parents is not None else self.treewidth

    @property
    def need(self) -> list[tuple[int, ...]]:
        return required_parents(self.required, self.n)


@dataclass
class Clock:
    """EM's seconds: ``t0`` and ``time_limit`` of the part under way (the rest, once the
    other starts' runs have ended), the whole call's ``deadline``, and the end of the
    climb before auto's final M-step (``climb_end``)."""

    called: float
    t0: float
    time_limit: float
    deadline: float
    climb_end: float = math.inf

    @classmethod
    def starting(cls, time_limit: float) -> "Clock":
        now = time.monotonic()
        return cls(now, now, time_limit, now + time_limit)

    def rest(self) -> None:
        """What is left becomes the part under way."""
        self.t0 = time.monotonic()
        self.time_limit = self.deadline - self.t0

    def reserve(self, seconds: float) -> None:
        """Keep ``seconds`` for the end's choice."""
        self.deadline -= seconds
        self.climb_end -= seconds


def _arcs_broken(names, parents, forbidden, required) -> str | None:
    """How a network of the caller's breaks the arcs (None: it keeps them)."""
    for u, v in sorted(required):
        if u not in parents[v]:
            return f"lacks the required arc {names[u]}->{names[v]}"
    for u, v in sorted(forbidden):
        if u in parents[v]:
            return f"has the forbidden arc {names[u]}->{names[v]}"
    return None


def _as_parents(network, what: str, names, forbidden, required) -> list[tuple[int, ...]]:
    """A caller's network as each variable's sorted parents, refused where it is not one of
    the n variables' or breaks the arcs."""
    n = len(names)
    parents = [tuple(sorted(int(u) for u in ps)) for ps in network]
    if len(parents) != n or any(u == v or not 0 <= u < n for v, ps in enumerate(parents) for u in ps):
        raise ParameterError(f"{what} must give the parents of each of the {n} variables")
    broken = _arcs_broken(names, parents, forbidden, required)
    if broken is not None:
        raise ParameterError(f"{what} {broken}")
    return parents


def _check_numbers(dataset: Dataset, score: str, copies, tolerance: float, time_limit: float) -> None:
    if score not in ("bic", "aic"):
        raise ParameterError(f"structural EM scores bic or aic on expected counts, not {score!r}")
    if isinstance(copies, bool) or not isinstance(copies, int) or copies < 1:
        raise ParameterError(f"copies must be an integer >= 1, got {copies!r}")
    if not (tolerance >= 0 and math.isfinite(tolerance)):
        raise ParameterError(f"tolerance must be >= 0, got {tolerance!r}")
    if not (time_limit > 0 and math.isfinite(time_limit)):
        raise ParameterError(f"structural EM needs a finite time limit > 0, got {time_limit!r}")
    if dataset.n_missing == 0:
        raise DataError("no cell is missing: learn from the data as it is")


def _which_start(start, policy: "Policy", names, forbidden, required) -> tuple[str, list | None]:
    """The start's name and, for a network of the caller's, its parents."""
    if start is None:
        start = "hot-deck" if policy.em_start_share > 0 else "empty"
    if not isinstance(start, str):
        return "given", _as_parents(start, "start", names, forbidden, required)
    if start not in STARTS:
        raise ParameterError(f"start must be one of {', '.join(STARTS)} or the parents of each variable, "
                             f"got {start!r}")
    if start in ("hot-deck", "available") and policy.em_start_share == 0:
        raise ParameterError(f"start {start!r} has no time: the policy's em_start_share is 0")
    return start, None


def make_request(dataset: Dataset, treewidth, *, method, time_limit, seed, score, max_parents, copies,
                 max_iterations, start, forbidden, required, rivals, tolerance, ess, solve, policy,
                 log) -> EMRequest:
    """The arguments of ``structural_em`` checked and completed (the policy's defaults, the
    registry's ``run``), or a ParameterError / DataError naming the first bad one."""
    from twbn.solvers.policy import DEFAULT_POLICY
    from twbn.solvers.warm_start import infeasibility

    policy = policy or DEFAULT_POLICY
    copies = policy.em_copies if copies is None else copies
    _check_numbers(dataset, score, copies, tolerance, time_limit)
    if solve is None:
        from twbn.solvers.registry import run as solve
    forbidden, required = frozenset(forbidden), frozenset(required)
    n, names = dataset.n_variables, dataset.names
    need = required_parents(required, n)
    shape = Problem(ScoreCache.from_mapping(names, [{(): 0.0, need[v]: 1.0} for v in range(n)]),
                    treewidth, forbidden, required)
    why = infeasibility(shape)
    if why is not None:
        raise ParameterError(f"no network satisfies the arcs: {why}")
    rival_networks = [_as_parents(r, f"rival {i}", names, forbidden, required) for i, r in enumerate(rivals, 1)]
    started_from, given = _which_start(start, policy, names, forbidden, required)
    return EMRequest(dataset, treewidth, method, seed, score, max_parents, copies, max_iterations, tolerance, ess,
                     time_limit, forbidden, required, started_from, given, rival_networks, solve,
                     log or (lambda line: None), policy, shape)
