"""Exact-neighbourhood improvement of a bounded-treewidth network at any size.

The problem: given a network of treewidth ≤ k (a start from k-G, k-MAX or a result
file), find a better one by re-solving one piece of it exactly while everything else —
the other variables' families *and* the triangulation outside the piece — stays as it is.
This is the idea of BN-SLIM (Peruvemba Ramaswamy & Szeider, "Turbocharging treewidth-bounded
Bayesian network structure learning", AAAI 2021), with twbn's cluster-cut ILP
(formulations/cluster_ilp.py) on the piece instead of MaxSAT. No model over all n
variables is ever built, so it runs at n = 1,041.

The piece. Let H be the network's triangulation (the fill-in of its moral graph along a
width-≤ k elimination order σ, a perfect elimination order of H) and T σ's elimination
tree (the parent of v is its earliest later neighbour). F, the free variables, is a
subtree D(u) of T, or several sibling subtrees under one vertex p. Two facts make F a
closed piece:

- every neighbour of F outside F lies in C_p = {p} ∪ (p's later neighbours), so the
  boundary B = N_H(F) \\ F is a clique of H with at most k + 1 vertices;
- F is closed under earlier neighbours, so eliminating F first (in σ's order) creates no
  edge outside H.

The sub-problem over L = F ∪ B: each v ∈ F takes any cached parent set inside L (its
current one is one of them, since its family is a clique of H); each b ∈ B keeps its
family (restricted to L: its moral edges outside L lie among B ∪ outside, untouched); the
triangulation must hold B as a clique (``fixed_y``: y_ij = 1 for i before j in B), width
≤ k (8b–8h); and ``ancestry`` pairs (a, b) of B, a an ancestor of b along a path through
V \\ F, which no new path b ⇝ a may close into a cycle (build_cluster_ilp).

Why the glued network is valid: a new triangulation H_L of L with B a clique and width
≤ k and H restricted to V \\ F meet in the clique B, so their union is chordal with
cliques of ≤ k + 1 vertices (a perfect elimination order of H_L ending with B, then σ on
V \\ F); every moral edge of a new family lies in H_L, and every other family is unchanged.
Any cycle would have to leave L through B and come back, along a path through V \\ F that
an ancestry pair records. The current families (with σ restricted to F, then B) are a
feasible point of the sub-problem, so its optimum is never worse.

Without a treewidth bound there is no triangulation to keep: F is a connected set of the
moral graph (grown breadth-first, solvers/cuts/lns.py), B its moral neighbours (parents,
children, co-parents), F's families any cached set inside F ∪ B, B's held, and the
ancestry pairs alone keep the network acyclic. This is the primal heuristic that unbounded
``cuts`` lacked at n = 100, where its root LP does not finish in minutes.

Moral pieces. Tree pieces keep the network inside H, and k-MAX's start fills H up to a
k-tree however narrow the network: at audiology (n = 70) with k = 20 they ended 46 below
unbounded ``cuts`` at width 13. While the network is narrower than k (H's width, or a
min-fill triangulation of its moral graph), some pieces are cut as without a bound — F
connected in the moral graph, B its moral neighbours, no treewidth model — and glued in
only if the whole new network has a triangulation of width ≤ k (σ's fill-in of its moral
graph, else a min-fill one), which then becomes H and σ. The ancestry rows keep it acyclic
as above. With σ kept, a piece cut before it (``jobs`` ≥ 2) whose F ∪ B meets no vertex
where H changed still has its edges at F, its clique B and σ, so it stays valid. A moral piece's share follows its record: (1 + glued) / (2 + glued + too wide).
A piece with |L| ≤ k + 1 (tree or moral) carries no treewidth model at all: no network on
L is wider than k, and L's complete graph is a valid H_L with B a clique.

Piece size adapts to what solves: a sub-problem solved to optimality in under a quarter
of its time limit grows the next piece by one variable, one cut short shrinks it by two.

Pieces only re-solve what H allows: the boundary cliques and the closure of F are H's.
After ``stuck_pieces`` pieces in a row without a gain, H is redrawn: random greedy
elimination orders of the current network's moral graph, the one of width ≤ k with the
fewest edges that differs from H (any width-≤ k triangulation of the moral graph is a
valid H, with the order as its perfect elimination order).

Restarts (issue 33.3). At the largest piece limit a search can still stall: at plants,
k = 8, 1,800 s, its last gain came 559 s into 1,008 s. Once ``stall_pieces`` pieces in a
row at that limit gained nothing (or, once k-trees have taken over, ``stall_pieces``
k-tree pieces: their limit no longer grows), the method goes on from another k-MAX
network (the next seed, its start stage capped at ``restart_start_max_s``) with what is left,
while at least ``restart_min_s`` is, and keeps the best network of all its searches.
Where k-MAX gives back a network already searched from (at plants every seed's best was
seed 1's), that restart is dropped and the next ones start from k-G's networks, whose
random orders differ.

K-tree pieces (issue 33.3). A tree piece carries the treewidth model (8b–8h), which only
solves for pieces of about a dozen variables. Fix instead a k-tree H* that contains H (H
filled up along σ, formulations/graphs.fill_to_k_tree, the vertices added at random):
every network whose families are cliques of H* has its moral graph inside H*, so width ≤ k
with σ as the certificate, whatever the families. A k-tree piece is cut as a moral piece
(F connected in the moral graph, B its moral neighbours, the ancestry rows) with F's
candidate sets only those whose family is a clique of H*, and no treewidth model: at
plants (k = 5) they solved at 20–25 free variables where tree pieces reached 10–13. Glued
in as a moral piece (σ kept, H the fill-in of the new moral graph along σ, inside H*).
They only search networks inside H*, so H's pieces come first (a k-MAX start already
holds the best families of its own k-tree). At k >= ``ktree_only_min_k``, once H's pieces
are stuck (``ktree_after_pieces`` without a gain) the piece limit doubles and k-trees take
over for the rest of the search: one ends after ``ktree_stuck_pieces`` of its pieces in a
row without a gain or after ``ktree_seconds``, and the next is drawn from a redrawn H.
Below that k they take turns: H's pieces are stuck after ``stuck_pieces``; when a k-tree's
pieces give out, H is redrawn, and another k-tree is drawn only if that one gained, else
H's pieces go on. H* is drawn anew when σ changes or a family of the
network stops being a clique of it (a piece cut before it, with ``jobs`` >= 2).
From auto's 60 s network at plants k = 5 (−249,433.7) the best network inside one such
k-tree was −248,111.1, which k-tree pieces reached in 6.7 s (the unbounded `cuts` ILP on
the cache cut down to the k-tree's cliques proved it optimal there); a search of whole
k-trees, one after another, gained 1,600–2,600 in 60 s from there, where H's pieces
first, then one k-tree's, gained 850.

Larger pieces once the small ones give out (issue 33.3). Each time the search is stuck
(``stuck_pieces`` pieces without a gain, with or without a bound), a piece's time limit
doubles, up to ``max_piece_time_limit`` (8 × ``piece_time_limit`` by default), and the
adapted size grows with it. Where every small piece is locally optimal (at plants, k = 2,
where every redraw of H is H itself) only a larger one can gain; where small pieces keep
gaining, the limit never moves (munin). Measured in docs/auto.md.

In parallel (``jobs`` ≥ 2), worker processes solve pieces while this process cuts the
next ones and glues in each as it returns. A piece P = (F, B) cut before pieces P' =
(F', B') were glued in is still glued in if no F' meets L = F ∪ B and F meets no L'
(otherwise it is counted ``stale`` and dropped). Then F's families, B's families and every
edge of H at F are as they were when P was cut (glueing P' changes only F's families and
the edges at F'), so B is still a clique separating F and the union argument above holds.
Only the ancestry pairs may be out of date (P' may have made a new path between two
vertices of B), so such a piece is glued in only if the network stays acyclic (checked).

Jobs may join partway (``joining``): the job that computed the cluster LP's bound beside
this method (registry.solve) comes back when the LP has had its share, and the loop goes
on with one more worker process (from one job: two workers, this process cutting).

On a Dask cluster (``scheduler``, issue 33.2), the pieces go to its workers instead of
local processes, ``jobs`` at a time, by the same loop. A worker's clock is not this
machine's, so each piece takes its time limit (what is left of the budget, at most
``piece_time_limit``) when it is sent; a piece still out when the budget ends is cancelled
and not waited for (a piece that had begun runs to its own limit on its worker, unseen).
The extra k-MAX starts stay on this machine's cores and are not run beside a cluster.

The knobs in double back-quotes are fields of the search's
:class:`~twbn.solvers.policy.Policy` (``budget.policy``), with their measurements.
"""

from __future__ import annotations

from twbn.solvers.improve.loop import improve
from twbn.solvers.improve.method import METHOD
from twbn.solvers.improve.pieces import SUB_OPTIONS, choose_piece, piece_problem, random_peo

__all__ = ["improve", "choose_piece", "piece_problem", "random_peo", "SUB_OPTIONS", "METHOD"]
