"""Middleware lists built by helpers typed ``-> list[Any]``, one of them a normalizing wrapper."""

from typing import Any

from langchain.agents.middleware import AgentMiddleware

from app.middleware import Audit


def build_middlewares_for(cfg: Any) -> list[Any]:
    found: list[Any] = []
    if cfg:
        found.append(Audit())
    return found


def normalize_middleware_state_schemas(middlewares: list[Any]) -> list[Any]:
    for middleware in middlewares:
        if not isinstance(middleware, AgentMiddleware):
            raise TypeError(f"not a middleware: {middleware!r}")
    return middlewares
