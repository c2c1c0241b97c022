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
import os
import sys
import time
from typing import Sequence

from twbn.experiments.cli.common import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, USER_ERRORS, UserError, process_started
from twbn.experiments.cli.parser import build_parser
# what the command line's users import by this name (the tests, ``python -m``)
from twbn.experiments.cli.check import cmd_check
from twbn.experiments.cli.common import (EXIT_INCOMPLETE, EXIT_INTERRUPTED, EXIT_NO_NETWORK, UserError, config_arg,
                                         data_arg, is_cache_path, process_started, score_summary)
from twbn.experiments.cli.experiment import cmd_experiment, cmd_report
from twbn.experiments.cli.generate import cmd_generate, cmd_sample
from twbn.experiments.cli.info import cmd_data, cmd_demo, cmd_methods, cmd_policy
from twbn.experiments.cli.learn import _bound_label, cmd_learn
from twbn.experiments.cli.network import cmd_evaluate, cmd_export, cmd_impute
from twbn.experiments.cli.score import cmd_score, score_from_args

__all__ = ["UserError", "data_arg", "config_arg", "score_summary", "cmd_score", "score_from_args",
           "cmd_generate", "cmd_sample", "is_cache_path", "process_started", "cmd_learn", "cmd_methods",
           "cmd_check", "cmd_demo", "cmd_evaluate", "cmd_export", "cmd_experiment", "cmd_data", "cmd_report",
           "build_parser", "main"]


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
