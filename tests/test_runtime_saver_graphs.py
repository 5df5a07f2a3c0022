"""``CheckedSaver`` on graphs that pass values on: message tuples that ``add_messages`` turns into
messages, values that cross subgraph boundaries (blamed on the task that wrote them), and what a
strict serializer does not rebuild when a checkpoint is loaded. Each case runs the real graph with
and without the wrapper: the checker fails exactly where LangGraph loses or refuses a value."""

from __future__ import annotations

import re
import sqlite3
import textwrap
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, convert_to_messages
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict

from mypy_lgstate.runtime import CheckedSaver, CheckpointValueError
from mypy_lgstate.core.rules import MESSAGE_ROLES

pytest_plugins = ["pytester"]

_THREAD: Any = {"configurable": {"thread_id": "t"}}
_PROFILES = ("json", "msgpack")


class Chat(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    pairs: list[tuple[str, str]]  # no reducer: a tuple is stored as it is written
    client: Any
    answer: str


def _shown(messages: list[Any]) -> list[tuple[str, Any]]:
    return [(type(message).__name__, message.content) for message in messages]


# Message tuples ------------------------------------------------------------------------------------


def test_the_roles_are_langchains() -> None:
    # The roles LangChain names when it meets another one (no graph stores such a tuple: the
    # reducer raises).
    with pytest.raises(ValueError, match="Unexpected message type: 'robot'") as raised:
        convert_to_messages([("robot", "x")])
    named = re.search(r"Use one of (.*)\.", str(raised.value))
    assert named is not None
    assert set(re.findall(r"'(\w+)'", named.group(1))) == MESSAGE_ROLES


def _chat_graph(saver: Any, written: Any) -> Any:
    """``reply`` writes ``written`` to ``messages`` while ``ask``, in the same step, interrupts: a
    resume replays ``reply``'s write from the checkpoint instead of running it again."""

    def reply(state: Chat) -> dict[str, Any]:
        return {"messages": written}

    def ask(state: Chat) -> dict[str, Any]:
        return {"answer": interrupt("ok?")}

    builder = StateGraph(Chat)
    builder.add_node("reply", reply)
    builder.add_node("ask", ask)
    builder.add_edge(START, "reply")
    builder.add_edge(START, "ask")
    return builder.compile(checkpointer=saver)


@pytest.mark.parametrize("profile", _PROFILES)
def test_message_tuples_in_a_list_are_stored_as_messages(profile: str) -> None:
    graph = _chat_graph(CheckedSaver(InMemorySaver(), profile=profile), [("ai", "hello")])
    graph.invoke({"messages": [("user", "hi")]}, _THREAD)
    resumed = graph.invoke(Command(resume="yes"), _THREAD)
    expected = [("HumanMessage", "hi"), ("AIMessage", "hello")]
    assert _shown(resumed["messages"]) == expected
    # What LangGraph stored: the input checkpoint holds the tuple (it comes back as a list), and
    # replayed from there the reducer makes the same messages of it.
    first = list(graph.get_state_history(_THREAD))[-1]
    assert first.metadata is not None and first.metadata["source"] == "input"
    assert _shown(graph.invoke(None, first.config)["messages"][:1]) == [("HumanMessage", "hi")]


@pytest.mark.parametrize("profile", _PROFILES)
def test_a_message_tuple_alone_is_lossy(profile: str) -> None:
    # add_messages reads a list as a list of messages: replayed, the tuple is two human messages.
    plain = _chat_graph(InMemorySaver(), ("ai", "hello"))
    assert _shown(plain.invoke({"messages": []}, _THREAD)["messages"]) == [("AIMessage", "hello")]
    resumed = plain.invoke(Command(resume="yes"), _THREAD)
    assert _shown(resumed["messages"]) == [("HumanMessage", "ai"), ("HumanMessage", "hello")]
    graph = _chat_graph(CheckedSaver(InMemorySaver(), profile=profile), ("ai", "hello"))
    with pytest.raises(CheckpointValueError) as raised:
        graph.invoke({"messages": []}, _THREAD)
    serializer = "JSON" if profile == "json" else "msgpack"
    assert str(raised.value).splitlines() == [
        'Node "reply" wrote a value to channel "messages" that will not survive the checkpoint:',
        f'  reply().messages is "tuple": the {serializer} serializer writes it, but it comes back as'
        " list. Fix: store a list and declare it as list[...]  [lgstate-lossy]",
    ]


def test_the_graph_input_alone_is_lossy_too() -> None:
    def noop(state: Chat) -> dict[str, Any]:
        return {}

    builder = StateGraph(Chat)
    builder.add_node("noop", noop)
    builder.add_edge(START, "noop")
    plain = builder.compile(checkpointer=InMemorySaver())
    assert _shown(plain.invoke({"messages": ("user", "hi")}, _THREAD)["messages"]) == [
        ("HumanMessage", "hi")
    ]
    first = list(plain.get_state_history(_THREAD))[-1]
    replayed = plain.invoke(None, first.config)["messages"]
    assert _shown(replayed) == [("HumanMessage", "user"), ("HumanMessage", "hi")]
    graph = builder.compile(checkpointer=CheckedSaver(InMemorySaver(), profile="msgpack"))
    with pytest.raises(CheckpointValueError) as raised:
        graph.invoke({"messages": ("user", "hi")}, _THREAD)
    assert str(raised.value).splitlines()[1].startswith('  input["messages"] is "tuple": ')


def test_a_tuple_in_a_channel_without_a_reducer_is_reported_where_the_channel_holds_it() -> None:
    # The same ("user", "x") in a list: no reducer makes a message of it, so the checkpoint holds
    # the tuple, and it comes back as a list.
    def pair(state: Chat) -> dict[str, Any]:
        return {"pairs": [("user", "x")]}

    builder = StateGraph(Chat)
    builder.add_node("pair", pair)
    builder.add_edge(START, "pair")
    plain = builder.compile(checkpointer=InMemorySaver(serde=JsonPlusSerializer()))
    plain.invoke({"messages": []}, _THREAD)
    stored = plain.checkpointer.get_tuple(_THREAD)  # type: ignore[union-attr]
    assert stored is not None and stored.checkpoint["channel_values"]["pairs"] == [["user", "x"]]
    graph = builder.compile(checkpointer=CheckedSaver(InMemorySaver(), profile="msgpack"))
    with pytest.raises(CheckpointValueError) as raised:
        graph.invoke({"messages": []}, _THREAD)
    assert raised.value.node == "pair"
    assert str(raised.value).splitlines() == [
        'Node "pair" wrote a value to channel "pairs" that will not survive the checkpoint:',
        '  pairs[0] is "tuple": the msgpack serializer writes it, but it comes back as list. Fix:'
        " store a list and declare it as list[...]  [lgstate-lossy]",
    ]


# Who wrote it: across subgraphs ----------------------------------------------------------------------


def _support_graph(saver: Any, customer: Any, *, nested: bool = False) -> Any:
    """``load_customer`` writes ``client``; the next node is a compiled subgraph (``nested``: whose
    node is a compiled subgraph too), which receives it in its input and writes it back."""

    def load_customer(state: Chat) -> dict[str, Any]:
        return {"client": customer, "messages": [("ai", "Looking you up.")]}

    def answer(state: Chat) -> dict[str, Any]:
        return {"answer": "done", "messages": [("ai", "Done.")]}

    inner = StateGraph(Chat)
    inner.add_node("answer", answer)
    inner.add_edge(START, "answer")
    support: Any = inner.compile()
    if nested:
        middle = StateGraph(Chat)
        middle.add_node("triage", support)
        middle.add_edge(START, "triage")
        support = middle.compile()
    builder = StateGraph(Chat)
    builder.add_node("load_customer", load_customer)
    builder.add_node("support", support)
    builder.add_edge(START, "load_customer")
    builder.add_edge("load_customer", "support")
    return builder.compile(checkpointer=saver)


_CLIENT_LINES = [
    'Node "load_customer" wrote a value to channel "client" that will not survive the checkpoint:',
    '  load_customer().client is "Connection": the msgpack serializer raises TypeError when the'
    " checkpoint is written. Fix: keep it out of graph state: store an id or plain data, and"
    " rebuild it inside the node  [lgstate-unserializable]",
]


@pytest.mark.parametrize("nested", [False, True], ids=["subgraph", "subgraph-in-a-subgraph"])
def test_a_client_passed_to_a_subgraph_is_blamed_on_its_writer(nested: bool) -> None:
    connection = sqlite3.connect(":memory:")
    with pytest.raises(TypeError, match="Type is not msgpack serializable: sqlite3.Connection"):
        _support_graph(InMemorySaver(), connection, nested=nested).invoke({"messages": []}, _THREAD)
    graph = _support_graph(
        CheckedSaver(InMemorySaver(), profile="msgpack"), connection, nested=nested
    )
    with pytest.raises(CheckpointValueError) as raised:
        graph.invoke({"messages": [("user", "Where is my order?")]}, _THREAD)
    assert str(raised.value).splitlines() == _CLIENT_LINES
    assert (raised.value.node, raised.value.channel) == ("load_customer", "client")


def test_a_writer_still_being_saved_is_waited_for() -> None:
    # LangGraph saves a step's writes in a background thread, so the subgraph of the next step may
    # hand its input to the saver first (the machine's load decides): slowed down here on purpose.
    saver = CheckedSaver(InMemorySaver(), profile="msgpack")
    put_writes = saver.put_writes

    def parent_writes_late(config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        if not config["configurable"].get("checkpoint_ns"):
            time.sleep(0.3)
        put_writes(config, writes, task_id, task_path)

    saver.put_writes = parent_writes_late  # type: ignore[method-assign]
    graph = _support_graph(saver, sqlite3.connect(":memory:"))
    with pytest.raises(CheckpointValueError) as raised:
        graph.invoke({"messages": [("user", "Where is my order?")]}, _THREAD)
    assert str(raised.value).splitlines() == _CLIENT_LINES


def _every_problem_met(saver: CheckedSaver) -> list[tuple[str, str]]:
    """The first line and the first path of each error ``saver`` finds, which the graph then runs
    past (a tuple under msgpack is written, and comes back as a list: LangGraph says nothing)."""
    met: list[tuple[str, str]] = []
    check = saver._raise_for

    def noting(*args: Any, **kwargs: Any) -> None:
        try:
            check(*args, **kwargs)
        except CheckpointValueError as error:
            met.append((str(error).splitlines()[0], error.problems[0].path))

    saver._raise_for = noting  # type: ignore[method-assign]
    return met


def test_a_lossy_value_a_subgraph_writes_back_is_blamed_on_its_writer() -> None:
    # Each place the checker meets it (the write, the subgraphs' inputs and checkpoints, what they
    # write back) names the task that put it into state.
    saver = CheckedSaver(InMemorySaver(), profile="msgpack")
    met = _every_problem_met(saver)
    result = _support_graph(saver, ("c-42", "gold"), nested=True).invoke({"messages": []}, _THREAD)
    assert result["answer"] == "done"
    assert {line for line, _ in met} == {
        'Node "load_customer" wrote a value to channel "client" that will not survive the checkpoint:'
    }
    assert {path for _, path in met} == {"load_customer().client", "client"}
    assert len(met) > 4  # the write, then every checkpoint of the three graphs and every pass


def test_a_subgraph_input_from_the_graph_input_names_the_graph_input() -> None:
    saver = CheckedSaver(InMemorySaver(), profile="msgpack")
    met = _every_problem_met(saver)
    _support_graph(saver, "c-42").invoke({"messages": [], "client": ("a", "b")}, _THREAD)
    assert {line for line, _ in met} == {
        "The graph input wrote a value that will not survive the checkpoint:",
        'The graph input wrote a value to channel "client" that will not survive the checkpoint:',
    }
    assert {path for _, path in met} == {'input["client"]', "client"}


# What the serializer did not rebuild at a load -------------------------------------------------------


@dataclass
class Job:
    title: str


class Plan(TypedDict, total=False):
    job: Any
    when: Any
    answer: str


class Stamp(datetime):
    """A datetime subclass: the loader does not call its fromisoformat()."""


def _planning_graph(saver: Any, job: object) -> Any:
    def plan(state: Plan) -> dict[str, Any]:
        return {"job": job}

    def ask(state: Plan) -> dict[str, Any]:
        return {"answer": f"{interrupt('ok?')} {type(state['job']).__name__}"}

    builder = StateGraph(Plan)
    builder.add_node("plan", plan)
    builder.add_node("ask", ask)
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "ask")
    return builder.compile(checkpointer=saver)


# A serializer with an explicit allowlist runs in strict mode: Job is not on it.
_STRICT = JsonPlusSerializer(allowed_msgpack_modules=[("datetime", "date")])


def test_a_class_a_strict_serializer_does_not_rebuild_fails_at_the_load() -> None:
    plain = _planning_graph(InMemorySaver(serde=_STRICT), Job("refund"))
    plain.invoke({}, _THREAD)
    assert plain.invoke(Command(resume="yes"), _THREAD)["answer"] == "yes dict"  # silently a dict
    # The checker's options say nothing of strict mode: only the serializer's event tells.
    graph = _planning_graph(CheckedSaver(InMemorySaver(serde=_STRICT), profile="msgpack"), Job("a"))
    graph.invoke({}, _THREAD)
    with pytest.raises(CheckpointValueError) as raised:
        graph.invoke(Command(resume="yes"), _THREAD)
    assert str(raised.value).splitlines() == [
        'Loading a checkpoint of thread "t": the serializer did not rebuild every value it stored:',
        '  a stored value is "Job": this dataclass is not on the strict msgpack allowlist, so the'
        ' checkpoint loader returns a plain dict instead. Fix: pass ("test_runtime_saver_graphs",'
        ' "Job") in the serializer\'s allowed_msgpack_modules, and add'
        ' "test_runtime_saver_graphs.Job" to the plugin\'s allowed_msgpack_modules  [lgstate-allowlist]',
    ]
    assert (raised.value.node, raised.value.channel) == (None, None)
    # The default serializer rebuilds it (and only warns that strict mode would not).
    default = _planning_graph(CheckedSaver(InMemorySaver(), profile="msgpack"), Job("a"))
    default.invoke({}, _THREAD)
    assert default.invoke(Command(resume="yes"), _THREAD)["answer"] == "yes Job"


def test_a_value_stored_before_the_checker_wrapped_the_saver_fails_at_its_load() -> None:
    # The checker reports a datetime subclass at the write; one already stored is met at the load,
    # where the loader does not call Stamp.fromisoformat() and hands back the string.
    stored = InMemorySaver()
    plain = _planning_graph(stored, Stamp(2024, 5, 1, tzinfo=timezone.utc))
    plain.invoke({}, _THREAD)
    assert plain.get_state(_THREAD).values["job"] == "2024-05-01T00:00:00+00:00"
    graph = _planning_graph(CheckedSaver(stored, profile="msgpack"), None)
    with pytest.raises(CheckpointValueError) as raised:
        graph.invoke(Command(resume="yes"), _THREAD)
    assert str(raised.value).splitlines()[1] == (
        '  a stored value is "Stamp": the checkpoint loader does not call Stamp.fromisoformat(), so'
        " it comes back as the value it was written as. Fix: store a value of a class the"
        " serializer rebuilds instead of a Stamp  [lgstate-lossy]"
    )
    with pytest.raises(CheckpointValueError):
        list(graph.get_state_history(_THREAD))


# The fixture, as a project uses it -------------------------------------------------------------------

SUPPORT_TESTS = '''
import sqlite3
from typing import Annotated, Any

import pytest
from langchain_core.messages import AnyMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict


class Support(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    customer: Any


def build(saver, customer):
    def load_customer(state):
        return {"customer": customer, "messages": [("ai", "Looking you up.")]}

    def answer(state):
        return {"messages": [("ai", "Here is your order.")]}

    inner = StateGraph(Support)
    inner.add_node("answer", answer)
    inner.add_edge(START, "answer")
    builder = StateGraph(Support)
    builder.add_node("load_customer", load_customer)
    builder.add_node("support", inner.compile())
    builder.add_edge(START, "load_customer")
    builder.add_edge("load_customer", "support")
    return builder.compile(checkpointer=saver)


CONFIG = {"configurable": {"thread_id": "1"}}
CUSTOMERS = {"plain data": {"id": "c-42"}, "a client": sqlite3.connect(":memory:")}


@pytest.mark.parametrize("customer", CUSTOMERS)
def test_with_langgraph_alone(customer):
    graph = build(InMemorySaver(), CUSTOMERS[customer])
    graph.invoke({"messages": [("user", "Where is my order?")]}, CONFIG)


@pytest.mark.parametrize("customer", CUSTOMERS)
def test_with_the_checker(customer, lgstate_saver):
    graph = build(lgstate_saver, CUSTOMERS[customer])
    graph.invoke({"messages": [("user", "Where is my order?")]}, CONFIG)
'''


def test_the_fixture_passes_and_fails_where_langgraph_does(pytester: pytest.Pytester) -> None:
    pytester.makefile(".toml", pyproject='[tool.mypy_lgstate]\nprofile = "msgpack"\n')
    pytester.makepyfile(test_support=textwrap.dedent(SUPPORT_TESTS))
    result = pytester.runpytest_subprocess("-v", "-rN", "-p", "no:cacheprovider")
    outcomes = dict(
        re.findall(r"^test_support\.py::(\S+\[[^]]+\]) (PASSED|FAILED)", "\n".join(result.stdout.lines), re.M)
    )
    assert outcomes == {
        "test_with_langgraph_alone[plain data]": "PASSED",
        "test_with_langgraph_alone[a client]": "FAILED",
        "test_with_the_checker[plain data]": "PASSED",
        "test_with_the_checker[a client]": "FAILED",
    }
    result.stdout.fnmatch_lines([
        "E   *TypeError: Type is not msgpack serializable: sqlite3.Connection",
        'E   *CheckpointValueError: Node "load_customer" wrote a value to channel "customer" that'
        " will not survive the checkpoint:",
        'E   *  load_customer().customer is "Connection": the msgpack serializer raises TypeError*',
    ])
