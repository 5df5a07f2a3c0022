"""The customer-facing side of triage: a LangChain agent with middleware, and a functional-API
follow-up workflow. Both checkpoint their state like the graph does."""

from datetime import datetime, timedelta, timezone
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.func import entrypoint, task
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from typing_extensions import NotRequired, TypedDict


class FollowUpState(AgentState):
    """The middleware's own channels, added to the agent's state."""

    reminders: NotRequired[int]
    snoozed_until: NotRequired[datetime]  # MISTAKE: not JSON; store snoozed_until.isoformat()


class FollowUpUpdate(TypedDict):
    reminders: int  # a channel of the agent: FollowUp's state_schema declares it


class FollowUp(AgentMiddleware):
    """Counts the model's answers, so that a follow-up can be scheduled."""

    state_schema = FollowUpState

    def after_model(  # type: ignore[override]
        self, state: FollowUpState, runtime: Runtime[None]
    ) -> FollowUpUpdate:
        return {"reminders": state.get("reminders", 0) + 1}


def build_assistant() -> CompiledStateGraph[Any, Any, Any, Any]:
    model = GenericFakeChatModel(messages=iter([AIMessage(content="We have refunded you.")]))
    return create_agent(model, middleware=[FollowUp()], checkpointer=InMemorySaver())


@task
def survey_window(ticket_id: str) -> tuple[str, str]:  # MISTAKE: replayed, it is a list
    opens = datetime.now(timezone.utc)
    return opens.isoformat(), (opens + timedelta(days=7)).isoformat()


@task
def notify_customer(ticket_id: str):  # no return type: the plugin reads what the body returns
    sent_at = datetime.now(timezone.utc)
    return {"ticket_id": ticket_id, "sent_at": sent_at}  # MISTAKE: not JSON; send sent_at.isoformat()


@entrypoint(checkpointer=InMemorySaver())
def follow_up(ticket_id: str) -> str:
    opens, closes = survey_window(ticket_id).result()
    notify_customer(ticket_id).result()
    return f"survey for ticket {ticket_id}: {opens[:10]} to {closes[:10]}"
