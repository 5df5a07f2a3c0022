"""A real graph of two nodes, one writing what a test gives it and one reading the state after it,
with a real checkpointer: shared by the run-time tests of what a write does (not a test module)."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph


def write_then_read(
    schema: Any, write: Any, start: dict[str, Any], serde: Any = None, checkpointer: Any = None
) -> tuple[Any, Any, Any]:
    """Run ``start`` through a node returning ``write`` (an update, or a ``Command``) and a node
    after it: what the node after it read, what ``invoke`` returned, and what ``get_state()``
    holds. ``serde``: the checkpointer's serializer (LangGraph's default when ``None``);
    ``checkpointer``: another saver than an ``InMemorySaver``."""
    seen: dict[str, Any] = {}

    def writer(state: Any) -> Any:
        return write

    def reader(state: Any) -> dict[str, Any]:
        seen["state"] = state
        return {}

    builder = StateGraph(schema)
    builder.add_node("writer", writer)
    builder.add_node("reader", reader)
    builder.add_edge(START, "writer")
    builder.add_edge("writer", "reader")
    builder.add_edge("reader", END)
    if checkpointer is None:
        checkpointer = InMemorySaver(serde=serde) if serde else InMemorySaver()
    graph = builder.compile(checkpointer=checkpointer)
    config: Any = {"configurable": {"thread_id": "1"}}
    out = graph.invoke(start, config)
    return seen["state"], out, graph.get_state(config).values
