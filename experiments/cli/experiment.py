"""``twbn experiment`` and ``report``: the harness and its tables."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from twbn.experiments.cli.common import EXIT_INCOMPLETE, EXIT_INTERRUPTED, UserError, _nonneg_int, config_arg

__all__ = ['cmd_experiment', 'cmd_report', 'add_experiment_parser', 'add_report_parser']


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


def _report_which_k(result: Path, folder: Path) -> int:
    """``twbn report RESULT.json -o DIR``: the curve of a ``--treewidth auto`` result, drawn
    to ``DIR/NAME.which-k.png`` (DIR made if missing)."""
    import json

    from twbn.experiments.plot_which_k import plot_which_k
    from twbn.scoring.errors import ParameterError

    try:
        record = json.loads(result.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise UserError(f"{result}: not a result file ({exc})") from None
    if not folder.parent.is_dir():
        raise UserError(f"cannot make the folder {folder}: {folder.parent} does not exist")
    folder.mkdir(exist_ok=True)
    try:
        out = plot_which_k((record.get("stats") or {}).get("which_k") if isinstance(record, dict) else None,
                           folder / f"{result.name.split('.')[0]}.which-k.png")
    except ParameterError as exc:
        raise UserError(f"{result}: {exc}") from None
    print(f"wrote {out}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from twbn.experiments.report import write_report, write_staged

    if len(args.store) == 1 and args.store[0].endswith(".json"):
        return _report_which_k(Path(args.store[0]), Path(args.output))
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


def add_experiment_parser(sub) -> None:
    """``twbn experiment``'s options."""
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


def add_report_parser(sub) -> None:
    """``twbn report``'s options."""
    rp = sub.add_parser("report", help="tables (Markdown, CSV) and plots (PNG) from an experiment store, or the "
                                       "curve of a --treewidth auto result")
    rp.add_argument("store", metavar="STORE.sqlite|RESULT.json", nargs="+",
                    help="the store (with --layout machado: several, or an earlier study report's cells.csv); or a "
                         "result of learn --treewidth auto, whose curve is drawn to DIR/NAME.which-k.png")
    rp.add_argument("-o", "--output", required=True, metavar="DIR")
    rp.add_argument("--layout", choices=["grid", "machado"], default="grid",
                    help="grid (default): tables and plots by data set, method and bound; machado: Machado et "
                         "al.'s study (machado-study-* configs): their Tables II-IV's gaps beside ours, held-out "
                         "likelihood and score against the bound per parent limit, inference and the class")
    rp.set_defaults(func=cmd_report)
