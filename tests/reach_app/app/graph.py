"""The graph: its nodes come from app.nodes, through a tracing wrapper; its agent's middleware from
a function of app.middleware."""

from typing import Any

from langchain.agents import create_agent
from langgraph.graph import END, START, StateGraph

from app.middleware import build_middlewares
from app.nodes import research
from app.state import ResearchState
from app.tracing import traced_node


def build_graph() -> Any:
    builder = StateGraph(ResearchState)
    builder.add_node("search", traced_node("search", research.search))
    builder.add_node("summarize", research.summarize)
    builder.add_edge(START, "search")
    builder.add_edge("search", "summarize")
    builder.add_edge("summarize", END)
    return builder.compile()


def build_agent(model: Any) -> Any:
    return create_agent(model, middleware=build_middlewares())
