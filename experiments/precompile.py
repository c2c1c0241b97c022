"""Compile twbn's numba kernels once, at setup, so that no time limit pays for it.

twbn's hot loops are numba kernels cached on disk (``cache=True``): the first process that
calls one compiles it (about a second for k-G's greedy step alone, more on a loaded
machine), every later one loads it in a fraction of that. A user's first ``twbn learn
--time-limit 2`` would otherwise spend its start method's share compiling, and end past
its limit (issue 33.5). ``make`` runs this module right after installing; run it again by
hand after installing twbn with pip::

    python -m twbn.experiments.precompile

It runs each kernel's public caller once on a bundled data set: scoring (the counting
kernels; PCART's DP), writing and reading a jkl cache (the stream reader), k-G, the
cluster LP's separation and columns, the unbounded DP and the bounded DP, the local search over a cache (its width and size checks) and
from data, the available-case scores of structural EM's start, with the argument types real runs use.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

__all__ = ["precompile"]


def precompile() -> float:
    """Run every cached numba kernel once; the seconds it took.

    Returns
    -------
    float
        Wall time: the compile time on a cold cache, the load time on a warm one.

    Examples
    --------
    >>> precompile() >= 0.0
    True
    """
    import numpy as np
    import pandas as pd

    import twbn
    from twbn.formulations.cluster_ilp import FamilyTable
    from twbn.formulations.problem import Problem
    from twbn.solvers.cuts.cluster_separation import greedy_clusters
    from twbn.solvers.registry import solve

    t0 = time.monotonic()
    zoo = twbn.read_csv(twbn.example_path("zoo"))
    small = twbn.Dataset(zoo.names[:6], zoo.states[:6], zoo.data[:6])
    cache = twbn.score(zoo, max_parents=2)  # the counting kernels
    twbn.score(pd.read_csv(twbn.example_path("zoo")).iloc[:, :6], score="pcart", max_parents=1)  # PCART's DP
    with tempfile.TemporaryDirectory() as tmp:  # the jkl stream reader
        path = Path(tmp) / "zoo.jkl"
        twbn.write_jkl(cache, path)
        cache = twbn.read_jkl(path)
    solve(Problem(cache, 2), "kg", time_limit=0.5, seed=0)
    solve(Problem(cache, 1), "localsearch", options={"max_iterations": 2}, seed=0)  # its width checks
    # and its junction-tree size check (width.order_table_size)
    solve(Problem(cache, 1), "localsearch", options={"max_iterations": 2, "max_table_size": 10**6}, seed=0)
    from twbn.scoring.families import FamilyScores

    # from data: the batch of additions to one family (counting.added_parent_scores)
    solve(Problem(cache, 2, scorer=FamilyScores(zoo)), "localsearch", options={"max_iterations": 2}, seed=0)
    holes = zoo.data.copy()  # structural EM's start from the available cases (counting.available_family_ll)
    holes[0, 0] = -1
    FamilyScores(twbn.Dataset(zoo.names, zoo.states, holes), available=True).score(0, (1,))
    table = FamilyTable.from_cache(cache)  # the cluster LP's separation and rows
    greedy_clusters(table, np.full(table.size, 0.5))
    table.cluster_families(range(4))
    from twbn.solvers.relaxation import cluster_lp_bound

    cluster_lp_bound(Problem(cache, 2), time_limit=1.0)  # its columns' rows (cluster_lp._column_rows)
    small_cache = twbn.score(small, max_parents=2)
    solve(Problem(small_cache, None), "dp")  # the unbounded DP
    solve(Problem(small_cache, 2), "dp")  # the bounded DP
    return time.monotonic() - t0


if __name__ == "__main__":
    print(f"twbn: numba kernels ready ({precompile():.1f} s)")
