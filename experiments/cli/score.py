"""``twbn score``: a data file scored into a jkl cache; the scoring options ``learn`` shares."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from twbn.scoring.data import DEFAULT_MAX_STATES, MISSING_MODES
from twbn.scoring.jkl import atomic_write_text, check_output, sidecar_path
from twbn.scoring.local_scores import SCORES
from twbn.scoring.local_structure import LOCAL_STRUCTURE_SCORES
from twbn.scoring.parent_sets import DEFAULT_MAX_PARENTS, PRUNING_MODES
from twbn.experiments.cli.common import (UserError, _memory_limit, _nonneg_int, _policy_of, _positive_float,
                                         _write_or_rescue, data_arg, score_summary)

__all__ = ['cmd_score', 'score_from_args', 'add_score_parser']


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
    def say(line: str) -> None:
        print(f"twbn: {line}", file=sys.stderr)

    common = dict(ess=1.0 if args.ess is None else args.ess, pruning=args.pruning, approximate=approximate,
                  time_limit=seconds, candidates=args.candidates, time_per_variable=args.time_per_variable,
                  jobs=args.jobs, memory_limit=_memory_limit(args), progress=None if not args.quiet else False)
    if learning and dataset is not None and not local:  # learn's cache, with learn's level margin
        from twbn.scoring_phase import search_cache

        dataset.require_complete("scoring a cache")
        cache, stats = search_cache(dataset, args.score, args.max_parents, say=say, **common,
                                    level_margin=_policy_of(args).data_cache_level_margin if approximate is False
                                    else 0.0)
    else:
        cache, stats = twbn.score(
            data_path if dataset is None else dataset, args.score, args.max_parents, max_states=args.max_states,
            max_splits=args.max_splits, max_bins=args.max_bins, continuous=args.continuous or (),
            categorical=args.categorical or (), log=say, return_stats=True, **common,
            **({} if local else {"missing": args.missing or "em", "missing_token": args.missing_token}))
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


def add_score_parser(sub) -> None:
    """``twbn score``'s options."""
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
