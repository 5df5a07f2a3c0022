"""Middleware shared by the application's agents, built by a function of its own module."""

from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState
from langgraph.runtime import Runtime
from typing_extensions import NotRequired


class AuditState(AgentState):
    audited: NotRequired[list[str]]


class Audit(AgentMiddleware):
    state_schema = AuditState

    def after_model(  # type: ignore[override]
        self, state: AuditState, runtime: Runtime[None]
    ) -> dict[str, Any] | None:
        return {"audited": ["model"]}


def build_middlewares() -> list[AgentMiddleware]:
    middlewares: list[AgentMiddleware] = []
    middlewares.append(Audit())
    return middlewares
