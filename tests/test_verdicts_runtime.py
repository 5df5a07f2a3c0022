"""Run-time facts behind the verdicts of issue 27, each on a real compiled graph with a real
checkpointer, read back with ``get_state()`` (``SqliteSaver`` too where a saver could matter, and the
``json.dumps`` serde for the json profile).

Some pin what the plugin no longer reports because nothing goes wrong (a ``str`` subclass into a
``str`` channel, message tuples from a middleware hook, ``Command(update=pairs)``, a parametrized
model pydantic registered, an ``UntrackedValue(...)`` instance); the others pin what its messages
now claim (``Overwrite`` on a channel without a reducer, channel classes, a nested dict without a
required key, a tuple to a concatenating reducer, a pydantic input's whole-input fix).
"""

from __future__ import annotations

import enum
import json
import operator
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Final, Literal, TypedDict

import httpx
import pydantic
import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentState, after_model
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.channels import EphemeralValue, UntrackedValue
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command, Overwrite

from json_serde import JsonSerde
from write_then_read import write_then_read


def _config(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


def _run(schema: Any, write: Any, start: dict[str, Any], serde: Any = None) -> tuple[Any, Any]:
    """What the node after ``write`` read, and what ``get_state()`` holds."""
    read, _, stored = write_then_read(schema, write, start, serde)
    return read, stored


class Account(TypedDict):
    name: str
    tier: str


class State(TypedDict, total=False):
    title: str
    status: Literal["open", "closed"]
    tags: Annotated[list[str], operator.add]
    items: list[str]
    account: Account
    count: Annotated[int, EphemeralValue]
    label: Annotated[str, UntrackedValue]
    client: Annotated[httpx.Client, UntrackedValue(httpx.Client)]


_START: Final = {"title": "", "tags": [], "items": []}


# Not reported: nothing goes wrong --------------------------------------------------------------


@pytest.mark.parametrize("serde", [None, JsonSerde()], ids=["msgpack", "json"])
def test_a_str_subclass_comes_back_as_the_str_its_channel_declares(serde: Any) -> None:
    """LangChain 1.x's ``AIMessage.text`` is a ``TextAccessor``, a ``str`` subclass: the next node
    reads a ``str``, and the checkpoint holds a plain ``str``."""
    text = AIMessage(content="a title").text
    assert type(text) is not str and isinstance(text, str)
    read, stored = _run(State, {"title": text}, _START, serde)
    assert isinstance(read["title"], str)
    assert type(stored["title"]) is str and stored["title"] == "a title"


class Priority(str, enum.Enum):
    HIGH = "high"


def test_json_a_str_enum_member_comes_back_as_the_str_its_channel_declares() -> None:
    read, stored = _run(State, {"title": Priority.HIGH}, _START, JsonSerde())
    assert read["title"] is Priority.HIGH and isinstance(read["title"], str)
    assert type(stored["title"]) is str and stored["title"] == "high"


def test_message_tuples_a_middleware_hook_returns_are_stored_as_messages() -> None:
    """An ``@after_model`` hook without ``state_schema`` writes ``AgentState.messages``, whose
    ``add_messages`` reducer turns a ``(role, content)`` tuple into a message."""

    @after_model
    def follow_up(state: AgentState, runtime: Runtime[None]) -> dict[str, Any]:
        return {"messages": [("ai", "Anything else?")]}

    model = GenericFakeChatModel(messages=iter([AIMessage(content="answer")]))
    agent = create_agent(model, middleware=[follow_up], checkpointer=InMemorySaver())
    agent.invoke({"messages": [("user", "hi")]}, _config("hook"))
    stored = agent.get_state(_config("hook")).values["messages"]
    assert [type(message) for message in stored] == [HumanMessage, AIMessage, AIMessage]
    assert stored[-1].content == "Anything else?"


def test_command_update_with_a_list_of_pairs_in_a_variable_updates_those_channels() -> None:
    pairs: list[tuple[str, Any]] = [("title", "from pairs"), ("items", ["a"])]
    read, stored = _run(State, Command(update=pairs), _START, JsonSerde())
    assert read["title"] == stored["title"] == "from pairs"
    assert stored["items"] == ["a"]


def test_a_literal_channel_stores_what_is_written_unchecked() -> None:
    """A TypedDict state checks nothing: ``status = "closed"`` (a ``str`` to mypy) and a value no
    member has are both stored as written. Only the second is provably outside the channel."""
    status = "closed"
    assert _run(State, {"status": status}, _START)[1]["status"] == "closed"
    assert _run(State, {"status": "archived"}, _START)[1]["status"] == "archived"


def test_an_untracked_value_instance_is_never_checkpointed() -> None:
    """``Annotated[httpx.Client, UntrackedValue(httpx.Client)]``: LangGraph uses the instance as
    the channel, which the JSON serializer never sees."""
    with httpx.Client() as client:
        read, stored = _run(State, {"client": client}, _START, JsonSerde())
        assert read["client"] is client
    assert "client" not in stored


_PAGES = '''
from typing import Generic, TypeVar, TypedDict
from pydantic import BaseModel
T = TypeVar("T")
class Hit(BaseModel):
    url: str
class Page(BaseModel, Generic[T]):
    items: list[T]
'''
_SUBCLASS = "class HitPage(Page[Hit]):\n    pass\n"
_STATE = "class State(TypedDict, total=False):\n    page: Page[Hit]\n"
_PAGE_ROUND_TRIP = '''
import json, sqlite3, sys, warnings
warnings.simplefilter("ignore")
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, StateGraph
import state
builder = StateGraph(state.State)
builder.add_node("node", lambda _: {"page": state.Page[state.Hit](items=[state.Hit(url="u")])})
builder.add_edge(START, "node")
found = []
for saver in (InMemorySaver(), SqliteSaver(sqlite3.connect(":memory:", check_same_thread=False))):
    graph = builder.compile(checkpointer=saver)
    graph.invoke({}, {"configurable": {"thread_id": "1"}})
    found.append(type(graph.get_state({"configurable": {"thread_id": "1"}}).values["page"]).__name__)
print(json.dumps(found))
'''


_IMPORTED = "from typing import TypedDict\nfrom pages import Hit, Page\n"


@pytest.mark.parametrize(
    ("module", "state", "back_as"),
    [
        (_PAGES + _SUBCLASS + _STATE, "from pages import *\n", "Page[Hit]"),
        (_PAGES + _STATE + _SUBCLASS, "from pages import *\n", "dict"),
        (_PAGES + _SUBCLASS, _IMPORTED + _STATE, "Page[Hit]"),
    ],
    ids=["subclass-first", "state-first", "state-in-another-module"],
)
def test_a_parametrized_model_comes_back_when_a_top_level_subclass_first_makes_it(
    tmp_path: Any, module: str, state: str, back_as: str
) -> None:
    """pydantic registers ``Page[Hit]`` in its module when it first makes it at the module's top
    level (``class HitPage(Page[Hit])``), and the loader finds it there; a class body that uses it
    first (the state's annotation) makes it unregistered. A state in a module that imports the
    generic's module comes after all of it. In a fresh process: the registry is pydantic's,
    process-wide."""
    (tmp_path / "pages.py").write_text(module)
    (tmp_path / "state.py").write_text(state)
    (tmp_path / "round_trip.py").write_text(_PAGE_ROUND_TRIP)
    run = subprocess.run(
        [sys.executable, "round_trip.py"], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert json.loads(run.stdout) == [back_as, back_as]


# Reported: what the messages claim ------------------------------------------------------------


class ModelState(pydantic.BaseModel):
    title: str = ""
    items: list[str] = []


@dataclass
class DataState:
    title: str = ""


def test_overwrite_on_a_channel_without_a_reducer_stores_the_overwrite_object() -> None:
    """Only a reducer channel unwraps ``Overwrite``: a plain channel (and an ``EphemeralValue``)
    stores the object itself (langgraph#9019), which the next node reads (msgpack keeps it)."""
    read, stored = _run(State, {"title": Overwrite("x")}, _START)
    assert isinstance(read["title"], Overwrite) and isinstance(stored["title"], Overwrite)
    with pytest.raises(AttributeError):
        read["title"].upper()
    assert isinstance(_run(State, {"count": Overwrite(1)}, _START)[0]["count"], Overwrite)
    assert isinstance(_run(DataState, {"title": Overwrite("x")}, {})[0].title, Overwrite)


def test_overwrite_on_a_channel_without_a_reducer_raises_under_json_and_in_a_pydantic_state() -> None:
    for schema, start in ((State, _START), (DataState, {})):
        with pytest.raises(TypeError, match="Overwrite is not JSON serializable"):
            _run(schema, {"title": Overwrite("x")}, start, JsonSerde())
    for serde in (None, JsonSerde()):
        with pytest.raises(pydantic.ValidationError):
            _run(ModelState, {"title": Overwrite("x")}, {}, serde)


def test_channel_classes_store_a_value_of_another_type_unchanged() -> None:
    """``Annotated[int, EphemeralValue]``, ``Annotated[str, UntrackedValue]``: the next node reads
    what was written, whatever its field declares."""
    read, _ = _run(State, {"count": "three", "label": 3}, _START)
    assert read["count"] == "three" and read["label"] == 3


def test_a_nested_dict_without_a_required_key_is_stored_and_reading_the_key_raises() -> None:
    read, stored = _run(State, {"account": {"name": "n"}}, _START)
    assert stored["account"] == {"name": "n"}
    with pytest.raises(KeyError):
        read["account"]["tier"]


@pytest.mark.parametrize("serde", [None, JsonSerde()], ids=["msgpack", "json"])
def test_content_blocks_and_sets_are_stored_unchanged_where_str_and_list_are_declared(
    serde: Any,
) -> None:
    """``reply.content`` is ``str | list[str | dict]``: a model answering in content blocks writes a
    list, and the next node's string operation raises. A ``set`` is no ``list`` (msgpack keeps it,
    json raises)."""
    blocks = AIMessage(content=[{"type": "text", "text": "hi"}]).content
    read, stored = _run(State, {"title": blocks}, _START, serde)
    assert stored["title"] == [{"type": "text", "text": "hi"}]
    with pytest.raises(AttributeError):
        read["title"].upper()
    if serde is None:
        read, stored = _run(State, {"items": {"a"}}, _START)
        assert read["items"] == stored["items"] == {"a"}
    else:
        with pytest.raises(TypeError, match="set is not JSON serializable"):
            _run(State, {"items": {"a"}}, _START, serde)


def test_a_tuple_to_a_concatenating_reducer_raises_in_that_step() -> None:
    """``Annotated[list[str], operator.add]``: ``list + tuple`` raises TypeError in the step; the
    tuple never reaches a checkpoint."""
    with pytest.raises(TypeError, match='can only concatenate list \\(not "tuple"\\) to list'):
        _run(State, {"tags": ("a", "b")}, _START)


@pytest.mark.parametrize("saver", ["memory", "sqlite"])
def test_a_pydantic_state_validates_a_tuple_into_its_list_channel(saver: str) -> None:
    """In a pydantic state the next node reads the declared ``list``, and the checkpoint holds a
    list: the tuple is no loss (a pydantic ``ValidationError`` or coercion is the channel-type
    check's)."""
    checkpointer: Any = (
        InMemorySaver()
        if saver == "memory"
        else SqliteSaver(sqlite3.connect(":memory:", check_same_thread=False))
    )
    read, _, stored = write_then_read(ModelState, {"items": ("a", "b")}, {}, None, checkpointer)
    assert read.items == ["a", "b"]
    assert stored["items"] == ["a", "b"]


class Stamped(pydantic.BaseModel):
    title: str = ""
    at: datetime | None = None


def test_json_the_whole_input_fix_dumps_a_model_in_json_mode() -> None:
    """A pydantic input under json: ``model_dump()`` keeps a ``datetime``, which the JSON
    serializer still cannot write; ``model_dump(mode="json")`` writes it as a string."""
    builder = StateGraph(Stamped)
    builder.add_node("node", lambda state: {})
    builder.add_edge(START, "node")
    graph = builder.compile(checkpointer=InMemorySaver(serde=JsonSerde()))
    value = Stamped(title="t", at=datetime(2026, 1, 1))
    with pytest.raises(TypeError, match="datetime is not JSON serializable"):
        graph.invoke(value.model_dump(), _config("dump"))
    graph.invoke(value.model_dump(mode="json"), _config("json-dump"))
    assert graph.get_state(_config("json-dump")).values["at"] == "2026-01-01T00:00:00"
