"""What every subcommand of ``lgstate`` shares: how it is described to the parser (``Subcommand``),
the errors that stop it (one line on stderr, exit status 2) and where its result goes
(``output``). The table of subcommands is ``command.SUBCOMMANDS``, which imports each one's
module."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import NamedTuple


class UsageError(Exception):
    """A problem the user must fix before anything can be checked: the message is the whole line."""


class ConfigFileError(UsageError):
    """A configuration file that cannot be parsed, or a bad option: the line names the file, as
    mypy's own configuration errors do (and as the plugin reports them in a mypy run)."""


class ArgumentError(UsageError):
    """A bad command line: shown after the subcommand's usage, as argparse shows its own errors."""


class Subcommand(NamedTuple):
    """One ``lgstate NAME``. Every subcommand takes ``--config-file`` and ``--quiet``; one that
    ``runs_mypy`` takes PATHS and mypy's own flags after ``--``; ``--format`` when it has
    ``formats`` (the first is the default), ``--output-file`` unless ``output_file`` is false;
    ``arguments`` adds its own."""

    help: str
    formats: tuple[str, ...]
    run: Callable[[argparse.Namespace], int]
    arguments: Callable[[argparse.ArgumentParser], None] | None = None
    output_file: bool = True
    runs_mypy: bool = True  # takes PATHS and mypy's own flags after --


def output(args: argparse.Namespace, text: str) -> None:
    """The result, on stdout or in ``--output-file`` (nothing at all when it is empty)."""
    if args.output_file is None:
        if text:
            try:
                print(text)
            except BrokenPipeError:  # the reader is gone (`lgstate check | head`): nothing to add
                pass
        return
    try:
        with open(args.output_file, "w", encoding="utf-8") as f:
            f.write(text + "\n" if text else "")
    except OSError as error:
        raise UsageError(
            f"{args.output_file}: cannot write the output file: {os_error(error, args.output_file)}"
        ) from None


def os_error(error: OSError, path: str) -> str:
    problem = error.strerror or str(error)
    if os.path.islink(path) and not os.path.exists(path):
        problem += f" (a symbolic link to {os.readlink(path)}, which does not exist)"
    return problem
