"""The ``twbn`` command line (contract: docs/design.md, "Command line contract").

Exit codes: 0 success (``learn``: a network); 1 an error — bad data, malformed caches,
impossible options, file-system failures — reported as one line ``twbn: error: …`` on
stderr; 2 a usage error (argparse); 3 the work ran but is incomplete: ``learn`` found no
network (status ``infeasible`` or ``unknown``; the result file says why), ``experiment``
had cells that failed or timed out (a summary line on stderr); 130 interrupted
(``learn`` still writes its best network so far). No command
leaves a partial output file: everything is written to a temporary file and renamed.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import re
import os
import sys
import time
from pathlib import Path
from typing import Sequence

from twbn.formulations.problem import InfeasibleError
from twbn.scoring.cache import CacheError
from twbn.scoring.data import DEFAULT_MAX_STATES, MISSING_MODES, DataError
from twbn.scoring.jkl import JklError, atomic_write_text, check_output, sidecar_path
from twbn.scoring.local_scores import SCORES
from twbn.scoring.local_structure import LOCAL_STRUCTURE_SCORES
from twbn.scoring.networks import NetworkError
from twbn.scoring.parent_sets import DEFAULT_MAX_PARENTS, PRUNING_MODES
from twbn.scoring.errors import TwbnError

__all__ = ["UserError", "data_arg", "config_arg", "score_summary", "cmd_score", "score_from_args",
           "cmd_generate", "cmd_sample", "is_cache_path", "process_started", "cmd_learn", "cmd_methods",
           "cmd_check", "cmd_demo", "cmd_evaluate", "cmd_export", "cmd_experiment", "cmd_data", "cmd_report",
           "build_parser", "main"]

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


def _treewidths(text: str) -> "int | list[int | None]":
    """``--treewidth``: one bound K, or several (``2,5,8``; ``unbounded`` among them) for a
    sweep."""
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
    folder = Path(__file__).resolve().parent / "configs"
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


def cmd_score(args: argparse.Namespace) -> int:
    from twbn.scoring.jkl import write_jkl

    data_path = Path(data_arg(args.data))
    out = Path(args.output) if args.output else Path(data_path.name.split(".")[0] + ".jkl")
    if not out.parent.exists():
        raise UserError(f"output folder {out.parent} does not exist")
    if args.stats and not Path(args.stats).parent.exists():
        raise UserError(f"folder {Path(args.stats).parent} of --stats does not exist")
    check_output(out, inputs=[data_path], sidecar=True)
    if args.stats:
        check_output(args.stats, inputs=[data_path, out, sidecar_path(out)])
    cache, stats, summary = score_from_args(args, data_path)
    _write_or_rescue(lambda p: write_jkl(cache, p), out, "score cache")
    if args.stats:
        _write_or_rescue(lambda p: atomic_write_text(p, json.dumps(stats, indent=2) + "\n"), Path(args.stats),
                         "statistics file")
    if not args.quiet:
        print(summary)
        print(f"  wrote {out} (+ {out.name}.names)" + (f" and {args.stats}" if args.stats else ""))
    if not stats["complete"] and not args.approximate:
        print(f"twbn: warning: time limit of {args.time_limit} s reached; cache is partial", file=sys.stderr)
    return 0


def _memory_limit(args: argparse.Namespace) -> float | None:
    """--memory-limit in bytes, or None for the machine's default."""
    given = getattr(args, "memory_limit", None)
    return given * 1e6 if given is not None else None


def _policy_of(args: argparse.Namespace):
    """The policy ``learn --policy`` built (``args.policy_``), or the default one."""
    from twbn.solvers.policy import DEFAULT_POLICY

    return getattr(args, "policy_", None) or DEFAULT_POLICY


def score_from_args(args: argparse.Namespace, data_path: Path, *, learning: bool = False, dataset=None):
    """(cache, stats, summary text) of ``twbn.score`` with the scoring options in
    ``args`` on ``data_path``. ``learning`` (``learn`` from data): unless --approximate is
    given, scoring is chosen by what fits (``approximate="auto"``), an exploration sized to
    the method's --time-limit, which is not the scoring's."""
    import twbn
    from twbn.learning import scoring_plan, scoring_time

    local = args.score in LOCAL_STRUCTURE_SCORES
    if local:
        if args.ess is not None or args.approximate or args.candidates is not None or args.time_per_variable is not None:
            raise UserError(f"--ess and --approximate do not apply to --score {args.score}")
    else:
        for flag, given in (("--max-splits", args.max_splits), ("--max-bins", args.max_bins),
                            ("--continuous", args.continuous), ("--categorical", args.categorical)):
            if given is not None:
                raise UserError(f"{flag} applies to --score pcart|pcartp|ft|ftp only")
        if args.ess is not None and args.score != "bdeu":
            raise UserError("--ess applies to --score bdeu only")
        if not args.approximate:
            for flag, given in (("--candidates", args.candidates), ("--time-per-variable", args.time_per_variable),
                                ("--jobs", args.jobs)):
                if given is not None:
                    raise UserError(f"{flag} applies to --approximate only")
        elif args.time_limit is not None and not learning:
            raise UserError("--approximate bounds time per variable: use --time-per-variable, not --time-limit")
    approximate = args.approximate or ("auto" if learning else False)
    seconds = args.time_limit
    if learning:
        seconds = None if args.time_per_variable is not None else \
            scoring_time(args.time_limit, args.started, getattr(args, "policy_", None))
        if dataset is not None and args.time_per_variable is None:
            approximate, seconds = scoring_plan(dataset, args.score, args.max_parents,
                                                ess=1.0 if args.ess is None else args.ess, pruning=args.pruning,
                                                approximate=approximate, time_limit=args.time_limit,
                                                started=args.started, policy=getattr(args, "policy_", None),
                                                memory_limit=_memory_limit(args))
    cache, stats = twbn.score(
        data_path if dataset is None else dataset, args.score, args.max_parents, ess=1.0 if args.ess is None else args.ess, pruning=args.pruning,
        approximate=approximate, time_limit=seconds,
        max_states=args.max_states, candidates=args.candidates, time_per_variable=args.time_per_variable,
        jobs=args.jobs, max_splits=args.max_splits, max_bins=args.max_bins, continuous=args.continuous or (),
        categorical=args.categorical or (), memory_limit=_memory_limit(args), progress=None if not args.quiet else False,
        **({} if local else {"missing": args.missing or "em", "missing_token": args.missing_token,
                             "level_margin": _policy_of(args).data_cache_level_margin
                             if learning and dataset is not None and approximate is False else 0.0}),
        log=lambda line: print(f"twbn: {line}", file=sys.stderr), return_stats=True)
    stats["data"] = str(data_path)
    if local:
        kinds = list(stats["kinds"].values())
        summary = "\n".join([
            f"{args.score.upper()} cache: {stats['variables']} variables ({kinds.count('continuous')} continuous), "
            f"{stats['rows']} rows, in-degree <= {stats['max_parents']}, max splits {stats['max_splits']}, "
            f"max bins {stats['max_bins']}",
            f"  parent sets: {stats['scored']:,} scored, {stats['kept']:,} kept; time {stats['seconds']:.2f} s"])
    elif "candidates" in stats:  # approximate exploration
        summary = "\n".join([
            f"{stats['score'].upper()} cache (approximate exploration): {stats['variables']} variables, "
            f"{stats['rows']} rows, in-degree <= {stats['max_parents']}, {stats['candidates']} candidate parents "
            f"per variable, {stats['time_per_variable']} s per variable, {stats['jobs']} processes",
            f"  parent sets: {stats['scored']:,} scored, {stats['kept']:,} kept; "
            f"{stats['variables_explored_to_the_end']:,} variables explored to the end; "
            f"{'complete' if stats['complete'] else 'APPROXIMATE'}",
            f"  time: {stats['seconds']:.2f} s ({stats['mi_seconds']:.2f} s pairwise mutual information)"])
    else:
        summary = score_summary(cache, stats)
    return cache, stats, summary


def cmd_generate(args: argparse.Namespace) -> int:
    from twbn.scoring.networks import random_network, sample, write_bif, write_csv

    prefix = Path(args.output)
    if not prefix.parent.exists():
        raise UserError(f"output folder {prefix.parent} does not exist")
    if args.variables < 1:
        raise UserError("--variables must be at least 1")
    net = random_network(args.variables, seed=args.seed, max_parents=args.max_parents)
    bif = prefix.with_name(prefix.name + ".bif.gz")
    write_bif(net, bif)
    arcs = sum(len(p) for p in net.parents)
    print(f"wrote {bif}: {net.n_variables} variables, {arcs} arcs, seed {args.seed}")
    if args.rows:
        csv_path = prefix.with_name(prefix.name + ".csv.gz")
        write_csv(sample(net, args.rows, seed=args.seed), csv_path)
        print(f"wrote {csv_path}: {args.rows} rows")
    return 0


def cmd_sample(args: argparse.Namespace) -> int:
    from twbn.scoring.networks import read_bif, sample, write_csv

    out = Path(args.output)
    if not out.parent.exists():
        raise UserError(f"output folder {out.parent} does not exist")
    if args.rows < 1:
        raise UserError("--rows must be at least 1")
    if not Path(args.network).exists():
        raise UserError(f"{args.network}: no such file")
    check_output(out, inputs=[args.network])
    net = read_bif(args.network)
    write_csv(sample(net, args.rows, seed=args.seed), out)
    print(f"wrote {out}: {args.rows} rows of {net.n_variables} variables from {args.network}")
    return 0


SCORING_FLAGS = ("score", "ess", "max_parents", "pruning", "max_states", "approximate", "candidates",
                 "time_per_variable", "jobs", "max_splits", "max_bins", "continuous", "categorical", "save_cache",
                 "memory_limit", "missing", "missing_token")


def is_cache_path(path: str) -> bool:
    """A jkl score cache (by its name); anything else ``learn`` reads as data."""
    return Path(path).name.endswith((".jkl", ".jkl.gz"))


def _learn_cache(args: argparse.Namespace):
    """The cache ``learn`` works on: read from a jkl, or scored from data with the scoring
    options (the defaults of ``twbn score``), saved where ``--save-cache`` says."""
    from twbn.scoring.jkl import read_jkl, write_jkl

    if is_cache_path(args.cache):
        given = [f"--{f.replace('_', '-')}" for f in SCORING_FLAGS if getattr(args, f) not in (None, False)]
        if given:
            raise UserError(f"{', '.join(given)} apply when learning from data, not from a cache")
        return read_jkl(args.cache)
    if args.save_cache and not Path(args.save_cache).parent.exists():
        raise UserError(f"folder {Path(args.save_cache).parent} of --save-cache does not exist")
    if args.save_cache:
        check_output(args.save_cache, inputs=[*_learn_inputs(args), args.output], sidecar=True)
    opts = argparse.Namespace(**vars(args))
    for flag, default in (("score", "bic"), ("pruning", "all"), ("max_states", DEFAULT_MAX_STATES)):
        if getattr(opts, flag) is None:
            setattr(opts, flag, default)
    import math

    from twbn.learning import scoring_depth

    timed = args.time_limit is not None and math.isfinite(args.time_limit) and opts.score not in LOCAL_STRUCTURE_SCORES
    opts.max_parents = scoring_depth(opts.max_parents, _bounds(args), timed=timed, policy=_policy_of(args))
    dataset = None
    if opts.score not in LOCAL_STRUCTURE_SCORES:  # read once: scored into the cache, and on demand beyond it
        from twbn.scoring.data import as_dataset

        dataset = as_dataset(args.cache, max_states=opts.max_states, missing=opts.missing or "em",
                             missing_token=opts.missing_token)
        if dataset.n_missing:  # structural EM scores its own caches, from each iteration's completions
            if args.save_cache:
                raise UserError("--save-cache: data with missing cells is learned by structural EM, whose caches "
                                "change every iteration (--missing state or complete-rows scores one cache)")
            args.dataset_ = dataset  # learn says so, in one line
            return None
    cache, stats, summary = score_from_args(opts, Path(args.cache), learning=True, dataset=dataset)
    if not args.quiet:
        print(summary)
    if args.save_cache:
        _write_or_rescue(lambda p: write_jkl(cache, p), Path(args.save_cache), "score cache")
        if not args.quiet:
            print(f"  wrote {args.save_cache} (+ {Path(args.save_cache).name}.names)")
    args.dataset_ = dataset
    return cache


def _learn_inputs(args: argparse.Namespace) -> list[Path]:
    """Every file ``learn`` reads: the data or cache (and its names), a warm start, arc files."""
    files = [Path(args.cache), sidecar_path(args.cache)]
    if args.warm_start and Path(args.warm_start).is_file():
        files.append(Path(args.warm_start))
    files += [Path(f) for f in (args.forbid_file, args.require_file) if f]
    return files


def _bounds(args: argparse.Namespace) -> list[int | None]:
    """The bounds of ``learn``, in the order a sweep runs them."""
    from twbn.solvers.sweep import sorted_bounds

    return sorted_bounds(args.treewidth) if isinstance(args.treewidth, list) else [args.treewidth]


def _outputs(args: argparse.Namespace, stem: str, made: list[Path]) -> list[Path]:
    """One result file per bound: ``-o`` as given for one bound; for a sweep, ``-o`` is a
    folder (files STEM.METHOD.kK.json in it; ``DIR/`` is made if missing, and added to
    ``made``) or a pattern with ``{k}``."""
    bounds = _bounds(args)
    if not isinstance(args.treewidth, list):
        return [Path(args.output) if args.output else Path(f"{stem}.{args.method}.json")]
    name = lambda k: f"{stem}.{args.method}.k{'unbounded' if k is None else k}.json"  # noqa: E731
    if args.output and "{k}" in args.output:
        return [Path(args.output.replace("{k}", "unbounded" if k is None else str(k))) for k in bounds]
    if args.output:
        folder = Path(args.output)
        if not folder.is_dir() and args.output.endswith(("/", os.sep)) and not folder.exists():
            if not folder.parent.is_dir():
                raise UserError(f"cannot make the folder {folder}: {folder.parent} does not exist")
            folder.mkdir()  # a trailing slash names a folder to make (removed again if nothing is written)
            made.append(folder)
        if not folder.is_dir():
            raise UserError(f"with several bounds -o names a folder (a new one: end it with /) or a pattern with "
                            f"{{k}}; {folder} is neither")
        return [folder / name(k) for k in bounds]
    return [Path(name(k)) for k in bounds]


def _option_pairs(pairs: Sequence[str] | None) -> dict[str, str]:
    """``--option NAME=VALUE`` (repeatable) as a mapping; the registry converts and checks."""
    out: dict[str, str] = {}
    for item in pairs or ():
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UserError(f"--option {item!r} must be written NAME=VALUE")
        out[name.strip().replace("-", "_")] = value
    return out


def _help_options(method: str) -> int:
    from twbn.solvers.method_options import describe_options
    from twbn.solvers.policy import Policy
    from twbn.solvers.registry import get_method

    spec = get_method(method)
    print(f"method {spec.name}: {spec.summary}")
    print(f"  backends (--solver): {', '.join(spec.backends) or 'none'}; "
          f"treewidth bound: {'required, k >= ' + str(spec.min_treewidth) if spec.min_treewidth is not None else 'optional'}; "
          f"warm start: {'yes' if spec.warm_start else 'no'}; default time limit: "
          f"{'none (runs to the end)' if spec.default_seconds(Policy()) is None else f'{spec.default_seconds(Policy()):g} s'}")
    lines = describe_options(spec.options) if spec.options is not None else []
    print("  options (--option NAME=VALUE):" + ("" if lines else " none"))
    for line in lines:
        print("    " + line)
    return 0


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


def cmd_learn(args: argparse.Namespace) -> int:
    made: list[Path] = []
    try:
        return _learn(args, made)
    finally:
        for folder in made:  # nothing half-written: a folder made for results that never came
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()


def _learn(args: argparse.Namespace, made: list[Path]) -> int:
    from twbn.solvers.registry import check_request

    if args.help_options:
        return _help_options(args.method)
    if args.cache is None:
        raise UserError("learn needs DATA.csv or CACHE.jkl")
    if not is_cache_path(args.cache):
        args.cache = data_arg(args.cache)
    options = _option_pairs(args.option)
    from twbn.solvers.policy import Policy

    args.policy_ = policy = Policy.from_settings(args.policy or ())
    jobs = 1 if not args.jobs else args.jobs
    if not args.approximate and args.score not in LOCAL_STRUCTURE_SCORES:
        args.jobs = None  # exhaustive scoring runs in one process; the jobs are the method's
    # before the data is read: scoring a CSV can take minutes
    for k in _bounds(args):
        check_request(args.method, k, solver=args.solver, time_limit=args.time_limit, warm_start=args.warm_start,
                      options=options or None)
    if args.scheduler is not None:
        from twbn.solvers.parallel import check_scheduler
        from twbn.solvers.registry import get_method

        if jobs < 2:
            raise UserError("--scheduler needs --jobs 2 or more: the pieces sent to the cluster at once")
        check_scheduler(args.scheduler, jobs, args.method, get_method(args.method).distributed, reach=True,
                        policy=policy)
    stem = Path(args.cache).name.split(".")[0]
    outs = _outputs(args, stem, made)
    for out in outs:
        if not out.parent.exists():
            raise UserError(f"output folder {out.parent} does not exist")
        check_output(out, inputs=_learn_inputs(args))
        if args.save_cache and Path(args.save_cache).resolve() == out.resolve():
            raise UserError("--save-cache and -o name the same file")
    cache = _learn_cache(args)
    from twbn.formulations.problem import read_arc_file

    names = cache.names if cache is not None else args.dataset_.names
    forbid, require = list(args.forbid or []), list(args.require or [])
    for arcs, path in ((forbid, args.forbid_file), (require, args.require_file)):
        if path:
            arcs += [(names[u], names[v]) for u, v in sorted(read_arc_file(path, names))]
    import twbn
    from twbn.solvers.control import draw_line

    on_tty = sys.stderr.isatty() and not args.quiet

    def say(line: str) -> None:
        if on_tty:
            sys.stderr.write("\r\033[K")  # under the live line
        print(line, flush=True)

    where = dict(zip(_bounds(args), outs))
    written: list = []

    def write(sol) -> None:
        out = where[sol.treewidth]
        _write_or_rescue(sol.save, out, "result")
        again = [i for i, w in enumerate(written) if w.treewidth == sol.treewidth]
        if again:  # a larger bound's proof tightened this one's bound: its file is rewritten
            written[again[0]] = sol
            if not args.quiet:
                larger = sol.stats["bound_from_larger_bound"]["treewidth"]
                say(f"k = {sol.treewidth}: bound tightened to {sol.bound:.4f} by the proof at "
                    f"{'no bound' if larger is None else f'k = {larger}'} (gap {100 * sol.gap:.2f}%); rewrote {out}")
            return
        written.append(sol)
        if not args.quiet:
            say(_summary(sol))
            say(f"wrote {out}")

    try:
        dataset = getattr(args, "dataset_", None)  # from data: families beyond the cache are scored from it
        twbn.learn(cache if dataset is None else dataset, args.treewidth, args.method,
                   cache=None if dataset is None else cache, score=args.score or "bic",
                   ess=1.0 if args.ess is None else args.ess, max_parents=args.max_parents,
                   time_limit=args.time_limit, seed=args.seed, solver=args.solver,
                   warm_start=args.warm_start, forbid=forbid, require=require, options=options or None, jobs=jobs,
                   scheduler=args.scheduler, log=None if args.quiet else say, on_result=write, progress=draw_line(sys.stderr) if on_tty else None,
                   started=args.started, policy=policy,
                   **({} if dataset is None else {"missing": args.missing or "em", "missing_token": args.missing_token}))
    except KeyboardInterrupt:
        pass  # a method with nothing to keep: learn gave the bound an 'unknown' result, written above
    finally:
        if on_tty:
            sys.stderr.write("\r\033[K")
    if written and written[-1].stats.get("interrupted"):
        sol = written[-1]
        what = "its best network so far" if sol.parents is not None else "a result without a network"
        rest = len(outs) - len(written)
        gone = sol.stats.get("abandoned")
        print(f"twbn: interrupted; {gone.split(' without returning')[0] + ' and was abandoned; ' if gone else ''}"
              f"wrote {what} to {where[sol.treewidth]}"
              + (f"; {rest} larger bound{'s' if rest > 1 else ''} not run" if rest else ""), file=sys.stderr)
        return EXIT_INTERRUPTED
    for sol in written:
        if sol.stats.get("abandoned") and sol.parents is not None:
            print(f"twbn: {sol.stats['abandoned']}", file=sys.stderr)
    return 0 if all(s.parents is not None for s in written) else EXIT_NO_NETWORK


#: How the summary line names a bound, by the start of its ``stats["bound_source"]``
#: (solvers/bounds.py, auto.py, sweep.py, method.py). Each is a bound over the cache's
#: parent sets: a network with a family outside the cache may score above it.
_BOUND_LABELS = (
    ("structural EM", "over the last E-step's expected counts, not the data's"),
    ("cluster LP", "the cluster LP's bound over the cache's parent sets"),
    ("sum of each variable", "the sum of best local scores in the cache"),
    ("the optimum without the treewidth bound", "the cache's optimum without the treewidth bound"),
    ("the bound proved", "a larger bound's proof"),
    ("the engine's bound", "the engine's bound on the extended model"),
)


def _bound_label(source: str) -> str:
    """The summary line's name for a ``bound_source``; '' where the method proved it itself."""
    return next((label for start, label in _BOUND_LABELS if source.startswith(start)), "")


def _summary(sol) -> str:
    """One line on a result: status, score, bound and its source, arcs, width, time."""
    k = "unbounded" if sol.treewidth is None else f"treewidth <= {sol.treewidth}"
    stats = sol.stats
    if sol.parents is None:
        return f"{sol.method}: no network: {sol.status} ({k}) after {sol.wall_time:.2f} s: {stats.get('reason', '')}"
    bound = "none" if sol.bound is None else f"{sol.bound:.4f}"
    if sol.bound is not None:
        label = _bound_label(stats.get("bound_source", ""))
        scope = stats.get("bound_scope", "")
        every = re.match(r"every network of the data whose families have at most (\d+) parents", scope)
        grown = re.search(r"one of the ([\d,]+) families the search scored", scope)
        if every:  # the cache holds every family of that size: a bound over the data's networks
            label = (label.replace(" over the cache's parent sets", "") or "a bound") + \
                f", over every network of the data of at most {every[1]} parents a family"
        elif grown:  # from data: the cache the bound covers holds the families the search found
            label = (label or "a bound") + f" (the cache grown by the {grown[1]} families the search scored from " \
                                           "the data)"
        bound += f" (gap {100 * sol.gap:.2f}%" + (f", {label})" if label else ")")
    moved = stats.get("gap_sources")
    if moved and sol.bound is not None and sol.gap and moved.get("first_incumbent") is not None:
        bound += (f"; the bound moved {moved['bound_moved']:.6g} below the trivial one, the incumbent "
                  f"{moved['incumbent_moved']:.6g} above its first")
    kept = stats.get("kept_from_smaller_bound")
    note = "" if not kept else f"; the network of k = {kept['treewidth']} kept, {sol.method} found {kept['method_score']}"
    return (f"{sol.method}: {sol.status}, score {sol.score:.4f}, bound {bound}, {len(sol.arcs)} arcs, width {sol.width} "
            f"({k}), {sol.wall_time:.2f} s{note}")


def cmd_policy(args: argparse.Namespace) -> int:
    from twbn.solvers.policy import Policy, describe_policy

    print(describe_policy(Policy.from_settings(args.settings)))
    return 0


def cmd_methods(args: argparse.Namespace) -> int:
    """Every method the registry holds, built-in and plugin, and the plugins that failed."""
    from twbn.solvers.method_options import describe_options
    from twbn.solvers.plugins import PLUGIN_FAILURES
    from twbn.solvers.registry import all_methods, is_builtin

    for m in all_methods().values():
        needs = f"needs k >= {m.min_treewidth}" if m.min_treewidth is not None else "bounded or unbounded"
        extra = [needs] + ([f"backends {', '.join(m.backends)}"] if m.backends else []) + \
            (["takes a warm start"] if m.warm_start else []) + ([] if is_builtin(m.name) else ["plugin"])
        print(f"{m.name}: {m.summary} ({'; '.join(extra)})")
        for line in describe_options(m.options) if args.options and m.options is not None else ():
            print("    --option " + line)
    for name, why in sorted(PLUGIN_FAILURES.items()):
        print(f"{name}: unavailable: {why}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from twbn.formulations.verify import verify_result
    from twbn.scoring.jkl import read_jkl

    from_data = not is_cache_path(args.cache)
    if from_data:  # a result learned from data: its families re-scored from the data
        from twbn.formulations.verify import verify_against_data
        from twbn.scoring.data import read_as_recorded

        if args.exact:
            raise UserError("--exact re-solves over a cache: give the jkl file (twbn learn --save-cache)")
    else:
        cache = read_jkl(args.cache)
    try:
        result = json.loads(Path(args.result).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise UserError(f"{args.result}: not JSON ({exc})") from None
    if not isinstance(result, dict):
        raise UserError(f"{args.result}: not a result object")
    if from_data:  # read as learn read it (--missing state: its own state, not missing cells)
        source = read_as_recorded(data_arg(args.cache), (result.get("stats") or {}).get("data"))
    errors = verify_against_data(source, result, args.treewidth) if from_data else \
        verify_result(cache, result, args.treewidth)
    if from_data and source.n_missing and not errors:
        print(f"{args.result}: its score is structural EM's expected score over its own completions: the network "
              "and its certificate are checked, the score is not re-scored from the data")
    for e in errors:
        print(f"{args.result}: {e}")
    if errors:
        return 1
    if result.get("parents") is None:
        print(f"{args.result}: valid, no network (status {result.get('status')} as claimed by "
              f"{result.get('method') or 'the method'}: {result.get('stats', {}).get('reason', 'no reason given')})")
        return 0
    k = result.get("treewidth_bound") if args.treewidth is None else args.treewidth
    em = from_data and source.n_missing  # structural EM: its score is over completions the result does not carry
    families = "its variables those of the data" if em else \
        "every family re-scored from the data" if from_data else "every parent set in the cache"
    print(f"{args.result}: valid network: {families}, acyclic, elimination order of width "
          f"{result['width']}" + ("" if k is None else f" <= {k}")
          + ("" if em else f", score {result['score']} recomputed"))
    claim = f"status {result['status']}"
    if result.get("bound") is not None:
        claim += f", bound {result['bound']} (gap {100 * result['gap']:.4g}%)"
    if not args.exact:
        print(f"{args.result}: claimed by {result.get('method') or 'the method'}, not verified here: {claim}"
              + (" (--exact re-solves small problems by DP)" if result["status"] == "optimal" or
                 result.get("bound") is not None else ""))
        return 0
    return _check_exact(args, cache, result, k)


def _check_exact(args: argparse.Namespace, cache, result: dict, k) -> int:
    """``check --exact``: the optimum by the DP, against the claimed status and bound."""
    import twbn
    from twbn.formulations.problem import Problem
    from twbn.solvers.auto import choose_method

    if choose_method(Problem(cache, k)).method != "dp":
        raise UserError(f"--exact re-solves by DP, which is out of reach here (n = {cache.n_variables}, "
                        f"k = {'unbounded' if k is None else k}); see docs/auto.md")
    opt = twbn.learn(cache, k, "dp", forbid=[tuple(a) for a in result.get("forbidden") or []],
                     require=[tuple(a) for a in result.get("required") or []])
    if opt.score is None:
        raise UserError(f"the DP found no network ({opt.status}: {opt.stats.get('reason', '')})")
    tol = 1e-9 * max(1.0, abs(opt.score))
    wrong = []
    if result["status"] == "optimal" and result["score"] < opt.score - tol:
        wrong.append(f"status optimal, but the optimum is {opt.score}")
    if result.get("bound") is not None and result["bound"] < opt.score - tol:
        wrong.append(f"bound {result['bound']} is below the optimum {opt.score}")
    for w in wrong:
        print(f"{args.result}: {w}")
    if not wrong:
        verdict = "optimal: confirmed" if result["score"] >= opt.score - tol else \
            f"not optimal: {opt.score - result['score']:.6g} below the optimum"
        print(f"{args.result}: the DP's optimum is {opt.score}; this network is {verdict}"
              + ("" if result.get("bound") is None else "; its bound holds"))
    return 1 if wrong else 0


def cmd_demo(args: argparse.Namespace) -> int:
    from twbn.experiments.demo import run_demo

    return run_demo(Path(args.output_dir))


def _read_network(path: str) -> tuple[dict, list[str], list[list[int]]]:
    """A result JSON's (result, variable names, parent indices), or a UserError."""
    try:
        result = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: not JSON ({exc})") from None
    if not isinstance(result, dict) or not isinstance(result.get("variables"), list) or not isinstance(result.get("parents"), dict):
        raise UserError(f"{path}: not a result with a network (variables and parents)")
    names = result["variables"]
    pos = {n: i for i, n in enumerate(names)}
    try:
        parents = [sorted(pos[p] for p in result["parents"][n]) for n in names]
    except (KeyError, TypeError):
        raise UserError(f"{path}: its parents do not match its variables") from None
    return result, names, parents


def cmd_evaluate(args: argparse.Namespace) -> int:
    from twbn.scoring.data import read_csv
    from twbn.scoring.likelihood import held_out_log_likelihood

    _, names, parents = _read_network(args.result)
    from twbn.scoring.likelihood import unseen_states

    train, test = read_csv(data_arg(args.train)), read_csv(data_arg(args.test))
    total, rows = held_out_log_likelihood(train, test, names, parents, ess=args.ess,
                                          allow_unseen=args.allow_unseen)
    unseen = unseen_states(train, test, names)
    if unseen:
        print(f"note: test values never seen in training, each given the smoothing's pseudo-count alone: "
              f"{', '.join(unseen)}", file=sys.stderr)
    print(f"held-out log-likelihood: {total / rows:.6f} per sample ({total:.4f} over {rows} test rows; "
          f"CPTs from {train.n_rows} training rows, ess {args.ess:g})")
    return 0


def cmd_impute(args: argparse.Namespace) -> int:
    import twbn
    from twbn.scoring.data import missing_summary, read_csv
    from twbn.scoring.jkl import atomic_path

    out = Path(args.output)
    if not out.parent.exists():
        raise UserError(f"folder {out.parent} of the output does not exist")
    args.data = data_arg(args.data)
    check_output(out, inputs=[args.result, args.data])
    _read_network(args.result)  # a clear line for a file that is not a result
    sol = twbn.Solution.from_json(args.result)
    data = read_csv(args.data, missing_token=args.missing_token)
    if sol.parents is None:
        raise UserError(f"{args.result}: no network to impute with")
    # the file, not its Dataset: its cells' texts type the output as pandas types them (a bool stays a bool)
    filled = sol.impute(args.data, sample=args.sample, seed=args.seed, ess=args.ess, missing_token=args.missing_token)
    with atomic_path(out) as tmp:
        filled.to_csv(tmp, index=False, compression="gzip" if out.name.endswith(".gz") else None)
    how = "a draw from each row's posterior" if args.sample else "each row's most probable completion"
    print(f"wrote {out}: {missing_summary(data)} filled with {how}, by exact inference on the network of "
          f"{args.result} (tables fitted on the data by EM, ess {args.ess:g})")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from twbn.scoring.inference import InferenceUnavailable, inference_time, learned_model, write_bif
    from twbn.scoring.data import read_csv

    result, names, parents = _read_network(args.result)
    out = Path(args.output)
    if not out.parent.exists():
        raise UserError(f"folder {out.parent} of the output does not exist")
    args.data = data_arg(args.data)
    check_output(out, inputs=[args.result, args.data])
    from twbn.scoring.data import state_values

    train = read_csv(args.data)
    try:  # states named as the file spells them (a bool column's true, not its canonical 1)
        model = learned_model(train, names, parents, ess=args.ess, values=state_values(args.data))
        write_bif(model, out)
        arcs = sum(len(p) for p in parents)
        print(f"wrote {out}: {len(names)} variables, {arcs} arcs, CPTs from {train.n_rows} rows (ess {args.ess:g})")
        if args.time_inference:
            order = result.get("elimination_order")
            t = inference_time(model, order)
            print(f"exact inference: junction tree ({'from the certificate' if order else 'pgmpy triangulation'}) "
                  f"built and calibrated in {1000 * t['junction_tree_s']:.1f} ms, largest clique "
                  f"{t['max_clique']} variables; variable elimination {1000 * t['ve_query_s']:.2f} ms per query")
    except InferenceUnavailable as exc:
        raise UserError(str(exc)) from None
    return 0


def cmd_experiment(args: argparse.Namespace) -> int:
    from twbn.experiments.config import load_config
    from twbn.experiments.harness import run_experiment

    config = load_config(config_arg(args.config))
    if args.cell_jobs is not None:
        if args.cell_jobs < 1:
            raise UserError("--cell-jobs must be at least 1")
        config = dataclasses.replace(config, cell_jobs=args.cell_jobs)
    store = Path(args.store) if args.store else Path(f"{config.name}.sqlite")
    if not store.parent.exists():
        raise UserError(f"folder {store.parent} of the store does not exist")
    from twbn.solvers.control import RunControl

    control = RunControl()
    # a signal sets the stop flag: no new cell starts, running ones stop, finished ones stay
    with control.catching(), control.cooperating():
        counts = run_experiment(config, store, resume=args.resume, jobs=args.jobs,
                                executor=args.executor, scheduler=args.scheduler,
                                log=(lambda _m: None) if args.quiet else print, stop=control.stop_event,
                                only=args.cells)
    if control.stop_requested():
        stopped = counts.pop("stopped", 0)
        kept = sum(counts.values())
        print(f"twbn: interrupted; {kept} cell{'s' if kept != 1 else ''} of this run {'are' if kept != 1 else 'is'} kept in {store}, {stopped} stopped or not "
              f"started; continue with: twbn experiment {args.config} --store {store} --resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    if not args.quiet:
        print(f"done: {', '.join(f'{v} {k}' for k, v in sorted(counts.items())) or 'nothing to run'}; store {store}")
    bad = {k: v for k, v in counts.items() if k in ("failed", "timeout")}
    if bad:
        print(f"twbn: {sum(bad.values())} of {sum(counts.values())} cells did not finish "
              f"({', '.join(f'{v} {k}' for k, v in sorted(bad.items()))}); their errors are in {store}",
              file=sys.stderr)
        return EXIT_INCOMPLETE
    return 0


def cmd_data(args: argparse.Namespace) -> int:
    from twbn.scoring.datasets import BUNDLED, DEBD_SETS, DataMissing, bundled_path, data_dir, download_debd

    if args.action == "list":
        for name in BUNDLED:
            print(f"{name:<10} bundled   {bundled_path(name)}")
        try:
            folder = data_dir(args.data_dir)
        except DataMissing as exc:
            print(f"DEBD sets: {exc}")
            return 0
        for name in DEBD_SETS:
            path = folder / "debd" / f"{name}_train.csv.gz"
            if path.exists():
                print(f"{name:<10} DEBD      {path}")
        return 0
    if not args.names:
        raise UserError(f"name the DEBD sets to download, e.g. nltcs plants; known: {', '.join(DEBD_SETS)}")
    unknown = [n for n in args.names if n not in DEBD_SETS]
    if unknown:
        raise UserError(f"unknown DEBD set {unknown[0]!r}; known: {', '.join(DEBD_SETS)}")
    folder = args.data_dir or __import__("os").environ.get("TWBN_DATA")
    if not folder:
        raise UserError("name the data folder: --data-dir DIR (or set TWBN_DATA)")
    if Path(folder).exists() and not Path(folder).is_dir():
        raise UserError(f"data folder {folder} is a file")
    made = not Path(folder).exists()
    Path(folder).mkdir(parents=True, exist_ok=True)
    try:
        download_debd(args.names, folder, **({"base_url": args.base_url} if args.base_url else {}))
    except (DataMissing, ValueError, OSError) as exc:
        if made:  # nothing half-made: a folder this call created and filled with nothing
            import shutil

            shutil.rmtree(folder, ignore_errors=True)
        if isinstance(exc, OSError) and not isinstance(exc, DataMissing):
            raise
        raise UserError(str(exc)) from None
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from twbn.experiments.report import write_report, write_staged

    if args.layout == "grid":
        if len(args.store) > 1:
            raise UserError("the grid report reads one store (--layout machado reads several)")
        written = write_report(args.store[0], args.output)
    else:
        from twbn.experiments.report_machado import write as write_study

        stores = [Path(s) for s in args.store]
        for s in stores:
            if not s.exists():
                raise UserError(f"no store {s}")
        written = write_staged(args.output, lambda stage: write_study(stores, stage))
    for p in written:
        print(f"wrote {p}")
    return 0


def _add_scoring_options(s: argparse.ArgumentParser, *, learn: bool) -> None:
    """The scoring options of ``score``, and of ``learn`` from data (where every default is
    None, so that giving one with a cache is caught)."""
    d = (lambda value: None) if learn else (lambda value: value)
    s.add_argument("--score", choices=[*SCORES, *LOCAL_STRUCTURE_SCORES], default=d("bic"),
                   help="bic (default), aic, bdeu (discrete data); pcart, pcartp, ft, ftp (decision-tree local "
                        "structure, categorical and continuous columns)")
    s.add_argument("--ess", type=_positive_float, default=None, help="BDeu equivalent sample size (default 1.0)")
    s.add_argument("--max-parents", type=_nonneg_int, default=d(DEFAULT_MAX_PARENTS), metavar="D",
                   help=f"maximum in-degree (default {DEFAULT_MAX_PARENTS}"
                        + ("; learn with a time limit: the largest bound k, each size of 3 or more parents scored "
                           "only where it is predicted to fit the scoring's share)" if learn else ")"))
    s.add_argument("--pruning", choices=list(PRUNING_MODES), default=d("all"), help="default all")
    s.add_argument("--max-states", type=_nonneg_int, default=d(DEFAULT_MAX_STATES),
                   help=f"reject columns with more states (default {DEFAULT_MAX_STATES})")
    s.add_argument("--missing", choices=list(MISSING_MODES), default=None,
                   help="missing cells (empty, NA, NaN, ?, --missing-token): em (default; learn fits them by "
                        "structural EM, score refuses them), state (a state of their own), complete-rows (their "
                        "rows dropped), error")
    s.add_argument("--missing-token", default=None, metavar="TEXT", help="one more cell text that means missing")
    s.add_argument("--approximate", action="store_true",
                   help="for large n: best-first exploration over mutual-information candidates, per-variable budget")
    s.add_argument("--candidates", type=_nonneg_int, default=None, metavar="K",
                   help="with --approximate: candidate parents per variable (default 30)")
    s.add_argument("--time-per-variable", type=_positive_float, default=None, metavar="S",
                   help="with --approximate: seconds of exploration per variable (default 0.5)")
    s.add_argument("--jobs", type=_nonneg_int, default=None,
                   help="processes: one computes the LP bound beside a method whose bound it is (improve, auto "
                        "above n = 40, kg, kmax, …) for its share of all the jobs' time (beside improve, then it "
                        "solves pieces too; beside the others the whole budget), the rest solve improve's pieces "
                        "at once; "
                        "or auto's start method alone beside the method it chose (default 1: one core, as the "
                        "field's benchmarks measure, and repeatable); approximate or local-structure scoring "
                        "(default 2, at most the cores this process may use)"
                   if learn else "with --approximate or a local-structure score: processes (default 2, at most the "
                                 "cores this process may use)")
    s.add_argument("--memory-limit", type=_positive_float, default=None, metavar="MB",
                   help="exhaustive scoring: refuse (score) or explore approximately (learn) when its estimate "
                        "is larger, and stop if it is reached (default: three quarters of this machine's memory)")
    s.add_argument("--max-splits", type=_nonneg_int, default=None, metavar="S",
                   help="pcart: dyadic splits per continuous predictor (default 3)")
    s.add_argument("--max-bins", type=_nonneg_int, default=None, metavar="M",
                   help="ft: most quantile bins per continuous predictor (default 7)")
    s.add_argument("--continuous", nargs="+", metavar="NAME", help="pcart/ft: force these columns continuous")
    s.add_argument("--categorical", nargs="+", metavar="NAME", help="pcart/ft: force these columns categorical")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="twbn", description="Learning Bayesian networks of bounded treewidth by mathematical programming."
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("score", help="data (CSV) -> pruned local-score cache (jkl)")
    s.add_argument("data", metavar="DATA.csv", help="CSV or CSV.gz with a header of variable names, or a bundled "
                   "set by name (housing, zoo, …: twbn data list)")
    _add_scoring_options(s, learn=False)
    s.add_argument("--time-limit", type=_positive_float, default=None, metavar="S",
                   help="stop exploring after S seconds, keeping a valid partial cache")
    s.add_argument("-o", "--output", metavar="CACHE.jkl", help="default: DATA name with .jkl, here")
    s.add_argument("--stats", metavar="STATS.json", help="write pruning statistics as JSON")
    s.add_argument("-q", "--quiet", action="store_true", help="no summary, no progress bar")
    s.set_defaults(func=cmd_score)

    g = sub.add_parser("generate", help="a random network (BNGenerator-style) as BIF, and optionally data from it")
    g.add_argument("--variables", type=_nonneg_int, required=True, metavar="N")
    g.add_argument("--seed", type=_nonneg_int, default=0)
    g.add_argument("--max-parents", type=_nonneg_int, default=6, help="most parents per variable (default 6)")
    g.add_argument("--rows", type=_nonneg_int, default=0, help="also sample this many rows to PREFIX.csv.gz")
    g.add_argument("-o", "--output", required=True, metavar="PREFIX", help="writes PREFIX.bif.gz (+ PREFIX.csv.gz)")
    g.set_defaults(func=cmd_generate)

    sm = sub.add_parser("sample", help="forward-sample rows from a BIF network into a CSV")
    sm.add_argument("network", metavar="NET.bif", help="BIF, or BIF.gz")
    sm.add_argument("--rows", type=_nonneg_int, required=True)
    sm.add_argument("--seed", type=_nonneg_int, default=0)
    sm.add_argument("-o", "--output", required=True, metavar="DATA.csv", help="CSV (gzip if it ends in .gz)")
    sm.set_defaults(func=cmd_sample)

    d = sub.add_parser("demo", help="the main job on bundled data")
    d.add_argument("--output-dir", default="out/demo", help="where demo files go (default out/demo)")
    d.set_defaults(func=cmd_demo)

    le = sub.add_parser("learn", help="learn a network from data (scored first) or from a score cache")
    le.add_argument("cache", metavar="DATA.csv|CACHE.jkl", nargs="?",
                    help="a CSV/CSV.gz of data (scored first with the scoring options below), a bundled set by "
                         "name (housing, zoo, …), or a jkl cache")
    le.add_argument("--treewidth", type=_treewidths, default=None, metavar="K",
                    help="bound (default: unbounded); several, e.g. 2,5,8 (unbounded among them allowed), sweep "
                         "them in increasing order, each from the best network of the smaller ones, one result "
                         "file each (-o a folder or a pattern with {k}), the time limit each bound's")
    from twbn.solvers.registry import all_methods

    methods = all_methods()
    le.add_argument("--method", default="auto", help="; ".join(f"{m.name}: {m.summary}" for m in methods.values()))
    le.add_argument("--solver", default=None, help="the method's backend, the first its default: " + "; ".join(
        f"{m.name}: {', '.join(m.backends)}" for m in methods.values() if m.backends))
    le.add_argument("--time-limit", type=_time_limit, default=None, metavar="S",
                    help="seconds for the whole command: start-up, reading the cache or scoring the data (half "
                         "of what is left, at most), the method with its warm start and bound, writing; with several "
                         "bounds, each bound's (inf: none; default: the method's own)")
    le.add_argument("--seed", type=_nonneg_int, default=None)
    le.add_argument("--warm-start", default=None, metavar="tree|METHOD|RESULT.json",
                    help="start from the optimal tree (k=1), a method's result, or a result file")
    le.add_argument("--forbid", action="append", metavar="A,B", help="forbid the arc A->B (repeatable)")
    le.add_argument("--require", action="append", metavar="A,B", help="require the arc A->B (repeatable)")
    le.add_argument("--forbid-file", metavar="FILE", help="forbidden arcs, one PARENT,CHILD per line")
    le.add_argument("--require-file", metavar="FILE", help="required arcs, one PARENT,CHILD per line")
    le.add_argument("--option", action="append", metavar="NAME=VALUE",
                    help="a method option (repeatable); --help-options lists them")
    le.add_argument("--help-options", action="store_true", help="list the options of --method METHOD and exit")
    le.add_argument("--policy", action="append", metavar="KEY=VALUE",
                    help="a field of the search policy (repeatable), e.g. stuck_pieces=6; `twbn policy` lists them")
    le.add_argument("--scheduler", metavar="ADDRESS",
                    help="a Dask scheduler, e.g. tcp://host:8786: improve's pieces (auto's above n = 40), --jobs at "
                         "a time, go to its workers (which need twbn) instead of this machine's processes")
    le.add_argument("-o", "--output", metavar="RESULT.json", help="default: DATA name with .METHOD.json, here")
    le.add_argument("-q", "--quiet", action="store_true")
    sc = le.add_argument_group("scoring, when learning from data (as twbn score)")
    _add_scoring_options(sc, learn=True)
    sc.add_argument("--save-cache", metavar="CACHE.jkl", help="also keep the score cache")
    le.set_defaults(func=cmd_learn)

    po = sub.add_parser("policy", help="list the search policy's fields: time shares and search knobs, with "
                                       "the measurements behind their defaults")
    po.add_argument("settings", nargs="*", metavar="KEY=VALUE", help="show the policy with these fields changed")
    po.set_defaults(func=cmd_policy)

    me = sub.add_parser("methods", help="list every method, built-in and plugin (entry points twbn.methods)")
    me.add_argument("--options", action="store_true", help="also list each method's options")
    me.set_defaults(func=cmd_methods)

    ch = sub.add_parser("check", help="verify a result against a cache, or against the data it was learned from "
                                      "(exit 0 iff valid)")
    ch.add_argument("cache", metavar="CACHE.jkl|DATA.csv")
    ch.add_argument("result", metavar="RESULT.json")
    ch.add_argument("--treewidth", type=_nonneg_int, default=None, metavar="K")
    ch.add_argument("--exact", action="store_true",
                    help="also re-solve by DP (small problems) and confirm the claimed optimum and bound")
    ch.set_defaults(func=cmd_check)

    im = sub.add_parser("impute", help="fill a data file's missing cells by exact inference on a learned network")
    im.add_argument("data", metavar="DATA.csv")
    im.add_argument("result", metavar="RESULT.json")
    im.add_argument("-o", "--output", required=True, metavar="FILLED.csv", help="the data with every cell filled")
    im.add_argument("--sample", action="store_true",
                    help="draw each row's missing cells from their posterior (default: their most probable joint "
                         "values)")
    im.add_argument("--seed", type=_nonneg_int, default=None)
    im.add_argument("--ess", type=_positive_float, default=1.0, help="the tables' Dirichlet smoothing (default 1.0)")
    im.add_argument("--missing-token", default=None, metavar="TEXT", help="one more cell text that means missing")
    im.set_defaults(func=cmd_impute)

    ev = sub.add_parser("evaluate", help="held-out log-likelihood of a result")
    ev.add_argument("result", metavar="RESULT.json")
    ev.add_argument("--train", required=True, metavar="TRAIN.csv", help="data the CPTs are fitted on")
    ev.add_argument("--test", required=True, metavar="TEST.csv", help="data the log-likelihood is measured on")
    ev.add_argument("--ess", type=_positive_float, default=1.0,
                    help="Dirichlet smoothing: BDeu-style pseudo-counts ess/(q*r) per cell (default 1.0)")
    ev.add_argument("--allow-unseen", action="store_true",
                    help="score a test value the training data never shows with the smoothing's pseudo-count alone "
                         "(default: refuse it, naming it)")
    ev.set_defaults(func=cmd_evaluate)

    xp = sub.add_parser("export", help="write a learned network as BIF (CPTs fitted on data), time exact inference")
    xp.add_argument("result", metavar="RESULT.json")
    xp.add_argument("--data", required=True, metavar="TRAIN.csv", help="data to fit the CPTs on")
    xp.add_argument("-o", "--output", required=True, metavar="NET.bif")
    xp.add_argument("--ess", type=_positive_float, default=1.0,
                    help="Dirichlet smoothing: BDeu-style pseudo-counts ess/(q*r) per cell (default 1.0)")
    xp.add_argument("--time-inference", action="store_true",
                    help="also time exact inference (pgmpy junction tree and variable elimination)")
    xp.set_defaults(func=cmd_export)

    ex = sub.add_parser("experiment", help="run an experiment grid into a SQLite store")
    ex.add_argument("config", metavar="CONFIG.toml", help="a config file, or a bundled one by name (quick, "
                    "machado-heldout, …)")
    ex.add_argument("--store", metavar="STORE.sqlite", help="default: NAME.sqlite (the config's name) here")
    ex.add_argument("--resume", action="store_true", help="run only the cells the store lacks")
    ex.add_argument("--jobs", type=_nonneg_int, default=1, help="cells run at a time (default 1)")
    ex.add_argument("--cell-jobs", type=_nonneg_int, default=None, metavar="N",
                    help="processes each cell's method may use, as learn --jobs (default: the config's "
                         "cell_jobs, 1); --jobs × --cell-jobs should not exceed the machine's cores")
    ex.add_argument("--executor", choices=["local", "dask"], default="local",
                    help="local: a process per cell on this machine (default); dask: cells on a Dask cluster")
    ex.add_argument("--scheduler", metavar="ADDRESS",
                    help="Dask scheduler, e.g. tcp://host:8786 (default: a local cluster of --jobs workers)")
    ex.add_argument("--cells", metavar="PATTERN", action="append",
                    help="run only the cells whose key matches, shell-style, e.g. 'wdbc|fold=4|*' (repeatable; "
                         "keys are DATA|fold=F|k=K|METHOD|seed=S)")
    ex.add_argument("-q", "--quiet", action="store_true")
    ex.set_defaults(func=cmd_experiment)

    da = sub.add_parser("data", help="list the data sets twbn can read; download the DEBD sets into a data folder")
    da.add_argument("action", choices=["list", "download-debd"])
    da.add_argument("names", nargs="*", metavar="NAME", help="with download-debd: the sets, e.g. nltcs plants")
    da.add_argument("--data-dir", metavar="DIR", help="the data folder (default: $TWBN_DATA)")
    da.add_argument("--base-url", default=None, help=argparse.SUPPRESS)
    da.set_defaults(func=cmd_data)

    rp = sub.add_parser("report", help="tables (Markdown, CSV) and plots (PNG) from an experiment store")
    rp.add_argument("store", metavar="STORE.sqlite", nargs="+",
                    help="the store (with --layout machado: several, or an earlier study report's cells.csv)")
    rp.add_argument("-o", "--output", required=True, metavar="DIR")
    rp.add_argument("--layout", choices=["grid", "machado"], default="grid",
                    help="grid (default): tables and plots by data set, method and bound; machado: Machado et "
                         "al.'s study (machado-study-* configs): their Tables II-IV's gaps beside ours, held-out "
                         "likelihood and score against the bound per parent limit, inference and the class")
    rp.set_defaults(func=cmd_report)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    # the command's clock: from the process's start when it is the command itself, from
    # this call when main() is called with arguments (from Python, the tests)
    started = process_started() if argv is None else time.monotonic()
    if argv is None:
        from twbn.solvers.control import return_large_frees

        return_large_frees()
    parser = build_parser()
    args = parser.parse_args(argv)
    args.started = started
    code = _main(args)
    if argv is None and args.func is cmd_learn:
        # the command itself, its results written (atomically) and its lines printed: leave
        # without the interpreter's teardown of the search's objects, which took 0.4-2.9 s
        # past the limit after 20-60 s runs (2 GB of memoised families and caches)
        import logging

        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def _main(args: argparse.Namespace) -> int:
    import warnings

    from twbn.scoring.errors import TwbnWarning

    def one_line(message, category, *_args, **_kwargs) -> None:
        if issubclass(category, TwbnWarning):  # data that reads, but likely not as meant: one line, said once
            print(f"twbn: warning: {message}", file=sys.stderr)
        else:
            shown(message, category, *_args, **_kwargs)

    shown, warnings.showwarning = warnings.showwarning, one_line
    try:
        return args.func(args)
    except UserError as exc:
        print(f"twbn: error: {exc}", file=sys.stderr)
        return 1
    except USER_ERRORS as exc:
        print(f"twbn: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # the reader left (``twbn check … | head``): nothing to say, nowhere to say it
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so that the flush at exit does not fail again
        return EXIT_BROKEN_PIPE
    except OSError as exc:  # the file system: a folder it cannot write, a full disk, …
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"twbn: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("twbn: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        warnings.showwarning = shown


if __name__ == "__main__":
    sys.exit(main())
