"""The harness the modes tests share: a small project in a directory, checked by the real mypy as a
user runs it, cold, warm, in parallel (``--num-workers``) and in the daemon, its diagnostics compared
as exact sorted lines: the same text whatever the mode.

- ``Project.create(root, files)`` writes the project. Its mypy cache (``.cache``) starts with the
  warm cache of the libraries (``library_caches``): a "cold" run is cold for the project's own
  modules, as every run of a project is after its first; ``libraries="cold"`` starts from nothing
  (about ten seconds more), for the tests that are about the libraries' first analysis.
- ``Project.mypy`` runs ``python -m mypy`` on ``pkg`` and returns the sorted diagnostics;
  ``Project.copy`` gives a copy with its cache, for a test that starts warm.
- ``Daemon`` runs ``dmypy run`` on a project; ``running`` stops it after a fixture, whatever happens.
  The daemon keeps no cache (it builds from scratch when it starts, about ten seconds), so the
  daemon scenarios of a test file share one daemon where they can: each starts from
  ``Project.restore``, which the daemon follows like any other edit.

Every write moves the file's mtime forward by two seconds, so that mypy and dmypy (which look at
mtime and size before the content) never miss an edit.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Literal

import pytest

import library_caches

MYPY_TIMEOUT = 300  # seconds for one run: a cold run takes 5-15 s on a busy 2-core machine
CONFIG = "mypy.ini"

DIAGNOSTIC = re.compile(r"^pkg/\S+\.py:\d+: (error|note): ")
CHATTER = re.compile(
    r"^(Success: no issues found in \d+ source files?|Found \d+ errors? in \d+ files? .*"
    r"|Daemon started|Daemon stopped|Restarting: .*)$"
)


def line_of(source: str, text: str, *, after: str = "") -> int:
    """The number of the first line holding ``text`` below the first line holding ``after``."""
    lines = source.splitlines()
    start = next(n for n, line in enumerate(lines) if after in line)
    return next(n for n, line in enumerate(lines[start:], start + 1) if text in line)


def env() -> dict[str, str]:
    """The caller's environment, less what would change mypy's behaviour (MYPY_NUM_WORKERS, ...)."""
    return {name: value for name, value in os.environ.items() if not name.startswith("MYPY")}


def diagnostics(proc: subprocess.CompletedProcess[str]) -> list[str]:
    """The sorted diagnostic lines of a mypy / dmypy run, which must have ended normally."""
    output = f"exit status {proc.returncode}\n--- stdout\n{proc.stdout}--- stderr\n{proc.stderr}"
    assert proc.returncode in (0, 1), output
    assert not proc.stderr.strip(), output
    lines = proc.stdout.splitlines()
    assert all(DIAGNOSTIC.match(line) or CHATTER.match(line) for line in lines), output
    found = sorted(line for line in lines if DIAGNOSTIC.match(line))
    assert (proc.returncode == 1) == bool(found), output
    return found


@functools.cache
def supports_parallel_checking() -> bool:
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--help"],
        env=env(), capture_output=True, text=True, timeout=MYPY_TIMEOUT,
    )
    return "--num-workers" in proc.stdout


class Project:
    """A project in one directory, with its files as they were written first (``sources``)."""

    def __init__(self, root: Path, clock: float, sources: Mapping[str, str]) -> None:
        self.root = root
        self.clock = clock
        self.sources = dict(sources)

    @classmethod
    def create(
        cls,
        root: Path,
        files: Mapping[str, str],
        *,
        libraries: Literal["warm", "cold"] = "warm",
    ) -> Project:
        """Write ``files`` (paths relative to ``root``; one of them is ``mypy.ini``)."""
        project = cls(root, time.time(), files)
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            project.write(name, text)
        if libraries == "warm":
            library_caches.seed(root / ".cache", files[CONFIG])
        return project

    def copy(self, root: Path) -> Project:
        """A copy with its cache (``copytree`` keeps mtimes, so the cache stays valid)."""
        shutil.copytree(self.root, root)
        return Project(root, self.clock, self.sources)

    def restore(self) -> None:
        """Every file back to how it was first written, and the files added since removed: an
        edit like any other, for the next scenario of a daemon that keeps running."""
        for name, text in self.sources.items():
            if self.read(name) != text:
                self.write(name, text)
        for path in sorted((self.root / "pkg").rglob("*.py")):
            if path.relative_to(self.root).as_posix() not in self.sources:
                path.unlink()

    def read(self, name: str) -> str:
        return (self.root / name).read_text()

    def write(self, name: str, text: str) -> None:
        path = self.root / name
        path.write_text(text)
        self.clock += 2
        os.utime(path, (self.clock, self.clock))

    def mypy(self, *args: str) -> list[str]:
        return diagnostics(self._mypy(*args))

    def mypy_logged(self) -> tuple[list[str], str]:
        """The diagnostics and mypy's log (``--verbose``, on stderr)."""
        proc = self._mypy("--verbose")
        log, proc.stderr = proc.stderr, ""
        return diagnostics(proc), log

    def _mypy(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mypy", "--config-file", CONFIG, "--cache-dir", ".cache",
             "--show-traceback", *args, "pkg"],
            cwd=self.root, env=env(), capture_output=True, text=True, timeout=MYPY_TIMEOUT,
        )


class Daemon:
    """A dmypy daemon for one project, with its own status file."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.status_file = project.root / "dmypy.json"

    def _dmypy(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mypy.dmypy", "--status-file", str(self.status_file), *args],
            cwd=self.project.root, env=env(), capture_output=True, text=True, timeout=MYPY_TIMEOUT,
        )

    def run(self, *, restarts: bool = False) -> list[str]:
        """``dmypy run`` (which starts the daemon if needed): the diagnostics.

        The daemon must restart when the plugin's options changed (``restarts``), and only then: a
        daemon that restarts on every run gives right answers, as slowly as a cold run.
        ``--timeout`` makes a daemon that outlives its test (a killed pytest) exit on its own.
        """
        proc = self._dmypy(
            "run", "--timeout", str(2 * MYPY_TIMEOUT), "--log-file", "dmypy.log", "--",
            "--config-file", CONFIG, "--cache-dir", ".cache", "--show-traceback", "pkg",
        )
        if "Daemon crashed" in proc.stdout + proc.stderr:
            pytest.fail(f"the daemon crashed:\n{proc.stdout}{proc.stderr}")
        found = diagnostics(proc)
        restarted = "Restarting: plugins changed" in proc.stdout.splitlines()
        assert restarted == restarts, proc.stdout
        return found

    def stop(self) -> None:
        if not self.status_file.exists():
            return
        try:
            pid: int | None = int(json.loads(self.status_file.read_text())["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            pid = None
        try:
            stopped = self._dmypy("stop").returncode == 0
        except subprocess.TimeoutExpired:
            stopped = False
        if not stopped and pid is not None and self._is_ours(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.status_file.unlink(missing_ok=True)

    def _is_ours(self, pid: int) -> bool:
        """Whether ``pid`` is still this daemon (never kill a process that reused the id)."""
        try:
            return str(self.status_file).encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return False


def running(project: Project) -> Iterator[Daemon]:
    """A daemon on ``project`` for the length of a fixture, stopped after it."""
    daemon = Daemon(project)
    try:
        yield daemon
    finally:
        daemon.stop()
