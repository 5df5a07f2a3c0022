"""v2 of the audited application: changes that old threads do not survive."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable

import pydantic
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from typing_extensions import NotRequired, TypedDict

# Set by the tests' resume script: called with what the node after the interrupt gets.
RECORD: Callable[[object], None] | None = None


class Color(enum.Enum):
    RED = "red"


class Status(str, enum.Enum):
    ACTIVE = "ACTIVE"


class Order(pydantic.BaseModel):
    id: int
    email: str


class Limits(pydantic.BaseModel):
    cap: int


class Item(pydantic.BaseModel):
    name: str
    sku: str


class Cart(pydantic.BaseModel):
    items: list[Item]


class New(pydantic.BaseModel):  # was Old
    x: int


def _local_model() -> type[pydantic.BaseModel]:
    class Local(pydantic.BaseModel):  # moved into a function
        y: int

    return Local


LocalModel = _local_model()  # the module has no attribute Local: the loader cannot import it


@dataclasses.dataclass
class Parcel:
    weight: int
    label: str


class Address(TypedDict):
    city: str
    zip: str


class State(TypedDict):
    case: str
    order: NotRequired[Order]
    limits: NotRequired[Limits]
    cart: NotRequired[Cart]
    old: NotRequired[New]
    local: NotRequired[LocalModel]
    parcel: NotRequired[Parcel]
    color: NotRequired[Color]
    status: NotRequired[Status]
    address: NotRequired[Address]
    note: NotRequired[str]
    score: NotRequired[str]
    widened: NotRequired[int]


def fill(state: State) -> dict:
    return {}


def recolor(state: State) -> dict:
    return {}


def ask(state: State) -> dict:
    interrupt("approve?")
    return {}


def after(state: object) -> dict:
    if RECORD is not None:
        RECORD(state)
    return {}


builder = StateGraph(State)
builder.add_node("fill", fill)
builder.add_node("recolor", recolor)
builder.add_node("ask", ask)
builder.add_node("after", after)
builder.add_edge(START, "fill")
builder.add_edge("fill", "recolor")
builder.add_edge("recolor", "ask")
builder.add_edge("ask", "after")
builder.add_edge("after", END)


class Profile(pydantic.BaseModel):
    name: str
    count: int
    email: str


def profile_fill(state: Profile) -> dict:
    return {}


profile_builder = StateGraph(Profile)
profile_builder.add_node("profile_fill", profile_fill)
profile_builder.add_node("ask", ask)
profile_builder.add_node("after", after)
profile_builder.add_edge(START, "profile_fill")
profile_builder.add_edge("profile_fill", "ask")
profile_builder.add_edge("ask", "after")
profile_builder.add_edge("after", END)
