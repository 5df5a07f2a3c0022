"""The routes of issue 22 give the same answers in every mode of mypy.

``pkg/agent.py`` builds a middleware list in code (a helper of the module, then ``append``) from
middleware whose state class lives in ``pkg/states.py``; the ``Writer`` hook writes ``notes``, a
channel only that class declares (a list not followed would report it as an unknown key). The
tests add a ``set[str]`` field to the state class: a cold run, a warm run after the edit, a
parallel run and the daemon must all report it at the ``create_agent`` call, and go quiet again
when the edit is undone. ``test_modes.py`` has the project helpers.
"""

from __future__ import annotations

from pathlib import Path

from modes import Daemon, Project, supports_parallel_checking

STATES = """\
from typing_extensions import NotRequired

from langchain.agents.middleware import AgentState


class NoteState(AgentState):
    notes: NotRequired[list[str]]
"""

AGENT = """\
from typing import Any, TypedDict

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, AgentState
from langgraph.runtime import Runtime

from pkg.states import NoteState


class Update(TypedDict):
    notes: list[str]


class Notes(AgentMiddleware):
    state_schema = NoteState


class Writer(AgentMiddleware):
    def after_model(self, state: AgentState, runtime: Runtime[None]) -> Update | None:  # type: ignore[override]
        return None


def stack() -> list[AgentMiddleware]:
    return [Notes()]


def build(model: Any) -> Any:
    middleware = stack()
    middleware.append(Writer())
    return create_agent(model, middleware=middleware)
"""

EDITED = STATES + "    seen: NotRequired[set[str]]\n"
AFTER_EDIT = [
    'pkg/agent.py:30: error: NoteState.seen (pkg.states.NoteState in pkg/states.py) is "set[str]":'
    " the JSON serializer raises TypeError when the checkpoint is written. Fix: store a sorted list"
    " instead  [lgstate-unserializable]",
]


def project(root: Path) -> Project:
    return Project.create(root, {
        "pkg/__init__.py": "",
        "pkg/states.py": STATES,
        "pkg/agent.py": AGENT,
        "mypy.ini": "[mypy]\nplugins = mypy_lgstate.plugin\n",
    })


def test_cold_warm_and_parallel_runs_follow_a_middleware_list_built_in_code(tmp_path: Path) -> None:
    warm = project(tmp_path / "warm")
    assert warm.mypy() == []
    warm.write("pkg/states.py", EDITED)
    assert warm.mypy() == AFTER_EDIT
    cold = project(tmp_path / "cold")
    cold.write("pkg/states.py", EDITED)
    assert cold.mypy() == AFTER_EDIT
    if supports_parallel_checking():
        parallel = project(tmp_path / "parallel")
        parallel.write("pkg/states.py", EDITED)
        assert parallel.mypy("-n", "2") == AFTER_EDIT
    warm.write("pkg/states.py", STATES)
    assert warm.mypy() == []


def test_daemon_follows_a_middleware_list_built_in_code(tmp_path: Path) -> None:
    daemon = Daemon(project(tmp_path))
    try:
        assert daemon.run() == []
        daemon.project.write("pkg/states.py", EDITED)
        assert daemon.run() == AFTER_EDIT
        daemon.project.write("pkg/states.py", STATES)
        assert daemon.run() == []
    finally:
        daemon.stop()
