"""``twbn generate`` and ``sample``: random networks, and rows sampled from a network."""

from __future__ import annotations

import argparse
from pathlib import Path

from twbn.scoring.jkl import check_output
from twbn.experiments.cli.common import UserError, _nonneg_int

__all__ = ['cmd_generate', 'cmd_sample', 'add_generate_parser', 'add_sample_parser']


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


def add_generate_parser(sub) -> None:
    """``twbn generate``'s options."""
    g = sub.add_parser("generate", help="a random network (BNGenerator-style) as BIF, and optionally data from it")
    g.add_argument("--variables", type=_nonneg_int, required=True, metavar="N")
    g.add_argument("--seed", type=_nonneg_int, default=0)
    g.add_argument("--max-parents", type=_nonneg_int, default=6, help="most parents per variable (default 6)")
    g.add_argument("--rows", type=_nonneg_int, default=0, help="also sample this many rows to PREFIX.csv.gz")
    g.add_argument("-o", "--output", required=True, metavar="PREFIX", help="writes PREFIX.bif.gz (+ PREFIX.csv.gz)")
    g.set_defaults(func=cmd_generate)


def add_sample_parser(sub) -> None:
    """``twbn sample``'s options."""
    sm = sub.add_parser("sample", help="forward-sample rows from a BIF network into a CSV")
    sm.add_argument("network", metavar="NET.bif", help="BIF, or BIF.gz")
    sm.add_argument("--rows", type=_nonneg_int, required=True)
    sm.add_argument("--seed", type=_nonneg_int, default=0)
    sm.add_argument("-o", "--output", required=True, metavar="DATA.csv", help="CSV (gzip if it ends in .gz)")
    sm.set_defaults(func=cmd_sample)
