"""``lgstate``: the plugin's checks as a command of their own, for CI, pre-commit, and projects that
run pyright or ty instead of mypy (``python -m mypy_lgstate`` is the same command).

Each subcommand that checks runs mypy's build in this process (``mypy_build``) and keeps only the
plugin's findings: mypy's own errors never show and never change the exit status. Exit status: 0
with no findings, 1 with findings (``check``, or fewer nodes checked than ``--fail-under``), 2 when
nothing could be checked: a usage or configuration error, code mypy cannot parse, or LangGraph /
LangChain imports mypy cannot find or is told to skip; one line on stderr, no traceback.
``docs/cli.md`` explains the choices.

A subcommand is one module with its ``COMMAND``; ``SUBCOMMANDS`` lists them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Final

import mypy.version

import mypy_lgstate
from mypy_lgstate.cli import allowlist, audit, check, lock, report
from mypy_lgstate.cli.subcommands import ArgumentError, ConfigFileError, Subcommand, UsageError

# In the order ``lgstate --help`` lists them.
SUBCOMMANDS: Final[dict[str, Subcommand]] = {
    "check": check.COMMAND,
    "report": report.COMMAND,
    "lock": lock.COMMAND,
    "allowlist": allowlist.COMMAND,
    "audit": audit.COMMAND,
}


def parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The command's parser, and each subcommand's (for its usage errors)."""
    top = argparse.ArgumentParser(
        prog="lgstate",
        description="Find LangGraph state that will not survive a checkpoint, with mypy's engine.",
        epilog="Arguments after -- are passed to mypy as they are (lgstate check -- --python-version"
        " 3.12).",
    )
    top.add_argument(
        "-V", "--version", action="version",
        version=f"lgstate {mypy_lgstate.__version__} (mypy {mypy.version.__version__})",
    )
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    subparsers: dict[str, argparse.ArgumentParser] = {}
    for name, command in SUBCOMMANDS.items():
        sub = commands.add_parser(
            name, help=command.help, description=command.help,
            epilog="Arguments after -- are passed to mypy as they are." if command.runs_mypy else None,
        )
        subparsers[name] = sub
        if command.runs_mypy:
            sub.add_argument(
                "paths", nargs="*", metavar="PATH",
                help="files or directories to check (default: mypy's configured files, else .)",
            )
        sub.add_argument(
            "--config-file",
            help="the configuration file (default: the first mypy.ini, .mypy.ini, pyproject.toml or"
            " setup.cfg upward with a mypy or mypy_lgstate section)",
        )
        if command.formats:
            sub.add_argument(
                "--format", choices=command.formats, default=command.formats[0],
                help=f"the output format (default: {command.formats[0]})",
            )
        if command.output_file:
            sub.add_argument(
                "--output-file", metavar="FILE", help="write the result to FILE instead of stdout"
            )
        sub.add_argument(
            "-q", "--quiet", action="store_true",
            help="no progress line on stderr (a slow run says what it is doing)",
        )
        if command.arguments is not None:
            command.arguments(sub)
        usage = sub.format_usage().removeprefix("usage: ").rstrip()
        sub.usage = usage + " [-- MYPY_FLAGS ...]" if command.runs_mypy else usage
        sub.set_defaults(run=command.run, required_arguments=_checked_later(sub))
    return top, subparsers


def _checked_later(sub: argparse.ArgumentParser) -> tuple[tuple[str, str], ...]:
    """The subcommand's required arguments, made optional to argparse, as ``(dest, name)``:
    argparse reports a missing one before an unknown option (``lgstate audit --frobnicate`` would
    say STORE is required, not that --frobnicate is unknown), so ``main`` checks them after the
    unknown options. The usage still shows them as required (it was formatted before)."""
    required: list[tuple[str, str]] = []
    for action in sub._actions:
        if action.option_strings and action.required:
            action.required = False
            required.append((action.dest, "/".join(action.option_strings)))
        elif not action.option_strings and action.nargs is None:
            action.nargs = "?"
            required.append((action.dest, action.metavar if isinstance(action.metavar, str) else action.dest))
    return tuple(required)


def _whose(
    unknown: list[str], subparsers: dict[str, argparse.ArgumentParser], runs_mypy: bool
) -> str:
    """What to do with options this subcommand does not take: another subcommand's, or mypy's
    (for a subcommand that runs mypy); "" when there is nothing to say."""
    for option in unknown:
        flag = option.partition("=")[0]
        owners = [
            name for name, sub in subparsers.items()
            if flag.startswith("-") and flag in sub._option_string_actions
        ]
        if owners:
            named = owners[0] if len(owners) == 1 else f"{', '.join(owners[:-1])} and {owners[-1]}"
            return f" ({flag} is an option of lgstate {named})"
    return " (mypy's own flags go after --)" if runs_mypy else ""


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    # Everything after the first -- is mypy's.
    split = arguments.index("--") if "--" in arguments else len(arguments)
    top, subparsers = parser()
    args, unknown = top.parse_known_args(arguments[:split])
    args.mypy_flags = arguments[split + 1:]
    sub = subparsers[args.command]
    if args.mypy_flags and not SUBCOMMANDS[args.command].runs_mypy:
        unknown = [*unknown, "--", *args.mypy_flags]
    if unknown:
        hint = _whose(unknown, subparsers, SUBCOMMANDS[args.command].runs_mypy)
        sub.error(f"unrecognized arguments: {' '.join(unknown)}{hint}")
    missing = [name for dest, name in args.required_arguments if getattr(args, dest) is None]
    if missing:
        sub.error(f"the following arguments are required: {', '.join(missing)}")
    try:
        status: int = args.run(args)
    except ArgumentError as error:
        sub.error(str(error))
    except ConfigFileError as error:
        print(error, file=sys.stderr)
        return 2
    except UsageError as error:
        print(f"lgstate: {error}", file=sys.stderr)
        return 2
    return status
