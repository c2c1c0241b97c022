"""What every command shares: exit codes, the user errors, argument types, the one-line summaries and safe writing."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Sequence

from twbn.formulations.problem import InfeasibleError
from twbn.scoring.cache import CacheError
from twbn.scoring.data import DataError
from twbn.scoring.jkl import JklError
from twbn.scoring.networks import NetworkError
from twbn.scoring.errors import TwbnError

__all__ = ['EXIT_BROKEN_PIPE', 'EXIT_INCOMPLETE', 'EXIT_INTERRUPTED', 'EXIT_NO_NETWORK', 'SCORING_FLAGS',
           'USER_ERRORS', 'UserError', 'config_arg', 'data_arg', 'is_cache_path', 'process_started', 'score_summary']

USER_ERRORS = (TwbnError, NetworkError, DataError, JklError, CacheError, InfeasibleError, ValueError)


#: ``learn`` ran to its end but has no network to report; ``experiment`` ran, but some
#: cells failed or timed out (they are in the store with their errors).
EXIT_NO_NETWORK = EXIT_INCOMPLETE = 3
#: Stopped by SIGINT or SIGTERM (``learn`` still writes its best result so far).
EXIT_INTERRUPTED = 130
#: The reader of the output went away (``| head``), as a tool killed by SIGPIPE reports.
EXIT_BROKEN_PIPE = 141


class UserError(TwbnError):
    """A problem with what the user asked for; reported as one line, no traceback."""


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return v


#: Seconds, or ``inf`` for no limit (float() reads it; the registry treats it as none).
_time_limit = _positive_float


def _nonneg_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return v


def _treewidths(text: str) -> "int | str | list[int | None]":
    """``--treewidth``: one bound K, several (``2,5,8``; ``unbounded`` among them) for a
    sweep, or ``auto`` (chosen by held-out likelihood, ``twbn.which_k``)."""
    if text.strip().lower() == "auto":
        return "auto"
    if "," not in text:
        return _nonneg_int(text)
    out: list[int | None] = []
    for part in text.split(","):
        part = part.strip()
        out.append(None if part.lower() in ("unbounded", "none") else _nonneg_int(part))
    if len(set(out)) != len(out):
        raise argparse.ArgumentTypeError(f"bounds repeat in {text!r}")
    return out


def data_arg(text: str) -> str:
    """A data file as the user named it: a path, or the name of a bundled set (``housing``,
    ``zoo.csv.gz``) when no such file is here, so that examples run from any folder."""
    from twbn.scoring.datasets import BUNDLED, bundled_path

    if text is None or Path(text).exists():
        return text
    name = Path(text).name
    for suffix in (".csv.gz", ".csv"):
        name = name.removesuffix(suffix)
    if name in BUNDLED and Path(text).parent == Path("."):
        return str(bundled_path(name))
    return text


def config_arg(text: str) -> str:
    """An experiment config: a path, or the name of a bundled one (``quick``)."""
    folder = Path(__file__).resolve().parents[1] / "configs"  # experiments/configs
    if Path(text).exists():
        return text
    bundled = folder / (Path(text).name.removesuffix(".toml") + ".toml")
    if Path(text).parent == Path(".") and bundled.exists():
        return str(bundled)
    return text


def score_summary(cache, stats: dict) -> str:
    """A short human-readable account of a scoring run."""
    pr = stats["pruned_unscored"]
    lines = [
        f"{stats['score'].upper()} cache: {stats['variables']} variables, {stats['rows']} rows, "
        f"in-degree <= {stats['max_parents']}, pruning '{stats['pruning']}' (rules {stats['rules'] or 'none'})",
        f"  parent sets: {stats['space']:,} possible, {stats['scored']:,} scored, "
        f"{stats['kept']:,} kept ({stats['dominated_removed']:,} dominated removed)",
        "  skipped unscored: " + ", ".join(f"{k} {v:,}" for k, v in pr.items() if v) if any(pr.values())
        else "  skipped unscored: none",
        f"  time: {stats['seconds']:.2f} s" + (
            "" if stats["complete"] else
            f" — sets of {stats['stopped_at_level']} parents not started (they would not fit in the time left): the "
            f"cache holds every set of at most {stats['stopped_at_level'] - 1}" if stats.get("level_not_started") else
            f" — TIME LIMIT reached at level {stats['stopped_at_level']}: the cache is valid but holds only the sets "
            "scored so far"),
    ]
    return "\n".join(lines)


def _write_or_rescue(write, out: Path, what: str) -> None:
    """``write(out)``; if the file system refuses after all (a full disk), write to a new
    temporary folder instead and say where, so that the work is not lost."""
    import shutil
    import tempfile

    try:
        write(out)
    except OSError as exc:
        folder = None
        try:
            folder = Path(tempfile.mkdtemp(prefix="twbn-rescue-"))
            write(folder / out.name)
        except OSError:
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
            raise exc from None
        raise UserError(f"{out}: {exc.strerror or exc}; the {what} is kept in {folder / out.name}") from None


def _memory_limit(args: argparse.Namespace) -> float | None:
    """--memory-limit in bytes, or None for the machine's default."""
    given = getattr(args, "memory_limit", None)
    return given * 1e6 if given is not None else None


def _policy_of(args: argparse.Namespace):
    """The policy ``learn --policy`` built (``args.policy_``), or the default one."""
    from twbn.solvers.policy import DEFAULT_POLICY

    return getattr(args, "policy_", None) or DEFAULT_POLICY


SCORING_FLAGS = ("score", "ess", "max_parents", "pruning", "max_states", "approximate", "candidates",
                 "time_per_variable", "jobs", "max_splits", "max_bins", "continuous", "categorical", "save_cache",
                 "memory_limit", "missing", "missing_token")


def is_cache_path(path: str) -> bool:
    """A jkl score cache (by its name); anything else ``learn`` reads as data."""
    return Path(path).name.endswith((".jkl", ".jkl.gz"))


def _option_pairs(pairs: Sequence[str] | None) -> dict[str, str]:
    """``--option NAME=VALUE`` (repeatable) as a mapping; the registry converts and checks."""
    out: dict[str, str] = {}
    for item in pairs or ():
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UserError(f"--option {item!r} must be written NAME=VALUE")
        out[name.strip().replace("-", "_")] = value
    return out


def process_started() -> float:
    """The ``time.monotonic()`` at which this process started (interpreter start-up and
    imports included), from /proc; now, where that cannot be read."""
    import os

    try:
        with open("/proc/self/stat", encoding="ascii") as fh:
            ticks = int(fh.read().rsplit(")", 1)[1].split()[19])  # field 22, starttime
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return time.monotonic()
    return time.monotonic() - max(0.0, min(age, 60.0))
