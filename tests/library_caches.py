"""Warm mypy caches of the installed libraries, built once per test session and copied into the
cache directory of each project that a test checks.

Every mypy run of the suite imports LangGraph, LangChain or pydantic. Analysing them takes about ten
seconds; loading them from a cache a third of a second. A cache entry is valid for one set of the
options that change a module's entry (``disable_error_code``, ``check_untyped_defs``, the plugins,
...), and the plugin's own options never change a library's entry (``report_config_data`` returns
``None`` there). So the suite keeps one warm cache per set of library options, built by whichever
pytest-xdist worker first needs it (under a lock, so that the other worker waits for it instead of
building it again), in a directory the controller makes for the session (``SESSION_VARIABLE``).

A warm cache is only a head start: the run that uses it still checks every library module's entry
against its source and options, and analyses what the cache lacks. When one cannot be built, the
run starts cold, as it would without it.
"""

from __future__ import annotations

import configparser
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SESSION_VARIABLE = "LGSTATE_TEST_LIBRARY_CACHES"
TIMEOUT = 600  # seconds for one build: a cold run on a busy 2-core machine

# What the suite's programs import of the libraries; a module left out is analysed by the run that
# needs it, from the cache of everything else.
LIBRARIES = """\
import langchain.agents
import langchain.agents.middleware
import langchain.agents.middleware.types
import langchain.agents.structured_output
import langchain_core.documents
import langchain_core.language_models.fake_chat_models
import langchain_core.messages
import langchain_core.runnables
import langgraph.channels
import langgraph.channels.untracked_value
import langgraph.checkpoint.memory
import langgraph.checkpoint.serde.jsonplus
import langgraph.checkpoint.sqlite
import langgraph.constants
import langgraph.func
import langgraph.graph
import langgraph.graph.message
import langgraph.graph.state
import langgraph.prebuilt
import langgraph.runtime
import langgraph.store.base
import langgraph.types
import langgraph.typing
import pydantic
import pydantic.dataclasses
import typing_extensions
"""
PROGRAM = "lgstate_test_libraries"
OK = "lgstate-warm-cache-built"
# Options of a run that change no module's cache entry: what it checks, and where its cache goes.
RUN_OPTIONS = frozenset({"files", "packages", "modules", "exclude", "cache_dir"})


def library_options(config: str | None) -> str:
    """The part of a configuration (ini text; ``None``: no configuration file) that can change
    mypy's cache of the libraries: every section but the plugin's own, less the options that only
    say what to check and where the cache goes, as one canonical string."""
    if config is None:  # the same options as a file that sets none of them
        return ""
    parser = _parsed(config)
    return "\n".join(
        f"[{section}] {name} = {value}"
        for section in sorted(parser.sections())
        if section != "mypy_lgstate"
        for name, value in sorted(parser.items(section))
        if name not in RUN_OPTIONS
    )


def seed(cache_dir: Path, config: str | None, *, lgstate: bool = False) -> None:
    """Give ``cache_dir`` the warm cache of the libraries for runs under ``config`` (the ini text
    of the run's configuration file; ``None`` when it has none): the cache of ``mypy`` runs, or
    with ``lgstate`` that of the ``lgstate`` command (its ``lgstate`` subdirectory, for runs whose
    ``MYPY_CACHE_DIR`` is ``cache_dir``). What ``cache_dir`` already holds is left as it is."""
    warm = _warm_cache(config, lgstate=lgstate)
    if warm is None:
        return
    cache_dir.mkdir(parents=True, exist_ok=True)
    for entry in warm.iterdir():
        target = cache_dir / entry.name
        if entry.name == OK or target.exists():
            continue
        if entry.is_dir():
            shutil.copytree(entry, target)
        else:
            shutil.copy2(entry, target)


def _warm_cache(config: str | None, *, lgstate: bool) -> Path | None:
    root = os.environ.get(SESSION_VARIABLE)
    if root is None:
        return None
    key = ("lgstate " if lgstate else "mypy ") + library_options(config)
    directory = Path(root) / hashlib.sha256(key.encode()).hexdigest()[:16]
    with open(f"{directory}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other worker waits for the build, then uses it
        if not directory.exists():
            _build(directory, config, lgstate=lgstate)
    return directory if (directory / OK).exists() else None


def _build(directory: Path, config: str | None, *, lgstate: bool) -> None:
    """Run mypy (or ``lgstate check``) on a program that imports the libraries, under ``config``;
    ``directory/OK`` marks a build that succeeded."""
    directory.mkdir()
    with tempfile.TemporaryDirectory(prefix="lgstate-warm-") as work:
        Path(work, f"{PROGRAM}.py").write_text(LIBRARIES)
        flags = []
        if config is not None:
            Path(work, "mypy.ini").write_text(_without_run_options(config))
            flags = ["--config-file", "mypy.ini"]
        env = {name: value for name, value in os.environ.items() if not name.startswith("MYPY")}
        if lgstate:
            command = [str(Path(sys.executable).parent / "lgstate"), "check", "-q"]
            env["MYPY_CACHE_DIR"] = str(directory)
        else:
            command = [sys.executable, "-m", "mypy", "--cache-dir", str(directory)]
        result = subprocess.run(
            [*command, *flags, f"{PROGRAM}.py"],
            cwd=work, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False,
        )
    if result.returncode in (0, 1):
        (directory / OK).touch()


def _without_run_options(config: str) -> str:
    """``config`` without what it checks and where its cache goes: the build checks the
    libraries' program alone, into the warm cache's directory."""
    parser = _parsed(config)
    for section in parser.sections():
        for option in RUN_OPTIONS:
            parser.remove_option(section, option)
    lines = []
    for section in parser.sections():
        lines.append(f"[{section}]")
        lines.extend(f"{name} = {value}" for name, value in parser.items(section))
    return "\n".join(lines) + "\n"


def _parsed(config: str) -> configparser.ConfigParser:
    """``config`` parsed; lines before any section header belong to ``[mypy]``."""
    first = next(
        (line for line in config.splitlines() if line.strip() and not line.lstrip().startswith(("#", ";"))),
        "[",
    )
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(config if first.lstrip().startswith("[") else f"[mypy]\n{config}")
    return parser
