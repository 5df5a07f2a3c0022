"""The routes of issue 22, shown at run time on real graphs with a real checkpointer.

test-data/test_discovery_routes.yml checks what the plugin reports for each route; these tests check
that the route is real in the installed LangGraph / LangChain: the values the plugin checks are in
the checkpoint an ``InMemorySaver`` keeps, and the classes it reads become channels.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import warnings
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.agents.structured_output import ToolStrategy
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import StateUpdate
from pydantic import BaseModel
from typing_extensions import NotRequired, TypedDict

from test_routes_runtime import _config, _saved_channels


def _first_start_value(graph: Any, thread: str) -> Any:
    """The ``__start__`` value of the thread's first checkpoint: the input, stored whole."""
    history = list(graph.checkpointer.list(_config(thread)))
    first = history[-1].checkpoint["channel_values"]
    return first.get("__start__")


# Graph inputs ----------------------------------------------------------------------------------


class Extra(TypedDict, total=False):
    extra: Any


def _same(state: Extra) -> Extra:
    return state


def _extra_graph() -> Any:
    builder = StateGraph(Extra)
    builder.add_node("same", _same)
    builder.add_edge(START, "same")
    return builder.compile(checkpointer=InMemorySaver())


@pytest.mark.filterwarnings("ignore:The v3 streaming protocol")
def test_stream_events_and_batch_as_completed_checkpoint_their_inputs() -> None:
    graph = _extra_graph()
    for _ in graph.stream_events({"extra": b"v3"}, _config("events"), version="v3"):
        pass
    assert _saved_channels(graph, "events")["extra"] == b"v3"
    assert _first_start_value(graph, "events") == {"extra": b"v3"}

    async def run_async() -> None:
        async for _ in graph.astream_events({"extra": b"v2"}, _config("aevents"), version="v2"):
            pass
        async for _ in graph.abatch_as_completed([{"extra": b"a"}], _config("abatch")):
            pass

    asyncio.run(run_async())
    assert _saved_channels(graph, "aevents")["extra"] == b"v2"
    assert _saved_channels(graph, "abatch")["extra"] == b"a"
    list(graph.batch_as_completed([{"extra": b"b"}], _config("batch")))
    assert _saved_channels(graph, "batch")["extra"] == b"b"
    assert _first_start_value(graph, "batch") == {"extra": b"b"}


def test_bulk_update_state_checkpoints_each_updates_values() -> None:
    graph = _extra_graph()
    graph.invoke({"extra": "first"}, _config("bulk"))
    graph.bulk_update_state(
        _config("bulk"), [[StateUpdate({"extra": (1,)}, "same")], [StateUpdate({"extra": b"x"}, "same")]]
    )
    assert _saved_channels(graph, "bulk")["extra"] == b"x"
    values = [c.checkpoint["channel_values"].get("extra") for c in graph.checkpointer.list(_config("bulk"))]
    assert [1] in values  # the tuple was checkpointed, and comes back as a list

    async def run_async() -> None:
        await graph.abulk_update_state(_config("bulk"), [[StateUpdate({"extra": {1}}, "same")]])

    asyncio.run(run_async())
    assert _saved_channels(graph, "bulk")["extra"] == {1}


# LangChain agents: middleware lists built in code ----------------------------------------------


class AState(AgentState):
    a_note: NotRequired[str]


class BState(AgentState):
    b_note: NotRequired[str]


class CState(AgentState):
    c_note: NotRequired[str]


class DState(AgentState):
    d_note: NotRequired[str]


class A(AgentMiddleware):
    state_schema = AState


class B(AgentMiddleware):
    state_schema = BState

    def before_model(self, state: AgentState, runtime: Runtime[None]) -> dict[str, Any] | None:  # type: ignore[override]
        return {"b_note": "from B", "typo": "dropped"}


class C(AgentMiddleware):
    state_schema = CState


class D(AgentMiddleware):
    state_schema = DState

    def after_model(self, state: AgentState, runtime: Runtime[None]) -> dict[str, Any] | None:  # type: ignore[override]
        return {"d_note": "from D"}


def _base_middleware() -> list[AgentMiddleware[Any, Any]]:
    found: list[AgentMiddleware[Any, Any]] = [A()]
    found.append(B())
    return found


def _chat_model(*responses: AIMessage) -> Any:
    return FakeMessagesListChatModel(responses=list(responses))


def test_middleware_list_built_in_code_gives_every_schema_and_hook() -> None:
    """The shapes of test_discovery_routes.yml's middleware_list_built_in_code: a helper's list,
    ``extend``, ``[*base, X()]`` and ``base + [X()]`` all reach create_agent, whose graph gets each
    middleware's state schema as channels and each hook as a node."""
    middleware = _base_middleware()
    middleware.extend([C()])
    agent = create_agent(
        _chat_model(AIMessage(content="hello")),
        middleware=[*middleware, D()],
        checkpointer=InMemorySaver(),
    )
    assert {"a_note", "b_note", "c_note", "d_note"} <= set(agent.builder.channels)
    assert "typo" not in agent.builder.channels
    assert {"B.before_model", "D.after_model"} <= set(agent.builder.nodes)
    agent.invoke({"messages": [HumanMessage("hi")]}, _config("middleware"))
    saved = _saved_channels(agent, "middleware")
    assert saved["b_note"] == "from B" and saved["d_note"] == "from D"
    assert "typo" not in saved  # dropped silently: lgstate-unknown-key

    base: list[AgentMiddleware[Any, Any]] = [C()]
    other = create_agent(_chat_model(AIMessage(content="x")), middleware=base + [D()])
    assert {"c_note", "d_note"} <= set(other.builder.channels)


# LangChain agents: structured responses --------------------------------------------------------


class Answer(BaseModel):
    text: str


class _ToolCallingFake(FakeMessagesListChatModel):
    """A fake chat model that accepts the structured-output tool (ToolStrategy binds it)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


def _structured_agent(response_format: Any, name: str) -> Any:
    call = {"name": name, "args": {"text": "hi"}, "id": "call-1"}
    model = _ToolCallingFake(responses=[AIMessage(content="", tool_calls=[call])])
    return create_agent(model, response_format=response_format, checkpointer=InMemorySaver())


def test_structured_response_is_checkpointed_and_a_local_model_comes_back_as_a_dict() -> None:
    agent = _structured_agent(ToolStrategy(Answer), "Answer")
    agent.invoke({"messages": [HumanMessage("q")]}, _config("top"))
    saved = agent.get_state(_config("top")).values["structured_response"]
    assert saved == Answer(text="hi")
    with pytest.raises(TypeError):
        json.dumps(saved)  # the json profile: the checkpoint cannot be written

    class Local(BaseModel):
        text: str

    local = _structured_agent(Local, "Local")
    local.invoke({"messages": [HumanMessage("q")]}, _config("local"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert local.get_state(_config("local")).values["structured_response"] == {"text": "hi"}


STRICT_AGENT = textwrap.dedent(
    """
    from typing import Any
    from pydantic import BaseModel
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    class Answer(BaseModel):
        text: str

    class Fake(FakeMessagesListChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    call = {"name": "Answer", "args": {"text": "hi"}, "id": "call-1"}
    model = Fake(responses=[AIMessage(content="", tool_calls=[call])])
    agent = create_agent(model, response_format=Answer, checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "strict"}}
    agent.invoke({"messages": [HumanMessage("q")]}, config)
    print(repr(agent.get_state(config).values["structured_response"]))
    """
)


def test_strict_msgpack_never_derives_the_response_model() -> None:
    env = {**os.environ, "LANGGRAPH_STRICT_MSGPACK": "true", "PYTHONWARNINGS": "ignore"}
    shown = subprocess.run(
        [sys.executable, "-c", STRICT_AGENT], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert shown == "{'text': 'hi'}"


# Chained builders, bare factories, a class picked out of a mapping -----------------------------


class Question(TypedDict):
    question: str


class Draft(TypedDict):
    draft: str


class Verdict(TypedDict):
    answer: str


def _write(state: Question) -> Draft:
    return {"draft": f"on {state['question']}"}


def _review(state: Draft) -> Verdict:
    return {"answer": "kept?"}


def test_a_chained_builder_is_one_graph() -> None:
    """add_node returns the builder: a chain's nodes add their classes to one graph's channels, and a
    key no class declares is dropped (test_discovery_routes.yml, chained_builder)."""
    graph = (
        StateGraph(Question)
        .add_node("write", _write)
        .add_node("review", _review)
        .add_edge(START, "write")
        .add_edge("write", "review")
        .compile(checkpointer=InMemorySaver())
    )
    assert "draft" in graph.builder.channels and "answer" not in graph.builder.channels
    graph.invoke({"question": "tides"}, _config("chain"))
    saved = _saved_channels(graph, "chain")
    assert saved["draft"] == "on tides" and "answer" not in saved


def _bare_factory() -> Any:  # stands for ``-> CompiledStateGraph`` without type arguments
    built = StateGraph(Question)
    built.add_node("write", _write)
    built.add_edge(START, "write")
    return built.compile(checkpointer=InMemorySaver())


def test_a_bare_factorys_state_is_its_bodys_state_graph_class() -> None:
    graph = _bare_factory()
    assert graph.builder.state_schema is Question
    graph.invoke(Question(question="q"), _config("bare"))
    assert _saved_channels(graph, "bare")["question"] == "q"


class Support(TypedDict):
    opened: str


class Sales(TypedDict):
    tags: list[str]


SCHEMAS: dict[str, Any] = {"support": Support, "sales": Sales}


def test_a_state_class_picked_out_of_a_mapping_is_the_graphs_state() -> None:
    for kind, key in (("support", "opened"), ("sales", "tags")):
        builder = StateGraph(SCHEMAS[kind])
        assert key in builder.channels


# Strict msgpack: the whole graph's allowlist at interrupt() and Send ------------------------------

STRICT_INTERRUPT = textwrap.dedent(
    """
    import sys
    from enum import Enum
    from typing import Any
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import START, StateGraph
    from langgraph.types import interrupt
    from typing_extensions import NotRequired, TypedDict

    class Mode(Enum):
        FAST = "fast"

    class State(TypedDict):
        q: str

    class Out(TypedDict):
        mode: NotRequired[Mode]

    class Ctx(TypedDict):
        mode: Mode

    class Other(TypedDict):
        mode: NotRequired[Mode]

    def ask(state: State) -> dict[str, Any]:
        interrupt({"mode": Mode.FAST})
        return {}

    def other(state: Other) -> dict[str, Any]:
        return {}

    variant = sys.argv[1]
    if variant == "output":
        builder = StateGraph(State, output_schema=Out)
    elif variant == "context":
        builder = StateGraph(State, context_schema=Ctx)
    else:
        builder = StateGraph(State)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    if variant == "other-node":
        builder.add_node("other", other)
    graph = builder.compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t"}}
    graph.invoke({"q": "x"}, config)
    print(repr(graph.get_state(config).tasks[0].interrupts[0].value))
    """
)


def test_strict_msgpack_derives_from_every_class_of_the_graph_at_interrupt() -> None:
    """An interrupt's Enum comes back as itself when only the output schema, the context schema or
    another node's input schema declares it (test_discovery_routes.yml,
    strict_allowlist_at_interrupt_and_send_is_the_whole_graphs), and as its value otherwise."""
    env = {**os.environ, "LANGGRAPH_STRICT_MSGPACK": "true", "PYTHONWARNINGS": "ignore"}
    shown = {
        variant: subprocess.run(
            [sys.executable, "-c", STRICT_INTERRUPT, variant],
            env=env, capture_output=True, text=True, check=True,
        ).stdout.strip().splitlines()[-1]
        for variant in ("output", "context", "other-node", "none")
    }
    derived = "{'mode': <Mode.FAST: 'fast'>}"
    assert shown == {
        "output": derived, "context": derived, "other-node": derived, "none": "{'mode': 'fast'}"
    }


STRICT_SEND = textwrap.dedent(
    """
    import sys
    from enum import Enum
    from typing import Any
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import START, StateGraph
    from langgraph.types import Send
    from typing_extensions import NotRequired, TypedDict

    class Mode(Enum):
        FAST = "fast"

    class State(TypedDict):
        q: str

    class Other(TypedDict):
        mode: NotRequired[Mode]

    def fan(state: State) -> list[Send]:
        return [Send("other", {"mode": Mode.FAST})]

    def reader(state: Other) -> dict[str, Any]:
        return {}

    def other(state: Any) -> dict[str, Any]:
        print(repr(state))
        return {}

    builder = StateGraph(State)
    builder.add_node("other", other)
    if sys.argv[1] == "other-node":
        builder.add_node("reader", reader)
    builder.add_conditional_edges(START, fan)
    graph = builder.compile(checkpointer=InMemorySaver(), interrupt_before=["other"])
    config: Any = {"configurable": {"thread_id": "t"}}
    graph.invoke({"q": "x"}, config)
    graph.invoke(None, config)
    """
)


def test_strict_msgpack_derives_from_another_nodes_class_at_send() -> None:
    """A Send's arg, checkpointed before its node runs, comes back with its Enum when another node's
    first parameter declares it, and as the member's value otherwise."""
    env = {**os.environ, "LANGGRAPH_STRICT_MSGPACK": "true", "PYTHONWARNINGS": "ignore"}
    shown = {
        variant: subprocess.run(
            [sys.executable, "-c", STRICT_SEND, variant],
            env=env, capture_output=True, text=True, check=True,
        ).stdout.strip().splitlines()[-1]
        for variant in ("other-node", "none")
    }
    assert shown == {"other-node": "{'mode': <Mode.FAST: 'fast'>}", "none": "{'mode': 'fast'}"}
