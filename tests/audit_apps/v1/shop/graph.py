"""v1 of the audited application: it writes the threads the audit tests read."""

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


class Color(enum.Enum):
    RED = "red"
    PURPLE = "purple"


class Status(str, enum.Enum):
    ACTIVE = "active"


class Order(pydantic.BaseModel):
    id: int


class Limits(pydantic.BaseModel):
    cap: int | None = None


class Item(pydantic.BaseModel):
    name: str
    gift_wrap: bool = False


class Cart(pydantic.BaseModel):
    items: list[Item]


class Old(pydantic.BaseModel):
    x: int


class Local(pydantic.BaseModel):
    y: int


@dataclasses.dataclass
class Parcel:
    weight: int


@dataclasses.dataclass
class Stamp:
    code: str
    legacy: str = ""


class Address(TypedDict):
    city: str
    zip: NotRequired[str]
    floor: NotRequired[str]


class State(TypedDict):
    case: str
    order: NotRequired[Order]
    limits: NotRequired[Limits]
    cart: NotRequired[Cart]
    old: NotRequired[Old]
    local: NotRequired[Local]
    parcel: NotRequired[Parcel]
    color: NotRequired[Color]
    status: NotRequired[Status]
    address: NotRequired[Address]
    note: NotRequired[str | None]
    score: NotRequired[int]
    widened: NotRequired[int]
    legacy: NotRequired[str]
    tallies: NotRequired[Annotated[list[str], operator.add]]
    stamp_in: NotRequired[Stamp]
    stamp_out: NotRequired[Stamp]
    stamp_back: NotRequired[Stamp]


def fill(state: State) -> dict:
    if state["case"] == "history":
        return {"color": Color.PURPLE}
    return {
        "order": Order(id=1),
        "limits": Limits(cap=None),
        "cart": Cart(items=[Item(name="a"), Item(name="b"), Item(name="c")]),
        "old": Old(x=1),
        "local": Local(y=2),
        "parcel": Parcel(weight=3),
        "color": Color.PURPLE,
        "status": Status.ACTIVE,
        "address": {"city": "Oslo", "floor": "3rd"},
        "note": None,
        "score": 7,
        "widened": 8,
        "legacy": "kept",
        "stamp_in": Stamp("in"),
        "stamp_out": Stamp("out"),
        "stamp_back": Stamp("back"),
    }


def recolor(state: State) -> dict:
    return {"color": Color.RED} if state["case"] == "history" else {}


def ask(state: State) -> dict:
    interrupt("approve?")
    return {}


def tally(state: State) -> dict:
    """Runs beside ask: when ask interrupts, its write is a pending write of the checkpoint."""
    return {"tallies": ["x"]} if state["case"] == "shared" else {}


# Set by the tests' resume script: called with what the node after the interrupt gets.
RECORD: Callable[[object], None] | None = None


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
    theme: str
    legacy: str = ""


class Profile(pydantic.BaseModel):
    """A pydantic state: LangGraph validates it before each node."""

    name: str
    count: int | None = None
    prefs: Prefs | None = None


def profile_fill(state: Profile) -> dict:
    # A dict for a model field: stored as it is written, validated into Prefs before each node.
    return {"count": None, "prefs": {"theme": "dark", "legacy": "x"}}


profile_builder = StateGraph(Profile)
profile_builder.add_node("profile_fill", profile_fill)
profile_builder.add_node("ask", ask)
profile_builder.add_node("after", after)
profile_builder.add_edge(START, "profile_fill")
profile_builder.add_edge("profile_fill", "ask")
profile_builder.add_edge("ask", "after")
profile_builder.add_edge("after", END)
