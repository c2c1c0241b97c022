"""k-tree pieces: a k-tree H* containing the triangulation H, drawn at random, whose
pieces need no treewidth model (their families are cliques of H*); when they take over
and when one k-tree gives way to the next is the search's (search.py) and the policy's
(``ktree_*``)."""

from __future__ import annotations

import time

from twbn.formulations.graphs import Adjacency, fill_to_k_tree
from twbn.solvers.improve.pieces import clique_with


__all__ = ["KtreePieces"]


class KtreePieces:
    """The k-tree half of the piece search (mixed into ``Search``)."""

    def _ktree_for_next(self) -> Adjacency | None:
        """H* if the next piece is a k-tree piece (their turn), else None. H* is drawn anew
        when σ changed or a family of the network stopped being a clique of it (a piece cut
        before it, with ``jobs`` >= 2)."""
        if self.ktree is None or self.size >= self.problem.n:  # a tree piece of every variable proves
            return None
        state = self.state
        # σ must stay H*'s perfect elimination order: a k-tree piece is glued in along σ
        if state.order != self._ktree_order \
                or not all(clique_with(self.ktree, v, ps) for v, ps in enumerate(state.parents)):
            self._draw_ktree()
        return self.ktree

    def _draw_ktree(self) -> None:
        """H*: a k-tree containing H, the vertices it adds drawn at random."""
        state = self.state
        self.ktree = fill_to_k_tree(state.tri, state.order, state.k, self.rng)
        self._ktree_order = list(state.order)
        self._ktree_t0 = time.monotonic()
        self.ktree_since_gain = 0
        self.ktree_gained = False
        self.counts["ktrees"] = self.counts.get("ktrees", 0) + 1
