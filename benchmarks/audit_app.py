"""The application whose store ``benchmarks/audit.py`` generates and audits: a chat graph whose
state holds LangChain messages, a pydantic order with nested line items, an enum, a TypedDict and
plain values; each thread takes nine steps, so its store holds ten checkpoints."""

from __future__ import annotations

import enum
from typing import Annotated

import pydantic
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import NotRequired, TypedDict

STEPS = 9


class Stage(enum.Enum):
    OPEN = "open"
    QUOTED = "quoted"
    CLOSED = "closed"


class LineItem(pydantic.BaseModel):
    sku: str
    quantity: int
    price: float


class Order(pydantic.BaseModel):
    id: int
    items: list[LineItem]
    note: str | None = None


class Customer(TypedDict):
    name: str
    email: str
    tier: NotRequired[int]


class Chat(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    turn: int
    stage: Stage
    order: Order
    customer: Customer
    scores: list[float]
    tags: dict[str, str]


def step(state: Chat) -> dict[str, object]:
    turn = state["turn"] + 1
    message = (HumanMessage if turn % 2 else AIMessage)(content=f"message {turn} " * 8, id=f"m{turn}")
    items = [LineItem(sku=f"sku-{turn}-{i}", quantity=i + 1, price=9.5 * i) for i in range(3)]
    return {
        "messages": [message],
        "turn": turn,
        "stage": Stage.QUOTED if turn < STEPS else Stage.CLOSED,
        "order": Order(id=turn, items=items, note="rush" if turn % 3 else None),
        "scores": [*state["scores"], turn / 10],
        "tags": {**state["tags"], f"t{turn}": "x" * 12},
    }


def route(state: Chat) -> str:
    return "step" if state["turn"] < STEPS else END


builder = StateGraph(Chat)
builder.add_node("step", step)
builder.add_edge(START, "step")
builder.add_conditional_edges("step", route)


def first_input(thread: int) -> Chat:
    return {
        "messages": [],
        "turn": 0,
        "stage": Stage.OPEN,
        "order": Order(id=0, items=[]),
        "customer": {"name": f"customer {thread}", "email": f"c{thread}@example.com", "tier": 2},
        "scores": [],
        "tags": {},
    }
