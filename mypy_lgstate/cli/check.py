"""``lgstate check``: the findings, in the format asked for, and the coverage line (exit 1 with
findings, or with fewer graph nodes checked than ``--fail-under``)."""

from __future__ import annotations

import argparse
import sys
from typing import Final

from mypy_lgstate.cli.findings import FORMATS
from mypy_lgstate.cli.mypy_build import run_mypy
from mypy_lgstate.cli.subcommands import Subcommand, output
from mypy_lgstate.core import config
from mypy_lgstate.routes.coverage import CoverageRecorder


def _check_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--profile",
        choices=config.PROFILES,
        help="the serializer rules to apply, instead of the configured profile",
    )
    parser.add_argument(
        "--exit-zero",
        action="store_true",
        help="exit 0 even when there are findings (2 still means nothing could be checked)",
    )
    parser.add_argument(
        "--fail-under",
        type=_percent,
        metavar="PERCENT",
        help="exit 1 when the share of graph nodes checked is lower (no node at all counts as 100)",
    )


def _percent(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 100, not {text!r}")
    return value


def check(args: argparse.Namespace) -> int:
    recorder = CoverageRecorder()
    outcome = run_mypy(args, profile=args.profile, recorder=recorder)
    covered = recorder.coverage()
    output(args, FORMATS[args.format](outcome.findings, outcome.checked, covered))
    if args.format == "gitlab":  # the report has no place for it: the job's log has
        print(covered.line(), file=sys.stderr)
    status = 1 if outcome.findings and not args.exit_zero else 0
    if args.fail_under is not None and covered.percent() < args.fail_under:
        print(
            f"lgstate: {covered.percent():.1f}% of the graph nodes are checked, less than"
            f" --fail-under {args.fail_under:g}",
            file=sys.stderr,
        )
        status = 1
    return status


COMMAND: Final = Subcommand(
    help="report the values that will not survive a checkpoint (exit 1 when there are some)",
    formats=tuple(FORMATS),
    run=check,
    arguments=_check_arguments,
)
