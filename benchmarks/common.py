"""Shared helpers for benchmarks: loading the reference networks and sampling from them."""

from __future__ import annotations

import argparse
import platform
from pathlib import Path

from twbn.scoring.datasets import DataMissing, dataset_path, load_network, network_path  # noqa: F401 (re-exported)
from twbn.scoring.data import Dataset, encode_columns

RESULTS = Path(__file__).resolve().parent / "results"


def load_bif(name: str):
    """A bnlearn network as a pgmpy model (pgmpy's own copy)."""
    return load_network(name)


def sample_network(name: str, rows: int, seed: int) -> tuple[Dataset, "object"]:
    """Forward-sample ``rows`` rows; returns the encoded data and the pandas frame."""
    from pgmpy.sampling import BayesianModelSampling

    model = load_bif(name)
    df = BayesianModelSampling(model).forward_sample(size=rows, seed=seed, show_progress=False)
    df = df.astype(str)
    ds = encode_columns(list(df.columns), [df[c].to_numpy(dtype=str) for c in df.columns], source=name)
    return ds, df


def bic_cache(name: str):
    """The BIC cache (at most 3 parents, all pruning rules) of a bundled UCI set, or of the
    training split of a DEBD set in the data folder ($TWBN_DATA)."""
    from twbn.scoring.data import read_csv
    from twbn.scoring.parent_sets import build_cache

    return build_cache(read_csv(dataset_path(name)), score="bic", max_parents=3, pruning="all", progress=False)[0]


def machine() -> str:
    import os

    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def regenerate_command() -> str:
    """The command that ran this benchmark, as a reader would type it from the checkout's
    root: the module and its arguments, a folder given by ``--anchors`` as ``DIR``."""
    import shlex
    import sys

    main = sys.modules.get("__main__")
    module = getattr(getattr(main, "__spec__", None), "name", None) or Path(sys.argv[0]).stem
    args, out = sys.argv[1:], []
    for i, a in enumerate(args):
        before = args[i - 1] if i else ""
        etl = "PYTHON" if before == "--etl" else "RUN_ETL" if i > 1 and args[i - 2] == "--etl" else None
        out.append("DIR" if before in ("--anchors", "--from-data") else etl or a)
    return "python -m " + shlex.join([module, *out])


def write_result(name: str, text: str) -> Path:
    """``text`` as ``results/NAME``; a Markdown table ends with the command that
    regenerates it, unless it names one already."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    p = RESULTS / name
    if name.endswith(".md") and "Regenerate:" not in text:
        text = text.rstrip("\n") + f"\n\nRegenerate: `{regenerate_command()}`.\n"
    p.write_text(text, encoding="utf-8")
    return p


def parse_variant(text: str) -> tuple[str, dict]:
    """``NAME:KEY=VALUE,KEY=VALUE`` (``--policy``): a named policy variant, checked now."""
    from twbn.solvers.policy import Policy, PolicyError

    name, colon, fields = text.partition(":")
    if not colon or not name.strip() or not fields.strip():
        raise argparse.ArgumentTypeError(f"a policy variant is NAME:KEY=VALUE[,KEY=VALUE...], got {text!r}")
    try:
        return name.strip(), Policy.from_settings(fields.split(",")).changed()
    except PolicyError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
