"""Shared helpers for benchmarks: loading the reference networks and sampling from them."""

from __future__ import annotations

import gzip
import os
import platform
from pathlib import Path


from twbn.scoring.data import Dataset, encode_columns

SHARED_DATA = Path(os.environ.get("TWBN_SHARED", Path(__file__).resolve().parents[3] / "shared")) / "data"
RESULTS = Path(__file__).resolve().parent / "results"


def load_bif(name: str):
    """A bnlearn network as a pgmpy model: ../shared/data/bnlearn, else pgmpy's own copy."""
    from pgmpy.readwrite import BIFReader

    path = SHARED_DATA / "bnlearn" / f"{name}.bif.gz"
    if path.exists():
        return BIFReader(string=gzip.decompress(path.read_bytes()).decode()).get_model()
    from pgmpy.utils import get_example_model

    return get_example_model(name)


def sample_network(name: str, rows: int, seed: int) -> tuple[Dataset, "object"]:
    """Forward-sample ``rows`` rows; returns the encoded data and the pandas frame."""
    from pgmpy.sampling import BayesianModelSampling

    model = load_bif(name)
    df = BayesianModelSampling(model).forward_sample(size=rows, seed=seed, show_progress=False)
    df = df.astype(str)
    ds = encode_columns(list(df.columns), [df[c].to_numpy(dtype=str) for c in df.columns], source=name)
    return ds, df


#: Sets of ../shared/data/debd (their training split is used); the rest are in uci/.
DEBD = {"nltcs", "msnbc", "plants", "baudio", "jester"}


def shared_bic_cache(name: str):
    """The BIC cache (at most 3 parents, all pruning rules) of a set of ../shared/data."""
    from twbn.scoring.data import read_csv
    from twbn.scoring.parent_sets import build_cache

    path = SHARED_DATA / "debd" / f"{name}_train.csv.gz" if name in DEBD else SHARED_DATA / "uci" / f"{name}.csv.gz"
    return build_cache(read_csv(path), score="bic", max_parents=3, pruning="all", progress=False)[0]


def machine() -> str:
    import os

    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def write_result(name: str, text: str) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    p = RESULTS / name
    p.write_text(text, encoding="utf-8")
    return p
