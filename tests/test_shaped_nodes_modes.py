"""Nodes defined in another module than their ``add_node`` (``pkg/nodes.py`` + ``pkg/graph.py``) give
the same diagnostics in every mode: cold, warm after an edit to any one module, parallel
(``--num-workers``), and the daemon.

Their values are checked in ``pkg/nodes.py`` once that module is checked, and the keys they return
are compared with the graph's channels in ``pkg/graph.py``, from what ``pkg/nodes.py`` recorded in its
interface (``mypy_lgstate/routes/shaped_nodes.py``). The edits: ``stamp()``'s return type (a module the
bodies use: the daemon rechecks the two bodies alone), a key the node returns (the record changes, so
the graph's module is checked again), and a channel added to the state.
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
import operator
from typing import Annotated

from typing_extensions import TypedDict


class State(TypedDict):
    title: str
    tags: Annotated[list[str], operator.add]
"""
STATE_EDITED = STATE + "    subtitle: str\n"

NODES = """\
from typing import Any

from pkg.helpers import stamp
from pkg.state import State


def title(state: State) -> dict[str, Any]:
    return {"title": stamp()}


def tag(state: State) -> dict[str, Any]:
    update: dict[str, Any] = {"tags": ["a"]}
    update["title"] = stamp()
    return update


def prompt_vars(state: State) -> dict[str, Any]:
    # A helper: its module calls it, and its dict goes to a prompt, never to the checkpoint.
    return {"title": stamp(), "pair": (1, 2)}


def summary(state: State) -> str:
    return str(prompt_vars(state))
"""
NODES_EDITED = NODES.replace('{"title": stamp()}', '{"title": stamp(), "subtitle": ""}')

GRAPH = """\
from langgraph.graph import StateGraph

from pkg import nodes
from pkg.nodes import title
from pkg.state import State

builder = StateGraph(State)
builder.add_node("title", title)
builder.add_node("tag", nodes.tag)
graph = builder.compile()
"""

LOSSY = (
    "the msgpack serializer writes it, but it comes back as list. Fix: store a list and declare it "
    "as list[...]  [lgstate-lossy]"
)
TITLE_LINE = line_of(NODES, '{"title": stamp()')
TAG_LINE = line_of(NODES, 'update["title"]')
ADD_TITLE_LINE = line_of(GRAPH, 'add_node("title"')

CLEAN: list[str] = []
TUPLES = sorted(
    [
        f'pkg/nodes.py:{TITLE_LINE}: error: title().title is "tuple[int, int]": {LOSSY}',
        f'pkg/nodes.py:{TAG_LINE}: error: tag().title is "tuple[int, int]": {LOSSY}',
    ]
)
UNKNOWN_SUBTITLE = [
    f'pkg/graph.py:{ADD_TITLE_LINE}: error: Node "title" (pkg/nodes.py:{TITLE_LINE}) returns key'
    ' "subtitle", which is not a channel of graph state "State": LangGraph drops it silently. Fix:'
    ' add "subtitle" to "State", or remove it from the returned dict  [lgstate-unknown-key]'
]

CONFIG = "[mypy]\nplugins = mypy_lgstate.plugin\n\n[mypy_lgstate]\nprofile = msgpack\n"


def create(root: Path) -> Project:
    return Project.create(root, {
        "pkg/__init__.py": "",
        "pkg/helpers.py": HELPERS,
        "pkg/state.py": STATE,
        "pkg/nodes.py": NODES,
        "pkg/graph.py": GRAPH,
        "mypy.ini": CONFIG,
    })


@pytest.fixture(scope="module")
def cold(tmp_path_factory: pytest.TempPathFactory) -> Project:
    project = create(tmp_path_factory.mktemp("shaped-cold"))
    assert project.mypy() == CLEAN
    return project


def test_cold_and_warm_runs_after_edits_to_each_module(cold: Project, tmp_path: Path) -> None:
    project = cold.copy(tmp_path / "project")
    project.write("pkg/helpers.py", HELPERS_TUPLE)  # a module the node bodies use
    assert project.mypy() == TUPLES
    fresh = create(tmp_path / "cold-tuples")
    fresh.write("pkg/helpers.py", HELPERS_TUPLE)
    assert fresh.mypy() == TUPLES
    project.write("pkg/helpers.py", HELPERS)
    assert project.mypy() == CLEAN
    project.write("pkg/nodes.py", NODES_EDITED)  # the nodes' module: a key the graph lacks
    assert project.mypy() == UNKNOWN_SUBTITLE
    project.write("pkg/state.py", STATE_EDITED)  # the state: now it is a channel
    assert project.mypy() == CLEAN
    project.write("pkg/state.py", STATE)
    assert project.mypy() == UNKNOWN_SUBTITLE
    project.write("pkg/nodes.py", NODES)
    assert project.mypy() == CLEAN


def test_parallel_runs(cold: Project, tmp_path: Path) -> None:
    if not supports_parallel_checking():
        pytest.skip("this mypy has no --num-workers")
    project = cold.copy(tmp_path / "project")
    project.write("pkg/helpers.py", HELPERS_TUPLE)
    assert project.mypy("-n", "2") == TUPLES
    project.write("pkg/nodes.py", NODES_EDITED)
    project.write("pkg/helpers.py", HELPERS)
    assert project.mypy("-n", "2") == UNKNOWN_SUBTITLE


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    yield from running(create(tmp_path / "project"))


def test_daemon_follows_edits_to_each_module(daemon: Daemon) -> None:
    project = daemon.project
    assert daemon.run() == CLEAN
    # dmypy rechecks the two node bodies alone: no end-of-module moment.
    project.write("pkg/helpers.py", HELPERS_TUPLE)
    assert daemon.run() == TUPLES
    project.write("pkg/helpers.py", HELPERS)
    assert daemon.run() == CLEAN
    project.write("pkg/nodes.py", NODES_EDITED)
    assert daemon.run() == UNKNOWN_SUBTITLE
    project.write("pkg/state.py", STATE_EDITED)
    assert daemon.run() == CLEAN
    project.write("pkg/state.py", STATE)
    assert daemon.run() == UNKNOWN_SUBTITLE
    project.write("pkg/nodes.py", NODES)
    assert daemon.run() == CLEAN
