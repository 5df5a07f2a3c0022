"""The triage graph's state: a TypedDict for the graph and for the drafting workers' input, a
dataclass for what callers pass in, and a pydantic model for what the graph returns to them."""

import operator
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Literal

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from pydantic import BaseModel
from typing_extensions import NotRequired, TypedDict

Category = Literal["billing", "bug", "account", "other"]


class Reply(TypedDict):
    """One section of the reply, written by a drafting worker."""

    section: str
    text: str


@dataclass
class TicketInput:
    """What a caller passes to ``graph.invoke``."""

    ticket_id: str
    customer_email: str
    body: str


class TicketState(TypedDict):
    ticket_id: str
    customer_email: str
    body: str
    messages: Annotated[list[AnyMessage], add_messages]
    category: NotRequired[Category]
    plan: NotRequired[str]
    created_at: NotRequired[datetime]  # MISTAKE: not JSON; store created_at.isoformat()
    tags: NotRequired[tuple[str, ...]]  # MISTAKE: comes back from the checkpoint as a list
    notified: NotRequired[set[str]]  # MISTAKE: not JSON; store a sorted list
    drafts: Annotated[list[Reply], operator.add]
    approved: NotRequired[bool]
    approved_at: NotRequired[str]
    reply: NotRequired[str]


class DraftTask(TypedDict):
    """The input of one drafting worker, sent by the fan-out (``Send``)."""

    ticket_id: str
    section: str
    body: str


class TriageOutcome(BaseModel):
    """What ``graph.invoke`` returns to the caller."""

    ticket_id: str
    category: str
    reply: str
