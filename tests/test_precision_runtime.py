"""Run-time facts behind the plugin's silences (SPEC section 5): a real graph with a real checkpointer.

Each test pins a case the plugin does *not* report, because at run time nothing is lost: if a
LangGraph release changes that, the test fails and the rule has to change with it.
"""

from __future__ import annotations

import operator
import threading
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command, Overwrite


def _config(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


def test_message_like_tuples_become_messages_in_an_add_messages_channel() -> None:
    class State(MessagesState):
        topic: str

    def reply(state: State) -> Command[None]:
        return Command(update={"messages": [("ai", "hello")]})

    builder = StateGraph(State)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    builder.add_edge("reply", END)
    graph = builder.compile(checkpointer=InMemorySaver())
    graph.invoke({"messages": [("user", "hi")], "topic": "t"}, _config("messages"))

    stored = graph.get_state(_config("messages")).values["messages"]
    assert [type(message) for message in stored] == [HumanMessage, AIMessage]
    assert [message.content for message in stored] == ["hi", "hello"]


def test_command_update_as_a_list_of_pairs_updates_those_channels() -> None:
    class State(TypedDict):
        topic: str
        count: int

    def node(state: State) -> Command[None]:
        return Command(update=[("topic", "pairs"), ("count", 2)])

    builder = StateGraph(State)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    graph = builder.compile(checkpointer=InMemorySaver())
    graph.invoke({"topic": "", "count": 0}, _config("pairs"))

    assert graph.get_state(_config("pairs")).values == {"topic": "pairs", "count": 2}


def test_overwrite_stores_its_value_not_the_wrapper() -> None:
    class State(TypedDict):
        items: Annotated[list[str], operator.add]

    def node(state: State) -> Command[None]:
        return Command(update={"items": Overwrite(["b"])})

    builder = StateGraph(State)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    graph = builder.compile(checkpointer=InMemorySaver())
    graph.invoke({"items": ["a"]}, _config("overwrite"))

    assert graph.get_state(_config("overwrite")).values == {"items": ["b"]}


def test_an_update_key_that_is_not_a_channel_is_dropped_before_it_is_serialized() -> None:
    class State(TypedDict):
        topic: str

    def node(state: State) -> dict[str, object]:
        # A lock raises under every serializer: it never reaches one.
        return {"topic": "kept", "lock": threading.Lock()}

    builder = StateGraph(State)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    graph = builder.compile(checkpointer=InMemorySaver())
    graph.invoke({"topic": ""}, _config("unknown"))

    assert graph.get_state(_config("unknown")).values == {"topic": "kept"}


def test_a_bytearray_channel_value_round_trips_and_a_nested_one_comes_back_as_bytes() -> None:
    class State(TypedDict):
        blob: bytearray
        blobs: list[bytearray]

    builder = StateGraph(State)
    builder.add_node("noop", lambda state: {})
    builder.add_edge(START, "noop")
    graph = builder.compile(checkpointer=InMemorySaver())
    graph.invoke({"blob": bytearray(b"ab"), "blobs": [bytearray(b"cd")]}, _config("bytes"))

    # InMemorySaver keeps each channel value as the serializer wrote it: this reads them back.
    values = graph.get_state(_config("bytes")).values
    assert type(values["blob"]) is bytearray
    assert [type(item) for item in values["blobs"]] == [bytes]
