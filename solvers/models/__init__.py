"""The elimination-order MILP and the CP-SAT k-tree model on their engines (HiGHS, SCIP,
CBC, CP-SAT)."""
