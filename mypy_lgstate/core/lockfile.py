"""The lock file of checkpointed classes (``lgstate lock`` writes it; ``drift.py`` compares with it).

JSON, keys sorted, one item a line: reviewed in pull requests like any lock file. For every graph-state
root, each checkpointed class reachable from it, by its path in the state: the ``(module, name)`` the
serializer stores, its kind, its fields (normalized type, required or not) and enum members with their
values. This module only reads and writes the file: the plugin reads it on every run, before any
check runs, so it imports nothing of mypy.
"""

from __future__ import annotations

import json
import os
from typing import Any, Final, NamedTuple

from mypy_lgstate.core.digest import short_digest

FORMAT_VERSION: Final = 1

ClassRecord = dict[str, Any]
RootRecord = dict[str, ClassRecord]  # path in the state -> the class found there
LockData = dict[str, RootRecord]  # graph-state root fullname -> its classes


class LockFileError(Exception):
    """A lock file that cannot be read: the message is the whole line shown to the user."""


class Lock(NamedTuple):
    roots: LockData
    digest: str  # of the file's bytes; "" when there is no file


NO_LOCK: Final = Lock({}, "")

# ``lgstate lock`` sets this to a dict before its build: the snapshot of every graph-state root checked
# lands there, and the existing file is neither read nor compared. In mypy runs it stays None.
collected: LockData | None = None
# Set with ``collected``: the roots whose classes ``compile()`` does not derive for the strict
# allowlist, and why ("task": a @task's result; "entrypoint": an @entrypoint's value in a module
# under ``from __future__ import annotations``, whose annotations LangGraph reads as strings).
not_derived: dict[str, str] | None = None
# ``lgstate report`` sets this: the report does not need the lock, so a file that cannot be read is
# read as no lock file instead of stopping the build.
optional: bool = False


def lock_path(lock_file: str, config_file: str | None) -> str:
    """``lock_file`` is relative to the configuration file's directory (the current one without)."""
    base = os.path.dirname(os.path.abspath(config_file)) if config_file else os.getcwd()
    return os.path.join(base, lock_file)


def render(roots: LockData) -> str:
    """The file's text: sorted keys, one item a line, so a change shows as a small diff."""
    document = {"lgstate_lock": FORMAT_VERSION, "roots": dict(sorted(roots.items()))}
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def shown_path(path: str) -> str:
    """``path`` as messages show it: relative to the current directory, as the user types it."""
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive
        return path


def read_lock(path: str) -> Lock:
    """The lock at ``path`` (``NO_LOCK`` when there is no file)."""
    shown = shown_path(path)
    try:
        try:
            with open(path, "rb") as f:
                content = f.read()
        except FileNotFoundError:
            return NO_LOCK
        except OSError as error:
            raise LockFileError(f"{shown}: lock_file: cannot be read ({error.strerror})") from None
        return parse_lock(content, shown)
    except LockFileError:
        if optional:
            return NO_LOCK
        raise


def parse_lock(content: bytes, shown: str) -> Lock:
    """The lock file's ``content``; ``shown`` names the file in the error."""
    try:
        document = json.loads(content)
    except json.JSONDecodeError as error:
        raise LockFileError(
            f"{shown}: lock_file: not valid JSON (line {error.lineno}, column {error.colno}:"
            f" {error.msg}); fix it, or run lgstate lock to write it again"
        ) from None
    except ValueError:  # not UTF-8
        raise LockFileError(
            f"{shown}: lock_file: not a text file; run lgstate lock to write it again"
        ) from None
    if (
        not isinstance(document, dict)
        or document.get("lgstate_lock") != FORMAT_VERSION
        or not isinstance(document.get("roots"), dict)
    ):
        raise LockFileError(
            f"{shown}: lock_file: not a lock file written by this version of lgstate lock;"
            " run lgstate lock to write it again"
        )
    return Lock(document["roots"], short_digest(content))
