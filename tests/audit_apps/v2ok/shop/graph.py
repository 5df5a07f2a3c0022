"""v2ok: v1 with compatible changes only (a default, a NotRequired key, an enum member, a wider
type, a new channel): every old thread resumes as it was."""

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
    GREEN = "green"


class Status(str, enum.Enum):
    ACTIVE = "active"


class Order(pydantic.BaseModel):
    id: int
    gift: bool = False


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
    floor: NotRequired[str | int]
    note: NotRequired[str]


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
    widened: NotRequired[int | str]
    tallies: NotRequired[Annotated[list[str | int], operator.add]]
    stamp_in: NotRequired[Stamp]
    stamp_out: NotRequired[Stamp]
    stamp_back: NotRequired[Stamp]
    legacy: NotRequired[str]
    extra: NotRequired[str]


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
        "address": {"city": "Oslo"},
        "note": None,
        "score": 7,
        "widened": 8,
        "legacy": "kept",
    }


def recolor(state: State) -> dict:
    return {"color": Color.RED} if state["case"] == "history" else {}


def ask(state: State) -> dict:
    interrupt("approve?")
    return {}


def tally(state: State) -> dict:
    return {}


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


class Prefs(pydantic.BaseModel):  # legacy removed: the stored key is ignored
    theme: str


class Profile(pydantic.BaseModel):
    """A pydantic state: LangGraph validates it before each node."""

    name: str
    count: int | None = None
    nickname: str = ""
    prefs: Prefs | None = None


def profile_fill(state: Profile) -> dict:
    return {"count": None}


profile_builder = StateGraph(Profile)
profile_builder.add_node("profile_fill", profile_fill)
profile_builder.add_node("ask", ask)
profile_builder.add_node("after", after)
profile_builder.add_edge(START, "profile_fill")
profile_builder.add_edge("profile_fill", "ask")
profile_builder.add_edge("ask", "after")
profile_builder.add_edge("after", END)
