"""v2 of the audited application: changes that old threads do not survive."""

from __future__ import annotations

import dataclasses
import enum
import operator
from collections.abc import Callable
from typing import Annotated

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
    model_config = pydantic.ConfigDict(extra="forbid")  # and gift_wrap removed

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


@dataclasses.dataclass
class Stamp:  # legacy removed
    code: str


class Address(TypedDict):
    city: str
    zip: str
    floor: NotRequired[int]


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
    tallies: NotRequired[Annotated[list[int], operator.add]]
    stamp_in: NotRequired[Stamp]
    stamp_out: NotRequired[Stamp]
    stamp_back: NotRequired[Stamp]


def fill(state: State) -> dict:
    return {}


def recolor(state: State) -> dict:
    return {}


def ask(state: State) -> dict:
    interrupt("approve?")
    return {}


def tally(state: State) -> dict:
    return {}


def after(state: object) -> dict:
    if RECORD is not None:
        RECORD(state)
    return {}


builder = StateGraph(State)
builder.add_node("fill", fill)
builder.add_node("recolor", recolor)
builder.add_node("ask", ask)
builder.add_node("tally", tally)
builder.add_node("after", after)
builder.add_edge(START, "fill")
builder.add_edge("fill", "recolor")
builder.add_edge("recolor", "ask")
builder.add_edge("recolor", "tally")
builder.add_edge("tally", END)
builder.add_edge("ask", "after")
builder.add_edge("after", END)


class Prefs(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")  # and legacy removed

    theme: str


class Profile(pydantic.BaseModel):
    name: str
    count: int
    email: str
    prefs: Prefs | None = None


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
