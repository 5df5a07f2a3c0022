"""The coverage line of ``lgstate check`` never says more than was read: a graph whose state is a
type variable, an agent whose middleware list cannot be resolved and an opaque node lower the share
or are named beside it, in every format, and ``--fail-under`` fails on the lowered share."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import library_caches
from test_cli import lgstate

CONFIG = "[mypy]\nplugins = mypy_lgstate.plugin\n"
FILES = {
    "mypy.ini": CONFIG,
    "pkg/__init__.py": "",
    "pkg/state.py": """\
from typing_extensions import TypedDict


class State(TypedDict):
    draft: list[str]
""",
    # A list built from a value typed Any: no summary tells its items.
    "pkg/mw.py": """\
from typing import Any


def build_middlewares(cfg: Any) -> list[Any]:
    return cfg.middlewares
""",
    "pkg/graph.py": """\
from typing import Any, TypeVar

from langchain.agents import create_agent
from langgraph.graph import StateGraph
from langgraph.prebuilt import ToolNode

from pkg.mw import build_middlewares
from pkg.state import State

S = TypeVar("S")


def draft(state: State) -> dict[str, Any]:
    return {"draft": ["a"]}


def make_graph(state: type[S]) -> StateGraph[S]:
    generic = StateGraph(state)
    generic.add_node("draft", draft)
    return generic


builder = StateGraph(State)
builder.add_node("draft", draft)
builder.add_node("tools", ToolNode([]))


def build_agent(model: Any, cfg: Any) -> Any:
    return create_agent(model, middleware=build_middlewares(cfg))
""",
}
# Checked: draft in the State graph (1). Not: the ToolNode, the agent whose hooks are not known, and
# the draft of the graph of state S (counted apart, and in the share's denominator): 1 of 4.
LINE = (
    "nodes checked 1/3 (from bodies 1); 1 node of graphs whose state is not known (a type variable),"
    " counted apart; not checked: 1 prebuilt node, 1 agent whose middleware is not known; see lgstate"
    " report"
)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("coverage-line")
    for name, text in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    library_caches.seed(root / "cache", CONFIG, lgstate=True)
    return root


def test_every_format_says_what_was_not_read(project: Path) -> None:
    cache = project / "cache"
    result = lgstate(project, cache, "check")
    assert (result.returncode, result.stdout.splitlines()[-1]) == (0, LINE)
    data = {
        "nodes": 3, "checked": 1, "from_bodies": 1,
        "not_checked": {"prebuilt": 1, "unresolved agent": 1},
        "percent": 25.0, "values_typed_any": 0, "unknown_state": 1, "summary": LINE,
    }
    result = lgstate(project, cache, "check", "--format", "json")
    assert json.loads(result.stdout)["coverage"] == data
    result = lgstate(project, cache, "check", "--format", "sarif")
    assert json.loads(result.stdout)["runs"][0]["properties"] == {"coverage": data}
    result = lgstate(project, cache, "check", "--format", "github")
    assert result.stdout == f"::notice title=lgstate coverage::{LINE}\n"
    result = lgstate(project, cache, "check", "--format", "gitlab")
    assert (json.loads(result.stdout), result.stderr) == ([], LINE + "\n")
    report = lgstate(project, cache, "report").stdout
    assert (
        "  unchecked node draft (pkg/graph.py:19): its state is the type variable S, so its"
        " channels are not known\n"
    ) in report


def test_fail_under_counts_what_was_not_read(project: Path) -> None:
    cache = project / "cache"
    assert lgstate(project, cache, "check", "--fail-under", "25").returncode == 0
    result = lgstate(project, cache, "check", "--fail-under", "26")
    assert (result.returncode, result.stderr) == (
        1, "lgstate: 25.0% of the graph nodes are checked, less than --fail-under 26\n"
    )
