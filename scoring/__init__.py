"""Local scores of candidate parent sets from data, their safe pruning, and the jkl caches
that hold them (the first stage: scoring → formulations → solvers → experiments)."""
