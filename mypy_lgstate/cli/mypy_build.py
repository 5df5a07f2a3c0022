"""mypy's build, run in this process for a subcommand: with the plugin enabled whether or not the
project's mypy configuration lists it, and keeping only the plugin's findings (their codes start
with ``lgstate-``): mypy's own errors never show. A build that could check nothing (code mypy cannot
parse, LangGraph / LangChain imports mypy cannot find or is told to skip, a bad ``state_classes``
entry) is a usage error: one line, exit status 2.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Final, NamedTuple

import mypy.version
from mypy.build import BuildResult, SuppressionReason, build
from mypy.errors import CompileError
from mypy.lookup import lookup_fully_qualified
from mypy.main import process_options
from mypy.modulefinder import BuildSource
from mypy.nodes import TypeAlias, TypeInfo
from mypy.options import Options
from mypy.plugin import Plugin, ReportConfigContext

from mypy_lgstate import plugin as lgstate_plugin
from mypy_lgstate.checker import checks, report as reporting
from mypy_lgstate.cli.findings import Finding, once_per_problem, parse_mypy_json
from mypy_lgstate.cli.subcommands import ArgumentError, ConfigFileError, UsageError
from mypy_lgstate.core import config, lockfile
from mypy_lgstate.core.libraries import is_library
from mypy_lgstate.routes import discovery
from mypy_lgstate.routes.coverage import CoverageRecorder

PLUGIN: Final = "mypy_lgstate.plugin"
# The command's own cache, inside the project's mypy cache directory (and so under the .gitignore
# mypy writes there): the command always loads the plugin, and may run another profile, so sharing
# mypy's cache would discard it on every switch between ``mypy`` and ``lgstate``.
CACHE_SUBDIR: Final = "lgstate"
PROGRESS_DELAY: Final = 3.0  # seconds before a run says what it is doing

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
    recorder: CoverageRecorder | None = None,
    lock_roots: lockfile.LockData | None = None,
    not_derived: dict[str, str] | None = None,
    lock_optional: bool = False,
    default_targets: list[str] | None = None,
) -> Outcome:
    """Run mypy's build on ``args.paths`` (else the configured ``files``, else ``default_targets``,
    else the current directory), with ``args.config_file`` and the mypy flags given after ``--``.

    ``lock_roots`` receives the snapshot of every graph-state root (``lgstate lock``), and
    ``not_derived`` the roots ``compile()`` does not derive the strict allowlist from
    (``lockfile.not_derived``);
    ``lock_optional`` reads a lock file that cannot be read as no lock file (``lgstate report``)."""
    config_file, options_config = lgstate_config(args.config_file)
    sources, options = _mypy_options(args, config_file, default_targets)
    if options.config_file != config_file:  # none found upward: mypy's user configuration file
        config_file, options_config = lgstate_config(options.config_file)
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
    with _installed(profile, recorder, lock_roots, not_derived, lock_optional), progress:
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


def lgstate_config(explicit: str | None) -> tuple[str | None, config.LGStateConfig]:
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
    args: argparse.Namespace, config_file: str | None, default_targets: list[str] | None = None
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
        targets = default_targets or [os.curdir]
        sources, options = _process_options([*flags, *targets], require_targets=True)
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
    recorder: CoverageRecorder | None,
    lock_roots: lockfile.LockData | None,
    not_derived: dict[str, str] | None,
    lock_optional: bool,
) -> Iterator[None]:
    """The profile override, the recorder and the lock's snapshots, for one build; and the tags
    that tell which findings of several files are one problem (the command's cache holds them)."""
    config.profile_override, checks.recorder, lockfile.collected = profile, recorder, lock_roots
    lockfile.not_derived = not_derived
    lockfile.optional = lock_optional
    reporting.tagging = True
    try:
        yield
    finally:
        config.profile_override, checks.recorder, lockfile.collected = None, None, None
        lockfile.not_derived, lockfile.optional = None, False
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
