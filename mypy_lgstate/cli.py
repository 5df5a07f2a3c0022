"""``lgstate``: the plugin's checks as a command of their own, for CI, pre-commit, and projects that
run pyright or ty instead of mypy (``python -m mypy_lgstate`` is the same command).

Each subcommand runs mypy's build in this process, with the plugin enabled whether or not the
project's mypy configuration lists it, and keeps only the plugin's findings (their codes start with
``lgstate-``): mypy's own errors never show and never change the exit status. Exit status: 0 with no
findings, 1 with findings (``check``), 2 for a usage or configuration error, or code mypy cannot
parse; one line on stderr, no traceback. ``docs/cli.md`` explains the choices.

A subcommand is one function registered with ``@subcommand``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Final, NamedTuple

import mypy.version
from mypy.build import build
from mypy.errors import CompileError
from mypy.main import process_options
from mypy.modulefinder import BuildSource
from mypy.options import Options
from mypy.plugin import Plugin, ReportConfigContext

import mypy_lgstate
from mypy_lgstate import checks, config, coverage, lockfile
from mypy_lgstate.findings import FORMATS, Finding, parse_mypy_json
from mypy_lgstate import plugin as lgstate_plugin
from mypy_lgstate.plugin import LIBRARY_DIRS

PLUGIN: Final = "mypy_lgstate.plugin"
# The command's own cache, inside the project's mypy cache directory (and so under the .gitignore
# mypy writes there): the command always loads the plugin, and may run another profile, so sharing
# mypy's cache would discard it on every switch between ``mypy`` and ``lgstate``.
CACHE_SUBDIR: Final = "lgstate"
PROGRESS_DELAY: Final = 3.0  # seconds before a run says what it is doing


class UsageError(Exception):
    """A problem the user must fix before anything can be checked: the message is the whole line."""


class Subcommand(NamedTuple):
    help: str
    formats: tuple[str, ...]
    run: Callable[[argparse.Namespace], int]
    arguments: Callable[[argparse.ArgumentParser], None] | None


SUBCOMMANDS: dict[str, Subcommand] = {}


def subcommand(
    name: str,
    *,
    help: str,
    formats: Sequence[str],
    arguments: Callable[[argparse.ArgumentParser], None] | None = None,
) -> Callable[[Callable[[argparse.Namespace], int]], Callable[[argparse.Namespace], int]]:
    """Register ``lgstate NAME``. Every subcommand takes PATHS and ``--config-file``, and
    ``--format`` when it has ``formats`` (the first is the default); ``arguments`` adds its own."""

    def register(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
        SUBCOMMANDS[name] = Subcommand(help, tuple(formats), run, arguments)
        return run

    return register


# Subcommands ------------------------------------------------------------------------------------


def _profile_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--profile",
        choices=config.PROFILES,
        help="the serializer rules to apply, instead of the configured profile",
    )


@subcommand(
    "check",
    help="report the values that will not survive a checkpoint (exit 1 when there are some)",
    formats=tuple(FORMATS),
    arguments=_profile_argument,
)
def check(args: argparse.Namespace) -> int:
    outcome = run_mypy(args.paths, args.config_file, profile=args.profile)
    print(FORMATS[args.format](outcome.findings, outcome.checked))
    return 1 if outcome.findings else 0


@subcommand(
    "report",
    help="list each graph's schemas, channels, nodes (checked, unchecked, opaque), write sites",
    formats=tuple(coverage.FORMATS),
)
def report(args: argparse.Namespace) -> int:
    recorder = coverage.CoverageRecorder()
    outcome = run_mypy(args.paths, args.config_file, recorder=recorder)
    print(coverage.FORMATS[args.format](recorder, len(outcome.findings)))
    return 0


def _check_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 when the lock file is missing or stale, 0 when it is current",
    )


@subcommand(
    "lock",
    help="record the checkpointed classes of every graph state in the lock file (lgstate-drift"
    " reports incompatible changes to them)",
    formats=(),
    arguments=_check_argument,
)
def lock(args: argparse.Namespace) -> int:
    roots: lockfile.LockData = {}
    outcome = run_mypy(args.paths, args.config_file, lock_roots=roots)
    options = config.load_config(outcome.config_file)
    path = lockfile.lock_path(options.lock_file, outcome.config_file)
    shown = os.path.relpath(path)
    text = lockfile.render(roots)
    classes = sum(len(classes) for classes in roots.values())
    summary = f"{_count(len(roots), 'graph-state root')}, {_count(classes, 'checkpointed class')}"
    if args.check:
        try:
            with open(path, encoding="utf-8") as f:
                current = f.read() == text
        except FileNotFoundError:
            print(f"{shown} is missing: run lgstate lock to write it ({summary})")
            return 1
        if not current:
            print(f"{shown} is stale: review the changes, then run lgstate lock to accept them")
            return 1
        print(f"{shown} is current ({summary})")
        return 0
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {shown} ({summary})")
    return 0


def _count(number: int, noun: str) -> str:
    plural = "es" if noun.endswith("s") else "s"
    return f"{number} {noun}" + ("" if number == 1 else plural)


# Running mypy -----------------------------------------------------------------------------------


class Outcome(NamedTuple):
    findings: list[Finding]
    checked: int  # source files given to mypy
    config_file: str | None  # the mypy configuration file read, if any


def run_mypy(
    paths: Sequence[str],
    config_file: str | None,
    *,
    profile: config.Profile | None = None,
    recorder: coverage.CoverageRecorder | None = None,
    lock_roots: lockfile.LockData | None = None,
) -> Outcome:
    """Run mypy's build on ``paths`` (else the configured ``files``, else the current directory).

    ``lock_roots`` receives the snapshot of every graph-state root (``lgstate lock``)."""
    sources, options = _mypy_options(paths, config_file)
    findings: list[Finding] = []
    # mypy's own errors: hidden, unless one of them stopped the build (code mypy cannot parse).
    others: list[str] = []

    def flush_errors(filename: str | None, messages: list[str], is_serious: bool) -> None:
        for message in messages:
            finding = parse_mypy_json(message)
            if finding is not None:
                findings.append(finding)
            else:
                others.append(message)

    # Like the coverage report, the snapshots come from hooks, which cached modules do not fire.
    recording = recorder is not None or lock_roots is not None
    with _installed(profile, recorder, lock_roots), _progress(len(sources), options.cache_dir):
        extra_plugins: list[Plugin] = [_CommandPlugin(options, recording=recording)]
        if PLUGIN not in options.plugins or not options.config_file:
            # mypy loads the plugins its configuration lists, and only from a configuration file.
            extra_plugins.append(lgstate_plugin.plugin(mypy.version.__version__)(options))
        try:
            build(
                sources,
                options,
                flush_errors=flush_errors,
                stdout=sys.stderr,  # whatever mypy prints itself must not mix with json or sarif
                stderr=sys.stderr,
                extra_plugins=extra_plugins,
            )
        except CompileError as error:
            raise UsageError(_blocking_message([*others, *error.messages])) from None
    return Outcome(findings, len(sources), options.config_file)


def _mypy_options(
    paths: Sequence[str], config_file: str | None
) -> tuple[list[BuildSource], Options]:
    """mypy's own reading of its command line and configuration, then what this command needs."""
    flags = ["--config-file", config_file] if config_file else []
    # mypy prints its own usage errors (a missing file or config file) with exit status 2.
    sources, options = process_options(
        [*flags, *paths], stdout=sys.stderr, stderr=sys.stderr, require_targets=False,
        program="lgstate",
    )
    if not sources and not paths:
        sources, options = process_options(
            [*flags, os.curdir], stdout=sys.stderr, stderr=sys.stderr, program="lgstate"
        )
    options.output = "json"  # one finding per line, with its code, whatever the user's options
    # The profile override and the coverage recorder live in this process: no worker processes.
    options.num_workers = 0
    if options.cache_dir != os.devnull:
        options.cache_dir = os.path.join(options.cache_dir, CACHE_SUBDIR)
    return sources, options


class _CommandPlugin(Plugin):
    """What the command adds to the cache data of each of the user's modules (those outside
    site-packages and typeshed; libraries keep their cache).

    - The plugin's version: mypy records it only for plugins its configuration lists, and the
      command also runs the plugin when the configuration does not.
    - For ``report`` and ``lock``, a stamp that differs on every run. Both are built from the hooks
      that fire while a module is checked, and a module loaded from the cache fires none: the stamp
      makes mypy check exactly the user's modules again.
    """

    def __init__(self, options: Options, *, recording: bool) -> None:
        super().__init__(options)
        self._stamp = os.urandom(8).hex() if recording else None

    def report_config_data(self, ctx: ReportConfigContext) -> object:
        if any(library in ctx.path for library in LIBRARY_DIRS):
            return None
        return [lgstate_plugin.__version__, self._stamp]


@contextmanager
def _installed(
    profile: config.Profile | None,
    recorder: coverage.CoverageRecorder | None,
    lock_roots: lockfile.LockData | None,
) -> Iterator[None]:
    """The profile override, the recorder and the lock's snapshots, for one build."""
    config.profile_override, checks.recorder, lockfile.collected = profile, recorder, lock_roots
    try:
        yield
    finally:
        config.profile_override, checks.recorder, lockfile.collected = None, None, None


@contextmanager
def _progress(sources: int, cache_dir: str) -> Iterator[None]:
    """One line on stderr when the build is still running after a few seconds (a first run, without
    a cache, analyses LangGraph and its dependencies)."""
    files = f"{sources} source file" + ("" if sources == 1 else "s")
    cache = "no cache" if cache_dir == os.devnull else f"cache in {cache_dir}"
    line = f"lgstate: checking {files} with mypy ({cache}; a first run takes longest)"
    timer = threading.Timer(PROGRESS_DELAY, lambda: print(line, file=sys.stderr, flush=True))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def _blocking_message(messages: list[str]) -> str:
    """The first error that stopped mypy (code it cannot parse), as one line."""
    for message in reversed(messages):  # mypy stops right after the error that blocks it
        try:
            error = json.loads(message)
        except ValueError:
            continue
        if isinstance(error, dict) and error.get("severity") == "error" and error.get("file"):
            where = f"{error['file']}:{error['line']}"
            return f"mypy cannot analyse {where}, so nothing was checked: {error['message']}"
    first = next((m for m in messages if m.strip()), "mypy stopped")
    return f"mypy cannot analyse the code, so nothing was checked: {first.strip()}"


# Entry point ------------------------------------------------------------------------------------


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="lgstate",
        description="Find LangGraph state that will not survive a checkpoint, with mypy's engine.",
    )
    top.add_argument("--version", action="version", version=f"lgstate {mypy_lgstate.__version__}")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, command in SUBCOMMANDS.items():
        sub = commands.add_parser(name, help=command.help, description=command.help)
        sub.add_argument(
            "paths", nargs="*", metavar="PATH",
            help="files or directories to check (default: mypy's configured files, else .)",
        )
        sub.add_argument(
            "--config-file", help="the mypy configuration file (default: mypy's own discovery)"
        )
        if command.formats:
            sub.add_argument(
                "--format", choices=command.formats, default=command.formats[0],
                help=f"the output format (default: {command.formats[0]})",
            )
        if command.arguments is not None:
            command.arguments(sub)
        sub.set_defaults(run=command.run)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        status: int = args.run(args)
    except UsageError as error:
        print(f"lgstate: {error}", file=sys.stderr)
        return 2
    return status
