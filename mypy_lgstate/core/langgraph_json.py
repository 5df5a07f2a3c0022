"""A project's ``langgraph.json``: the file LangGraph's server deploys from.

Two things in it concern the checks. The server checkpoints to PostgreSQL unless the file names a
checkpointer of its own (``"checkpointer": {"path": ...}``), so such a project's saver is
``"postgres"`` when its options do not say (``config.py``). And its ``graphs`` name the graphs it
deploys (``"agent": "./src/agent/graph.py:graph"``, or ``{"path": ...}``), which ``lgstate audit``
reads when no ``--graph`` is given, and whose files ``lgstate lock`` reads when given no paths.

The file is found from the current directory upward, as far as the directory of the configuration
file, else the repository root (a directory holding ``.git`` or ``.hg``). A file that is not valid
JSON, or whose ``graphs`` are not what LangGraph reads, is one line naming it (``ConfigError``). It
imports nothing of mypy: the plugin, the command and the runtime checker share it.
"""

from __future__ import annotations

import json
import os
from typing import Any, Final, NamedTuple

FILE_NAME: Final = "langgraph.json"


class LangGraphJsonError(Exception):
    """A ``langgraph.json`` that cannot be read as LangGraph reads it: the message is one line."""


class GraphRef(NamedTuple):
    """One entry of ``graphs``: its name, and what it points at: a file (an absolute path) or a
    module (a dotted name), and the attribute there."""

    name: str
    file: str | None
    module: str | None
    attribute: str


class LangGraphProject(NamedTuple):
    path: str  # the langgraph.json file
    graphs: tuple[GraphRef, ...]
    own_checkpointer: bool  # "checkpointer": {"path": ...} replaces the server's PostgreSQL saver


def find_langgraph_json(config_file: str | None, start: str | None = None) -> str | None:
    """The ``langgraph.json`` of the project: in ``start`` (default: the current directory) or a
    parent, no higher than the directory of ``config_file`` (when it lies above), else the
    repository root."""
    directory = os.path.abspath(start if start is not None else os.curdir)
    ceiling = os.path.dirname(os.path.abspath(config_file)) if config_file else None
    if ceiling is not None and not _within(directory, ceiling):
        ceiling = None
    while True:
        candidate = os.path.join(directory, FILE_NAME)
        if os.path.isfile(candidate):
            return candidate
        if directory == ceiling or any(
            os.path.exists(os.path.join(directory, vcs)) for vcs in (".git", ".hg")
        ):
            return None
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _within(directory: str, ancestor: str) -> bool:
    return directory == ancestor or directory.startswith(ancestor.rstrip(os.sep) + os.sep)


def read_langgraph_json(path: str) -> LangGraphProject:
    shown = _shown(path)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except json.JSONDecodeError as error:
        raise LangGraphJsonError(f"{shown}: not valid JSON: {error}") from None
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else "not UTF-8"
        raise LangGraphJsonError(f"{shown}: cannot be read: {reason or error}") from None
    if not isinstance(data, dict):
        raise LangGraphJsonError(f"{shown}: must hold a JSON object")
    root = os.path.dirname(os.path.abspath(path))
    graphs = data.get("graphs", {})
    if not isinstance(graphs, dict):
        raise LangGraphJsonError(f'{shown}: "graphs" must be an object of graph names')
    refs = tuple(_graph_ref(shown, root, name, entry) for name, entry in graphs.items())
    checkpointer = data.get("checkpointer")
    own = isinstance(checkpointer, dict) and bool(checkpointer.get("path"))
    return LangGraphProject(path, refs, own)


def _shown(path: str) -> str:
    """The file as messages name it: relative to the current directory when it lies below it."""
    relative = os.path.relpath(path)
    return path if relative.startswith(os.pardir) else relative


def _graph_ref(shown: str, root: str, name: str, entry: Any) -> GraphRef:
    spec = entry.get("path") if isinstance(entry, dict) else entry
    target, sep, attribute = spec.rpartition(":") if isinstance(spec, str) else ("", "", "")
    if not sep or not target or not attribute:
        raise LangGraphJsonError(
            f'{shown}: graph "{name}": expected "path/to/file.py:attribute" or'
            f' "package.module:attribute", not {json.dumps(spec)}'
        )
    if target.endswith(".py") or "/" in target or os.sep in target:
        return GraphRef(name, os.path.normpath(os.path.join(root, target)), None, attribute)
    return GraphRef(name, None, target, attribute)


def mypy_targets(project: LangGraphProject) -> list[str]:
    """What mypy checks to read the project's graphs: each file (relative to the current directory
    when below it), and each module as ``-m MODULE``."""
    targets: list[str] = []
    for ref in project.graphs:
        if ref.file is not None:
            shown = _shown(ref.file)
            if shown not in targets:
                targets.append(shown)
        elif ref.module is not None:
            targets += ["-m", ref.module]
    return targets
