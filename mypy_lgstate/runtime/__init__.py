"""The runtime checker: the plugin's rules applied to the values a graph really writes.

Declared types cannot see a node declared ``-> dict``, a value typed ``Any`` or ``exec()`` locals;
a test can. ``find_problems`` checks one value; ``CheckedSaver`` wraps a LangGraph checkpointer and
checks every checkpoint and write before it is saved. Importing this package imports neither mypy
nor LangGraph; ``CheckedSaver`` imports LangGraph when it is first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mypy_lgstate.runtime.project import find_config_file
from mypy_lgstate.runtime.findings import CheckpointValueError, Problem
from mypy_lgstate.runtime.values import find_problems

if TYPE_CHECKING:
    from mypy_lgstate.runtime.saver import CheckedSaver

__all__ = ["CheckedSaver", "CheckpointValueError", "Problem", "find_config_file", "find_problems"]


def __getattr__(name: str) -> Any:
    if name == "CheckedSaver":
        from mypy_lgstate.runtime.saver import CheckedSaver

        return CheckedSaver
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
