"""The channels a builder collects from other calls give the same answers in every mode of mypy.

A graph's channels include the first-parameter class of a path function defined in another module
(``pkg/helpers.py``: ``Draft``, read by ``grade``). The tests rename a key of ``Draft`` (``critique``
to ``verdict``) and add a ``set[str]`` field to it: the node in ``pkg/graph.py`` that writes
``critique`` then writes a key no class declares, and ``Draft`` has a field the serializer rejects.
A cold run, a warm run after the edit and a daemon after the edit must all say so, and all go quiet
again when the edit is undone. ``test_modes.py`` has the project helpers and explains them.
"""

from __future__ import annotations

from pathlib import Path

from modes import Daemon, Project

HELPERS = """\
from typing import Literal, TypedDict


class Draft(TypedDict):
    draft: str
    critique: str


def grade(state: Draft) -> Literal["__end__"]:
    return "__end__"
"""

GRAPH = """\
from typing import TypedDict

from langgraph.graph import StateGraph

from pkg.helpers import grade


class State(TypedDict):
    question: str


class DraftUpdate(TypedDict):
    draft: str
    critique: str


def write(state: State) -> DraftUpdate:
    return {"draft": "", "critique": ""}


builder = StateGraph(State)
builder.add_node("write", write)
builder.add_conditional_edges("write", grade)
"""

EDITED = HELPERS.replace("    critique: str\n", "    verdict: str\n    seen: set[str]\n")
AFTER_EDIT = [
    'pkg/graph.py:22: error: Node "write" returns key "critique" (in "DraftUpdate"), which is not a'
    ' channel of graph state "State": LangGraph drops it silently. Fix: add "critique" to "State",'
    " or remove it from the update type  [lgstate-unknown-key]",
    "pkg/graph.py:23: error: Draft.seen (pkg.helpers.Draft in pkg/helpers.py) is \"set[str]\": the"
    " JSON serializer raises TypeError when the checkpoint is written. Fix: store a sorted list"
    " instead  [lgstate-unserializable]",
]


def project(root: Path) -> Project:
    return Project.create(root, {
        "pkg/__init__.py": "",
        "pkg/helpers.py": HELPERS,
        "pkg/graph.py": GRAPH,
        "mypy.ini": "[mypy]\nplugins = mypy_lgstate.plugin\n",
    })


def test_cold_and_warm_runs_follow_edits_of_a_path_functions_class(tmp_path: Path) -> None:
    warm = project(tmp_path / "warm")
    assert warm.mypy() == []
    warm.write("pkg/helpers.py", EDITED)
    assert warm.mypy() == AFTER_EDIT
    cold = project(tmp_path / "cold")
    cold.write("pkg/helpers.py", EDITED)
    assert cold.mypy() == AFTER_EDIT
    warm.write("pkg/helpers.py", HELPERS)
    assert warm.mypy() == []


def test_daemon_follows_edits_of_a_path_functions_class(tmp_path: Path) -> None:
    daemon = Daemon(project(tmp_path))
    try:
        assert daemon.run() == []
        daemon.project.write("pkg/helpers.py", EDITED)
        assert daemon.run() == AFTER_EDIT
        daemon.project.write("pkg/helpers.py", HELPERS)
        assert daemon.run() == []
    finally:
        daemon.stop()
