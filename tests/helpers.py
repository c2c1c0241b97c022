"""Random score caches for tests of the solvers."""

import itertools
import random

from twbn.scoring.cache import ScoreCache


def random_cache(n: int, seed: int, max_size: int = 3, density: float = 0.5, drop_empty: float = 0.0) -> ScoreCache:
    """Every variable has ∅ and a random selection of other parent sets (size ≤ max_size),
    with scores that favour some larger sets, so that the constraints bite. With
    ``drop_empty`` > 0 some variables lose ∅ (they must take a parent)."""
    rng = random.Random(seed)
    families = []
    for v in range(n):
        others = [u for u in range(n) if u != v]
        fam = {(): -10.0 - rng.random() * 5}
        for k in range(1, max_size + 1):
            for ps in itertools.combinations(others, k):
                if rng.random() < density / k:
                    fam[ps] = fam[()] + rng.uniform(-2.0, 2.0 + 1.5 * k)
        if len(fam) > 1 and rng.random() < drop_empty:
            del fam[()]  # as when a required arc filters the cache
        families.append(fam)
    return ScoreCache.from_mapping([f"X{i}" for i in range(n)], families)


def cp_no_arcs_into_first(model, cp) -> None:
    """A KtreeCp extension (module level: it is pickled to CP-SAT's child): no arc into
    variable 0, as a row on the CP model's arc literals."""
    for (j, i), lit in cp.arc.items():
        if i == 0:
            model.add(lit == 0)


def pool_threads() -> list:
    """Threads of process pools still alive: one still ending at exit races the exit hook of
    concurrent.futures ("Exception ignored in threading._shutdown"), so a pool ended by
    twbn must have none."""
    import threading

    return [t for t in threading.enumerate() if type(t).__name__ == "_ExecutorManagerThread"]
