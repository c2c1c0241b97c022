"""The problem (a score cache and a treewidth bound), its models as mathematical programs,
its certificates, and the independent verifier. Imports from scoring only."""
