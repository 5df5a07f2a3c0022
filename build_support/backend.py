"""The build backend: setuptools', plus mypy as a build requirement when the compiled build is asked
for (``MYPY_LGSTATE_COMPILE=1``), since mypyc comes with mypy.

pip builds in an isolated environment that holds only what the backend asks for; a pure build asks
for setuptools alone, so installing the Python package never downloads a second mypy.
"""

from __future__ import annotations

import os
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F401,F403 (every hook pip may call)

# The variable that turns the compiled build on, and the packages it compiles: everything mypy runs
# at each hook. ``plugin.py`` stays Python: its class derives from mypy's compiled ``Plugin``, and a
# compiled subclass of it crashes the interpreter.
COMPILE_VARIABLE = "MYPY_LGSTATE_COMPILE"
COMPILED_PACKAGES = ("checker", "routes", "core")
# What ``plugin.py`` imports at every mypy start stays Python: a warm run with nothing to check then
# never loads the compiled library, which would add about 0.7% to it.
STARTUP_MODULES = frozenset({
    "mypy_lgstate/checker/errorcodes.py",
    "mypy_lgstate/core/config.py",
    "mypy_lgstate/core/digest.py",
    "mypy_lgstate/core/libraries.py",
    "mypy_lgstate/core/lockfile.py",
})
# The mypy that compiles them: the range the package runs with (pyproject.toml's dependencies).
MYPYC_REQUIREMENT = "mypy>=2.4,<3"

_ROOT = Path(__file__).resolve().parent.parent


def compiling() -> bool:
    value = os.environ.get(COMPILE_VARIABLE, "")
    if value not in ("", "0", "1"):
        raise SystemExit(
            f"{COMPILE_VARIABLE}: expected 1 (compile) or 0 (pure Python), got {value!r}"
        )
    return value == "1"


def compiled_modules(root: Path = _ROOT) -> list[str]:
    """The source files mypyc compiles, relative to ``root`` (the project root)."""
    package = root / "mypy_lgstate"
    found = [
        path.relative_to(root).as_posix()
        for name in COMPILED_PACKAGES
        for path in sorted((package / name).glob("*.py"))
        if path.name != "__init__.py"
    ]
    return [module for module in found if module not in STARTUP_MODULES]


def get_requires_for_build_wheel(config_settings: object = None) -> list[str]:
    # setuptools' own hook would run setup.py, which imports mypyc before it is installed; the
    # project asks for nothing beyond pyproject.toml's build requirements but mypy.
    return [MYPYC_REQUIREMENT] if compiling() else []


def _refuse_editable() -> None:
    # Compiled modules next to their sources would shadow every later edit of them.
    if compiling():
        raise SystemExit(
            f"{COMPILE_VARIABLE}=1: an editable install is never compiled; install without -e"
        )


def get_requires_for_build_editable(config_settings: object = None) -> list[str]:
    _refuse_editable()  # before setuptools runs setup.py, which would ask for mypyc
    return list(_setuptools.get_requires_for_build_editable(config_settings))


def build_editable(
    wheel_directory: str, config_settings: object = None, metadata_directory: str | None = None
) -> str:
    _refuse_editable()
    return str(_setuptools.build_editable(wheel_directory, config_settings, metadata_directory))
