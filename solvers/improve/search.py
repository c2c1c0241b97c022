"""The piece loop's state: the network, the adapted piece size, when pieces are stuck or
the search has stalled, the counts and the trajectory; one process or several share it."""

from __future__ import annotations

import math
import random
import time
from typing import Sequence

from twbn.formulations.graphs import Adjacency, moral_graph
from twbn.solvers.cuts.lns import neighbourhood
from twbn.formulations.problem import Problem
from twbn.formulations.solution import SolverResult, make_solution
from twbn.solvers.policy import Policy
from twbn.solvers.control import RunControl
from twbn.solvers.method_options import ImproveOptions
from twbn.solvers.improve.ktree import KtreePieces
from twbn.solvers.improve.pieces import Piece, choose_piece, random_peo
from twbn.solvers.improve.state import State
from twbn.solvers.budget import seconds_to


__all__ = ["Search", "clash", "over"]

class Search(KtreePieces):
    """The piece loop's state shared by one process and several: the network, the adapted
    piece size, the counts and the trajectory."""

    def __init__(self, problem: Problem, start: SolverResult, options: ImproveOptions, seed: int | None,
                 control: RunControl | None, stop_when_stalled: bool, policy: Policy) -> None:
        self.problem, self.options, self.control, self.policy = problem, options, control, policy
        self.t0 = time.monotonic()
        self.rng = random.Random(seed)
        self.state = State(problem, start, policy)
        self.size = max(1, min(options.start_size, problem.n))
        self.piece_limit = options.piece_time_limit  # doubled while stuck, up to the next
        self.max_piece_limit = options.max_piece_time_limit or policy.piece_limit_growth * options.piece_time_limit
        self.overrun = 0.0  # the most a piece ran past its limit: later pieces end that much early
        self.proved = False
        self.since_gain = 0
        self.dry = 0  # pieces in a row at the largest piece limit without a gain
        self.stop_when_stalled = stop_when_stalled
        self.stalled_at: float | None = None
        self.counts = {"pieces": 0, "improvements": 0, "rejected": 0, "timed_out": 0, "sub_seconds": 0.0,
                       "moral_pieces": 0, "moral_gains": 0, "too_wide": 0}
        # k-tree pieces (module docstring): the current k-tree H* (None: H's pieces' turn),
        # their own adapted size (with no treewidth model they solve at about twice a tree
        # piece's), their own count of pieces in a row without a gain, and whether H* gained
        self.ktree: Adjacency | None = None
        self.ktree_size = self.size
        self.ktree_since_gain = 0
        self.ktree_turns = options.ktree_pieces and self.state.tri is not None and problem.treewidth < problem.n - 1
        self.ktree_only = self.ktree_turns and problem.treewidth >= policy.ktree_only_min_k  # after H's first stall
        self.ktree_gained = False
        self.trajectory = [{"time": round(time.monotonic() - self.t0, 4), "incumbent": self.state.score,
                            "bound": None}]
        if control is not None:
            control.report(incumbent=self.state.score)

    def cut(self, busy: Sequence[Piece] = ()) -> Piece:
        """The next piece; with pieces out for solving (``busy``), one that shares no
        variable with theirs where a few tries find one (a clash is caught when it returns)."""
        state, n = self.state, self.problem.n
        ktree = self._ktree_for_next()
        # a tree piece of every variable solves the whole problem bounded: a moral piece of it
        # only finds the unbounded optimum
        moral = ktree is None and state.tri is not None and self.size < n and self._moral_turn()
        size = self.ktree_size if ktree is not None else self.size
        for _ in range(8 if busy else 1):
            if state.tri is None or moral or ktree is not None:
                # unbounded (or a k-tree piece): a piece connected in the moral graph; its
                # neighbours there (its parents, children and co-parents) are the boundary
                free = neighbourhood(state.parents, min(size, n), self.rng)
                fset = set(free)
                mg = moral_graph(state.parents)
                boundary = sorted({u for v in free for u in mg[v]} - fset)
                peo = None
            else:
                peo = random_peo(state.tri, self.rng)
                free, boundary = choose_piece(state.tri, peo, self.size, self.rng)
            if not any(clash(free, boundary, p.free, p.boundary) for p in busy):
                break
        return Piece(state, free, boundary, peo, moral, ktree)

    def _moral_turn(self) -> bool:
        """Whether the next piece of a bounded problem is a moral piece: only while the
        network is narrower than k, at random, more often the more of them were glued in
        and the fewer came back too wide."""
        state = self.state
        # H's width first: the min-fill one costs 0.1 s at n = 1,041 (min-degree there)
        if state.k is None or (state.width >= state.k and state.narrow_width() >= state.k):
            return False
        ok, wide = self.counts["moral_gains"], self.counts["too_wide"]
        return self.rng.random() < (1 + ok) / (2 + ok + wide)

    def take(self, piece: Piece, found: SolverResult, took: float, limit: float) -> None:
        """Glue in a solved piece if it gains (after checking it against what was glued in
        since it was cut), adapt the piece size, count."""
        counts, state = self.counts, self.state
        counts["pieces"] += 1
        self.overrun = max(self.overrun, took - limit)
        counts["moral_pieces"] += piece.moral
        if piece.ktree:
            counts["ktree_pieces"] = counts.get("ktree_pieces", 0) + 1
        counts["sub_seconds"] += took
        gain = -math.inf if found.parents is None else found.score - piece.start.score
        if gain > 1e-9 * max(1.0, abs(state.score)):
            later = state.glued[piece.glued_before:]
            if any(clash(piece.free, piece.boundary, f, b) for f, b in later):
                counts["stale"] = counts.get("stale", 0) + 1
            elif state.accept(piece.free, piece.boundary, piece.local, found, check_acyclic=bool(later),
                              moral=piece.moral or piece.ktree):
                counts["improvements"] += 1
                if piece.ktree:
                    counts["ktree_gains"] = counts.get("ktree_gains", 0) + 1
                    self.ktree_since_gain = -1
                    self.ktree_gained = True
                else:
                    self.since_gain = -1
                self.dry = -1
                self.trajectory.append({"time": round(time.monotonic() - self.t0, 4), "incumbent": state.score,
                                        "bound": None})
                if self.control is not None:
                    self.control.report(incumbent=state.score)
                counts["moral_gains"] += piece.moral
            elif piece.moral:
                counts["too_wide"] += 1  # (or a cycle through pieces glued in since)
                gain = math.nan  # an unbounded optimum wider than k proves nothing
            else:  # (a k-tree piece: a cycle through pieces glued in since; it fits k)
                counts["rejected"] += 1
        size = self.ktree_size if piece.ktree else self.size
        if found.status == "optimal" and len(piece.free) == self.problem.n and not math.isnan(gain) \
                and not piece.ktree:
            self.proved = True  # the piece was the whole problem: the network is optimal (gain or not)
        elif found.status == "optimal":
            if took < limit / 4:
                size = min(self.policy.piece_max_size, self.problem.n, size + 1)
        else:
            counts["timed_out"] += 1
            size = max(self.policy.piece_min_size, size - 2)
        if piece.ktree:
            self.ktree_size = size
            self.ktree_since_gain += 1
        else:
            self.size = size
            self.since_gain += 1
        self.dry = self.dry + 1 if self.dry < 0 or self.piece_limit >= self.max_piece_limit else 0
        if self.dry >= self.policy.stall_pieces and self.stalled_at is None:
            self.stalled_at = math.floor(100 * (time.monotonic() - self.t0)) / 100  # never past the wall time
        policy = self.policy
        if self.ktree is not None and (self.ktree_since_gain >= policy.ktree_stuck_pieces or (
                self.ktree_only and time.monotonic() - self._ktree_t0 > policy.ktree_seconds)):
            # H*'s pieces gave out or had their time: another H* of a redrawn H (below
            # ktree_only_min_k, only if this one gained; else H's pieces)
            if state.redraw(self.rng):
                counts["redrawn"] = counts.get("redrawn", 0) + 1
            if self.ktree_only or self.ktree_gained:
                self._draw_ktree()
            else:
                self.ktree = None
                self.since_gain = 0
        elif self.since_gain >= (policy.ktree_after_pieces if self.ktree_only else policy.stuck_pieces) \
                and not self.proved:
            self.since_gain = 0
            # larger pieces (module docstring)
            self.piece_limit = min(self.max_piece_limit, 2 * self.piece_limit)
            if self.ktree_turns:  # then H*'s pieces (module docstring)
                self._draw_ktree()
                if self.ktree_only:
                    # k-trees keep this limit for the rest of the search: it is the cap, so
                    # their pieces count toward a stall (else no search here could restart)
                    self.max_piece_limit = self.piece_limit
            elif state.tri is not None and state.redraw(self.rng):
                counts["redrawn"] = counts.get("redrawn", 0) + 1
        if self.control is not None:
            self.control.report(iterations=counts["pieces"])

    def piece_deadline(self, deadline: float | None) -> float | None:
        """When the next piece must end: the search's deadline less the most a piece has
        overrun its limit (SCIP stops between LP solves; a large piece's take seconds)."""
        return None if deadline is None else deadline - self.overrun

    def result(self, start: SolverResult, seed: int | None, time_limit: float | None, jobs: int) -> SolverResult:
        counts, state = self.counts, self.state
        counts["sub_seconds"] = round(counts["sub_seconds"], 2)
        counts["last_piece_size"] = self.size
        counts["overrun"] = round(self.overrun, 2)
        if self.piece_limit > self.options.piece_time_limit:
            counts["piece_time_limit"] = self.piece_limit
        counts["start_score"] = start.score
        counts["jobs"] = jobs
        if self.stalled_at is not None:  # seconds into the search
            counts["stalled"] = self.stalled_at
        return make_solution(self.problem, state.parents, bound=state.score if self.proved else None,
                             status="optimal" if self.proved else "feasible", order_hint=state.order,
                             method="improve", wall_time=round(time.monotonic() - self.t0, 4),
                             trajectory=self.trajectory, stats=counts, seed=seed, time_limit=time_limit,
                             solver="scip")


def clash(free_a: Sequence[int], boundary_a: Sequence[int], free_b: Sequence[int], boundary_b: Sequence[int]) -> bool:
    """Whether two pieces may not both be glued in from the same network: one's free
    variables meet the other's L = F ∪ B (module docstring, "In parallel")."""
    fa, fb = set(free_a), set(free_b)
    return bool(fa & fb or fa & set(boundary_b) or fb & set(boundary_a))


def over(search: Search, deadline: float | None) -> bool:
    """Whether the loop ends: enough pieces, a stop request or (almost) no time left."""
    max_pieces = search.options.max_pieces
    if max_pieces is not None and search.counts["pieces"] >= max_pieces:
        return True
    if search.control is not None and search.control.stop_requested():
        return True
    if search.stop_when_stalled and search.stalled_at is not None \
            and seconds_to(deadline) >= search.policy.restart_min_s:
        search.counts["ended_stalled"] = True  # the caller restarts
        return True
    return seconds_to(deadline) < 0.2
