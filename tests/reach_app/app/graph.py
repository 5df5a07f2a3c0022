"""The graph: its nodes come from app.nodes, through a tracing wrapper and a helper two calls away;
its agents' middleware from functions of app.middleware and app.middleware_lists, and one agent's
from a plugin object no summary tells."""

from typing import Any

from langchain.agents import create_agent
from langgraph.graph import END, START, StateGraph

from app.middleware import build_middlewares
from app.middleware_lists import build_middlewares_for, normalize_middleware_state_schemas
from app.nodes import research
from app.state import ResearchState
from app.tracing import traced_node


def build_graph() -> Any:
    builder = StateGraph(ResearchState)
    builder.add_node("search", traced_node("search", research.search))
    builder.add_node("summarize", research.summarize)
    builder.add_node("deploy", research.deploy)
    builder.add_edge(START, "search")
    builder.add_edge("search", "summarize")
    builder.add_edge("summarize", "deploy")
    builder.add_edge("deploy", END)
    return builder.compile()


def build_agent(model: Any) -> Any:
    return create_agent(model, middleware=build_middlewares())


def build_research_agent(model: Any, cfg: Any) -> Any:
    middleware = normalize_middleware_state_schemas(build_middlewares_for(cfg))
    return create_agent(model, middleware=middleware)


def build_plugin_agent(model: Any, plugins: Any) -> Any:
    return create_agent(model, middleware=plugins.middleware)
