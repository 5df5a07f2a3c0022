"""Each route by which the plugin finds graph state, shown at run time on a real graph.

test-data/test_routes.yml checks what the plugin reports for each route; these tests check that the
route is real in the installed LangGraph / LangChain: the class's keys become channels of the graph,
and values written through them are in the checkpoint an ``InMemorySaver`` keeps. If a release
stops inferring a node's input schema, or moves a middleware's state elsewhere, a test here fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings
from typing import Any, Literal, TypedDict

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, AgentState, before_model
from langchain.agents.middleware.types import PrivateStateAttr
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.func import entrypoint, task
from langgraph.graph import END, START, StateGraph
from langgraph.typing import StateT
from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt
from typing_extensions import Annotated, NotRequired


def _config(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


def _saved_channels(graph: Any, thread: str) -> dict[str, Any]:
    """The channel values of the thread's latest checkpoint, as the saver stored them."""
    saved = graph.checkpointer.get_tuple(_config(thread))
    assert saved is not None
    values: dict[str, Any] = saved.checkpoint["channel_values"]
    return values


# Nodes and path functions ---------------------------------------------------------------------


class Question(TypedDict):
    question: str


class Draft(TypedDict):
    draft: str
    critique: str


def write(state: Question) -> Draft:
    return {"draft": f"about {state['question']}", "critique": "short"}


def grade(state: Draft) -> Literal["__end__"]:
    return "__end__"


def test_path_function_first_parameter_class_adds_channels() -> None:
    builder = StateGraph(Question)
    builder.add_node("write", write)
    builder.add_edge(START, "write")
    assert "draft" not in builder.channels
    builder.add_conditional_edges("write", grade)
    assert {"draft", "critique"} <= set(builder.channels)

    graph = builder.compile(checkpointer=InMemorySaver())
    graph.invoke({"question": "tides"}, _config("path"))
    saved = _saved_channels(graph, "path")
    assert saved["draft"] == "about tides" and saved["critique"] == "short"


# LANGGRAPH_STRICT_MSGPACK is read when langgraph is imported: this graph runs in a subprocess.
STRICT_GRAPH = textwrap.dedent(
    """
    import sys
    from enum import Enum
    from typing import Any, Literal, TypedDict

    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import START, StateGraph
    from typing_extensions import NotRequired


    class Mode(Enum):
        FAST = "fast"


    class State(TypedDict):
        question: str
        mode: NotRequired[Any]


    class Routing(TypedDict):
        mode: Mode


    def choose(state: State) -> dict[str, Any]:
        return {"mode": Mode.FAST}


    def route(state: Routing) -> Literal["__end__"]:
        return "__end__"


    builder = StateGraph(State)
    builder.add_node("choose", choose)
    builder.add_edge(START, "choose")
    if sys.argv[1] == "with-path":
        builder.add_conditional_edges("choose", route)
    graph = builder.compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "strict"}}
    graph.invoke({"question": "q"}, config)
    print(repr(graph.checkpointer.get_tuple(config).checkpoint["channel_values"]["mode"]))
    """
)


def test_strict_allowlist_derives_from_a_path_functions_class() -> None:
    """compile() derives the strict allowlist from path functions' classes too: the plugin's
    allowlist for the graph's nodes includes them (test_routes.yml, strict case)."""
    env = {**os.environ, "LANGGRAPH_STRICT_MSGPACK": "true", "PYTHONWARNINGS": "ignore"}
    saved = {
        variant: subprocess.run(
            [sys.executable, "-c", STRICT_GRAPH, variant],
            env=env, capture_output=True, text=True, check=True,
        ).stdout.strip()
        for variant in ("with-path", "without-path")
    }
    assert saved == {"with-path": "<Mode.FAST: 'fast'>", "without-path": "'fast'"}


class Scratch(TypedDict):
    tries: list[str]


class Counter(TypedDict):
    seen: list[int]


class Planner:
    def route(self, state: Scratch) -> Question:
        return {"question": "planned"}


class Judge:
    def __call__(self, state: Counter) -> Scratch:
        return {"tries": ["judged"]}


def test_node_first_parameter_classes_add_channels() -> None:
    builder = StateGraph(Question)
    builder.add_node("plan", Planner().route)
    builder.add_node("judge", Judge())
    assert {"tries", "seen"} <= set(builder.channels)
    before = set(builder.channels)
    # mypy infers a lambda's parameter type from the context; at run time it has no annotations.
    builder.add_node("guess", lambda state: {"question": "guessed"})
    assert set(builder.channels) == before

    builder.add_edge(START, "plan")
    builder.add_edge("plan", "judge")
    builder.add_edge("judge", "guess")
    graph = builder.compile(checkpointer=InMemorySaver())
    graph.invoke({"question": "q"}, _config("kinds"))
    assert _saved_channels(graph, "kinds")["tries"] == ["judged"]


class Text(TypedDict):
    text: str


class Extra(TypedDict):
    text: str
    stamped: str


def stamp(state: Extra) -> Extra:
    return {"text": state["text"], "stamped": "2026-01-01T00:00:00"}


def test_add_sequence_from_a_variable_adds_channels() -> None:
    steps: list[Any] = [("stamp", stamp)]
    builder = StateGraph(Text)
    builder.add_sequence(steps)
    assert "stamped" in builder.channels
    builder.add_edge(START, "stamp")
    graph = builder.compile(checkpointer=InMemorySaver())
    graph.invoke({"text": "t"}, _config("sequence"))
    assert _saved_channels(graph, "sequence")["stamped"] == "2026-01-01T00:00:00"


# StateGraph subclasses and factories ----------------------------------------------------------


class TracedGraph(StateGraph[StateT]):
    pass


def create_graph(state: type[StateT]) -> StateGraph[StateT]:
    return StateGraph(state)


class Analysis(TypedDict):
    findings: list[str]


def analyse(state: Analysis) -> Analysis:
    return {"findings": ["one"]}


def test_subclass_and_factory_declare_the_graph_state() -> None:
    for builder in (TracedGraph(Analysis), create_graph(Analysis)):
        assert builder.state_schema is Analysis
        builder.add_node("analyse", analyse)
        builder.add_edge(START, "analyse")
        builder.add_edge("analyse", END)
        graph = builder.compile(checkpointer=InMemorySaver())
        graph.invoke({"findings": []}, _config("declared"))
        assert _saved_channels(graph, "declared")["findings"] == ["one"]


# Functional API --------------------------------------------------------------------------------

replayed_as: list[type] = []


@task
def pair(n: int) -> tuple[int, int]:
    return (n, n)


@entrypoint(checkpointer=InMemorySaver())
def workflow(n: int, *, previous: Any = None) -> entrypoint.final[str, dict[str, int]]:
    replayed_as.append(type(pair(n).result()))
    interrupt("continue?")
    return entrypoint.final(value="done", save={"n": n})


def test_functional_api_checkpoints_input_task_result_and_saved_value() -> None:
    config = _config("functional")
    workflow.invoke(3, config)
    assert workflow.invoke(Command(resume=True), config) == "done"
    # The task ran once; on resume its result came back from the checkpoint, a tuple as a list.
    assert replayed_as == [tuple, list]
    saver = workflow.checkpointer
    assert isinstance(saver, InMemorySaver)
    first = list(saver.list(config))[-1]
    assert first.checkpoint["channel_values"]["__start__"] == 3  # the entrypoint's input
    writes = {channel: value for _, channel, value in first.pending_writes or []}
    assert writes["__return__"] == [3, 3]  # the task's result
    assert _saved_channels(workflow, "functional")["__previous__"] == {"n": 3}  # final's save


# LangChain agents ------------------------------------------------------------------------------


class SupportState(AgentState):
    customer_id: NotRequired[str]


class BudgetState(AgentState):
    spent: NotRequired[Annotated[list[str], PrivateStateAttr]]


class Budget(AgentMiddleware):
    state_schema = BudgetState

    def before_model(self, state: AgentState, runtime: Runtime[None]) -> dict[str, Any] | None:
        return {"spent": ["one call"]}


class AuditState(AgentState):
    audited: NotRequired[str]


@before_model(state_schema=AuditState)
def audit(state: AuditState, runtime: Runtime[None]) -> dict[str, Any] | None:
    return {"audited": "yes"}


class Ignored(AgentState):
    never: str


@before_model
def log(state: Ignored, runtime: Runtime[None]) -> None:
    return None


def test_agent_state_schemas_and_middleware_hooks() -> None:
    model = FakeMessagesListChatModel(responses=[AIMessage(content="hello")])
    agent = create_agent(
        model,
        middleware=[Budget(), audit, log],  # type: ignore[list-item]
        state_schema=SupportState,
        checkpointer=InMemorySaver(),
    )
    channels = set(agent.builder.channels)
    assert {"messages", "customer_id", "spent", "audited"} <= channels
    # A generic parameter alone (log's Ignored) adds nothing.
    assert "never" not in channels

    agent.invoke({"messages": [HumanMessage("hi")]}, _config("agent"))
    saved = _saved_channels(agent, "agent")
    # A private field is left out of the agent's output, but it is checkpointed.
    assert saved["spent"] == ["one call"] and saved["audited"] == "yes"


def test_create_react_agent_state_schema() -> None:
    from langgraph.prebuilt import create_react_agent
    from langgraph.prebuilt.chat_agent_executor import AgentState as ReactState

    class DueState(ReactState):
        due: str

    model = FakeMessagesListChatModel(responses=[AIMessage(content="hello")])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated in favour of create_agent
        agent = create_react_agent(model, tools=[], state_schema=DueState)
    assert "due" in agent.builder.channels
