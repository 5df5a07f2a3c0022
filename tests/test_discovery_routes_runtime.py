"""The routes of issue 22, shown at run time on real graphs with a real checkpointer.

test-data/test_discovery_routes.yml checks what the plugin reports for each route; these tests check
that the route is real in the installed LangGraph / LangChain: the values the plugin checks are in
the checkpoint an ``InMemorySaver`` keeps, and the classes it reads become channels.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.types import StateUpdate
from typing_extensions import TypedDict


def _config(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


def _saved_channels(graph: Any, thread: str) -> dict[str, Any]:
    saved = graph.checkpointer.get_tuple(_config(thread))
    assert saved is not None
    values: dict[str, Any] = saved.checkpoint["channel_values"]
    return values


def _first_start_value(graph: Any, thread: str) -> Any:
    """The ``__start__`` value of the thread's first checkpoint: the input, stored whole."""
    history = list(graph.checkpointer.list(_config(thread)))
    first = history[-1].checkpoint["channel_values"]
    return first.get("__start__")


# Graph inputs ----------------------------------------------------------------------------------


class Extra(TypedDict, total=False):
    extra: Any


def _same(state: Extra) -> Extra:
    return state


def _extra_graph() -> Any:
    builder = StateGraph(Extra)
    builder.add_node("same", _same)
    builder.add_edge(START, "same")
    return builder.compile(checkpointer=InMemorySaver())


@pytest.mark.filterwarnings("ignore:The v3 streaming protocol")
def test_stream_events_and_batch_as_completed_checkpoint_their_inputs() -> None:
    graph = _extra_graph()
    for _ in graph.stream_events({"extra": b"v3"}, _config("events"), version="v3"):
        pass
    assert _saved_channels(graph, "events")["extra"] == b"v3"
    assert _first_start_value(graph, "events") == {"extra": b"v3"}

    async def run_async() -> None:
        async for _ in graph.astream_events({"extra": b"v2"}, _config("aevents"), version="v2"):
            pass
        async for _ in graph.abatch_as_completed([{"extra": b"a"}], _config("abatch")):
            pass

    asyncio.run(run_async())
    assert _saved_channels(graph, "aevents")["extra"] == b"v2"
    assert _saved_channels(graph, "abatch")["extra"] == b"a"
    list(graph.batch_as_completed([{"extra": b"b"}], _config("batch")))
    assert _saved_channels(graph, "batch")["extra"] == b"b"
    assert _first_start_value(graph, "batch") == {"extra": b"b"}


def test_bulk_update_state_checkpoints_each_updates_values() -> None:
    graph = _extra_graph()
    graph.invoke({"extra": "first"}, _config("bulk"))
    graph.bulk_update_state(
        _config("bulk"), [[StateUpdate({"extra": (1,)}, "same")], [StateUpdate({"extra": b"x"}, "same")]]
    )
    assert _saved_channels(graph, "bulk")["extra"] == b"x"
    values = [c.checkpoint["channel_values"].get("extra") for c in graph.checkpointer.list(_config("bulk"))]
    assert [1] in values  # the tuple was checkpointed, and comes back as a list

    async def run_async() -> None:
        await graph.abulk_update_state(_config("bulk"), [[StateUpdate({"extra": {1}}, "same")]])

    asyncio.run(run_async())
    assert _saved_channels(graph, "bulk")["extra"] == {1}
