"""Exact algorithms: the Korhonen–Parviainen and Silander–Myllymäki DPs, the DP inside a
given chordal graph, maximum branchings (k ≤ 1), and brute force for the tests."""
