"""The saver ``postgres``, on a real PostgreSQL server (``postgres_server``) with a real graph: a
channel's whole value that is an enum member with a ``str``, ``int`` or ``float`` mixin comes back as
its bare value, even with unchanged code; members nested in a dict or a list keep their class; a
channel's whole ``bytearray`` is kept; ``SqliteSaver`` keeps the top-level members and loses the
bytearray. Then what the runtime twin (``find_problems``, ``CheckedSaver``) and the plugin's wording
say of it, on the same server.
"""

from __future__ import annotations

import enum
import sqlite3
import warnings
from collections.abc import Iterator
from typing import Any, TypedDict

import pydantic
import pytest
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from mypy_lgstate.runtime import CheckedSaver, CheckpointValueError, find_problems
from postgres_server import make_database, postgres_server  # noqa: F401 (fixture)


class Status(str, enum.Enum):
    OPEN = "open"
    CLOSED = "closed"


class Tier(enum.StrEnum):
    GOLD = "gold"


class Level(enum.IntEnum):
    HIGH = 2


class Ratio(float, enum.Enum):
    HALF = 0.5


class Color(enum.Enum):  # no mixin: the serializer writes it
    RED = 1


class State(TypedDict, total=False):
    status: Status
    tier: Tier
    level: Level
    ratio: Ratio
    color: Color
    by_name: dict[str, Status]
    levels: list[Level]
    raw: bytearray


class ModelState(pydantic.BaseModel):
    status: Status = Status.OPEN
    seen: list[Any] = []


WRITTEN: dict[str, Any] = {
    "status": Status.CLOSED,
    "tier": Tier.GOLD,
    "level": Level.HIGH,
    "ratio": Ratio.HALF,
    "color": Color.RED,
    "by_name": {"a": Status.OPEN},
    "levels": [Level.HIGH],
    "raw": bytearray(b"ab"),
}
CONFIG: Any = {"configurable": {"thread_id": "t1"}}


@pytest.fixture(scope="module")
def url(postgres_server: str) -> str:  # noqa: F811
    found = make_database(postgres_server, "savers")
    with PostgresSaver.from_conn_string(found) as saver:
        saver.setup()
    return found


@pytest.fixture
def postgres(url: str) -> Iterator[PostgresSaver]:
    with PostgresSaver.from_conn_string(url) as saver:
        yield saver


def _graph(schema: Any, node: Any, checkpointer: Any) -> Any:
    builder = StateGraph(schema)
    builder.add_node("write", node)
    builder.add_node("read", lambda state: {"seen": [state.status]} if schema is ModelState else {})
    builder.add_edge(START, "write")
    builder.add_edge("write", "read")
    builder.add_edge("read", END)
    return builder.compile(checkpointer=checkpointer)


def _stored(checkpointer: Any, thread: str) -> dict[str, Any]:
    config = {"configurable": {"thread_id": thread}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Deserializing unregistered type": permissive msgpack
        _graph(State, lambda state: WRITTEN, checkpointer).invoke({}, config)
        return dict(_graph(State, lambda state: {}, checkpointer).get_state(config).values)


def test_postgres_stores_a_whole_enum_channel_as_its_bare_value(url: str) -> None:
    with PostgresSaver.from_conn_string(url) as saver:
        _stored(saver, "written")
    with PostgresSaver.from_conn_string(url) as fresh:  # read back through a new saver
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            stored = dict(_graph(State, lambda state: {}, fresh).get_state(
                {"configurable": {"thread_id": "written"}}
            ).values)
    assert [(type(stored[key]), stored[key]) for key in ("status", "tier", "level", "ratio")] == [
        (str, "closed"), (str, "gold"), (int, 2), (float, 0.5)
    ]
    assert stored["color"] is Color.RED
    assert stored["by_name"] == {"a": Status.OPEN} and stored["by_name"]["a"] is Status.OPEN
    assert stored["levels"][0] is Level.HIGH
    assert type(stored["raw"]) is bytearray


def test_sqlite_keeps_a_whole_enum_channel_and_loses_a_whole_bytearray() -> None:
    saver = SqliteSaver(sqlite3.connect(":memory:", check_same_thread=False))
    stored = _stored(saver, "written")
    assert stored["status"] is Status.CLOSED and stored["level"] is Level.HIGH
    assert stored["ratio"] is Ratio.HALF
    assert type(stored["raw"]) is bytes


def test_a_pydantic_state_gets_the_member_back_in_nodes_and_shows_the_bare_value(
    postgres: PostgresSaver,
) -> None:
    graph = _graph(ModelState, lambda state: {"status": Status.CLOSED}, postgres)
    config = {"configurable": {"thread_id": "model"}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph.invoke(ModelState(), config)
        values = graph.get_state(config).values
    assert values["seen"] == [Status.CLOSED] and values["seen"][0] is Status.CLOSED
    assert type(values["status"]) is str and values["status"] == "closed"


# The runtime twin --------------------------------------------------------------------------------

INLINED = (
    "PostgresSaver (and AsyncPostgresSaver, LangGraph's server) stores a channel's value inline as"
    " JSON when it is a str, without its class: it comes back as a plain str. Fix: declare the field"
    " as str and store member.value, rebuilding the member with Status(value) where it is read"
)


def test_find_problems_says_it_of_a_channel_value_for_the_postgres_saver() -> None:
    found = find_problems(Status.CLOSED, profile="msgpack", saver="postgres")
    assert [(p.path, p.code, p.message) for p in found] == [
        ("", "lgstate-lossy", f'value is "Status": {INLINED}')
    ]
    assert find_problems(Status.CLOSED, profile="msgpack") == []
    assert find_problems({"a": Status.CLOSED}, profile="msgpack", saver="postgres") == []
    assert find_problems(bytearray(b"a"), profile="msgpack", saver="postgres") == []
    assert [p.code for p in find_problems(bytearray(b"a"), profile="msgpack")] == ["lgstate-lossy"]


def test_checked_saver_around_postgres_names_the_node_and_the_channel(
    postgres: PostgresSaver,
) -> None:
    checked = CheckedSaver(postgres, profile="msgpack")
    graph = _graph(State, lambda state: {"status": Status.CLOSED}, checked)
    with pytest.raises(CheckpointValueError) as raised:
        graph.invoke({}, {"configurable": {"thread_id": "checked"}})
    error = raised.value
    assert (error.channel, error.node) == ("status", "write")
    assert [(p.path, p.code) for p in error.problems] == [("status", "lgstate-lossy")]
    assert error.problems[0].message == f'status is "Status": {INLINED}'


def test_checked_saver_around_postgres_runs_a_graph_whose_members_are_nested(
    postgres: PostgresSaver,
) -> None:
    checked = CheckedSaver(postgres, profile="msgpack")
    graph = _graph(State, lambda state: {"by_name": {"a": Status.OPEN}, "color": Color.RED}, checked)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph.invoke({}, {"configurable": {"thread_id": "nested"}})
        assert graph.get_state({"configurable": {"thread_id": "nested"}}).values["by_name"] == {
            "a": Status.OPEN
        }


def test_checked_saver_applies_the_configured_saver_around_another_saver() -> None:
    saver = SqliteSaver(sqlite3.connect(":memory:", check_same_thread=False))
    graph = _graph(State, lambda state: {"level": Level.HIGH}, CheckedSaver(saver, profile="msgpack"))
    graph.invoke({}, {"configurable": {"thread_id": "sqlite"}})
    told = CheckedSaver(saver, profile="msgpack", saver="postgres")
    with pytest.raises(CheckpointValueError) as raised:
        _graph(State, lambda state: {"level": Level.HIGH}, told).invoke(
            {}, {"configurable": {"thread_id": "told"}}
        )
    assert raised.value.problems[0].message.startswith('level is "Level": PostgresSaver')
