"""What LangGraph really writes for the node forms the plugin reads (docs/checks.md, "Node bodies"):
the facts each check relies on, on one compiled graph with a checkpointer.

- a node registered through a pass-through wrapper typed ``Any`` (``traced_node("n", fn)``, a
  tracing decorator) writes what the wrapped function returns: the plugin reads that function;
- a generator node (sync or async) writes only the last dict it yields: earlier yields, and their
  keys, never reach the checkpoint;
- static and class methods run as nodes like functions;
- a dict completed by ``.update(...)``, ``|=`` and ``setdefault(...)`` is written whole;
- a registration loop and a sequence list built with ``append`` add every function they name;
- ``Send`` imported from ``langgraph.constants`` is ``langgraph.types.Send``.
"""

from __future__ import annotations

import asyncio
import operator
import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Annotated, Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict, total=False):
    deployed: str
    first: str
    last: str
    static: str
    classy: str
    completed: dict[str, int]
    merged: str
    defaulted: str
    log: Annotated[list[str], operator.add]


def traced_node(name: str, fn: Callable[..., Any]) -> Any:
    def run(state: Any) -> Any:
        return fn(state)

    run.__name__ = name
    return run


def _deploy(state: State) -> dict[str, Any]:
    return {"deployed": "v2", "log": ["deploy"]}


def stream(state: State) -> Iterator[dict[str, Any]]:
    yield {"first": "never written", "log": ["early"]}
    yield {"last": "written", "log": ["late"]}


class Nodes:
    @staticmethod
    def static(state: State) -> dict[str, Any]:
        return {"static": "ran"}

    @classmethod
    def classy(cls, state: State) -> dict[str, Any]:
        return {"classy": cls.__name__}


def completed(state: State) -> dict[str, Any]:
    update: dict[str, Any] = {"log": ["completed"]}
    update.update({"completed": {"a": 1}})
    update |= {"merged": "yes"}
    update.setdefault("defaulted", "kept")
    return update


@pytest.fixture(scope="module")
def final() -> dict[str, Any]:
    builder = StateGraph(State)
    builder.add_node("deploy", traced_node("deploy", _deploy))
    builder.add_node("stream", stream)
    for name, node in [("static", Nodes.static), ("classy", Nodes.classy)]:
        builder.add_node(name, node)
    builder.add_node("completed", completed)
    builder.add_edge(START, "deploy")
    builder.add_edge("deploy", "stream")
    builder.add_edge("stream", "static")
    builder.add_edge("static", "classy")
    builder.add_edge("classy", "completed")
    builder.add_edge("completed", END)
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "reach"}}
    graph.invoke({"log": []}, config)
    values: dict[str, Any] = graph.get_state(config).values  # the checkpointed state
    return values


def test_a_pass_through_wrapper_writes_what_the_wrapped_function_returns(final: dict[str, Any]) -> None:
    assert final["deployed"] == "v2"
    assert final["log"][0] == "deploy"


def test_a_generator_node_writes_only_the_last_dict_it_yields(final: dict[str, Any]) -> None:
    assert final["last"] == "written"
    assert "first" not in final
    assert "early" not in final["log"] and "late" in final["log"]


def test_an_async_generator_node_writes_only_the_last_dict_it_yields() -> None:
    async def astream(state: State) -> AsyncIterator[dict[str, Any]]:
        yield {"first": "never written"}
        yield {"last": "written"}

    builder = StateGraph(State)
    builder.add_node("astream", astream)
    builder.add_edge(START, "astream")
    builder.add_edge("astream", END)
    result = asyncio.run(builder.compile().ainvoke({"log": []}))
    assert result == {"last": "written", "log": []}


def test_static_and_class_methods_in_a_registration_loop_run_as_nodes(final: dict[str, Any]) -> None:
    assert final["static"] == "ran"
    assert final["classy"] == "Nodes"


def test_a_dict_completed_by_update_or_and_setdefault_is_written_whole(final: dict[str, Any]) -> None:
    assert final["completed"] == {"a": 1}
    assert final["merged"] == "yes"
    assert final["defaulted"] == "kept"
    assert final["log"][-1] == "completed"


def test_a_sequence_list_built_with_append_runs_every_step() -> None:
    def one(state: State) -> dict[str, Any]:
        return {"log": ["one"]}

    def two(state: State) -> dict[str, Any]:
        return {"log": ["two"]}

    steps: list[Callable[[State], dict[str, Any]]] = [one]
    steps.append(two)
    builder = StateGraph(State)
    builder.add_sequence(steps)
    builder.add_edge(START, "one")
    assert builder.compile().invoke({"log": []})["log"] == ["one", "two"]


def test_send_from_langgraph_constants_is_langgraph_types_send() -> None:
    from langgraph.types import Send

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from langgraph.constants import Send as DeprecatedSend

    assert DeprecatedSend is Send
