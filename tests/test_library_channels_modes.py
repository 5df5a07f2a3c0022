"""Graph state declared in an installed library gives the same diagnostics in every mode: cold, warm
after an edit to the user's module or to the library, parallel (``--num-workers``) and the daemon.

The plugin reads a library module's classes only when the module may declare channels of its own
(``mypy_lgstate/checker/state_modules.py``): here ``sharedstate/base.py`` (it imports
``Annotated``) and the TypedDicts of ``sharedstate/typed.py``. The models of ``sharedstate/models.py``
have no record: their channels are those of their bases, read alike from the syntax (cold) and from
the cache (warm). The Overwrite verdict tells a reducer channel from a plain one
(``test-data/test_library_channels.yml`` has the messages in full).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from modes import Daemon, Project, line_of, running, supports_parallel_checking

BASE = """\
import operator
from typing import Annotated, TypedDict

from pydantic import BaseModel


class ModelBase(BaseModel):
    tags: Annotated[list[str], operator.add] = []


class TypedBase(TypedDict):
    tags: Annotated[list[str], operator.add]
"""
BASE_WITHOUT_REDUCERS = BASE.replace("Annotated[list[str], operator.add]", "list[str]")

MODELS = """\
from sharedstate.base import ModelBase


class Child(ModelBase):
    title: str = ""
"""

TYPED = """\
from typing import TypedDict

from sharedstate.base import TypedBase


class Sub(TypedBase):
    title: str
"""

GRAPH = """\
from langgraph.graph import StateGraph
from langgraph.types import Command, Overwrite
from sharedstate.models import Child
from sharedstate.typed import Sub


def reset_child(state: Child) -> Command[None]:
    return Command(update={"tags": Overwrite([])})


def reset_sub(state: Sub) -> Command[None]:
    return Command(update={"tags": Overwrite([])})


children = StateGraph(Child)
children.add_node("reset_child", reset_child)
subs = StateGraph(Sub)
subs.add_node("reset_sub", reset_sub)
"""
GRAPH_EDITED = GRAPH + "graphs = (children, subs)\n"

CONFIG = "[mypy]\nplugins = mypy_lgstate.plugin\nmypy_path = lib/site-packages\n"

CLEAN: list[str] = []


def _overwrite(line_text: str, schema: str, effect: str) -> str:
    return (
        f"pkg/graph.py:{line_of(GRAPH, 'Overwrite([])', after=line_text)}: error: Command.update"
        f' writes Overwrite(...) to channel "tags" ("list[str]" in "{schema}"), which has no reducer:'
        " only a reducer channel unwraps an Overwrite, so LangGraph stores the Overwrite object"
        f' itself, and {effect}. Fix: write the value itself, or give "tags" a reducer'
        "  [lgstate-channel-type]"
    )


NO_REDUCERS = sorted(
    [
        _overwrite(
            "def reset_child", "Child",
            'pydantic raises ValidationError when LangGraph validates the state with "Child"'
            " before the next node runs",
        ),
        _overwrite(
            "def reset_sub", "Sub", "the JSON serializer raises TypeError when the checkpoint is written"
        ),
    ]
)


def create(root: Path) -> Project:
    return Project.create(root, {
        "pkg/__init__.py": "",
        "pkg/graph.py": GRAPH,
        "lib/site-packages/sharedstate/__init__.py": "",
        "lib/site-packages/sharedstate/py.typed": "",
        "lib/site-packages/sharedstate/base.py": BASE,
        "lib/site-packages/sharedstate/models.py": MODELS,
        "lib/site-packages/sharedstate/typed.py": TYPED,
        "mypy.ini": CONFIG,
    })


@pytest.fixture(scope="module")
def cold(tmp_path_factory: pytest.TempPathFactory) -> Project:
    project = create(tmp_path_factory.mktemp("library-cold"))
    assert project.mypy() == CLEAN
    return project


def test_warm_runs_after_edits_to_the_users_module_and_to_the_library(
    cold: Project, tmp_path: Path
) -> None:
    project = cold.copy(tmp_path / "project")
    project.write("pkg/graph.py", GRAPH_EDITED)  # the library comes from the cache
    assert project.mypy() == CLEAN
    project.write("lib/site-packages/sharedstate/base.py", BASE_WITHOUT_REDUCERS)
    assert project.mypy() == NO_REDUCERS
    fresh = create(tmp_path / "cold-without-reducers")
    fresh.write("lib/site-packages/sharedstate/base.py", BASE_WITHOUT_REDUCERS)
    assert fresh.mypy() == NO_REDUCERS
    project.write("lib/site-packages/sharedstate/base.py", BASE)
    assert project.mypy() == CLEAN


def test_parallel_run(tmp_path: Path) -> None:
    if not supports_parallel_checking():
        pytest.skip("this mypy has no --num-workers")
    project = create(tmp_path / "project")
    project.write("lib/site-packages/sharedstate/base.py", BASE_WITHOUT_REDUCERS)
    assert project.mypy("-n", "2") == NO_REDUCERS
    project.write("lib/site-packages/sharedstate/base.py", BASE)
    assert project.mypy("-n", "2") == CLEAN


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    yield from running(create(tmp_path / "project"))


def test_daemon(daemon: Daemon) -> None:
    assert daemon.run() == CLEAN
    daemon.project.write("pkg/graph.py", GRAPH_EDITED)
    assert daemon.run() == CLEAN
