"""Node bodies give the same diagnostics in every mode: cold, warm after an edit to the node's module
or to a module its body uses, parallel (``--num-workers``), and the daemon.

The project: ``pkg/helpers.py`` (``stamp()``, whose return type the tests change), ``pkg/state.py`` (the
graph state) and ``pkg/graph.py`` (nodes declared ``-> dict[str, Any]`` and ``@task`` functions with no
return type, registered in the same module). The body checks read a module's bodies at the end of its
check (``mypy_lgstate/routes/bodies.py``); the daemon rechecks a node's body alone when ``stamp()`` changes,
so these runs are the ones that tell whether that moment is kept in every mode.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from modes import Daemon, Project, line_of, running, supports_parallel_checking

HELPERS = """\
def stamp() -> str:
    return ""
"""
HELPERS_TUPLE = """\
def stamp() -> tuple[int, int]:
    return (1, 2)
"""

STATE = """\
from typing import TypedDict


class State(TypedDict):
    when: str
    count: int
    pair: list[int]
"""

GRAPH = """\
from typing import Any

from langgraph.func import task
from langgraph.graph import StateGraph

from pkg.helpers import stamp
from pkg.state import State


def record(state: State) -> dict[str, Any]:
    return {"when": stamp(), "count": 1}


def count(state: State) -> dict[str, Any]:
    update: dict[str, Any] = {"count": state["count"] + 1}
    update["when"] = stamp()
    return update


@task
def fetch(n: int):
    return {"at": stamp()}


builder = StateGraph(State)
builder.add_node(record)
builder.add_node(count)
"""
GRAPH_EDITED = GRAPH.replace('"count": 1}', '"count": 1, "pair": (1, 2)}')
PAIR = "pkg/graph.py:{line}: error: record().pair is \"tuple[int, int]\": {lossy}"

LOSSY = (
    "the msgpack serializer writes it, but it comes back as list. Fix: store a list and declare it "
    "as list[...]  [lgstate-lossy]"
)
RECORD_LINE = line_of(GRAPH, '"when": stamp()')
COUNT_LINE = line_of(GRAPH, 'update["when"]')
FETCH_LINE = line_of(GRAPH, '"at": stamp()')

# What each version of the project reports (msgpack: only the tuples).
CLEAN: list[str] = []
TUPLES = sorted(
    [
        f'pkg/graph.py:{RECORD_LINE}: error: record().when is "tuple[int, int]": {LOSSY}',
        f'pkg/graph.py:{COUNT_LINE}: error: count().when is "tuple[int, int]": {LOSSY}',
        f'pkg/graph.py:{FETCH_LINE}: error: fetch()["at"] is "tuple[int, int]": {LOSSY}',
    ]
)
EDITED = [PAIR.format(line=RECORD_LINE, lossy=LOSSY)]

CONFIG = "[mypy]\nplugins = mypy_lgstate.plugin\n\n[mypy_lgstate]\nprofile = msgpack\n"


def create(root: Path) -> Project:
    return Project.create(root, {
        "pkg/__init__.py": "",
        "pkg/helpers.py": HELPERS,
        "pkg/state.py": STATE,
        "pkg/graph.py": GRAPH,
        "mypy.ini": CONFIG,
    })


@pytest.fixture(scope="module")
def cold(tmp_path_factory: pytest.TempPathFactory) -> Project:
    project = create(tmp_path_factory.mktemp("bodies-cold"))
    assert project.mypy() == CLEAN
    return project


def test_cold_and_warm_runs_after_edits_to_each_module(cold: Project, tmp_path: Path) -> None:
    project = cold.copy(tmp_path / "project")
    assert project.mypy() == CLEAN
    project.write("pkg/helpers.py", HELPERS_TUPLE)  # a module the bodies use
    assert project.mypy() == TUPLES
    fresh = create(tmp_path / "cold-tuples")
    fresh.write("pkg/helpers.py", HELPERS_TUPLE)
    assert fresh.mypy() == TUPLES
    project.write("pkg/helpers.py", HELPERS)
    assert project.mypy() == CLEAN
    project.write("pkg/graph.py", GRAPH_EDITED)  # the nodes' own module
    assert project.mypy() == EDITED
    project.write("pkg/graph.py", GRAPH)
    assert project.mypy() == CLEAN


def test_parallel_runs(cold: Project, tmp_path: Path) -> None:
    if not supports_parallel_checking():
        pytest.skip("this mypy has no --num-workers")
    project = cold.copy(tmp_path / "project")
    project.write("pkg/helpers.py", HELPERS_TUPLE)
    assert project.mypy("-n", "2") == TUPLES
    project.write("pkg/graph.py", GRAPH_EDITED)
    project.write("pkg/helpers.py", HELPERS)
    assert project.mypy("-n", "2") == EDITED


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    yield from running(create(tmp_path / "project"))


def test_daemon_follows_edits_to_each_module(daemon: Daemon) -> None:
    project = daemon.project
    assert daemon.run() == CLEAN
    # dmypy rechecks the two node bodies and the task alone: no end-of-module moment.
    project.write("pkg/helpers.py", HELPERS_TUPLE)
    assert daemon.run() == TUPLES
    project.write("pkg/helpers.py", HELPERS)
    assert daemon.run() == CLEAN
    project.write("pkg/graph.py", GRAPH_EDITED)
    assert daemon.run() == EDITED
    project.write("pkg/graph.py", GRAPH)
    assert daemon.run() == CLEAN
