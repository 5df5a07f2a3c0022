"""Run-time facts behind the plugin's precision rules: a real graph with a real checkpointer, or the
real serializer.

The first tests pin cases the plugin does *not* report, because at run time nothing is lost; the
others pin what its messages claim for classes that come back changed. If a LangGraph (or pydantic)
release changes one of them, the test fails and the rule has to change with it.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
import operator
import sqlite3
import threading
from typing import Annotated, Any, ClassVar, TypedDict

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command, Overwrite
from pydantic import BaseModel, PrivateAttr

from json_serde import JsonSerde


def _config(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


def test_message_like_tuples_become_messages_in_an_add_messages_channel() -> None:
    class State(MessagesState):
        topic: str

    def reply(state: State) -> Command[None]:
        return Command(update={"messages": [("ai", "hello")]})

    builder = StateGraph(State)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    builder.add_edge("reply", END)
    graph = builder.compile(checkpointer=InMemorySaver())
    graph.invoke({"messages": [("user", "hi")], "topic": "t"}, _config("messages"))

    stored = graph.get_state(_config("messages")).values["messages"]
    assert [type(message) for message in stored] == [HumanMessage, AIMessage]
    assert [message.content for message in stored] == ["hi", "hello"]


def test_command_update_as_a_list_of_pairs_updates_those_channels() -> None:
    class State(TypedDict):
        topic: str
        count: int

    def node(state: State) -> Command[None]:
        return Command(update=[("topic", "pairs"), ("count", 2)])

    builder = StateGraph(State)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    graph = builder.compile(checkpointer=InMemorySaver())
    graph.invoke({"topic": "", "count": 0}, _config("pairs"))

    assert graph.get_state(_config("pairs")).values == {"topic": "pairs", "count": 2}


def test_overwrite_stores_its_value_not_the_wrapper() -> None:
    class State(TypedDict):
        items: Annotated[list[str], operator.add]

    def node(state: State) -> Command[None]:
        return Command(update={"items": Overwrite(["b"])})

    builder = StateGraph(State)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    graph = builder.compile(checkpointer=InMemorySaver())
    graph.invoke({"items": ["a"]}, _config("overwrite"))

    assert graph.get_state(_config("overwrite")).values == {"items": ["b"]}


def test_an_update_key_that_is_not_a_channel_is_dropped_before_it_is_serialized() -> None:
    class State(TypedDict):
        topic: str

    def node(state: State) -> dict[str, object]:
        # A lock raises under every serializer: it never reaches one.
        return {"topic": "kept", "lock": threading.Lock()}

    builder = StateGraph(State)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    graph = builder.compile(checkpointer=InMemorySaver())
    graph.invoke({"topic": ""}, _config("unknown"))

    assert graph.get_state(_config("unknown")).values == {"topic": "kept"}


@pytest.mark.parametrize("saver", ["memory", "sqlite"])
def test_a_whole_bytearray_channel_comes_back_as_bytes_under_sqlite_and_a_nested_one_always(
    saver: str,
) -> None:
    class State(TypedDict):
        blob: bytearray
        blobs: list[bytearray]

    builder = StateGraph(State)
    builder.add_node("noop", lambda state: {})
    builder.add_edge(START, "noop")
    checkpointer = (
        InMemorySaver()
        if saver == "memory"
        else SqliteSaver(sqlite3.connect(":memory:", check_same_thread=False))
    )
    graph = builder.compile(checkpointer=checkpointer)
    graph.invoke({"blob": bytearray(b"ab"), "blobs": [bytearray(b"cd")]}, _config("bytes"))

    # InMemorySaver keeps each channel value as the serializer wrote it; SqliteSaver serializes the
    # whole checkpoint as one value, where a bytearray is written as bytes.
    values = graph.get_state(_config("bytes")).values
    assert type(values["blob"]) is (bytearray if saver == "memory" else bytes)
    assert [type(item) for item in values["blobs"]] == [bytes]


# msgpack: classes that come back changed ---------------------------------------------------------
# Module-level classes: the loader re-imports them by (module, name).


class Span(enum.Enum):
    SHORT = (0, 10)


@dataclasses.dataclass
class Scaled:
    value: int
    factor: dataclasses.InitVar[int]


@dataclasses.dataclass
class Shifted:
    value: int
    offset: dataclasses.InitVar[int] = 5

    def __post_init__(self, offset: int) -> None:
        self.value += offset


class Cached(BaseModel):
    key: str
    _hits: int = PrivateAttr(default=0)


def _round_trip(value: object) -> object:
    serde = JsonPlusSerializer()
    return serde.loads_typed(serde.dumps_typed(value))


def test_an_enum_with_tuple_values_comes_back_as_a_list() -> None:
    assert _round_trip(Span.SHORT) == [0, 10]


def test_a_dataclass_with_a_required_init_var_comes_back_as_a_dict() -> None:
    assert _round_trip(Scaled(3, 2)) == {"value": 3}


def test_a_dataclass_with_an_init_var_default_runs_post_init_again() -> None:
    back = _round_trip(Shifted(1, offset=2))
    assert isinstance(back, Shifted) and back.value == 3 + 5


def test_a_private_attribute_comes_back_as_its_default() -> None:
    cached = Cached(key="k")
    cached._hits = 9
    back = _round_trip(cached)
    assert isinstance(back, Cached) and back._hits == 0


def test_a_pydantic_state_schema_tuple_is_a_tuple_in_nodes_and_a_list_in_the_checkpoint() -> None:
    seen: dict[str, type] = {}

    class State(BaseModel):
        pair: tuple[int, int] = (0, 0)

    def first(state: State) -> dict[str, object]:
        return {"pair": (1, 2)}

    def second(state: State) -> dict[str, object]:
        seen["pair"] = type(state.pair)
        return {}

    builder = StateGraph(State)
    builder.add_node("first", first)
    builder.add_node("second", second)
    builder.add_edge(START, "first")
    builder.add_edge("first", "second")
    graph = builder.compile(checkpointer=InMemorySaver())
    graph.invoke({"pair": (5, 6)}, _config("pydantic-tuple"))

    assert seen == {"pair": tuple}
    assert graph.get_state(_config("pydantic-tuple")).values["pair"] == [1, 2]


@pytest.mark.parametrize("serde", [None, JsonSerde()], ids=["msgpack", "json"])
def test_a_node_update_of_another_tuple_type_is_a_tuple_in_nodes_of_a_pydantic_state(serde: Any) -> None:
    # A node declared -> Paired (tags: tuple[str, str]) writes to a channel declared tuple[str, ...]:
    # the update is worded as the field is (issue 18), because the next node gets a tuple again.
    seen: dict[str, object] = {}

    class State(BaseModel):
        tags: tuple[str, ...] = ()

    def pair(state: State) -> dict[str, object]:
        return {"tags": ("a", "b")}

    def read(state: State) -> dict[str, object]:
        seen["tags"] = state.tags
        return {}

    builder = StateGraph(State)
    builder.add_node("pair", pair)
    builder.add_node("read", read)
    builder.add_edge(START, "pair")
    builder.add_edge("pair", "read")
    saver = InMemorySaver() if serde is None else InMemorySaver(serde=serde)
    graph = builder.compile(checkpointer=saver)
    graph.invoke({"tags": ()}, _config("pydantic-update-tuple"))

    assert seen == {"tags": ("a", "b")}
    assert graph.get_state(_config("pydantic-update-tuple")).values["tags"] == ["a", "b"]


def test_a_class_var_of_a_pydantic_state_schema_is_a_channel_written_with_instances() -> None:
    class State(BaseModel):
        name: str = ""
        logger: ClassVar[logging.Logger] = logging.getLogger("lgstate-test")

    def rename(state: State) -> State:
        return State(name="renamed")

    builder = StateGraph(State)
    builder.add_node("rename", rename)
    builder.add_edge(START, "rename")
    graph = builder.compile(checkpointer=InMemorySaver())

    assert "logger" in builder.channels
    with pytest.raises(TypeError, match="Logger"):
        graph.invoke({"name": "x"}, _config("class-var"))


class Reviewer(BaseModel):
    name: str


def test_a_function_local_class_comes_back_as_the_top_level_class_of_its_name() -> None:
    class Reviewer(BaseModel):  # noqa: F811 (the point of the test)
        name: str
        score: int

    back = _round_trip(Reviewer(name="a", score=1))
    assert type(back) is globals()["Reviewer"]
    assert back == globals()["Reviewer"](name="a")


# json: a model or dataclass state given whole to invoke() -----------------------------------------


class _TopicModel(BaseModel):
    topic: str = ""


@dataclasses.dataclass
class _TopicData:
    topic: str = ""


@pytest.mark.parametrize("schema", [_TopicModel, _TopicData])
def test_json_a_whole_state_object_as_input_raises_as_the_start_value(schema: Any) -> None:
    builder = StateGraph(schema)
    builder.add_node("set", lambda state: {"topic": "x"})
    builder.add_edge(START, "set")
    graph = builder.compile(checkpointer=InMemorySaver(serde=JsonSerde()))  # type: ignore[arg-type]
    # Every field is JSON-clean, but LangGraph keeps the input object as the __start__ value.
    with pytest.raises(TypeError, match="is not JSON serializable"):
        graph.invoke(schema(topic="a"), _config("object"))
    graph.invoke({"topic": "a"}, _config("dict"))
    assert graph.get_state(_config("dict")).values == {"topic": "x"}


# msgpack with pickle_fallback -----------------------------------------------------------------


class _Plain:
    def __init__(self) -> None:
        self.a = 1

    def __eq__(self, other: object) -> bool:
        return type(other) is _Plain and other.a == self.a


@pytest.mark.parametrize(
    ("make", "survives"),
    [(_Plain, True), (lambda: 1 + 2j, True), (lambda: range(3), True), (lambda: _Plain, True),
     (threading.Lock, False), (lambda: open(__file__), False),
     (lambda: sqlite3.connect(":memory:"), False), (lambda: (lambda: 1), False)],
)
def test_pickle_fallback_writes_what_pickle_handles(make: Any, survives: bool) -> None:
    from mypy_lgstate.runtime import find_problems

    value = make()
    serde = JsonPlusSerializer(pickle_fallback=True)
    problems = find_problems(value, profile="msgpack", pickle_fallback=True)
    try:
        if survives:
            assert serde.loads_typed(serde.dumps_typed(value)) == value
            assert problems == []
        else:
            with pytest.raises(Exception):
                serde.dumps_typed(value)
            assert [p.code for p in problems] == ["lgstate-unserializable"]
    finally:
        close = getattr(value, "close", None)
        if callable(close):
            close()


class _Speed(str, enum.Enum):
    FAST = "fast"


class _SpeedState(BaseModel):
    speed: _Speed = _Speed.FAST
    n: int = 0


def test_json_an_enum_field_of_a_pydantic_state_is_an_enum_in_nodes_and_bare_in_get_state() -> None:
    seen: list[type] = []

    def second(state: _SpeedState) -> dict[str, Any]:
        seen.append(type(state.speed))
        return {"n": 2}

    builder = StateGraph(_SpeedState)
    builder.add_node("first", lambda state: {"speed": _Speed.FAST, "n": 1})
    builder.add_node("second", second)
    builder.add_edge(START, "first")
    builder.add_edge("first", "second")
    graph = builder.compile(
        checkpointer=InMemorySaver(serde=JsonSerde()),  # type: ignore[arg-type]
        interrupt_before=["second"],
    )
    graph.invoke({"n": 0}, _config("speed"))
    assert type(graph.get_state(_config("speed")).values["speed"]) is str
    output = graph.invoke(None, _config("speed"))  # resumed from the stored checkpoint
    assert seen == [_Speed] and type(output["speed"]) is str


_BOX = '''
from typing import Generic, TypeVar
from pydantic import BaseModel
T = TypeVar("T")
class Box(BaseModel, Generic[T]):
    item: T
'''
_DEFERRED_SCHEMAS = '''
from __future__ import annotations
from dataclasses import dataclass, field
from pydantic import BaseModel
from typing_extensions import TypedDict
from box import Box
class Inner(TypedDict):
    box: Box[str]
class Base(TypedDict, total=False):
    inherited: Box[bytes]
class State(Base, total=False):
    box: Box[int]
    boxes: list[Box[int]]
    inner: Inner
class ModelState(BaseModel):
    box: Box[float] | None = None
@dataclass
class DataclassState:
    box: Box[bool] | None = None
'''
_ROUND_TRIP = '''
import json, warnings
warnings.simplefilter("ignore")
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from box import Box
import schemas
def kind(value):
    if isinstance(value, list):
        return [kind(item) for item in value]
    if isinstance(value, dict):
        return {key: kind(item) for key, item in value.items()}
    if hasattr(value, "box"):
        return kind(value.box)
    return type(value).__name__
def stored(schema, update, made):
    builder = StateGraph(schema)
    builder.add_node("node", lambda state: update())  # values made in a node, as real code does
    builder.add_edge(START, "node")
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "1"}}
    graph.invoke(made, config)
    return kind(dict(graph.get_state(config).values))
print(json.dumps({
    "typeddict": stored(schemas.State, lambda: {
        "box": Box[int](item=1), "boxes": [Box[int](item=1)],
        "inner": {"box": Box[str](item="a")}, "inherited": Box[bytes](item=b"b")}, {}),
    "model": stored(schemas.ModelState, lambda: {"box": Box[float](item=1.0)}, {}),
    "dataclass": stored(schemas.DataclassState, lambda: {"box": Box[bool](item=True)}, {}),
}))
'''


def test_a_typeddict_schema_with_deferred_annotations_registers_its_keys_generic_models(
    tmp_path: Any,
) -> None:
    """``StateGraph(S)`` evaluates a TypedDict schema's string annotations in its module, where
    pydantic registers each parametrized model it creates: only the schema's own keys (inherited
    ones from the same module too) come back as models; nested classes' fields and pydantic or
    dataclass schemas come back as dicts."""
    import json
    import subprocess
    import sys

    (tmp_path / "box.py").write_text(_BOX)
    (tmp_path / "schemas.py").write_text(_DEFERRED_SCHEMAS)
    (tmp_path / "round_trip.py").write_text(_ROUND_TRIP)
    run = subprocess.run(
        [sys.executable, "round_trip.py"], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert json.loads(run.stdout) == {
        "typeddict": {
            "box": "Box[int]",
            "boxes": ["Box[int]"],
            "inner": {"box": {"item": "str"}},  # a dict: the model's dump
            "inherited": "Box[bytes]",
        },
        "model": {"box": {"item": "float"}},
        "dataclass": {"box": {"item": "bool"}},
    }
