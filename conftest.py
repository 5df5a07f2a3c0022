"""Test-suite set-up shared by the Python tests and the YAML cases.

The suite runs in parallel: pytest-xdist, ``-n logical --dist loadfile --no-loadscope-reorder`` in
pyproject.toml. A test file runs whole in one worker, in file order, as in a serial run, so that
module-scoped fixtures (a mypy cache shared by a module's tests, a cold run reused by later tests)
stay valid; the files go to the workers in collection order, the slow Python modules first.
(Not ``--dist loadgroup``: pytest-xdist 3.8 marks a group by rewriting ``item._nodeid``, which pytest
9.2 no longer reads, so its ``xdist_group`` marks are silently ignored: pytest-xdist issue 1386.)

A YAML case of pytest-mypy-plugins runs mypy in a subprocess with ``--cache-dir``: the cache of the
libraries (langgraph, langchain, pydantic: about 6 s to build, 0.3 s to load) is what makes a case
take 0.5 s instead of 6. mypy keeps one entry per module, valid for one set of options
(``disable_error_code``, ``warn_unused_ignores``, ...). With one cache for every case, as
pytest-mypy-plugins has it, a case with other mypy options rebuilt the libraries, and so did the
case after it. The hook below gives each worker one cache per mypy configuration, in a directory
made for the session and removed after it: not the default ``$TMPDIR/.mypy_cache``, which every
checkout and every concurrent run on the machine shares (and rebuilds for its own plugin source).
The plugin's own ``[mypy_lgstate]`` section is left out of the key: its options never change a
library's entry (``report_config_data`` returns None there).

A case's result does not depend on the cases that ran before it in the same cache: mypy checks each
entry against its source and options, and pytest-mypy-plugins removes the entries of the case's
own files after each case.
"""

from __future__ import annotations

import configparser
import hashlib
import os
import shutil
import sys
import tempfile

import pytest

# pytest-mypy-plugins finds mypy on PATH: put this interpreter's scripts first, so the suite runs the
# mypy (and the plugin) installed next to pytest even when the virtual environment is not activated.
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")

_YAML_CACHES = pytest.StashKey[str]()


def library_options(mypy_config: str) -> str:
    """The part of a YAML case's ``mypy_config:`` that can change mypy's cache of the libraries:
    every section but the plugin's own, as one canonical string ("" for the base configuration).

    pytest-mypy-plugins merges ``mypy_config:`` into the base configuration the same way: lines
    before any section header belong to ``[mypy]``."""
    if "[mypy]" not in mypy_config:
        mypy_config = f"[mypy]\n{mypy_config}"
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(mypy_config)
    return "\n".join(
        f"[{section}] {name} = {value}"
        for section in sorted(parser.sections())
        if section != "mypy_lgstate"
        for name, value in sorted(parser.items(section))
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from pytest_mypy_plugins.item import YamlTestItem

    for item in items:
        if not isinstance(item, YamlTestItem):
            continue
        if _YAML_CACHES not in config.stash:
            config.stash[_YAML_CACHES] = tempfile.mkdtemp(prefix="lgstate-yaml-mypy-caches-")
        options = library_options(item.additional_mypy_config)
        name = "config-" + hashlib.sha256(options.encode()).hexdigest()[:12] if options else "base"
        item.incremental_cache_dir = os.path.join(config.stash[_YAML_CACHES], name)


def pytest_unconfigure(config: pytest.Config) -> None:
    caches = config.stash.get(_YAML_CACHES, None)
    if caches is not None:
        shutil.rmtree(caches, ignore_errors=True)
