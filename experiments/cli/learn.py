"""``twbn learn``: a network from data or a cache, under one or several bounds, written as a certified result."""

from __future__ import annotations

import argparse
import re
import os
import sys
import time
from pathlib import Path

from twbn.scoring.data import DEFAULT_MAX_STATES
from twbn.scoring.jkl import check_output, sidecar_path
from twbn.scoring.local_structure import LOCAL_STRUCTURE_SCORES
from twbn.experiments.cli.common import (EXIT_INTERRUPTED, EXIT_NO_NETWORK, SCORING_FLAGS, UserError, _nonneg_int,
                                         _option_pairs, _policy_of, _time_limit, _treewidths, _write_or_rescue,
                                         data_arg, is_cache_path)
from twbn.experiments.cli.score import _add_scoring_options, score_from_args

__all__ = ['cmd_learn', 'add_learn_parser']


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


def cmd_learn(args: argparse.Namespace) -> int:
    made: list[Path] = []
    try:
        return _learn(args, made)
    finally:
        for folder in made:  # nothing half-written: a folder made for results that never came
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
        if getattr(args, "cut_folder_", None) is not None:
            args.cut_folder_.cleanup()


def _cut_first(args: argparse.Namespace) -> None:
    """``--discretize``: the data's columns cut (``twbn.scoring.discretize``) into a
    temporary CSV that the rest of ``learn`` reads; the cuts go into every result."""
    import tempfile

    from twbn.scoring.discretize import fit_discretizer

    if is_cache_path(args.cache):
        raise UserError("--discretize cuts the columns of data, not of a score cache")
    args.cuts_ = fit_discretizer(args.cache, args.discretize, missing_token=args.missing_token)
    args.cut_folder_ = tempfile.TemporaryDirectory(prefix="twbn-cut-")
    path = Path(args.cut_folder_.name) / (Path(args.cache).name.split(".")[0] + ".csv")
    args.cuts_.apply(args.cache, missing_token=args.missing_token).to_csv(path, index=False)
    args.cache = str(path)


def _learn(args: argparse.Namespace, made: list[Path]) -> int:
    """``twbn learn`` as stages: the request checked before any data is read (scoring a
    CSV can take minutes), the outputs checked, the cache read or scored, the background
    knowledge read, the method run with each result written as it comes, the exit code."""
    if args.help_options:
        return _help_options(args.method)
    if args.cache is None:
        raise UserError("learn needs DATA.csv or CACHE.jkl")
    if not is_cache_path(args.cache):
        args.cache = data_arg(args.cache)
    options = _option_pairs(args.option)
    from twbn.solvers.policy import Policy

    args.policy_ = Policy.from_settings(args.policy or ())
    if args.treewidth == "auto":
        from twbn.experiments.cli.learn_auto import learn_which_k_from_args

        return learn_which_k_from_args(args, lambda line: print(line, flush=True), _summary)
    jobs = _checked_request(args, options)
    outs = _checked_outputs(args, made)
    if args.discretize:
        _cut_first(args)
    cache = _learn_cache(args)
    forbid, require = _background(args, cache.names if cache is not None else args.dataset_.names)
    writer = _Writer(args, dict(zip(_bounds(args), outs)))
    _run(args, cache, options, jobs, forbid, require, writer)
    return _exit_code(writer, len(outs))


def _checked_request(args: argparse.Namespace, options: dict) -> int:
    """The jobs, every bound's request checked by the registry with the method's options."""
    from twbn.experiments.cli.learn_auto import refuse_which_k_options
    from twbn.solvers.registry import check_request

    refuse_which_k_options(args)
    jobs = 1 if not args.jobs else args.jobs
    if not args.approximate and args.score not in LOCAL_STRUCTURE_SCORES:
        args.jobs = None  # exhaustive scoring runs in one process; the jobs are the method's
    for k in _bounds(args):
        check_request(args.method, k, solver=args.solver, time_limit=args.time_limit, warm_start=args.warm_start,
                      options=options or None)
    if args.scheduler is not None:
        from twbn.solvers.parallel import check_scheduler
        from twbn.solvers.registry import get_method

        if jobs < 2:
            raise UserError("--scheduler needs --jobs 2 or more: the pieces sent to the cluster at once")
        check_scheduler(args.scheduler, jobs, args.method, get_method(args.method).distributed, reach=True,
                        policy=args.policy_)
    return jobs


def _checked_outputs(args: argparse.Namespace, made: list[Path]) -> list[Path]:
    """One result file per bound, each writable and none an input or the saved cache."""
    outs = _outputs(args, Path(args.cache).name.split(".")[0], made)
    for out in outs:
        if not out.parent.exists():
            raise UserError(f"output folder {out.parent} does not exist")
        check_output(out, inputs=_learn_inputs(args))
        if args.save_cache and Path(args.save_cache).resolve() == out.resolve():
            raise UserError("--save-cache and -o name the same file")
    return outs


def _background(args: argparse.Namespace, names) -> tuple[list, list]:
    """The forbidden and required arcs, from the options and their files."""
    from twbn.formulations.problem import read_arc_file

    forbid, require = list(args.forbid or []), list(args.require or [])
    for arcs, path in ((forbid, args.forbid_file), (require, args.require_file)):
        if path:
            arcs += [(names[u], names[v]) for u, v in sorted(read_arc_file(path, names))]
    return forbid, require


class _Writer:
    """Writes each result as it comes to its bound's file, and says so under the live
    progress line; a result that comes again (a larger bound's proof tightened its bound)
    rewrites its file."""

    def __init__(self, args: argparse.Namespace, where: dict):
        self.args, self.where, self.written = args, where, []
        self.on_tty = sys.stderr.isatty() and not args.quiet

    def say(self, line: str) -> None:
        if self.on_tty:
            sys.stderr.write("\r\033[K")  # under the live line
        print(line, flush=True)

    def __call__(self, sol) -> None:
        args = self.args
        if getattr(args, "cuts_", None) is not None:
            from twbn.variants import with_cuts

            sol = with_cuts(sol, args.cuts_)
        out = self.where[sol.treewidth]
        _write_or_rescue(sol.save, out, "result")
        again = [i for i, w in enumerate(self.written) if w.treewidth == sol.treewidth]
        if again:
            self.written[again[0]] = sol
            if not args.quiet:
                larger = sol.stats["bound_from_larger_bound"]["treewidth"]
                self.say(f"k = {sol.treewidth}: bound tightened to {sol.bound:.4f} by the proof at "
                         f"{'no bound' if larger is None else f'k = {larger}'} (gap {100 * sol.gap:.2f}%); "
                         f"rewrote {out}")
            return
        self.written.append(sol)
        if not args.quiet:
            self.say(_summary(sol))
            self.say(f"wrote {out}")


def _run(args: argparse.Namespace, cache, options: dict, jobs: int, forbid, require, writer: _Writer) -> None:
    """``twbn.learn`` on the cache (from data: the data, its cache the start), every
    result to ``writer``; an interrupt ends it with what was written."""
    from twbn.learning import run_learn
    from twbn.request import LearnRequest
    from twbn.solvers.control import draw_line

    dataset = getattr(args, "dataset_", None)  # from data: families beyond the cache are scored from it
    request = LearnRequest(
        cache if dataset is None else dataset, args.treewidth, args.method, cache=None if dataset is None else cache,
        score=args.score or "bic", ess=1.0 if args.ess is None else args.ess, max_parents=args.max_parents,
        time_limit=args.time_limit, seed=args.seed, solver=args.solver, warm_start=args.warm_start, forbid=forbid,
        require=require, options=options or None, jobs=jobs, scheduler=args.scheduler,
        log=None if args.quiet else writer.say, on_result=writer,
        progress=draw_line(sys.stderr) if writer.on_tty else None, started=args.started, policy=args.policy_,
        **({} if dataset is None else {"missing": args.missing or "em", "missing_token": args.missing_token}))
    try:
        run_learn(request)
    except KeyboardInterrupt:
        pass  # a method with nothing to keep: learn gave the bound an 'unknown' result, written above
    finally:
        if writer.on_tty:
            sys.stderr.write("\r\033[K")


def _exit_code(writer: _Writer, n_outputs: int) -> int:
    """0 where every bound has a network; interrupted or without a network, say so."""
    written = writer.written
    if written and written[-1].stats.get("interrupted"):
        sol = written[-1]
        what = "its best network so far" if sol.parents is not None else "a result without a network"
        rest = n_outputs - len(written)
        gone = sol.stats.get("abandoned")
        print(f"twbn: interrupted; {gone.split(' without returning')[0] + ' and was abandoned; ' if gone else ''}"
              f"wrote {what} to {writer.where[sol.treewidth]}"
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
    tables = "" if sol.table_size is None else f", junction tree {sol.table_size:,} entries"
    return (f"{sol.method}: {sol.status}, score {sol.score:.4f}, bound {bound}, {len(sol.arcs)} arcs, width {sol.width} "
            f"({k}){tables}, {sol.wall_time:.2f} s{note}")


def add_learn_parser(sub) -> None:
    """``twbn learn``'s options."""
    le = sub.add_parser("learn", help="learn a network from data (scored first) or from a score cache")
    le.add_argument("cache", metavar="DATA.csv|CACHE.jkl", nargs="?",
                    help="a CSV/CSV.gz of data (scored first with the scoring options below), a bundled set by "
                         "name (housing, zoo, …), or a jkl cache")
    le.add_argument("--treewidth", type=_treewidths, default=None, metavar="K",
                    help="bound (default: unbounded); several, e.g. 2,5,8 (unbounded among them allowed), sweep "
                         "them in increasing order, each from the best network of the smaller ones, one result "
                         "file each (-o a folder or a pattern with {k}), the time limit each bound's; auto: "
                         "chosen by held-out likelihood, within --max-table-size, one result, the time limit "
                         "the whole choice's")
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
    from twbn.experiments.cli.learn_auto import add_which_k_options

    add_which_k_options(le)
    sc = le.add_argument_group("scoring, when learning from data (as twbn score)")
    _add_scoring_options(sc, learn=True)
    sc.add_argument("--save-cache", metavar="CACHE.jkl", help="also keep the score cache")
    sc.add_argument("--discretize", action="append", metavar="[COLUMN=]METHOD[:B]",
                    help="cut continuous columns into B states first: quantile:B, uniform:B or information:B "
                         "(Hartemink's, default B = 3), for every numeric column with more than max(B, 10) values, "
                         "or COLUMN=METHOD:B for one (repeatable); the cuts go into the result, and evaluate, "
                         "impute, export and check apply them to raw rows")
    le.set_defaults(func=cmd_learn)
