"""``lgstate audit STORE --graph MODULE:ATTR``: the stored threads against today's graph.

The command line of ``mypy_lgstate.runtime.audit`` (docs/audit.md). It runs no mypy: the audit
imports the application's graph and reads the store, as the runtime checker does.
"""

from __future__ import annotations

import argparse
import os
from typing import Final

from mypy_lgstate.cli.subcommands import ArgumentError, Subcommand, UsageError, output
from mypy_lgstate.runtime.audit import AuditInputError

FORMATS: Final = ("text", "json", "markdown", "sarif")
DEFAULT_EXAMPLES: Final = 5


def _positive(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {number}")
    return number


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "store", metavar="STORE",
        help="a SQLite file (or sqlite:///path), a postgresql:// URL, or MODULE:ATTR naming a"
        " checkpointer (or a function of no arguments that returns one); opened read-only",
    )
    parser.add_argument(
        "--graph", action="append", metavar="MODULE:ATTR",
        help="today's graph: a compiled graph, a StateGraph, or a function that returns one"
        " (repeat for a store several graphs share; default: the graphs of langgraph.json)",
    )
    parser.add_argument(
        "--all-checkpoints", action="store_true",
        help="audit every checkpoint of each thread, not only its latest",
    )
    parser.add_argument(
        "--threads", type=_positive, default=DEFAULT_EXAMPLES, metavar="N",
        help=f"list up to N example thread ids per problem (default: {DEFAULT_EXAMPLES})",
    )
    parser.add_argument(
        "--jobs", type=_positive, default=1, metavar="N",
        help="audit the threads in N processes (SQLite and PostgreSQL stores; same output)",
    )
    parser.add_argument(
        "--exit-zero", action="store_true",
        help="exit 0 even when there are findings (2 still means nothing could be audited)",
    )


def audit(args: argparse.Namespace) -> int:
    # Imported here: the other subcommands never need the audit's modules.
    from mypy_lgstate.runtime.audit.formats import FORMATS as WRITERS
    from mypy_lgstate.runtime.audit.graphs import project_graphs
    from mypy_lgstate.runtime.audit.run import AuditOptions, ProgressLine, run_audit

    if args.config_file is not None and not os.path.isfile(args.config_file):
        raise ArgumentError(f"--config-file {args.config_file}: no such file")
    try:
        graphs = args.graph or project_graphs(args.config_file)
    except AuditInputError as error:
        raise ArgumentError(str(error)) from None
    options = AuditOptions(
        store=args.store,
        graphs=tuple(graphs),
        all_checkpoints=args.all_checkpoints,
        examples=args.threads,
        jobs=args.jobs,
        config_file=args.config_file,
        cwd=os.getcwd(),
    )
    progress = ProgressLine(quiet=args.quiet)
    try:
        result = run_audit(options, progress)
    except AuditInputError as error:
        raise UsageError(str(error)) from None
    finally:
        progress.done()
    output(args, WRITERS[args.format](result))
    return 1 if result.tally.problems and not args.exit_zero else 0


COMMAND: Final = Subcommand(
    help="check that the threads already stored will resume on today's graph (exit 1 when some"
    " will not)",
    formats=FORMATS,
    run=audit,
    arguments=_arguments,
    runs_mypy=False,
)
