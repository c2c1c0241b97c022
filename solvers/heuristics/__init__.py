"""Anytime heuristics that build networks inside k-trees: k-G, k-MAX, k-A*, S2 and S2+."""
