"""What LangGraph does with a value of another type than its channel's: the run-time facts behind
``lgstate-channel-type`` (test-data/test_channel_types.yml), on real compiled graphs with a real
checkpointer.

Each message names one outcome per kind of state schema; each is run here: a TypedDict or dataclass
state stores the value unchanged and hands it to the next node as it is; a pydantic state stores it
unchanged too, but validates the state before the next node runs, which raises ValidationError or
coerces the value. A reducer is called with the value; ``Overwrite(v)`` bypasses it.

Also the facts behind the reducers the other checks now see: ``add_messages`` stores messages
whatever its field declares, an ``UntrackedValue`` channel is never checkpointed from node writes
(but a graph input is stored whole as ``__start__``), and an unknown key of a ``Command`` update is
dropped.
"""

from __future__ import annotations

import operator
import threading
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict

import pydantic
import pytest
from langchain_core.messages import AnyMessage, HumanMessage, MessageLikeRepresentation
from langgraph.channels.untracked_value import UntrackedValue
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, Overwrite

from write_then_read import write_then_read


class TypedState(TypedDict):
    count: int


class ModelState(pydantic.BaseModel):
    count: int


@dataclass
class DataState:
    count: int


class Reduced(TypedDict):
    tags: Annotated[list[str], operator.add]
    messages: Annotated[list[AnyMessage], add_messages]


@pytest.mark.parametrize("schema", [TypedState, DataState], ids=["typeddict", "dataclass"])
def test_typeddict_and_dataclass_states_store_the_value_unchanged(schema: Any) -> None:
    read, out, stored = write_then_read(schema, {"count": "abc"}, {"count": 1})
    assert (read["count"] if isinstance(read, dict) else read.count) == "abc"
    assert out["count"] == "abc"
    assert stored["count"] == "abc"


def test_a_pydantic_state_raises_validation_error_before_the_next_node() -> None:
    with pytest.raises(pydantic.ValidationError):
        write_then_read(ModelState, {"count": "abc"}, {"count": 1})


def test_a_pydantic_state_coerces_what_lax_mode_can_and_stores_it_unchanged() -> None:
    read, out, stored = write_then_read(ModelState, {"count": "5"}, {"count": 1})
    assert read.count == 5
    assert stored["count"] == "5"


def test_a_reducer_is_called_with_the_value_and_overwrite_bypasses_it() -> None:
    with pytest.raises(TypeError):  # operator.add(list, str)
        write_then_read(Reduced, {"tags": "a"}, {"tags": [], "messages": []})
    _, _, stored = write_then_read(Reduced, {"tags": Overwrite("a")}, {"tags": [], "messages": []})
    assert stored["tags"] == "a"


def test_add_messages_turns_message_likes_into_messages() -> None:
    _, _, stored = write_then_read(Reduced, {"messages": [("user", "hi")]}, {"tags": [], "messages": []})
    assert isinstance(stored["messages"][0], HumanMessage)


class Tracked(TypedDict, total=False):
    messages: Annotated[list[MessageLikeRepresentation], add_messages]
    lock: Annotated[threading.Lock, UntrackedValue]
    name: str


def _tracked_graph() -> Any:
    def write(state: Tracked) -> dict[str, Any]:
        return {"messages": [("user", "hi")], "lock": threading.Lock()}

    def command(state: Tracked) -> Command[None]:
        return Command(update={"typo": 1, "name": "x"})

    builder = StateGraph(Tracked)
    builder.add_node("write", write)
    builder.add_node("command", command)
    builder.add_edge(START, "write")
    builder.add_edge("write", "command")
    builder.add_edge("command", END)
    return builder.compile(checkpointer=InMemorySaver())


def test_add_messages_stores_messages_whatever_its_field_declares() -> None:
    """``Annotated[list[MessageLikeRepresentation], add_messages]``: a (role, content) tuple is
    stored as a message, not as a tuple that would come back as a list."""
    graph = _tracked_graph()
    config: Any = {"configurable": {"thread_id": "messages"}}
    graph.invoke({"name": "n"}, config)
    (stored,) = graph.get_state(config).values["messages"]
    assert isinstance(stored, HumanMessage) and stored.content == "hi"


def test_an_untracked_channel_is_never_checkpointed_from_node_writes() -> None:
    graph = _tracked_graph()
    config: Any = {"configurable": {"thread_id": "untracked"}}
    out = graph.invoke({"name": "n"}, config)  # the lock written by a node: no TypeError
    assert isinstance(out["lock"], type(threading.Lock()))
    assert "lock" not in graph.get_state(config).values


def test_a_graph_input_with_an_untracked_value_is_stored_whole_and_raises() -> None:
    graph = _tracked_graph()
    with pytest.raises(TypeError, match="not msgpack serializable"):
        graph.invoke({"lock": threading.Lock()}, {"configurable": {"thread_id": "input"}})


def test_an_unknown_key_of_a_command_update_is_dropped_silently() -> None:
    graph = _tracked_graph()
    config: Any = {"configurable": {"thread_id": "typo"}}
    out = graph.invoke({"name": "n"}, config)
    assert "typo" not in out and "typo" not in graph.get_state(config).values
    assert out["name"] == "x"


def test_update_state_and_bulk_update_state_store_the_value_unchanged() -> None:
    """What ``lgstate-channel-type`` says of update_state and bulk_update_state in a TypedDict state."""
    from langgraph.types import StateUpdate

    builder = StateGraph(TypedState)
    builder.add_node("node", lambda state: {})
    builder.add_edge(START, "node")
    graph = builder.compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "1"}}
    graph.invoke({"count": 1}, config)
    graph.update_state(config, {"count": "two"}, as_node="node")
    assert graph.get_state(config).values["count"] == "two"
    graph.bulk_update_state(config, [[StateUpdate({"count": "three"}, "node")]])
    assert graph.get_state(config).values["count"] == "three"
