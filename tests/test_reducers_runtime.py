"""Reducers and channel classes as LangGraph runs them, each on a real compiled graph with a real
checkpointer (``write_then_read``), read back with ``get_state()``: what the messages of
``test-data/test_reducers.yml`` claim.
"""

from __future__ import annotations

import functools
import operator
from typing import Annotated, Any, TypedDict, TypeVar

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.channels import BinaryOperatorAggregate, Topic
from langgraph.graph.message import add_messages
from langgraph.types import Overwrite

from json_serde import JsonSerde
from write_then_read import write_then_read

T = TypeVar("T")


def take_last(current, new):  # type: ignore[no-untyped-def]
    return new


def keep_last(current: T, new: T) -> T:
    return new


def capped(current: list[int], new: list[int], limit: int) -> list[int]:
    return (current + new)[-limit:]


class Highest:
    def __call__(self, current: int, new: int) -> int:
        return max(current, new)


class State(TypedDict, total=False):
    by_lambda: Annotated[list[int], lambda old, new: new]
    untyped: Annotated[list[int], take_last]
    typed: Annotated[list[int], keep_last]
    tags: Annotated[list[str], keep_last]
    total: Annotated[int, BinaryOperatorAggregate(int, operator.add)]
    top: Annotated[int, Highest()]
    recent: Annotated[list[int], functools.partial(capped, limit=3)]
    notes: Annotated[list[str], Topic(str, accumulate=True)]
    step_notes: Annotated[list[str], Topic(str)]
    messages: Annotated[list[Any], add_messages]
    counts: Annotated[dict[str, int], operator.or_]
    items: Annotated[list[str], operator.add]


def test_a_reducer_that_returns_what_is_written_stores_the_value_itself() -> None:
    written = {"by_lambda": (1, 2), "untyped": (1, 2), "typed": (1, 2)}
    read, _, stored = write_then_read(State, written, {})
    for key in written:
        assert read[key] == (1, 2)  # the next node reads what was written
        assert stored[key] == [1, 2] and type(stored[key]) is list  # the checkpoint, a list
    with pytest.raises(TypeError, match="not JSON serializable"):
        write_then_read(State, {"tags": {"a"}}, {}, JsonSerde())


@pytest.mark.parametrize(
    ("written", "error"),
    [
        ({"total": "ten"}, "unsupported operand type"),
        ({"top": "x"}, "not supported between instances of 'str' and 'int'"),
        ({"recent": 5}, 'can only concatenate list \\(not "int"\\) to list'),
        ({"counts": [("a", 1)]}, r"unsupported operand type\(s\) for \|: 'dict' and 'list'"),
        ({"items": ("a", "b")}, 'can only concatenate list \\(not "tuple"\\) to list'),
    ],
    ids=["binary-operator-aggregate", "callable-instance", "partial", "or-dict-list", "add-list-tuple"],
)
def test_a_typed_reducer_is_called_with_the_value_and_raises_on_what_it_does_not_take(
    written: dict[str, Any], error: str
) -> None:
    with pytest.raises(TypeError, match=error):
        write_then_read(State, written, {})


def test_the_values_those_reducers_take() -> None:
    written = {"total": 10, "top": 3, "recent": [5], "counts": {"a": 1}, "items": ["a"]}
    _, _, stored = write_then_read(State, written, {})
    assert {key: stored[key] for key in written} == written


def test_overwrite_into_a_topic_is_stored_as_an_item() -> None:
    read, _, stored = write_then_read(
        State, {"notes": Overwrite(["a"]), "step_notes": Overwrite(["b"])}, {}
    )
    assert read["notes"] == [Overwrite(["a"])] and isinstance(read["notes"][0], Overwrite)
    assert read["step_notes"] == [Overwrite(["b"])]
    assert stored["notes"] == [Overwrite(["a"])]
    for key in ("notes", "step_notes"):  # a step's own Topic is checkpointed too
        with pytest.raises(TypeError, match="Overwrite is not JSON serializable"):
            write_then_read(State, {key: Overwrite(["a"])}, {}, JsonSerde())
    assert write_then_read(State, {"notes": ["a"]}, {})[2]["notes"] == ["a"]


@pytest.mark.parametrize(
    ("item", "error"),
    [
        ({"text": "x"}, "Message dict must contain 'role' and 'content' keys"),
        (("robot", "x"), "Unexpected message type: 'robot'"),
    ],
    ids=["dict-without-role", "unknown-role"],
)
def test_add_messages_raises_on_what_langchain_makes_no_message_of(item: Any, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        write_then_read(State, {"messages": [item]}, {})


def test_the_message_forms_add_messages_takes() -> None:
    written = [{"role": "user", "content": "x"}, ("ai", "y"), {"type": "human", "content": "z"}]
    _, _, stored = write_then_read(State, {"messages": written}, {})
    assert [type(message) for message in stored["messages"]] == [HumanMessage, AIMessage, HumanMessage]
