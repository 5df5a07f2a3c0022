"""Finds the project's configuration file, the one ``lgstate`` reads the plugin's options from."""

from __future__ import annotations

from pathlib import Path

from mypy_lgstate.core import config


def find_config_file(start: str | Path | None = None) -> Path | None:
    """The first configuration file in ``start`` (default: the current directory) or a parent,
    stopping at the repository root (a directory holding ``.git`` or ``.hg``), as mypy looks for its
    own; a pyproject.toml or setup.cfg counts when it has a mypy section or a ``mypy_lgstate`` one,
    or when it cannot be parsed (``CheckedSaver.from_project`` then reports the error)."""
    directory = Path(start if start is not None else Path.cwd()).resolve()
    found = config.find_config_file(str(directory))
    return Path(found) if found is not None else None
