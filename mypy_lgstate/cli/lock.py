"""``lgstate lock``: the checkpointed classes of every graph state, written to the lock file that
``lgstate-drift`` compares with; ``--check`` writes nothing and lists what changed
(``lockdiff``)."""

from __future__ import annotations

import argparse
import os
from typing import Final

from mypy_lgstate.cli import lockdiff
from mypy_lgstate.cli.mypy_build import Outcome, lgstate_config, run_mypy
from mypy_lgstate.cli.subcommands import ConfigFileError, Subcommand, UsageError, os_error
from mypy_lgstate.core import config, langgraph_json, lockfile


def _lock_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 when the lock file is missing or stale, 0 when it is current",
    )


def lock(args: argparse.Namespace) -> int:
    # The lock file is read before the build: a path that cannot be used, or a broken file under
    # --check, is reported at once rather than after mypy has run.
    path, shown, old = _lock_file(*lgstate_config(args.config_file), writing=not args.check)
    if args.check and old is not None:
        # A file that cannot be read stops the check as it stops lgstate check and mypy: the line
        # names the file (exit 2); it is not a stale lock (exit 1), which lists what changed.
        try:
            lockfile.parse_lock(old, shown)
        except lockfile.LockFileError as error:
            raise ConfigFileError(str(error)) from None
    roots: lockfile.LockData = {}
    outcome = run_mypy(args, lock_roots=roots, default_targets=_deployed(args.config_file))
    if lockfile.lock_path(outcome.config.lock_file, outcome.config_file) != path:
        # No file upward, and mypy found its user configuration file: the options came from there.
        path, shown, old = _lock_file(outcome.config_file, outcome.config, writing=not args.check)
    return _finish_lock(args, outcome, roots, path, shown, old)


def _deployed(config_file: str | None) -> list[str] | None:
    """What LangGraph's server deploys (the graphs of ``langgraph.json``): read without paths,
    instead of the whole directory (tests and scripts build graphs that are never checkpointed)."""
    found = langgraph_json.find_langgraph_json(config_file or config.find_config_file())
    if found is None:
        return None
    try:
        return langgraph_json.mypy_targets(langgraph_json.read_langgraph_json(found)) or None
    except langgraph_json.LangGraphJsonError as error:
        raise UsageError(str(error)) from None


def _lock_file(
    config_file: str | None, options: config.LGStateConfig, *, writing: bool
) -> tuple[str, str, bytes | None]:
    """The lock file's path, as messages show it, and its bytes (``None`` when there is none)."""
    path = lockfile.lock_path(options.lock_file, config_file)
    shown = lockfile.shown_path(path)
    return path, shown, _read_lock_text(path, shown, writing=writing)


def _finish_lock(
    args: argparse.Namespace,
    outcome: Outcome,
    roots: lockfile.LockData,
    path: str,
    shown: str,
    old: bytes | None,
) -> int:
    text = lockfile.render(roots)
    classes = sum(len(classes) for classes in roots.values())
    summary = f"{_count(len(roots), 'graph-state root')}, {_count(classes, 'checkpointed class')}"
    if args.check:
        if old is None:
            print(f"{shown} is missing: run lgstate lock to write it ({summary})")
            return 1
        if old == text.encode():
            print(f"{shown} is current ({summary})")
            return 0
        try:
            locked = lockfile.parse_lock(old, shown).roots
        except lockfile.LockFileError as error:
            raise ConfigFileError(str(error)) from None
        changes = lockdiff.changes(
            locked,
            roots,
            json_profile=outcome.config.profile == "json",
            importable=outcome.importable,
        )
        print(f"{shown} is stale: {lockdiff.summary(changes)}; review the changes, then run"
              " lgstate lock to accept them")
        for line in lockdiff.as_lines(changes):
            print(line)
        return 1
    if not roots and old is not None:
        try:
            had = len(lockfile.parse_lock(old, shown).roots)
        except lockfile.LockFileError:
            had = 0  # a broken file can always be written again
        if had:
            raise UsageError(
                f"{shown} records {_count(had, 'graph-state root')} and this run found none, so it"
                " was not replaced: check the paths and mypy's configured files (delete the file to"
                " start over)"
            )
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as error:
        raise UsageError(f"{shown}: cannot write the lock file: {os_error(error, path)}") from None
    print(f"wrote {shown} ({summary})")
    return 0


def _read_lock_text(path: str, shown: str, *, writing: bool) -> bytes | None:
    """The lock file's bytes, ``None`` when there is none. A path that can be neither read nor
    written (a directory, a symbolic link to a missing folder) is a usage error."""
    verb = "write" if writing else "read"
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError as error:
        if os.path.islink(path) and not (
            writing and os.path.isdir(os.path.dirname(os.path.realpath(path)))
        ):
            problem = os_error(error, path)
            raise UsageError(f"{shown}: cannot {verb} the lock file: {problem}") from None
        return None
    except OSError as error:
        raise UsageError(f"{shown}: cannot {verb} the lock file: {os_error(error, path)}") from None


def _count(number: int, noun: str) -> str:
    plural = "es" if noun.endswith("s") else "s"
    return f"{number} {noun}" + ("" if number == 1 else plural)


COMMAND: Final = Subcommand(
    help="record the checkpointed classes of every graph state in the lock file (lgstate-drift"
    " reports incompatible changes to them)",
    formats=(),
    run=lock,
    arguments=_lock_arguments,
    output_file=False,
)
