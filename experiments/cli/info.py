"""``twbn policy``, ``methods``, ``demo`` and ``data``: what the tool has and knows."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from twbn.experiments.cli.common import UserError

__all__ = ['cmd_data', 'cmd_demo', 'cmd_methods', 'cmd_policy', 'add_demo_parser', 'add_policy_parser',
           'add_methods_parser', 'add_data_parser']


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


def cmd_demo(args: argparse.Namespace) -> int:
    from twbn.experiments.demo import run_demo

    return run_demo(Path(args.output_dir))


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


def add_demo_parser(sub) -> None:
    """``twbn demo``'s options."""
    d = sub.add_parser("demo", help="the main job on bundled data")
    d.add_argument("--output-dir", default="out/demo", help="where demo files go (default out/demo)")
    d.set_defaults(func=cmd_demo)


def add_policy_parser(sub) -> None:
    """``twbn policy``'s options."""
    po = sub.add_parser("policy", help="list the search policy's fields: time shares and search knobs, with "
                                       "the measurements behind their defaults")
    po.add_argument("settings", nargs="*", metavar="KEY=VALUE", help="show the policy with these fields changed")
    po.set_defaults(func=cmd_policy)


def add_methods_parser(sub) -> None:
    """``twbn methods``'s options."""
    me = sub.add_parser("methods", help="list every method, built-in and plugin (entry points twbn.methods)")
    me.add_argument("--options", action="store_true", help="also list each method's options")
    me.set_defaults(func=cmd_methods)


def add_data_parser(sub) -> None:
    """``twbn data``'s options."""
    da = sub.add_parser("data", help="list the data sets twbn can read; download the DEBD sets into a data folder")
    da.add_argument("action", choices=["list", "download-debd"])
    da.add_argument("names", nargs="*", metavar="NAME", help="with download-debd: the sets, e.g. nltcs plants")
    da.add_argument("--data-dir", metavar="DIR", help="the data folder (default: $TWBN_DATA)")
    da.add_argument("--base-url", default=None, help=argparse.SUPPRESS)
    da.set_defaults(func=cmd_data)
