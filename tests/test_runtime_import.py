"""The runtime side of the package: ``import mypy_lgstate`` is cheap and ``graph_state`` is a no-op.

Applications import ``mypy_lgstate`` for the decorator in production, where mypy may not even be
installed: the import must not pull in mypy (docs/runtime.md).
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from typing import TypedDict, get_type_hints

from pydantic import BaseModel

import mypy_lgstate
from mypy_lgstate import graph_state


def _modules_after(code: str, *, packages: bool = True) -> list[str]:
    """The top-level packages (or, with ``packages=False``, the modules) in ``sys.modules`` after
    running ``code`` in a fresh interpreter."""
    names = "{m.split('.')[0] for m in sys.modules}" if packages else "sys.modules"
    script = code + f"\nimport sys, json\nprint(json.dumps(sorted({names})))"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    return list(json.loads(done.stdout.splitlines()[-1]))


def test_import_does_not_import_mypy() -> None:
    loaded = _modules_after("import mypy_lgstate")
    assert "mypy_lgstate" in loaded
    for heavy in ("mypy", "mypyc", "langgraph", "pydantic"):
        assert heavy not in loaded


def test_decorating_a_class_does_not_import_mypy() -> None:
    code = (
        "from typing import TypedDict\n"
        "from mypy_lgstate import graph_state\n"
        "@graph_state\n"
        "class State(TypedDict):\n"
        "    name: str\n"
    )
    assert "mypy" not in _modules_after(code)


def test_the_plugin_module_is_separate() -> None:
    # The mypy entry point is its own module, loaded by mypy only.
    assert "mypy_lgstate.plugin" not in _modules_after("import mypy_lgstate")


def test_the_plugin_defers_its_checks() -> None:
    # mypy imports the entry point in every run, a warm run with nothing to check included: the
    # routes, the checks, the walker and the rule tables wait for the first hook that fires. What
    # it loads is the error codes (mypy must know them before any module is read) and the parts of
    # core/ that read the configuration (langgraph.json included: it decides the saver), the lock
    # file and the plugin's own version.
    loaded = {m for m in _modules_after("import mypy_lgstate.plugin", packages=False) if m.startswith("mypy_lgstate")}
    assert loaded == {
        "mypy_lgstate",
        "mypy_lgstate.plugin",
        "mypy_lgstate.checker",
        "mypy_lgstate.checker.errorcodes",
        "mypy_lgstate.core",
        "mypy_lgstate.core.config",
        "mypy_lgstate.core.digest",
        "mypy_lgstate.core.langgraph_json",
        "mypy_lgstate.core.libraries",
        "mypy_lgstate.core.lockfile",
    }


def test_public_names() -> None:
    assert mypy_lgstate.__all__ == ["__version__", "graph_state"]
    assert isinstance(mypy_lgstate.__version__, str) and mypy_lgstate.__version__


class TypedState(TypedDict):
    name: str


@dataclasses.dataclass
class DataState:
    name: str


class ModelState(BaseModel):
    name: str


class PlainClass:
    pass


def test_graph_state_returns_the_class_unchanged() -> None:
    for cls in (TypedState, DataState, ModelState, PlainClass):
        before = dict(vars(cls))
        assert graph_state(cls) is cls
        assert dict(vars(cls)) == before


def test_decorated_classes_behave_as_before() -> None:
    @graph_state
    class Decorated(TypedDict):
        name: str

    @graph_state
    @dataclasses.dataclass
    class DecoratedData:
        name: str

    @graph_state
    class DecoratedModel(BaseModel):
        name: str

    assert Decorated(name="a") == {"name": "a"}
    assert get_type_hints(Decorated) == {"name": str}
    assert dataclasses.fields(DecoratedData)[0].name == "name"
    assert DecoratedModel(name="a").model_dump() == {"name": "a"}


def test_decorated_state_works_in_a_real_graph() -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph

    @graph_state
    class State(TypedDict):
        count: int

    class Update(TypedDict):
        count: int

    def increment(state: State) -> Update:
        return {"count": state["count"] + 1}

    builder = StateGraph(State)
    builder.add_node("increment", increment)
    builder.add_edge(START, "increment")
    builder.add_edge("increment", END)
    graph = builder.compile(checkpointer=InMemorySaver())
    assert graph.invoke({"count": 1}, {"configurable": {"thread_id": "t"}}) == {"count": 2}
