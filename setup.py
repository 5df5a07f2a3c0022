"""The package's optional compiled build. Its metadata lives in pyproject.toml; this file only adds
the extension modules when they are asked for:

    MYPY_LGSTATE_COMPILE=1 pip install .

compiles the modules of ``checker/``, ``routes/`` and ``core/`` with mypyc, as mypy compiles itself
(README, "Install and enable"). Without the variable the package is pure Python.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from setuptools import setup

sys.path.insert(0, str(Path(__file__).resolve().parent / "build_support"))
from backend import compiled_modules, compiling  # noqa: E402


# The commands that only write the package's metadata: pip runs one before the build, and the
# extension modules are no part of it (mypyc would type-check and translate everything twice).
METADATA_COMMANDS = frozenset({"dist_info", "egg_info"})


def command(argv: list[str]) -> str | None:
    """The setup.py command being run (global options such as ``-q`` may come before it)."""
    return next((arg for arg in argv[1:] if not arg.startswith("-")), None)


def ext_modules() -> list[object]:
    if not compiling() or command(sys.argv) in METADATA_COMMANDS:
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        raise SystemExit(
            "MYPY_LGSTATE_COMPILE=1: mypyc (it comes with mypy) is not in the build environment;"
            " with --no-build-isolation, install mypy first"
        ) from None

    # setuptools packages every extension module it finds in its build directory: one left there by an
    # earlier compiled build of another set of modules would ship with this one.
    for stale in (Path(__file__).resolve().parent / "build").glob("lib.*"):
        shutil.rmtree(stale)
    # mypyc type-checks what it compiles with pyproject.toml's [tool.mypy], in pip's build
    # environment, where only mypy is installed: the modules the compiled ones reach (the lgstate
    # command, the runtime checker, through type-only imports) are read without their errors, and
    # third-party modules other than mypy (pydantic, langgraph) are typed Any, as they are to the
    # compiled code at run time.
    flags = ["--follow-imports=silent", "--ignore-missing-imports"]
    return mypycify([*flags, *compiled_modules()], opt_level="3")


if __name__ == "__main__":  # as setuptools' build backend runs it (the tests import it)
    setup(ext_modules=ext_modules())
