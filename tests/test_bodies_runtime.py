"""What a node's body returns is what the checkpoint stores: the run-time facts behind the body
checks (test-data/test_bodies.yml), on real graphs with real checkpointers.

A node declared ``-> dict`` (or with no return type) hands LangGraph the dict its body builds; each
item becomes the value of its channel, as it is, and the checkpointer serializes it. So the verdict
on an item's own type is the verdict on what the checkpoint gets: a tuple comes back as a list, a
datetime makes a JSON serializer raise at the write, a key that is not a channel is dropped.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, TypedDict

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from json_serde import JsonSerde


def _config(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


class State(TypedDict, total=False):
    name: str
    first: list[int]
    second: list[int]
    third: list[int]
    fourth: list[int]
    fifth: list[int]


def display(state: State) -> dict:  # type: ignore[type-arg]
    return {"first": (1, 2)}


def local(state: State) -> dict[str, Any]:
    update: dict[str, Any] = {"name": "local"}
    update["second"] = (3, 4)
    update["status"] = "dropped"  # not a channel
    return update


def spread(state: State):  # type: ignore[no-untyped-def]
    return {**state, "third": (5, 6)}


class Nodes:
    def method(self, state: State) -> dict[str, Any]:
        return {"fourth": (7, 8)} if state else {}

    def __call__(self, state: State) -> dict[str, Any]:
        return {"fifth": (9, 10)}


def _graph() -> Any:
    nodes = Nodes()
    builder = StateGraph(State)
    builder.add_sequence(
        [display, local, spread, ("method", nodes.method), ("call", nodes)]  # type: ignore[list-item]
    )
    builder.add_edge(START, "display")
    builder.add_edge("call", END)
    return builder.compile(checkpointer=InMemorySaver())


def test_each_returned_item_is_its_channels_value_and_tuples_come_back_as_lists() -> None:
    graph = _graph()
    seen: list[Any] = []
    for chunk in graph.stream({"name": "start"}, _config("bodies"), stream_mode="values"):
        seen.append(chunk)
    # While the run is in memory, each node's item is the tuple it returned...
    assert seen[-1]["first"] == (1, 2)
    # ...and the checkpoint gives it back as a list, through every form of return.
    stored = graph.get_state(_config("bodies")).values
    assert {key: stored[key] for key in ("first", "second", "third", "fourth", "fifth")} == {
        "first": [1, 2],
        "second": [3, 4],
        "third": [5, 6],
        "fourth": [7, 8],
        "fifth": [9, 10],
    }
    assert stored["name"] == "local"
    assert "status" not in stored  # a returned key that is not a channel is dropped


class Purchase(TypedDict):
    last_action_at: str


def record_purchase(state: Purchase) -> dict:  # type: ignore[type-arg]
    return {"last_action_at": datetime.now(timezone.utc)}


def test_a_datetime_a_dict_node_returns_raises_when_a_json_checkpoint_is_written() -> None:
    builder = StateGraph(Purchase)
    builder.add_node("record_purchase", record_purchase)
    builder.add_edge(START, "record_purchase")
    builder.add_edge("record_purchase", END)
    graph = builder.compile(checkpointer=InMemorySaver(serde=JsonSerde()))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="datetime is not JSON serializable"):
        graph.invoke({"last_action_at": "never"}, _config("purchase"))
