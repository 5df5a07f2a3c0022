"""What old checkpoints really do after each change that ``lgstate-drift`` reports (and after the
compatible ones it does not): the outcome each message claims, with the real serializer and real
graphs.

Each test writes a value with the old class, defines the class anew under the same module and name
(a fresh module object in ``sys.modules``, as after a deploy), and reads the checkpoint back.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph import END, START, StateGraph
from pydantic import ValidationError

MODULE = "drift_checkpointed"
PRELUDE = """\
import dataclasses
import enum
import pydantic
from typing_extensions import NotRequired, TypedDict
"""


@pytest.fixture(autouse=True)
def _no_module() -> Iterator[None]:
    yield
    sys.modules.pop(MODULE, None)


def define(source: str) -> types.ModuleType:
    module = types.ModuleType(MODULE)
    sys.modules[MODULE] = module
    exec(PRELUDE + source, module.__dict__)
    return module


def reload(old: str, new: str, make: str) -> Any:
    """The value ``make`` builds from the old classes, written, then read with the new ones."""
    serializer = JsonPlusSerializer()
    stored = serializer.dumps_typed(eval(make, vars(define(old))))
    define(new)
    return serializer.loads_typed(stored)


PROFILE = "class Profile(pydantic.BaseModel):\n    name: str\n    age: int | None = None\n"
JOB = "@dataclasses.dataclass\nclass Job:\n    id: int\n"
COLOR = "class Color(enum.Enum):\n    RED = 'red'\n    BLUE = 'blue'\n"


# Models and dataclasses inside the state: stored by (module, name) ------------------------------


def test_model_new_required_field_falls_back_to_model_construct() -> None:
    value = reload(PROFILE, PROFILE + "    email: str\n", "Profile(name='a')")
    assert type(value).__name__ == "Profile" and value.name == "a"
    with pytest.raises(AttributeError):
        value.email


def test_model_removed_field_is_dropped() -> None:
    value = reload(PROFILE, "class Profile(pydantic.BaseModel):\n    name: str\n",
                   "Profile(name='a', age=3)")
    assert value.model_dump() == {"name": "a"}


def test_model_narrowed_field_keeps_the_old_value_unvalidated() -> None:
    value = reload(PROFILE, "class Profile(pydantic.BaseModel):\n    name: str\n    age: int\n",
                   "Profile(name='a')")
    assert type(value).__name__ == "Profile" and value.age is None


def test_dataclass_new_required_or_removed_field_comes_back_as_dict() -> None:
    assert reload(JOB, JOB + "    owner: str\n", "Job(id=1)") == {"id": 1}
    assert reload(JOB + "    owner: str = ''\n", JOB, "Job(id=1)") == {"id": 1, "owner": ""}


def test_dataclass_changed_type_keeps_the_old_value() -> None:
    value = reload(JOB, "@dataclasses.dataclass\nclass Job:\n    id: str\n", "Job(id=1)")
    assert type(value).__name__ == "Job" and value.id == 1


def test_enum_lost_value_comes_back_bare() -> None:
    assert reload(COLOR, "class Color(enum.Enum):\n    RED = 'red'\n", "Color.BLUE") == "blue"
    changed = "class Color(enum.Enum):\n    RED = 'red'\n    BLUE = 'navy'\n"
    assert reload(COLOR, changed, "Color.BLUE") == "blue"


def test_renamed_classes_come_back_as_dicts_or_bare_values() -> None:
    assert reload(JOB, JOB.replace("Job", "Task"), "Job(id=1)") == {"id": 1}
    assert reload(PROFILE, PROFILE.replace("Profile", "User"), "Profile(name='a')") == {
        "name": "a", "age": None
    }
    assert reload(COLOR, COLOR.replace("Color", "Hue"), "Color.RED") == "red"


def test_compatible_changes_come_back_as_the_new_class() -> None:
    kept = reload(JOB, JOB.replace("Job", "Task") + "Job = Task\n", "Job(id=1)")
    assert type(kept).__name__ == "Task" and kept.id == 1
    renamed_member = reload(COLOR, "class Color(enum.Enum):\n    CRIMSON = 'red'\n", "Color.RED")
    assert renamed_member.name == "CRIMSON"
    with_default = reload(PROFILE, PROFILE + "    email: str = ''\n", "Profile(name='a')")
    assert with_default.email == ""


def test_nested_typeddict_new_required_key_is_missing() -> None:
    old = "class Entry(TypedDict):\n    text: str\n"
    value = reload(old, old + "    lang: str\n", "Entry(text='a')")
    with pytest.raises(KeyError):
        value["lang"]


# Graph-state classes: each field is a channel -----------------------------------------------------


def resume(old: str, new: str, first: dict[str, Any], read: str) -> list[Any]:
    """Run a graph on the old ``State`` up to an interrupt, then resume it with the new ``State``;
    node ``b`` evaluates ``read`` on the state it gets. Returns what ``b`` saw."""
    saver = InMemorySaver()
    config = {"configurable": {"thread_id": "1"}}
    seen: list[Any] = []

    def b(state: Any) -> dict[str, Any]:
        seen.append(state)
        eval(read, {"state": state})
        return {}

    for source, node, payload in ((old, lambda state: {}, first), (new, b, None)):
        graph = StateGraph(define(source).State)
        graph.add_node("a", lambda state: {})
        graph.add_node("b", node)
        graph.add_edge(START, "a")
        graph.add_edge("a", "b")
        graph.add_edge("b", END)
        graph.compile(checkpointer=saver, interrupt_before=["b"]).invoke(payload, config)
    return seen


def test_state_typeddict_new_required_key_raises_key_error() -> None:
    old = "class State(TypedDict):\n    x: int\n"
    with pytest.raises(KeyError):
        resume(old, old + "    y: str\n", {"x": 1}, "state['y']")


def test_state_model_new_required_or_narrowed_field_raises_validation_error() -> None:
    old = "class State(pydantic.BaseModel):\n    x: int | None\n"
    with pytest.raises(ValidationError):
        resume(old, old + "    y: str\n", {"x": 1}, "state.y")
    with pytest.raises(ValidationError):
        resume(old, "class State(pydantic.BaseModel):\n    x: int\n", {"x": None}, "state.x")


def test_state_dataclass_new_required_field_raises_type_error() -> None:
    old = "@dataclasses.dataclass\nclass State:\n    x: int\n"
    with pytest.raises(TypeError):
        resume(old, old + "    y: str\n", {"x": 1}, "state.y")


def test_state_dataclass_narrowed_field_keeps_the_old_value() -> None:
    old = "@dataclasses.dataclass\nclass State:\n    x: int | None\n"
    seen = resume(old, "@dataclasses.dataclass\nclass State:\n    x: int\n", {"x": None}, "state.x")
    assert [state.x for state in seen] == [None]
