"""The cluster-cut ILP in SCIP (branch and cut), its separators, and the methods built on
it: improve (pieces re-solved exactly) and its large-neighbourhood search."""
