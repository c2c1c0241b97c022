"""``twbn learn DATA --treewidth auto``: the bound chosen by held-out likelihood within an
inference budget (``twbn.which_k``), written as one certified result with its curve."""

from __future__ import annotations

import argparse
from pathlib import Path

from twbn.scoring.jkl import check_output
from twbn.experiments.cli.common import UserError, _nonneg_int, _option_pairs, _write_or_rescue, is_cache_path

__all__ = ["add_which_k_options", "learn_which_k_from_args", "refuse_which_k_options"]


def add_which_k_options(le) -> None:
    """The options of ``--treewidth auto``."""
    group = le.add_argument_group("with --treewidth auto (k chosen by held-out likelihood)")
    group.add_argument("--max-treewidth", type=_nonneg_int, default=None, metavar="K",
                       help="the largest k tried (default 8)")
    group.add_argument("--max-table-size", type=_nonneg_int, default=None, metavar="N",
                       help="no k whose junction tree holds more table entries is chosen (with a fixed k: "
                            "--method localsearch --option max_table_size=N keeps it during the search)")
    group.add_argument("--max-query-seconds", type=float, default=None, metavar="S",
                       help="no k whose network takes longer for one exact query is chosen")
    group.add_argument("--plot", metavar="FILE.png", help="draw the curve: held-out likelihood and junction tree "
                                                          "size against k, the chosen k marked")


def refuse_which_k_options(args: argparse.Namespace) -> None:
    """With a fixed k the options of ``--treewidth auto`` would be ignored: refuse them."""
    for flag in ("max_treewidth", "max_table_size", "max_query_seconds", "plot"):
        if getattr(args, flag) is not None:
            hint = " (with a fixed k, --method localsearch --option max_table_size=N keeps the junction tree " \
                   "within N during the search)" if flag == "max_table_size" else ""
            raise UserError(f"--{flag.replace('_', '-')} applies to --treewidth auto{hint}")


def learn_which_k_from_args(args: argparse.Namespace, say, summary) -> int:
    """Run ``--treewidth auto`` as the options say; write the result (and the plot);
    ``summary``, the line ``learn`` says of a result."""
    import twbn

    if is_cache_path(args.cache):
        raise UserError("--treewidth auto chooses k by the likelihood of held-out rows: give the data, not a cache")
    for flag in ("warm_start", "save_cache", "forbid_file", "require_file"):
        if getattr(args, flag):
            raise UserError(f"--{flag.replace('_', '-')} does not apply to --treewidth auto")
    out = Path(args.output) if args.output else Path(f"{Path(args.cache).name.split('.')[0]}.{args.method}.json")
    for path in [out] + ([Path(args.plot)] if args.plot else []):
        if not path.parent.exists():
            raise UserError(f"output folder {path.parent} does not exist")
    check_output(out, inputs=[Path(args.cache)])
    try:
        which = twbn.WhichK(max_treewidth=args.max_treewidth or 8, max_table_size=args.max_table_size,
                            max_query_seconds=args.max_query_seconds)
    except twbn.ParameterError as exc:
        raise UserError(str(exc)) from None
    sol = twbn.learn(args.cache, which, args.method, score=args.score or "bic",
                     ess=1.0 if args.ess is None else args.ess, max_parents=args.max_parents,
                     time_limit=args.time_limit, seed=args.seed, solver=args.solver,
                     forbid=args.forbid or (), require=args.require or (),
                     options=_option_pairs(args.option) or None, jobs=args.jobs or 1, started=args.started,
                     policy=args.policy_, log=None if args.quiet else say, missing=args.missing or "em",
                     missing_token=args.missing_token, discretize=args.discretize or None)
    _write_or_rescue(sol.save, out, "result")
    if not args.quiet:
        say(summary(sol))
        say(f"wrote {out}")
    if args.plot and not sol.stats["which_k"]["curve"]:
        say(f"no curve to draw in {args.plot}: {sol.stats['which_k']['why']}")
    elif args.plot:
        from twbn.experiments.plot_which_k import plot_which_k

        plot_which_k(sol.stats["which_k"], args.plot)
        if not args.quiet:
            say(f"wrote {args.plot}")
    return 0
