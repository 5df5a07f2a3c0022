"""What LangGraph really writes for the updates the plugin reads through summaries (docs/checks.md,
"Node bodies"), on one compiled graph with a checkpointer:

- a node that returns ``await helper(state)``, whose helper returns a method's dict, writes that
  dict: a key that is no channel is dropped, a tuple comes back from the checkpoint as a list;
- a wrapper's closure is what runs: one that turns tuples into lists writes lists (nothing lossy),
  one that renames keys writes the renamed keys only, one that adds an item writes it;
- a node added by a helper given the builder, and one of a table registered in a loop, run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict, total=False):
    title: list[str]
    pair: list[int]
    out_pair: list[int]
    span: list[int]
    planned: str


class DeveloperAgent:
    async def invoke(self, state: Any) -> dict[str, Any]:
        return {"title": ("a", "b"), "subtitle": "dropped"}


agent = DeveloperAgent()


async def developer_deploy(state: Any) -> dict[str, Any]:
    return await agent.invoke(state)


async def deploy(state: State) -> dict[str, Any]:
    return await developer_deploy(state)


def listify(fn: Callable[..., Any]) -> Callable[..., Any]:
    def run(state: Any) -> dict[str, Any]:
        out = fn(state)
        return {key: list(value) if isinstance(value, tuple) else value for key, value in out.items()}

    return run


def renamed(fn: Callable[..., Any]) -> Callable[..., Any]:
    def run(state: Any) -> dict[str, Any]:
        return {"out_" + key: value for key, value in fn(state).items()}

    return run


def spanned(fn: Callable[..., Any]) -> Callable[..., Any]:
    def run(state: Any) -> dict[str, Any]:
        out = fn(state)
        out["span"] = (0, 1)
        return out

    return run


def pair(state: State) -> dict[str, Any]:
    return {"pair": (1, 2)}


def plain(state: State) -> dict[str, Any]:
    return {}


def plan(state: State) -> dict[str, Any]:
    return {"planned": "yes"}


NODES = {"plan": plan}


def add_nodes(builder: StateGraph[State]) -> None:
    builder.add_node("listified", listify(pair))


class Run(TypedDict):
    updates: dict[str, Any]  # what each node returned, as LangGraph got it
    final: dict[str, Any]  # the state, back from the checkpoint


@pytest.fixture(scope="module")
def run() -> Run:
    builder = StateGraph(State)
    builder.add_node("deploy", deploy)
    add_nodes(builder)
    builder.add_node("renamed", renamed(pair))
    builder.add_node("spanned", spanned(plain))
    for name, fn in NODES.items():
        builder.add_node(name, fn)
    steps = ["deploy", "listified", "renamed", "spanned", "plan"]
    builder.add_edge(START, steps[0])
    for before, after in zip(steps, steps[1:]):
        builder.add_edge(before, after)
    graph = builder.compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t"}}

    async def updates() -> dict[str, Any]:
        found: dict[str, Any] = {}
        async for chunk in graph.astream({}, config, stream_mode="updates"):
            found.update(chunk)
        return found

    return Run(updates=asyncio.run(updates()), final=dict(graph.get_state(config).values))


def test_an_update_returned_through_two_helpers_is_written(run: Run) -> None:
    assert run["updates"]["deploy"]["title"] == ("a", "b")  # the method's tuple is the update
    assert run["final"]["title"] == ["a", "b"]  # and comes back from the checkpoint as a list
    assert "subtitle" not in run["final"]  # no channel: dropped


def test_a_wrapper_writes_what_its_closure_returns(run: Run) -> None:
    assert run["updates"]["listified"] == {"pair": [1, 2]}  # listify's list, not pair()'s tuple
    assert run["updates"]["renamed"] == {"out_pair": (1, 2)}  # "pair" is written as "out_pair"
    assert run["updates"]["spanned"] == {"span": (0, 1)}  # spanned's own item
    assert run["final"]["span"] == [0, 1]


def test_nodes_added_by_a_helper_and_a_table_loop_run(run: Run) -> None:
    assert run["final"]["planned"] == "yes"
