"""A fixture application (tests/test_discovery_routes_report.py): agents whose middleware lists are
built in code, one from a helper of another module."""

from typing import Any, TypedDict

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, AgentState
from langgraph.runtime import Runtime
from pydantic import BaseModel
from typing_extensions import NotRequired

from shared_middleware import shared_middleware


class NoteState(AgentState):
    notes: NotRequired[list[str]]


class BudgetState(AgentState):
    spent: NotRequired[int]


class NoteUpdate(TypedDict):
    notes: list[str]


class BudgetUpdate(TypedDict):
    spent: int


class Notes(AgentMiddleware):
    state_schema = NoteState

    def after_model(self, state: AgentState, runtime: Runtime[None]) -> NoteUpdate | None:  # type: ignore[override]
        return None


class Budget(AgentMiddleware):
    state_schema = BudgetState

    def before_model(self, state: AgentState, runtime: Runtime[None]) -> BudgetUpdate | None:  # type: ignore[override]
        return None

    def after_agent(self, state: AgentState, runtime: Runtime[None]) -> dict[str, Any] | None:  # type: ignore[override]
        return {"spent": 0}


class Answer(BaseModel):
    text: str


def base_middleware() -> list[AgentMiddleware]:
    found: list[AgentMiddleware] = [Notes()]
    return found


def build_support(model: Any) -> Any:
    middleware = base_middleware()
    middleware.append(Budget())
    return create_agent(model, middleware=[*middleware], response_format=Answer)


def build_shared(model: Any) -> Any:
    return create_agent(model, middleware=shared_middleware())
