"""``lgstate report`` on a fixture application (tests/agent_lists/) whose agents get middleware
lists built in code and whose graph is a chained builder returned by a factory declared without type
arguments: every graph, node and middleware hook is listed, and the list built in another module is
read from what that module recorded of it (an empty list: no hooks). The same agents, built at run time with a fake chat model, have exactly the
hook nodes the report lists."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage

import library_caches
from test_cli import lgstate

FIXTURE = Path(__file__).parent / "agent_lists"
CONFIG = """\
[mypy]
plugins = mypy_lgstate.plugin

[mypy_lgstate]
profile = msgpack
"""
AGENTS = "langchain.agents.middleware.types"
REPORT = f"""\
graph chained_graph.State (chained_graph.py:26)
  state/input/output schema: chained_graph.State (chained_graph.py)
  channels: question
  checked   node review (chained_graph.py:26)
  checked   node write (chained_graph.py:26)
  nodes checked 2/2

graph {AGENTS}.AgentState (support_agents.py:60)
  state schema: {AGENTS}.AgentState
  input schema: {AGENTS}.InputAgentState
  output schema: {AGENTS}.OutputAgentState
  middleware schema: support_agents.NoteState (support_agents.py)
  middleware schema: support_agents.BudgetState (support_agents.py)
  channels: jump_to, messages, notes, spent, structured_response
  body      node Budget.after_agent (support_agents.py:60): read from its body
  checked   node Budget.before_model (support_agents.py:60)
  checked   node Notes.after_model (support_agents.py:60)
  nodes checked 3/3

graph {AGENTS}.AgentState (support_agents.py:64)
  state schema: {AGENTS}.AgentState
  input schema: {AGENTS}.InputAgentState
  output schema: {AGENTS}.OutputAgentState
  channels: jump_to, messages, structured_response
  no middleware hooks: the agent's own nodes are LangChain's
  nodes checked 0/0

write sites
  invoke.input (chained_graph.py:30) (graph chained_graph.State)

3 graphs, nodes checked 5/5 (from bodies 1, unchecked 0, opaque 0), 1 write site, 0 findings
"""


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cache = tmp_path_factory.mktemp("mypy-cache")
    library_caches.seed(cache, CONFIG, lgstate=True)
    return cache


def test_report_lists_every_graph_node_and_hook(tmp_path: Path, cache_dir: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(FIXTURE, project)
    (project / "mypy.ini").write_text(CONFIG)
    result = lgstate(project, cache_dir, "report")
    assert result.stdout == REPORT
    assert lgstate(project, cache_dir, "check").returncode == 0  # the fixture is a correct program


def test_the_agents_have_the_hooks_the_report_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(FIXTURE))
    import support_agents

    model: Any = FakeMessagesListChatModel(responses=[AIMessage(content="hi")])
    hooks = {name for name in support_agents.build_support(model).builder.nodes if "." in name}
    assert hooks == {"Budget.after_agent", "Budget.before_model", "Notes.after_model"}
    assert {"notes", "spent", "structured_response"} <= set(
        support_agents.build_support(model).builder.channels
    )
    shared = support_agents.build_shared(model).builder.nodes
    assert not {name for name in shared if "." in name}
    sys.modules.pop("support_agents", None)
    sys.modules.pop("shared_middleware", None)


DEPRECATED = """\
from typing import TypedDict

from langgraph.graph import StateGraph


class State(TypedDict):
    question: str
    answer: str


class In(TypedDict):
    question: str


class Out(TypedDict):
    answer: str


def respond(state: State) -> Out:
    return {"answer": ""}


builder = StateGraph(State, input=In, output=Out)  # type: ignore[call-arg]
builder.add_node("respond", respond)
"""


def test_report_labels_the_deprecated_input_and_output_schemas(
    tmp_path: Path, cache_dir: Path
) -> None:
    """``input=`` / ``output=`` are the graph's input and output schemas at run time (LangGraph
    still reads them), though the graph's type names the state for both."""
    (tmp_path / "deprecated.py").write_text(DEPRECATED)
    (tmp_path / "mypy.ini").write_text(CONFIG)
    result = lgstate(tmp_path, cache_dir, "report")
    assert result.stdout.splitlines()[:4] == [
        "graph deprecated.State (deprecated.py:23)",
        "  state schema: deprecated.State (deprecated.py)",
        "  input schema: deprecated.In (deprecated.py)",
        "  output schema: deprecated.Out (deprecated.py)",
    ]


def test_deprecated_input_and_output_are_the_graphs_schemas() -> None:
    import warnings

    from langgraph.graph import StateGraph
    from typing_extensions import TypedDict

    class State(TypedDict):
        question: str
        answer: str

    class In(TypedDict):
        question: str

    class Out(TypedDict):
        answer: str

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        builder = StateGraph(State, input=In, output=Out)  # type: ignore[call-arg]
    assert builder.input_schema is In and builder.output_schema is Out
