"""``twbn evaluate``, ``impute`` and ``export``: what a learned network does with new rows."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from twbn.scoring.jkl import check_output
from twbn.experiments.cli.common import UserError, _nonneg_int, _positive_float, data_arg

__all__ = ['cmd_evaluate', 'cmd_export', 'cmd_impute', 'add_impute_parser', 'add_evaluate_parser', 'add_export_parser']


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


def _rows(path: str, result: dict, missing_token: str | None = None):
    """A data file read as the result's network reads rows: its continuous columns cut
    where the network was learned on cuts (``stats["data"]["discretize"]``)."""
    from twbn.scoring.data import as_dataset, read_csv
    from twbn.scoring.discretize import recorded_rows

    recorded = (result.get("stats") or {}).get("data")
    if not (isinstance(recorded, dict) and recorded.get("discretize")):
        return read_csv(path, missing_token=missing_token)
    return as_dataset(recorded_rows(path, recorded, missing_token=missing_token), missing_token=missing_token)


def cmd_evaluate(args: argparse.Namespace) -> int:
    from twbn.scoring.likelihood import held_out_log_likelihood

    result, names, parents = _read_network(args.result)
    from twbn.scoring.likelihood import unseen_states

    train, test = _rows(data_arg(args.train), result), _rows(data_arg(args.test), result)
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
    from twbn.scoring.data import missing_summary
    from twbn.scoring.jkl import atomic_path

    out = Path(args.output)
    if not out.parent.exists():
        raise UserError(f"folder {out.parent} of the output does not exist")
    args.data = data_arg(args.data)
    check_output(out, inputs=[args.result, args.data])
    result, _, _ = _read_network(args.result)  # a clear line for a file that is not a result
    sol = twbn.Solution.from_json(args.result)
    data = _rows(args.data, result, missing_token=args.missing_token)
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

    result, names, parents = _read_network(args.result)
    out = Path(args.output)
    if not out.parent.exists():
        raise UserError(f"folder {out.parent} of the output does not exist")
    args.data = data_arg(args.data)
    check_output(out, inputs=[args.result, args.data])
    from twbn.scoring.data import state_values

    train = _rows(args.data, result)
    from twbn.scoring.discretize import recorded_rows

    raw = recorded_rows(args.data, (result.get("stats") or {}).get("data"))
    try:  # states named as the file spells them (a bool column's true, not its canonical 1)
        model = learned_model(train, names, parents, ess=args.ess, values=state_values(raw))
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


def add_impute_parser(sub) -> None:
    """``twbn impute``'s options."""
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


def add_evaluate_parser(sub) -> None:
    """``twbn evaluate``'s options."""
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


def add_export_parser(sub) -> None:
    """``twbn export``'s options."""
    xp = sub.add_parser("export", help="write a learned network as BIF (CPTs fitted on data), time exact inference")
    xp.add_argument("result", metavar="RESULT.json")
    xp.add_argument("--data", required=True, metavar="TRAIN.csv", help="data to fit the CPTs on")
    xp.add_argument("-o", "--output", required=True, metavar="NET.bif")
    xp.add_argument("--ess", type=_positive_float, default=1.0,
                    help="Dirichlet smoothing: BDeu-style pseudo-counts ess/(q*r) per cell (default 1.0)")
    xp.add_argument("--time-inference", action="store_true",
                    help="also time exact inference (pgmpy junction tree and variable elimination)")
    xp.set_defaults(func=cmd_export)
