"""``lgstate report`` on a fixture application laid out as real ones are (tests/reach_app/): nodes in
``app/nodes/``, registered by ``app/graph.py`` through a tracing wrapper typed ``Any``, one returning
``await developer_deploy(state)`` whose update a method two calls away builds; agents whose middleware
lists functions of other modules build (``-> list[AgentMiddleware]``, and ``-> list[Any]`` through a
normalizing wrapper), and one whose list no summary tells (counted unknown: the coverage line and
``--fail-under`` say so); a subgraph built by an unannotated function. Every node is listed, and
read. Built at run time, the same graphs have exactly the nodes the report lists."""

from __future__ import annotations

import asyncio
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage

import library_caches
from test_cli import lgstate

FIXTURE = Path(__file__).parent / "reach_app"
CONFIG = """\
[mypy]
plugins = mypy_lgstate.plugin

[mypy_lgstate]
profile = msgpack
"""
AGENTS = "langchain.agents.middleware.types"
REPORT = f"""\
graph app.state.ResearchState (app/enrich.py:14)
  state/input/output schema: app.state.ResearchState (app/state.py)
  channels: deployed, enriched, messages, question, sources, summary
  body      node enrich (app/enrich.py:15): read from its body
  nodes checked 1/1

graph app.state.ResearchState (app/graph.py:18)
  state/input/output schema: app.state.ResearchState (app/state.py)
  channels: deployed, enriched, messages, question, sources, summary
  body      node search (app/graph.py:19): read from its body, in app/tracing.py, through search() in app/nodes/research.py (registered through traced_node(), whose result is typed Any)
  body      node summarize (app/graph.py:20): read from its body, in app/nodes/research.py
  body      node deploy (app/graph.py:21): read from its body, in app/nodes/research.py, through developer_deploy() in app/nodes/deploy.py, DeveloperAgent.invoke() in app/nodes/deploy.py
  nodes checked 3/3

graph {AGENTS}.AgentState (app/graph.py:30)
  state schema: {AGENTS}.AgentState
  input schema: {AGENTS}.InputAgentState
  output schema: {AGENTS}.OutputAgentState
  middleware schema: app.middleware.AuditState (app/middleware.py)
  channels: audited, jump_to, messages, structured_response
  body      node Audit.after_model (app/graph.py:30): read from its body, in app/middleware.py
  nodes checked 1/1

graph {AGENTS}.AgentState (app/graph.py:35)
  state schema: {AGENTS}.AgentState
  input schema: {AGENTS}.InputAgentState
  output schema: {AGENTS}.OutputAgentState
  middleware schema: app.middleware.AuditState (app/middleware.py)
  channels: audited, jump_to, messages, structured_response
  body      node Audit.after_model (app/graph.py:35): read from its body, in app/middleware.py
  nodes checked 1/1

graph {AGENTS}.AgentState (app/graph.py:39)
  state schema: {AGENTS}.AgentState
  input schema: {AGENTS}.InputAgentState
  output schema: {AGENTS}.OutputAgentState
  channels: jump_to, messages, structured_response
  unresolved: the middleware list is built by an expression not followed
  nodes checked 0/0

5 graphs, nodes checked 6/7 (from bodies 6, unchecked 1, opaque 0), 0 write sites, 0 findings
"""
# The plugin agent's list is a plugin object's attribute: one unknown, so 6 of 7 (85.7%).
COVERAGE = "nodes checked 6/7 (from bodies 6); not checked: 1 agent whose middleware is not known; see lgstate report"


def test_report_lists_and_reads_every_node(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(FIXTURE, project)
    (project / "mypy.ini").write_text(CONFIG)
    cache = tmp_path / "cache"
    library_caches.seed(cache, CONFIG, lgstate=True)
    assert lgstate(project, cache, "report").stdout == REPORT
    # The fixture is a correct program; the subgraph of the unannotated build_enrich() is read
    # because lgstate runs mypy with check_untyped_defs.
    checked = lgstate(project, cache, "check", "--fail-under", "85")
    assert (checked.returncode, checked.stdout.splitlines()[-1]) == (0, COVERAGE)
    checked = lgstate(project, cache, "check", "--fail-under", "86")
    assert (checked.returncode, checked.stderr) == (
        1, "lgstate: 85.7% of the graph nodes are checked, less than --fail-under 86\n"
    )


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.syspath_prepend(str(FIXTURE))
    import app.enrich
    import app.graph

    yield app
    for name in [name for name in sys.modules if name == "app" or name.startswith("app.")]:
        del sys.modules[name]


def test_the_graphs_have_the_nodes_the_report_lists(app: Any) -> None:
    assert set(app.graph.build_graph().builder.nodes) == {"search", "summarize", "deploy"}
    model: Any = FakeMessagesListChatModel(responses=[AIMessage(content="hi")])
    for agent in (app.graph.build_agent(model), app.graph.build_research_agent(model, True)):
        hooks = {name for name in agent.builder.nodes if "." in name}
        assert hooks == {"Audit.after_model"}
    assert set(app.enrich.build_enrich().builder.nodes) == {"enrich"}
    final = asyncio.run(
        app.graph.build_graph().ainvoke({"question": " why? ", "sources": [], "messages": []})
    )
    assert final["sources"] == ["https://example.com/?q=why?"]
    assert final["summary"] == "https://example.com/?q=why?"
    assert final["deployed"] == "v2"  # what DeveloperAgent.invoke() returns, two calls away
