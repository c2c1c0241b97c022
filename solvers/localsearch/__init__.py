"""Local search over DAGs of bounded treewidth, checked move by move.

After ETL (Benjumeda, Bielza & Larrañaga, "Learning tractable Bayesian networks in the
space of elimination orders", Artificial Intelligence 274, 2019): hill climbing over
DAGs by adding and reversing arcs, where every move is accepted only if the moral graph
still has an elimination order of width ≤ k. twbn's version keeps one elimination order
and the moral-edge counts; a move is checked against that order first and, where it
fails, against a greedy min-fill order (solvers/localsearch/width.py, compiled), which
then becomes the order. Over a score cache a move gives a variable the best cached set
inside its new parents (solvers/localsearch/climb.py). The search is iterated: from the
best network, a few variables are reset and the climb resumes (solvers/localsearch/method.py).

Maximise Σ_v f_v(Π_v) subject to: each Π_v a candidate of the problem, the graph acyclic,
the moral graph of width ≤ k under the certificate order, as every method of twbn.
"""

from twbn.solvers.localsearch.climb import Climber
from twbn.solvers.localsearch.method import METHOD, solve_localsearch

__all__ = ["Climber", "solve_localsearch", "METHOD"]
