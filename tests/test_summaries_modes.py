"""A node read through a helper two modules away gives the same diagnostics in every mode: cold,
warm after an edit to any one module, parallel (``--num-workers``), and the daemon.

``pkg/graph.py`` registers ``nodes.deploy``, which returns ``await developer_deploy(state)``
(``pkg/deploy.py``), which returns ``await agent.invoke(state)``, a method of ``DeveloperAgent``
(``pkg/agents.py``), whose returned dict holds ``stamp()`` (``pkg/helpers.py``). Each module records
the summary of its functions in its interface (``mypy_lgstate/routes/summaries.py``), and the
graph's module follows them from the registration. The edits: ``stamp()``'s return type (a
declaration the summary names), a key the agent returns (the agents module's summary changes), a
channel added to the state, and a helper whose dict nothing registers, which stays silent.
"""

from __future__ import annotations

import re
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
from typing_extensions import TypedDict


class State(TypedDict):
    title: str
    tags: list[str]
"""
STATE_EDITED = STATE + "    subtitle: str\n"

AGENTS = """\
from typing import Any

from pkg.helpers import stamp


class DeveloperAgent:
    async def invoke(self, state: Any) -> dict[str, Any]:
        return {"title": stamp()}


def collect_data(state: Any) -> dict[str, object]:
    # Shaped like a node, and no graph registers it: nothing is said about it.
    return {"title": (1, 2), "tags": {"a"}}
"""
AGENTS_EDITED = AGENTS.replace('{"title": stamp()}', '{"title": stamp(), "subtitle": ""}')

DEPLOY = """\
from typing import Any

from pkg.agents import DeveloperAgent

agent = DeveloperAgent()


async def developer_deploy(state: Any) -> dict[str, Any]:
    return await agent.invoke(state)
"""

NODES = """\
from typing import Any

from pkg.deploy import developer_deploy
from pkg.state import State


async def deploy(state: State) -> dict[str, Any]:
    return await developer_deploy(state)
"""

GRAPH = """\
from langgraph.graph import StateGraph

from pkg import nodes
from pkg.state import State

builder = StateGraph(State)
builder.add_node("deploy", nodes.deploy)
graph = builder.compile()
"""

LOSSY = (
    "the msgpack serializer writes it, but it comes back as list. Fix: store a list and declare it "
    "as list[...]  [lgstate-lossy]"
)
ITEM_LINE = line_of(AGENTS, '{"title": stamp()')
ADD_LINE = line_of(GRAPH, 'add_node("deploy"')

CLEAN: list[str] = []
TUPLE = [
    f'pkg/graph.py:{ADD_LINE}: error: DeveloperAgent.invoke().title (pkg/agents.py:{ITEM_LINE})'
    f' is "tuple[int, int]": {LOSSY}'
]
UNKNOWN_SUBTITLE = [
    f'pkg/graph.py:{ADD_LINE}: error: Node "deploy" (pkg/agents.py:{ITEM_LINE}) returns key'
    ' "subtitle", which is not a channel of graph state "State": LangGraph drops it silently. Fix:'
    ' add "subtitle" to "State", or remove it from the returned dict  [lgstate-unknown-key]'
]

CONFIG = "[mypy]\nplugins = mypy_lgstate.plugin\n\n[mypy_lgstate]\nprofile = msgpack\n"


def create(root: Path) -> Project:
    return Project.create(root, {
        "pkg/__init__.py": "",
        "pkg/helpers.py": HELPERS,
        "pkg/state.py": STATE,
        "pkg/agents.py": AGENTS,
        "pkg/deploy.py": DEPLOY,
        "pkg/nodes.py": NODES,
        "pkg/graph.py": GRAPH,
        "mypy.ini": CONFIG,
    })


@pytest.fixture(scope="module")
def cold(tmp_path_factory: pytest.TempPathFactory) -> Project:
    project = create(tmp_path_factory.mktemp("summaries-cold"))
    assert project.mypy() == CLEAN
    return project


def test_cold_and_warm_runs_after_edits_to_each_module(cold: Project, tmp_path: Path) -> None:
    project = cold.copy(tmp_path / "project")
    project.write("pkg/helpers.py", HELPERS_TUPLE)  # a declaration the agent's summary names
    assert project.mypy() == TUPLE
    fresh = create(tmp_path / "cold-tuple")
    fresh.write("pkg/helpers.py", HELPERS_TUPLE)
    assert fresh.mypy() == TUPLE
    project.write("pkg/helpers.py", HELPERS)
    assert project.mypy() == CLEAN
    project.write("pkg/agents.py", AGENTS_EDITED)  # the helper's module: a key the graph lacks
    assert project.mypy() == UNKNOWN_SUBTITLE
    project.write("pkg/state.py", STATE_EDITED)  # the state: now it is a channel
    assert project.mypy() == CLEAN
    project.write("pkg/state.py", STATE)
    assert project.mypy() == UNKNOWN_SUBTITLE
    project.write("pkg/agents.py", AGENTS)
    assert project.mypy() == CLEAN


def test_a_line_shift_rechecks_only_the_readers_of_the_lines_that_moved(
    cold: Project, tmp_path: Path
) -> None:
    """A summary is part of its module's interface: an edit that shifts lines rechecks the modules
    that import it when, and only when, a line a message names moved (an item of a returned dict),
    not for returned calls, which hold none; plain mypy rechecks the edited module alone."""
    project = cold.copy(tmp_path / "project")
    project.write("pkg/deploy.py", "# moved down a line\n" + DEPLOY)
    found, log = project.mypy_logged()
    assert found == CLEAN
    assert re.findall(r"Scheduling SCC singleton \(([\w.]+)\)", log) == ["pkg.deploy"]
    project.write("pkg/helpers.py", HELPERS_TUPLE)
    project.write("pkg/agents.py", "# moved down a line\n" + AGENTS)
    moved = [TUPLE[0].replace(f"pkg/agents.py:{ITEM_LINE}", f"pkg/agents.py:{ITEM_LINE + 1}")]
    assert moved != TUPLE and project.mypy() == moved


def test_parallel_runs(cold: Project, tmp_path: Path) -> None:
    if not supports_parallel_checking():
        pytest.skip("this mypy has no --num-workers")
    project = cold.copy(tmp_path / "project")
    project.write("pkg/helpers.py", HELPERS_TUPLE)
    assert project.mypy("-n", "2") == TUPLE
    project.write("pkg/agents.py", AGENTS_EDITED)
    project.write("pkg/helpers.py", HELPERS)
    assert project.mypy("-n", "2") == UNKNOWN_SUBTITLE


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    yield from running(create(tmp_path / "project"))


def test_daemon_follows_edits_to_each_module(daemon: Daemon) -> None:
    project = daemon.project
    assert daemon.run() == CLEAN
    project.write("pkg/helpers.py", HELPERS_TUPLE)
    assert daemon.run() == TUPLE
    project.write("pkg/helpers.py", HELPERS)
    assert daemon.run() == CLEAN
    project.write("pkg/agents.py", AGENTS_EDITED)
    assert daemon.run() == UNKNOWN_SUBTITLE
    project.write("pkg/state.py", STATE_EDITED)
    assert daemon.run() == CLEAN
    project.write("pkg/state.py", STATE)
    assert daemon.run() == UNKNOWN_SUBTITLE
    project.write("pkg/agents.py", AGENTS)
    assert daemon.run() == CLEAN
