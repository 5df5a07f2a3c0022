"""Channel types give the same diagnostics in every mode: cold, warm after an edit to the state's
module or to the graph's, parallel (``--num-workers``), and the daemon.

mypy strips ``Annotated`` metadata from the types it keeps, so a channel's reducer is read from the
state class's syntax and kept in its metadata (``mypy_lgstate/checker/channels.py``). These runs tell whether
the reducers are still known when the state's module comes from the cache (a warm run that rechecks
the graph alone), from another worker, or from the daemon's memory, and whether an edit to a reducer
alone (the declared type unchanged) rechecks the graph. A ``Send`` payload is compared with its
node's input schema in a function that never names that schema: an edit to the schema must recheck
it all the same.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from modes import Daemon, Project, line_of, running, supports_parallel_checking

# The class is declared in a block, as some projects declare theirs per Python version: its channels
# must still be recorded for the runs that read it from the cache.
STATE = """\
import operator
import sys
from typing import Annotated, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

if sys.version_info >= (3, 9):
    class State(TypedDict):
        tags: Annotated[list[str], operator.add]
        messages: Annotated[list[AnyMessage], add_messages]
        count: int
"""
# The reducer of ``messages`` removed: its declared type is the same.
STATE_NO_REDUCER = STATE.replace("Annotated[list[AnyMessage], add_messages]", "list[AnyMessage]")
STATE_STR = STATE.replace("count: int", "count: str")

GRAPH = """\
from typing import Any

from langgraph.graph import StateGraph

from pkg.state import State


def record(state: State) -> dict[str, Any]:
    return {
        "tags": ["a"],
        "messages": [("user", "hi")],
        "count": 1,
    }


builder = StateGraph(State)
builder.add_node(record)
"""
GRAPH_EDITED = GRAPH.replace('"count": 1,', '"count": "1",')

COUNT = (
    'pkg/graph.py:{line}: error: Node "record" writes "str" to channel "count", but channel "count" is'
    ' declared "int" in "State": LangGraph stores it unchanged, and the nodes after it read a value of'
    ' type "str" where "int" is declared. Fix: write a value of type "int", or change the declaration'
    ' of "count" in "State"  [lgstate-channel-type]'
)
MESSAGES = (
    'pkg/graph.py:{line}: error: Node "record" writes "list[tuple[str, str]]" to channel "messages", but'
    ' channel "messages" is declared "list[AnyMessage]" in "State": LangGraph stores it unchanged, and'
    ' the nodes after it read a value of type "list[tuple[str, str]]" where "list[AnyMessage]" is'
    ' declared. Fix: write a value of type "list[AnyMessage]", or change the declaration of "messages"'
    ' in "State"  [lgstate-channel-type]'
)
COUNT_STR = (
    'pkg/graph.py:{line}: error: Node "record" writes "int" to channel "count", but channel "count" is'
    ' declared "str" in "State": LangGraph stores it unchanged, and the nodes after it read a value of'
    ' type "int" where "str" is declared. Fix: write a value of type "str", or change the declaration'
    ' of "count" in "State"  [lgstate-channel-type]'
)
# A fan-out whose function names no schema: only the Send's target node reads State.
SENDS = """\
from typing import Any

from langgraph.graph import StateGraph
from langgraph.types import Send

from pkg.state import State


def work(state: State) -> dict[str, Any]:
    return {}


def fan_out(jobs: list[str]) -> list[Send]:
    return [Send("work", {"count": 1})]


builder = StateGraph(State)
builder.add_node(work)
"""
SEND_STR = (
    'pkg/sends.py:{line}: error: Send("work", ...) writes "int" to key "count" of node "work"\'s input,'
    ' but "count" is declared "str" in "State": LangGraph hands a Send payload to its node unchanged,'
    ' and node "work" reads a value of type "int" where "str" is declared. Fix: write a value of type'
    ' "str", or change the declaration of "count" in "State"  [lgstate-channel-type]'
)
CLEAN: list[str] = []
EDITED = [COUNT.format(line=line_of(GRAPH, '"count": 1,'))]
NO_REDUCER = [MESSAGES.format(line=line_of(GRAPH, '"messages"'))]
STR = [COUNT_STR.format(line=line_of(GRAPH, '"count": 1,'))]
SENDS_STR = sorted([*STR, SEND_STR.format(line=line_of(SENDS, "Send(\"work\""))])

CONFIG = "[mypy]\nplugins = mypy_lgstate.plugin\n\n[mypy_lgstate]\nprofile = msgpack\n"


def create(root: Path) -> Project:
    return Project.create(root, {
        "pkg/__init__.py": "",
        "pkg/state.py": STATE,
        "pkg/graph.py": GRAPH,
        "mypy.ini": CONFIG,
    })


@pytest.fixture(scope="module")
def cold(tmp_path_factory: pytest.TempPathFactory) -> Project:
    project = create(tmp_path_factory.mktemp("channels-cold"))
    assert project.mypy() == CLEAN
    return project


def test_cold_and_warm_runs_after_edits_to_each_module(cold: Project, tmp_path: Path) -> None:
    project = cold.copy(tmp_path / "project")
    project.write("pkg/graph.py", GRAPH_EDITED)  # the state's module comes from the cache
    assert project.mypy() == EDITED
    project.write("pkg/graph.py", GRAPH)
    assert project.mypy() == CLEAN
    project.write("pkg/state.py", STATE_NO_REDUCER)  # only the reducer changes
    assert project.mypy() == NO_REDUCER
    fresh = create(tmp_path / "cold-no-reducer")
    fresh.write("pkg/state.py", STATE_NO_REDUCER)
    assert fresh.mypy() == NO_REDUCER
    project.write("pkg/state.py", STATE)
    assert project.mypy() == CLEAN


def test_parallel_runs(cold: Project, tmp_path: Path) -> None:
    if not supports_parallel_checking():
        pytest.skip("this mypy has no --num-workers")
    project = cold.copy(tmp_path / "project")
    project.write("pkg/graph.py", GRAPH_EDITED)
    assert project.mypy("-n", "2") == EDITED
    project.write("pkg/graph.py", GRAPH)
    project.write("pkg/state.py", STATE_NO_REDUCER)
    assert project.mypy("-n", "2") == NO_REDUCER


@pytest.fixture(scope="module")
def module_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    yield from running(create(tmp_path_factory.mktemp("daemon") / "project"))


@pytest.fixture
def daemon(module_daemon: Daemon) -> Daemon:
    """The module's daemon, its project as it was first written."""
    module_daemon.project.restore()
    return module_daemon


def test_daemon_follows_edits_to_each_module(daemon: Daemon) -> None:
    project = daemon.project
    assert daemon.run() == CLEAN
    project.write("pkg/graph.py", GRAPH_EDITED)
    assert daemon.run() == EDITED
    project.write("pkg/graph.py", GRAPH)
    assert daemon.run() == CLEAN
    project.write("pkg/state.py", STATE_STR)
    assert daemon.run() == STR
    project.write("pkg/state.py", STATE)
    assert daemon.run() == CLEAN


def test_daemon_follows_an_edit_to_the_schema_a_send_is_checked_with(daemon: Daemon) -> None:
    project = daemon.project
    project.write("pkg/sends.py", SENDS)
    assert daemon.run() == CLEAN
    project.write("pkg/state.py", STATE_STR)
    assert daemon.run() == SENDS_STR
    project.write("pkg/state.py", STATE)
    assert daemon.run() == CLEAN


def test_daemon_follows_an_edit_to_a_reducer_alone(daemon: Daemon) -> None:
    project = daemon.project
    assert daemon.run() == CLEAN
    project.write("pkg/state.py", STATE_NO_REDUCER)
    assert daemon.run() == NO_REDUCER


# A model of a module that imports no ``Annotated`` (nor anything of LangGraph) declares no channel
# of its own; its channels are its bases', whether its module was just checked or comes from the
# cache (``state_modules.may_declare_channels``).
BASE = """\
import operator
from typing import Annotated

from pydantic import BaseModel


class Base(BaseModel):
    items: Annotated[list[int], operator.add] = []
"""
DERIVED = """\
from pkg.base import Base


class Derived(Base):
    name: str = ""
"""
DERIVED_GRAPH = """\
from langgraph.graph import StateGraph

from pkg.derived import Derived


def node(state: Derived) -> dict[str, object]:
    return {"items": 5}


builder = StateGraph(Derived)
builder.add_node("node", node)
"""
INHERITED = [
    f'pkg/graph.py:{line_of(DERIVED_GRAPH, "return")}: error: Node "node" writes "int" to channel'
    ' "items", but channel "items" ("list[int]" in "Derived") has the reducer "add", which takes'
    ' "list[int]": LangGraph calls it with the value in that step, and a list can only be'
]


def test_a_model_inherits_its_bases_reducers_from_syntax_and_from_the_cache(tmp_path: Path) -> None:
    project = Project.create(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/base.py": BASE,
        "pkg/derived.py": DERIVED,
        "pkg/graph.py": DERIVED_GRAPH,
        "mypy.ini": CONFIG,
    })
    cold = project.mypy()
    assert [line[: len(INHERITED[0])] for line in cold] == INHERITED
    project.write("pkg/graph.py", DERIVED_GRAPH + "\n")  # the model's module comes from the cache
    assert project.mypy() == cold
