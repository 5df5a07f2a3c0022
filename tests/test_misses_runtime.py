"""Run-time facts behind the misses of issue 41 (test-data/test_misses.yml), each on a real compiled
graph with a real checkpointer, read back with ``get_state()`` (the ``json.dumps`` serde for the json
profile).
"""

from __future__ import annotations

import operator
from datetime import date
from typing import Annotated, Any, Literal, TypedDict, Union

import httpx
import pydantic
import pytest
from langchain.agents import create_agent
from langchain.agents.structured_output import ToolStrategy
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage
from langgraph.channels import UntrackedValue
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, Send

from json_serde import JsonSerde
from write_then_read import write_then_read

CONFIG: Any = {"configurable": {"thread_id": "t"}}


class State(TypedDict, total=False):
    title: str
    mode: str
    phase: Literal["draft", "review"]
    client: Annotated[httpx.Client, UntrackedValue]
    when: str
    results: Annotated[list[str], operator.add]


def test_a_str_computed_at_run_time_is_stored_in_a_literal_channel_unchecked() -> None:
    _, _, stored = write_then_read(State, {"phase": "Intro: x".split(":")[0].lower()}, {})
    assert stored["phase"] == "intro"  # no member of Literal["draft", "review"]


class Job(TypedDict):
    mode: Literal["fast", "slow"]


def test_a_send_payload_reaches_its_node_as_sent() -> None:
    seen: list[str] = []

    def work(state: Job) -> dict[str, Any]:
        seen.append(state["mode"])
        return {}

    builder = StateGraph(State)
    builder.add_node("work", work)
    builder.add_conditional_edges(START, lambda state: [Send("work", {"mode": state["mode"]})])
    builder.add_edge("work", END)
    builder.compile(checkpointer=InMemorySaver()).invoke({"mode": "turbo"}, CONFIG)
    assert seen == ["turbo"]


class Support(TypedDict):
    title: str


def _support_graph(saver: Any, input_schema: Any = None) -> Any:
    sub = StateGraph(Support)
    sub.add_node("answer", lambda state: {})
    sub.add_edge(START, "answer")
    builder = StateGraph(State)
    builder.add_node("connect", lambda state: {"client": httpx.Client()})
    if input_schema is None:
        builder.add_node("support", sub.compile())
    else:
        builder.add_node("support", sub.compile(), input_schema=input_schema)
    builder.add_edge(START, "connect")
    builder.add_edge("connect", "support")
    return builder.compile(checkpointer=saver)


class Public(TypedDict):
    title: str


@pytest.mark.parametrize(
    ("serde", "error"),
    [(None, "Type is not msgpack serializable: Client"), (JsonSerde(), "not JSON serializable")],
    ids=["msgpack", "json"],
)
def test_an_untracked_client_reaches_the_checkpoint_of_a_subgraph_given_the_whole_state(
    serde: Any, error: str
) -> None:
    saver = InMemorySaver(serde=serde) if serde else InMemorySaver()
    with pytest.raises(TypeError, match=error):
        _support_graph(saver).invoke({"title": "t"}, CONFIG)
    fine = InMemorySaver(serde=serde) if serde else InMemorySaver()
    assert _support_graph(fine, Public).invoke({"title": "t"}, CONFIG)["title"] == "t"


def test_command_update_pairs_in_a_local_list_store_the_values() -> None:
    pairs = [("when", date(2024, 1, 2))]
    with pytest.raises(TypeError, match="not JSON serializable"):
        write_then_read(State, Command(update=pairs), {}, JsonSerde())
    pairs_ok = [("when", date(2024, 1, 2).isoformat())]
    assert write_then_read(State, Command(update=pairs_ok), {}, JsonSerde())[2]["when"] == "2024-01-02"


class Chunk(TypedDict):
    text: str
    size: int


def test_a_send_appended_in_a_path_function_hands_its_payload_as_it_is() -> None:
    seen: list[Any] = []

    def split(state: State) -> list[Send]:
        sends = []
        if state["title"]:
            sends.append(Send("count", {"text": state["title"], "size": "large"}))
        return sends

    def count(state: Chunk) -> dict[str, Any]:
        seen.append(state["size"])
        return {}

    builder = StateGraph(State)
    builder.add_node("count", count)
    builder.add_conditional_edges(START, split)
    builder.add_edge("count", END)
    builder.compile(checkpointer=InMemorySaver()).invoke({"title": "t"}, CONFIG)
    assert seen == ["large"]


class Refund(pydantic.BaseModel):
    amount: int


class Escalate(pydantic.BaseModel):
    reason: str


class _ToolCallingFake(FakeMessagesListChatModel):
    """A fake chat model that accepts the structured-output tools (ToolStrategy binds them)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


def test_a_tool_strategy_union_under_strict_msgpack_comes_back_as_a_dict() -> None:
    call = {"name": "Refund", "args": {"amount": 5}, "id": "1"}
    model = _ToolCallingFake(responses=[AIMessage(content="", tool_calls=[call])])
    serde = JsonPlusSerializer(allowed_msgpack_modules=None)  # strict, with nothing allowed
    agent = create_agent(
        model, response_format=ToolStrategy(Union[Refund, Escalate]),  # noqa: UP007
        checkpointer=InMemorySaver(serde=serde),
    )
    agent.invoke({"messages": [("user", "refund me")]}, CONFIG)
    stored = agent.get_state(CONFIG).values["structured_response"]
    assert stored == {"amount": 5} and not isinstance(stored, Refund)


class Query(pydantic.BaseModel):
    query: str
    rationale: str


class Research(TypedDict):
    search_query: str


class ResearchModel(pydantic.BaseModel):
    search_query: str


def test_a_structured_output_written_where_its_field_is_declared() -> None:
    """What ``with_structured_output(Query)`` returns is a Query, typed ``dict | BaseModel``; written
    to a str channel it is stored as it is, and the json serializer raises on it."""
    call = {"name": "Query", "args": {"query": "q", "rationale": "r"}, "id": "1"}
    model = _ToolCallingFake(responses=[AIMessage(content="", tool_calls=[call])])
    result = model.with_structured_output(Query).invoke("topic")
    assert isinstance(result, Query)
    seen, _, stored = write_then_read(Research, {"search_query": result}, {})
    assert isinstance(seen["search_query"], Query) and isinstance(stored["search_query"], Query)
    with pytest.raises(TypeError, match="not JSON serializable"):
        write_then_read(Research, {"search_query": result}, {}, JsonSerde())
    with pytest.raises(pydantic.ValidationError):
        write_then_read(ResearchModel, {"search_query": result}, {"search_query": "s"}, JsonSerde())
