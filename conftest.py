"""Test-suite set-up shared by the Python tests and the YAML cases.

The suite runs in parallel: pytest-xdist, ``-n logical --dist loadfile --no-loadscope-reorder`` in
pyproject.toml. A test file runs whole in one worker, in file order, as in a serial run, so that
module-scoped fixtures (a mypy cache shared by a module's tests, a cold run reused by later tests)
stay valid; the files go to the workers in collection order, the slow Python modules first.
(Not ``--dist loadgroup``: pytest-xdist 3.8 marks a group by rewriting ``item._nodeid``, which pytest
9.2 no longer reads, so its ``xdist_group`` marks are silently ignored: pytest-xdist issue 1386.)

Most of a mypy run's time in this suite is spent on the libraries (langgraph, langchain, pydantic:
about 10 s to analyse, 0.3 s to load from a cache). Two things keep that to a minimum:

- ``tests/library_caches.py``: one warm cache of the libraries per set of mypy options, built once
  per session and copied into the cache directory of each project a test checks. This file makes
  the session's directory for them.
- ``tests/yaml_batches.py``: the YAML cases of a file that share a configuration are checked by one
  mypy run. Each worker keeps one cache per configuration for them, in a directory made for the
  session and removed after it (not pytest-mypy-plugins' default under the testing base, which
  every checkout and every concurrent run on the machine would share). The plugin's own
  ``[mypy_lgstate]`` section is left out of that key: its options never change a library's entry
  (``report_config_data`` returns None there). A case's result does not depend on the cases checked
  before it in the same cache: mypy checks each entry against its source and options, and every
  case's module has a name of its own.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "tests"))

import library_caches  # noqa: E402
import yaml_batches  # noqa: E402

# pytest-mypy-plugins finds mypy on PATH: put this interpreter's scripts first, so the suite runs the
# mypy (and the plugin) installed next to pytest even when the virtual environment is not activated.
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
# Every mypy run of the suite imports the plugin anew: let it keep the bytecode it compiles.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

_SESSION_DIRECTORIES = pytest.StashKey[list[str]]()


def _session_directory(config: pytest.Config, prefix: str) -> str:
    directory = tempfile.mkdtemp(prefix=prefix)
    config.stash.setdefault(_SESSION_DIRECTORIES, []).append(directory)
    return directory


def pytest_configure(config: pytest.Config) -> None:
    """The process that starts the session makes the directory of warm library caches; the
    pytest-xdist workers it starts inherit the variable that names it."""
    if not hasattr(config, "workerinput") and library_caches.SESSION_VARIABLE not in os.environ:
        os.environ[library_caches.SESSION_VARIABLE] = _session_directory(config, "lgstate-libraries-")


# The files whose tests do not depend on mypy's version: the runtime twin's, the audit's, the
# package's layout. A test in them that runs mypy says so (``@pytest.mark.uses_mypy``).
MYPY_INDEPENDENT_FILES = (
    "test_*runtime*.py", "test_audit_*.py", "test_layers.py", "test_digest.py", "test_benchmark_layouts.py",
)


@pytest.hookimpl(tryfirst=True)  # before -m selects by the marks
def pytest_itemcollected(item: pytest.Item) -> None:
    if item.path.parent.name == "tests" and any(item.path.match(p) for p in MYPY_INDEPENDENT_FILES):
        if item.get_closest_marker("uses_mypy") is None:
            item.add_marker(pytest.mark.mypy_independent)


@pytest.hookimpl(trylast=True)  # after -k and the other selections: a batch holds what will run
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from pytest_mypy_plugins.item import YamlTestItem

    cases = [item for item in items if isinstance(item, YamlTestItem)]
    if not cases:
        return
    caches = _session_directory(config, "lgstate-yaml-caches-")
    for item in cases:
        options = library_caches.library_options(yaml_batches.effective_config(item))
        name = hashlib.sha256(options.encode()).hexdigest()[:12]
        item.incremental_cache_dir = os.path.join(caches, name)
    batches = yaml_batches.form_batches(cases)
    for item in cases:
        item.runtest = functools.partial(  # type: ignore[method-assign]
            yaml_batches.run_case, item, batches.get(item.nodeid)
        )


def pytest_runtest_setup(item: pytest.Item) -> None:
    from pytest_mypy_plugins.item import YamlTestItem

    if isinstance(item, YamlTestItem):
        library_caches.seed(Path(item.incremental_cache_dir), yaml_batches.effective_config(item))


def pytest_unconfigure(config: pytest.Config) -> None:
    for directory in config.stash.get(_SESSION_DIRECTORIES, []):
        shutil.rmtree(directory, ignore_errors=True)
