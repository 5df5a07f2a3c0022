"""mypy asks a hook once for each overload candidate it tries, and again when it infers a call twice
(an argument of ``sends.append(...)`` while ``sends = []`` is still partial): the plugin answers a
call it has just answered, with the same argument types, without checking it again. The findings are
the same, at the same places: they were reported past mypy's error filters the first time.

One real mypy build (in this process, so that the checks can be counted) of a program with such
calls; a second build of the same program, with the library cache of the first, checks every
repeat, and must give the same diagnostics.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mypy import api

import library_caches
from mypy_lgstate import plugin
from mypy_lgstate.checker.checks import Checks

PROGRAM = """\
from datetime import datetime
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentState
from langgraph.graph import StateGraph
from langgraph.types import Send
from typing_extensions import NotRequired, TypedDict


class Notes(AgentState[Any]):
    seen: NotRequired[set[str]]


agent = create_agent("openai:gpt-4o", state_schema=Notes)


class State(TypedDict):
    topic: str


class Task(TypedDict):
    item: str


class Job(TypedDict):
    item: str
    when: datetime


def work(state: Task) -> State:
    return {"topic": state["item"]}


builder = StateGraph(State)
builder.add_node("work", work, input_schema=Task)


def fan_out(state: State) -> list[Send]:
    sends = []
    for tag in state["topic"].split():
        job: Job = {"item": tag, "when": datetime.now()}
        sends.append(Send("work", job))
    return sends
"""



def line(text: str) -> int:
    """The line of ``PROGRAM`` that holds ``text``."""
    return next(number for number, held in enumerate(PROGRAM.splitlines(), 1) if text in held)


AGENT, NODE, SEND = line("create_agent("), line("add_node("), line("Send(")
EXPECTED = [
    f'program.py:{line("seen:")}: error: Notes.seen is "set[str]": the JSON serializer raises TypeError when the '
    "checkpoint is written. Fix: store a sorted list instead  [lgstate-unserializable]",
    f'program.py:{line("job: Job")}: error: Send.arg["when"] is "datetime": the JSON serializer raises TypeError when '
    "the checkpoint is written. Fix: store an ISO string (value.isoformat()) and parse it back with "
    "fromisoformat()  [lgstate-unserializable]",
]
COUNTED = ("create_agent", "add_node", "function_write_site")


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[collections.Counter[tuple[str, int]]]:
    """How often each counted check ran, by check and line."""
    calls: collections.Counter[tuple[str, int]] = collections.Counter()

    def counting(name: str, check: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(self: Checks, ctx: Any) -> Any:
            calls[name, ctx.context.line] += 1
            return check(self, ctx)

        return wrapper

    for name in COUNTED:
        monkeypatch.setattr(Checks, name, counting(name, getattr(Checks, name)))
    yield calls


def check(root: Path) -> list[str]:
    stdout, stderr, _ = api.run(["--config-file", str(root / "mypy.ini"), str(root / "program.py")])
    assert not stderr, stderr
    return sorted(line.replace(f"{root}/", "") for line in stdout.splitlines() if ": error:" in line)


def test_a_repeated_ask_is_answered_without_checking_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counted: collections.Counter[tuple[str, int]]
) -> None:
    config = f"[mypy]\nplugins = mypy_lgstate.plugin\ncache_dir = {tmp_path / 'cache'}\n"
    (tmp_path / "mypy.ini").write_text(config)
    library_caches.seed(tmp_path / "cache", config)
    program = tmp_path / "program.py"
    program.write_text(PROGRAM)
    assert check(tmp_path) == EXPECTED
    assert counted == {("create_agent", AGENT): 1, ("add_node", NODE): 1, ("function_write_site", SEND): 1}

    # Every repeat checked again: the same diagnostics, from more checks.
    counted.clear()
    monkeypatch.setattr(plugin._Call, "__eq__", lambda self, other: False)
    program.write_text(PROGRAM + "# checked again\n")
    assert check(tmp_path) == EXPECTED
    assert counted == {("create_agent", AGENT): 2, ("add_node", NODE): 2, ("function_write_site", SEND): 3}
