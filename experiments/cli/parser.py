"""The ``twbn`` argument parser: each command adds its own options (``add_COMMAND_parser`` in
its module), in the order ``twbn --help`` lists them."""

from __future__ import annotations

import argparse

from twbn.experiments.cli.check import add_check_parser
from twbn.experiments.cli.experiment import add_experiment_parser, add_report_parser
from twbn.experiments.cli.generate import add_generate_parser, add_sample_parser
from twbn.experiments.cli.info import add_data_parser, add_demo_parser, add_methods_parser, add_policy_parser
from twbn.experiments.cli.learn import add_learn_parser
from twbn.experiments.cli.network import add_evaluate_parser, add_export_parser, add_impute_parser
from twbn.experiments.cli.score import add_score_parser

__all__ = ["build_parser"]

#: The commands, in ``twbn --help``'s order.
COMMANDS = (add_score_parser, add_generate_parser, add_sample_parser, add_demo_parser, add_learn_parser,
            add_policy_parser, add_methods_parser, add_check_parser, add_impute_parser, add_evaluate_parser,
            add_export_parser, add_experiment_parser, add_data_parser, add_report_parser)


def build_parser() -> argparse.ArgumentParser:
    """The ``twbn`` parser: a subcommand per command, each with its ``func``."""
    p = argparse.ArgumentParser(
        prog="twbn", description="Learning Bayesian networks of bounded treewidth by mathematical programming."
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in COMMANDS:
        add(sub)
    return p
