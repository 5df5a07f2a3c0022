"""``lgstate check``: the findings, in the format asked for, and the coverage line (exit 1 with
findings, or with fewer graph nodes checked than ``--fail-under``)."""

from __future__ import annotations

import argparse
import sys
from typing import Final, NamedTuple

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


class Threshold(NamedTuple):
    """``--fail-under``: the share asked for, and the decimals the share checked is shown with
    (as many as the threshold has, at least one)."""

    percent: float
    decimals: int


def _percent(text: str) -> Threshold:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 100, not {text!r}")
    decimals = len(text.partition(".")[2]) if "e" not in text.lower() else 1
    return Threshold(value, max(1, decimals))


def under(share: float, threshold: Threshold) -> str | None:
    """The line that fails ``--fail-under``, or ``None``. The share is compared as it is shown,
    as coverage.py compares its total: 82.35% of nodes, shown "82.4%", is not under 82.4. Only
    100 means every node (99.99%, shown "100.0%", is under it), and is then shown with the
    decimals that tell it apart."""
    decimals = threshold.decimals
    shown = f"{share:.{decimals}f}"
    if threshold.percent == 100 and share < 100:
        while float(shown) >= 100 and decimals < 15:
            decimals += 1
            shown = f"{share:.{decimals}f}"
    elif float(shown) >= threshold.percent:
        return None
    return (
        f"lgstate: {shown}% of the graph nodes are checked, less than --fail-under"
        f" {threshold.percent:g}"
    )


def check(args: argparse.Namespace) -> int:
    recorder = CoverageRecorder()
    outcome = run_mypy(args, profile=args.profile, recorder=recorder)
    covered = recorder.coverage()
    output(args, FORMATS[args.format](outcome.findings, outcome.checked, covered))
    if args.format == "gitlab":  # the report has no place for it: the job's log has
        print(covered.line(), file=sys.stderr)
    status = 1 if outcome.findings and not args.exit_zero else 0
    failed = under(covered.percent(), args.fail_under) if args.fail_under is not None else None
    if failed is not None:
        print(failed, file=sys.stderr)
        status = 1
    return status


COMMAND: Final = Subcommand(
    help="report the values that will not survive a checkpoint (exit 1 when there are some)",
    formats=tuple(FORMATS),
    run=check,
    arguments=_check_arguments,
)
