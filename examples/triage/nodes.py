"""The nodes of the triage graph: plain functions with declared update types, sync and async."""

from datetime import datetime, timezone
from typing import Any, Literal

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.types import Command, Send, interrupt
from typing_extensions import TypedDict

from triage.state import Category, DraftTask, Reply, TicketState

_KEYWORDS: dict[Category, tuple[str, ...]] = {
    "billing": ("invoice", "refund", "charge"),
    "bug": ("error", "crash", "broken"),
    "account": ("password", "login", "email"),
}


class ClassifyUpdate(TypedDict):
    messages: list[AnyMessage]
    category: Category
    tags: tuple[str, ...]  # the state's own type: its problem is reported once, at TicketState.tags
    created_at: datetime  # likewise, at TicketState.created_at


def classify(state: TicketState) -> ClassifyUpdate:
    text = state["body"].lower()
    category: Category = "other"
    tags: tuple[str, ...] = ()
    for candidate, words in _KEYWORDS.items():
        tags = tuple(word for word in words if word in text)
        if tags:
            category = candidate
            break
    return {
        "messages": [HumanMessage(content=state["body"])],
        "category": category,
        "tags": tags,
        "created_at": datetime.now(timezone.utc),
    }


async def lookup_customer(state: TicketState) -> dict[str, Any]:
    # Stands in for a CRM lookup whose answer goes straight into the state.
    plan = "enterprise" if state["customer_email"].endswith(".com") else "free"
    # MISTAKE: "customer_since" is not a channel of TicketState: LangGraph drops it
    return {"plan": plan, "customer_since": datetime(2021, 3, 1, tzinfo=timezone.utc)}


def fan_out(state: TicketState) -> list[Send]:
    """Conditional edge: one drafting worker per section of the reply."""
    sections = ["greeting", state.get("category", "other"), "closing"]
    return [
        Send("draft_reply", {"ticket_id": state["ticket_id"], "section": s, "body": state["body"]})
        for s in sections
    ]


class DraftUpdate(TypedDict):
    drafts: list[Reply]


def draft_reply(state: DraftTask) -> DraftUpdate:
    text = f"[{state['section']}] Re: {state['body'][:40]}"
    return {"drafts": [{"section": state["section"], "text": text}]}


def human_review(state: TicketState) -> Command[Literal["send_reply", "escalate"]]:
    reply = "\n".join(draft["text"] for draft in state["drafts"])
    decision = interrupt(
        {
            "question": "Send this reply?",
            "reply": reply,
            # MISTAKE: a datetime in the interrupt payload (the payload is checkpointed)
            "asked_at": datetime.now(timezone.utc),
        }
    )
    if decision == "approve":
        return Command(
            goto="send_reply",
            update={
                "reply": reply,
                "approved": True,
                # MISTAKE: the state says str; Command.update is typed Any, so mypy alone is silent
                "approved_at": datetime.now(timezone.utc),
            },
        )
    return Command(
        goto="escalate",
        # MISTAKE: "approved" is declared bool; the str is stored as it is (and "no" is truthy)
        update={"approved": "no"},
    )


class SendUpdate(TypedDict):
    messages: list[AnyMessage]
    status: str  # MISTAKE: not a channel of TicketState: LangGraph drops it


def send_reply(state: TicketState) -> SendUpdate:
    return {"messages": [AIMessage(content=state.get("reply", ""))], "status": "sent"}


class EscalateUpdate(TypedDict):
    reply: str


async def escalate(state: TicketState) -> EscalateUpdate:
    return {"reply": f"Ticket {state['ticket_id']} was escalated to a human agent."}
