"""``lgstate``: the plugin's checks as a command of their own, for CI, pre-commit, and projects that
run pyright or ty instead of mypy (``python -m mypy_lgstate`` is the same command).

Each subcommand runs mypy's build in this process, with the plugin enabled whether or not the
project's mypy configuration lists it, and keeps only the plugin's findings (their codes start with
``lgstate-``): mypy's own errors never show and never change the exit status. Exit status: 0 with no
findings, 1 with findings (``check``, or fewer nodes checked than ``--fail-under``), 2 when nothing
could be checked: a usage or configuration error, code mypy cannot parse, or LangGraph / LangChain
imports mypy cannot find or is told to skip; one line on stderr, no traceback. ``docs/cli.md``
explains the choices.

A subcommand is one function registered with ``@subcommand``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Final, NamedTuple

import mypy.version
from mypy.build import BuildResult, SuppressionReason, build
from mypy.errors import CompileError
from mypy.main import process_options
from mypy.lookup import lookup_fully_qualified
from mypy.modulefinder import BuildSource
from mypy.nodes import TypeAlias, TypeInfo
from mypy.options import Options
from mypy.plugin import Plugin, ReportConfigContext

import mypy_lgstate
from mypy_lgstate import plugin as lgstate_plugin
from mypy_lgstate.checker import checks, report as reporting
from mypy_lgstate.cli import coverage, lockdiff
from mypy_lgstate.cli.findings import FORMATS, Finding, once_per_problem, parse_mypy_json
from mypy_lgstate.routes import discovery
from mypy_lgstate.core import config, lockfile
from mypy_lgstate.core.libraries import is_library

PLUGIN: Final = "mypy_lgstate.plugin"
# The command's own cache, inside the project's mypy cache directory (and so under the .gitignore
# mypy writes there): the command always loads the plugin, and may run another profile, so sharing
# mypy's cache would discard it on every switch between ``mypy`` and ``lgstate``.
CACHE_SUBDIR: Final = "lgstate"
PROGRESS_DELAY: Final = 3.0  # seconds before a run says what it is doing


class UsageError(Exception):
    """A problem the user must fix before anything can be checked: the message is the whole line."""


class ConfigFileError(UsageError):
    """A configuration file that cannot be parsed, or a bad option: the line names the file, as
    mypy's own configuration errors do (and as the plugin reports them in a mypy run)."""


class ArgumentError(UsageError):
    """A bad command line: shown after the subcommand's usage, as argparse shows its own errors."""


class Subcommand(NamedTuple):
    help: str
    formats: tuple[str, ...]
    run: Callable[[argparse.Namespace], int]
    arguments: Callable[[argparse.ArgumentParser], None] | None
    output_file: bool
    runs_mypy: bool  # takes PATHS and mypy's own flags after --


SUBCOMMANDS: dict[str, Subcommand] = {}


def subcommand(
    name: str,
    *,
    help: str,
    formats: Sequence[str],
    arguments: Callable[[argparse.ArgumentParser], None] | None = None,
    output_file: bool = True,
    runs_mypy: bool = True,
) -> Callable[[Callable[[argparse.Namespace], int]], Callable[[argparse.Namespace], int]]:
    """Register ``lgstate NAME``. Every subcommand takes ``--config-file`` and ``--quiet``; one that
    ``runs_mypy`` takes PATHS and mypy's own flags after ``--``; ``--format`` when it has
    ``formats`` (the first is the default), ``--output-file`` unless ``output_file`` is false;
    ``arguments`` adds its own."""

    def register(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
        SUBCOMMANDS[name] = Subcommand(help, tuple(formats), run, arguments, output_file, runs_mypy)
        return run

    return register


# Subcommands ------------------------------------------------------------------------------------


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


@subcommand(
    "check",
    help="report the values that will not survive a checkpoint (exit 1 when there are some)",
    formats=tuple(FORMATS),
    arguments=_check_arguments,
)
def check(args: argparse.Namespace) -> int:
    recorder = coverage.CoverageRecorder()
    outcome = run_mypy(args, profile=args.profile, recorder=recorder)
    covered = recorder.coverage()
    _output(args, FORMATS[args.format](outcome.findings, outcome.checked, covered))
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


@subcommand(
    "report",
    help="list each graph's schemas, channels, nodes (checked, unchecked, opaque), write sites",
    formats=tuple(coverage.FORMATS),
)
def report(args: argparse.Namespace) -> int:
    recorder = coverage.CoverageRecorder()
    # The report does not need the lock file: a broken one must not stop it.
    outcome = run_mypy(args, recorder=recorder, lock_optional=True)
    _output(args, coverage.FORMATS[args.format](recorder, len(outcome.findings)))
    return 0


def _lock_arguments(parser: argparse.ArgumentParser) -> None:
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
    arguments=_lock_arguments,
    output_file=False,
)
def lock(args: argparse.Namespace) -> int:
    # The lock file is read before the build: a path that cannot be used, or a broken file under
    # --check, is reported at once rather than after mypy has run.
    path, shown, old = _lock_file(*_lgstate_config(args.config_file), writing=not args.check)
    if args.check and old is not None:
        try:
            lockfile.parse_lock(old, shown)
        except lockfile.LockFileError as error:
            print(error)
            return 1
    roots: lockfile.LockData = {}
    outcome = run_mypy(args, lock_roots=roots)
    if lockfile.lock_path(outcome.config.lock_file, outcome.config_file) != path:
        # No file upward, and mypy found its user configuration file: the options came from there.
        path, shown, old = _lock_file(outcome.config_file, outcome.config, writing=not args.check)
    return _finish_lock(args, outcome, roots, path, shown, old)


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
            print(error)
            return 1
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
        raise UsageError(f"{shown}: cannot write the lock file: {_os_error(error, path)}") from None
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
            raise UsageError(f"{shown}: cannot {verb} the lock file: {_os_error(error, path)}") from None
        return None
    except OSError as error:
        raise UsageError(f"{shown}: cannot {verb} the lock file: {_os_error(error, path)}") from None


def _os_error(error: OSError, path: str) -> str:
    problem = error.strerror or str(error)
    if os.path.islink(path) and not os.path.exists(path):
        problem += f" (a symbolic link to {os.readlink(path)}, which does not exist)"
    return problem


def _count(number: int, noun: str) -> str:
    plural = "es" if noun.endswith("s") else "s"
    return f"{number} {noun}" + ("" if number == 1 else plural)


def _output(args: argparse.Namespace, text: str) -> None:
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
            f"{args.output_file}: cannot write the output file: {_os_error(error, args.output_file)}"
        ) from None


# Running mypy -----------------------------------------------------------------------------------

# The libraries the checks recognize the graphs by: when the checked code imports one of them and mypy
# cannot find it, no graph is recognized and every check would pass. Their distributions' names.
REQUIRED_LIBRARIES: Final = {
    "langgraph": "langgraph",
    "langchain": "langchain",
    "langchain_core": "langchain-core",
}


class Outcome(NamedTuple):
    findings: list[Finding]  # one per problem, with the other places it is reported from
    checked: int  # source files given to mypy
    config_file: str | None  # the configuration file the plugin's options come from, if any
    config: config.LGStateConfig  # those options (without --profile)
    importable: Callable[[str], bool]  # whether a class fullname names a class the build found


def run_mypy(
    args: argparse.Namespace,
    *,
    profile: config.Profile | None = None,
    recorder: coverage.CoverageRecorder | None = None,
    lock_roots: lockfile.LockData | None = None,
    lock_optional: bool = False,
) -> Outcome:
    """Run mypy's build on ``args.paths`` (else the configured ``files``, else the current
    directory), with ``args.config_file`` and the mypy flags given after ``--``.

    ``lock_roots`` receives the snapshot of every graph-state root (``lgstate lock``);
    ``lock_optional`` reads a lock file that cannot be read as no lock file (``lgstate report``)."""
    config_file, options_config = _lgstate_config(args.config_file)
    sources, options = _mypy_options(args, config_file)
    if options.config_file != config_file:  # none found upward: mypy's user configuration file
        config_file, options_config = _lgstate_config(options.config_file)
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
    progress = _progress(len(sources), options.cache_dir, quiet=args.quiet)
    with _installed(profile, recorder, lock_roots, lock_optional), progress:
        extra_plugins: list[Plugin] = [_CommandPlugin(options, recording=recording)]
        if PLUGIN not in options.plugins or not options.config_file:
            # mypy loads the plugins its configuration lists, and only from a configuration file.
            extra_plugins.append(lgstate_plugin.plugin(mypy.version.__version__)(options))
        try:
            result = build(
                sources,
                options,
                flush_errors=flush_errors,
                stdout=sys.stderr,  # whatever mypy prints itself must not mix with json or sarif
                stderr=sys.stderr,
                extra_plugins=extra_plugins,
            )
        except CompileError as error:
            raise UsageError(_blocking_message([*others, *error.messages])) from None
    missing, unresolved = _unresolved_libraries(result)
    if missing:
        raise UsageError(missing)
    for line in unresolved:
        print(f"lgstate: {line}", file=sys.stderr)
    problem = _state_class_problem(result, config_file, options_config)
    if problem:
        raise ConfigFileError(problem)

    def importable(fullname: str) -> bool:
        sym = lookup_fully_qualified(fullname, result.files)
        return sym is not None and isinstance(sym.node, (TypeInfo, TypeAlias))

    # In file and line order, whatever order mypy checked the modules in (its cache decides); on
    # one line, in the order the file's module reported them.
    shown = sorted(once_per_problem(findings), key=lambda f: (f.file, f.line))
    return Outcome(shown, len(sources), config_file, options_config, importable)


def _lgstate_config(explicit: str | None) -> tuple[str | None, config.LGStateConfig]:
    """The file the plugin's options come from (``--config-file``, else the first file upward with
    a mypy section or a ``mypy_lgstate`` one), and those options: a file that cannot be parsed, or
    a bad option, stops the command before mypy reads anything."""
    if explicit is not None and not os.path.isfile(explicit):
        problem = "is a directory" if os.path.isdir(explicit) else "no such file"
        raise ArgumentError(f"--config-file {explicit}: {problem}")
    config_file = explicit if explicit is not None else config.find_config_file()
    try:
        return config_file, config.read_config(config_file)
    except config.ConfigError as error:
        raise ConfigFileError(str(error)) from None


def _mypy_options(
    args: argparse.Namespace, config_file: str | None
) -> tuple[list[BuildSource], Options]:
    """mypy's own reading of its command line and configuration, then what this command needs.

    mypy reads its options from ``config_file`` when the file has a mypy section, and from no file
    when it has only the plugin's (a project that runs pyright or ty): that is where the command
    found the plugin's options, and mypy must not go looking further up for another file."""
    if config_file is None:
        flags = []
    else:
        flags = ["--config-file", config_file if config.has_mypy_section(config_file) else ""]
    flags += args.mypy_flags
    sources, options = _process_options([*flags, *args.paths], require_targets=False)
    if not sources and not args.paths:
        sources, options = _process_options([*flags, os.curdir], require_targets=True)
    if config_file is not None:  # the plugin reads its options from ``options.config_file``
        options.config_file = config_file
    options.output = "json"  # one finding per line, with its code, whatever the user's options
    # Unannotated nodes and builders are read too: mypy checks their bodies (its own errors there
    # stay hidden, as all of them do). Per-module sections may not turn it off.
    options.check_untyped_defs = True
    for section in options.per_module_options.values():
        section.pop("check_untyped_defs", None)
    # The profile override and the coverage recorder live in this process: no worker processes.
    options.num_workers = 0
    if options.cache_dir != os.devnull:
        options.cache_dir = os.path.join(options.cache_dir, CACHE_SUBDIR)
    return sources, options


def _process_options(
    arguments: list[str], *, require_targets: bool
) -> tuple[list[BuildSource], Options]:
    """mypy's ``process_options``, whose usage errors (a bad flag after ``--``, a missing file)
    become this subcommand's: its usage and one line."""
    captured = io.StringIO()
    try:
        result = process_options(
            arguments, stdout=sys.stderr, stderr=captured, require_targets=require_targets,
            program="mypy",
        )
    except SystemExit as exit:
        if not exit.code:  # --help or --version after --: mypy printed them
            raise
        lines = [line for line in captured.getvalue().splitlines() if line.strip()]
        errors = [line.partition(": error: ")[2] for line in lines if ": error: " in line]
        message = errors[-1] if errors else (lines[-1] if lines else f"exit status {exit.code}")
        raise ArgumentError(f"mypy: {message}") from None
    sys.stderr.write(captured.getvalue())  # mypy's warnings (an unknown option in its section)
    return result


def _unresolved_libraries(result: BuildResult) -> tuple[str | None, list[str]]:
    """The LangGraph / LangChain imports of the checked code that are not in mypy's build.

    The first is the line that stops the command when none of the graphs could be recognized: the
    package itself cannot be found (an environment without it, such as pre-commit's own), or mypy's
    configuration skips a module whose names the checks recognize (``follow_imports = skip``). The
    second lists the submodules a found package does not have (an import that is stale for the
    installed version): what the code takes from them is Any, the rest is checked."""
    missing: dict[str, str] = {}  # package -> where the checked code first imports it
    skipped: dict[str, str] = {}  # module -> where
    stale: dict[str, str] = {}  # module -> where
    finder = result.manager.find_module_cache
    for state in sorted(result.graph.values(), key=lambda state: state.xpath):
        if state.path is None or is_library(state.path):
            continue
        for module in state.suppressed:
            package = module.partition(".")[0]
            if package not in REQUIRED_LIBRARIES:
                continue
            where = f"{os.path.normpath(state.xpath)}:{state.dep_line_map.get(module, 1)}"
            if result.manager.missing_modules.get(module) == SuppressionReason.SKIPPED:
                if _recognized_in(module):
                    skipped.setdefault(module, where)
            elif package in result.graph or isinstance(finder.find_module(package), str):
                stale.setdefault(module, where)
            else:
                missing.setdefault(package, where)
    if missing:
        return _missing_message(missing), []
    if skipped:
        module, where = next(iter(skipped.items()))
        return (
            f"mypy's configuration skips {module} (follow_imports = skip; imported at {where}), so"
            " no graph could be recognized and nothing was checked: set follow_imports = silent"
            " for it instead (mypy still hides its errors)"
        ), []
    return None, [
        f"mypy cannot find {module} (imported at {where}), which the installed"
        f" {REQUIRED_LIBRARIES[module.partition('.')[0]]} does not have: what the code takes from"
        " it is typed Any and not checked; the rest was checked"
        for module, where in stale.items()
    ]


def _recognized_in(module: str) -> bool:
    """Whether the checks recognize names defined in ``module`` or below it (a skipped
    ``langgraph.checkpoint.postgres`` hides no graph; a skipped ``langgraph.graph`` hides all)."""
    prefix = module + "."
    return any(
        name.startswith(prefix)
        for name in (*lgstate_plugin.FUNCTION_HOOKS, *lgstate_plugin.METHOD_HOOKS)
    )


def _missing_message(missing: dict[str, str]) -> str:
    packages = sorted(missing)
    where = missing[packages[0]]
    names = " and ".join(packages)
    install = " and ".join(REQUIRED_LIBRARIES[package] for package in packages)
    pronoun = "it" if len(packages) == 1 else "them"
    return (
        f"mypy cannot find {names} (imported at {where}), so nothing was checked: install {install}"
        f" next to mypy-lgstate (pre-commit: list {pronoun} in the hook's additional_dependencies)"
    )


def _state_class_problem(
    result: BuildResult, config_file: str | None, options: config.LGStateConfig
) -> str | None:
    """The first ``state_classes`` entry that names no graph-state class: of a module mypy checked
    (the plugin reports it in that module too), or of a module mypy cannot find. An entry of a
    module that exists but is not in this run is not checked here, nor anywhere."""
    for entry in options.state_classes:
        module, _, name = entry.rpartition(".")
        file = result.files.get(module)
        if file is not None:
            problem = discovery.configured_problem(file, name)
        elif not isinstance(result.manager.find_module_cache.find_module(module), str):
            problem = f'"{entry}" names module {module}, which mypy cannot find'
        else:
            continue
        if problem is not None:
            return config.option_error(config_file, "state_classes", problem)
    return None


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
        if is_library(ctx.path):
            return None
        return [lgstate_plugin.__version__, self._stamp]


@contextmanager
def _installed(
    profile: config.Profile | None,
    recorder: coverage.CoverageRecorder | None,
    lock_roots: lockfile.LockData | None,
    lock_optional: bool,
) -> Iterator[None]:
    """The profile override, the recorder and the lock's snapshots, for one build; and the tags
    that tell which findings of several files are one problem (the command's cache holds them)."""
    config.profile_override, checks.recorder, lockfile.collected = profile, recorder, lock_roots
    lockfile.optional = lock_optional
    reporting.tagging = True
    try:
        yield
    finally:
        config.profile_override, checks.recorder, lockfile.collected = None, None, None
        lockfile.optional = False
        reporting.tagging = False


@contextmanager
def _progress(sources: int, cache_dir: str, *, quiet: bool) -> Iterator[None]:
    """One line on stderr when the build is still running after a few seconds (a first run, without
    a cache, analyses LangGraph and its dependencies); none with ``--quiet``."""
    if quiet:
        yield
        return
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
        if command.runs_mypy:
            sub.usage = sub.format_usage().removeprefix("usage: ").rstrip() + " [-- MYPY_FLAGS ...]"
        sub.set_defaults(run=command.run)
    return top, subparsers


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


# Subcommands of their own modules register themselves when imported.
from mypy_lgstate.cli import allowlist as _allowlist, audit as _audit  # noqa: E402,F401
