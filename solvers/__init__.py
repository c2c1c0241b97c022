"""Methods that solve a Problem: exact DPs, MIP/CP backends, the cluster-cut ILP, anytime
heuristics, the registry every method goes through, and the Budget that owns time.
Imports from scoring and formulations only."""
