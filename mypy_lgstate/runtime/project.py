"""Finds the project's configuration file, the one mypy would take its own configuration from."""

from __future__ import annotations

import configparser
import sys
from pathlib import Path
from typing import Final

# mypy's order: its own files first, then the shared ones when they have a mypy section.
_OWN_FILES: Final = ("mypy.ini", ".mypy.ini")
_SHARED_FILES: Final = ("pyproject.toml", "setup.cfg")


def find_config_file(start: str | Path | None = None) -> Path | None:
    """The first configuration file in ``start`` (default: the current directory) or a parent,
    stopping at the repository root (a directory holding ``.git`` or ``.hg``), as mypy does."""
    directory = Path(start if start is not None else Path.cwd()).resolve()
    for current in (directory, *directory.parents):
        for name in _OWN_FILES:
            if (current / name).is_file():
                return current / name
        for name in _SHARED_FILES:
            if (current / name).is_file() and _has_section(current / name):
                return current / name
        if (current / ".git").exists() or (current / ".hg").exists():
            return None
    return None


def _has_section(path: Path) -> bool:
    """Whether a shared file configures mypy or this plugin."""
    if path.suffix == ".toml":
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # mypy itself depends on tomli before 3.11
            import tomli as tomllib
        try:
            tool = tomllib.loads(path.read_text(encoding="utf-8")).get("tool")
        except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError):
            return False
        return isinstance(tool, dict) and ("mypy" in tool or "mypy_lgstate" in tool)
    parser = configparser.RawConfigParser()
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return False
    return parser.has_section("mypy") or parser.has_section("mypy_lgstate")
