"""A state class of another module made graph state inside a factory of the user's module, which the
module calls (``builder = build_builder()``): its findings are reported at that call, in every mode.
mypy checks the factory's body after the call in a cold run, and the daemon before it after an edit:
reported at whichever came first, they moved to ``StateGraph(...)`` in the body, and a ``# type:
ignore`` on the call's line stopped working.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from modes import Daemon, Project, line_of, running, supports_parallel_checking

STATE = """\
from datetime import datetime
from typing import TypedDict


class ProcurementState(TypedDict, total=False):
    item: str
    ordered_at: datetime
"""

GRAPH = """\
from typing import Any

from langgraph.graph import END, START, StateGraph

from pkg.state import ProcurementState


def place_order(state: ProcurementState) -> dict[str, Any]:
    return {"item": "x"}


def build_builder() -> StateGraph[ProcurementState]:
    builder = StateGraph(ProcurementState)
    builder.add_node("place_order", place_order)
    builder.add_edge(START, "place_order")
    builder.add_edge("place_order", END)
    return builder


builder = build_builder()
graph = builder.compile()
"""
EDITED = GRAPH + "graphs = [graph]\n"
IGNORED = GRAPH.replace(
    "builder = build_builder()\n",
    "builder = build_builder()  # type: ignore[lgstate-unserializable]\n",
)

FOUND = [
    f"pkg/graph.py:{line_of(GRAPH, 'builder = build_builder()')}: error:"
    " ProcurementState.ordered_at (pkg.state.ProcurementState in pkg/state.py) is \"datetime\": the"
    " JSON serializer raises TypeError when the checkpoint is written. Fix: store an ISO string"
    " (value.isoformat()) and parse it back with fromisoformat()  [lgstate-unserializable]"
]

CONFIG = "[mypy]\nplugins = mypy_lgstate.plugin\n"


def create(root: Path) -> Project:
    return Project.create(root, {
        "pkg/__init__.py": "",
        "pkg/state.py": STATE,
        "pkg/graph.py": GRAPH,
        "mypy.ini": CONFIG,
    })


def test_cold_and_warm_runs(tmp_path: Path) -> None:
    project = create(tmp_path / "project")
    assert project.mypy() == FOUND
    project.write("pkg/graph.py", EDITED)
    assert project.mypy() == FOUND
    project.write("pkg/graph.py", IGNORED)
    assert project.mypy() == []
    if supports_parallel_checking():
        assert create(tmp_path / "parallel").mypy("-n", "2") == FOUND


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    yield from running(create(tmp_path / "project"))


def test_daemon(daemon: Daemon) -> None:
    assert daemon.run() == FOUND
    daemon.project.write("pkg/graph.py", EDITED)
    assert daemon.run() == FOUND
    daemon.project.write("pkg/graph.py", IGNORED)
    assert daemon.run() == []
    daemon.project.write("pkg/graph.py", EDITED)
    assert daemon.run() == FOUND
