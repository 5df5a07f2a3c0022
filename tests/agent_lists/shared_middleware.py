"""Middleware shared by several applications: its list is built in another module."""

from langchain.agents.middleware import AgentMiddleware


def shared_middleware() -> list[AgentMiddleware]:
    return []
