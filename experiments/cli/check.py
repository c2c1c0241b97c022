"""``twbn check``: a result file re-verified against its cache or its data."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from twbn.experiments.cli.common import UserError, _nonneg_int, data_arg, is_cache_path

__all__ = ['cmd_check', 'add_check_parser']


def cmd_check(args: argparse.Namespace) -> int:
    from twbn.formulations.verify import verify_result
    from twbn.scoring.jkl import read_jkl

    from_data = not is_cache_path(args.cache)
    if from_data:  # a result learned from data: its families re-scored from the data
        from twbn.formulations.verify import verify_against_data
        from twbn.scoring.data import read_as_recorded
        from twbn.scoring.discretize import recorded_rows

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
        recorded = (result.get("stats") or {}).get("data")
        source = read_as_recorded(recorded_rows(data_arg(args.cache), recorded), recorded)
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


def add_check_parser(sub) -> None:
    """``twbn check``'s options."""
    ch = sub.add_parser("check", help="verify a result against a cache, or against the data it was learned from "
                                      "(exit 0 iff valid)")
    ch.add_argument("cache", metavar="CACHE.jkl|DATA.csv")
    ch.add_argument("result", metavar="RESULT.json")
    ch.add_argument("--treewidth", type=_nonneg_int, default=None, metavar="K")
    ch.add_argument("--exact", action="store_true",
                    help="also re-solve by DP (small problems) and confirm the claimed optimum and bound")
    ch.set_defaults(func=cmd_check)
